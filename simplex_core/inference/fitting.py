"""Posterior inference: :func:`fit_model`, the one entry point, which checks the counts against the
settings and hands them to an engine.

What a fit returns and its diagnostics are in :mod:`~simplex_core.inference.fit_result`; engine
``'fast'``'s steps in :mod:`~simplex_core.inference.fast_fit`; the compiled samplers of the other
engines in :mod:`~simplex_core.inference.compiled_models`; the sampling runs and the uniform posterior
in :mod:`~simplex_core.inference.sampling`; a worker's warm-up in :mod:`~simplex_core.inference.warm_up`.

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

import time

from simplex_core.model.definition import CountsLike, FitSettings, check_data_view, check_fit_size, model_data, structure_key
from simplex_core.inference.compiled_models import get_compiled, is_compiled
from simplex_core.inference.fast_fit import fit_fast
from simplex_core.inference.fit_result import FitResult, ProgressCallback, diagnose
from simplex_core.inference.sampling import finish_idata, report_progress, sample_nutpie, sample_pymc
# A fit worker looks for ``warm_up_worker`` in its fit function's module (simplex_core.jobs.worker):
# fit_model's warm-up is named here.
from simplex_core.inference.warm_up import warm_up_worker as warm_up_worker



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

        return fit_fast(counts, settings, progress_callback, started=t_import)
    known = is_compiled(settings.engine, structure_key(counts, settings.model))
    report_progress(progress_callback, "preparing the model" if known else
            "compiling the model (first fit of this shape in this process; later fits reuse it)", 0.0)
    t0 = time.perf_counter()
    compiled, reused = get_compiled(counts, settings)
    compile_s = 0.0 if reused else time.perf_counter() - t0
    data = model_data(counts, settings.model)
    report_progress(progress_callback, "sampling", 0.05)
    with compiled.lock:  # one sampling run per compiled model at a time (the model's data are set)
        # The initial-point function reads the model's data (support points depend on ω, β_max):
        # set them so a reused model starts exactly where a freshly built one would.
        import pymc as pm

        pm.set_data(data, model=compiled.model)
        t1 = time.perf_counter()
        if settings.engine == "pymc":
            idata, first_draw = sample_pymc(compiled.obj, settings.sampler, progress_callback)
            t2 = time.perf_counter()
            if first_draw is not None:  # pm.sample compiles its functions before the first draw
                compile_s += first_draw - t1
                t1 = first_draw
        else:
            idata = sample_nutpie(compiled.obj, settings.sampler, data, progress_callback)
            t2 = time.perf_counter()
    sample_s = t2 - t1

    finish_idata(idata, counts, settings, compiled.structure)
    diagnostics = diagnose(idata, tuple(counts.candidates))
    report_progress(progress_callback, "done: " + diagnostics.message, 1.0)
    return FitResult(
        idata=idata,
        diagnostics=diagnostics,
        timing={"compile_s": float(compile_s), "sample_s": float(sample_s), "reused_compiled": bool(reused),
                "engine_used": settings.engine},
        settings=settings,
        counts=counts,
    )
