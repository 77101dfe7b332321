"""The Plotly bundles serve.py serves to the figures (app_support.plotly_figure): which figure gets
which bundle, and the route's answers. The browser side is in tests/test_browser.py."""

from __future__ import annotations

import gzip

import plotly.graph_objects as go
from starlette.applications import Starlette
from starlette.testclient import TestClient

from app_support import plotly_figure as pf


def test_a_figure_gets_the_cartesian_bundle_unless_it_has_a_trace_outside_it():
    assert pf.bundle_for(go.Figure([go.Box(y=[1, 2]), go.Heatmap(z=[[1]]), go.Scatterternary(a=[1], b=[0], c=[0])])) == "cartesian"
    assert pf.bundle_for(go.Figure()) == "cartesian"
    assert pf.bundle_for(go.Figure([go.Scatter(x=[1]), go.Scatter3d(x=[1], y=[1], z=[1])])) == "full"


def test_the_cartesian_bundle_holds_every_trace_type_it_is_chosen_for():
    text = pf.CARTESIAN_FILE.read_text(errors="replace")
    for trace in pf.CARTESIAN_TRACES:
        assert f'moduleType:"trace",name:"{trace}"' in text, trace
    assert 'name:"scatter3d"' not in text


def test_the_route_serves_each_bundle_under_its_content_name_compressed_and_nothing_else(monkeypatch):
    monkeypatch.setattr(pf, "_SERVED", [False])  # mounting the route is this process's state: undone after
    client = TestClient(Starlette(routes=[pf.bundle_route()]))
    assert pf.bundle_served()
    url = pf.bundle_url("cartesian")
    assert url.startswith(pf.BUNDLE_PATH + "/cartesian.") and url.endswith(".js")
    plain = client.get(url, headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and plain.content == pf.CARTESIAN_FILE.read_bytes()
    assert "immutable" in plain.headers["cache-control"] and plain.headers["content-type"].startswith("text/javascript")
    packed = client.get(url, headers={"Accept-Encoding": "gzip"})
    assert packed.headers["content-encoding"] == "gzip" and packed.content == pf.CARTESIAN_FILE.read_bytes()
    assert len(gzip.compress(pf.CARTESIAN_FILE.read_bytes())) < len(pf.CARTESIAN_FILE.read_bytes()) / 3
    full = client.get(pf.bundle_url("full"))
    assert full.status_code == 200 and full.content == pf.full_bundle_file().read_bytes()
    for wrong in ("cartesian.000000000000.js", "..%2F..%2Fserve.py", "full.js"):
        assert client.get(f"{pf.BUNDLE_PATH}/{wrong}").status_code == 404


def test_the_app_page_preloads_the_served_bundle(monkeypatch):
    from app_support.boot_page import with_placeholder

    monkeypatch.setattr(pf, "_SERVED", [False])
    pf.bundle_route()  # as serve.py does
    page = with_placeholder(b'<html><head></head><body><div id="root"></div></body></html>', "/")
    assert f'<link rel="preload" as="script" href="{pf.bundle_url("cartesian")}" />'.encode() in page
    assert b"PlotlyChart" not in page


def test_the_served_page_preloads_the_figure_component_module_and_its_imports_once(monkeypatch):
    """The component's module (which Streamlit asks for only when a figure arrives) and the modules it
    imports are preloaded, each once, and none the page already preloads."""
    import re

    from app_support.boot_page import FIGURE_CHUNKS, chunk_preload_links, with_placeholder
    from app_support.static_assets import streamlit_static_folder

    monkeypatch.setattr(pf, "_SERVED", [False])
    pf.bundle_route()
    folder = streamlit_static_folder() / "static" / "js"
    component = sorted(folder.glob(f"{FIGURE_CHUNKS[0]}.*.js"))[0].name
    imported = re.findall(r'(?:from|import)\s*"\./([\w.-]+\.js)"', (folder / component).read_text())
    assert imported  # else the closure below tests nothing
    own = f'<link rel="modulepreload" crossorigin href="./static/js/{imported[0]}">'.encode()
    page = with_placeholder(b'<html><head>' + own + b'</head><body><div id="root"></div></body></html>', "/simplex")
    linked = re.findall(rb'<link rel="modulepreload" crossorigin href="\./static/js/([\w.-]+\.js)" />', page)
    assert linked[0] == component.encode()
    assert {n.encode() for n in imported[1:]} <= set(linked)  # every direct import but the page's own one
    assert len(linked) == len(set(linked)) and imported[0].encode() not in linked
    assert all((folder / n.decode()).is_file() for n in linked)
    assert chunk_preload_links(("NoSuchElement",)) == b""
