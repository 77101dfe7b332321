"""What every comparison method shares: :class:`MethodResult` (scores, ranks and resampled rank draws
of one method on one view) and its one builder from scores and rank draws (:func:`ranked_result`),
the ``Method`` callable ``f(view, rng) -> MethodResult``, the item view as
an array of scores with the excluded pairs dropped (:func:`score_array`), and seeded generators and
item-resampling weights (randomness only through a generator; the global numpy state is never touched)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Collection, Iterable, Mapping, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from simplex_core.model.ranks import INTERVAL, rank_interval, rank_scores

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


@runtime_checkable
class FittingMethod(Protocol):
    """A method that fits a model per view (the Bayesian model, the ordinal model): the study code
    collects the fits a set of views needs (:meth:`fit_tasks`), runs them in one batch (possibly on
    Dask), keeps each with :meth:`store`, then calls the method, which finds its fit in ``memo``;
    every result it returned is in ``history``."""

    name: str
    memo: dict
    history: list

    def __call__(self, view: pd.DataFrame, rng: np.random.Generator | None = None) -> MethodResult: ...

    def fit_tasks(self, views: Iterable[pd.DataFrame],
                  generators: Iterable[np.random.Generator] | None = None) -> list[tuple[str, tuple]]: ...

    def store(self, key: str, result: MethodResult) -> None: ...


# -- shared helpers ------------------------------------------------------------------------------

def as_generator(rng: RngLike | None) -> np.random.Generator:
    """A NumPy Generator from a seed or a Generator (itself); None means seed 0 (reproducible)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(0 if rng is None else rng)


def judge_columns(view: pd.DataFrame) -> list[str]:
    """The judge columns of an item view (every column except ``true_score``)."""
    return [c for c in view.columns if c != TRUE_SCORE]


def unique_in_order(values: Iterable) -> list:
    """The distinct values in the order they first appear."""
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


def check_view(view: pd.DataFrame) -> None:
    """Refuse anything but an item view (a DataFrame indexed by unique (item, candidate) pairs), saying what it is."""
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
    check_view(view)
    items = unique_in_order(view.index.get_level_values("item"))
    candidates = unique_in_order(view.index.get_level_values("candidate"))
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


def candidate_series(values: np.ndarray, candidates: Iterable[str], name: str) -> pd.Series:
    """One value per candidate as a Series indexed by ``candidate`` (a MethodResult's columns)."""
    return pd.Series(np.asarray(values, dtype=float), index=pd.Index(list(candidates), name="candidate"), name=name)


def rank_draws_frame(draws: np.ndarray, candidates: tuple[str, ...]) -> pd.DataFrame:
    """Rank draws ``[B, K]`` as the long table a MethodResult's ``rank_draws`` holds."""
    n_rep, n_cand = draws.shape
    return pd.DataFrame(
        {
            "replicate": np.repeat(np.arange(n_rep), n_cand),
            "candidate": np.tile(np.array(candidates, dtype=object), n_rep),
            "rank": draws.reshape(-1).astype(float),
        }
    )


def ranked_result(
    method: str,
    candidates: tuple[str, ...],
    scores: np.ndarray,
    rank_draws: np.ndarray | None = None,
    *,
    uses_labels: bool = False,
    score_name: str = "score",
    level: float = INTERVAL,
    unscored_without_interval: bool = False,
    details: Mapping[str, float] | None = None,
    notes: tuple[str, ...] = (),
) -> MethodResult:
    """A :class:`MethodResult` from point scores and replicate ranks, by the one rank rule.

    Parameters
    ----------
    method, uses_labels, details, notes
        As in :class:`MethodResult`.
    candidates
        The candidates, in the order of ``scores`` and of the columns of ``rank_draws``.
    scores
        ``[K]`` point scores; the point ranks are their :func:`~simplex_core.model.ranks.rank_scores`
        (NaN score, NaN rank).
    rank_draws
        ``[B, K]`` replicate ranks, or ``None`` for a method without intervals. The interval is
        their :func:`~simplex_core.model.ranks.rank_interval` at ``level``.
    score_name
        Name of the scores Series (e.g. ``"log_ability"``).
    unscored_without_interval
        When True, a candidate with a NaN score gets no interval and no replicate ranks (rather than
        "last in every replicate").
    """
    lo = hi = long_draws = None
    if rank_draws is not None:
        lo, hi = rank_interval(rank_draws, level)
        long_draws = rank_draws_frame(rank_draws, candidates)
        if unscored_without_interval:
            unscored = np.isnan(np.asarray(scores, dtype=float))
            lo[unscored] = hi[unscored] = np.nan
            dropped = np.asarray(candidates, dtype=object)[unscored]
            long_draws = long_draws[~long_draws["candidate"].isin(dropped)].reset_index(drop=True)
    return MethodResult(
        method=method,
        uses_labels=uses_labels,
        scores=candidate_series(scores, candidates, score_name),
        ranks=candidate_series(rank_scores(scores), candidates, "rank"),
        rank_lo=None if lo is None else candidate_series(lo, candidates, "rank_lo"),
        rank_hi=None if hi is None else candidate_series(hi, candidates, "rank_hi"),
        rank_draws=long_draws,
        details=dict(details or {}),
        notes=notes,
    )


def missing_note(scores: np.ndarray, candidates: tuple[str, ...], method: str) -> tuple[str, ...]:
    """The note of a method's result naming the candidates it could not score (NaN), or ``()``."""
    missing = [c for c, s in zip(candidates, scores) if np.isnan(s)]
    if not missing:
        return ()
    return (
        f"{method}: no judgments left for {missing} (all missing or excluded as self-family), "
        "so they have no score and no rank.",
    )


def item_resample_weights(n_items: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``[B, I]`` multiplicities of a bootstrap over items.

    Replicate ``b`` draws the items ``rng.integers(0, n_items, size=(n_resamples, n_items))[b]``
    (one call for all replicates); the weights count how often each item was drawn.
    """
    idx = rng.integers(0, n_items, size=(n_resamples, n_items))
    flat = (np.arange(n_resamples)[:, None] * n_items + idx).reshape(-1)
    return np.bincount(flat, minlength=n_resamples * n_items).reshape(n_resamples, n_items).astype(float)


def nanmean_last(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis ignoring NaN, NaN (without a warning) where every value is NaN."""
    ok = ~np.isnan(x)
    n = ok.sum(axis=-1)
    total = np.where(ok, x, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.where(n > 0, n, 1), np.nan)
