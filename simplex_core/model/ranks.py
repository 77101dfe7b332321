"""The one rule that turns scores into ranks, for every method and every view: rank 1 = best, ties
get the average of the ranks they span (:func:`rank_scores`), a draw's ranks count the strictly
better (:func:`ranks_from_scores`), a 95% rank interval is the outward order statistics of the
replicate ranks (:func:`rank_interval`, at :data:`INTERVAL`), and a posterior rank quantile is a rank
that occurred (:func:`rank_quantile`)."""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["INTERVAL", "INTERVAL_TAILS", "rank_scores", "ranks_from_scores", "rank_interval", "rank_quantile"]

INTERVAL = 0.95
"""The level of every interval the project reports (rank intervals, E_k intervals, PPC bands)."""
INTERVAL_TAILS = ((1 - INTERVAL) / 2, 1 - (1 - INTERVAL) / 2)
"""The quantiles that bound a central :data:`INTERVAL` interval of draws (lower, upper)."""


def rank_scores(scores: np.ndarray, *, nan_last: bool = False) -> np.ndarray:
    """Ranks of ``scores`` along the last axis: 1 = largest, ties get average ranks.

    Parameters
    ----------
    scores
        Array ``[..., K]``.
    nan_last
        When True, NaN scores are ranked below every finite score (ties among them averaged);
        when False, NaN scores get NaN ranks and the others are ranked among themselves.
    """
    scores = np.asarray(scores, dtype=float)
    if nan_last:
        return stats.rankdata(-np.where(np.isnan(scores), -np.inf, scores), method="average", axis=-1)
    if scores.ndim == 1:
        out = np.full(scores.shape, np.nan)
        ok = ~np.isnan(scores)
        out[ok] = stats.rankdata(-scores[ok], method="average")
        return out
    return np.apply_along_axis(rank_scores, -1, scores)


def ranks_from_scores(scores: np.ndarray) -> np.ndarray:
    """Rank of each candidate per draw: 1 + number of candidates with a strictly larger score.

    ``scores`` is ``[..., K]``; the result has the same shape (int64), rank 1 = best.
    """
    scores = np.asarray(scores, dtype=float)
    return 1 + (scores[..., None, :] > scores[..., :, None]).sum(axis=-1).astype(np.int64)


def rank_interval(draws: np.ndarray, level: float = INTERVAL) -> tuple[np.ndarray, np.ndarray]:
    """Inclusive integer rank interval from replicate ranks.

    For each column of ``draws`` (``[n_replicates, K]``), the lower end is numpy's ``lower``
    quantile at ``(1 - level) / 2`` and the upper end numpy's ``higher`` quantile at
    ``(1 + level) / 2`` -- i.e. the order statistics at the floor / ceil of the position
    ``q (n - 1)`` -- so each end is a rank that actually occurred and the interval is never narrower
    than the interpolated one. Half-integer ranks (from ties) are then rounded outward: floor for the
    lower end, ceil for the upper. A candidate's rank r lies in the interval when ``lo <= r <= hi``.
    """
    draws = np.asarray(draws, dtype=float)
    alpha = (1.0 - level) / 2.0
    lo = np.floor(np.quantile(draws, alpha, axis=0, method="lower"))
    hi = np.ceil(np.quantile(draws, 1.0 - alpha, axis=0, method="higher"))
    return lo, hi


def rank_quantile(ranks: np.ndarray, q, axis: int = 0) -> np.ndarray:
    """Quantile(s) ``q`` of rank draws, as ranks that occurred (numpy's ``inverted_cdf``): the
    posterior median rank of a candidate is one of its drawn ranks, never an average of two."""
    return np.quantile(ranks, q, axis=axis, method="inverted_cdf")
