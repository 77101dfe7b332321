"""Download buttons: tables as CSV, figures as interactive HTML (PNG/SVG when a static exporter is
installed), posteriors as NetCDF, settings as JSON.

Every button builds its file only when clicked (Streamlit accepts a callable as ``data``) and does
not rerun the app (``on_click="ignore"``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import tempfile
from functools import lru_cache
from typing import Any, Callable, Hashable

import pandas as pd
import streamlit as st

from simplex_core.data.spreadsheet import spreadsheet_safe

from .lru import Lru


def slug(text: str) -> str:
    """A file-name-safe version of ``text``, without the data file's extension that an uploaded
    file's name brings ("scores.csv-rows" → "scores-rows", whose button then adds ".csv")."""
    text = re.sub(r"\.(csv|tsv|jsonl|ndjson|json|parquet|pq)(\.(gz|bz2|xz|zip))?(?=-|$)", "", str(text), flags=re.IGNORECASE)
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-").lower() or "download"


@lru_cache(maxsize=1)
def static_export_available() -> bool:
    """Whether figures can be saved as PNG/SVG: needs the optional ``kaleido`` package and a Chromium."""
    if importlib.util.find_spec("kaleido") is None:
        return False
    return any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")) or os.path.exists("/usr/bin/chromium")


def csv_text(frame: pd.DataFrame, index: bool = False) -> str:
    """The CSV every download button serves (see :func:`spreadsheet_safe`)."""
    return spreadsheet_safe(frame).to_csv(index=index)


def csv_button(frame: pd.DataFrame | Callable[[], pd.DataFrame], file_name: str, *, label: str = "CSV",
               key: str, index: bool = False, help: str | None = None) -> None:
    """A download button for a table as CSV."""
    def data() -> str:
        df = frame() if callable(frame) else frame
        return csv_text(df, index=index)

    st.download_button(label, data=data, file_name=f"{slug(file_name)}.csv", mime="text/csv", key=key,
                       on_click="ignore", icon=":material/download:", help=help or "Download this table as CSV")


def json_button(payload: Any | Callable[[], Any], file_name: str, *, label: str = "JSON", key: str,
                help: str | None = None) -> None:
    """A download button for JSON-able data."""
    def data() -> str:
        obj = payload() if callable(payload) else payload
        return json.dumps(obj, indent=2, default=_json_default)

    st.download_button(label, data=data, file_name=f"{slug(file_name)}.json", mime="application/json", key=key,
                       on_click="ignore", icon=":material/download:", help=help or "Download as JSON")


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return str(obj)


def figure_buttons(fig: Any, file_name: str, *, key: str) -> None:
    """Download buttons for a Plotly figure: interactive HTML always, PNG and SVG when possible."""
    cols = st.columns(3 if static_export_available() else 1, gap="small")
    cols[0].download_button(
        "HTML", data=lambda: fig.to_html(include_plotlyjs=True, full_html=True), file_name=f"{slug(file_name)}.html",
        mime="text/html", key=f"{key}-html", on_click="ignore", icon=":material/download:",
        help="Interactive figure as a standalone HTML file (opens offline in any browser)")
    if static_export_available():
        cols[1].download_button("PNG", data=lambda: fig.to_image(format="png", scale=2), file_name=f"{slug(file_name)}.png",
                                mime="image/png", key=f"{key}-png", on_click="ignore", icon=":material/download:")
        cols[2].download_button("SVG", data=lambda: fig.to_image(format="svg"), file_name=f"{slug(file_name)}.svg",
                                mime="image/svg+xml", key=f"{key}-svg", on_click="ignore", icon=":material/download:")


def netcdf_bytes(idata: Any) -> bytes:
    """An ArviZ InferenceData as NetCDF bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "posterior.nc")
        idata.to_netcdf(path)
        with open(path, "rb") as fh:
            return fh.read()


def netcdf_button(idata: Any, file_name: str, *, key: str, label: str = "Posterior (NetCDF)") -> None:
    """A download button for a posterior as NetCDF (open with ``arviz.from_netcdf``)."""
    st.download_button(label, data=lambda: netcdf_bytes(idata), file_name=f"{slug(file_name)}.nc",
                       mime="application/x-netcdf", key=key, on_click="ignore", icon=":material/download:",
                       help="The posterior draws as NetCDF; open with arviz.from_netcdf(path)")


def show_figure(fig: Any, file_name: str, *, key: str, height: int | None = None, memo: Hashable | None = None) -> None:
    """Draw a Plotly figure with our own colours (not the Streamlit theme) and its download buttons.

    ``fig`` is a figure, or a function that builds it. With ``memo`` (a key that determines the
    figure: the fit shown, the data, the options, the title), the finished figure is kept for the
    server process and a rerun that shows it again builds nothing: building a Plotly figure costs
    more than the rest of a page's run (Plotly validates every property it is given)."""
    from simplex_core.figures.style import wrap_subplot_titles, wrap_title

    from .plotly_figure import bundle_served, plotly_figure

    figures = _figures()
    found = figures.lookup((memo, height)) if memo is not None else None
    ready, as_json = found if found is not None else (None, None)
    if ready is None:
        ready = fig() if callable(fig) else fig
        if height is not None:
            ready.update_layout(height=height)
        wrap_title(ready)  # a long title in lines that fit a narrow window, never cut at the figure's edge
        wrap_subplot_titles(ready)  # ... and the panels' titles never run into each other
    config = {"displaylogo": False, "toImageButtonOptions": {"filename": slug(file_name)}}
    if bundle_served():  # serve.py: the lightest Plotly bundle that draws it (app_support.plotly_figure)
        as_json = as_json or ready.to_json()
        plotly_figure(ready, key=f"{key}-chart", config=config, figure_json=as_json)
    else:
        st.plotly_chart(ready, theme=None, key=f"{key}-chart", config=config)
    if memo is not None and found is None:
        figures.store((memo, height), (ready, as_json))
    figure_buttons(ready, file_name, key=key)


@st.cache_resource(show_spinner=False)
def _figures() -> Lru:
    """Finished figures by their ``memo`` key, with their JSON once drawn by a bundle (None before),
    shared by the sessions of this process (read only once stored: Streamlit and the download
    buttons only serialise them)."""
    return Lru(48)
