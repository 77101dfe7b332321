"""What to label next: answers whose true score would most reduce the ranking's uncertainty.

Under the shared-truth likelihood an unlabelled answer a (candidate k, judges' scores s_a) enters the
posterior through p(s_a | θ) = Σ_t π_k[t] Π_j L[j, k, t, s_aj]. Learning its true level t replaces
that factor by π_k[t] Π_j L[j, k, t, s_aj], so the posterior given the label is the current posterior
reweighted by

    q_s(t) = π_k[t] Π_j L[j, k, t, s_aj] / Σ_t' π_k[t'] Π_j L[j, k, t', s_aj]

at each posterior draw s (the probability of true level t for that answer under draw s); the label's
predictive probability is the mean of q_s(t) over the draws. No refit is needed: the value of a label
is computed from the draws alone. *Uncertainty* is the sum over candidates of the posterior variance
of the rank; an answer's *expected reduction* is the current uncertainty minus its expected value
after the label. Answers with the same candidate and scores have the same value (one score pattern).

- :class:`LabelDraws`: the posterior draws the computation needs (from a shared-truth fit, or given).
- :func:`label_probabilities`: q_s(t) per pattern.
- :func:`suggest_labels`: a batch of answers to label, greedily: each next answer maximises the
  expected reduction averaged over simulated labels of the ones already chosen ("fantasies": a true
  parameter draw and the labels it implies), so the batch does not repeat one pattern blindly.
- :func:`budget_curve`: uncertainty after n labels, suggested order against random order, with labels
  simulated from the fitted model (a posterior draw taken as the truth).

The reweighting is exact only for draws of the shared-truth posterior; with a per-judge fit it is an
approximation (the CLI and the app fit shared-truth for this).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from simplex_core.data.patterns import NO_SCORE
from simplex_core.data.views import kept_apart_frame
from simplex_core.model.ranks import INTERVAL

__all__ = ["LabelDraws", "Answers", "answers_of", "label_probabilities", "rank_uncertainty",
           "weighted_rank_interval", "expected_reductions", "suggest_labels", "budget_curve"]

_CHUNK = 128  # patterns per block when gathering [S, P, J, T] log-likelihood terms


@dataclass(frozen=True)
class LabelDraws:
    """Posterior draws for label values.

    Attributes
    ----------
    pi
        ``[S, K, T]`` prevalences π_k.
    theta
        ``[S, J, T, M]`` confusion matrices Θ_j.
    ranks
        ``[S, K]`` ranks (1 = best).
    mix, Z
        ``[S, J, K]`` random-effect shares W_k R_j and ``[S, K, T]`` directions Z_k, or None (ω = 0).
    """

    pi: np.ndarray
    theta: np.ndarray
    ranks: np.ndarray
    mix: np.ndarray | None = None
    Z: np.ndarray | None = None

    @classmethod
    def from_fit(cls, fit, max_draws: int | None = 2000, seed: int = 0) -> "LabelDraws":
        """The draws of a :class:`~simplex_core.inference.fit_result.FitResult` (thinned at random to at most
        ``max_draws``)."""
        post = getattr(fit, "idata", fit).posterior  # a FitResult or its InferenceData

        def draws(name: str) -> np.ndarray:
            arr = np.asarray(post[name].values)
            return arr.reshape((-1,) + arr.shape[2:])

        S = post.sizes["chain"] * post.sizes["draw"]
        keep = np.arange(S)
        if max_draws is not None and S > max_draws:
            keep = np.sort(np.random.default_rng(seed).choice(S, max_draws, replace=False))
        mix = Z = None
        if "R" in post and "W" in post:
            mix = (draws("R")[:, :, None] * draws("W")[:, None, :])[keep]
            Z = draws("Z")[keep]
        return cls(pi=draws("pi")[keep], theta=draws("theta")[keep],
                   ranks=np.asarray(draws("rank"), dtype=float)[keep], mix=mix, Z=Z)

    @property
    def n_draws(self) -> int:
        return int(self.pi.shape[0])

    def log_emission(self) -> np.ndarray:
        """``log L[s, j, k', t, m]`` (k' = candidate with random effects, else one slot): the shared-truth
        emission of :func:`simplex_core.model.definition.shared_truth_emission`, per draw."""
        theta = self.theta[:, :, None, :, :]  # [S, J, 1, T, M]
        if self.mix is None or self.Z is None:  # both or neither (from_fit sets them together)
            L = theta
        else:
            zeta = np.einsum("skz,sjzm->sjkm", self.Z, self.theta)  # [S, J, K, M]
            m = self.mix[:, :, :, None, None]
            L = (1.0 - m) * theta + m * zeta[:, :, :, None, :]
        with np.errstate(divide="ignore"):
            return np.log(L)


@dataclass(frozen=True)
class Answers:
    """The answers of a table that could be labelled, grouped into score patterns.

    ``frame``: one row per answer (item, candidate, one column per judge with its score, NaN where
    none or excluded as self-family) plus ``pattern`` (row of ``candidate_index`` / ``scores``). ``candidate_index`` ``[P]`` and
    ``scores`` ``[P, J]`` (observed-level index, :data:`NO_SCORE` where none or excluded) describe the
    distinct patterns; ``size`` ``[P]`` counts their answers.
    """

    frame: pd.DataFrame
    candidate_index: np.ndarray
    scores: np.ndarray
    size: np.ndarray
    judges: tuple[str, ...] = field(default=())


def answers_of(table, included: np.ndarray | None = None, raters: Sequence[str] | None = None) -> Answers:
    """The unlabelled answers of a judgment table (not gold, at least one usable score), one column
    per rater of ``raters`` (a fit's judges, with the own-family raters of kept-apart self-family
    judgments: :func:`simplex_core.data.views.kept_apart_frame`; default the table's judges)."""
    frame = table.frame if raters is None else kept_apart_frame(table, raters)
    judges, cands = list(table.judges if raters is None else raters), list(table.candidates)
    view = frame.pivot(index=["item", "candidate"], columns="judge", values="score").reindex(columns=judges)
    if "gold" in frame.columns:
        gold = frame.groupby(["item", "candidate"])["gold"].any().reindex(view.index).fillna(False).to_numpy(bool)
        view = view[~gold]
    values = np.asarray(table.scale.values, dtype=float)
    raw = view.to_numpy(dtype=float)
    idx = np.where(np.isnan(raw), NO_SCORE, np.searchsorted(values, np.nan_to_num(raw))).astype(np.int64)
    k = pd.Categorical(view.index.get_level_values("candidate"), categories=cands).codes.astype(np.int64)
    if included is not None:  # excluded self-family scores do not count: show them blank too
        off = ~np.asarray(included, dtype=bool)[:, k].T
        idx[off] = NO_SCORE
        view = view.mask(off)
    usable = (idx >= 0).any(axis=1)
    view, idx, k = view[usable], idx[usable], k[usable]
    # order answers by table order of items so outputs read naturally
    item_order = {it: n for n, it in enumerate(table.items)}
    order = np.lexsort((k, view.index.get_level_values("item").map(item_order).to_numpy()))
    view, idx, k = view.iloc[order], idx[order], k[order]
    rows = np.column_stack([k, idx]) if len(k) else np.zeros((0, 1 + len(judges)), dtype=np.int64)
    unique, inverse, size = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    out = view.reset_index()
    out.columns.name = None
    out["pattern"] = np.asarray(inverse).reshape(-1)
    return Answers(frame=out, candidate_index=unique[:, 0].astype(np.int64), scores=unique[:, 1:].astype(np.int64),
                   size=size.astype(np.int64), judges=tuple(judges))


def label_probabilities(draws: LabelDraws, candidate: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``q[p, s, t]``: probability of true level t for pattern p (candidate, scores) under draw s."""
    log_L = draws.log_emission()  # [S, J, K', T, M]
    S, J, Kl, T, _ = log_L.shape
    log_L = np.ascontiguousarray(log_L.transpose(1, 2, 4, 0, 3))  # [J, K', M, S, T]
    candidate = np.asarray(candidate, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.int64)
    out = np.empty((candidate.size, S, T))
    log_pi = np.log(draws.pi).transpose(1, 0, 2)  # [K, S, T]
    for start in range(0, candidate.size, _CHUNK):
        c = candidate[start:start + _CHUNK]
        sc = scores[start:start + _CHUNK]
        kl = c if Kl > 1 else np.zeros_like(c)
        picked = log_L[np.arange(J)[None, :], kl[:, None], np.maximum(sc, 0)]  # [P, J, S, T]
        picked = np.where((sc >= 0)[:, :, None, None], picked, 0.0)
        logq = picked.sum(axis=1) + log_pi[c]  # [P, S, T]
        logq -= logq.max(axis=2, keepdims=True)
        q = np.exp(logq)
        out[start:start + _CHUNK] = q / q.sum(axis=2, keepdims=True)
    return out


def rank_uncertainty(weights: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Σ_k weighted variance of rank k; ``weights`` ``[..., S]`` (normalised here), ranks ``[S, K]``."""
    w = np.asarray(weights, dtype=float)
    w = w / w.sum(axis=-1, keepdims=True)
    m1 = w @ ranks
    return (w @ ranks**2 - m1**2).sum(axis=-1)


def weighted_rank_interval(weights: np.ndarray, ranks: np.ndarray, level: float = INTERVAL,
                           order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Inclusive rank interval per candidate from weighted rank draws (``weights`` ``[S]``, ``ranks``
    ``[S, K]``): the lower end is the smallest rank whose cumulative weight reaches (1 − level) / 2, the
    upper end the smallest reaching (1 + level) / 2 (the inverse of the weighted distribution function:
    numpy's ``inverted_cdf`` quantiles when the weights are equal; :func:`simplex_core.model.ranks.rank_interval`
    takes order statistics at q (S − 1), which can sit one draw higher); half-integer ranks rounded outward.
    ``order`` = ``np.argsort(ranks, axis=0, kind="stable")`` may be passed when called many times."""
    w = np.asarray(weights, dtype=float)
    w = w / w.sum()
    ranks = np.asarray(ranks, dtype=float)
    if order is None:
        order = np.argsort(ranks, axis=0, kind="stable")
    sorted_ranks = np.take_along_axis(ranks, order, axis=0)
    cum = np.cumsum(w[order], axis=0)  # [S, K]
    alpha = (1.0 - level) / 2.0
    tol = 1e-12  # cumulative sums of equal weights land a rounding error short of the quantile
    lo_i = (cum < alpha - tol).sum(axis=0)
    hi_i = np.minimum((cum < 1.0 - alpha - tol).sum(axis=0), len(w) - 1)
    cols = np.arange(ranks.shape[1])
    return np.floor(sorted_ranks[lo_i, cols]), np.ceil(sorted_ranks[hi_i, cols])


def expected_reductions(q: np.ndarray, weights: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Expected reduction of :func:`rank_uncertainty` from learning each pattern's true level.

    ``q`` ``[P, S, T]``, ``weights`` ``[S]`` or ``[F, S]`` (current posterior weights; several rows =
    several fantasies, averaged). With w_t = w · q(t) and P(t) = Σ_s w_t, the expected uncertainty
    after the label is E_w[Σ_k r_k²] − Σ_t Σ_k (w_t · r_k)² / P(t), so the reduction is
    Σ_t Σ_k (w_t · r_k)² / P(t) − Σ_k (w · r_k)².
    """
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    w = w / w.sum(axis=1, keepdims=True)  # [F, S]
    now = ((w @ ranks) ** 2).sum(axis=1)  # [F]
    gain = np.zeros((w.shape[0], q.shape[0]))
    for t in range(q.shape[2]):
        wt = w[:, None, :] * q[None, :, :, t]  # [F, P, S]
        pt = wt.sum(axis=2)  # [F, P]
        m = wt @ ranks  # [F, P, K]
        with np.errstate(invalid="ignore", divide="ignore"):
            gain += np.where(pt > 0, (m**2).sum(axis=2) / pt, 0.0)
    return np.maximum(gain - now[:, None], 0.0).mean(axis=0)


def suggest_labels(draws: LabelDraws, answers: Answers, budget: int = 20, *, fantasies: int = 16,
                   pool: int = 200, seed: int = 0, true_labels: tuple[str, ...] | None = None) -> pd.DataFrame:
    """A batch of ``budget`` answers to label, best first.

    The first answer has the largest exact expected reduction. Each next one maximises the expected
    reduction averaged over ``fantasies`` simulated outcomes of the labels already chosen (a draw
    taken as the truth, its labels drawn from q), among the ``pool`` patterns of largest one-step
    value. Columns: ``order, item, candidate`` + one per judge (its score) + ``expected_reduction``
    (at the time of choice, given the earlier picks, in summed rank variance) + ``alone_reduction``
    (the same answer's exact value if it were the only label) + ``p_true:<level>`` (predictive probability of
    each true level under the current posterior). ``attrs['uncertainty']`` is the current summed rank
    variance.
    """
    if budget < 1:
        raise ValueError(f"budget must be at least 1; got {budget}.")
    rng = np.random.default_rng(seed)
    S = draws.n_draws
    base = np.full(S, 1.0 / S)
    q_all = label_probabilities(draws, answers.candidate_index, answers.scores)
    one_step = expected_reductions(q_all, base, draws.ranks)
    top = np.argsort(-one_step, kind="stable")[:pool]
    q = q_all[top]
    left = answers.size[top].copy()
    truth = rng.integers(0, S, size=fantasies)
    w = np.tile(base, (fantasies, 1))
    chosen, gains = [], []
    for step in range(min(budget, int(left.sum()))):
        value = one_step[top] if step == 0 else expected_reductions(q, w, draws.ranks)
        value = np.where(left > 0, value, -np.inf)
        p = int(np.argmax(value))
        chosen.append(top[p])
        gains.append(float(value[p]))
        left[p] -= 1
        # each fantasy learns its simulated label of this answer
        cdf = np.cumsum(q[p][truth], axis=1)
        t = (rng.random((fantasies, 1)) > cdf).sum(axis=1).clip(max=q.shape[2] - 1)
        w = w * q[p][:, t].T
        w /= w.sum(axis=1, keepdims=True)
    # concrete answers for the chosen patterns, in a seeded random order within a pattern
    frame = answers.frame
    pools = {int(pp): list(rng.permutation(np.flatnonzero(frame["pattern"].to_numpy() == pp))) for pp in set(chosen)}
    rows = [pools[int(pp)].pop(0) for pp in chosen]
    out = frame.iloc[rows].drop(columns="pattern").reset_index(drop=True)
    out.insert(0, "order", np.arange(1, len(rows) + 1))
    out["expected_reduction"] = gains
    # the same answer's value labelled alone, now (exact, no fantasies): a later pick's value given the
    # earlier picks may exceed it, and rests on fewer effective draws
    out["alone_reduction"] = one_step[np.asarray(chosen, dtype=int)]
    pred = q_all[np.asarray(chosen, dtype=int)].mean(axis=1)  # [n, T]
    labels = true_labels or tuple(f"t{t}" for t in range(pred.shape[1]))
    for t, label in enumerate(labels):
        out[f"p_true:{label}"] = pred[:, t]
    out.attrs["uncertainty"] = float(rank_uncertainty(base, draws.ranks))
    return out


def budget_curve(draws: LabelDraws, answers: Answers, suggested: pd.DataFrame, *, replicates: int = 50,
                 seed: int = 0) -> pd.DataFrame:
    """Uncertainty after n = 0 … len(suggested) labels: the suggested order against random orders.

    Per replicate, one posterior draw is taken as the truth and every answer's true level is drawn
    from q at that draw; labelling an answer multiplies the draws' weights by q(t). Random orders are
    drawn afresh per replicate from the unlabelled answers. Columns: ``n, suggested, random`` (mean
    summed rank variance over replicates), ``gain`` (random − suggested, the two paired by replicate:
    the same truth), ``gain_se`` (its Monte Carlo standard error; NaN with one replicate: a gain
    within about two of these is noise, as a curve of 0.0199 → 0.0202 read without it was),
    ``suggested_ess, random_ess`` (mean effective sample size of the weights, a check on the
    reweighting), ``suggested_coverage, random_coverage`` (expected coverage: share of candidates
    whose rank under the replicate's truth lies in the reweighted 95% rank interval,
    :func:`weighted_rank_interval`) and ``suggested_width, random_width`` (mean number of ranks
    inside that interval, both ends included): what the next labels buy in interval terms.
    """
    rng = np.random.default_rng(seed)
    S = draws.n_draws
    key = answers.frame.set_index(["item", "candidate"])["pattern"]
    sugg = key.loc[list(zip(suggested["item"], suggested["candidate"]))].to_numpy()
    n = len(sugg)
    q = label_probabilities(draws, answers.candidate_index, answers.scores)  # [P, S, T]
    pattern_of = answers.frame["pattern"].to_numpy()
    curves = {"suggested": np.zeros((replicates, n + 1)), "random": np.zeros((replicates, n + 1))}
    ess = {"suggested": np.zeros((replicates, n + 1)), "random": np.zeros((replicates, n + 1))}
    cover = {"suggested": np.zeros((replicates, n + 1)), "random": np.zeros((replicates, n + 1))}
    width = {"suggested": np.zeros((replicates, n + 1)), "random": np.zeros((replicates, n + 1))}
    rank_order = np.argsort(draws.ranks, axis=0, kind="stable")
    for r in range(replicates):
        s_true = rng.integers(S)
        orders = {"suggested": sugg, "random": pattern_of[rng.permutation(len(pattern_of))[:n]]}
        for name, order in orders.items():
            logw = np.zeros(S)
            for i in range(n + 1):
                w = np.exp(logw - logw.max())
                w /= w.sum()
                curves[name][r, i] = rank_uncertainty(w, draws.ranks)
                ess[name][r, i] = 1.0 / np.sum(w**2)
                lo, hi = weighted_rank_interval(w, draws.ranks, order=rank_order)
                true_rank = draws.ranks[s_true]
                cover[name][r, i] = np.mean((lo <= true_rank) & (true_rank <= hi))
                width[name][r, i] = np.mean(hi - lo + 1)
                if i < n:
                    qp = q[order[i]]
                    t = min(int((rng.random() > np.cumsum(qp[s_true])).sum()), qp.shape[1] - 1)
                    logw += np.log(np.maximum(qp[:, t], 1e-300))
    gain = curves["random"] - curves["suggested"]  # [replicates, n + 1], paired by the replicate's truth
    gain_se = gain.std(0, ddof=1) / np.sqrt(replicates) if replicates > 1 else np.full(n + 1, np.nan)
    return pd.DataFrame({"n": np.arange(n + 1), "suggested": curves["suggested"].mean(0),
                         "random": curves["random"].mean(0), "gain": gain.mean(0), "gain_se": gain_se,
                         "suggested_ess": ess["suggested"].mean(0), "random_ess": ess["random"].mean(0),
                         "suggested_coverage": cover["suggested"].mean(0), "random_coverage": cover["random"].mean(0),
                         "suggested_width": width["suggested"].mean(0), "random_width": width["random"].mean(0)})
