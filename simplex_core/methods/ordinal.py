"""The ordinal many-facet model: a cumulative-logit regression with rater effects, as a ranking method.

This is the competitor a psychometrician would fit to judges' rubric scores first: the many-facet
Rasch model of rater-mediated assessment (Linacre), written as a Bayesian cumulative-logit mixed
model (``score ~ candidate + (1|item) + (1|item:candidate)`` with per-judge thresholds, as ``brms``
or ``ordinal::clmm`` users would write it). It uses no gold labels.

Model, for the score ``y`` (observed level index 0..M-1) judge ``j`` gave the answer of candidate
``k`` to item ``i``::

    eta_ikj = q_k + u_i + e_ik
    y ~ OrderedLogistic(eta_ikj, c_j)                          (PyMC's ordinal likelihood)

- ``q_k``: the candidate's latent quality, sum to zero over candidates (identifies the location),
  ``ZeroSumNormal(2.5)`` (the law of iid Normal(0, 2.5) minus their mean: a weakly informative
  fixed effect on the logit scale);
- ``u_i``: item effect (items differ in difficulty), ``ZeroSumNormal(sigma_item)``; sampled centred
  when items have many judgments (``CENTRED_MIN_PER_ITEM``), non-centred otherwise (the same model);
- ``e_ik``: optional answer effect (``answer_effects=True``; off by default, as in the issue's
  and ``brms``' formula ``score ~ candidate + (1|judge) + (1|item)``), non-centred, sum to zero
  over the items of each candidate, scale ``sigma_answer``. It makes judgments of the same answer
  dependent (wider intervals) at the cost of one parameter per answer: measured on TriviaQA V1
  (3,600 answers), before the faster kernel, it made the fit 46 times as long as the simplex model's, with
  Spearman 0.850 and coverage 0.44 there (``bench/results/ordinal-compare-answer-effects-20261207.log``);
- ``c_j``: judge ``j``'s ordered cutpoints (its severity and its use of the scale).
  ``cutpoints="judge"`` (default; Linacre's partial-credit form): ``c_j0 ~ Normal(0, 2.5)`` (the
  judge's severity) and ``c_jm - c_j(m-1) = exp(g_jm)``, ``g_jm ~ Normal(0, 1)``, per judge;
  ``cutpoints="shared"`` (the rating-scale form): the gaps ``g_m`` are shared, so one ordered set is
  shifted by each judge's severity. Judges are few and each has many judgments, so their
  parameters are not pooled. Binary scales are the same model with one cutpoint per judge: a
  Rasch-like model ``P(y = 1) = logistic(q_k + u_i + e_ik - c_j)``.
- Scale priors: HalfStudentT(3, 2.5) (``brms``' default for standard deviations).

Self-family judgments are dropped (the same ``excluded`` (judge, candidate) pairs the baselines
drop). Ranks come from the posterior draws of ``q``: 95% rank intervals by
:func:`~simplex_core.methods.baselines.rank_interval` (the one rule of every method), P(best), box-plot
draws. A candidate left with no judgment has no score and no rank (a note says so) and is ranked
last in the draws, as the bootstrap does.

Engines: ``'numba'`` (default): nutpie's NUTS over a hand-written numba log density and gradient,
equal to the PyMC model's up to a constant (PyTensor's graph of ``OrderedLogistic`` took 2.6 ms per
gradient on HANNA, the numba kernel 0.05 ms: it sums over (answer, judge, level) groups with one
exponential per answer and per cutpoint, see :mod:`~simplex_core.methods.ordinal_density`); ``'pymc'``: PyMC's own NUTS on
:func:`build_ordinal_model`. Convergence is judged like the simplex model's, on the ranked
quantity: R-hat ≤ 1.01 and bulk ESS ≥ 400 on every ``q_k``, no divergent transitions.
"""

from __future__ import annotations

import dataclasses

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Mapping

import numpy as np
import pandas as pd

from simplex_core.inference.fit_result import ESS_MIN, RHAT_MAX, format_rhat  # the one convergence rule
from simplex_core.methods.method_base import MethodResult, RngLike, rank_draws_frame, candidate_series, score_array
from simplex_core.model.ranks import rank_interval, rank_scores
from simplex_core.data.scale import Scale

__all__ = [
    "CUTPOINT_FORMS",
    "OrdinalSettings",
    "OrdinalData",
    "OrdinalFit",
    "ordinal_data",
    "ENGINES",
    "ITEM_PARAMETRISATIONS",
    "CENTRED_MIN_PER_ITEM",
    "build_ordinal_model",
    "ordinal_logp_grad",
    "fit_ordinal",
    "fit_ordinal_job",
    "ordinal_job_key",
    "ORDINAL",
    "OrdinalMethod",
    "ordinal_for_table",
    "ordinal_json",
    "ordinal_method",
    "run_ordinal_task",
    "ordinal_result",
    "p_best",
]

CUTPOINT_FORMS: tuple[str, ...] = ("judge", "shared")
"""``judge``: each judge its own ordered cutpoints (partially pooled); ``shared``: one ordered set
shifted by a severity per judge."""

ENGINES: tuple[str, ...] = ("numba", "pymc")

ITEM_PARAMETRISATIONS: tuple[str, ...] = ("auto", "centred", "non-centred")

CENTRED_MIN_PER_ITEM = 10
"""Judgments per item (on average) from which ``item_parametrisation='auto'`` samples the item effects
centred: with many judgments an item's effect is pinned by its data rather than by ``sigma_item``,
and the non-centred form then ties ``z_item`` to ``sigma_item`` in a narrow ridge."""

_PRIOR_SD = 2.5  # logit scale: weakly informative, as brms' defaults


@dataclass(frozen=True)
class OrdinalSettings:
    """How the ordinal model is fitted.

    Attributes
    ----------
    chains, draws, tune, seed
        MCMC chains, kept draws per chain, warm-up iterations per chain, seed.
    engine
        ``'numba'`` (default) or ``'pymc'``.
    cutpoints
        ``'judge'`` (default) or ``'shared'`` (see :data:`CUTPOINT_FORMS`).
    answer_effects
        ``False`` (default, the issue's model), ``True``, or ``'auto'`` (when some answer has ≥ 2
        judgments: one judge cannot tell an answer's own quality from its noise).
    item_parametrisation
        How the item effects are sampled (the model is the same): ``'centred'`` (``u ~
        ZeroSumNormal(sigma_item)``, the better geometry when each item has many judgments),
        ``'non-centred'`` (``u = sigma_item * z``, better when items have few), or ``'auto'``
        (default): centred when there are at least :data:`CENTRED_MIN_PER_ITEM` judgments per item.
    target_accept
        NUTS target acceptance.
    extra_rounds
        Runs after one that has not converged (R-hat ≤ 1.01, bulk ESS ≥ 400, no divergences), as the
        simplex engine does: each doubles draws and warm-up, and after divergences raises the target
        acceptance to 0.95, then 0.99. A small fit size (``evaluate``'s 2 × 500) then still ends converged
        where the data allow it, instead of a result marked "not converged".
    """

    chains: int = 4
    draws: int = 1000
    tune: int = 1000
    seed: int = 0
    engine: str = "numba"
    cutpoints: str = "judge"
    answer_effects: bool | str = False
    item_parametrisation: str = "auto"
    target_accept: float = 0.9
    extra_rounds: int = 2

    def __post_init__(self) -> None:
        problems = []
        for name in ("chains", "draws"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 1:
                problems.append(f"{name} must be a whole number of at least 1; got {v!r}")
        if not isinstance(self.tune, (int, np.integer)) or self.tune < 0:
            problems.append(f"tune must be a whole number of at least 0; got {self.tune!r}")
        if not isinstance(self.extra_rounds, (int, np.integer)) or self.extra_rounds < 0:
            problems.append(f"extra_rounds must be a whole number of at least 0; got {self.extra_rounds!r}")
        if self.engine not in ENGINES:
            problems.append(f"engine must be one of {', '.join(ENGINES)}; got {self.engine!r}")
        if self.cutpoints not in CUTPOINT_FORMS:
            problems.append(f"cutpoints must be one of {', '.join(CUTPOINT_FORMS)}; got {self.cutpoints!r}")
        if self.answer_effects not in ("auto", True, False):
            problems.append(f"answer_effects must be 'auto', True or False; got {self.answer_effects!r}")
        if self.item_parametrisation not in ITEM_PARAMETRISATIONS:
            problems.append(f"item_parametrisation must be one of {', '.join(ITEM_PARAMETRISATIONS)}; "
                            f"got {self.item_parametrisation!r}")
        if not 0.5 <= float(self.target_accept) < 1.0:
            problems.append(f"target_accept must be in [0.5, 1); got {self.target_accept!r}")
        if problems:
            raise ValueError("OrdinalSettings: " + "; ".join(problems) + ".")


@dataclass(frozen=True)
class OrdinalData:
    """Long arrays of the judgments the model sees (self-family pairs already dropped).

    ``item``, ``candidate``, ``judge``: integer codes per judgment; ``level``: observed level index
    (0..M-1) per judgment; ``fitted``: the candidates with at least one judgment (the model's
    candidate axis), ``dropped``: those without; ``n_levels``: M.
    """

    item: np.ndarray
    candidate: np.ndarray
    judge: np.ndarray
    level: np.ndarray
    items: tuple[str, ...]
    fitted: tuple[str, ...]
    dropped: tuple[str, ...]
    judges: tuple[str, ...]
    candidates: tuple[str, ...]
    n_levels: int

    @property
    def n_judgments(self) -> int:
        return int(len(self.level))

    @property
    def max_judgments_per_answer(self) -> int:
        if not len(self.level):
            return 0
        key = self.item.astype(np.int64) * max(1, len(self.fitted)) + self.candidate
        return int(np.bincount(key).max())


def ordinal_data(view: pd.DataFrame, scale: Scale, excluded: Collection[tuple[str, str]] = ()) -> OrdinalData:
    """The judgments of an item view as :class:`OrdinalData`; scores are mapped to the index of
    their level in ``scale.values``. A score that is not a level of the scale is an error naming
    the judge, item, candidate and value."""
    arr = score_array(view, excluded)
    levels = np.asarray(scale.values, dtype=float)
    ii, kk, jj = np.nonzero(~np.isnan(arr.scores))
    values = arr.scores[ii, kk, jj]
    pos = np.clip(np.searchsorted(levels, values), 0, len(levels) - 1)
    bad = ~np.isclose(levels[pos], values, rtol=0, atol=1e-9)
    if bad.any():
        n = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"ordinal: judge {arr.judges[jj[n]]!r} gave {values[n]:g} to candidate {arr.candidates[kk[n]]!r} on item "
            f"{arr.items[ii[n]]!r}, which is not a level of the scale ({', '.join(f'{v:g}' for v in levels)}); "
            f"{int(bad.sum())} score(s) like it. Give scores on the scale's levels, or declare the levels."
        )
    present = np.unique(kk)
    fitted = tuple(arr.candidates[k] for k in present)
    dropped = tuple(c for k, c in enumerate(arr.candidates) if k not in set(present.tolist()))
    recode = np.full(len(arr.candidates), -1, dtype=np.int64)
    recode[present] = np.arange(len(present))
    used_items = np.unique(ii)
    item_code = np.full(len(arr.items), -1, dtype=np.int64)
    item_code[used_items] = np.arange(len(used_items))
    return OrdinalData(
        item=item_code[ii], candidate=recode[kk], judge=jj.astype(np.int64), level=pos.astype(np.int64),
        items=tuple(arr.items[i] for i in used_items), fitted=fitted, dropped=dropped, judges=arr.judges,
        candidates=arr.candidates, n_levels=len(levels),
    )


def _use_answer_effects(data: OrdinalData, settings: OrdinalSettings) -> bool:
    if settings.answer_effects == "auto":
        return data.max_judgments_per_answer >= 2
    return bool(settings.answer_effects)


def build_ordinal_model(data: OrdinalData, settings: OrdinalSettings = OrdinalSettings()):
    """The PyMC model (see the module docstring), PyMC's ``OrderedLogistic`` likelihood: the
    reference of engine ``'numba'`` (same free variables in the same order, equal log density up to
    a constant; ``tests/test_ordinal.py`` checks it) and the model engine ``'pymc'`` samples.

    The sum-to-zero effects are ``ZeroSumNormal`` (the same law as ``raw - mean(raw)`` of iid normals),
    sampled in PyMC's orthonormal zero-sum coordinates: no direction that only the prior sees, so a
    diagonal mass matrix fits the posterior. Item effects are centred or non-centred by
    :data:`CENTRED_MIN_PER_ITEM` (see :class:`OrdinalSettings`)."""
    import pymc as pm
    import pytensor.tensor as pt

    _check_fittable(data)
    lay = _layout(data, settings)
    coords = {"candidate": list(data.fitted), "item": list(data.items), "judge": list(data.judges)}
    with pm.Model(coords=coords) as model:
        quality = pm.ZeroSumNormal("quality", sigma=_PRIOR_SD, dims="candidate")
        eta = quality[data.candidate]
        if lay.item_effects:
            sigma_item = pm.HalfStudentT("sigma_item", nu=_NU, sigma=_PRIOR_SD)
            if lay.item_centred:
                u = pm.ZeroSumNormal("item_effect", sigma=sigma_item, dims="item")
            else:
                u = sigma_item * pm.ZeroSumNormal("z_item", sigma=1.0, dims="item")
            eta = eta + u[data.item]
        if lay.answer_effects:
            sigma_answer = pm.HalfStudentT("sigma_answer", nu=_NU, sigma=_PRIOR_SD)
            z_answer = pm.ZeroSumNormal("z_answer", sigma=1.0, dims=("candidate", "item"))
            eta = eta + (sigma_answer * z_answer)[data.candidate, data.item]
        first = pm.Normal("severity", 0.0, _PRIOR_SD, dims="judge")  # each judge's lowest cutpoint
        if lay.n_gaps:
            log_gap = pm.Normal("log_gap", 0.0, 1.0, shape=(lay.gap_rows, lay.n_gaps))
            gaps = pt.broadcast_to(pt.exp(log_gap), (len(data.judges), lay.n_gaps))
            cut = pt.concatenate([first[:, None], first[:, None] + pt.cumsum(gaps, axis=1)], axis=1)
        else:
            cut = first[:, None]
        pm.OrderedLogistic("y", eta=eta, cutpoints=cut[data.judge], observed=data.level, compute_p=False)
    return model


def _check_fittable(data: OrdinalData) -> None:
    if data.n_judgments == 0:
        raise ValueError("ordinal: no judgments left (all missing or excluded as self-family); nothing to fit.")
    if len(data.fitted) < 2:
        raise ValueError(f"ordinal: only {len(data.fitted)} candidate has judgments; a ranking needs at least 2.")


@dataclass(frozen=True)
class _Layout:
    """Where each free variable sits in the unconstrained vector (PyMC's order of creation)."""

    K: int
    I: int
    J: int
    M: int
    item_effects: bool
    item_centred: bool
    answer_effects: bool
    gap_rows: int  # J (judge cutpoints) or 1 (shared)

    @property
    def n_gaps(self) -> int:
        return self.M - 2

    @property
    def item_mode(self) -> int:
        from simplex_core.methods.ordinal_density import ITEM_CENTRED, ITEM_NONCENTRED, ITEM_NONE

        if not self.item_effects:
            return ITEM_NONE
        return ITEM_CENTRED if self.item_centred else ITEM_NONCENTRED

    @property
    def size(self) -> int:
        return (self.K - 1 + (self.I if self.item_effects else 0)
                + (1 + self.K * (self.I - 1) if self.answer_effects else 0) + self.J + self.gap_rows * self.n_gaps)


def _item_centred(data: OrdinalData, settings: OrdinalSettings) -> bool:
    if settings.item_parametrisation == "auto":
        return data.n_judgments >= CENTRED_MIN_PER_ITEM * max(1, len(data.items))
    return settings.item_parametrisation == "centred"


def _layout(data: OrdinalData, settings: OrdinalSettings) -> _Layout:
    return _Layout(K=len(data.fitted), I=len(data.items), J=len(data.judges), M=data.n_levels,
                   item_effects=len(data.items) >= 2, item_centred=_item_centred(data, settings),
                   answer_effects=_use_answer_effects(data, settings),
                   gap_rows=len(data.judges) if settings.cutpoints == "judge" else 1)


_NU = 3.0  # the scale priors' degrees of freedom (HalfStudentT(3, 2.5))


def ordinal_logp_grad(x: np.ndarray, data: OrdinalData, settings: OrdinalSettings = OrdinalSettings()):
    """Log density (up to a constant) and gradient of the model at the unconstrained point ``x``
    (the layout of :func:`build_ordinal_model`'s free variables, in order), by the numba kernel."""
    lay = _layout(data, settings)
    from simplex_core.methods.ordinal_density import logp_grad, pack

    packed = pack(data.item, data.candidate, data.judge, data.level, lay.K, lay.J, lay.M)
    return logp_grad(np.asarray(x, dtype=np.float64), *packed, lay.K, lay.I, lay.J, lay.M, lay.item_mode,
                     lay.answer_effects, lay.gap_rows)


def _compile_numba(data: OrdinalData, settings: OrdinalSettings):
    """nutpie model over the numba C callbacks of :mod:`simplex_core.methods.ordinal_density` (no Python
    call per gradient: a Python callback made the fit several times slower on HANNA)."""
    from nutpie.compile_pymc import CompiledPyMCModel

    from simplex_core.methods.ordinal_density import build_buffer, expand_c, logp_c

    lay = _layout(data, settings)
    buf = build_buffer(data.item, data.candidate, data.judge, data.level, lay.K, lay.I, lay.J, lay.M,
                       lay.item_mode, lay.answer_effects, lay.gap_rows)
    names = ["quality", "severity"] + (["sigma_item"] if lay.item_effects else []) + (
        ["sigma_answer"] if lay.answer_effects else [])
    shapes = [(lay.K,), (lay.J,)] + [()] * (len(names) - 2)
    slices, o = [], 0
    for shape in shapes:
        size = int(np.prod(shape)) if shape else 1
        slices.append(slice(o, o + size))
        o += size

    def initial_point(seed: int) -> np.ndarray:  # PyMC's default jitter: uniform(-1, 1) around 0
        return np.random.default_rng(int(seed) % (2**63)).uniform(-1.0, 1.0, size=lay.size)

    return CompiledPyMCModel(
        _n_dim=int(lay.size), dims={"quality": ("candidate",), "severity": ("judge",)},
        _coords={"candidate": pd.Index(list(data.fitted)), "judge": pd.Index(list(data.judges))},
        _shapes=dict(zip(names, shapes)), compiled_logp_func=logp_c, compiled_expand_func=expand_c,
        initial_point_func=initial_point, shared_data={}, user_data=buf, n_expanded=o,
        shape_info=(names, slices, shapes), logp_func=None, expand_func=None,
    )


#: Variables kept from each draw (the answer- and item-level draws are not stored).
_KEEP = ("quality", "sigma_item", "sigma_answer", "severity")


@dataclass(frozen=True)
class OrdinalFit:
    """One fit: ``quality`` draws [S, K] over the fitted candidates, the scale parameters' posterior
    means, convergence (``max_rhat``, ``min_ess_bulk`` over ``quality``; ``max_rhat_all`` over every
    kept variable; ``divergences``), ``fit_seconds`` and the data it saw."""

    data: OrdinalData
    settings: OrdinalSettings
    quality: np.ndarray
    max_rhat: float
    max_rhat_all: float
    min_ess_bulk: float
    divergences: int
    fit_seconds: float
    answer_effects: bool
    scales: Mapping[str, float] = field(default_factory=dict)

    @property
    def converged(self) -> bool:
        return (math.isfinite(self.max_rhat) and self.max_rhat <= RHAT_MAX and math.isfinite(self.min_ess_bulk)
                and self.min_ess_bulk >= ESS_MIN and self.divergences == 0)

    @property
    def message(self) -> str:
        if self.converged:
            return (f"converged: max R-hat {format_rhat(self.max_rhat)}, min bulk ESS {self.min_ess_bulk:.0f}, "
                    "no divergent transitions.")
        fails = []
        if not (math.isfinite(self.max_rhat) and self.max_rhat <= RHAT_MAX):
            fails.append(f"R-hat {format_rhat(self.max_rhat)} (needs ≤ {RHAT_MAX})")
        if not (math.isfinite(self.min_ess_bulk) and self.min_ess_bulk >= ESS_MIN):
            fails.append(f"bulk ESS {self.min_ess_bulk:.0f} (needs ≥ {ESS_MIN})")
        if self.divergences:
            fails.append(f"{self.divergences} divergent transition(s)")
        return "not converged: " + "; ".join(fails) + ". Sample longer (more draws and tune)."


def fit_ordinal(data: OrdinalData, settings: OrdinalSettings = OrdinalSettings(),
                progress_callback=None) -> OrdinalFit:
    """Build, sample and diagnose the ordinal model of ``data``; a run that has not converged is
    followed by up to ``settings.extra_rounds`` longer ones (the last run is returned, with its own
    settings). ``progress_callback(message, fraction)`` (engine ``'numba'``): about once a second,
    "ordinal model: sampling: N of M iterations"; what it raises (a cancel) stops the sampler and
    propagates."""
    fit = _fit_once(data, settings, progress_callback)
    for round_ in range(settings.extra_rounds):
        if fit.converged:
            break
        accept = settings.target_accept
        if fit.divergences:  # smaller steps, as the simplex engine's divergence retry
            accept = 0.95 if accept < 0.95 else 0.99
        settings = dataclasses.replace(settings, draws=settings.draws * 2, tune=settings.tune * 2, target_accept=accept)
        fit = _fit_once(data, settings, progress_callback, f"not converged, longer run {round_ + 1}: ")
    return fit


def _sample_numba(compiled, settings: OrdinalSettings, progress_callback, stage: str):
    """nutpie's NUTS, in the background when someone follows the progress (so that a cancel raised by
    the callback stops the chains at once)."""
    import nutpie

    cores = max(1, min(settings.chains, os.cpu_count() or 1))
    kwargs = dict(chains=settings.chains, draws=settings.draws, tune=settings.tune, seed=settings.seed, cores=cores,
                  progress_bar=False, target_accept=settings.target_accept)
    if progress_callback is None:
        return nutpie.sample(compiled, **kwargs)
    from simplex_core.inference.sampling import follow_sampler

    total = settings.chains * (settings.draws + settings.tune)
    progress_callback(f"ordinal model: {stage}sampling: 0 of {total} iterations", 0.0)  # a cancel here starts nothing
    sampler = nutpie.sample(compiled, save_warmup=True, blocking=False, **kwargs)
    return follow_sampler(sampler, lambda done: progress_callback(
        f"ordinal model: {stage}sampling: {done} of {total} iterations", 0.95 * done / total))


def _fit_once(data: OrdinalData, settings: OrdinalSettings, progress_callback=None, stage: str = "") -> OrdinalFit:
    """One run: build, sample and diagnose."""
    import arviz as az
    import warnings

    t0 = time.perf_counter()
    _check_fittable(data)
    if settings.engine == "numba":
        idata = _sample_numba(_compile_numba(data, settings), settings, progress_callback, stage)
    else:
        import pymc as pm

        model = build_ordinal_model(data, settings)
        with model:
            idata = pm.sample(
                draws=settings.draws, tune=settings.tune, chains=settings.chains, cores=1,
                random_seed=settings.seed, target_accept=settings.target_accept, progressbar=False,
                compute_convergence_checks=False, var_names=[n for n in _KEEP if n in model.named_vars],
                idata_kwargs={"log_likelihood": False},
            )
    elapsed = time.perf_counter() - t0
    post = idata.posterior
    kept = [n for n in _KEEP if n in post.data_vars]
    with warnings.catch_warnings():  # R-hat of one chain warns; the NaN speaks for itself
        warnings.simplefilter("ignore")
        rhat = az.rhat(post[kept])
        ess = az.ess(post[["quality"]], method="bulk")
    rq = np.asarray(rhat["quality"].values, dtype=float)
    r_all = np.concatenate([np.asarray(rhat[n].values, dtype=float).ravel() for n in kept])
    eq = np.asarray(ess["quality"].values, dtype=float)
    div = int(np.asarray(idata.sample_stats["diverging"].values).sum()) if "diverging" in idata.sample_stats else 0
    q = np.asarray(post["quality"].values, dtype=float)
    q = q.reshape((-1, q.shape[-1]))
    scales = {n: float(np.asarray(post[n].values).mean()) for n in kept if n != "quality"}
    return OrdinalFit(
        data=data, settings=settings, quality=q,
        max_rhat=float(np.nanmax(rq)) if np.isfinite(rq).any() else float("nan"),
        max_rhat_all=float(np.nanmax(r_all)) if np.isfinite(r_all).any() else float("nan"),
        min_ess_bulk=float(np.nanmin(eq)) if np.isfinite(eq).any() else float("nan"),
        divergences=div, fit_seconds=elapsed, answer_effects=_use_answer_effects(data, settings), scales=scales,
    )


def p_best(rank_draws: np.ndarray) -> np.ndarray:
    """Share of draws in which each candidate has rank 1: ``[S, K]`` ranks -> ``[K]``."""
    return (np.asarray(rank_draws) == 1).mean(axis=0)


def ordinal_result(fit: OrdinalFit, *, method: str = "ordinal", level: float = 0.95) -> MethodResult:
    """The fit as a :class:`MethodResult`: scores = posterior mean qualities (logit scale, sum to
    zero), ranks from them, 95% rank intervals of the rank draws, every draw's ranks for box plots;
    ``details`` hold convergence, fit time and the scale parameters (``p_best:<candidate>``
    too); ``notes`` say when it did not converge or a candidate had no judgment."""
    data = fit.data
    cands = data.candidates
    pos = {c: i for i, c in enumerate(data.fitted)}
    full = np.full((fit.quality.shape[0], len(cands)), np.nan)
    for k, c in enumerate(cands):
        if c in pos:
            full[:, k] = fit.quality[:, pos[c]]
    draws = rank_scores(full, nan_last=True)
    mean = np.array([fit.quality[:, pos[c]].mean() if c in pos else np.nan for c in cands])
    lo, hi = rank_interval(draws, level)
    best = p_best(draws)
    notes = []
    if not fit.converged:
        notes.append(f"{method}: {fit.message}")
    if data.dropped:
        notes.append(f"{method}: no judgments left for {list(data.dropped)} (all missing or excluded as "
                     "self-family), so they have no score and no rank.")
        lo = np.where(np.isnan(mean), np.nan, lo)
        hi = np.where(np.isnan(mean), np.nan, hi)
    details = {
        "converged": float(fit.converged), "max_rhat": fit.max_rhat, "max_rhat_all": fit.max_rhat_all,
        "min_ess_bulk": fit.min_ess_bulk, "divergences": float(fit.divergences), "fit_seconds": fit.fit_seconds,
        "answer_effects": float(fit.answer_effects), "n_judgments": float(data.n_judgments),
        **{k: float(v) for k, v in fit.scales.items()},
        **{f"p_best:{c}": float(b) for c, b in zip(cands, best)},
    }
    return MethodResult(
        method=method, uses_labels=False,
        scores=candidate_series(mean, cands, "quality"), ranks=candidate_series(rank_scores(mean), cands, "rank"),
        rank_lo=candidate_series(lo, cands, "rank_lo"), rank_hi=candidate_series(hi, cands, "rank_hi"),
        rank_draws=rank_draws_frame(draws, cands), details=details, notes=tuple(notes),
    )


def ordinal_method(
    view: pd.DataFrame,
    scale: Scale,
    rng: RngLike | None = None,
    *,
    excluded: Collection[tuple[str, str]] = (),
    settings: OrdinalSettings = OrdinalSettings(),
    method: str = "ordinal",
) -> MethodResult:
    """Method ``ordinal``: fit the ordinal many-facet model to an item view and rank by quality.

    ``rng`` is not used: the fit's seed is ``settings.seed``, so the same data always give the same
    fit (as the Bayesian simplex methods)."""
    fit = fit_ordinal(ordinal_data(view, scale, excluded), settings)
    return ordinal_result(fit, method=method)


def _data_key(data: OrdinalData, settings: OrdinalSettings) -> str:
    """Hash of the judgments and the settings: the same data and settings give the same fit."""
    import hashlib

    h = hashlib.sha256()
    for arr in (data.item, data.candidate, data.judge, data.level):
        h.update(np.ascontiguousarray(arr, dtype=np.int64).tobytes())
    h.update(repr((data.items, data.fitted, data.judges, data.candidates, data.n_levels, settings)).encode())
    return h.hexdigest()


def ordinal_job_key(data: OrdinalData, settings: OrdinalSettings) -> str:
    """The key of one ordinal fit in the app's job book and its result store (32 hex digits)."""
    return "ordinal-" + _data_key(data, settings)[:32]


def fit_ordinal_job(data: OrdinalData, settings: OrdinalSettings, progress_callback=None) -> MethodResult:
    """What the app's fit workers run for the ordinal model (:class:`simplex_core.jobs.JobKind`): fit,
    then its :class:`MethodResult` (small: rank draws, intervals, convergence)."""
    return ordinal_result(fit_ordinal(data, settings, progress_callback))


def run_ordinal_task(task: tuple) -> MethodResult:
    """Fit one task of :meth:`OrdinalMethod.fit_tasks`: ``(name, data, settings)`` -> MethodResult
    (a module-level function of picklable arguments, so that a Dask worker can run it)."""
    name, data, settings = task
    return ordinal_result(fit_ordinal(data, settings), method=name)


@dataclass
class OrdinalMethod:
    """Method ``ordinal`` as the evaluation runs it: ``f(view, rng) -> MethodResult``, with the
    interface of :class:`simplex_core.studies.experiments.BayesianMethod` that the study code uses (the fits
    a set of views needs as tasks, run anywhere, e.g. on Dask, then stored; every result kept in
    ``history``; fits memoised by data hash + settings).

    Attributes
    ----------
    scale
        The table's scale (scores map to its levels).
    excluded
        (judge, candidate) pairs whose judgments are dropped (self-family exclusion).
    settings
        :class:`OrdinalSettings`.
    name
        Method name.
    progress
        Optional ``progress(message)`` after each fit.
    """

    scale: Scale
    excluded: frozenset = frozenset()
    settings: OrdinalSettings = OrdinalSettings()
    name: str = "ordinal"
    progress: Callable[[str], None] | None = None
    memo: dict = field(default_factory=dict)
    history: list = field(default_factory=list)

    task_runner = staticmethod(run_ordinal_task)  # what prefetch_fits runs on a Dask worker

    def _keyed(self, view: pd.DataFrame) -> tuple[str, OrdinalData]:
        data = ordinal_data(view, self.scale, self.excluded)
        return _data_key(data, self.settings), data

    def __call__(self, view: pd.DataFrame, rng: RngLike | None = None) -> MethodResult:
        key, data = self._keyed(view)
        if key not in self.memo:
            self.store(key, run_ordinal_task((self.name, data, self.settings)))
        result = self.memo[key]
        self.history.append(result)
        return result

    def fit_tasks(self, views, generators=None) -> list[tuple[str, tuple]]:
        """``(key, task)`` for every distinct fit that running on ``views`` needs and has not done."""
        out: dict[str, tuple] = {}
        for view in views:
            key, data = self._keyed(view)
            if key not in self.memo and key not in out:
                out[key] = (self.name, data, self.settings)
        return list(out.items())

    def store(self, key: str, result: MethodResult) -> None:
        self.memo[key] = result
        if self.progress is not None:
            d = result.details
            self.progress(
                f"{self.name}: fit {len(self.memo)} done ({d['fit_seconds']:.0f} s); "
                f"{'converged' if d['converged'] else 'NOT converged'} (R-hat {format_rhat(d['max_rhat'])}, "
                f"ESS {d['min_ess_bulk']:.0f}, {d['divergences']:.0f} divergent)"
            )


ORDINAL = "ordinal"
"""The method's name (``evaluate --methods ordinal``)."""


def ordinal_for_table(table, *, self_exclusion: bool = True, progress=None, chains: int | None = None,
                      draws: int | None = None, tune: int | None = None, seed: int | None = None,
                      extra_rounds: int | None = None, **ignored) -> OrdinalMethod:
    """:class:`OrdinalMethod` for a ``JudgmentTable``: its scale, its self-family pairs excluded when
    ``self_exclusion`` (as the baselines and the Bayesian model), the fit size of the Bayesian
    methods (``chains``, ``draws``, ``tune``, ``seed``, ``extra_rounds``; options only the simplex
    engines read, such as ``engine`` or ``prior``, are ignored)."""
    given: dict[str, Any] = {k: v for k, v in dict(chains=chains, draws=draws, tune=tune, seed=seed,
                                    extra_rounds=extra_rounds).items() if v is not None}
    excluded = frozenset(table.self_family_pairs) if self_exclusion else frozenset()
    return OrdinalMethod(table.scale, excluded, OrdinalSettings(**given), progress=progress)


def ordinal_json(result: MethodResult, settings: OrdinalSettings) -> dict:
    """The ``ordinal`` object of ``result.json`` (``fit --ordinal``): the label-free ordinal model's
    ranking beside the Bayesian one. ``candidates`` best first: ``candidate``, ``quality`` (posterior
    mean, logit scale, sum to zero; null without judgments), ``rank``, ``rank_lo``, ``rank_hi`` (95%),
    ``p_best``; ``diagnostics``; ``settings``; ``notes``."""

    def clean(v):
        return None if v is None or not math.isfinite(float(v)) else float(v)

    d = result.details
    lo, hi = result.rank_lo, result.rank_hi
    rows = []
    for c in result.scores.sort_values(ascending=False, na_position="last").index:
        rows.append({"candidate": str(c), "quality": clean(result.scores[c]), "rank": clean(result.ranks[c]),
                     "rank_lo": clean(None if lo is None else lo[c]), "rank_hi": clean(None if hi is None else hi[c]),
                     "p_best": clean(d.get(f"p_best:{c}"))})
    return {
        "method": result.method,
        "uses_labels": False,
        "model": "cumulative-logit many-facet model: quality + item effects"
                 f"{' + answer effects' if d['answer_effects'] else ''}, "
                 f"{'per-judge' if settings.cutpoints == 'judge' else 'shared'} cutpoints shifted by judge severity",
        "candidates": rows,
        "diagnostics": {"converged": bool(d["converged"]), "max_rhat": clean(d["max_rhat"]),
                        "min_ess_bulk": clean(d["min_ess_bulk"]), "divergences": int(d["divergences"]),
                        "fit_seconds": clean(d["fit_seconds"])},
        "settings": {"chains": settings.chains, "draws": settings.draws, "tune": settings.tune, "seed": settings.seed,
                     "engine": settings.engine, "cutpoints": settings.cutpoints,
                     "item_parametrisation": settings.item_parametrisation,
                     "answer_effects": bool(d["answer_effects"])},
        "notes": list(result.notes),
    }
