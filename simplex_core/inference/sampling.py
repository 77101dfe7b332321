"""Sampling runs every engine shares: nutpie's and PyMC's samplers with progress reports
(:func:`sample_nutpie`, :func:`sample_pymc`), and the uniform posterior every engine returns
(:func:`finish_idata`: ranks, counts and the settings in its attributes)."""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

from simplex_core.inference.rater_deviation import ensure_rater_deviation
from simplex_core.model.ranks import ranks_from_scores
from simplex_core.inference.fit_identity import data_hash
from simplex_core.model.settings import CountsLike, FitSettings, SamplerSettings
from simplex_core.inference.fit_result import ProgressCallback


# -- sampling ------------------------------------------------------------------------------------

def report_progress(cb: ProgressCallback | None, message: str, fraction: float) -> None:
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


def follow_sampler(sampler, report=None):
    """Wait for a non-blocking nutpie ``sampler``, calling ``report(iterations done)`` about once a second.
    Whatever ``report`` raises (a cancel) stops the chains at once and is raised again. Returns the
    InferenceData without its warm-up groups (kept only to count progress)."""
    try:
        last = time.perf_counter()
        while report is not None and not _finished(sampler):
            time.sleep(0.1)
            if time.perf_counter() - last > 1.0:
                last = time.perf_counter()
                try:
                    with warnings.catch_warnings():  # an early snapshot has no draws yet; ArviZ says so
                        warnings.simplefilter("ignore", UserWarning)
                        done = iterations_done(sampler.inspect())
                except Exception:  # noqa: BLE001 — a progress snapshot must never break the fit
                    continue
                report(done)
    except BaseException:
        sampler.cancel()
        raise
    idata = sampler.wait()
    for group in [g for g in idata.groups() if g.startswith("warmup")]:
        del idata[group]
    return idata


def sample_nutpie(compiled, settings: SamplerSettings, data: dict[str, np.ndarray], cb: ProgressCallback | None,
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
    total = settings.chains * (settings.draws + settings.tune)
    report = None if cb is None else (
        lambda done: report_progress(cb, f"sampling: {done} of {total} iterations", 0.05 + 0.9 * done / total))
    return follow_sampler(sampler, report)


def sample_pymc(model, settings: SamplerSettings, cb: ProgressCallback | None):
    import pymc as pm

    total = settings.chains * (settings.draws + settings.tune)
    first: list[float] = []
    count = [0]

    def callback(trace, draw):
        if not first:
            first.append(time.perf_counter())
        count[0] += 1
        if cb is not None and count[0] % 50 == 0:
            report_progress(cb, f"sampling: {count[0]} of {settings.chains * settings.draws} draws", 0.05 + 0.9 * count[0] / total)

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


def finish_idata(idata, counts: CountsLike, settings: FitSettings, structure: str) -> None:
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

