"""The presenting leaderboard: per candidate the rank interval, P(best), P(top 3) and tiers.

A *tier* is a group of candidates whose order the data cannot settle at 95%. The rule, from the
posterior draws of the expected scores E_k (optionally importance-weighted):

* ``a`` is **credibly ahead** of ``b`` when P(E_a > E_b) ≥ 0.975 (:data:`CREDIBLE`; a one-sided
  97.5% statement, the upper end of a central 95% interval of E_a − E_b above zero);
* candidates are taken in order of their posterior mean of E (best first, ties by name); the first
  opens tier 1; each next candidate joins the current tier when no member of that tier is credibly
  ahead of it (nor it of them), otherwise it opens the next tier.

So no member of a tier is credibly ahead of another, and each tier after the first starts at a
candidate that some member of the tier above is credibly ahead of: that is what "the tier above is
credibly ahead of the next" means here. Greedy in mean order keeps tiers contiguous in the mean
ranking (tiers never reorder it). Pairs further apart are not checked across tiers: a wide-interval
candidate low in tier 2 may be unsettled against the bottom of tier 1; the pairwise table says so.

Rank intervals follow the project's one rule, :func:`simplex_core.model.ranks.rank_interval`; with
importance weights they are taken on a systematic resample of the draws (the same rule on draws
that follow the weighted posterior).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from simplex_core.model.ranks import INTERVAL, rank_interval, rank_quantile, ranks_from_scores
from simplex_core.inference.reweighting import systematic_resample

__all__ = ["CREDIBLE", "LEADERBOARD_COLUMNS", "credibly_ahead", "leaderboard", "leaderboard_from_fit", "summary_columns",
           "leaderboard_records", "share", "tiers", "weighted_pairwise", "systematic_resample"]

#: P(E_a > E_b) at or above this makes ``a`` credibly ahead of ``b`` (95%, two-sided).
CREDIBLE = 0.975

LEADERBOARD_COLUMNS = (
    "tier", "candidate", "expected_score_mean", "expected_score_lo", "expected_score_hi",
    "rank_median", "rank_lo", "rank_hi", "p_best", "p_top3", "p_ahead_of_next",
)


def _weights(weights: np.ndarray | None, S: int) -> np.ndarray:
    if weights is None:
        return np.full(S, 1.0 / S)
    w = np.asarray(weights, dtype=float).ravel()
    if w.shape != (S,):
        raise ValueError(f"weights has {w.size} values for {S} draws: give one weight per draw.")
    if not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise ValueError("weights must be finite, non-negative and not all zero.")
    return w / w.sum()


def share(mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """The (weighted) share of draws where ``mask`` (``[S, ...]``) holds. Without weights it is the
    exact count over S: summing 1/S per draw gave 1.0000000000000007 for P(best) and could put 3900 of
    4000 draws a hair below the 0.975 of "credibly ahead"."""
    m = np.asarray(mask, dtype=bool)
    if weights is None:
        return np.count_nonzero(m, axis=0) / m.shape[0]
    w = _weights(weights, m.shape[0])
    return np.clip(np.tensordot(w, m.astype(float), axes=1), 0.0, 1.0)


def weighted_pairwise(expected_score: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """``P[a, b] = P(E_a > E_b)`` from draws ``[S, K]`` (strictly greater; diagonal NaN)."""
    e = np.asarray(expected_score, dtype=float)
    p = share(e[:, :, None] > e[:, None, :], weights)
    np.fill_diagonal(p, np.nan)
    return p


def credibly_ahead(pairwise: np.ndarray, credible: float = CREDIBLE) -> np.ndarray:
    """Boolean ``[K, K]``: row credibly ahead of column (P(E_row > E_col) ≥ ``credible``)."""
    p = np.asarray(pairwise, dtype=float)
    return np.nan_to_num(p, nan=0.0) >= credible


def tiers(pairwise: np.ndarray, mean: np.ndarray, names: Sequence[str] | None = None,
          credible: float = CREDIBLE) -> np.ndarray:
    """Tier of each candidate (1 = top), by the greedy rule of the module docstring.

    Parameters
    ----------
    pairwise
        ``[K, K]`` with ``P(E_a > E_b)`` (e.g. :func:`weighted_pairwise`).
    mean
        ``[K]`` posterior means of E (the order in which candidates are taken, best first).
    names
        Tie-break of equal means (alphabetical); default the index.
    credible
        The threshold of "credibly ahead".

    Returns
    -------
    np.ndarray
        int ``[K]`` in the input order.
    """
    mean = np.asarray(mean, dtype=float)
    K = mean.size
    if np.asarray(pairwise).shape != (K, K):
        raise ValueError(f"pairwise has shape {np.asarray(pairwise).shape}; expected {(K, K)} for {K} means.")
    ahead = credibly_ahead(pairwise, credible)
    keys = list(names) if names is not None else list(range(K))
    order = sorted(range(K), key=lambda k: (-mean[k], keys[k]))
    out = np.zeros(K, dtype=int)
    tier, members = 1, list[int]()
    for k in order:
        if members and any(ahead[m, k] or ahead[k, m] for m in members):
            tier, members = tier + 1, []
        members.append(k)
        out[k] = tier
    return out


def _weighted_quantile(x: np.ndarray, w: np.ndarray, q: float) -> np.ndarray:
    order = np.argsort(x, axis=0, kind="stable")
    xs = np.take_along_axis(x, order, axis=0)
    cw = np.cumsum(w[order], axis=0)
    idx = (cw < q * cw[-1]).sum(axis=0)
    return xs[np.minimum(idx, x.shape[0] - 1), np.arange(x.shape[1])]


def summary_columns(expected_score: np.ndarray, ranks: np.ndarray, weights: np.ndarray | None = None,
                    seed: int = 0) -> dict[str, np.ndarray]:
    """The columns every per-candidate table shares, from draws ``[S, K]`` of E and of the ranks
    (optionally importance-weighted): ``expected_score_mean``, ``expected_score_lo``/``_hi`` (95%),
    ``rank_median``, ``rank_lo``/``rank_hi`` (:func:`~simplex_core.model.ranks.rank_interval`) and
    ``p_best``. The one owner of these figures: :func:`leaderboard` and
    :func:`simplex_core.summaries.posterior_tables.candidate_summary` both read them here."""
    e = np.asarray(expected_score, dtype=float)
    S = e.shape[0]
    w = _weights(weights, S)
    alpha = (1 - INTERVAL) / 2
    if weights is None:
        e_lo, e_hi = np.quantile(e, alpha, axis=0), np.quantile(e, 1 - alpha, axis=0)
        r_for_interval = ranks
    else:
        e_lo, e_hi = _weighted_quantile(e, w, alpha), _weighted_quantile(e, w, 1 - alpha)
        r_for_interval = ranks[systematic_resample(w, S, seed)]
    r_lo, r_hi = rank_interval(r_for_interval, INTERVAL)
    return {"expected_score_mean": w @ e, "expected_score_lo": e_lo, "expected_score_hi": e_hi,
            "rank_median": rank_quantile(r_for_interval, 0.5).astype(int), "rank_lo": r_lo.astype(int),
            "rank_hi": r_hi.astype(int), "p_best": share(ranks == 1, weights)}


def leaderboard(expected_score: np.ndarray, candidates: Sequence[str], weights: np.ndarray | None = None, *,
                credible: float = CREDIBLE, top: int = 3, seed: int = 0,
                rater_deviation: np.ndarray | None = None) -> pd.DataFrame:
    """The leaderboard table from draws of E (``[S, K]``), best first.

    Parameters
    ----------
    expected_score
        Posterior draws ``[S, K]`` of the expected scores (columns in ``candidates`` order).
    candidates
        Names, one per column.
    weights
        Optional importance weights per draw (:mod:`simplex_core.inference.reweighting`); normalised here.
    credible
        Threshold of "credibly ahead" (:data:`CREDIBLE`).
    top
        P(top ``top``) is reported as ``p_top3`` (capped at K).
    rater_deviation
        δ draws ``[S, K]`` (:mod:`simplex_core.inference.rater_deviation`): ranks, tiers and the
        probabilities of being ahead are those of the truth, E + δ; E's mean and interval stay E's.

    Returns
    -------
    pd.DataFrame
        Columns :data:`LEADERBOARD_COLUMNS`: ``tier`` (1 = top), E mean and 95% interval, rank
        median and 95% interval (:func:`~simplex_core.model.ranks.rank_interval`), ``p_best``
        (P(rank = 1)), ``p_top3`` (P(rank ≤ 3)) and ``p_ahead_of_next`` (P(E above the next row's E);
        NaN on the last row). Sorted by posterior mean of E.
    """
    e = np.asarray(expected_score, dtype=float)
    if e.ndim != 2 or e.shape[1] != len(candidates):
        raise ValueError(f"expected_score has shape {e.shape}; expected (draws, {len(candidates)} candidates).")
    S, K = e.shape
    names = [str(c) for c in candidates]
    truth = e if rater_deviation is None else e + np.asarray(rater_deviation, dtype=float).reshape(e.shape)
    ranks = ranks_from_scores(truth)
    columns = summary_columns(e, ranks, weights, seed)
    mean = columns["expected_score_mean"]
    pair = weighted_pairwise(truth, weights)
    tier = tiers(pair, mean, names, credible)
    table = pd.DataFrame({"tier": tier, "candidate": names, **columns, "p_top3": share(ranks <= min(top, K), weights)})
    order = sorted(range(K), key=lambda k: (-mean[k], names[k]))
    table = table.iloc[order].reset_index(drop=True)
    nxt = [pair[a, b] for a, b in zip(order[:-1], order[1:])] + [np.nan]
    table["p_ahead_of_next"] = nxt
    return table[list(LEADERBOARD_COLUMNS)]


def leaderboard_from_fit(fit: Any, weights: np.ndarray | None = None, **kwargs: Any) -> pd.DataFrame:
    """:func:`leaderboard` of a :class:`~simplex_core.inference.fit_result.FitResult` or its InferenceData."""
    idata = getattr(fit, "idata", fit)
    post = idata.posterior
    arr = np.asarray(post["expected_score"].values)
    names = [str(v) for v in post["candidate"].values]
    if "rater_deviation" in post:
        kwargs.setdefault("rater_deviation", np.asarray(post["rater_deviation"].values).reshape(-1, arr.shape[-1]))
    return leaderboard(arr.reshape(-1, arr.shape[-1]), names, weights, **kwargs)


def leaderboard_records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The ``leaderboard`` list of result.json (JSON-able; NaN becomes null)."""
    out = []
    for row in table.to_dict("records"):
        rec: dict[str, Any] = {}
        for c in LEADERBOARD_COLUMNS:
            v = row[c]
            if c in ("tier", "rank_median", "rank_lo", "rank_hi"):
                rec[c] = int(v)
            elif c == "candidate":
                rec[c] = str(v)
            else:
                rec[c] = float(v) if np.isfinite(v) else None
        out.append(rec)
    return out
