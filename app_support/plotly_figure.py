"""Figures drawn with the lightest Plotly bundle that has their traces, served by ``serve.py``.

Why (the target "first figure in a new browser ≤ 2 s"): ``st.plotly_chart`` draws with Streamlit's
Plotly module, the full plotly.js (4.7 MB), which a new tab downloads, compiles and runs before its
first figure; that was most of the 2.8–3.1 s to the first figure of Rankings and Simplex. Every
figure of those pages uses traces of plotly.js's cartesian partial bundle (1.5 MB; scatterternary
included, read from the bundle itself), shipped in ``assets/plotly/`` (copied from the npm package,
never fetched at run time). Figures with other traces (the Geometry lab's 3-D ones) get the full
bundle of the installed ``plotly`` package, of the same plotly.js version.

:func:`bundle_route` (mounted by ``serve.py``) serves both under ``/_simplex/plotly/<name>.<hash>.js``
(gzip-compressed once per process, cached by the browser for good: the name changes with the
content). :func:`plotly_figure` draws a figure in a ``st.components.v2`` component whose script
loads its bundle once per tab (bundles one after another, each kept under its own name) and calls
``Plotly.react``; a figure drawn again updates in place. Without the route (``streamlit run
app.py``, AppTest) :func:`bundle_served` is false and figures go through ``st.plotly_chart``.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

BUNDLE_PATH = "/_simplex/plotly"
ROOT = Path(__file__).resolve().parent.parent
CARTESIAN_FILE = ROOT / "assets" / "plotly" / "plotly-cartesian.min.js"
#: The trace types of the cartesian partial bundle (its ``moduleType:"trace"`` names).
CARTESIAN_TRACES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour",
                              "image", "pie", "scatter", "scatterternary", "violin"})
_SERVED = [False]
_LOCK = threading.Lock()


def full_bundle_file() -> Path:
    """The full plotly.js that the installed ``plotly`` package ships (its ``to_html`` uses it)."""
    import plotly

    return Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"


def bundle_files() -> dict[str, Path]:
    """Bundle name -> file: ``cartesian`` (shipped with the app) and ``full``."""
    return {"cartesian": CARTESIAN_FILE, "full": full_bundle_file()}


@lru_cache(maxsize=None)
def _bundle(name: str) -> tuple[str, bytes, bytes]:
    """(file name served, the script, its gzip) of bundle ``name``; read and compressed once."""
    data = bundle_files()[name].read_bytes()
    return f"{name}.{hashlib.sha256(data).hexdigest()[:12]}.js", data, gzip.compress(data, 6)


def bundle_url(name: str) -> str:
    """The address of bundle ``name`` (``cartesian`` or ``full``), naming its content."""
    with _LOCK:  # one thread reads and compresses a bundle; the others wait for it
        return f"{BUNDLE_PATH}/{_bundle(name)[0]}"


def bundle_for(figure: Any) -> str:
    """``cartesian`` when every trace of ``figure`` is in that bundle, else ``full``."""
    types = {getattr(trace, "type", None) or "scatter" for trace in figure.data}
    return "cartesian" if types <= CARTESIAN_TRACES else "full"


def bundle_served() -> bool:
    """Whether this server serves the bundles (``serve.py`` mounts :func:`bundle_route`)."""
    return _SERVED[0]


def preload_link() -> bytes:
    """``<link rel="preload">`` of the cartesian bundle, for the app's HTML page: fetched while
    Streamlit's scripts start, run only when a figure needs it."""
    return f'<link rel="preload" as="script" href="{bundle_url("cartesian")}" />'.encode()


def bundle_route() -> Any:
    """The Starlette route of the bundles: ``GET /_simplex/plotly/<name>.<hash>.js`` (404 for any
    other name), gzip-compressed when the browser accepts it, cacheable for good."""
    from starlette.responses import Response
    from starlette.routing import Route

    async def bundle(request: Any) -> Any:
        requested = request.path_params.get("file", "")
        for name in bundle_files():
            with _LOCK:
                served, data, packed = _bundle(name)
            if requested == served:
                headers = {"Cache-Control": "public, max-age=31536000, immutable", "Vary": "Accept-Encoding"}
                if "gzip" in request.headers.get("accept-encoding", ""):
                    headers["Content-Encoding"] = "gzip"
                    data = packed
                return Response(data, media_type="text/javascript", headers=headers)
        return Response("unknown bundle", status_code=404, media_type="text/plain")

    _SERVED[0] = True
    return Route(BUNDLE_PATH + "/{file}", bundle, methods=["GET"])


_HTML = '<div class="sj-figure" style="width: 100%;"></div>'
# Bundles load one after another, so that each one's window.Plotly is taken right after it ran; a
# newer figure for the same element wins over one still waiting for its bundle.
_JS = """
function loadBundle(url) {
  const loaded = (window.__sjPlotly = window.__sjPlotly || {});
  if (!loaded[url]) {
    const before = window.__sjPlotlyChain || Promise.resolve();
    loaded[url] = before.then(() => new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = url;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => { delete loaded[url]; reject(new Error('the figure script ' + url + ' did not load')); };
      document.head.appendChild(s);
    }));
    window.__sjPlotlyChain = loaded[url].catch(() => null);
  }
  return loaded[url];
}

// Figures are drawn one at a time, in the page's order, each after the browser has painted the one
// before: a page's figures were all drawn in one task once the bundle ran, and the first one showed
// only when the last was done. (A hidden tab paints no frames: the timeout lets it go on.)
function inTurn(draw) {
  const run = (window.__sjDrawTurn || Promise.resolve()).then(draw);
  window.__sjDrawTurn = run.catch(() => null).then(() => new Promise((resolve) => {
    const go = () => setTimeout(resolve, 0);
    requestAnimationFrame(go);
    setTimeout(resolve, 100);
  }));
  return run;
}

export default function (component) {
  const { data, parentElement } = component;
  const gd = parentElement.querySelector('.sj-figure');
  const token = (gd.__sjToken = (gd.__sjToken || 0) + 1);
  loadBundle(data.bundle).then((Plotly) => inTurn(() => {
    if (gd.__sjToken !== token) return;
    if (gd.__sjPlotly && gd.__sjPlotly !== Plotly) gd.__sjPlotly.purge(gd);
    gd.__sjPlotly = Plotly;
    const figure = JSON.parse(data.figure);
    return Plotly.react(gd, figure.data || [], figure.layout || {}, data.config);
  })).catch((err) => {
    gd.setAttribute('data-figure-error', String(err && err.message || err));
    gd.textContent = 'This figure could not be drawn: ' + String(err && err.message || err);
  });
  return () => setTimeout(() => { if (!gd.isConnected && gd.__sjPlotly) gd.__sjPlotly.purge(gd); }, 0);
}
"""

_component: list[Any] = []


def plotly_figure(figure: Any, *, key: str, config: dict, figure_json: str | None = None) -> None:
    """Draw ``figure`` (a ``go.Figure``) with its bundle; ``figure_json`` is ``figure.to_json()``
    when the caller has it already."""
    import streamlit as st

    if not _component:
        _component.append(st.components.v2.component("simplex_judge.plotly_figure", html=_HTML, js=_JS,
                                                     isolate_styles=False))  # Plotly's own styles go in the page's head
    data = {"figure": figure_json if figure_json is not None else figure.to_json(),
            "bundle": bundle_url(bundle_for(figure)), "config": {**config, "responsive": True}}
    _component[0](data=data, key=key)
