"""Serve Simplex Judge with a warm start: ``streamlit run serve.py`` (or ``python serve.py``).

The app itself is ``app.py`` (``streamlit run app.py`` works too). This launcher wraps it in
Streamlit's ASGI ``st.App`` so that the server, as soon as it starts, imports the page modules and
loads the default dataset, its precomputed posterior and its baselines into the shared caches
(:mod:`app_support.warmup`): the first visitor then sees the ranking as fast as every later one
(measured with ``bench/open_app.py``; see docs/BENCHMARKS.md).

The server listens on 127.0.0.1 only (``.streamlit/config.toml``): nobody else can connect until
you open it on purpose, with ``streamlit run serve.py --server.address 0.0.0.0`` or
``python serve.py --public`` (every interface) / ``python serve.py --address ADDR``.

Fits run on a Dask ``LocalCluster`` of min(2, cores) worker processes (``SIMPLEX_JUDGE_FIT_WORKERS``
to change), or on an existing cluster: ``python serve.py --scheduler tcp://HOST:PORT`` (or the
environment variable ``SIMPLEX_JUDGE_SCHEDULER``).
"""

from __future__ import annotations

from contextlib import asynccontextmanager

import streamlit as st


@asynccontextmanager
async def warm_start(_app):
    from streamlit.runtime.pages_manager import PagesManager

    from app_support.warmup import start_in_background

    # app.py routes with st.navigation, which sets this flag on its first run; until then Streamlit
    # treats the pages/ folder as old-style pages, so a first visitor's link to /data or
    # /sensitivity?omega=2 on a fresh server got "Page not found" and the main page. Set it now.
    PagesManager.uses_pages_directory = False
    _log_fits()
    start_in_background()  # a thread: the server takes visitors at once
    yield


def _log_fits() -> None:
    """One line per fit started, landed, cancelled or paused, and per session that left, on the
    server's console (the operator's view of who waits for what)."""
    import logging

    jobs = logging.getLogger("simplex_core.jobs")
    if not jobs.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        jobs.addHandler(handler)
        jobs.setLevel(logging.INFO)


def _middleware() -> list:
    from starlette.middleware import Middleware

    from app_support.boot_page import BootPlaceholder, DefaultPageRedirect
    from app_support.static_assets import CompressedAssets

    # a new tab shows what is coming at once, before Streamlit's 9 MB of scripts have run; those
    # scripts come compressed, from memory (eight new tabs at once had the server busy serving them);
    # a link to the default page by its name opens it at the root
    return [Middleware(DefaultPageRedirect), Middleware(BootPlaceholder), Middleware(CompressedAssets)]


def _routes() -> list:
    from app_support.live_progress import progress_route
    from app_support.plotly_figure import bundle_route

    # a waiting page's progress bar reads its fit's status here, without reruns; figures load the
    # lightest Plotly bundle that draws them from here (1.5 MB where Streamlit's chart module is 4.7 MB)
    return [progress_route(), bundle_route()]


app = st.App("app.py", lifespan=warm_start, middleware=_middleware(), routes=_routes())

if __name__ == "__main__":
    import argparse
    import os

    parser = argparse.ArgumentParser(description="Serve Simplex Judge (on 127.0.0.1 unless told otherwise).")
    parser.add_argument("--public", action="store_true", help="listen on every interface (0.0.0.0): others can connect")
    parser.add_argument("--address", help="listen on this address instead of 127.0.0.1")
    def port(text: str) -> int:  # argparse's own message, not the server's bind() traceback
        if not text.isdigit() or not 1 <= int(text) <= 65535:
            raise argparse.ArgumentTypeError(f"a port is a whole number from 1 to 65535; got {text!r}")
        return int(text)

    parser.add_argument("--port", type=port, help="port (default 8501)")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                        help="run the fits on this Dask cluster (its workers need simplex_core and the fit cache "
                             "folder) instead of a local cluster of min(2, cores) worker processes")
    options = parser.parse_args()
    # st.App.run takes its server options as config overrides (it does not read STREAMLIT_SERVER_PORT:
    # measured, `--port 8621` served on 8501)
    config = {}
    if options.public or options.address:
        config["server.address"] = options.address or "0.0.0.0"
    if options.port:
        config["server.port"] = options.port
    if options.scheduler:
        os.environ["SIMPLEX_JUDGE_SCHEDULER"] = options.scheduler  # read by simplex_core.jobs.FitManager
    app.run(config=config or None)
