"""Serve Simplex Judge with a warm start: ``streamlit run serve.py`` (or ``python serve.py``).

The app itself is ``app.py`` (``streamlit run app.py`` works too). This launcher wraps it in
Streamlit's ASGI ``st.App`` so that the server, as soon as it starts, imports the page modules and
loads the default dataset, its precomputed posterior and its baselines into the shared caches
(:mod:`app_support.warmup`): the first visitor then sees the ranking as fast as every later one
(measured with ``bench/open_app.py``; see the README).
"""

from __future__ import annotations

from contextlib import asynccontextmanager

import streamlit as st


@asynccontextmanager
async def warm_start(_app):
    from app_support.warmup import start_in_background

    start_in_background()  # a thread: the server takes visitors at once
    yield


app = st.App("app.py", lifespan=warm_start)

if __name__ == "__main__":
    app.run()
