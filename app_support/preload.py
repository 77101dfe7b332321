"""Start loading Plotly's script in the browser with the first message of a page run.

Streamlit loads its Plotly chart code (plotly.js, about 4.7 MB) only when the first figure arrives,
and a browser then spends seconds parsing it before anything is drawn (issue 13: the figure came
4–6 s after the text). A one-line script asks for the same module as soon as the sidebar's first
element arrives, so the download and the parsing overlap the page's own work; when the figure
arrives, Streamlit's import finds the module already loaded (one module per URL).
"""

from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st


@functools.cache
def plotly_chunk() -> str | None:
    """File name of Streamlit's Plotly chart module (hashed per release), or None if not found."""
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    found = sorted(folder.glob("PlotlyChart.*.js"))
    return found[0].name if len(found) == 1 else None


def preload_plotly() -> None:
    """Emit the preload (an invisible element); nothing when the module is not found."""
    name = plotly_chunk()
    if name is None:
        return
    # resolved against Streamlit's own entry script, so a server under a base URL path works too
    st.html(
        "<script>(function () { if (window.__simplexPlotly) return;"
        " var s = document.querySelector('script[src*=\"static/js/index\"]');"
        f" window.__simplexPlotly = import(new URL('./{name}', s ? s.src : document.baseURI).href)"
        ".catch(function () {}); })();</script>",
        unsafe_allow_javascript=True,
    )
