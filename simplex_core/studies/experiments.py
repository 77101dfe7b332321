"""The Bayesian model as an evaluation method, and the paper's two stress experiments.

This module owns:

- :class:`BayesianMethod` and :func:`bayesian_methods`: the Bayesian model as evaluation methods
  ``f(view, rng) -> MethodResult`` (see :mod:`simplex_core.methods.baselines`), so it is compared with the
  baselines by :func:`simplex_core.summaries.evaluation.evaluate_methods` exactly like them. ``bayesian`` is
  the base setting (ω = 0, β_max = 5); ``bayesian_integrated`` puts hyperpriors on ω and β_max
  (the paper's Table 1 method); ``bayesian_gold_<pct>`` is the base setting with the shared-truth
  likelihood and the answers of a ``<pct>``% share of items as gold labels, drawn by
  :func:`simplex_core.data.gold.labelled_items` from the *same* generator as ``ppi_<pct>`` (its
  ``rng_stream``), so both label the same items in every resample (``uses_labels``). A method rebuilds a judgment table from the item view it is given,
  takes its count tensor with the same self-family exclusion option as the baselines, fits, and
  returns :func:`simplex_core.summaries.posterior_views.bayesian_method_result` of the fit (every posterior
  rank draw, rank intervals by :func:`baselines.rank_interval`, the one interval rule of every
  method). Fits are cached by counts hash + settings key (in process,
  and on disk when a :class:`~simplex_core.inference.fit_cache.FitCache` is given), so each item resample is
  fitted once per setting.
- :func:`evaluate_table`: baselines and Bayesian methods on one table, with possibly fewer item
  resamples for the (expensive) Bayesian fits than for the baselines; the Bayesian resamples are
  the first ones of the baselines' (same seed, same item draws).
- :func:`inject_self_preference` and :func:`self_preference_experiment` (paper appendix E,
  "Robustness to Self-Preference Bias"): every self-family judgment below the correct (top true)
  level becomes correct with a given probability, seeded; methods are compared with and without
  self-family exclusion, before and after the injection.
- :func:`label_switched_judges` and :func:`prior_experiment` (appendix E, "Prior Specification
  Comparison"): weight-propagation vs diagonal-heavy vs mixing judge priors, with a label-switching
  detector (a judge whose posterior mean says P(top level | true bottom) > P(top level | true top)).

Randomness only through explicit seeds / generators; the fit seed is fixed by the settings (not
drawn from the evaluation's generator), so the same data and settings always give the same fit and
hit the cache.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from simplex_core.methods.method_base import (
    TRUE_SCORE, FittingMethod, Method, MethodResult, RngLike, as_generator, judge_columns,
)
from simplex_core.methods.baselines import table_baseline_methods
from simplex_core.data.table import JudgmentTable
from simplex_core.data.views import count_tensor
from simplex_core.summaries.evaluation import EVALUATION_COLUMNS, NoTruthError, evaluate_methods, method_generators, method_stream, resampled_views
from simplex_core.inference.fit_identity import fit_key
from simplex_core.model.settings import PRIORS, FitSettings
from simplex_core.data.scale import Scale

__all__ = [
    "BAYESIAN_METHODS",
    "SELF_PREFERENCE_SETTINGS",
    "BayesianMethod",
    "bayesian_settings",
    "bayesian_methods",
    "gold_method_name",
    "gold_method_fraction",
    "table_from_view",
    "STUDY_COLUMNS",
    "evaluate_table",
    "fit_method_result",
    "run_method_task",
    "prefetch_fits",
    "inject_self_preference",
    "self_preference_experiment",
    "label_switched_judges",
    "row_separation",
    "prior_experiment",
]

BAYESIAN_METHODS: tuple[str, ...] = ("bayesian", "bayesian_integrated")
"""Names of the Bayesian evaluation methods: base setting (ω = 0, β_max = 5) and integrated mode."""

SELF_PREFERENCE_SETTINGS: tuple[str, ...] = (
    "before/exclusion",
    "before/no-exclusion",
    "after/exclusion",
    "after/no-exclusion",
)
"""The ``setting`` values of :func:`self_preference_experiment`: injection (before / after) and
self-family exclusion (on / off) for every method."""

STUDY_COLUMNS: tuple[str, ...] = ("resamples", "converged", "resamples_converged")
"""Columns :func:`evaluate_table` adds after :data:`~simplex_core.summaries.evaluation.EVALUATION_COLUMNS`:
item resamples behind the intervals; for Bayesian rows, whether the full-data fit converged and the
share of resample fits that converged."""

Progress = Callable[[str], None]


def _prefixed(progress: Progress | None, prefix: str) -> Progress | None:
    """``progress`` with each message after ``prefix`` (None stays None)."""
    if progress is None:
        return None

    def prefixed(message: str) -> None:
        progress(prefix + message)
    return prefixed


# -- the Bayesian model as an evaluation method ---------------------------------------------------

GOLD_PREFIX = "bayesian_gold_"


def gold_method_name(fraction: float) -> str:
    """``bayesian_gold_<pct>`` for a labelled fraction (0.05 -> ``bayesian_gold_5``), named like PPI's."""
    return f"{GOLD_PREFIX}{int(round(fraction * 100))}"


def gold_method_fraction(name: str) -> float | None:
    """The labelled fraction of a ``bayesian_gold_<pct>`` name; None for other names."""
    if not name.startswith(GOLD_PREFIX):
        return None
    pct = name[len(GOLD_PREFIX):]
    if not pct.isdigit() or not 0 < int(pct) < 100:
        raise ValueError(f"Unknown Bayesian method {name!r}: write bayesian_gold_<percent>, e.g. bayesian_gold_10.")
    return int(pct) / 100.0


def bayesian_settings(name: str, **fit_options) -> FitSettings:
    """The :class:`FitSettings` of a Bayesian method name.

    ``bayesian``: ω = 0, β_max = 5 (the base setting); ``bayesian_integrated``: integrated mode;
    ``bayesian_gold_<pct>``: the base setting with the shared-truth likelihood (the only one that
    uses gold labels). ``fit_options`` (chains, draws, tune, seed, prior, self_exclusion, engine,
    ...) are passed on.
    """
    if gold_method_fraction(name) is not None:
        return FitSettings(omega=0.0, beta_max=5.0, integrated=False, **{**fit_options, "likelihood": "shared-truth"})
    if name == "bayesian":
        return FitSettings(omega=0.0, beta_max=5.0, integrated=False, **fit_options)
    if name == "bayesian_integrated":
        return FitSettings(integrated=True, **fit_options)
    raise ValueError(f"Unknown Bayesian method {name!r}; expected one of {', '.join(BAYESIAN_METHODS)}.")


def table_from_view(
    view: pd.DataFrame,
    scale: Scale,
    families: Mapping[str, str],
    *,
    candidates: Sequence[str] | None = None,
    judges: Sequence[str] | None = None,
    source: str = "item view",
) -> JudgmentTable:
    """The judgment table behind an item view (one row per non-missing judge score).

    Parameters
    ----------
    view
        Item view: index (item, candidate), one column per judge, optional ``true_score``.
    scale, families
        Those of the original table (the view does not carry them).
    candidates, judges
        Preferred orders (e.g. the original table's), so that the count tensor has the same
        structure as the original one and a compiled model is reused; names absent from the view
        are dropped, names of the view missing from them are appended.
    """
    judge_cols = judge_columns(view)
    frame = view[judge_cols].reset_index().melt(
        id_vars=["item", "candidate"], var_name="judge", value_name="score"
    )
    frame = frame[frame["score"].notna()]
    if TRUE_SCORE in view.columns:
        truth = view[TRUE_SCORE].rename(TRUE_SCORE)
        frame = frame.join(truth, on=["item", "candidate"])
    frame = frame.reset_index(drop=True)
    frame["item"] = frame["item"].astype(str)
    frame["candidate"] = frame["candidate"].astype(str)
    frame["judge"] = frame["judge"].astype(str)
    frame["score"] = frame["score"].astype(float)

    def order(preferred: Sequence[str] | None, present: Iterable[str]) -> tuple[str, ...]:
        present = list(dict.fromkeys(present))
        if preferred is None:
            return tuple(present)
        have = set(present)
        first = [x for x in preferred if x in have]
        return tuple(first + [x for x in present if x not in set(first)])

    return JudgmentTable(
        frame=frame,
        scale=scale,
        families=dict(families),
        candidates=order(candidates, frame["candidate"]),
        judges=order(judges, frame["judge"]),
        items=tuple(dict.fromkeys(frame["item"])),
        source=source,
    )


def label_switched_judges(theta_mean: np.ndarray, judges: Sequence[str]) -> tuple[str, ...]:
    """Judges whose (posterior mean) confusion matrix is label-switched.

    A judge is label-switched when ``P(top observed level | true bottom) > P(top observed level |
    true top)``, i.e. ``theta[j, 0, -1] > theta[j, -1, -1]``: it says "best" more often for the worst
    answers than for the best ones.

    Parameters
    ----------
    theta_mean
        ``[J, M_true, M_obs]`` confusion matrices (rows = true levels, columns = observed levels).
    judges
        Judge names, one per first axis entry.
    """
    theta = np.asarray(theta_mean, dtype=float)
    if theta.ndim != 3 or theta.shape[0] != len(judges):
        raise ValueError(
            f"theta_mean must be [judges, true levels, observed levels] with {len(judges)} judges; "
            f"got shape {theta.shape}."
        )
    switched = theta[:, 0, -1] > theta[:, -1, -1]
    return tuple(j for j, s in zip(judges, switched) if s)


def row_separation(theta_mean: np.ndarray) -> np.ndarray:
    """Per judge, the L1 distance between the rows of the true bottom and true top levels (0..2).

    Collapse of a confusion matrix toward the score marginal shows as a small separation (the paper
    reports > 1.3 for the weight-propagation prior against 0.25-0.41 for the failing ones).
    """
    theta = np.asarray(theta_mean, dtype=float)
    return np.abs(theta[:, -1, :] - theta[:, 0, :]).sum(axis=-1)


@dataclass
class BayesianMethod:
    """The Bayesian model as an evaluation method ``f(view, rng) -> MethodResult``.

    Calling it on an item view rebuilds the judgment table (:func:`table_from_view`), takes
    ``count_tensor(table, self_exclusion=settings.self_exclusion)``, fits (or takes the fit from
    the cache), and returns a :class:`MethodResult` whose scores are the posterior means of the
    expected scores E_k, whose point ranks rank those means, whose ``rank_draws`` are the posterior
    rank draws and whose interval is :func:`~simplex_core.methods.baselines.rank_interval` of them.
    ``details`` carries the convergence diagnostics, the fit time and the label-switching check;
    ``notes`` say when the fit did not converge or a judge is label-switched.

    The generator is used only by a gold method, to draw its labelled items; the fit seed is
    ``settings.seed`` so that the same data and settings give the same (cached) fit.

    Attributes
    ----------
    name
        Method name (``bayesian``, ``bayesian_integrated``, or any label).
    settings
        Fit settings (their ``self_exclusion`` decides the count tensor's exclusion).
    scale, families, candidates, judges
        From the original table.
    cache
        Optional on-disk :class:`~simplex_core.inference.fit_cache.FitCache`.
    progress
        Optional ``progress(message)`` called after each fit.
    gold_fraction
        When set, the answers of this share of the view's items are gold labels
        (:func:`simplex_core.data.gold.labelled_items` from the generator the method is given), and the
        result is marked ``uses_labels``.
    rng_stream
        Name of the method whose generator this one gets from
        :func:`~simplex_core.summaries.evaluation.evaluate_methods` (``ppi_<pct>`` for a gold method, so that
        both draw the same labelled items); None = its own name.
    memo
        In-process cache: fit key -> MethodResult.
    history
        Every result returned, in call order (full data first when run by ``evaluate_methods``).
    """

    name: str
    settings: FitSettings
    scale: Scale
    families: Mapping[str, str]
    candidates: tuple[str, ...]
    judges: tuple[str, ...]
    cache: object | None = None
    progress: Progress | None = None
    gold_fraction: float | None = None
    rng_stream: str | None = None
    memo: dict = field(default_factory=dict)
    history: list = field(default_factory=list)

    def counts_of(self, view: pd.DataFrame, rng: np.random.Generator | None = None):
        """The count tensor of an item view, with this method's self-exclusion option (and, for a gold
        method, the labelled items drawn first from ``rng``)."""
        table = table_from_view(view, self.scale, self.families, candidates=self.candidates, judges=self.judges)
        if self.gold_fraction is not None:
            from simplex_core.data.gold import labelled_items, mark_gold

            items = set(labelled_items(view, self.gold_fraction, as_generator(rng)))
            answers = [a for a in view.index if a[0] in items]
            table = mark_gold(table, answers)
        return count_tensor(table, self_exclusion=self.settings.self_exclusion)

    def __call__(self, view: pd.DataFrame, rng: np.random.Generator | None = None) -> MethodResult:
        counts = self.counts_of(view, rng)
        key = fit_key(counts, self.settings)
        if key not in self.memo:
            self._store(key, fit_method_result((self.name, self.settings, counts, self.cache)))
        result = self.memo[key]
        self.history.append(result)
        return result

    def fit_tasks(self, views: Iterable[pd.DataFrame],
                  generators: Iterable[np.random.Generator] | None = None) -> list[tuple[str, tuple]]:
        """The fits that running this method on ``views`` needs and has not done yet: ``(key,
        task)`` pairs, one per distinct fit, where ``task`` is the argument of
        :func:`fit_method_result` (to run anywhere, e.g. on Dask) and ``key`` goes to :meth:`store`.

        A gold method's labelled items are drawn from the generator the evaluation will hand it on
        each view (``generators``, one per view, from
        :func:`~simplex_core.summaries.evaluation.method_generators`); without them it has no task here and
        fits when called."""
        out: dict[str, tuple] = {}
        if self.gold_fraction is not None and generators is None:
            return []
        views = list(views)
        gens = list(generators) if generators is not None else [None] * len(views)
        if len(gens) != len(views):
            raise ValueError(f"{self.name}: {len(gens)} generators for {len(views)} views; give one per view.")
        for view, gen in zip(views, gens):
            counts = self.counts_of(view, gen)
            key = fit_key(counts, self.settings)
            if key not in self.memo and key not in out:
                out[key] = (self.name, self.settings, counts, self.cache)
        return list(out.items())

    def store(self, key: str, result: MethodResult) -> None:
        """Keep a result computed elsewhere (from :meth:`fit_tasks`), so a call on its view reuses it."""
        self._store(key, result)

    def _store(self, key: str, result: MethodResult) -> None:
        self.memo[key] = result
        if self.progress is not None:
            d = result.details
            where = "cache" if d["from_cache"] else f"{d['fit_seconds']:.0f} s"
            from simplex_core.inference.fit_result import format_rhat

            # scripts/make_results.py reads these lines (fit N done (...); converged|NOT converged (R-hat ...))
            self.progress(
                f"{self.name}: fit {len(self.memo)} done ({where}); "
                f"{'converged' if d['converged'] else 'NOT converged'} "
                f"(R-hat {format_rhat(d['max_rhat'])}, ESS {d['min_ess_bulk']:.0f}, {d['divergences']:.0f} divergent)"
            )


def fit_method_result(task: tuple) -> MethodResult:
    """Fit one Bayesian method's counts and reduce the posterior to a :class:`MethodResult`.

    ``task`` is ``(name, settings, counts, cache)`` (see :meth:`BayesianMethod.fit_tasks`); a
    module-level function of picklable arguments, so that a Dask worker can run it. Counts with
    gold answers make a result marked ``uses_labels``.
    """
    name, settings, counts, cache = task
    t0 = time.perf_counter()
    if cache is not None:
        from simplex_core.inference.fit_cache import fit_cached

        fit = fit_cached(counts, settings, cache=cache)
    else:
        from simplex_core.inference.fitting import fit_model

        fit = fit_model(counts, settings)
    patterns = getattr(counts, "patterns", None)
    uses_labels = patterns is not None and patterns.n_gold > 0
    return _method_result(name, fit, time.perf_counter() - t0, uses_labels)


def run_method_task(task: tuple):
    """``task = (runner, runner_task)``: a method's own fit-and-reduce function (its ``task_runner``,
    default :func:`fit_method_result`) on its task; module-level so Dask workers can run it."""
    runner, inner = task
    return runner(inner)


def _method_result(name: str, fit, elapsed: float, uses_labels: bool = False) -> MethodResult:
    """:func:`~simplex_core.summaries.posterior_views.bayesian_method_result` over every draw, with the
    evaluation's details (convergence, fit time, label-switching check) and notes."""
    from simplex_core.summaries.posterior_views import bayesian_method_result

    result = bayesian_method_result(fit, max_draws=None, method=name, uses_labels=uses_labels)
    theta_mean = fit.draws("theta").mean(axis=0)  # [J, M_true, M_obs]
    switched = label_switched_judges(theta_mean, tuple(fit.counts.judges))
    separation = row_separation(theta_mean)
    diag = fit.diagnostics
    notes = []
    if not diag.converged:
        notes.append(f"{name}: {diag.message}")
    if switched:
        notes.append(
            f"{name}: label switching — judge(s) {list(switched)} give the top level more often "
            "to truly bottom answers than to truly top ones (posterior mean)."
        )
    return dataclasses.replace(
        result,
        details={
            "converged": float(diag.converged),
            "max_rhat": float(diag.max_rhat),
            "min_ess_bulk": float(diag.min_ess_bulk),
            "divergences": float(diag.divergences),
            "fit_seconds": float(elapsed),
            "from_cache": float(bool(fit.timing.get("from_cache", False))),
            "n_label_switched": float(len(switched)),
            "label_switched": ";".join(switched),  # type: ignore[dict-item]
            "mean_row_separation": float(separation.mean()),
        },
        notes=tuple(notes),
    )


def bayesian_methods(
    table: JudgmentTable,
    names: Iterable[str] = BAYESIAN_METHODS,
    *,
    self_exclusion: bool = True,
    cache: object | None = None,
    progress: Progress | None = None,
    suffix: str = "",
    **fit_options,
) -> dict[str, BayesianMethod]:
    """The Bayesian evaluation methods for a table: name -> :class:`BayesianMethod`.

    Parameters
    ----------
    table
        The judgment table (gives the scale, families and name orders).
    names
        Which of :data:`BAYESIAN_METHODS`, or ``bayesian_gold_<pct>`` (see :func:`gold_method_name`).
    self_exclusion
        Exclude self-family pairs from the likelihood (as the baselines exclude them).
    cache
        Optional :class:`~simplex_core.inference.fit_cache.FitCache` (fits on disk, reused across runs).
    progress
        Optional ``progress(message)`` after each fit.
    suffix
        Appended to each method name (e.g. ``":no-exclusion"``).
    fit_options
        Passed to :class:`FitSettings` (chains, draws, tune, seed, prior, engine, target_accept).
    """
    out: dict[str, BayesianMethod] = {}
    for name in names:
        settings = bayesian_settings(name, self_exclusion=self_exclusion, **fit_options)
        fraction = gold_method_fraction(name)
        out[name + suffix] = BayesianMethod(
            name=name + suffix,
            settings=settings,
            scale=table.scale,
            families=dict(table.families),
            candidates=tuple(table.candidates),
            judges=tuple(table.judges),
            cache=cache,
            progress=progress,
            gold_fraction=fraction,
            rng_stream=None if fraction is None else f"ppi_{int(round(fraction * 100))}",
        )
    return out


# -- evaluation of a table with cheap and expensive methods ----------------------------------------

def _require_truth(table: JudgmentTable) -> None:
    if not table.has_truth:
        raise NoTruthError(
            f"{table.source}{' / ' + table.criterion if table.criterion else ''} has no ground truth "
            "(no true_score), so there is no true ranking to evaluate the methods against. "
            "Use data with a true_score column."
        )


def prefetch_fits(batch: Iterable[tuple[Iterable[FittingMethod], Sequence[pd.DataFrame], RngLike]], *,
                  client=None, progress: Progress | None = None) -> int:
    """Run every fit that the Bayesian methods will need on their views, in one batch (on Dask when
    ``client`` is given, see :mod:`simplex_core.inference.distributed`), and keep the results in the methods'
    memos, so that the evaluation that follows runs no fit itself. ``batch`` holds (methods, views,
    seed) triples: the views of :func:`~simplex_core.summaries.evaluation.resampled_views` with that seed, the
    seed the evaluation will run with (a gold method's labelled items come from it, through
    :func:`~simplex_core.summaries.evaluation.method_generators`). Returns the number of fits run."""
    from simplex_core.inference.distributed import describe, map_tasks

    def tasks_of(m: FittingMethod, views: Sequence[pd.DataFrame], seed: RngLike) -> list[tuple[str, tuple]]:
        gold = getattr(m, "gold_fraction", None) is not None  # only a gold method's data depend on its generator
        return m.fit_tasks(views, method_generators(seed, len(views) - 1, method_stream(m.name, m)) if gold else None)

    batch = [(list(methods), list(views), seed) for methods, views, seed in batch]
    keyed, seen = [], set()
    for methods, views, seed in batch:
        for m in methods:
            for key, task in tasks_of(m, views, seed):
                if (id(m.memo), key) not in seen:  # methods sharing a memo (bayesian_ppi_<pct>) fit once
                    seen.add((id(m.memo), key))
                    keyed.append((m, key, task))
    if not keyed:
        return 0
    if progress is not None:
        progress(f"{len(keyed)} Bayesian fit(s) to run {describe(client)}")
    # keep each result as it arrives, so the method's progress line comes when its fit finishes
    map_tasks(run_method_task, [(getattr(m, "task_runner", fit_method_result), task) for m, _, task in keyed], client=client,
              labels=[f"{m.name} fit {n + 1}" for n, (m, _, _) in enumerate(keyed)],
              on_result=lambda i, result: keyed[i][0].store(keyed[i][1], result))
    return len(keyed)


def evaluate_table(
    table: JudgmentTable,
    methods: Mapping[str, Method],
    *,
    ci_resamples: int = 50,
    expensive: Iterable[str] = (),
    expensive_ci_resamples: int | None = None,
    seed: RngLike = 0,
    client=None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """:func:`~simplex_core.summaries.evaluation.evaluate_methods` with fewer resamples for expensive methods.

    Methods named in ``expensive`` (the Bayesian fits) get ``expensive_ci_resamples`` item
    resamples (default: ``ci_resamples``); the others ``ci_resamples``. Both runs use the same seed,
    so the expensive methods' resamples are the first ones of the cheap methods'. The Bayesian
    methods' fits (full data and every resample) are run first, together, by :func:`prefetch_fits`:
    on Dask when ``client`` is given, else here; the table is the same either way.

    Returns the evaluation table (columns :data:`~simplex_core.summaries.evaluation.EVALUATION_COLUMNS`) in
    the order of ``methods``, plus ``resamples`` (item resamples behind each row's interval),
    ``converged`` (Bayesian rows: whether the full-data fit met the convergence thresholds; None
    for the others) and ``resamples_converged`` (Bayesian rows with resamples: the share of
    resample fits that did; None otherwise).
    """
    _require_truth(table)
    from simplex_core.data.views import item_view

    view = item_view(table)
    seed_int = int(as_generator(seed).integers(2**63)) if isinstance(seed, np.random.Generator) else int(seed)
    expensive = set(expensive) & set(methods)
    n_exp = ci_resamples if expensive_ci_resamples is None else expensive_ci_resamples
    # methods that fit (the Bayesian ones, the ordinal model): fits prefetched, convergence reported
    bayes = {n: m for n, m in methods.items() if n in expensive and isinstance(m, FittingMethod)}
    if bayes:
        prefetch_fits([(bayes.values(), resampled_views(view, n_exp, seed_int), seed_int)], client=client,
                      progress=progress)
    seen = {n: len(m.history) for n, m in bayes.items()}
    parts = []
    groups = [({n: m for n, m in methods.items() if n not in expensive}, ci_resamples),
              ({n: m for n, m in methods.items() if n in expensive}, n_exp)]
    for group, n in groups:
        if group:
            part = evaluate_methods(view, group, ci_resamples=n, rng=seed_int, progress=progress)
            part["resamples"] = n
            parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    converged: dict[str, object] = {}
    share: dict[str, object] = {}
    for name, method in bayes.items():
        runs = method.history[seen[name]:]  # evaluate_methods runs the full data first, then each resample
        converged[name] = bool(runs[0].details["converged"])
        share[name] = float(np.mean([r.details["converged"] for r in runs[1:]])) if len(runs) > 1 else None
    out["converged"] = pd.Series([converged.get(m) for m in out["method"]], dtype=object)
    out["resamples_converged"] = pd.Series([share.get(m) for m in out["method"]], dtype=object)
    order = {n: i for i, n in enumerate(methods)}
    out = out.sort_values("method", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
    return out[list(EVALUATION_COLUMNS) + list(STUDY_COLUMNS)]


# -- self-preference ----------------------------------------------------------------------------

def inject_self_preference(
    table: JudgmentTable, probability: float = 0.8, rng: RngLike | None = 0
) -> JudgmentTable:
    """Inject self-preference: self-family judgments below "correct" become correct at random.

    Every row whose judge and candidate share a family and whose score is below the highest true
    level (the "correct" level: for binary scores, incorrect; with an abstain level below it, the
    abstentions too) gets that highest true level when its uniform draw is below ``probability``.
    The draws are ``rng.random(n_rows)``, one per row of ``table.frame`` in order (drawn for every
    row, so the outcome of a row does not depend on the others). Truth is untouched.

    Returns
    -------
    JudgmentTable
        A new table with the changed scores and a note saying how many judgments were changed.
    """
    if not 0.0 <= float(probability) <= 1.0:
        raise ValueError(f"probability must be between 0 and 1; got {probability!r}.")
    gen = as_generator(rng)
    frame = table.frame
    top = float(max(table.scale.true_values))
    self_row = np.fromiter(
        (table.is_self_family(j, k) for j, k in zip(frame["judge"], frame["candidate"])),
        dtype=bool, count=len(frame),
    )
    u = gen.random(len(frame))
    change = self_row & (frame["score"].to_numpy(dtype=float) < top) & (u < probability)
    new = frame.copy()
    new.loc[change, "score"] = top
    note = (
        f"self-preference injected: {int(change.sum())} of {int(self_row.sum())} self-family judgments "
        f"changed to {top:g} (each below it with probability {probability:g})."
    )
    return dataclasses.replace(table, frame=new, notes=tuple(table.notes) + (note,))


def self_preference_experiment(
    table: JudgmentTable,
    *,
    probability: float = 0.8,
    injection_seed: int = 0,
    bayesian: Iterable[str] = ("bayesian_integrated",),
    baselines: bool = True,
    baseline_options: Mapping | None = None,
    ci_resamples: int = 50,
    bayes_ci_resamples: int | None = None,
    resample_seed: int = 0,
    settings: Iterable[str] = SELF_PREFERENCE_SETTINGS,
    cache: object | None = None,
    progress: Progress | None = None,
    on_setting: Callable[[pd.DataFrame], None] | None = None,
    client=None,
    **fit_options,
) -> pd.DataFrame:
    """The self-preference stress experiment (paper appendix E).

    For each setting ``"<before|after>/<exclusion|no-exclusion>"``: the table as is (before) or after
    :func:`inject_self_preference` (after), and every method -- the baselines and the Bayesian
    ``bayesian`` names -- with self-family exclusion on or off; evaluated by :func:`evaluate_table`.

    Returns
    -------
    pd.DataFrame
        Columns ``setting`` + :data:`~simplex_core.summaries.evaluation.EVALUATION_COLUMNS` + ``resamples``.
        ``on_setting`` (if given) is called with the cumulative table after each setting (for
        partial results). ``resample_seed`` seeds the item resamples and the baselines;
        ``fit_options`` (chains, draws, tune, seed, ...) go to every fit. Every setting's Bayesian
        fits run first, in one batch: on Dask when ``client`` is given.
    """
    _require_truth(table)
    bayesian = tuple(bayesian)
    injected = None
    plans = []  # (setting, data, methods, Bayesian methods): every fit is known before any runs
    for setting in settings:
        when, _, excl = setting.partition("/")
        if when not in ("before", "after") or excl not in ("exclusion", "no-exclusion"):
            raise ValueError(
                f"Unknown setting {setting!r}; expected one of {', '.join(SELF_PREFERENCE_SETTINGS)}."
            )
        if when == "before":
            data = table
        else:
            if injected is None:  # one injection shared by both "after" settings
                injected = inject_self_preference(table, probability, injection_seed)
            data = injected
        exclusion = excl == "exclusion"
        methods: dict[str, Method] = {}
        if baselines:
            methods.update(table_baseline_methods(data, self_exclusion=exclusion, **dict(baseline_options or {})))
        bayes = bayesian_methods(
            data, bayesian, self_exclusion=exclusion, cache=cache,
            progress=_prefixed(progress, f"[{setting}] "), **fit_options,
        )
        methods.update(bayes)
        plans.append((setting, data, methods, bayes))
    _prefetch_plans(plans, bayes_ci_resamples if bayes_ci_resamples is not None else ci_resamples,
                    resample_seed, client, progress)
    rows = []
    for setting, data, methods, bayes in plans:
        if progress:
            progress(f"self-preference: setting {setting} ({len(methods)} methods)")
        part = evaluate_table(
            data, methods, ci_resamples=ci_resamples, expensive=bayes,
            expensive_ci_resamples=bayes_ci_resamples, seed=resample_seed,
        )
        part.insert(0, "setting", setting)
        rows.append(part)
        if on_setting is not None:
            on_setting(pd.concat(rows, ignore_index=True))
    return pd.concat(rows, ignore_index=True)


def _prefetch_plans(plans, n_resamples: int, seed: int, client, progress: Progress | None) -> None:
    """Run the Bayesian fits of every setting of an experiment in one batch (on Dask with a client),
    so that the settings' fits run side by side rather than one setting after another."""
    from simplex_core.data.views import item_view

    views: dict[int, list] = {}  # one set of resampled views per distinct table
    batch = []
    for _, data, _, bayes in plans:
        if bayes:
            if id(data) not in views:
                views[id(data)] = resampled_views(item_view(data), n_resamples, seed)
            batch.append((bayes.values(), views[id(data)], seed))
    prefetch_fits(batch, client=client, progress=progress)


# -- prior comparison ---------------------------------------------------------------------------

def prior_experiment(
    table: JudgmentTable,
    *,
    priors: Iterable[str] = PRIORS,
    method: str = "bayesian",
    self_exclusion: bool = True,
    ci_resamples: int = 5,
    resample_seed: int = 0,
    cache: object | None = None,
    progress: Progress | None = None,
    on_setting: Callable[[pd.DataFrame], None] | None = None,
    client=None,
    **fit_options,
) -> pd.DataFrame:
    """The prior comparison (paper appendix E): one Bayesian method under each judge prior.

    Returns
    -------
    pd.DataFrame
        One row per prior: ``setting`` (the prior) + :data:`~simplex_core.summaries.evaluation.EVALUATION_COLUMNS`
        + ``resamples`` + label-switching columns: ``label_switched`` (judges label-switched in the
        full-data fit, ``;``-separated), ``label_switch_share`` (share of all fits -- full data and
        every resample -- with at least one label-switched judge), ``row_separation`` (mean over
        judges of the L1 distance between the true-bottom and true-top rows of Θ in the full-data
        fit), ``converged_share`` (share of fits that met the convergence thresholds). Every prior's
        fits run first, in one batch: on Dask when ``client`` is given.
    """
    _require_truth(table)
    plans = []
    for prior in priors:
        if prior not in PRIORS:
            raise ValueError(f"Unknown prior {prior!r}; expected one of {', '.join(PRIORS)}.")
        bayes = bayesian_methods(
            table, (method,), self_exclusion=self_exclusion, cache=cache,
            progress=_prefixed(progress, f"[{prior}] "),
            prior=prior, **fit_options,
        )
        plans.append((prior, table, bayes, bayes))
    _prefetch_plans(plans, ci_resamples, resample_seed, client, progress)
    rows = []
    for prior, _, _, bayes in plans:
        m = bayes[method]
        part = evaluate_table(table, bayes, ci_resamples=ci_resamples, expensive=bayes, seed=resample_seed)
        hist = m.history
        full = hist[0]
        part.insert(0, "setting", prior)
        part["label_switched"] = full.details["label_switched"]
        part["label_switch_share"] = float(np.mean([r.details["n_label_switched"] > 0 for r in hist]))
        part["row_separation"] = full.details["mean_row_separation"]
        part["converged_share"] = float(np.mean([r.details["converged"] for r in hist]))
        rows.append(part)
        if on_setting is not None:
            on_setting(pd.concat(rows, ignore_index=True))
    return pd.concat(rows, ignore_index=True)
