"""Tests of app_support/static_assets.py: Streamlit's text bundles answered gzip-compressed from
memory (ASGI middleware), on a small static folder; and, on the real server, that every bundle the
app's page names decompresses to the bytes of the file Streamlit would have sent."""

from __future__ import annotations

import asyncio
import gzip
import os
import re
import urllib.request

import pytest

from app_support.static_assets import CompressedAssets, streamlit_static_folder

SCRIPT = b"console.log('" + b"simplex " * 400 + b"')"


@pytest.fixture()
def folder(tmp_path):
    (tmp_path / "static" / "js").mkdir(parents=True)
    (tmp_path / "static" / "media").mkdir()
    (tmp_path / "static" / "js" / "index.abc.js").write_bytes(SCRIPT)
    (tmp_path / "static" / "media" / "font.woff2").write_bytes(b"\x00woff2")
    (tmp_path / "secret.js").write_bytes(b"not served")
    return tmp_path


def _request(middleware, path, headers=((b"accept-encoding", b"gzip, deflate, br"),), method="GET", query=b""):
    """The messages the middleware sends for one request, and whether it passed it to the app."""
    passed = []

    async def app(scope, receive, send):
        passed.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"from streamlit", "more_body": False})

    middleware.app = app
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}

    scope = {"type": "http", "method": method, "path": path, "headers": list(headers), "query_string": query}
    asyncio.run(middleware(scope, receive, send))
    return sent, bool(passed)


def test_a_bundle_comes_compressed_once_with_its_type_and_cache_policy(folder):
    mw = CompressedAssets(None, folder=folder, base_url="")
    for _ in range(2):
        sent, passed = _request(mw, "/static/js/index.abc.js")
        assert not passed
        headers = dict(sent[0]["headers"])
        body = sent[1]["body"]
        assert gzip.decompress(body) == SCRIPT and len(body) < len(SCRIPT) / 4
        assert headers[b"content-encoding"] == b"gzip" and int(headers[b"content-length"]) == len(body)
        assert b"javascript" in headers[b"content-type"] and b"immutable" in headers[b"cache-control"]
    assert list(mw._compressed) == ["/static/js/index.abc.js"]


def test_everything_else_goes_to_streamlit(folder):
    mw = CompressedAssets(None, folder=folder, base_url="")
    for path, headers, method, query in [
        ("/static/js/index.abc.js", [(b"accept-encoding", b"identity")], "GET", b""),   # no gzip wanted
        ("/static/js/index.abc.js", [(b"accept-encoding", b"gzip"), (b"range", b"bytes=0-9")], "GET", b""),
        ("/static/js/index.abc.js", [(b"accept-encoding", b"gzip"), (b"if-none-match", b'"x"')], "GET", b""),
        ("/static/js/index.abc.js", [(b"accept-encoding", b"gzip")], "HEAD", b""),
        ("/static/js/index.abc.js", [(b"accept-encoding", b"gzip")], "GET", b"v=1"),
        ("/static/media/font.woff2", [(b"accept-encoding", b"gzip")], "GET", b""),       # not a text bundle
        ("/static/js/missing.js", [(b"accept-encoding", b"gzip")], "GET", b""),
        ("/secret.js", [(b"accept-encoding", b"gzip")], "GET", b""),                      # outside static/
        ("/static/js/../../secret.js", [(b"accept-encoding", b"gzip")], "GET", b""),
    ]:
        sent, passed = _request(mw, path, headers, method, query)
        assert passed and sent[1]["body"] == b"from streamlit", path


def test_a_base_url_prefixes_the_paths(folder):
    mw = CompressedAssets(None, folder=folder, base_url="/judge/")
    assert not _request(mw, "/judge/static/js/index.abc.js")[1]
    assert _request(mw, "/static/js/index.abc.js")[1]


def test_the_real_server_sends_every_bundle_of_the_page_intact(tmp_path):
    from tests.streamlit_server import free_port, streamlit_server

    env = dict(os.environ, SIMPLEX_JUDGE_CACHE=str(tmp_path), SIMPLEX_JUDGE_BACKGROUND_GRID="0")
    root = streamlit_static_folder()
    with streamlit_server("serve.py", free_port(), env) as url:
        page = urllib.request.urlopen(url + "/", timeout=60).read().decode()
        bundles = sorted(set(re.findall(r'(?:src|href)="\.?/?(static/[^"]+\.(?:js|css))"', page)))
        assert bundles, page[:500]
        for bundle in bundles:
            request = urllib.request.Request(f"{url}/{bundle}", headers={"Accept-Encoding": "gzip"})
            with urllib.request.urlopen(request, timeout=60) as answer:
                assert answer.headers["Content-Encoding"] == "gzip", bundle
                assert gzip.decompress(answer.read()) == (root / bundle).read_bytes(), bundle
            plain = urllib.request.urlopen(f"{url}/{bundle}", timeout=60)  # no Accept-Encoding: Streamlit's answer
            assert plain.headers.get("Content-Encoding") is None and plain.read() == (root / bundle).read_bytes()


def test_python_serve_py_listens_on_the_port_asked_for(tmp_path):
    """``python serve.py --port P`` (the README's alternative start): healthy on P. It once served on
    8501 whatever the option, since st.App.run does not read STREAMLIT_SERVER_PORT."""
    import subprocess
    import sys

    from tests.streamlit_server import ROOT, free_port, stop, wait_healthy

    port = free_port()
    env = dict(os.environ, SIMPLEX_JUDGE_CACHE=str(tmp_path), SIMPLEX_JUDGE_BACKGROUND_GRID="0")
    proc = subprocess.Popen([sys.executable, "serve.py", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
    finally:
        stop(proc)


@pytest.mark.parametrize("bad", ["99999", "0", "abc"])
def test_python_serve_py_refuses_a_port_out_of_range_in_words(bad):
    """``--port 99999`` ended in a traceback from the server's bind(); now argparse's exit 2."""
    import subprocess
    import sys

    from tests.streamlit_server import ROOT

    done = subprocess.run([sys.executable, "serve.py", "--port", bad], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"argument --port: a port is a whole number from 1 to 65535; got '{bad}'" in done.stderr
