"""How well a ranking method recovers the true ranking: the paper's Table 1 figures.

This module owns the evaluation of ranking methods against ground truth (section 6 "Comparative
performance evaluation"; appendix D, E):

- the true ranking (:func:`true_ranks`): mean ``true_score`` per candidate, rank 1 = best;
- Spearman correlation of a method's point ranking with the truth (:func:`spearman`);
- coverage: the share of candidates whose true rank lies inside the method's 95% rank interval
  (:func:`coverage`), and its price: the intervals' mean width (:func:`interval_width`) and mean
  interval score (:func:`interval_score`, Gneiting & Raftery 2007), which rewards narrow intervals and
  charges 2/α per rank by which one misses the truth;
- every figure over the candidates a method ranks (a single judge whose own family's candidates were
  excluded is scored over the others, and the count is reported: ``ranked`` of ``candidates``);
- 95% intervals for both by resampling items and recomputing every method
  (:func:`evaluate_methods`);
- the long table of rank draws per method for the rankings figure (:func:`method_rank_draws`).

A *method* is any callable ``f(view, rng) -> MethodResult`` on an item view (see
``simplex_core.methods.baselines``); the Bayesian model plugs in the same way, with its own caching.
The self-preference and prior experiments will live here too (``experiments``), once the model exists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from simplex_core.methods.method_base import (
    TRUE_SCORE,
    Method,
    MethodResult,
    RngLike,
    as_generator,
    check_view,
    unique_in_order,
)
from simplex_core.methods.baselines import method_generator
from simplex_core.model.ranks import INTERVAL, rank_scores

if TYPE_CHECKING:  # pragma: no cover - typing only
    from simplex_core.data.table import JudgmentTable

__all__ = [
    "EVALUATION_COLUMNS",
    "NoTruthError",
    "figure_order",
    "true_ranks",
    "spearman",
    "coverage",
    "covered",
    "interval_width",
    "interval_score",
    "INTERVAL_ALPHA",
    "ranked_truth",
    "ranked_count",
    "ranked_note",
    "candidate_interval_scores",
    "resample_items",
    "resampled_views",
    "method_stream",
    "method_generators",
    "evaluate_results",
    "evaluate_methods",
    "method_rank_draws",
]

EVALUATION_COLUMNS = (
    "method",
    "uses_labels",
    "spearman",
    "spearman_lo",
    "spearman_hi",
    "coverage",
    "coverage_lo",
    "coverage_hi",
    "width",
    "width_lo",
    "width_hi",
    "width_share",
    "interval_score",
    "interval_score_lo",
    "interval_score_hi",
    "ranked",
    "candidates",
)
"""Columns of :func:`evaluate_methods` (and of ``python -m simplex_core evaluate --out``): each
figure with its item-resample interval; ``width_share`` is ``width`` over the number of candidates
ranked; ``ranked`` of ``candidates`` says over how many of the candidates with a true rank the figures
are taken."""

INTERVAL_ALPHA = round(1.0 - INTERVAL, 12)  # 0.05 exactly, not 1 - 0.95 in floating point
"""The α of the 95% rank intervals every method reports; the interval score charges 2/α = 40 per rank
by which an interval misses the true rank."""

POINT_FIGURES = ("spearman", "coverage", "width", "width_share", "interval_score", "ranked", "candidates")
"""The columns of :func:`evaluate_results`, after ``method`` and ``uses_labels``."""


class NoTruthError(ValueError):
    """The data has no ground truth, so methods cannot be evaluated (the CLI exits with status 2)."""


def _as_view(table_or_view: "JudgmentTable | pd.DataFrame") -> pd.DataFrame:
    if isinstance(table_or_view, pd.DataFrame):
        return table_or_view
    from simplex_core.data.views import item_view

    return item_view(table_or_view)


def true_ranks(view: pd.DataFrame) -> pd.Series:
    """The true ranking: mean ``true_score`` per candidate over its items, rank 1 = best.

    Tied means get the average of the ranks they span (two candidates tied for 2nd and 3rd both get
    2.5). A candidate without any true score gets a NaN rank.

    Parameters
    ----------
    view
        Item view (index item, candidate) with a ``true_score`` column.

    Returns
    -------
    pd.Series
        ``true_rank`` per candidate, in the view's candidate order.
    """
    check_view(view)
    if TRUE_SCORE not in view.columns:
        raise NoTruthError(
            "The data has no ground truth (no 'true_score' column), so there is no true ranking to "
            "evaluate against. Load data with a true_score column."
        )
    candidates = unique_in_order(view.index.get_level_values("candidate"))
    means = view[TRUE_SCORE].astype(float).groupby(level="candidate", sort=False).mean().reindex(candidates)
    return pd.Series(
        rank_scores(means.to_numpy()), index=pd.Index(candidates, name="candidate"), name="true_rank"
    )


def rank_correlation(a: ArrayLike, b: ArrayLike) -> float:
    """Spearman correlation of two rankings given in the same candidate order (NaN when either is
    constant): :func:`spearman` without the matching by name."""
    return spearman(pd.Series(np.asarray(a, dtype=float)), pd.Series(np.asarray(b, dtype=float)))


def ranked_truth(point_ranks: pd.Series, true_ranks: pd.Series) -> pd.Series:
    """The true ranks of the candidates a method ranks, ranked again among themselves (1 = best).

    A method that leaves some candidates unranked (a single judge whose own family's candidates were
    excluded) ranks the others 1..n among themselves; its figures are taken over those candidates,
    against their true order among themselves, so it is neither blank nor charged for the shift.
    """
    truth = true_ranks.dropna()
    ranks = point_ranks.reindex(truth.index)
    kept = truth[ranks.notna().to_numpy()]
    if len(kept) == len(truth):
        return kept
    return pd.Series(stats.rankdata(kept.to_numpy(dtype=float), method="average"), index=kept.index,
                     name=truth.name)


def spearman(point_ranks: pd.Series, true_ranks: pd.Series) -> float:
    """Spearman correlation between a method's point ranks and the true ranks.

    Candidates are matched by name over those with a true rank that the method ranks (see
    :func:`ranked_truth`; the count is :func:`ranked_count`). Ties are ranked by their average rank
    (``scipy.stats.spearmanr``). NaN when fewer than two such candidates remain or when either side is
    constant.
    """
    truth = ranked_truth(point_ranks, true_ranks)
    ranks = point_ranks.reindex(truth.index)
    if len(truth) < 2 or ranks.nunique() < 2 or truth.nunique() < 2:
        return float("nan")
    return float(stats.spearmanr(ranks.to_numpy(dtype=float), truth.to_numpy(dtype=float)).statistic)


def ranked_count(result: MethodResult, true_ranks: pd.Series) -> tuple[int, int]:
    """``(ranked, candidates)``: how many of the candidates with a true rank the method ranks, of how
    many (shown as "over 10 of 12" beside a partial method's figures)."""
    truth = true_ranks.dropna()
    return int(result.ranks.reindex(truth.index).notna().sum()), int(len(truth))


def ranked_note(row: Mapping) -> str:
    """" (over 3 of 9)" beside the figures of a method that ranks only part of the candidates, from an
    evaluation row's ``ranked`` and ``candidates``; "" when it ranks them all or the row has no count
    (tables written before the count was)."""
    ranked, total = row.get("ranked"), row.get("candidates")
    if ranked is None or total is None or pd.isna(ranked) or pd.isna(total) or int(ranked) == int(total):
        return ""
    return f" (over {int(ranked)} of {int(total)})"


def _interval_ends(result: MethodResult, truth: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Each candidate's inclusive rank interval; a method without intervals stands at its point rank."""
    if result.rank_lo is not None and result.rank_hi is not None:  # result.has_intervals, spelt out for the type checker
        return result.rank_lo.reindex(truth.index), result.rank_hi.reindex(truth.index)
    point = result.ranks.reindex(truth.index)
    return point, point


def covered(result: MethodResult, true_ranks: pd.Series) -> pd.Series:
    """Per candidate the method ranks (among those with a true rank): whether its interval covers the
    true rank among those candidates (:func:`ranked_truth`).

    With intervals: ``rank_lo <= true_rank <= rank_hi`` (inclusive). Without intervals (single
    judge, simple average): covered only when the point rank equals the true rank exactly -- our
    convention, consistent with the paper's figures for such methods.
    """
    truth = ranked_truth(result.ranks, true_ranks)
    lo, hi = _interval_ends(result, truth)
    inside = (lo <= truth) & (truth <= hi)
    return inside.fillna(False).astype(bool).rename("covered")


def coverage(result: MethodResult, true_ranks: pd.Series) -> float:
    """Share of the candidates the method ranks whose true rank lies inside its 95% interval (see
    :func:`covered` for the inclusive rule and the no-interval convention). NaN when no candidate with
    a true rank is ranked."""
    inside = covered(result, true_ranks)
    return float(inside.mean()) if len(inside) else float("nan")


def candidate_interval_scores(result: MethodResult, true_ranks: pd.Series,
                              alpha: float = INTERVAL_ALPHA) -> pd.DataFrame:
    """Per candidate the method ranks: ``width`` and ``interval_score`` of its rank interval.

    A rank interval is a set of whole ranks, so its width is the number of ranks it admits,
    ``hi - lo + 1``: [1, K] has width K, a point rank width 1. The interval score (Gneiting & Raftery
    2007, eq. 43) adds to the width ``2/alpha`` times the distance by which the true rank falls
    outside: ``width + (2/alpha) * (max(lo - r, 0) + max(r - hi, 0))``. Lower is better; a method
    without intervals is scored at its point rank.
    """
    truth = ranked_truth(result.ranks, true_ranks)
    lo, hi = _interval_ends(result, truth)
    lo, hi, r = (x.to_numpy(dtype=float) for x in (lo, hi, truth))
    width = hi - lo + 1.0
    miss = np.maximum(lo - r, 0.0) + np.maximum(r - hi, 0.0)
    return pd.DataFrame({"width": width, "interval_score": width + (2.0 / alpha) * miss}, index=truth.index)


def interval_width(result: MethodResult, true_ranks: pd.Series) -> float:
    """Mean width in ranks of the method's 95% rank intervals over the candidates it ranks (see
    :func:`candidate_interval_scores`); NaN when it ranks none."""
    scores = candidate_interval_scores(result, true_ranks)
    return float(scores["width"].mean()) if len(scores) else float("nan")


def interval_score(result: MethodResult, true_ranks: pd.Series, alpha: float = INTERVAL_ALPHA) -> float:
    """Mean interval score of the method's rank intervals over the candidates it ranks (see
    :func:`candidate_interval_scores`); NaN when it ranks none."""
    scores = candidate_interval_scores(result, true_ranks, alpha)
    return float(scores["interval_score"].mean()) if len(scores) else float("nan")


def resample_items(view: pd.DataFrame, positions: np.ndarray) -> pd.DataFrame:
    """The item view made of the items at ``positions`` (0-based, repeats allowed), in that order.

    Repeated items become distinct items named ``"<item>#<n>"`` (n = position in the draw), so a
    method that resamples items itself sees each drawn copy as its own item.
    """
    check_view(view)
    codes, items = pd.factorize(view.index.get_level_values("item"))
    order = np.argsort(codes, kind="stable")  # rows grouped by item, in view order within an item
    starts = np.searchsorted(codes[order], np.arange(len(items)))
    counts = np.bincount(codes, minlength=len(items))
    positions = np.asarray(positions, dtype=int)
    rows = np.concatenate([order[starts[p] : starts[p] + counts[p]] for p in positions])
    new_items = np.repeat([f"{items[p]}#{n}" for n, p in enumerate(positions)], counts[positions])
    out = view.iloc[rows]
    return out.set_axis(
        pd.MultiIndex.from_arrays(
            [new_items, out.index.get_level_values("candidate")], names=["item", "candidate"]
        ),
        axis=0,
    )


def _resample_plan(rng: RngLike | None, n_items: int, ci_resamples: int) -> tuple[int, list[np.ndarray]]:
    """The base seed of the methods' generators and the item positions of each resample, drawn
    from ``rng`` in the order :func:`evaluate_methods` has always drawn them."""
    gen = as_generator(rng)
    base_seed = int(gen.integers(2**63))
    return base_seed, [gen.integers(0, n_items, size=n_items) for _ in range(ci_resamples)]


def resampled_views(view: pd.DataFrame, ci_resamples: int, rng: RngLike | None) -> list[pd.DataFrame]:
    """The views :func:`evaluate_methods` runs its methods on with the same ``rng``: the full view,
    then each item resample. Lets expensive methods fit them all at once (e.g. on Dask) first."""
    check_view(view)
    n_items = view.index.get_level_values("item").nunique()
    _, plan = _resample_plan(rng, n_items, ci_resamples)
    return [view] + [resample_items(view, positions) for positions in plan]


def method_stream(name: str, method: object) -> str:
    """The name of the generator stream :func:`evaluate_methods` hands ``method`` (evaluated as
    ``name``): its ``rng_stream`` when it shares another method's (a gold method draws PPI's
    labelled items), else its own name."""
    return getattr(method, "rng_stream", None) or name


def method_generators(rng: RngLike | None, ci_resamples: int, stream: str) -> list[np.random.Generator]:
    """The generators :func:`evaluate_methods` with the same ``rng`` hands a method of stream
    ``stream``: on the full data, then on each item resample, each fresh. Lets a method whose data
    depend on its generator (a gold method's labelled items) prepare its fits before the evaluation."""
    base_seed, _ = _resample_plan(rng, 0, 0)
    return [method_generator(base_seed, stream, r) for r in range(ci_resamples + 1)]


def _point_figures(res: MethodResult, truth: pd.Series) -> dict[str, float]:
    scores = candidate_interval_scores(res, truth)
    ranked, candidates = ranked_count(res, truth)
    width = float(scores["width"].mean()) if len(scores) else float("nan")
    return {
        "spearman": spearman(res.ranks, truth),
        "coverage": coverage(res, truth),
        "width": width,
        "width_share": width / ranked if ranked else float("nan"),
        "interval_score": float(scores["interval_score"].mean()) if len(scores) else float("nan"),
        "ranked": ranked,
        "candidates": candidates,
    }


def evaluate_results(results: Mapping[str, MethodResult], truth: pd.Series) -> pd.DataFrame:
    """Point figures for already computed results: columns ``method, uses_labels`` and
    :data:`POINT_FIGURES` (Spearman, coverage, its price in width and interval score, and over how
    many candidates)."""
    return pd.DataFrame(
        [{"method": name, "uses_labels": bool(res.uses_labels), **_point_figures(res, truth)}
         for name, res in results.items()],
        columns=["method", "uses_labels", *POINT_FIGURES],
    )


RESAMPLED_FIGURES = ("spearman", "coverage", "width", "interval_score")
"""The figures :func:`evaluate_methods` gives item-resample intervals (``<figure>_lo``, ``_hi``)."""


def evaluate_methods(
    table_or_view: "JudgmentTable | pd.DataFrame",
    methods: Mapping[str, Method],
    ci_resamples: int = 50,
    rng: RngLike | None = None,
    *,
    population_ranks: pd.Series | None = None,
    level: float = 0.95,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Spearman, coverage, interval width and interval score of each method, with intervals from
    resampling items.

    Point figures: every method run once on the full data, compared with :func:`true_ranks` of the
    full data. Intervals: ``ci_resamples`` times, draw the items with replacement
    (``rng.integers(0, n_items, size=n_items)`` per resample, see :func:`resample_items`), rerun
    every method on the resampled view, compare with the true ranks *of that resample*, and take the
    2.5% / 97.5% quantiles (numpy's linear interpolation) of the figures over resamples.
    ``ci_resamples=0`` skips this and leaves the interval columns NaN.

    Each method run gets its own generator from :func:`~simplex_core.methods.baselines.method_generator`
    (base seed from ``rng``, the method name, the resample number), so the result of one method does
    not depend on which other methods are evaluated. A method with an ``rng_stream`` attribute gets
    the generator of that name instead (``bayesian_gold_10`` gets ``ppi_10``'s, so both label the
    same items).

    Parameters
    ----------
    table_or_view
        A ``JudgmentTable`` or its item view.
    methods
        Method name -> ``f(view, rng) -> MethodResult`` (e.g. ``baselines.baseline_methods(...)``).
    ci_resamples
        Number of item resamples for the intervals (0 = none).
    rng
        Generator or seed.
    population_ranks
        Known true ranks (e.g. the simulator's population ranks); used as the truth for the full data
        and every resample instead of the mean ``true_score``.
    level
        Interval level for the figures.
    progress
        Called with a line about every tenth of the resamples (a long evaluation of baselines said
        nothing for 43 s).

    Returns
    -------
    pd.DataFrame
        One row per method, columns :data:`EVALUATION_COLUMNS`.

    Raises
    ------
    NoTruthError
        When the data has no ``true_score`` column and no ``population_ranks`` are given.
    """
    if ci_resamples < 0:
        raise ValueError(f"ci_resamples must be 0 or more; got {ci_resamples}.")
    if not methods:
        raise ValueError("No methods to evaluate: pass at least one name -> method.")
    view = _as_view(table_or_view)
    check_view(view)

    def truth_of(v: pd.DataFrame) -> pd.Series:
        return population_ranks if population_ranks is not None else true_ranks(v)

    truth = truth_of(view)  # raises NoTruthError before any method runs
    n_items = view.index.get_level_values("item").nunique()
    base_seed, plan = _resample_plan(rng, n_items, ci_resamples)

    def run(v: pd.DataFrame, replicate: int) -> dict[str, MethodResult]:
        out = {}
        for name, method in methods.items():
            try:
                out[name] = method(v, method_generator(base_seed, method_stream(name, method), replicate))
            except Exception as err:  # say which method and which resample, keep the error itself
                where = "the full data" if replicate == 0 else f"item resample {replicate}"
                err.add_note(f"(while running method {name!r} on {where})")
                raise
        return out

    table = evaluate_results(run(view, 0), truth)
    resampled_figures = {col: np.full((ci_resamples, len(methods)), np.nan) for col in RESAMPLED_FIGURES}
    for r, positions in enumerate(plan):
        resampled = resample_items(view, positions)
        figures = evaluate_results(run(resampled, r + 1), truth_of(resampled))
        for col, values in resampled_figures.items():
            values[r] = figures[col].to_numpy(dtype=float)
        if progress is not None and ((r + 1) % max(1, ci_resamples // 10) == 0 or r + 1 == ci_resamples):
            progress(f"item resample {r + 1} of {ci_resamples} done "  # about ten lines per evaluation
                     f"({len(methods)} method{'s' if len(methods) != 1 else ''})")
    alpha = (1.0 - level) / 2.0
    for col, values in resampled_figures.items():
        lo = np.full(len(methods), np.nan)
        hi = np.full(len(methods), np.nan)
        for m in range(len(methods)):
            finite = values[:, m][np.isfinite(values[:, m])]
            if len(finite):
                lo[m], hi[m] = np.quantile(finite, [alpha, 1.0 - alpha])
        table[f"{col}_lo"], table[f"{col}_hi"] = lo, hi
    return table[list(EVALUATION_COLUMNS)]


def figure_order(draws: pd.DataFrame, truth: pd.Series | None = None, method: str = "bayesian") -> list[str]:
    """The candidates' order in the rank figures (every front end draws them in this one order): by
    true rank when the data have truth; else by ``method``'s median rank, ties by its mean rank (so
    candidates of one median stand as in the leaderboard, not alphabetically); candidates it does not
    rank (or, without it, every candidate) by the median over all methods, after."""
    if truth is not None:
        return list(truth.sort_values(kind="stable").index)
    mine = draws[draws["method"] == method].groupby("candidate", sort=False)["rank"]
    overall = draws.groupby("candidate", sort=False)["rank"]
    keys = pd.DataFrame({"median": mine.median(), "mean": mine.mean()}).reindex(overall.median().index)
    keys["all_median"], keys["all_mean"] = overall.median(), overall.mean()
    keys["unranked"] = keys["median"].isna()
    keys = keys.sort_values(["unranked", "median", "mean", "all_median", "all_mean"], kind="stable")
    return [str(c) for c in keys.index]


def method_rank_draws(results: Mapping[str, MethodResult] | Iterable[MethodResult]) -> pd.DataFrame:
    """Long table of ranks per method for the rankings figure (box plots).

    Columns ``method, candidate, rank, uses_labels``: one row per replicate and candidate for methods
    with replicate ranks, one row per candidate (the point rank) for the others. With a mapping the
    method names are its keys, otherwise each result's ``method``.
    """
    pairs = results.items() if isinstance(results, Mapping) else ((r.method, r) for r in results)
    frames = []
    for name, res in pairs:
        if res.rank_draws is not None:
            frame = res.rank_draws[["candidate", "rank"]].copy()
        else:
            frame = pd.DataFrame({"candidate": list(res.ranks.index), "rank": res.ranks.to_numpy(dtype=float)})
        frame.insert(0, "method", name)
        frame["uses_labels"] = bool(res.uses_labels)
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=["method", "candidate", "rank", "uses_labels"])
    return pd.concat(frames, ignore_index=True)
