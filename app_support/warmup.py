"""Warm a freshly started server before its first visitor (``serve.py`` runs this at start-up).

Why (measured with ``bench/open_app.py``): a visitor opening a freshly started server
waited about 10 s for the ranking, against 4 s on every later visit. The difference is work a
server process does once: importing ArviZ, SciPy, Plotly and the page modules, loading and
validating the default dataset, reading the precomputed posterior, running the baselines.
:func:`warm_default_view` does exactly the calls the Rankings page makes for a new visitor, through
the same Streamlit caches (``st.cache_data`` / ``st.cache_resource`` are shared by every session of
a process), so the first visitor finds them done.
"""

from __future__ import annotations

import gc
import importlib
import logging
import threading
import time

from streamlit.logger import get_logger

_LOG = get_logger("simplex_judge.warmup")  # Streamlit's handler: the line shows in the server's output

#: What the pages import on a first visit; imported here so a visitor does not pay for it.
MODULES = (
    "arviz", "scipy.stats", "plotly.graph_objects", "pandas",
    "simplex_core.methods.baselines", "simplex_core.summaries.evaluation", "simplex_core.figures", "simplex_core.summaries.posterior_tables",
    "simplex_core.model.geometry", "simplex_core.jobs", "simplex_core.inference.fitting", "simplex_core.studies.sensitivity",
    "app_support.page_parts", "app_support.results", "app_support.downloads", "app_support.guide_links",
)

def warm_default_view() -> dict[str, float]:
    """Import the page modules and fill the caches of the default view; returns seconds per step."""
    timings: dict[str, float] = {}
    t = time.perf_counter()
    for name in MODULES:
        importlib.import_module(name)
    timings["imports"] = time.perf_counter() - t

    from . import data_access as da
    from . import fits, results
    from .sidebar import build_context
    from .state import DEFAULTS, K

    t = time.perf_counter()
    ctx = build_context(state={K.DATASET: da.default_dataset_name(), **DEFAULTS})
    if ctx.table is None or ctx.settings is None:
        return timings
    table, settings = ctx.table, ctx.settings
    key = da.table_key(table)
    da.truth_ranks(table, key)
    timings["dataset"] = time.perf_counter() - t

    t = time.perf_counter()
    view = fits.get_fit(table, settings, submit=False)
    if view.result is not None:
        results.bayesian_method_result(view.result, view.result_key)
        results.ppc_table(view.result, view.result_key, view.counts)  # the misfit sentence beside the ranking
    from .approximate import NEAREST, source_draws

    for omega in (settings.omega, 1.0):  # the sources of the first slider moves, ω = 0 and ω > 0
        source_draws(view.counts, settings.replace(omega=omega), nearest=NEAREST)
    timings["posterior"] = time.perf_counter() - t

    t = time.perf_counter()
    da.baseline_results(table, key, ctx.self_exclusion)
    timings["baselines"] = time.perf_counter() - t
    return timings


#: Allocations between collections of the youngest generation, once the server is warm (Python: 700).
YOUNG_GENERATION = 20_000


def freeze_long_lived() -> None:
    """Move every object alive now (modules, the warm caches: about 350k objects) out of reach of
    Python's cyclic garbage collector. Why (measured with a gc callback
    in the server during ``bench.app_latency``): a full collection walked them all, 0.26-0.40 s on
    the script thread, and when it fell inside a slider move's page run the ranking came that much
    later. Objects frozen here are still freed by reference counting; only cycles among them that
    become garbage later stay (the imports and warm caches live as long as the server anyway).

    Then the youngest generation is made larger (:data:`YOUNG_GENERATION`): with Python's default
    of 700 allocations, the objects made since the warm-up still got full collections of
    0.06-0.13 s inside 4 of 40 slider moves' page runs (a gc callback in the server, 2026-11-27
    night). Every collection, the full ones included, comes about 30 times less often; cyclic
    garbage waits a little longer to be freed."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION, older, oldest)


def start_in_background() -> threading.Thread:
    """Run :func:`warm_default_view` on a daemon thread (the server accepts visitors meanwhile: one
    who comes early waits only for what is left). A failure is logged, never raised: the pages
    do the same work themselves and show any error in plain words."""
    def run() -> None:
        # Cached functions called off a script thread warn once per call that there is no script run
        # context; here that is expected (nothing is drawn), so keep the server's output clean.
        logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)
        t0 = time.perf_counter()
        try:
            steps = warm_default_view()
            _LOG.info("warm-up done in %.1f s (%s)", time.perf_counter() - t0,
                      ", ".join(f"{k} {v:.1f} s" for k, v in steps.items()))
            freeze_long_lived()
        except Exception:  # noqa: BLE001 — the first visitor then does the work, and sees any error
            _LOG.exception("warm-up failed; the first visitor will load the default view instead")

    # Dask first, here on the starting thread: imported for the first time by two threads at once
    # (this warm-up through xarray, a visitor's first fit through the fit manager) it came out
    # half-initialised ("cannot import name 'annotate' from partially initialized module
    # 'dask.base'", seen in a browser test's server log) and no fit could start in that process.
    importlib.import_module("dask")
    importlib.import_module("distributed")
    thread = threading.Thread(target=run, name="simplex-judge-warmup", daemon=True)
    thread.start()
    return thread
