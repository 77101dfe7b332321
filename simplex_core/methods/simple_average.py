"""Means of the judges' scores: ``single_judge:<judge>`` (one judge's mean score per candidate),
``simple_average`` (per-judge means averaged over the judges with equal weight) and ``bootstrap``
(percentile bootstrap over items of the simple average's ranks)."""

from __future__ import annotations

from typing import Collection

import numpy as np
import pandas as pd

from simplex_core.model.ranks import INTERVAL, rank_scores
from simplex_core.methods.method_base import (MethodResult, RngLike, ScoreArray, as_generator, item_resample_weights, judge_columns,
                                             missing_note, nanmean_last, ranked_result, score_array)


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
    return ranked_result(name, arr.candidates, means, notes=missing_note(means, arr.candidates, name))


def _simple_average_scores(arr: ScoreArray, weights: np.ndarray | None = None) -> np.ndarray:
    # Equal weight per judge: average the per-judge means over the judges that scored the candidate.
    return nanmean_last(_per_judge_means(arr, weights))


def simple_average(view: pd.DataFrame, *, excluded: Collection[tuple[str, str]] = ()) -> MethodResult:
    """Mean score per candidate for each judge, averaged over the judges with equal weight.

    A judge whose judgments of a candidate are all missing or excluded does not enter that
    candidate's average (the average is over the remaining judges).
    """
    arr = score_array(view, excluded)
    avg = _simple_average_scores(arr)
    return ranked_result("simple_average", arr.candidates, avg, notes=missing_note(avg, arr.candidates, "simple_average"))


def bootstrap_ranks(
    view: pd.DataFrame,
    n_resamples: int = 1000,
    rng: RngLike | None = None,
    *,
    excluded: Collection[tuple[str, str]] = (),
    level: float = INTERVAL,
) -> MethodResult:
    """Percentile bootstrap of the simple average's ranks (method ``bootstrap``).

    The point score and rank are the simple average's on the full data. Each replicate resamples the
    items with replacement -- replicate ``b`` uses the items
    ``rng.integers(0, n_items, size=(n_resamples, n_items))[b]`` -- recomputes the simple average
    and re-ranks (ties average; a candidate with no score in a replicate is ranked last there). The
    interval is :func:`~simplex_core.model.ranks.rank_interval` of the replicate ranks (inclusive integer order statistics at
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
    gen = as_generator(rng)
    arr = score_array(view, excluded)
    avg = _simple_average_scores(arr)
    weights = item_resample_weights(len(arr.items), n_resamples, gen)
    draws = rank_scores(_simple_average_scores(arr, weights), nan_last=True)
    # no score on the full data: "last in every replicate" is no interval
    return ranked_result("bootstrap", arr.candidates, avg, draws, level=level, unscored_without_interval=True,
                         details={"n_resamples": float(n_resamples)}, notes=missing_note(avg, arr.candidates, "bootstrap"))


