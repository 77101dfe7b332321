"""The comparison methods of the paper (appendix D, "Comparison Methods"; appendix E, PPI).

This module owns the non-Bayesian ways to rank candidates from judge scores:

- ``single_judge:<judge>`` -- one judge's mean score per candidate;
- ``simple_average`` -- per-judge mean score per candidate, averaged over judges with equal weight;
- ``bootstrap`` -- percentile bootstrap (over items) of the simple average's ranks;
- ``bradley_terry`` -- Bradley-Terry with ties (Rao & Kupper 1967) on pairwise outcomes, fitted by
  maximum likelihood, with bootstrap (over items) rank intervals;
- ``ppi_5`` / ``ppi_10`` -- prediction-powered inference of each candidate's mean true score from a
  seeded 5% / 10% labelled subset of items, with bootstrap rank intervals at a fixed partition.
  These use gold labels (``uses_labels=True``): never a label-free competitor.

Every method works on the *item view* of a judgment table (``data.item_view``): a DataFrame indexed
by (item, candidate) with one column of scores per judge (NaN where missing) and a ``true_score``
column when ground truth exists. Every method takes the same ``excluded`` set of (judge, candidate)
pairs whose judgments are dropped (self-family exclusion), so comparisons are fair. Every method
returns a :class:`MethodResult`; a *method* in the evaluation sense is any callable
``f(view, rng) -> MethodResult`` (see :func:`baseline_methods`), so the Bayesian model can be plugged
in the same way.

Conventions shared by all methods:

- rank 1 = best (largest score); tied scores get the average of the ranks they span
  (``scipy.stats.rankdata(method="average")``), so ranks can be half-integers;
- 95% rank intervals are :func:`rank_interval` of the replicate ranks: the order statistics at the
  2.5% / 97.5% positions, taken outward (lower / higher), then rounded outward to integers
  (floor / ceil) when a tie made them half-integers; the interval is inclusive at both ends;
- a candidate that gets no score (every judgment of it dropped) has a NaN score and NaN rank in the
  point result; inside a bootstrap replicate such a candidate is ranked last;
- randomness only through the ``rng`` argument (a ``numpy.random.Generator`` or an int seed;
  ``None`` means seed 0, so results are reproducible by default); the global numpy random state is
  never touched.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Collection, Iterable, Mapping

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from simplex_core.data.scale import Scale
from simplex_core.model.ranks import rank_interval, rank_scores, ranks_from_scores

if TYPE_CHECKING:  # pragma: no cover - typing only
    from simplex_core.data.table import JudgmentTable

__all__ = [
    "TRUE_SCORE",
    "ranks_from_scores",
    "MethodResult",
    "Method",
    "ScoreArray",
    "rank_scores",
    "rank_interval",
    "judge_columns",
    "score_array",
    "single_judge",
    "simple_average",
    "bootstrap_ranks",
    "pairwise_counts",
    "rao_kupper_loglik",
    "fit_rao_kupper",
    "bradley_terry",
    "ppi_mean_estimate",
    "ppi_labelled_items",
    "ppi_mean_ranks",
    "baseline_methods",
    "table_baseline_methods",
    "method_generator",
    "run_methods",
]

TRUE_SCORE = "true_score"
"""Name of the ground-truth column of the item view."""

RngLike = np.random.Generator | int
"""A generator or an integer seed."""


# -- results -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MethodResult:
    """What one ranking method says about the candidates.

    Attributes
    ----------
    method
        Method name, e.g. ``"simple_average"``, ``"single_judge:gpt-4"``, ``"ppi_10"``.
    uses_labels
        True when the method used gold labels (PPI); such a method is not a label-free competitor.
    scores
        Point score per candidate (index = candidate, in the view's order). Its meaning depends on the
        method: mean score (single judge, simple average, bootstrap), log-ability (Bradley-Terry,
        sum to zero), estimated mean true score on [0, 1] (PPI).
    ranks
        Point rank per candidate from ``scores``: 1 = best, ties get average ranks.
    rank_lo, rank_hi
        Inclusive 95% rank interval per candidate (integers, see :func:`rank_interval`), or ``None``
        for a method without intervals.
    rank_draws
        Replicate ranks, long: columns ``replicate, candidate, rank`` (for box plots), or ``None``.
    details
        Method-specific extras (e.g. the Bradley-Terry tie parameter ``theta``).
    notes
        Plain-words remarks (e.g. candidates left without a score).
    """

    method: str
    uses_labels: bool
    scores: pd.Series
    ranks: pd.Series
    rank_lo: pd.Series | None = None
    rank_hi: pd.Series | None = None
    rank_draws: pd.DataFrame | None = None
    details: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def has_intervals(self) -> bool:
        return self.rank_lo is not None and self.rank_hi is not None

    @property
    def candidates(self) -> tuple[str, ...]:
        return tuple(self.scores.index)

    def summary(self) -> pd.DataFrame:
        """One row per candidate: ``candidate, score, rank, rank_lo, rank_hi`` (NaN without intervals)."""
        nan = pd.Series(np.nan, index=self.scores.index)
        return pd.DataFrame(
            {
                "candidate": list(self.scores.index),
                "score": self.scores.to_numpy(dtype=float),
                "rank": self.ranks.to_numpy(dtype=float),
                "rank_lo": (self.rank_lo if self.rank_lo is not None else nan).to_numpy(dtype=float),
                "rank_hi": (self.rank_hi if self.rank_hi is not None else nan).to_numpy(dtype=float),
            }
        )


Method = Callable[[pd.DataFrame, np.random.Generator], MethodResult]
"""A ranking method as the evaluation sees it: ``f(view, rng) -> MethodResult``."""


# -- shared helpers ------------------------------------------------------------------------------

def _as_generator(rng: RngLike | None) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(0 if rng is None else rng)


def judge_columns(view: pd.DataFrame) -> list[str]:
    """The judge columns of an item view (every column except ``true_score``)."""
    return [c for c in view.columns if c != TRUE_SCORE]


def _unique_in_order(values: Iterable) -> list:
    return list(dict.fromkeys(values))


@dataclass(frozen=True)
class ScoreArray:
    """Dense arrays of an item view.

    Attributes
    ----------
    scores
        ``[I, K, J]`` float, NaN where the judge did not score the answer or the pair is excluded.
    truth
        ``[I, K]`` float true scores (NaN where missing), or ``None`` without a ``true_score`` column.
    items, candidates, judges
        Labels of the three axes, in the view's order of first appearance.
    """

    scores: np.ndarray
    truth: np.ndarray | None
    items: tuple[str, ...]
    candidates: tuple[str, ...]
    judges: tuple[str, ...]


def _check_view(view: pd.DataFrame) -> None:
    if not isinstance(view, pd.DataFrame):
        raise TypeError(f"Expected an item view (pandas DataFrame); got {type(view).__name__}.")
    names = list(view.index.names)
    if names != ["item", "candidate"]:
        raise ValueError(
            f"The item view must be indexed by (item, candidate); its index levels are {names}. "
            "Build it with simplex_core.data.views.item_view(table)."
        )
    if view.index.has_duplicates:
        dup = view.index[view.index.duplicated()][:5].tolist()
        raise ValueError(f"The item view has repeated (item, candidate) rows, e.g. {dup}: give each answer one row.")


def score_array(view: pd.DataFrame, excluded: Collection[tuple[str, str]] = ()) -> ScoreArray:
    """Dense ``[item, candidate, judge]`` scores of an item view, with excluded pairs set to NaN.

    Parameters
    ----------
    view
        Item view: index (item, candidate), one column per judge, optional ``true_score``.
    excluded
        (judge, candidate) pairs whose judgments are dropped (self-family exclusion). Pairs naming a
        judge or candidate absent from the view are ignored.
    """
    _check_view(view)
    items = _unique_in_order(view.index.get_level_values("item"))
    candidates = _unique_in_order(view.index.get_level_values("candidate"))
    judges = judge_columns(view)
    if not judges:
        raise ValueError("The item view has no judge columns: it needs at least one column of judge scores.")
    full = view.reindex(pd.MultiIndex.from_product([items, candidates], names=["item", "candidate"]))
    scores = full[judges].to_numpy(dtype=float).reshape(len(items), len(candidates), len(judges))
    cand_pos = {c: k for k, c in enumerate(candidates)}
    judge_pos = {j: n for n, j in enumerate(judges)}
    scores = scores.copy()
    for judge, candidate in excluded:
        if judge in judge_pos and candidate in cand_pos:
            scores[:, cand_pos[candidate], judge_pos[judge]] = np.nan
    truth = None
    if TRUE_SCORE in full.columns:
        truth = full[TRUE_SCORE].to_numpy(dtype=float).reshape(len(items), len(candidates))
    return ScoreArray(scores, truth, tuple(items), tuple(candidates), tuple(judges))


def _series(values: np.ndarray, candidates: Iterable[str], name: str) -> pd.Series:
    return pd.Series(np.asarray(values, dtype=float), index=pd.Index(list(candidates), name="candidate"), name=name)


def _long_draws(draws: np.ndarray, candidates: tuple[str, ...]) -> pd.DataFrame:
    n_rep, n_cand = draws.shape
    return pd.DataFrame(
        {
            "replicate": np.repeat(np.arange(n_rep), n_cand),
            "candidate": np.tile(np.array(candidates, dtype=object), n_rep),
            "rank": draws.reshape(-1).astype(float),
        }
    )


def _missing_note(scores: np.ndarray, candidates: tuple[str, ...], method: str) -> tuple[str, ...]:
    missing = [c for c, s in zip(candidates, scores) if np.isnan(s)]
    if not missing:
        return ()
    return (
        f"{method}: no judgments left for {missing} (all missing or excluded as self-family), "
        "so they have no score and no rank.",
    )


def _item_resample_weights(n_items: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``[B, I]`` multiplicities of a bootstrap over items.

    Replicate ``b`` draws the items ``rng.integers(0, n_items, size=(n_resamples, n_items))[b]``
    (one call for all replicates); the weights count how often each item was drawn.
    """
    idx = rng.integers(0, n_items, size=(n_resamples, n_items))
    flat = (np.arange(n_resamples)[:, None] * n_items + idx).reshape(-1)
    return np.bincount(flat, minlength=n_resamples * n_items).reshape(n_resamples, n_items).astype(float)


# -- single judge and simple average --------------------------------------------------------------

def _per_judge_means(arr: ScoreArray, weights: np.ndarray | None = None) -> np.ndarray:
    """Mean score per (candidate, judge); ``[K, J]`` or ``[B, K, J]`` with item weights ``[B, I]``."""
    present = ~np.isnan(arr.scores)
    filled = np.where(present, arr.scores, 0.0)
    n_items, n_cand, n_judge = arr.scores.shape
    if weights is None:
        sums, counts = filled.sum(axis=0), present.sum(axis=0).astype(float)
    else:
        sums = (weights @ filled.reshape(n_items, -1)).reshape(-1, n_cand, n_judge)
        counts = (weights @ present.reshape(n_items, -1).astype(float)).reshape(-1, n_cand, n_judge)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)


def _nanmean_last(x: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(x)
    n = ok.sum(axis=-1)
    total = np.where(ok, x, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.where(n > 0, n, 1), np.nan)


def single_judge(view: pd.DataFrame, judge: str, *, excluded: Collection[tuple[str, str]] = ()) -> MethodResult:
    """One judge alone: its mean score per candidate, ranked.

    We follow the paper's section 6 reading ("the score from one LLM judge, without adjudication"):
    one method per judge. The paper's appendix D describes "single judge aggregation" as pooling all
    judgments and ignoring judge identity, which equals the simple average whenever every judge scores
    every answer, yet its Table 1 reports different numbers for the two; section 6's reading is the
    one that makes them differ.

    Parameters
    ----------
    view
        Item view (index item, candidate; one column per judge).
    judge
        The judge column to use.
    excluded
        (judge, candidate) pairs to drop. A candidate whose only judgments by ``judge`` are excluded
        gets no score and no rank (NaN), and a note says so.
    """
    judges = judge_columns(view)
    if judge not in judges:
        raise ValueError(f"Judge {judge!r} is not a column of the item view; the judges are {judges}.")
    arr = score_array(view[[judge]], excluded)
    means = _per_judge_means(arr)[:, 0]
    name = f"single_judge:{judge}"
    return MethodResult(
        method=name,
        uses_labels=False,
        scores=_series(means, arr.candidates, "score"),
        ranks=_series(rank_scores(means), arr.candidates, "rank"),
        notes=_missing_note(means, arr.candidates, name),
    )


def _simple_average_scores(arr: ScoreArray, weights: np.ndarray | None = None) -> np.ndarray:
    # Equal weight per judge: average the per-judge means over the judges that scored the candidate.
    return _nanmean_last(_per_judge_means(arr, weights))


def simple_average(view: pd.DataFrame, *, excluded: Collection[tuple[str, str]] = ()) -> MethodResult:
    """Mean score per candidate for each judge, averaged over the judges with equal weight.

    A judge whose judgments of a candidate are all missing or excluded does not enter that
    candidate's average (the average is over the remaining judges).
    """
    arr = score_array(view, excluded)
    avg = _simple_average_scores(arr)
    return MethodResult(
        method="simple_average",
        uses_labels=False,
        scores=_series(avg, arr.candidates, "score"),
        ranks=_series(rank_scores(avg), arr.candidates, "rank"),
        notes=_missing_note(avg, arr.candidates, "simple_average"),
    )


def bootstrap_ranks(
    view: pd.DataFrame,
    n_resamples: int = 1000,
    rng: RngLike | None = None,
    *,
    excluded: Collection[tuple[str, str]] = (),
    level: float = 0.95,
) -> MethodResult:
    """Percentile bootstrap of the simple average's ranks (method ``bootstrap``).

    The point score and rank are the simple average's on the full data. Each replicate resamples the
    items with replacement -- replicate ``b`` uses the items
    ``rng.integers(0, n_items, size=(n_resamples, n_items))[b]`` -- recomputes the simple average
    and re-ranks (ties average; a candidate with no score in a replicate is ranked last there). The
    interval is :func:`rank_interval` of the replicate ranks (inclusive integer order statistics at
    2.5% / 97.5%). This plain percentile version (after Xie et al. 2009) is known to under-cover near
    ties. A candidate with no score on the full data has no interval and no replicate ranks.

    Parameters
    ----------
    view
        Item view.
    n_resamples
        Number of bootstrap replicates (>= 1).
    rng
        Generator or seed.
    excluded
        (judge, candidate) pairs to drop.
    level
        Interval level.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1; got {n_resamples}.")
    gen = _as_generator(rng)
    arr = score_array(view, excluded)
    avg = _simple_average_scores(arr)
    weights = _item_resample_weights(len(arr.items), n_resamples, gen)
    draws = rank_scores(_simple_average_scores(arr, weights), nan_last=True)
    lo, hi = rank_interval(draws, level)
    unscored = np.isnan(avg)  # no score on the full data: "last in every replicate" is no interval
    lo[unscored] = hi[unscored] = np.nan
    long_draws = _long_draws(draws, arr.candidates)
    long_draws = long_draws[~long_draws["candidate"].isin(np.asarray(arr.candidates, dtype=object)[unscored])]
    return MethodResult(
        method="bootstrap",
        uses_labels=False,
        scores=_series(avg, arr.candidates, "score"),
        ranks=_series(rank_scores(avg), arr.candidates, "rank"),
        rank_lo=_series(lo, arr.candidates, "rank_lo"),
        rank_hi=_series(hi, arr.candidates, "rank_hi"),
        rank_draws=long_draws.reset_index(drop=True),
        details={"n_resamples": float(n_resamples)},
        notes=_missing_note(avg, arr.candidates, "bootstrap"),
    )


# -- Bradley-Terry with ties (Rao & Kupper 1967) --------------------------------------------------

def _per_item_pairwise(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-item win and tie counts ``[I, K, K]`` summed over judges.

    ``wins[i, k, l]`` counts the judges that scored both k and l on item i and gave k the higher
    score; ``ties[i, k, l]`` those that gave equal scores (symmetric, zero diagonal).
    """
    a = scores[:, :, None, :]
    b = scores[:, None, :, :]
    wins = (a > b).sum(axis=-1).astype(float)  # NaN comparisons are False
    ties = (a == b).sum(axis=-1).astype(float)
    k = scores.shape[1]
    ties[:, np.arange(k), np.arange(k)] = 0.0
    return wins, ties


def pairwise_counts(
    view: pd.DataFrame, *, excluded: Collection[tuple[str, str]] = ()
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Aggregated pairwise outcomes: every pair of candidates scored by the same judge on the same item.

    Returns
    -------
    wins, ties
        Candidate x candidate DataFrames: ``wins.loc[k, l]`` = number of (item, judge) where k scored
        higher than l; ``ties.loc[k, l]`` = number where they scored equal (symmetric, zero diagonal).
    """
    arr = score_array(view, excluded)
    w, t = _per_item_pairwise(arr.scores)
    idx = pd.Index(arr.candidates, name="candidate")
    return pd.DataFrame(w.sum(0), index=idx, columns=idx), pd.DataFrame(t.sum(0), index=idx, columns=idx)


def rao_kupper_loglik(log_ability: np.ndarray, theta: float, wins: np.ndarray, ties: np.ndarray) -> float:
    """Rao-Kupper log-likelihood of aggregated win / tie counts.

    P(k beats l) = pi_k / (pi_k + theta pi_l);
    P(k ties l) = (theta^2 - 1) pi_k pi_l / ((pi_k + theta pi_l)(pi_l + theta pi_k)), theta > 1.

    Parameters
    ----------
    log_ability
        ``[K]`` log pi.
    theta
        Tie parameter (> 1; exactly 1 is allowed only when there are no ties).
    wins
        ``[K, K]`` wins of row over column.
    ties
        ``[K, K]`` symmetric tie counts (each tie of the pair counted once in [k, l] and once in
        [l, k]); the diagonal is ignored.
    """
    beta = np.asarray(log_ability, dtype=float)
    wins = np.asarray(wins, dtype=float)
    ties = np.asarray(ties, dtype=float).copy()
    np.fill_diagonal(ties, 0.0)
    pi = np.exp(beta)
    denom = pi[:, None] + theta * pi[None, :]  # pi_k + theta pi_l
    off = ~np.eye(len(beta), dtype=bool)
    ll_wins = np.sum(wins[off] * (beta[:, None] - np.log(denom))[off])
    n_ties = ties[np.triu_indices(len(beta), 1)].sum()
    ll_ties = 0.0
    if n_ties > 0:
        tie_logp = np.log(theta**2 - 1.0) + beta[:, None] + beta[None, :] - np.log(denom) - np.log(denom.T)
        ll_ties = np.sum(np.triu(ties, 1) * np.where(np.triu(off, 1), tie_logp, 0.0))
    return float(ll_wins + ll_ties)


# Bounds on eta (theta = 1 + exp(eta)) used only when the unbounded fit runs away: without ties the
# maximum is at theta -> 1, with only ties at theta -> infinity.
_ETA_MIN, _ETA_MAX = -20.0, 20.0
_LOG2 = math.log(2.0)


def _rk_objective(params: np.ndarray, outcomes: np.ndarray, n_ties: float, ridge: float) -> tuple[float, np.ndarray]:
    """Negative penalised log-likelihood and gradient in (beta_1..K, eta), theta = 1 + exp(eta).

    With C = wins + ties (ordered pairs) and L_kl = log(pi_k + theta pi_l), the log-likelihood is
    sum_k beta_k C_k. - sum_{k,l} C_kl L_kl + n_ties log(theta^2 - 1)
    (each tie contributes beta_k + beta_l - L_kl - L_lk + log(theta^2 - 1)). Everything is computed
    in log space (logaddexp), so extreme abilities met during the line search cannot overflow.
    The ridge term 0.5 ridge sum beta^2 pins the shift (sum-to-zero at the optimum) and keeps the
    abilities finite when a candidate wins or loses every comparison.
    """
    k = outcomes.shape[0]
    beta, eta = params[:k], float(params[k])
    log_theta = float(np.logaddexp(0.0, eta))  # log(1 + e^eta), safe for any eta
    sig = float(special.expit(eta))  # d log(theta) / d eta = (theta - 1) / theta
    log_denom = np.logaddexp(beta[:, None], log_theta + beta[None, :])  # L_kl
    share_row = np.exp(beta[:, None] - log_denom)  # pi_k / (pi_k + theta pi_l)
    share_col = 1.0 - share_row  # theta pi_l / (pi_k + theta pi_l)
    ll = float(beta @ outcomes.sum(axis=1) - np.sum(outcomes * log_denom))
    grad_beta = outcomes.sum(axis=1) - (outcomes * share_row).sum(axis=1) - (outcomes * share_col).sum(axis=0)
    # dL_kl/d(theta) = pi_l / a_kl = share_col / theta, and d(theta)/d(eta) = theta - 1.
    grad_eta = -float(np.sum(outcomes * share_col)) * sig
    if n_ties > 0:
        # log(theta^2 - 1) = eta + log(2 + e^eta); its derivative is 1 + e^eta / (2 + e^eta)
        ll += n_ties * (eta + float(np.logaddexp(_LOG2, eta)))
        grad_eta += n_ties * (1.0 + float(special.expit(eta - _LOG2)))
    ll -= 0.5 * ridge * float(beta @ beta)
    grad_beta = grad_beta - ridge * beta
    return -ll, -np.concatenate([grad_beta, [grad_eta]])


def _rk_hessian(params: np.ndarray, outcomes: np.ndarray, n_ties: float, ridge: float) -> np.ndarray:
    """Hessian of :func:`_rk_objective` (the negative penalised log-likelihood).

    L_kl = logaddexp(beta_k, log theta + beta_l) has Hessian u (e_k - e_l + e_theta)(...)^T in
    (beta_k, beta_l, log theta) terms with u = p q (p = pi_k / a_kl, q = 1 - p); the chain rule
    through log theta = log(1 + e^eta) adds the curvature of that map.
    """
    k = outcomes.shape[0]
    beta, eta = params[:k], float(params[k])
    log_theta = float(np.logaddexp(0.0, eta))
    log_denom = np.logaddexp(beta[:, None], log_theta + beta[None, :])
    share_row = np.exp(beta[:, None] - log_denom)
    share_col = 1.0 - share_row
    v = outcomes * share_row * share_col
    sym = v + v.T
    sig = float(special.expit(eta))  # d log(theta) / d eta
    tie_sig = float(special.expit(eta - _LOG2))  # e^eta / (2 + e^eta)
    hess = np.empty((k + 1, k + 1))
    hess[:k, :k] = np.diag(sym.sum(axis=1)) - sym + ridge * np.eye(k)
    hess[:k, k] = hess[k, :k] = (v.sum(axis=0) - v.sum(axis=1)) * sig
    hess[k, k] = (
        v.sum() * sig**2
        + float(np.sum(outcomes * share_col)) * sig * (1.0 - sig)
        - n_ties * tie_sig * (1.0 - tie_sig)
    )
    return hess


def fit_rao_kupper(
    wins: np.ndarray, ties: np.ndarray, *, ridge: float = 1e-6, start: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """Maximum-likelihood Rao-Kupper abilities and tie parameter from aggregated counts.

    Parameters
    ----------
    wins, ties
        ``[K, K]`` counts as in :func:`rao_kupper_loglik`.
    ridge
        Tiny L2 penalty on the log-abilities (see the objective); 1e-6 changes nothing measurable
        on real counts and only matters when the unpenalised maximum is at infinity (a candidate
        that wins, or loses, every comparison).
    start
        Optional starting ``(beta_1..K, eta)``.

    Returns
    -------
    log_ability, theta
        ``[K]`` log pi centred to sum to zero, and theta (> 1; near 1 when there are no ties).
    """
    wins = np.asarray(wins, dtype=float)
    ties = np.asarray(ties, dtype=float).copy()
    np.fill_diagonal(ties, 0.0)
    k = wins.shape[0]
    outcomes = wins + ties
    np.fill_diagonal(outcomes, 0.0)
    n_ties = float(ties[np.triu_indices(k, 1)].sum())
    if start is None:
        total = outcomes.sum()
        # outcomes counts each tie twice (once per ordering), each win once
        tie_share = n_ties / (total - n_ties) if total > 0 else 0.0
        # theta from the tie share of two equal candidates: P(tie) = (theta - 1) / (theta + 1).
        theta0 = (1.0 + tie_share) / max(1.0 - tie_share, 1e-3)
        start = np.concatenate([np.zeros(k), [math.log(max(theta0 - 1.0, math.exp(_ETA_MIN)))]])
    args = (outcomes, n_ties, ridge)
    # Newton trust region with the exact Hessian: a handful of iterations for K + 1 parameters.
    # The gradient grows with the counts, so tolerances are relative to the number of comparisons;
    # near the optimum trust-exact may stop at floating-point precision with success=False.
    grad_tol = 1e-8 * max(float(outcomes.sum()), 1.0)
    res = optimize.minimize(
        _rk_objective, start, args=args, jac=True, hess=_rk_hessian, method="trust-exact",
        options={"gtol": grad_tol},
    )
    converged = np.all(np.isfinite(res.x)) and (res.success or np.max(np.abs(res.jac)) <= 100 * grad_tol)
    if not converged or not _ETA_MIN <= res.x[k] <= _ETA_MAX:
        # No ties (theta -> 1) or only ties (theta -> infinity) push eta to infinity: bound it.
        bounds = [(None, None)] * k + [(_ETA_MIN, _ETA_MAX)]
        res = optimize.minimize(
            _rk_objective, start, args=args, jac=True, method="L-BFGS-B", bounds=bounds,
            options={"maxiter": 2000},
        )
    beta = res.x[:k] - res.x[:k].mean()
    return beta, 1.0 + math.exp(res.x[k])


def bradley_terry(
    view: pd.DataFrame,
    n_resamples: int = 200,
    rng: RngLike | None = None,
    *,
    excluded: Collection[tuple[str, str]] = (),
    level: float = 0.95,
    ridge: float = 1e-6,
) -> MethodResult:
    """Bradley-Terry with ties (Rao & Kupper 1967), ranks from the abilities, bootstrap intervals.

    Pairwise outcomes are taken from every pair of candidates scored by the same (non-excluded) judge
    on the same item: higher score wins, equal scores tie. Abilities (log pi, sum to zero) and the
    tie parameter theta > 1 are fitted by maximum likelihood (:func:`fit_rao_kupper`:
    ``scipy.optimize.minimize``, trust-exact with the analytic gradient and Hessian, on the aggregated
    win / tie count matrices). Intervals: resample items with replacement
    (``rng.integers(0, n_items, size=(n_resamples, n_items))``), refit (warm-started at the full-data
    fit), re-rank, and take :func:`rank_interval`. ``details["theta"]`` holds the fitted tie
    parameter.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1; got {n_resamples}.")
    gen = _as_generator(rng)
    arr = score_array(view, excluded)
    wins_i, ties_i = _per_item_pairwise(arr.scores)
    n_cand = len(arr.candidates)
    played = (wins_i + ties_i).sum(axis=0)
    played = played + played.T
    unplayed = [c for c, n in zip(arr.candidates, played.sum(axis=1)) if n == 0]
    if unplayed:
        raise ValueError(
            f"bradley_terry: candidates {unplayed} are never compared with another candidate by the same "
            "judge on the same item, so they cannot be ranked by pairwise comparison. Give them scores "
            "on items the other candidates answered, or leave them out."
        )
    beta, theta = fit_rao_kupper(wins_i.sum(0), ties_i.sum(0), ridge=ridge)
    start = np.concatenate([beta, [math.log(max(theta - 1.0, math.exp(_ETA_MIN)))]])
    weights = _item_resample_weights(len(arr.items), n_resamples, gen)
    flat_w = weights @ wins_i.reshape(len(arr.items), -1)
    flat_t = weights @ ties_i.reshape(len(arr.items), -1)
    draws = np.empty((n_resamples, n_cand))
    for b in range(n_resamples):
        beta_b, _ = fit_rao_kupper(
            flat_w[b].reshape(n_cand, n_cand), flat_t[b].reshape(n_cand, n_cand), ridge=ridge, start=start
        )
        draws[b] = rank_scores(beta_b, nan_last=True)
    lo, hi = rank_interval(draws, level)
    return MethodResult(
        method="bradley_terry",
        uses_labels=False,
        scores=_series(beta, arr.candidates, "log_ability"),
        ranks=_series(rank_scores(beta), arr.candidates, "rank"),
        rank_lo=_series(lo, arr.candidates, "rank_lo"),
        rank_hi=_series(hi, arr.candidates, "rank_hi"),
        rank_draws=_long_draws(draws, arr.candidates),
        details={"theta": theta, "n_resamples": float(n_resamples)},
    )


# -- prediction-powered inference -----------------------------------------------------------------

def ppi_mean_estimate(
    labels: np.ndarray,
    pred_labelled: np.ndarray,
    pred_unlabelled: np.ndarray,
    *,
    power_tuning: bool = False,
) -> float:
    """Prediction-powered point estimate of a mean (one candidate).

    With lambda = 1 (default, the original PPI of Angelopoulos et al. 2023):
    ``mean(pred_unlabelled) + mean(labels - pred_labelled)`` -- ppi_py's
    ``ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled, lam=1)``.
    With ``power_tuning=True`` (PPI++), lambda = cov(Y, Yhat) / ((1 + n/N) var(Yhat)) clipped to
    [0, 1], where cov uses 1/n over the labelled rows and var is the ddof=1 variance of all
    predictions, labelled and unlabelled -- ppi_py's ``lam=None`` default; the estimate is
    ``lambda mean(pred_unlabelled) + mean(labels - lambda pred_labelled)``.
    """
    y, yh, yu = (np.asarray(x, dtype=float).ravel() for x in (labels, pred_labelled, pred_unlabelled))
    if len(y) != len(yh):
        raise ValueError(f"{len(y)} labels but {len(yh)} predictions for the labelled rows: give one of each.")
    if len(y) == 0 or len(yu) == 0:
        raise ValueError("PPI needs at least one labelled and one unlabelled row.")
    lam = 1.0
    if power_tuning:
        lam = _power_tuning_lambda(
            *(np.array([v], dtype=float) for v in (
                y.sum(), yh.sum(), (y * yh).sum(), (yh**2).sum(), yu.sum(), (yu**2).sum(), len(y), len(yu)
            ))
        )[0]
    return float(lam * yu.mean() + (y - lam * yh).mean())


def _power_tuning_lambda(
    sy: np.ndarray, syh: np.ndarray, syyh: np.ndarray, syh2: np.ndarray,
    su: np.ndarray, su2: np.ndarray, n: np.ndarray, big_n: np.ndarray,
) -> np.ndarray:
    """PPI++ lambda from (weighted) sums, vectorised; matches ppi_py's ``_calc_lam_glm`` for d = 1."""
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = (syyh - sy * syh / n) / n  # 1/n covariance of labels and predictions on labelled rows
        tot = n + big_n
        mean_all = (syh + su) / tot
        var = (syh2 + su2 - tot * mean_all**2) / (tot - 1.0)  # ddof=1 over all predictions
        lam = cov / ((1.0 + n / big_n) * var)
    # When every prediction is equal the estimate does not depend on lambda; any value will do.
    lam = np.where(np.isfinite(lam), lam, 1.0)
    return np.clip(lam, 0.0, 1.0)


def ppi_labelled_items(n_items: int, labelled_fraction: float, rng: RngLike | None) -> np.ndarray:
    """Boolean mask ``[I]`` of the labelled items: ``max(1, round(fraction * I))`` items chosen by
    ``rng.permutation(n_items)`` (the first ones). The draw lives in
    :func:`simplex_core.data.gold.labelled_item_mask`, shared with the Bayesian gold methods."""
    from simplex_core.data.gold import labelled_item_mask

    return labelled_item_mask(n_items, labelled_fraction, _as_generator(rng))


def _ppi_estimates(
    y: np.ndarray,
    yh: np.ndarray,
    yu: np.ndarray,
    lab_w: np.ndarray,
    unl_w: np.ndarray,
    power_tuning: bool,
) -> np.ndarray:
    """PPI means ``[B, K]`` from labelled labels ``y`` and predictions ``yh`` (``[n, K]``) and
    unlabelled predictions ``yu`` (``[N, K]``).

    ``lab_w`` ``[B, n]`` and ``unl_w`` ``[B, N]`` are item multiplicities (all ones = the data once).
    A labelled row counts when both its label and prediction exist; an unlabelled row when its
    prediction exists.
    """
    lab_ok = (~np.isnan(y) & ~np.isnan(yh)).astype(float)
    unl_ok = (~np.isnan(yu)).astype(float)
    y0, yh0, yu0 = (np.where(np.isnan(x), 0.0, x) for x in (y, yh, yu))
    n = lab_w @ lab_ok
    big_n = unl_w @ unl_ok
    sy, syh = lab_w @ (y0 * lab_ok), lab_w @ (yh0 * lab_ok)
    su = unl_w @ (yu0 * unl_ok)
    if power_tuning:
        syyh, syh2 = lab_w @ (y0 * yh0 * lab_ok), lab_w @ (yh0**2 * lab_ok)
        lam = _power_tuning_lambda(sy, syh, syyh, syh2, su, unl_w @ (yu0**2 * unl_ok), n, big_n)
    else:
        lam = np.ones_like(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = lam * su / big_n + (sy - lam * syh) / n
    return np.where((n > 0) & (big_n > 0), est, np.nan)


def ppi_mean_ranks(
    view: pd.DataFrame,
    scale: Scale,
    labelled_fraction: float = 0.10,
    n_resamples: int = 300,
    rng: RngLike | None = None,
    *,
    excluded: Collection[tuple[str, str]] = (),
    power_tuning: bool = False,
    level: float = 0.95,
    predictions: pd.Series | None = None,
    name: str | None = None,
    expanded: bool = False,
) -> MethodResult:
    """Prediction-powered ranking (methods ``ppi_5``, ``ppi_10``; uses gold labels).

    1. A random ``labelled_fraction`` of the items is labelled (:func:`ppi_labelled_items`, drawn
       first from ``rng``); the rest are unlabelled. The partition is the same for every candidate.
    2. The prediction for an answer is the mean over the non-excluded judges that scored it of
       ``scale.rescale(score)`` (observed range mapped to [0, 1]; an abstain level counts as its
       position on the scale); the label is ``scale.rescale(true_score)``.
    3. Per candidate, the PPI point estimate of its mean label (:func:`ppi_mean_estimate`; lambda = 1
       by default, PPI++ power tuning with ``power_tuning=True``). Answers without any prediction are
       left out (and labelled answers without a true score).
    4. Rank intervals: ``n_resamples`` bootstrap replicates that resample the labelled items and the
       unlabelled items separately, with replacement (the partition stays fixed), recompute every
       candidate's estimate and re-rank; :func:`rank_interval`.

    Parameters
    ----------
    view
        Item view with a ``true_score`` column.
    scale
        The table's scale (for the rescaling).
    labelled_fraction
        Share of items labelled (0.05 -> ``ppi_5``, 0.10 -> ``ppi_10``).
    predictions
        Another predictor instead of the judges' mean (step 2): one value per (item, candidate) on the
        scale of ``true_score`` (rescaled here like the labels), NaN or absent = no prediction. It must
        not have seen the labels, or the rectifier no longer corrects its bias
        (:mod:`simplex_core.studies.model_ppi` passes the label-free model's posterior mean true score).
    name
        Method name (default ``ppi_<pct>``).
    expanded
        Widen each candidate's bootstrap deviations from its estimate by Hesterberg's (2015)
        expanded-percentile factor ``sqrt(n / (n - 1)) t_{n-1} / z`` (n = its labelled answers), before
        ranking: the percentile bootstrap of a mean over a handful of labelled items is too narrow
        (with 3 items it sees 10 distinct resamples); the factor is ~1.2 at n = 10 and ~1.05 at n = 40.
    """
    if TRUE_SCORE not in view.columns:
        raise ValueError(
            "PPI needs ground truth: the item view has no 'true_score' column. Load data with a "
            "true_score column, or leave the PPI methods out."
        )
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1; got {n_resamples}.")
    gen = _as_generator(rng)
    arr = score_array(view, excluded)
    name = name or f"ppi_{int(round(labelled_fraction * 100))}"
    labelled = ppi_labelled_items(len(arr.items), labelled_fraction, gen)
    if predictions is None:
        preds = _nanmean_last(scale.rescale(arr.scores))  # [I, K]
    else:
        full = pd.MultiIndex.from_product([arr.items, arr.candidates], names=["item", "candidate"])
        given = predictions.reindex(full).to_numpy(dtype=float)
        preds = scale.rescale(given).reshape(len(arr.items), len(arr.candidates))
    labels = scale.rescale(arr.truth)  # [I, K]
    y_l, yh_l, yh_u = labels[labelled], preds[labelled], preds[~labelled]
    n_lab, n_unl = int(labelled.sum()), int((~labelled).sum())
    est = _ppi_estimates(y_l, yh_l, yh_u, np.ones((1, n_lab)), np.ones((1, n_unl)), power_tuning)[0]
    no_label = [c for c, ok in zip(arr.candidates, (~np.isnan(y_l) & ~np.isnan(yh_l)).any(axis=0)) if not ok]
    if no_label:
        who = (f"candidates {', '.join(map(str, no_label))} have" if len(no_label) > 1 else f"candidate {no_label[0]} has")
        raise ValueError(
            f"{name}: {who} no labelled answer with both a true score and a judge score "
            f"among the {n_lab} labelled items, so PPI cannot correct their predictions. Use a larger "
            "labelled fraction or data where these candidates have true scores."
        )
    lab_w = _item_resample_weights(n_lab, n_resamples, gen)
    unl_w = _item_resample_weights(n_unl, n_resamples, gen)
    boot = _ppi_estimates(y_l, yh_l, yh_u, lab_w, unl_w, power_tuning)
    if expanded:
        n_k = (~np.isnan(y_l) & ~np.isnan(yh_l)).sum(axis=0).astype(float)
        q = (1.0 + level) / 2.0
        df = np.maximum(n_k - 1.0, 1.0)
        factor = np.sqrt(n_k / df) * stats.t.ppf(q, df) / stats.norm.ppf(q)
        boot = est + factor * (boot - est)
    draws = rank_scores(boot, nan_last=True)
    lo, hi = rank_interval(draws, level)
    return MethodResult(
        method=name,
        uses_labels=True,
        scores=_series(est, arr.candidates, "score"),
        ranks=_series(rank_scores(est), arr.candidates, "rank"),
        rank_lo=_series(lo, arr.candidates, "rank_lo"),
        rank_hi=_series(hi, arr.candidates, "rank_hi"),
        rank_draws=_long_draws(draws, arr.candidates),
        details={
            "labelled_fraction": float(labelled_fraction),
            "n_labelled_items": float(n_lab),
            "power_tuning": float(power_tuning),
            "n_resamples": float(n_resamples),
            "expanded": float(expanded),
        },
        notes=_missing_note(est, arr.candidates, name),
    )


# -- the standard set of methods ------------------------------------------------------------------

def method_generator(base_seed: int, method: str, replicate: int) -> np.random.Generator:
    """The generator a method gets for one run: derived from a base seed, the method's name and the
    replicate number (0 = the full data), so that methods do not share or shift each other's streams."""
    name_key = int.from_bytes(hashlib.sha256(method.encode()).digest()[:8], "little")
    return np.random.default_rng(np.random.SeedSequence([base_seed, name_key, replicate]))


def baseline_methods(
    view: pd.DataFrame,
    scale: Scale,
    *,
    excluded: Collection[tuple[str, str]] = (),
    single_judges: bool = True,
    bootstrap_resamples: int = 1000,
    bt_resamples: int = 200,
    ppi_fractions: Iterable[float] = (0.05, 0.10),
    ppi_resamples: int = 300,
    power_tuning: bool = False,
) -> dict[str, Method]:
    """The standard baselines as evaluation methods ``f(view, rng) -> MethodResult``.

    ``single_judge:<judge>`` (one per judge of ``view``, when ``single_judges``), ``simple_average``,
    ``bootstrap``, ``bradley_terry`` and, when ``view`` has a ``true_score`` column, ``ppi_<pct>``
    per labelled fraction. Every method drops the same ``excluded`` (judge, candidate) pairs.
    """
    excluded = frozenset(excluded)
    methods: dict[str, Method] = {}
    if single_judges:
        for judge in judge_columns(view):
            methods[f"single_judge:{judge}"] = (
                lambda v, rng, _j=judge: single_judge(v, _j, excluded=excluded)
            )
    methods["simple_average"] = lambda v, rng: simple_average(v, excluded=excluded)
    methods["bootstrap"] = lambda v, rng: bootstrap_ranks(v, bootstrap_resamples, rng, excluded=excluded)
    methods["bradley_terry"] = lambda v, rng: bradley_terry(v, bt_resamples, rng, excluded=excluded)
    if TRUE_SCORE in view.columns:
        for frac in ppi_fractions:
            methods[f"ppi_{int(round(frac * 100))}"] = (
                lambda v, rng, _f=frac: ppi_mean_ranks(
                    v, scale, _f, ppi_resamples, rng, excluded=excluded, power_tuning=power_tuning
                )
            )
    return methods


def table_baseline_methods(table: "JudgmentTable", *, self_exclusion: bool = True, **options) -> dict[str, Method]:
    """:func:`baseline_methods` for a ``JudgmentTable``: its item view, its scale, and its self-family
    pairs (``table.self_family_pairs``: judge and candidate have the same family) excluded when
    ``self_exclusion`` (the default, as in the model)."""
    from simplex_core.data.views import item_view

    excluded = frozenset(table.self_family_pairs) if self_exclusion else frozenset()
    return baseline_methods(item_view(table), table.scale, excluded=excluded, **options)


def run_methods(
    view: pd.DataFrame, methods: Mapping[str, Method], rng: RngLike | None = None
) -> dict[str, MethodResult]:
    """Run each method once on ``view``; each gets its own generator derived from ``rng`` and its
    name, so adding or removing a method does not change the others' results."""
    base = int(_as_generator(rng).integers(2**63))
    return {name: f(view, method_generator(base, name, 0)) for name, f in methods.items()}
