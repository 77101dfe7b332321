"""Simplex Judge: the Streamlit entry point and router.

Run with ``streamlit run app.py``. This file sets the page up, draws the controls shared by every
page (the sidebar: dataset, criterion, self-family exclusion, model settings), and runs the page
chosen in the navigation. Pages live in ``pages/``; the thin app layer in ``app_support/``; all the
work in ``simplex_core``.

Streamlit runs this file as the module ``__main__``. While it runs, ``sys.modules["__main__"]`` is
this file, so a process that ``multiprocessing`` spawns then (a Dask fit worker started or restarted
by the fit manager) imports it again as ``__mp_main__``: such a process must draw nothing. Before
this guard, every new fit worker ran the whole Rankings page in bare mode (dataset, baselines,
posterior) and tried to start a fit cluster of its own.
"""

from __future__ import annotations


def main() -> None:
    import streamlit as st

    from app_support.frame import FAVICON

    st.set_page_config(page_title="Simplex Judge", page_icon=FAVICON, layout="wide")

    from app_support.errors import show_error
    from app_support.frame import draw_sidebar, entry_frame, setup_session

    pages = [
        st.Page("pages/data_page.py", title="Data", icon=":material/table:", url_path="data"),
        st.Page("pages/simplex_page.py", title="Simplex", icon=":material/change_history:", url_path="simplex"),
        st.Page("pages/rankings_page.py", title="Rankings", icon=":material/leaderboard:", url_path="rankings", default=True),
        st.Page("pages/sensitivity_page.py", title="Sensitivity", icon=":material/tune:", url_path="sensitivity"),
        st.Page("pages/geometry_lab_page.py", title="Geometry lab", icon=":material/school:", url_path="geometry"),
        st.Page("pages/guide_page.py", title="Guide", icon=":material/menu_book:", url_path="guide"),
        st.Page("pages/export_page.py", title="Export", icon=":material/download:", url_path="export"),
    ]

    page = st.navigation(pages)
    setup_session()
    draw_sidebar()
    with entry_frame():
        try:
            page.run()
        except Exception as exc:  # noqa: BLE001 — last line of defence: a plain message, never a traceback
            show_error(exc, f"showing the {page.title} page")


if __name__ == "__main__":  # a spawned worker process imports this file as "__mp_main__": nothing to draw
    main()
