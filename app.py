"""Simplex Judge: the Streamlit entry point and router.

Run with ``streamlit run app.py``. This file sets the page up, draws the controls shared by every
page (the sidebar: dataset, criterion, self-family exclusion, model settings), and runs the page
chosen in the navigation. Pages live in ``pages/``; the thin app layer in ``app_support/``; all the
work in ``simplex_core``.
"""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Simplex Judge", page_icon=":material/change_history:", layout="wide")

from app_support.errors import show_error  # noqa: E402  (after set_page_config)
from app_support.frame import draw_sidebar, entry_frame, setup_session  # noqa: E402

PAGES = [
    st.Page("pages/data_page.py", title="Data", icon=":material/table:", url_path="data"),
    st.Page("pages/simplex_page.py", title="Simplex", icon=":material/change_history:", url_path="simplex"),
    st.Page("pages/rankings_page.py", title="Rankings", icon=":material/leaderboard:", url_path="rankings", default=True),
    st.Page("pages/sensitivity_page.py", title="Sensitivity", icon=":material/tune:", url_path="sensitivity"),
    st.Page("pages/geometry_lab_page.py", title="Geometry lab", icon=":material/school:", url_path="geometry"),
    st.Page("pages/guide_page.py", title="Guide", icon=":material/menu_book:", url_path="guide"),
    st.Page("pages/export_page.py", title="Export", icon=":material/download:", url_path="export"),
]

page = st.navigation(PAGES)
setup_session()
draw_sidebar()
with entry_frame():
    try:
        page.run()
    except Exception as exc:  # noqa: BLE001 — last line of defence: a plain message, never a traceback
        show_error(exc, f"showing the {page.title} page")
