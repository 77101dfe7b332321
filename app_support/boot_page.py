"""A placeholder in the app's HTML page, drawn by the browser before Streamlit's scripts run.

Why (the target "every page draws something useful within 1 s"): a new tab fetches about 9.4 MB of
Streamlit's scripts (Plotly's 4.7 MB among them) and starts Streamlit before anything is drawn, so
the tab stayed blank for 1.2–1.8 s on a warm server, and for 10 s and more while other visitors'
first pages ran. The HTML page itself arrives in milliseconds: :class:`BootPlaceholder`, an ASGI
middleware of ``serve.py``'s ``st.App``, puts a short text inside its empty root element saying what
is coming. React replaces the root's content when Streamlit starts, so the placeholder is never
seen beside the app.

The same middleware lists Plotly's script module in the page's head (``<link rel="modulepreload">``),
beside the modules Streamlit lists there itself. Why (the target "its first figure within 3 s"): the
browser otherwise asks for Plotly's 4.7 MB module only when the first figure's element arrives from
the server, about 1.1 s into a new tab, then parses it; preloaded, it is fetched and compiled while
Streamlit starts, and evaluated only when a figure needs it (a first visit's first figure came
0.3–0.5 s sooner, the page's text no later: ``bench/app_latency.py --pages-only``). Loading the
module itself from the page (an ``import``) had run it at once and delayed the text by up to 0.8 s.

:class:`DefaultPageRedirect` sends ``/rankings`` (the default page's own name) to ``/`` with the same
query: Streamlit serves its default page at ``/`` only, and a link to ``/rankings?data=hanna`` had
opened the Rankings page under a "Page not found" dialog.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from typing import Any, Awaitable, Callable

ROOT = b'<div id="root"></div>'
HEAD_END = b"</head>"

#: The default page's url path in ``app.py``; Streamlit serves that page at ``/`` only.
DEFAULT_PAGE = "rankings"

#: Which page an address opens (``app.py``'s url paths), for the placeholder's words.
PAGE_TITLES = {"": "Rankings", DEFAULT_PAGE: "Rankings", "data": "Data", "simplex": "Simplex",
               "sensitivity": "Sensitivity", "geometry": "Geometry lab", "guide": "Guide", "export": "Export"}


def placeholder_html(path: str) -> bytes:
    """The root element with the placeholder for the page at ``path`` (an unknown path names no page)."""
    title = PAGE_TITLES.get(path.strip("/").split("/")[0])
    what = (f"the {title} page" if title else "the app")
    text = (f"Loading {what} of Simplex Judge: rankings of LLM candidates from the scores LLM judges gave "
            "them, with 95% intervals that cover both sampling noise and our ignorance of the judges. "
            "It appears here in a few seconds.")
    return (f'<div id="root"><div data-testid="bootPlaceholder" style="font-family: sans-serif; color: #1F2933; '
            f'padding: 5rem 4rem; max-width: 48rem;"><h1 style="font-size: 2.5rem; margin: 0 0 1rem;">'
            f'{html.escape(title or "Simplex Judge")}</h1><p style="font-size: 1.1rem; line-height: 1.5;">'
            f'{html.escape(text)}</p></div></div>').encode()


@lru_cache(maxsize=1)
def plotly_preload_link() -> bytes:
    """The ``<link rel="modulepreload">`` of the Plotly chart module of the installed Streamlit (its
    name carries a content hash), or nothing if this Streamlit has no such module."""
    from app_support.static_assets import streamlit_static_folder

    found = sorted((streamlit_static_folder() / "static" / "js").glob("PlotlyChart.*.js"))
    if len(found) != 1:
        return b""
    # crossorigin as on Streamlit's own modulepreloads: the module's import must find the same request
    return f'<link rel="modulepreload" crossorigin href="./static/js/{html.escape(found[0].name)}" />'.encode()


#: Streamlit's lazily loaded element modules that a page's first figure waits for, where ``serve.py``
#: draws figures in a component (``app_support.plotly_figure``).
FIGURE_CHUNKS = ("BidiComponent",)
_IMPORT = re.compile(rb'(?:from|import)\s*"\./([\w.-]+\.js)"')


@lru_cache(maxsize=4)
def chunk_preload_links(chunks: tuple[str, ...] = FIGURE_CHUNKS, already: bytes = b"") -> bytes:
    """``<link rel="modulepreload">`` of Streamlit's element modules ``chunks`` and every module they
    import, except those named in ``already`` (the page's own preloads). Why: Streamlit asks for an
    element's module only when the element arrives, then for its imports; a new tab's first figure
    waited 0.4–0.6 s for them behind the sidebar's widgets (measured: ``bench/first_figure.py``)."""
    from app_support.static_assets import streamlit_static_folder

    folder = streamlit_static_folder() / "static" / "js"
    todo = [f.name for c in chunks for f in sorted(folder.glob(f"{c}.*.js"))[:1]]
    seen: list[str] = []
    while todo:
        name = todo.pop(0)
        if name in seen or not (folder / name).is_file():
            continue
        seen.append(name)
        todo.extend(m.decode() for m in _IMPORT.findall((folder / name).read_bytes()))
    return b"".join(f'<link rel="modulepreload" crossorigin href="./static/js/{html.escape(n)}" />'.encode()
                    for n in seen if n.encode() not in already)


def with_placeholder(page: bytes, path: str) -> bytes:
    """Streamlit's HTML page with the placeholder for ``path`` in its root element and Plotly
    preloaded (the cartesian bundle where ``serve.py`` serves it, else Streamlit's chart module); a
    page without exactly one empty root element is returned unchanged."""
    if page.count(ROOT) != 1:
        return page
    from app_support.plotly_figure import bundle_served, preload_link

    # the Plotly that the figures will draw with: the served bundle where there is one, with the
    # component module that draws them
    links = preload_link() + chunk_preload_links(already=page) if bundle_served() else plotly_preload_link()
    page = page.replace(ROOT, placeholder_html(path))
    if page.count(HEAD_END) == 1:
        page = page.replace(HEAD_END, links + HEAD_END)
    return page


def is_page_address(path: str) -> bool:
    """Whether ``path`` may answer with the app's HTML page (a page's address, not a file or an
    endpoint of Streamlit's)."""
    first = path.strip("/").split("/")[0]
    return "." not in path.rsplit("/", 1)[-1] and first not in ("static", "_stcore", "component", "media", "app")


class BootPlaceholder:
    """ASGI middleware: the text/html answer of a GET whose body holds Streamlit's empty root
    element becomes :func:`with_placeholder` (Content-Length corrected); every other answer passes
    untouched, streamed as it comes."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Callable[..., Awaitable[Any]], send: Callable[..., Awaitable[None]]) -> None:
        if scope.get("type") != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        if is_page_address(scope.get("path", "")):
            # the page (8 kB) comes uncompressed, so that its root element can be found; scripts and
            # styles keep their compression
            scope = {**scope, "headers": [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"accept-encoding"]}
        start: dict | None = None
        body: list[bytes] = []

        async def send_wrapped(message: dict) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                if b"text/html" in headers.get(b"content-type", b"") and b"content-encoding" not in headers:
                    start = message  # held until the whole page is here
                    return
                await send(message)
            elif message["type"] == "http.response.body" and start is not None:
                body.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                page = with_placeholder(b"".join(body), scope.get("path", ""))
                headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                headers.append((b"content-length", str(len(page)).encode()))
                await send({**start, "headers": headers})
                await send({"type": "http.response.body", "body": page, "more_body": False})
            else:
                await send(message)

        await self.app(scope, receive, send_wrapped)


class DefaultPageRedirect:
    """ASGI middleware: a GET of ``/rankings`` (:data:`DEFAULT_PAGE`, with or without a trailing slash)
    answers a permanent redirect to the app's root with the same query string; everything else passes."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Callable[..., Awaitable[Any]], send: Callable[..., Awaitable[None]]) -> None:
        path = scope.get("path", "")
        if scope.get("type") == "http" and scope.get("method") in ("GET", "HEAD") and path.rstrip("/").endswith("/" + DEFAULT_PAGE):
            query = scope.get("query_string", b"")
            # relative, so that it also holds under a server.baseUrlPath: /base/rankings -> /base/
            target = (b"./" if not path.endswith("/") else b"../") + (b"?" + query if query else b"")
            await send({"type": "http.response.start", "status": 308,
                        "headers": [(b"location", target), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await self.app(scope, receive, send)
