"""Streamlit's script and style bundles answered from memory, gzip-compressed once per process.

Why (the target "the first paint of a new visitor ≤ 5 s while eight sessions work"): a new tab
fetches about 9.4 MB of Streamlit's bundles (Plotly's 4.7 MB among them). Streamlit serves them
uncompressed (it does not want to compress them again on every request), read from disk in 64 kB
chunks, each through a worker thread and every middleware layer. Profiled with py-spy while eight
new sessions opened at once (``bench/app_load.py``): the server's event loop held Python's lock in
63% of the samples, most of it serving these files, and a new visitor's page waited 11–20 s.

:class:`CompressedAssets` answers a plain ``GET /static/...`` of a text bundle (JavaScript, CSS,
JSON, SVG, source maps) from a copy compressed once (level 6: about a quarter of the size) and kept in
memory, in one message, with Streamlit's own cache policy for these content-hashed files. Anything
else passes to Streamlit untouched: other paths, browsers that do not accept gzip, range or
conditional requests, files that are not in Streamlit's static folder when the server starts (the
index is built from the folder itself, so a request can name nothing outside it).
"""

from __future__ import annotations

import asyncio
import gzip
import mimetypes
import os
from pathlib import Path
from typing import Any, Awaitable, Callable

#: Extensions worth compressing (fonts and images are compressed formats already).
TEXT_EXTENSIONS = (".js", ".mjs", ".css", ".json", ".svg", ".map", ".txt")

#: The cache policy Streamlit gives its content-hashed bundles (a year, never revalidated).
IMMUTABLE = b"public, immutable, max-age=31536000"

#: zlib level: 6 compresses Plotly's bundle in about 0.15 s, within a few percent of level 9's size.
LEVEL = 6


def streamlit_static_folder() -> Path:
    """The folder Streamlit serves its frontend from (``/static/...`` is ``<folder>/static/...``)."""
    import streamlit

    return Path(streamlit.__file__).parent / "static"


def _base_url() -> str:
    try:
        from streamlit import config

        return "/" + str(config.get_option("server.baseUrlPath") or "").strip("/")
    except Exception:  # no Streamlit configuration (e.g. a test of the middleware alone)
        return "/"


class CompressedAssets:
    """ASGI middleware: the gzip answer, from memory, to a browser's plain GET of one of Streamlit's
    text bundles; every other request passes through untouched."""

    def __init__(self, app: Callable[..., Awaitable[None]], folder: Path | None = None, base_url: str | None = None) -> None:
        self.app = app
        root = Path(folder) if folder is not None else streamlit_static_folder()
        base = (base_url if base_url is not None else _base_url()).rstrip("/")
        # URL path → file, for the text bundles only; built once, so no request can reach outside
        self.files: dict[str, Path] = {}
        for dirpath, _, names in os.walk(root / "static"):
            for name in names:
                if name.endswith(TEXT_EXTENSIONS):
                    path = Path(dirpath) / name
                    self.files[f"{base}/{path.relative_to(root).as_posix()}"] = path
        self._compressed: dict[str, tuple[bytes, bytes]] = {}  # URL path → (body, content type)
        self._locks: dict[str, asyncio.Lock] = {}

    def _wanted(self, scope: dict) -> str | None:
        if scope.get("type") != "http" or scope.get("method") != "GET" or scope.get("query_string"):
            return None
        path = scope.get("path", "")
        if path not in self.files:
            return None
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        if b"range" in headers or b"if-none-match" in headers or b"if-modified-since" in headers:
            return None
        accepted = [part.split(b";")[0].strip() for part in headers.get(b"accept-encoding", b"").split(b",")]
        return path if b"gzip" in accepted else None

    async def _body(self, path: str) -> tuple[bytes, bytes]:
        if path not in self._compressed:
            lock = self._locks.setdefault(path, asyncio.Lock())
            async with lock:  # eight tabs asking at once compress it once
                if path not in self._compressed:
                    raw = await asyncio.to_thread(self.files[path].read_bytes)
                    body = await asyncio.to_thread(gzip.compress, raw, LEVEL, mtime=0)
                    kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
                    if kind.startswith("text/") or kind.endswith(("javascript", "json")):
                        kind += "; charset=utf-8"
                    self._compressed[path] = (body, kind.encode())
        return self._compressed[path]

    async def __call__(self, scope: dict, receive: Callable[..., Awaitable[Any]], send: Callable[..., Awaitable[None]]) -> None:
        path = self._wanted(scope)
        if path is None:
            await self.app(scope, receive, send)
            return
        try:
            body, kind = await self._body(path)
        except OSError:  # the file went away (a reinstall under a running server): Streamlit answers
            await self.app(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", kind), (b"content-encoding", b"gzip"), (b"content-length", str(len(body)).encode()),
            (b"vary", b"Accept-Encoding"), (b"cache-control", IMMUTABLE)]})
        await send({"type": "http.response.body", "body": body, "more_body": False})
