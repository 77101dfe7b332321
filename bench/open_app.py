"""Opening benchmark: how long until a visitor sees a meaningful result on the default
dataset. Prints figures; asserts nothing.

Usage (repo root, project venv, Debian's Chromium)::

    .venv/bin/python -m bench.open_app                    # 3 fresh servers of serve.py, 3 visits each
    .venv/bin/python -m bench.open_app --entry app.py     # the same without the warm start

For each of ``--servers`` fresh ``streamlit run <entry>`` processes (``serve.py``, the README's
command, warms the process at start-up; ``app.py`` does not) (default settings: real fit
sizes, an empty fit cache, no background grid so the machine stays as a first visitor finds it),
it waits until the server answers its health check, then opens the app ``--visits`` times in a
new headless Chromium page and measures, from ``page.goto``:

* ``title``: the page title is drawn (the app answered);
* ``headline``: the one-line Bayesian ranking (best first, with 95% rank intervals) is drawn: the
  answer, before the browser has loaded Plotly's script (4.7 MB) for the figures;
* ``ranking``: the ranking figure holds the Bayesian posterior (the precomputed default fit).

With ``app.py`` the first visit of a server pays Python's imports of the page modules, the
dataset load and the baselines; later visits do not. ``--first-visit-after`` waits that many
seconds after the health check before the first visit (a visitor who does not come within a second
of the server starting).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.speed import uptime

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.test_browser import BAYESIAN_DRAWN as RANKING_READY  # noqa: E402
from tests.streamlit_server import free_port, streamlit_server  # noqa: E402
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

HEADLINE_READY = ("() => (document.querySelector('[data-testid=\"stMain\"]') || {innerText: ''})"
                  ".innerText.includes('Bayesian ranking (best first')")


def one_server(visits: int, entry: str = "serve.py", first_visit_after: float = 0.0) -> tuple[float, list[dict]]:
    from playwright.sync_api import sync_playwright

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="open-app-") as cache:
        env = dict(os.environ, SIMPLEX_JUDGE_CACHE=cache, SIMPLEX_JUDGE_BACKGROUND_GRID="0")
        env.pop("SIMPLEX_JUDGE_FAST", None)
        t0 = time.perf_counter()
        with streamlit_server(entry, port, env) as url:
            healthy = time.perf_counter() - t0
            time.sleep(first_visit_after)
            rows = []
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
                for _ in range(visits):
                    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                    page = ctx.new_page()
                    t1 = time.perf_counter()
                    page.goto(url)
                    page.wait_for_selector('[data-testid="stMain"] h1', timeout=120_000)
                    title = time.perf_counter() - t1
                    page.wait_for_function(HEADLINE_READY, timeout=120_000)
                    headline = time.perf_counter() - t1
                    page.wait_for_function(RANKING_READY, timeout=120_000)
                    rows.append({"title": title, "headline": headline, "ranking": time.perf_counter() - t1})
                    ctx.close()
                browser.close()
    return healthy, rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", type=int, default=3)
    p.add_argument("--visits", type=int, default=3)
    p.add_argument("--entry", default="serve.py", choices=("serve.py", "app.py"))
    p.add_argument("--first-visit-after", type=float, default=0.0)
    args = p.parse_args(argv)
    print(f"# bench.open_app  {time.strftime('%Y-%m-%d %H:%M:%S')}  entry={args.entry} servers={args.servers} "
          f"visits={args.visits} first visit {args.first_visit_after:g} s after healthy")
    print(f"# load before: {uptime()}")
    print("| server | start to healthy (s) | visit | title drawn (s) | ranking headline (s) | ranking figure (s) |")
    print("|---|---|---|---|---|---|")
    first, later, starts = [], [], []
    for s in range(args.servers):
        healthy, rows = one_server(args.visits, args.entry, args.first_visit_after)
        starts.append(healthy)
        for v, r in enumerate(rows):
            (first if v == 0 else later).append(r)
            print(f"| {s} | {healthy:.1f} | {v + 1} | {r['title']:.1f} | {r['headline']:.1f} | {r['ranking']:.1f} |", flush=True)
    med = lambda rows, k: float(np.median([r[k] for r in rows])) if rows else float("nan")  # noqa: E731
    print(f"server start to healthy: median {np.median(starts):.1f} s")
    for label, rows in (("first visit of a fresh server", first), ("later visits", later)):
        print(f"{label}: title {med(rows, 'title'):.1f} s, ranking headline {med(rows, 'headline'):.1f} s, "
              f"ranking figure {med(rows, 'ranking'):.1f} s (medians)")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
