"""Tests of app_support/boot_page.py: the placeholder put inside the app's HTML page (ASGI
middleware), on exact small cases; tests/test_browser.py checks it in Chromium."""

from __future__ import annotations

import asyncio

import re

from app_support.boot_page import (ROOT, BootPlaceholder, DefaultPageRedirect, is_page_address, placeholder_html,
                                   plotly_preload_link)
from app_support.static_assets import streamlit_static_folder

PAGE = b"<html><head><title>t</title></head><body><noscript>x</noscript>" + ROOT + b"</body></html>"


def _serve(body: bytes, content_type: bytes, path: str, headers=(), chunks: int = 1, method: str = "GET"):
    """Run the middleware around an app that answers ``body`` in ``chunks`` parts; returns the
    messages sent and the request headers the app saw."""
    seen: dict = {}

    async def app(scope, receive, send):
        seen["headers"] = list(scope["headers"])
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]})
        step = max(1, -(-len(body) // chunks))
        parts = [body[i:i + step] for i in range(0, len(body), step)] or [b""]
        for i, part in enumerate(parts):
            await send({"type": "http.response.body", "body": part, "more_body": i < len(parts) - 1})

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}

    scope = {"type": "http", "method": method, "path": path, "headers": list(headers)}
    asyncio.run(BootPlaceholder(app)(scope, receive, send))
    return sent, seen["headers"]


def _body(sent) -> bytes:
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_the_page_gets_the_placeholder_with_a_correct_length_even_in_parts():
    for chunks in (1, 3):
        sent, _ = _serve(PAGE, b"text/html; charset=utf-8", "/data", chunks=chunks)
        body = _body(sent)
        assert body == PAGE.replace(ROOT, placeholder_html("/data")).replace(b"</head>", plotly_preload_link() + b"</head>")
        assert b"Loading the Data page of Simplex Judge" in body and body.count(b'id="root"') == 1
        length = dict(sent[0]["headers"])[b"content-length"]
        assert int(length) == len(body)
        assert [k for k, _ in sent[0]["headers"]].count(b"content-length") == 1


def test_the_root_page_names_rankings_and_an_unknown_path_the_app():
    assert b"<h1" in placeholder_html("/") and b">Rankings</h1>" in placeholder_html("/")
    assert b">Simplex Judge</h1>" in placeholder_html("/no-such-page")
    assert b"Loading the app of Simplex Judge" in placeholder_html("/no-such-page")


def test_everything_else_passes_untouched():
    script = b"console.log('" + ROOT + b"')"
    sent, _ = _serve(script, b"application/javascript", "/static/js/index.js", chunks=2)
    assert _body(sent) == script and len([m for m in sent if m["type"] == "http.response.body"]) == 2
    other = b"<html>no root here</html>"
    assert _body(_serve(other, b"text/html", "/data")[0]) == other
    sent, _ = _serve(PAGE, b"text/html", "/data", method="POST")
    assert _body(sent) == PAGE


def test_a_page_is_asked_for_uncompressed_and_files_keep_their_compression():
    gzip = [(b"accept-encoding", b"gzip, deflate"), (b"user-agent", b"t")]
    _, seen = _serve(PAGE, b"text/html", "/sensitivity", headers=gzip)
    assert seen == [(b"user-agent", b"t")]
    _, seen = _serve(b"x", b"application/javascript", "/static/js/a.js", headers=gzip)
    assert seen == gzip
    assert is_page_address("/") and is_page_address("/rankings") and is_page_address("/data/")
    assert not any(is_page_address(p) for p in ("/static/js/a.js", "/_stcore/health", "/favicon.png", "/media/x"))


def test_the_page_preloads_the_installed_streamlits_plotly_module():
    """The link names a file Streamlit serves (its name changes with Streamlit's version), with
    crossorigin like Streamlit's own preloads, so that the browser's import reuses it."""
    link = plotly_preload_link()
    name = re.fullmatch(rb'<link rel="modulepreload" crossorigin href="\./static/js/(PlotlyChart\.[\w-]+\.js)" />', link)
    assert name, link
    assert (streamlit_static_folder() / "static" / "js" / name.group(1).decode()).is_file()
    body = _body(_serve(PAGE, b"text/html", "/simplex")[0])
    assert body.count(link) == 1 and body.index(link) < body.index(b"</head>")
    no_head = b"<html><body>" + ROOT + b"</body></html>"
    assert _body(_serve(no_head, b"text/html", "/simplex")[0]) == no_head.replace(ROOT, placeholder_html("/simplex"))


def _redirect(path: str, query: bytes = b"", method: str = "GET"):
    """Run DefaultPageRedirect around an app that answers 200 "app"; returns the messages sent."""
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"app"})

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}

    scope = {"type": "http", "method": method, "path": path, "query_string": query, "headers": []}
    asyncio.run(DefaultPageRedirect(app)(scope, receive, send))
    return sent


def test_a_link_to_the_default_page_by_name_goes_to_the_root_with_its_query():
    sent = _redirect("/rankings", b"data=hanna&criterion=coherence&omega=2")
    assert sent[0]["status"] == 308
    assert dict(sent[0]["headers"])[b"location"] == b"./?data=hanna&criterion=coherence&omega=2"
    assert dict(_redirect("/rankings/")[0]["headers"])[b"location"] == b"../"
    assert dict(_redirect("/base/rankings", b"prior=mixing")[0]["headers"])[b"location"] == b"./?prior=mixing"
    # other pages, Streamlit's own endpoints and other methods pass through
    for path, method in (("/", "GET"), ("/data", "GET"), ("/rankings-extra", "GET"), ("/_stcore/health", "GET"),
                         ("/rankings", "POST")):
        sent = _redirect(path, method=method)
        assert sent[0]["status"] == 200 and sent[1]["body"] == b"app", (path, method)
