"""Prediction-powered ranking with the model as predictor: methods ``bayesian_ppi_<pct>`` (uses labels).

The PPI baselines (``ppi_<pct>``, :func:`simplex_core.methods.baselines.ppi_mean_ranks`) predict an answer's
true score by the judges' mean score. Here the predictor is the **label-free** shared-truth model's
posterior mean of the answer's true score,

    ŷ_a = mean over draws s of Σ_t q_s(t) v_t,

with q_s(t) the probability of true level t for the answer's score pattern under draw s
(:func:`simplex_core.methods.labelling.label_probabilities`) and v_t the true level values. The fit never sees
a label, so the predictor is independent of the labels and PPI's rectifier, the mean of
(label − λ ŷ) over the labelled items, keeps the estimate of each candidate's mean true score
unbiased whatever the model gets wrong (judges whose errors depend on the candidate, a wrong
prior). A better predictor than the judges' mean only narrows the intervals.

By default the candidates' rectifiers are **pooled** (``pooled``, :func:`simplex_core.methods.ppi.pooled_rectifier_draws`):
a normal hierarchical model of the predictor's bias per candidate, a common offset plus a deviation
whose prior spread is the fit's own sd of E_k + δ_k (:func:`truth_mean_sd`) plus a τ learnt from the
labels, λ = 1. With 5% of the items labelled a candidate has a handful of labels, and its own rectifier
is mostly noise: on the 15 built-in sets unpooled PPI++ (below) ranked worse than the label-free fit on
most (SummHay 0.37 vs 0.90). Unpooled (``pooled=False``): PPI++'s power-tuned λ (Angelopoulos et al.
2023b, as ``ppi_py`` computes it), with the intervals below.

Labelled items: the same as ``ppi_<pct>`` and ``bayesian_gold_<pct>`` (the method reads the
generator of stream ``ppi_<pct>``, see :func:`simplex_core.summaries.evaluation.method_stream`). Rank
intervals: PPI's bootstrap over labelled and unlabelled items at a fixed partition, with the
predictor held fixed, each candidate's deviations widened by Hesterberg's expanded-percentile
factor for its number of labelled answers (``expanded``; a handful of labelled items makes the plain
percentile bootstrap too narrow), after each candidate's bootstrap variance is lifted to the moderated
variance of its rectifiers, pooled over candidates (``moderated``,
:func:`simplex_core.methods.ppi.moderated_rectifier_noise`: with about 4 labels per candidate, often all
alike, PPI++ puts λ = 0 and the bootstrap alone gives a point; FaithBench at 5% had coverage 0.84). One label-free fit serves every labelled share and every label draw of a view.

- :func:`model_ppi_name` / :func:`model_ppi_fraction`: ``bayesian_ppi_<pct>`` names.
- :func:`answer_predictions`: ŷ per (item, candidate) from a fit's draws.
- :func:`predictor_task`: fit (or take from the cache) and reduce to a :class:`ModelPredictor`; a
  module-level function of picklable arguments, so a Dask worker runs it
  (:func:`simplex_core.studies.experiments.prefetch_fits`).
- :class:`BayesianPPIMethod`: the evaluation method; :func:`model_ppi_methods` builds them for a table.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from simplex_core.methods.method_base import MethodResult, as_generator, nanmean_last, score_array
from simplex_core.methods.ppi import ppi_mean_ranks
from simplex_core.data.table import JudgmentTable
from simplex_core.data.views import count_tensor
from simplex_core.studies.experiments import BayesianMethod, bayesian_settings, table_from_view
from simplex_core.inference.fit_identity import fit_key

__all__ = ["MODEL_PPI_PREFIX", "model_ppi_name", "model_ppi_fraction", "answer_predictions", "truth_mean_sd",
           "ModelPredictor",
           "predictor_task", "BayesianPPIMethod", "model_ppi_methods"]

MODEL_PPI_PREFIX = "bayesian_ppi_"

_PATTERN_CHUNK = 256  # patterns per call of label_probabilities: bounds the [P, S, T] array


def model_ppi_name(fraction: float) -> str:
    """``bayesian_ppi_<pct>`` for a labelled share (0.10 -> ``bayesian_ppi_10``), named like PPI's."""
    return f"{MODEL_PPI_PREFIX}{int(round(fraction * 100))}"


def model_ppi_fraction(name: str) -> float | None:
    """The labelled share of a ``bayesian_ppi_<pct>`` name; None for other names."""
    if not name.startswith(MODEL_PPI_PREFIX):
        return None
    pct = name[len(MODEL_PPI_PREFIX):]
    if not pct.isdigit() or not 0 < int(pct) < 100:
        raise ValueError(f"Unknown method {name!r}: write bayesian_ppi_<percent>, e.g. bayesian_ppi_10.")
    return int(pct) / 100.0


def answer_predictions(draws, table: JudgmentTable, counts) -> pd.Series:
    """Posterior mean true score of every non-gold answer with a usable score, from the
    :class:`~simplex_core.methods.labelling.LabelDraws` of a shared-truth fit of ``table`` (``counts`` its
    count tensor: which judge-candidate pairs count).

    Index (item, candidate); values on the scale of the true levels. Answers without any usable
    judge score (all missing or excluded as self-family) are absent: PPI leaves them out.
    """
    from simplex_core.methods.labelling import answers_of, label_probabilities

    answers = answers_of(table, counts.included, counts.judges)
    levels = np.asarray(table.scale.true_values, dtype=float)
    mean = np.empty(len(answers.candidate_index))
    for start in range(0, len(mean), _PATTERN_CHUNK):
        sl = slice(start, start + _PATTERN_CHUNK)
        q = label_probabilities(draws, answers.candidate_index[sl], answers.scores[sl])  # [P, S, T]
        mean[sl] = q.mean(axis=1) @ levels
    frame = answers.frame
    index = pd.MultiIndex.from_arrays([frame["item"].astype(str), frame["candidate"].astype(str)],
                                      names=["item", "candidate"])
    return pd.Series(mean[frame["pattern"].to_numpy()], index=index, name="prediction")


def truth_mean_sd(fit) -> pd.Series:
    """Per candidate, the label-free posterior sd of E_k + δ_k (δ_k the truth's deviation as one more
    rater, when the fit has it): how far the fit says the truth's mean may lie from its own view. The
    pooled rectifiers' prior spread (:func:`simplex_core.methods.ppi.pooled_rectifier_draws`)."""
    post = fit.idata.posterior
    draws = np.asarray(post["expected_score"].values, dtype=float)
    if "rater_deviation" in post:
        draws = draws + np.asarray(post["rater_deviation"].values, dtype=float)
    flat = draws.reshape(-1, draws.shape[-1])
    return pd.Series(flat.std(axis=0), index=[str(c) for c in post["candidate"].values], name="truth_mean_sd")


@dataclass(frozen=True)
class ModelPredictor:
    """The label-free fit of one view reduced to what PPI needs: ŷ per answer, how far the fit says each
    candidate's true mean may lie from it (``sd``), and the fit's checks."""

    predictions: pd.Series
    details: Mapping[str, float]
    notes: tuple[str, ...] = ()
    sd: pd.Series | None = None


def predictor_task(task: tuple) -> ModelPredictor:
    """``task = (name, settings, counts, cache, table)``: fit the label-free counts (or take the fit
    from the on-disk cache) and reduce it to a :class:`ModelPredictor`."""
    name, settings, counts, cache, table = task
    t0 = time.perf_counter()
    if cache is not None:
        from simplex_core.inference.fit_cache import fit_cached

        fit = fit_cached(counts, settings, cache=cache)
    else:
        from simplex_core.inference.fitting import fit_model

        fit = fit_model(counts, settings)
    from simplex_core.methods.labelling import LabelDraws

    predictions = answer_predictions(LabelDraws.from_fit(fit, max_draws=None), table, counts)
    diag = fit.diagnostics
    details = {
        "converged": float(diag.converged),
        "max_rhat": float(diag.max_rhat),
        "min_ess_bulk": float(diag.min_ess_bulk),
        "divergences": float(diag.divergences),
        "fit_seconds": float(time.perf_counter() - t0),
        "from_cache": float(bool(fit.timing.get("from_cache", False))),
    }
    notes = () if diag.converged else (f"{name}: the label-free fit behind the predictor: {diag.message}",)
    return ModelPredictor(predictions, details, notes, sd=truth_mean_sd(fit))


@dataclass
class BayesianPPIMethod(BayesianMethod):
    """``bayesian_ppi_<pct>`` as an evaluation method ``f(view, rng) -> MethodResult``.

    The fit is the label-free shared-truth fit of the view (``gold_fraction`` stays None, so
    :meth:`counts_of` marks no gold and the fit is the same for every label draw); its
    :class:`ModelPredictor` is kept in ``memo`` by fit key (a memo may be shared by the methods of
    several shares). The generator (stream ``ppi_<pct>``) draws the labelled items, then PPI's
    bootstrap. ``details`` carry the fit's convergence checks next to PPI's. ``power_tuning`` (PPI++ λ),
    ``expanded`` (expanded-percentile intervals), ``moderated`` (moderated rectifier variance), ``pooled`` (rectifiers pooled over candidates) and ``blend`` (predictor = half the model's, half
    the judges' mean; off by default: it did not help consistently in ``bench/labels_vs_ppi.py``)
    go to :func:`~simplex_core.methods.baselines.ppi_mean_ranks`.
    """

    labelled_fraction: float = 0.10
    power_tuning: bool = True
    expanded: bool = True
    moderated: bool = True
    blend: bool = False
    pooled: bool = True
    n_resamples: int = 300
    excluded: frozenset = field(default_factory=frozenset)

    task_runner = staticmethod(predictor_task)

    def _table(self, view: pd.DataFrame) -> JudgmentTable:
        return table_from_view(view, self.scale, self.families, candidates=self.candidates, judges=self.judges)

    def fit_tasks(self, views: Iterable[pd.DataFrame], generators=None) -> list[tuple[str, tuple]]:
        out: dict[str, tuple] = {}
        for view in views:
            table = self._table(view)
            counts = count_tensor(table, self_exclusion=self.settings.self_exclusion)
            key = fit_key(counts, self.settings)
            if key not in self.memo and key not in out:
                out[key] = (self.name, self.settings, counts, self.cache, table)
        return list(out.items())

    def predictor(self, view: pd.DataFrame) -> ModelPredictor:
        """The label-free predictor of ``view`` (fitted here unless prefetched)."""
        tasks = self.fit_tasks([view])
        if tasks:
            ((key, task),) = tasks
            self._store(key, predictor_task(task))
            return self.memo[key]
        table = self._table(view)
        return self.memo[fit_key(count_tensor(table, self_exclusion=self.settings.self_exclusion), self.settings)]

    def __call__(self, view: pd.DataFrame, rng: np.random.Generator | None = None) -> MethodResult:
        pred = self.predictor(view)
        predictions = pred.predictions
        if self.blend:  # half the model's prediction, half the judges' mean: neither sees a label
            arr = score_array(view, self.excluded)
            full = pd.MultiIndex.from_product([arr.items, arr.candidates], names=["item", "candidate"])
            judges_mean = pd.Series(nanmean_last(arr.scores).ravel(), index=full)
            predictions = 0.5 * (predictions.reindex(full) + judges_mean)
        result = ppi_mean_ranks(view, self.scale, self.labelled_fraction, self.n_resamples, as_generator(rng),
                                excluded=self.excluded, power_tuning=self.power_tuning,
                                predictions=predictions, name=self.name, expanded=self.expanded,
                                moderated=self.moderated, pooled=self.pooled,
                                prediction_sd=pred.sd if self.pooled else None)
        result = dataclasses.replace(result, details={**result.details, **pred.details},
                                     notes=tuple(result.notes) + tuple(pred.notes))
        self.history.append(result)
        return result

    def _store(self, key: str, result) -> None:
        self.memo[key] = result
        if self.progress is not None:
            d = result.details
            where = "cache" if d["from_cache"] else f"{d['fit_seconds']:.0f} s"
            from simplex_core.inference.fit_result import format_rhat

            self.progress(
                f"{self.name}: label-free fit done ({where}); "
                f"{'converged' if d['converged'] else 'NOT converged'} "
                f"(R-hat {format_rhat(d['max_rhat'])}, ESS {d['min_ess_bulk']:.0f}, {d['divergences']:.0f} divergent)"
            )


def model_ppi_methods(table: JudgmentTable, names: Iterable[str], *, self_exclusion: bool = True,
                      cache: object | None = None, progress=None, power_tuning: bool = True,
                      expanded: bool = True, moderated: bool = True, blend: bool = False, pooled: bool = True,
                      n_resamples: int = 300,
                      **fit_options) -> dict[str, BayesianPPIMethod]:
    """``bayesian_ppi_<pct>`` methods for a table (name -> method). They share one memo, so one
    label-free fit per view serves every share. ``fit_options`` go to :class:`FitSettings` (chains,
    draws, tune, seed, prior, engine, ...); the setting is ``bayesian_gold_<pct>``'s without labels."""
    memo: dict = {}
    excluded = frozenset(table.self_family_pairs) if self_exclusion else frozenset()
    out: dict[str, BayesianPPIMethod] = {}
    for name in names:
        fraction = model_ppi_fraction(name)
        if fraction is None:
            raise ValueError(f"{name!r} is not a bayesian_ppi_<percent> method name.")
        out[name] = BayesianPPIMethod(
            name=name,
            settings=bayesian_settings("bayesian_gold_10", self_exclusion=self_exclusion, **fit_options),
            scale=table.scale, families=dict(table.families), candidates=tuple(table.candidates),
            judges=tuple(table.judges), cache=cache, progress=progress, memo=memo,
            rng_stream=f"ppi_{int(round(fraction * 100))}", labelled_fraction=fraction,
            power_tuning=power_tuning, expanded=expanded, moderated=moderated, blend=blend, pooled=pooled,
            n_resamples=n_resamples, excluded=excluded,
        )
    return out
