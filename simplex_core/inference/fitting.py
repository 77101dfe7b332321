"""Posterior inference: compile and sample the model, add ranks, diagnose convergence.

This module owns :func:`fit_model` and :class:`FitResult`, the engines that sample the PyMC model
of :mod:`simplex_core.model.definition`, the process-level cache of compiled samplers, and the convergence
diagnostics.

Engines (``FitSettings.engine``)
--------------------------------
``'fast'`` (default)
    nutpie's Rust NUTS sampler calling the hand-written numba log density of
    :mod:`simplex_core.model.fast_density` (PyMC's own parameterisation, equal to the PyMC model's logp
    point by point), compiled once per machine and cached on disk, so no compilation per dataset or
    setting. Before sampling, a few L-BFGS runs locate the posterior's modes and the chains start
    there (dealt over the modes that hold non-negligible Laplace mass, so a real second mode shows in
    R-hat instead of hiding). It implements every judge prior, with fixed ω and β_max or in
    integrated mode. Chosen by measurement (``bench/speed.py``, docs/BENCHMARKS.md "Engine and speed").
``'nutpie'``
    nutpie's Rust NUTS sampler driving a log density (and gradient) compiled by PyTensor's C
    backend. Compiling takes seconds (PyTensor caches the C modules on disk, across processes);
    chains run in threads of this process (no multiprocessing, so it is safe inside the app's
    server); each chain gets its own copy of the compiled function.
``'nutpie-numba'``
    nutpie's own PyMC path, numba backend: fastest per gradient but compiling takes minutes
    per model structure in every new process (measured: 100-200 s on a 2-core machine).
``'pymc'``
    PyMC's own NUTS (``pm.sample``), chains one after another in this process (``cores=1``): the
    reference implementation, slow per step.

Compiled-model reuse: compiled samplers are kept in a process-level cache keyed by
:func:`simplex_core.model.definition.structure_key` (scale shape, J, K, included mask, prior, random effects
or not, integrated or not, names). The counts, ω, β_max and δ are data of the compiled model, so
changing only them swaps data and re-samples without recompiling.

Same data, settings and seed give identical output (each chain's random stream derives from the
seed and the chain index, whatever the thread scheduling).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
import warnings
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

import numpy as np

from simplex_core.inference.rater_deviation import ensure_rater_deviation
from simplex_core.model.ranks import ranks_from_scores
from simplex_core.inference.fit_identity import data_hash
from simplex_core.model.definition import CountsLike, FitSettings, SamplerSettings, build_model, check_data_view, check_fit_size, model_data, structure_key

if TYPE_CHECKING:  # pragma: no cover
    import arviz as az
    import pymc as pm

#: ``progress_callback(message, fraction)``: a plain-words stage and the overall fraction done [0, 1].
ProgressCallback = Callable[[str, float], None]

#: Convergence thresholds over the expected scores E_k (issue 3).
RHAT_MAX = 1.01
ESS_MIN = 400

_MAX_CACHED = 16

log = logging.getLogger(__name__)


# -- results -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Diagnostics:
    """Convergence diagnostics over the expected scores E_k (and R-hat over every parameter).

    ``converged`` is True when max R-hat ≤ 1.01, min bulk ESS ≥ 400 and there are no divergent
    transitions; ``message`` says so, or says what failed in plain words.
    """

    max_rhat: float
    min_ess_bulk: float
    min_ess_tail: float
    divergences: int
    max_rhat_all: float
    converged: bool
    message: str
    worst_rhat_candidate: str | None = None
    worst_ess_candidate: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The result.json ``diagnostics`` object (NaN becomes None)."""

        def clean(x: float) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            "max_rhat": clean(self.max_rhat),
            "min_ess_bulk": clean(self.min_ess_bulk),
            "min_ess_tail": clean(self.min_ess_tail),
            "divergences": int(self.divergences),
            "max_rhat_all": clean(self.max_rhat_all),
            "converged": bool(self.converged),
            "message": self.message,
        }


@dataclass
class FitResult:
    """One fit: the posterior, its diagnostics, timing, and what produced it.

    Attributes
    ----------
    idata
        ArviZ InferenceData; ``posterior`` holds ``pi``, ``expected_score``, ``rank`` (int, 1 =
        best), ``theta``, ``rho`` (and ``Z``, ``R``, ``W``, ``omega``, ``beta_max`` when present)
        with dims ``chain, draw`` plus ``candidate``, ``judge``, ``true_level``, ``level``;
        ``sample_stats`` holds ``diverging``.
    diagnostics
        :class:`Diagnostics`.
    timing
        ``compile_s`` (building and compiling; ~0 when a compiled model was reused), ``sample_s``
        (warm-up plus draws; for the ``'fast'`` engine it includes the mode search, also given alone
        as ``modes_s``, with ``modes`` found and ``start_modes`` used), ``reused_compiled`` (bool),
        ``engine_used`` (the engine that ran).
    settings, counts
        The inputs.
    """

    idata: "az.InferenceData"
    diagnostics: Diagnostics
    timing: dict[str, Any]
    settings: FitSettings
    counts: CountsLike

    @property
    def candidates(self) -> tuple[str, ...]:
        return tuple(self.counts.candidates)

    def draws(self, name: str) -> np.ndarray:
        """Posterior draws of ``name`` stacked over chains: shape ``(chains * draws, ...)``."""
        arr = np.asarray(self.idata.posterior[name].values)
        return arr.reshape((-1,) + arr.shape[2:])


# -- ranks and diagnostics -----------------------------------------------------------------------

def _drop_shape_validation(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Shape validation failed")


def diagnose(idata: "az.InferenceData", candidates: tuple[str, ...] | None = None) -> Diagnostics:
    """Convergence diagnostics of a posterior (see :class:`Diagnostics`)."""
    import arviz as az

    post = idata.posterior
    n_chains = post.sizes.get("chain", 1)
    # ArviZ logs "Shape validation failed" for one chain on its own logger (az._log, not registered with
    # logging), not as a warning: the diagnostics' own message says what one chain cannot tell
    arviz_log = getattr(az, "_log", None)
    if isinstance(arviz_log, logging.Logger):
        arviz_log.addFilter(_drop_shape_validation)
    with warnings.catch_warnings():
        # R-hat/ESS of short or single chains warn; the numbers (NaN) speak for themselves.
        warnings.simplefilter("ignore", category=RuntimeWarning)
        warnings.simplefilter("ignore", category=UserWarning)
        es = post[["expected_score"]]
        params = [v for v in post.data_vars if v not in ("rank", "rater_deviation") and np.issubdtype(post[v].dtype, np.floating)]
        rhat_all_ds = az.rhat(post[params])  # expected_score is among the params: one R-hat pass
        rhat = np.asarray(rhat_all_ds["expected_score"].values, dtype=float)
        ess_bulk = np.asarray(az.ess(es, method="bulk")["expected_score"].values, dtype=float)
        ess_tail = np.asarray(az.ess(es, method="tail")["expected_score"].values, dtype=float)
        rhat_all = [np.asarray(rhat_all_ds[v].values, dtype=float).ravel() for v in params]
    rhat_all_flat = np.concatenate(rhat_all) if rhat_all else np.array([np.nan])
    max_rhat = float(np.nanmax(rhat)) if np.isfinite(rhat).any() else float("nan")
    max_rhat_all = float(np.nanmax(rhat_all_flat)) if np.isfinite(rhat_all_flat).any() else float("nan")
    min_bulk = float(np.nanmin(ess_bulk)) if np.isfinite(ess_bulk).any() else float("nan")
    min_tail = float(np.nanmin(ess_tail)) if np.isfinite(ess_tail).any() else float("nan")
    divergences = 0
    if hasattr(idata, "sample_stats") and "diverging" in idata.sample_stats:
        divergences = int(np.asarray(idata.sample_stats["diverging"].values).sum())
    names = list(candidates) if candidates is not None else [str(c) for c in post["candidate"].values]
    worst_rhat = names[int(np.nanargmax(rhat))] if np.isfinite(rhat).any() else None
    worst_ess = names[int(np.nanargmin(ess_bulk))] if np.isfinite(ess_bulk).any() else None

    failures: list[str] = []
    if not (math.isfinite(max_rhat) and max_rhat <= RHAT_MAX):
        if n_chains < 2:
            failures.append("R-hat needs at least 2 chains")
        else:
            failures.append(f"R-hat {format_rhat(max_rhat)} on candidate {worst_rhat} (needs ≤ {RHAT_MAX})")
    if not (math.isfinite(min_bulk) and min_bulk >= ESS_MIN):
        shown = f"{min_bulk:.0f}" if math.isfinite(min_bulk) else "unknown"
        failures.append(f"bulk ESS {shown} on candidate {worst_ess} (needs ≥ {ESS_MIN})")
    if divergences:
        failures.append(f"{divergences} divergent transition{'s' if divergences != 1 else ''}")
    if failures:  # what failed only: the front ends add the action available where the user is
        message = "not converged: " + "; ".join(failures) + "."
    else:
        message = (
            f"converged: max R-hat {max_rhat:.3f}, min bulk ESS {min_bulk:.0f}, no divergent transitions."
        )
    return Diagnostics(
        max_rhat=max_rhat,
        min_ess_bulk=min_bulk,
        min_ess_tail=min_tail,
        divergences=divergences,
        max_rhat_all=max_rhat_all,
        converged=not failures,
        message=message,
        worst_rhat_candidate=worst_rhat,
        worst_ess_candidate=worst_ess,
    )


def format_rhat(rhat: float) -> str:
    """R-hat to 3 decimals, or 4 when 3 would round a failing value onto the limit (1.0104 read
    "NOT converged (R-hat 1.010)" beside a converged 1.010)."""
    text = f"{rhat:.3f}"
    return f"{rhat:.4f}" if rhat > RHAT_MAX and float(text) <= RHAT_MAX else text


def first_failure(message: str) -> str:
    """The first check an unconverged fit failed, from :func:`diagnose`'s message (``"not converged: R-hat
    1.02 on a (needs ≤ 1.01); …. Note: …"`` → ``"R-hat 1.02 on a (needs ≤ 1.01)"``), for progress
    lines that quote it inside a sentence of their own."""
    return message.removeprefix("not converged: ").split(";")[0].split(". Note")[0].rstrip(".")


def convergence_problem(d: Diagnostics) -> str | None:
    """One plain sentence of what went wrong with a fit (None when it converged), for every front
    end to show as is and follow with the one action available there (the app: a control; the
    command line: flags)."""
    if d.converged:
        return None
    parts = []
    rhat_failed = not (math.isfinite(d.max_rhat) and d.max_rhat <= RHAT_MAX)
    if rhat_failed:
        parts.append(f"R-hat {format_rhat(d.max_rhat)} on {d.worst_rhat_candidate} (limit {RHAT_MAX})"
                     if math.isfinite(d.max_rhat) else "R-hat unavailable with one chain")
    if not (math.isfinite(d.min_ess_bulk) and d.min_ess_bulk >= ESS_MIN):
        shown = f"{d.min_ess_bulk:.0f}" if math.isfinite(d.min_ess_bulk) else "unknown"
        same = rhat_failed and d.worst_ess_candidate == d.worst_rhat_candidate
        parts.append(f"bulk ESS {shown}{'' if same else f' on {d.worst_ess_candidate}'} (minimum {ESS_MIN})")
    if d.divergences:
        parts.append(f"{d.divergences} divergent transition{'s' if d.divergences != 1 else ''}")
    joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"This fit has not converged, so its intervals may be wrong: {joined}."


#: Judge priors that do not rule out label-switched judges (appendix E of the paper); under them an
#: unconverged fit whose chains sat in separate modes is usually "this judge is flipped or not".
PRIORS_WITH_FLIPPED_JUDGES = ("diagonal", "mixing")


def flipped_judge_modes(settings: Any, timing: Mapping[str, Any] | None) -> bool:
    """Whether a fit's chains sat in separate modes (it was sampled by parallel tempering) under a
    judge prior that allows label-switched judges: there longer chains do not help (measured on the
    HANNA criteria under the diagonal prior: R-hat 1.29–2.69 after tempering), while the
    weight-propagation prior, which rules such judges out, does (the same fits converge)."""
    prior = getattr(settings, "prior", None)
    return prior in PRIORS_WITH_FLIPPED_JUDGES and float((timing or {}).get("tempered_s") or 0.0) > 0.0


def uncrossed_modes(timing: Mapping[str, Any] | None) -> bool:
    """Whether a fit's parallel-tempering chains ended far from agreeing (R-hat above
    ``TEMPERED_ROUNDS_RHAT``), or still disagreed after tempering towards a reference too: they crossed
    between the posterior's modes too rarely, and longer chains are not the remedy (measured: HANNA
    coherence at ω = 0, β_max = 0, R-hat 1.384 after one tempered run, 1.109 after three rounds twice
    as long each, 703 s; the engine gives such chains no extra rounds of likelihood tempering).
    The modes then come from the setting, not the sampler: the paper's integrated mode, which lets the
    data weigh β_max and ω, converged on every built-in dataset (bench/results/convergence-table-integrated-20261128.log)."""
    return bool((timing or {}).get("uncrossed_modes"))


# -- compiled-model cache ------------------------------------------------------------------------

@dataclass
class _Compiled:
    engine: str
    structure: str
    obj: Any  # nutpie compiled model, or the pm.Model for the pymc engine
    model: Any  # the pm.Model it was compiled from
    compile_s: float
    lock: threading.Lock = field(default_factory=threading.Lock)


_CACHE: "OrderedDict[tuple[str, str], _Compiled]" = OrderedDict()
_CACHE_LOCK = threading.Lock()


def clear_compiled_cache() -> None:
    """Forget every compiled sampler of this process (the next fit compiles again)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _get_compiled(counts: CountsLike, settings: FitSettings) -> tuple[_Compiled, bool]:
    key = (settings.engine, structure_key(counts, settings.model))
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit, True
    t0 = time.perf_counter()
    model = build_model(counts, settings.model)
    if settings.engine == "nutpie":
        obj = _compile_nutpie_c(model, list(model_data(counts, settings.model)))
    elif settings.engine == "nutpie-numba":
        import nutpie

        obj = nutpie.compile_pymc_model(model, backend="numba")
    else:
        obj = model
    compiled = _Compiled(settings.engine, key[1], obj, model, time.perf_counter() - t0)
    with _CACHE_LOCK:
        _CACHE[key] = compiled
        while len(_CACHE) > _MAX_CACHED:
            _CACHE.popitem(last=False)
    return compiled, False


def _compile_nutpie_c(model: "pm.Model", data_names: list[str]):
    """nutpie model over a PyTensor C-compiled log density; the model's data are inputs.

    The data (counts, ω, β_max, δ) are explicit inputs of the compiled functions rather than shared
    variables, so a data swap (``with_data``) never mutates a compiled function, and each chain
    (thread) works on its own copy of the functions.
    """
    import pytensor
    import pytensor.tensor as pt
    from nutpie.compiled_pyfunc import from_pyfunc
    from pymc.initial_point import make_initial_point_fn
    from pymc.pytensorf import compile as compile_pymc
    from pytensor.compile.mode import Mode
    from pytensor.graph.replace import clone_replace

    shared = {name: model[name] for name in data_names}
    data_inputs = {name: sv.type(name=f"{name}_input") for name, sv in shared.items()}
    data_values = {name: np.asarray(sv.get_value()) for name, sv in shared.items()}
    dtypes = {name: np.dtype(sv.type.dtype) for name, sv in shared.items()}

    def data_args(data: dict) -> list[np.ndarray]:
        # trust_input skips PyTensor's checks, so give exactly the compiled dtypes (no-op when equal)
        return [np.asarray(data[n], dtype=dtypes[n]) for n in data_names]

    free_rvs = list(model.free_RVs)
    value_vars = [model.rvs_to_values[v] for v in free_rvs]
    init_point = make_initial_point_fn(model=model, jitter_rvs=set(free_rvs), return_transformed=True)
    point = init_point(0)
    shapes = [tuple(np.shape(point[v.name])) for v in value_vars]
    sizes = [int(np.prod(s)) for s in shapes]
    n_dim = int(sum(sizes))

    logp = model.logp()
    logp = pytensor.graph.rewrite_graph(logp, include=["canonicalize", "stabilize"])
    grads = pytensor.grad(logp, value_vars)
    grad = pt.concatenate([pt.as_tensor(g).ravel() for g in grads])

    joined = pt.TensorType("float64", shape=(n_dim,))(name="unconstrained_point")
    replacements: dict = {}
    start = 0
    for v, shape, size in zip(value_vars, shapes, sizes):
        replacements[v] = joined[start:start + size].reshape(shape).astype(v.dtype)
        start += size
    replacements.update({shared[name]: data_inputs[name] for name in data_names})

    # Stored variables: the constrained free RVs and the deterministics.
    stored = [v for v in model.unobserved_value_vars if not v.name.endswith("__")]
    stored_names = [v.name for v in stored]
    logp_r, grad_r = clone_replace([logp, grad], replacements)
    stored_r = clone_replace(stored, replacements)
    inputs = [joined, *[data_inputs[n] for n in data_names]]
    # cvm_nogc keeps intermediate buffers between calls: measured 20-35% faster per gradient than
    # the default linker on these small graphs (the graph has hundreds of tiny ops).
    # The expand function runs once per draw (not per gradient): cheap rewrites suffice.
    with model:
        logp_fn = compile_pymc(inputs, [logp_r, grad_r], mode=Mode(linker="cvm_nogc", optimizer="fast_run"),
                               on_unused_input="ignore")
        expand_fn = compile_pymc(inputs, stored_r, mode=Mode(linker="cvm", optimizer="fast_compile"),
                                 on_unused_input="ignore")
    logp_fn.trust_input = True
    expand_fn.trust_input = True

    def flat(pt_dict: dict) -> np.ndarray:
        return np.concatenate([np.asarray(pt_dict[v.name], dtype=float).ravel() for v in value_vars])

    x0 = flat(point)
    stored_shapes = [tuple(np.shape(a)) for a in expand_fn(x0, *data_args(data_values))]

    def make_logp_func():
        fn = logp_fn.copy(share_memory=False)

        def logp_func(x, **data):
            value, g = fn(np.asarray(x, dtype=np.float64), *data_args(data))
            return float(value), np.asarray(g, dtype=np.float64, order="C")

        return logp_func

    def make_expand_func(seed1, seed2, chain):
        fn = expand_fn.copy(share_memory=False)

        def expand(x, **data):
            values = fn(np.asarray(x, dtype=np.float64), *data_args(data))
            return {n: np.asarray(v, dtype=np.float64, order="C").reshape(s)
                    for n, v, s in zip(stored_names, values, stored_shapes)}

        return expand

    init_lock = threading.Lock()  # the initial-point function is not thread-safe (shared RNG state)

    def make_initial_point(seed):
        with init_lock:
            return flat(init_point(int(seed) % (2**32)))

    coords = {}
    for name, vals in model.coords.items():
        import pandas as pd

        coords[name] = pd.Index(list(vals))
    dims = {n: tuple(d) for n, d in model.named_vars_to_dims.items() if n in stored_names}
    return from_pyfunc(
        ndim=n_dim,
        make_logp_fn=make_logp_func,
        make_expand_fn=make_expand_func,
        expanded_dtypes=[np.dtype("float64")] * len(stored_names),
        expanded_shapes=stored_shapes,
        expanded_names=stored_names,
        coords=coords,
        dims=dims,
        shared_data=data_values,
        make_initial_point_fn=make_initial_point,
    )


# -- sampling ------------------------------------------------------------------------------------

def _report(cb: ProgressCallback | None, message: str, fraction: float) -> None:
    if cb is not None:
        cb(message, float(min(max(fraction, 0.0), 1.0)))


def _finished(sampler) -> bool:
    try:
        return bool(sampler.is_finished)
    except TimeoutError:  # nutpie raises this while the chains still hold the sampler
        return False


def iterations_done(snapshot) -> int:
    """Iterations (warm-up and kept draws) the chains of a nutpie snapshot have run. A snapshot pads
    every chain to the longest with NaN, and with more chains than cores some chains have not
    started: counting ``draw × chain`` said "8000 of 8000" halfway through a 4-chain fit on 2 cores."""
    done = 0
    for group in ("warmup_sample_stats", "sample_stats"):
        if group in snapshot.groups() and "step_size" in snapshot[group]:
            done += int(np.isfinite(snapshot[group]["step_size"].values).sum())
    return done


def _sample_nutpie(compiled, settings: SamplerSettings, data: dict[str, np.ndarray], cb: ProgressCallback | None,
                   store_unconstrained: bool = False):
    import nutpie

    model = compiled.with_data(**data) if data else compiled
    cores = max(1, min(settings.chains, os.cpu_count() or 1))
    sampler = nutpie.sample(
        model,
        chains=settings.chains,
        draws=settings.draws,
        tune=settings.tune,
        seed=settings.seed,
        cores=cores,
        save_warmup=cb is not None,  # warm-up draws are only kept to report progress
        progress_bar=False,
        target_accept=settings.target_accept,
        blocking=False,
        store_unconstrained=store_unconstrained,
    )
    if cb is not None:
        total = settings.chains * (settings.draws + settings.tune)
        last = time.perf_counter()
        while not _finished(sampler):
            time.sleep(0.1)
            if time.perf_counter() - last > 1.0:
                last = time.perf_counter()
                try:
                    with warnings.catch_warnings():  # an early snapshot has no draws yet; ArviZ says so
                        warnings.simplefilter("ignore", UserWarning)
                        snap = sampler.inspect()
                    done = iterations_done(snap)
                except Exception:  # a progress snapshot must never break the fit
                    continue
                _report(cb, f"sampling: {done} of {total} iterations", 0.05 + 0.9 * done / total)
    idata = sampler.wait()
    for group in [g for g in idata.groups() if g.startswith("warmup")]:
        del idata[group]
    return idata


def _sample_pymc(model, settings: SamplerSettings, cb: ProgressCallback | None):
    import pymc as pm

    total = settings.chains * (settings.draws + settings.tune)
    first: list[float] = []
    count = [0]

    def callback(trace, draw):
        if not first:
            first.append(time.perf_counter())
        count[0] += 1
        if cb is not None and count[0] % 50 == 0:
            _report(cb, f"sampling: {count[0]} of {settings.chains * settings.draws} draws", 0.05 + 0.9 * count[0] / total)

    with model:
        idata = pm.sample(
            draws=settings.draws,
            tune=settings.tune,
            chains=settings.chains,
            cores=1,
            random_seed=settings.seed,
            target_accept=settings.target_accept,
            progressbar=False,
            compute_convergence_checks=False,
            callback=callback,
            idata_kwargs={"log_likelihood": False},
        )
    return idata, (first[0] if first else None)


def _finish_idata(idata, counts: CountsLike, settings: FitSettings, structure: str) -> None:
    """Uniform posterior across engines: drop transformed variables, add ``rank``, the counts
    (``constant_data``: ``counts`` [judge, candidate, level], ``included`` [judge, candidate]) and
    attributes (settings, scale, families, data hash) so the InferenceData describes itself."""
    import json

    import xarray as xr

    post = idata.posterior
    drop = [v for v in post.data_vars if v.endswith("__")]
    if drop:
        idata.posterior = post.drop_vars(drop)
    idata.posterior["rank"] = xr.DataArray(
        ranks_from_scores(idata.posterior["expected_score"].values),
        dims=("chain", "draw", "candidate"),
        coords={"candidate": list(counts.candidates)},
    )
    constant = xr.Dataset(
        {
            "counts": (("judge", "candidate", "level"), np.asarray(counts.N, dtype=np.int64)),
            "included": (("judge", "candidate"), np.asarray(counts.included, dtype=bool)),
        },
        coords={"judge": list(counts.judges), "candidate": list(counts.candidates),
                "level": list(counts.scale.labels)},
    )
    for group in ("constant_data", "observed_data"):
        if group in idata.groups():
            del idata[group]
    idata.add_groups({"constant_data": constant})
    idata.posterior.attrs.update({
        **_settings_attrs(settings),
        "structure_key": structure,
        "scale": json.dumps(counts.scale.to_dict()),
        "families": json.dumps(dict(getattr(counts, "families", {}) or {}), sort_keys=True),
        "data_hash": data_hash(counts),
    })
    ensure_rater_deviation(idata, counts, settings.seed)


def _settings_attrs(settings: FitSettings) -> dict[str, str]:
    import json

    return {"engine": settings.engine, "settings": json.dumps(settings.to_dict(), sort_keys=True),
            "settings_key": settings.key()}


def longest_chains_factor(settings: FitSettings) -> int:
    """How many times ``settings.draws`` the longest chains of a fit with these settings may be: the
    fast engine's extra rounds double the chain length each (2^extra_rounds); else 1. Advice to
    sample longer goes beyond this, never repeats what the engine already tried."""
    return 2 ** int(settings.extra_rounds) if settings.engine == "fast" else 1


def _fit_fast(counts: CountsLike, settings: FitSettings, cb: ProgressCallback | None,
              started: float | None = None) -> FitResult:
    """The ``'fast'`` engine: mode search, then nutpie over the numba log density, one sampling run
    per starting mode (chains of different runs have different seeds), concatenated over chains.

    When the chains have not converged and some of them explored a mode holding a negligible share
    of the posterior mass (less than e^-NEGLIGIBLE_LOG_MASS of the heaviest mode's, by bridge
    sampling, :mod:`simplex_core.inference.mode_mass`: the optimiser's best maximum is not always the
    posterior's), every chain starts afresh from the modes that hold the mass (``timing
    ['restarted_chains']`` = how many chains were in light modes); the posterior is unchanged.
    When chains started at different modes of comparable mass have not converged, the posterior is
    sampled again by parallel tempering (:mod:`simplex_core.inference.tempering`; ``timing['sampler']``),
    whose chains cross between modes. When chains from a single start have not converged and more
    draws can help (no divergences), up to ``settings.extra_rounds`` more rounds of
    ``settings.chains`` chains are sampled from the same start with new seeds, each round's chains
    twice as long (warm-up and draws) as the last's and replacing them: after r extra rounds the
    posterior has the chains asked for with 2^r times the draws (``timing['rounds']`` says how many
    rounds ran; :func:`longest_chains_factor` the most it can be). Divergent transitions make it
    sample afresh with smaller steps (:data:`DIVERGENCE_RETRY_ACCEPT`); a retry free of them that
    has still not converged gets the extra rounds, at the retry's acceptance target."""

    t0 = time.perf_counter() if started is None else started  # from the import of fast_density on
    reused = _FAST_LOADED.is_set()
    _report(cb, "preparing the model" if reused else
            "loading the compiled log density (first fit in this process; compiled once per machine)", 0.0)
    from simplex_core.model import fast_density
    from simplex_core.inference import fast_engine

    fast_density.warm_up()  # loads (or, the first time on a machine, compiles) the numba functions
    _FAST_LOADED.set()
    compile_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    _report(cb, "locating the posterior's modes (optimiser)", 0.02)
    modes = fast_engine.find_modes(counts, settings.model, seed=settings.seed)
    groups = fast_engine.chain_starts(modes, settings.chains)
    modes_s = time.perf_counter() - t1
    models = [fast_engine.compile_fast(counts, settings.model, start=start) for start, _ in groups]
    runs: list = []  # round by round, one sampling run per starting mode
    unconstrained: list = []  # the runs' draws in unconstrained coordinates, [chain, draw, n] each

    def new_round() -> None:  # a round's runs replace the last round's
        runs.clear()
        unconstrained.clear()

    def sample_round(r: int, lo: float, hi: float, note: str, base: FitSettings = settings) -> None:
        done_chains = 0
        for g, ((_, n_chains), model) in enumerate(zip(groups, models)):
            a = lo + (hi - lo) * done_chains / settings.chains
            width = (hi - lo) * n_chains / settings.chains

            def scaled(message: str, fraction: float, a=a, width=width, g=g) -> None:
                where = f" (mode {g + 1} of {len(groups)})" if len(groups) > 1 else ""
                _report(cb, note + message + where, a + width * (fraction - 0.05) / 0.9)

            scaled(f"sampling {n_chains} chain{'s' if n_chains > 1 else ''}", 0.05)
            seed = settings.seed + 7919 * g + 104729 * r
            run = _sample_nutpie(model, base.sampler.replace(chains=n_chains, seed=seed), {},
                                 scaled if cb is not None else None, store_unconstrained=True)
            unconstrained.append(np.asarray(run.sample_stats["unconstrained_draw"].values))
            runs.append(_with_boost_log(run, counts, settings.model.prior))
            done_chains += n_chains

    sample_round(0, 0.05, 0.90 if len(groups) == 1 else 0.30, "")
    idata = _pooled(runs)
    diagnostics = diagnose(idata, tuple(counts.candidates))
    rounds, tempered_s, tempering_load_s, restarted = 1, 0.0, 0.0, 0
    reference_thin = 0  # > 0: the posterior comes from tempering towards a reference, at this thinning
    mode_starts: list[np.ndarray] = []  # one point per mode the chains sat in, when they sat in several
    if not diagnostics.converged and diagnostics.divergences == 0 and diagnostics.max_rhat > SEPARATE_MODES_RHAT:
        # Chains that disagree may sit in a mode without mass (the optimiser's best maximum is not
        # always the posterior's: see simplex_core.inference.mode_mass): weigh the region each chain explored
        # and start every chain afresh where the mass is. Same posterior; only the starts change.
        mode_starts, restarted = _heavy_modes(counts, settings, np.concatenate(unconstrained, axis=0),
                                              np.asarray(idata.posterior["expected_score"].values))
        if restarted:
            _report(cb, f"{restarted} chain(s) sat in a mode holding under {math.exp(-fast_engine.NEGLIGIBLE_LOG_MASS):.1%} "
                        "of the posterior mass (bridge sampling): sampling again from the modes that hold it", 0.30)
            groups = fast_engine.deal_chains(mode_starts, int(settings.chains))
            models = [fast_engine.compile_fast(counts, settings.model, start=start) for start, _ in groups]
            new_round()
            sample_round(RESTART_SEED_ROUND, 0.30, 0.90 if len(groups) == 1 else 0.50, "")
            idata = _pooled(runs)
            diagnostics = diagnose(idata, tuple(counts.candidates))
            mode_starts = [] if diagnostics.converged else _mode_starts(
                np.concatenate(unconstrained, axis=0), np.asarray(idata.posterior["expected_score"].values))
    last = settings  # the settings of the last round sampled (its chain lengths)

    def longer_rounds(base: FitSettings) -> None:
        # Each extra round runs chains twice as long as the last (warm-up and draws) and replaces
        # them: a posterior that mixes slowly needs longer chains more than more of them (measured on
        # WildBench: 12 pooled chains of 1000 gave R-hat 1.013, 4 chains of 2000 after 2000 of
        # warm-up 1.007; pooling a round with shorter chains held R-hat at 1.012), and short chains
        # kept alongside would hold R-hat up.
        nonlocal idata, diagnostics, rounds, last
        # one chain has no R-hat however long it runs: no extra rounds for it
        while (not diagnostics.converged and rounds <= settings.extra_rounds and diagnostics.divergences == 0
               and settings.chains >= 2):
            step = 0.1 / settings.extra_rounds
            new_round()
            last = base.replace(draws=2**rounds * settings.draws, tune=2**rounds * settings.tune)
            sample_round(rounds, 0.9 + step * (rounds - 1), 0.9 + step * rounds,
                         f"not converged yet ({first_failure(diagnostics.message)}): "
                         f"chains {2**rounds} times as long, ", base=last)
            rounds += 1
            idata = _pooled(runs)
            diagnostics = diagnose(idata, tuple(counts.candidates))

    tempered_starts = [start for start, _ in groups] if len(groups) > 1 else mode_starts
    if not diagnostics.converged and len(tempered_starts) > 1:
        # Modes of comparable mass and chains that disagree (started in separate modes, or drifted
        # into them from one start): NUTS cannot cross between them (more rounds make it worse,
        # measured on GPQA-like replicates); parallel tempering can.
        from simplex_core.inference.tempering import TEMPERED_THIN, sample_tempered

        nuts_note = diagnostics.message
        n_modes = len(tempered_starts)
        _report(cb, f"the posterior has {n_modes} separate modes that NUTS chains cannot cross: sampling them "
                    "together by parallel tempering (slower: about 15 s on GPQA-size data)", 0.30)

        def tempered_progress(lo: float, hi: float, note: str = "") -> ProgressCallback | None:
            # the tempered chains report about once a second; a cancel raised here stops them
            if cb is None:
                return None
            return lambda message, fraction: _report(cb, note + message, lo + (hi - lo) * fraction)

        t2 = time.perf_counter()
        _tempering_kernels_ready(cb)
        tempering_load_s = time.perf_counter() - t2
        t2 = time.perf_counter()
        tempered_draws: list[np.ndarray] = []  # the last likelihood-tempered run's, for a reference
        idata = sample_tempered(counts, settings, tempered_starts, thin=TEMPERED_THIN,
                                progress_callback=tempered_progress(0.30, 0.90), unconstrained_out=tempered_draws)
        tempered_s = time.perf_counter() - t2
        diagnostics = _explain_tempering(diagnose(idata, tuple(counts.candidates)), n_modes, nuts_note)
        # Tempered chains that cross between the modes too rarely yet: chains twice as long, as the
        # extra rounds of NUTS (measured: HANNA empathy at ω = 4, β_max = 0, R-hat 1.014 after one run),
        # but only when they came close: chains that never cross (HANNA coherence at ω = 0, β_max = 0:
        # R-hat 1.384 after one run, 1.109 after three more rounds, 703 s) do not get there by length.
        while (not diagnostics.converged and rounds <= settings.extra_rounds and diagnostics.divergences == 0
               and diagnostics.max_rhat <= TEMPERED_ROUNDS_RHAT):
            note = (f"not converged yet ({first_failure(diagnostics.message)}): "
                    f"tempered chains {2**rounds} times as long, ")
            _report(cb, note.removesuffix(", "), 0.9)
            last = settings.replace(draws=2**rounds * settings.draws, tune=2**rounds * settings.tune)
            t2 = time.perf_counter()
            step = 0.1 / max(1, settings.extra_rounds)
            tempered_draws.clear()
            idata = sample_tempered(counts, last, tempered_starts, thin=TEMPERED_THIN,
                                    progress_callback=tempered_progress(0.9 + step * (rounds - 1), 0.9 + step * rounds, note),
                                    unconstrained_out=tempered_draws)
            tempered_s += time.perf_counter() - t2
            rounds += 1
            diagnostics = _explain_tempering(diagnose(idata, tuple(counts.candidates)), n_modes, nuts_note)
        if not diagnostics.converged and diagnostics.divergences == 0 and unconstrained:
            t2 = time.perf_counter()
            found = _reference_tempering(counts, settings, tempered_starts,
                                         np.concatenate(unconstrained + tempered_draws, axis=0),
                                         diagnostics, n_modes, nuts_note, cb)
            tempered_s += time.perf_counter() - t2
            if found is not None:
                idata, diagnostics, reference_thin = found
    else:
        longer_rounds(settings)
    target_accept_used = float(settings.target_accept)
    for retry_accept in DIVERGENCE_RETRY_ACCEPT:
        if not diagnostics.divergences or retry_accept <= target_accept_used:
            continue
        # Divergent transitions: the leapfrog steps were too long for a region of high curvature
        # (measured: single-judge binary posteriors, whose non-identified ridge ends in a funnel where
        # a candidate's π reaches 0 or 1). Draws next to a divergence are biased, so the posterior is
        # sampled afresh with a higher acceptance target (smaller steps), never pooled with them.
        first = first_failure(diagnostics.message)
        _report(cb, f"{first}: sampling again with smaller steps (target acceptance {retry_accept:g})", 0.9)
        retry = last.replace(target_accept=retry_accept)
        if tempered_s:
            from simplex_core.inference.tempering import TEMPERED_THIN, sample_tempered

            t2 = time.perf_counter()
            again = sample_tempered(counts, retry, tempered_starts, thin=TEMPERED_THIN,
                                    progress_callback=tempered_progress(0.9, 0.95, f"{first}: smaller steps, "))
            tempered_s += time.perf_counter() - t2
            again_diagnostics = _explain_tempering(diagnose(again, tuple(counts.candidates)), n_modes, nuts_note)
        else:
            new_round()
            sample_round(0, 0.9, 0.95, "", base=retry)
            again = _pooled(runs)
            again_diagnostics = diagnose(again, tuple(counts.candidates))
        if again_diagnostics.divergences < diagnostics.divergences:
            idata, diagnostics, target_accept_used = again, again_diagnostics, retry_accept
    if not tempered_s and target_accept_used > settings.target_accept:
        # the smaller steps removed the divergences but the chains may still be short (measured:
        # per-judge TriviaQA V1 integrated, R-hat 1.011 after the retry): the extra rounds, at the
        # retry's acceptance target
        longer_rounds(settings.replace(target_accept=target_accept_used))
    compile_s += tempering_load_s
    sample_s = time.perf_counter() - t1 - tempering_load_s
    _finish_idata(idata, counts, settings, structure_key(counts, settings.model))
    _report(cb, "done: " + diagnostics.message, 1.0)
    return FitResult(
        idata=idata,
        diagnostics=diagnostics,
        timing={"compile_s": float(compile_s), "sample_s": float(sample_s), "reused_compiled": bool(reused),
                "engine_used": "fast", "modes_s": float(modes_s), "modes": len(modes),
                "start_modes": len(groups), "rounds": rounds, "tempered_s": float(tempered_s),
                "restarted_chains": restarted,
                "target_accept": target_accept_used,
                "sampler": ("parallel tempering with a reference" if reference_thin else
                            "parallel tempering" if tempered_s else "nuts"),
                "reference_thin": reference_thin,
                # after tempering towards a reference too, longer runs are not the remedy either
                "uncrossed_modes": bool(tempered_s and not diagnostics.converged
                                        and (reference_thin or not diagnostics.max_rhat <= TEMPERED_ROUNDS_RHAT))},
        settings=settings,
        counts=counts,
    )


_FAST_LOADED = threading.Event()
_TEMPERING_WARMING = threading.Event()  # a worker's warm-up is loading (or compiling) the tempered sampler's kernels
_TEMPERING_LOADED = threading.Event()


@contextmanager
def _one_compiler_at_a_time(stage: str) -> Iterator[None]:
    """Held while a process loads or compiles one stage of the numba code: the fit workers start
    together, and two compiling the same code at once on a new machine take twice the CPU (about
    40 s each here) for nothing; the second waits and then loads what the first wrote to numba's
    on-disk cache, in about a second. The lock is a file lock (``fcntl.flock``), released by the
    kernel when a holder dies; without ``fcntl`` (not POSIX) there is no lock."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    import hashlib
    import tempfile

    where = hashlib.sha1(str(Path(__file__).resolve().parent).encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"simplex-judge-numba-{where}-{stage}.lock"
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_COMPILE_TEMPERING = ("import os\ntry:\n    os.setpriority(os.PRIO_PROCESS, 0, 19)\nexcept (AttributeError, OSError):\n"
                      "    pass\nfrom simplex_core.model import fast_density\nfast_density.warm_up_tempering()\n")


def warm_up_worker(ready: threading.Event) -> None:
    """The fit workers' warm-up (:mod:`simplex_core.jobs.worker` runs it in a thread at a worker's
    start): make the fast engine's numba code ready before a fit asks for it, and set ``ready`` as
    soon as fits can start; the tempered sampler's kernels follow, compiled in a child process.

    Why: loading takes about a second, but on a new machine (or a new clone: numba caches next to
    the code) the first fit compiled for about 20 s, and the first tempered fit 17 s more, inside
    the fit, where a cancel cannot reach (it is checked at progress reports). A background grid fit
    caught compiling when a visitor asked for a setting could not give way: its worker was
    restarted and the new one compiled again (an off-grid link on a new clone: 54 s to the fit).
    Done here, the compilation starts when the server does, the worker waits for it cancellably
    (:func:`simplex_core.jobs.worker.run_fit`), and one process compiles while the others wait to
    load its result (:func:`_one_compiler_at_a_time`).

    The tempered kernels compile in a child process, not in this thread: numba compiles under one
    lock per process, which ArviZ's import also takes (its numba ufuncs), so a fit that started
    while this thread compiled them waited 20 s for ``import arviz``."""
    with _one_compiler_at_a_time("density"):
        import arviz  # noqa: F401  (its import compiles numba ufuncs, under numba's lock)

        from simplex_core.model import fast_density

        fast_density.warm_up()
    _FAST_LOADED.set()
    ready.set()
    _TEMPERING_WARMING.set()
    try:
        with _one_compiler_at_a_time("tempering"):
            import subprocess
            import sys

            # cached: about a second of the child's imports; not: the compilation. At the lowest
            # priority, so that it takes what the fits leave of the CPU
            done = subprocess.run([sys.executable, "-c", _COMPILE_TEMPERING], cwd=Path(__file__).resolve().parents[2],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=900)
            if done.returncode:
                log.warning("compiling the tempered sampler's kernels failed: %s", done.stderr.strip()[-2000:])
    finally:
        _TEMPERING_LOADED.set()


def _tempering_kernels_ready(cb: ProgressCallback | None) -> None:
    """Make the tempered sampler's kernels ready in this process. While a worker's warm-up is
    compiling them, wait with a progress report every half second (where a cancel can stop the
    fit) instead of compiling them a second time, then load them from numba's cache."""
    from simplex_core.model import fast_density

    if _TEMPERING_WARMING.is_set():
        while not _TEMPERING_LOADED.wait(0.5):
            _report(cb, "loading the tempered sampler's compiled code (compiled once per machine: about 20 s the "
                        "first time)", 0.30)
    fast_density.warm_up_tempering()  # loads (or compiles, once per machine) on first use; at once if warm


def _reference_tempering(counts: CountsLike, settings: FitSettings, starts: list[np.ndarray], chain_draws: np.ndarray,
                         diagnostics: Diagnostics, n_modes: int, nuts_note: str, cb: ProgressCallback | None):
    """Tempering towards a reference fitted to the chains so far (:func:`simplex_core.inference.tempering.
    reference_from_draws` of ``chain_draws``: the NUTS chains and the likelihood-tempered ones), for
    modes that tempering the likelihood did not cross (``diagnostics``: that run's). Each run keeps
    ``settings.draws`` draws a chain and is longer than the last, by what its bulk ESS says a
    converged run needs (at least twice, at most ``REFERENCE_GROWTH`` times, every
    ``REFERENCE_MAX_THIN``-th iteration at most), for up to ``settings.extra_rounds`` more runs.
    Returns ``(idata, diagnostics, thin)`` of the last run when it has no divergences and a lower
    R-hat than ``diagnostics``, else None (the likelihood-tempered run stands)."""
    from simplex_core.inference.tempering import REFERENCE_REPLICAS, reference_from_draws, sample_tempered

    reference = reference_from_draws(chain_draws)
    best = None
    thin = REFERENCE_THIN
    found = diagnostics
    for r in range(int(settings.extra_rounds) + 1):
        iterations = f"{thin * settings.draws} iterations a chain"
        note = (f"tempered chains did not cross between the modes ({first_failure(diagnostics.message)}): "
                f"tempering towards a reference fitted to the chains so far ({REFERENCE_REPLICAS} replicas, "
                f"{iterations}), " if r == 0 else
                f"not converged yet ({first_failure(found.message)}): tempering towards the reference again, "
                f"{iterations}, ")
        _report(cb, note.removesuffix(", "), 0.9)
        step = 0.1 / (int(settings.extra_rounds) + 1)

        def progress(message: str, fraction: float, lo: float = 0.9 + step * r, note: str = note) -> None:
            _report(cb, note + message, lo + step * fraction)

        idata = sample_tempered(counts, settings, starts, replicas=REFERENCE_REPLICAS, thin=thin,
                                progress_callback=progress if cb is not None else None, reference=reference)
        found = _explain_tempering(diagnose(idata, tuple(counts.candidates)), n_modes, nuts_note)
        if found.divergences:
            break
        best = (idata, found, thin)
        if found.converged or thin >= REFERENCE_MAX_THIN:
            break
        # ESS grows about with the run's length, but a short run of chains that switch modes slowly
        # reads it low (HANNA engagement: a first run's ESS asked for every 58th iteration, and got
        # ESS 917 where 400 was needed): at most 8 times as long at a time
        needed = math.ceil(thin * ESS_MIN / max(found.min_ess_bulk, 1.0))
        thin = int(min(REFERENCE_MAX_THIN, max(2 * thin, min(needed, REFERENCE_GROWTH * thin))))
    if best is None or not best[1].max_rhat < diagnostics.max_rhat:
        return None
    return best


def _heavy_modes(counts: CountsLike, settings: FitSettings, draws: np.ndarray,
                 expected: np.ndarray) -> tuple[list[np.ndarray], int]:
    """``(starts, light chains)`` for the chains of ``draws`` (``[chain, draw, n]``, unconstrained),
    grouped into the modes they sat in by their ``expected`` scores (``[chain, draw, K]``,
    :mod:`simplex_core.inference.mode_mass`). ``starts``: a point of each mode that holds mass (its first
    chain's last draw; [] when all chains sat in one mode). ``light chains``: how many chains sat in
    modes holding less than e^-NEGLIGIBLE_LOG_MASS of the heaviest one's mass (0: none)."""
    from simplex_core.model import fast_density
    from simplex_core.inference import fast_engine
    from simplex_core.inference.mode_mass import chain_log_masses, heavy_modes, mode_log_masses, same_mode_clusters

    clusters = same_mode_clusters(expected)
    if len(clusters) < 2:
        return [], 0
    starts = _first_draws(draws, clusters)
    buf = fast_density.build_buffer(counts, settings.model)
    grad = np.zeros(draws.shape[-1])

    def log_density(x: np.ndarray) -> float:
        return float(fast_density.logp_grad(np.ascontiguousarray(x), grad, buf))

    log_mass, error = mode_log_masses(*chain_log_masses(draws, log_density, seed=settings.seed), clusters)
    heavy = heavy_modes(log_mass, error, fast_engine.NEGLIGIBLE_LOG_MASS)
    if heavy is None:
        return starts, 0
    return [starts[h] for h in heavy], sum(len(m) for i, m in enumerate(clusters) if i not in set(heavy))


def _mode_starts(draws: np.ndarray, expected: np.ndarray) -> list[np.ndarray]:
    """:func:`_first_draws` of the modes the chains sat in (grouped by their ``expected`` scores,
    :func:`simplex_core.inference.mode_mass.same_mode_clusters`); [] for one mode."""
    from simplex_core.inference.mode_mass import same_mode_clusters

    clusters = same_mode_clusters(expected)
    return _first_draws(draws, clusters) if len(clusters) > 1 else []


def _first_draws(draws: np.ndarray, clusters: list[list[int]]) -> list[np.ndarray]:
    """Per cluster of chains, a point of its mode to start chains from: its first chain's last draw."""
    return [draws[members[0], -1].copy() for members in clusters]


def _pooled(runs: list):
    """The sampling runs as one posterior, their chains side by side."""
    import arviz as az

    return runs[0] if len(runs) == 1 else az.concat(runs, dim="chain", reset_dim=True)

#: Chains disagree by sitting in separate modes, not by mixing slowly, only beyond this R-hat (measured
#: after the first round: chains in separate modes 1.29-1.5 on HANNA and TriviaQA V2; chains mixing
#: slowly in one mode 1.019, HANNA relevance at ω = 1, β_max = 0); divergent runs go to the divergence
#: retry instead.
SEPARATE_MODES_RHAT = 1.1
#: Tempered chains get the extra rounds only when their R-hat is at most this (see _fit_fast).
TEMPERED_ROUNDS_RHAT = 1.05
#: Tempering towards a reference (see _reference_tempering): the first run keeps every
#: REFERENCE_THIN-th iteration, later ones up to every REFERENCE_MAX_THIN-th. Measured on HANNA
#: coherence at ω = 0, β_max = 0 (4 chains of 1000 kept draws, 24 replicas, two cores): the first
#: run converged at seed 0 (71 s in all); seed 1 needed every 31st of 31,000 iterations (313 s).
#: With a reference from the NUTS chains alone, every 32nd gave R-hat 1.002 or 1.023 by seed (ESS
#: 684 / 198): the modes' shares mix slowly, so the longest run may be twice that.
REFERENCE_THIN = 4
REFERENCE_MAX_THIN = 64
REFERENCE_GROWTH = 8
#: The round number that seeds the chains restarted in the heavy modes (apart from the extra rounds').
RESTART_SEED_ROUND = 1000

#: Acceptance targets of the fresh runs after divergent transitions (engine ``'fast'``), tried in turn
#: while divergences remain; the run with the fewest divergences is kept.
DIVERGENCE_RETRY_ACCEPT = (0.95, 0.99)


def _with_boost_log(idata, counts: CountsLike, prior: str):
    """Add ``boost_log`` (judge) to a fast-engine posterior from its unconstrained draws, and drop
    those draws: the judge prior's β_max statistic that :mod:`simplex_core.inference.reweighting` needs (the
    prior's Dirichlets themselves are not stored)."""
    import xarray as xr

    from simplex_core.inference.reweighting import boost_log_from_unconstrained

    x = np.asarray(idata.sample_stats["unconstrained_draw"].values)  # [chain, draw, n]
    J, K, M = np.asarray(counts.N).shape
    scale = counts.scale
    boost = boost_log_from_unconstrained(x, J, K, M, scale.n_true, scale.true_index, prior)
    idata.posterior["boost_log"] = xr.DataArray(boost, dims=("chain", "draw", "judge"),
                                                coords={"judge": list(counts.judges)})
    idata.sample_stats = idata.sample_stats.drop_vars("unconstrained_draw")
    return idata


def _explain_tempering(diagnostics: Diagnostics, n_modes: int, nuts_note: str) -> Diagnostics:
    """Say that the posterior was sampled by parallel tempering because NUTS chains started in its
    ``n_modes`` modes disagreed (``nuts_note``: NUTS's own diagnostics)."""
    import dataclasses

    why = (f"the posterior has {n_modes} separate modes (often: which judge is the noisy one) and NUTS chains "
           f"could not cross between them ({first_failure(nuts_note)}), so it was "
           "sampled by parallel tempering, whose chains visit every mode in proportion to its mass")
    if diagnostics.converged:
        message = diagnostics.message.rstrip(".") + f"; {why}."
    elif diagnostics.max_rhat <= TEMPERED_ROUNDS_RHAT:
        message = diagnostics.message.rstrip(".") + f". Note: {why}; more draws give its chains more crossings."
    else:
        message = diagnostics.message.rstrip(".") + f". Note: {why}; here they did not cross between them."
    return dataclasses.replace(diagnostics, message=message)


def fit_model(
    counts: CountsLike,
    settings: FitSettings = FitSettings(),
    progress_callback: ProgressCallback | None = None,
) -> FitResult:
    """Fit the model to the counts.

    Parameters
    ----------
    counts
        The count tensor (:class:`simplex_core.data.views.Counts`).
    settings
        :class:`~simplex_core.model.definition.FitSettings`.
    progress_callback
        Optional ``callback(message, fraction)`` called from this thread while compiling and sampling.

    Returns
    -------
    FitResult
        Posterior with ``rank`` added, diagnostics and timing.
    """
    check_data_view(counts, settings)
    check_fit_size(counts.scale)
    if settings.engine == "fast":
        t_import = time.perf_counter()
        import simplex_core.model.fast_density  # noqa: F401  the first import loads (or compiles) the C callbacks

        return _fit_fast(counts, settings, progress_callback, started=t_import)
    with _CACHE_LOCK:
        known = (settings.engine, structure_key(counts, settings.model)) in _CACHE
    _report(progress_callback, "preparing the model" if known else
            "compiling the model (first fit of this shape in this process; later fits reuse it)", 0.0)
    t0 = time.perf_counter()
    compiled, reused = _get_compiled(counts, settings)
    compile_s = 0.0 if reused else time.perf_counter() - t0
    data = model_data(counts, settings.model)
    _report(progress_callback, "sampling", 0.05)
    with compiled.lock:  # one sampling run per compiled model at a time (the model's data are set)
        # The initial-point function reads the model's data (support points depend on ω, β_max):
        # set them so a reused model starts exactly where a freshly built one would.
        import pymc as pm

        pm.set_data(data, model=compiled.model)
        t1 = time.perf_counter()
        if settings.engine == "pymc":
            idata, first_draw = _sample_pymc(compiled.obj, settings.sampler, progress_callback)
            t2 = time.perf_counter()
            if first_draw is not None:  # pm.sample compiles its functions before the first draw
                compile_s += first_draw - t1
                t1 = first_draw
        else:
            idata = _sample_nutpie(compiled.obj, settings.sampler, data, progress_callback)
            t2 = time.perf_counter()
    sample_s = t2 - t1

    _finish_idata(idata, counts, settings, compiled.structure)
    diagnostics = diagnose(idata, tuple(counts.candidates))
    _report(progress_callback, "done: " + diagnostics.message, 1.0)
    return FitResult(
        idata=idata,
        diagnostics=diagnostics,
        timing={"compile_s": float(compile_s), "sample_s": float(sample_s), "reused_compiled": bool(reused),
                "engine_used": settings.engine},
        settings=settings,
        counts=counts,
    )
