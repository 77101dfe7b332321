"""One fresh ``serve.py`` and one headless Chromium for a browser benchmark: an empty fit cache of its
own, the background grid on or off, full-size fits, the server's output to a file if asked."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tests.streamlit_server import streamlit_server
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS


@contextmanager
def served_browser(port: int, *, grid: bool, log: Path | None = None, prefix: str = "bench-") -> Iterator[tuple[str, object]]:
    """``(url, browser)``: a fresh server on ``port`` over an empty temporary fit cache, and Chromium."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix=prefix) as cache:
        env = dict(os.environ, SIMPLEX_JUDGE_CACHE=cache, SIMPLEX_JUDGE_BACKGROUND_GRID="1" if grid else "0")
        env.pop("SIMPLEX_JUDGE_FAST", None)
        output = open(log, "w") if log else None  # noqa: SIM115 — closed below
        try:
            with streamlit_server("serve.py", port, env, output=output) as url, sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
                try:
                    yield url, browser
                finally:
                    browser.close()
        finally:
            if output is not None:
                output.close()
