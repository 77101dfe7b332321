"""The frame around every page: page config, session defaults, the shared sidebar.

``app.py`` draws the frame and then runs the chosen page inside :func:`entry_frame`. A page file
calls :func:`page_frame` first: when the page runs through ``app.py`` this does nothing; when
Streamlit runs the page file directly, it draws the frame itself. Streamlit does the latter in one
case: with a ``pages/`` folder next to the entry point, the first script run of a server process
(and every run under ``AppTest``) uses the folder-based navigation of older Streamlit versions,
which executes page files without the entry point, until ``st.navigation`` has been called once.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import streamlit as st

# The tab's icon, served by this app: a Material icon as page icon made every page fetch it from
# fonts.gstatic.com (failing offline, and a request to a third party for each visitor).
FAVICON = str(Path(__file__).resolve().parents[1] / "assets" / "favicon.png")

_local = threading.local()  # script runs of one session happen on one thread


@contextmanager
def entry_frame() -> Iterator[None]:
    """Mark the current script run as going through ``app.py`` (which draws the frame)."""
    _local.active = True
    try:
        yield
    finally:
        _local.active = False


def setup_session() -> None:
    """Session defaults and widget-state keeping (called before any widget is drawn)."""
    from . import data_access, state

    state.init_state(data_access.default_dataset_name() or state.UPLOAD)
    state.keep_widget_state()


def draw_sidebar() -> None:
    """Draw the shared sidebar; a failure becomes a plain message, never a traceback."""
    from .errors import show_error
    from .sidebar import render_sidebar
    from .state import K

    st.session_state.pop(K.CONTEXT, None)  # never let a page read the previous run's context
    try:
        render_sidebar()
    except Exception as exc:  # noqa: BLE001
        show_error(exc, "setting up the controls")


def page_frame() -> None:
    """Call first in every page: draws the frame when the page runs without ``app.py``."""
    if getattr(_local, "active", False):
        return
    st.set_page_config(page_title="Simplex Judge", page_icon=FAVICON, layout="wide")
    setup_session()
    draw_sidebar()
