"""The comparison methods of the paper (appendix D, "Comparison Methods"; appendix E, PPI) as one
standard set (:func:`baseline_methods`, :func:`run_methods`). One file per method family:

- ``single_judge:<judge>`` -- one judge's mean score per candidate (:mod:`~simplex_core.methods.simple_average`);
- ``simple_average`` -- per-judge mean score per candidate, averaged over judges with equal weight;
- ``bootstrap`` -- percentile bootstrap (over items) of the simple average's ranks;
- ``bradley_terry`` (:mod:`~simplex_core.methods.bradley_terry`) -- Bradley-Terry with ties (Rao & Kupper 1967) on pairwise outcomes, fitted by
  maximum likelihood, with bootstrap (over items) rank intervals;
- ``ppi_5`` / ``ppi_10`` (:mod:`~simplex_core.methods.ppi`) -- prediction-powered inference of each candidate's mean true score from a
  seeded 5% / 10% labelled subset of items, with bootstrap rank intervals at a fixed partition.
  These use gold labels (``uses_labels=True``): never a label-free competitor.

Every method works on the *item view* of a judgment table (``data.item_view``): a DataFrame indexed
by (item, candidate) with one column of scores per judge (NaN where missing) and a ``true_score``
column when ground truth exists. Every method takes the same ``excluded`` set of (judge, candidate)
pairs whose judgments are dropped (self-family exclusion), so comparisons are fair. Every method
returns a :class:`~simplex_core.methods.method_base.MethodResult`; a *method* in the evaluation sense is any callable
``f(view, rng) -> MethodResult`` (see :func:`baseline_methods`), so the Bayesian model can be plugged
in the same way.

Conventions shared by all methods:

- rank 1 = best (largest score); tied scores get the average of the ranks they span
  (:func:`simplex_core.model.ranks.rank_scores`), so ranks can be half-integers;
- 95% rank intervals are :func:`simplex_core.model.ranks.rank_interval` of the replicate ranks: the order statistics at the
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
from typing import TYPE_CHECKING, Collection, Iterable, Mapping

import numpy as np
import pandas as pd

from simplex_core.data.scale import Scale
from simplex_core.methods.method_base import TRUE_SCORE, Method, MethodResult, RngLike, as_generator, judge_columns
from simplex_core.methods.simple_average import bootstrap_ranks, simple_average, single_judge
from simplex_core.methods.bradley_terry import bradley_terry
from simplex_core.methods.ppi import ppi_mean_ranks

if TYPE_CHECKING:  # pragma: no cover - typing only
    from simplex_core.data.table import JudgmentTable


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

    # each method binds its own judge or fraction (a lambda in the loop would see the last one)
    def one_judge(judge: str) -> Method:
        return lambda v, rng: single_judge(v, judge, excluded=excluded)

    def ppi_at(frac: float) -> Method:
        return lambda v, rng: ppi_mean_ranks(v, scale, frac, ppi_resamples, rng, excluded=excluded, power_tuning=power_tuning)

    methods: dict[str, Method] = {}
    if single_judges:
        for judge in judge_columns(view):
            methods[f"single_judge:{judge}"] = one_judge(judge)
    methods["simple_average"] = lambda v, rng: simple_average(v, excluded=excluded)
    methods["bootstrap"] = lambda v, rng: bootstrap_ranks(v, bootstrap_resamples, rng, excluded=excluded)
    methods["bradley_terry"] = lambda v, rng: bradley_terry(v, bt_resamples, rng, excluded=excluded)
    if TRUE_SCORE in view.columns:
        for frac in ppi_fractions:
            methods[f"ppi_{int(round(frac * 100))}"] = ppi_at(frac)
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
    base = int(as_generator(rng).integers(2**63))
    return {name: f(view, method_generator(base, name, 0)) for name, f in methods.items()}
