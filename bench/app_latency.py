"""Latency of the app in a real browser (issue 13): slider release → redrawn ranking, and time to
first content / first figure per page, on a fresh and on a warm server. Prints figures; asserts nothing.

Usage (repo root, project venv, Debian's Chromium)::

    .venv/bin/python -m bench.app_latency                 # port 8615, 20 moves per slider
    .venv/bin/python -m bench.app_latency --moves 5 --fast   # small fits (SIMPLEX_JUDGE_FAST=1)

One ``streamlit run serve.py`` process with an empty fit cache and the background grid on (the
reweighting's sources). Measured from Chromium:

* **pages, fresh**: right after the server is healthy, each page is opened in a new tab:
  ``content`` = the page's title and some text are drawn, ``figure`` = a Plotly figure has drawn
  (``.js-plotly-plot``), both from ``page.goto``;
* the default fit and the background grid are then given ``--grid-wait`` seconds (the warm
  server of the issue: "a fit of the dataset already done");
* **sliders, warm**: the Rankings page at off-grid settings (so the sidebar shows the continuous
  sliders); ``--moves`` random moves of each slider by the keyboard (arrow keys; each key is a
  release), from the last key to the ranking line redrawn for the new setting — the approximate
  (reweighted) line or the real fit's, whichever comes first; which one it was is counted;
* **pages, warm**: each page again.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.speed import uptime  # noqa: E402
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, PAGES, _wait_healthy  # noqa: E402

MAIN_TEXT = "() => (document.querySelector('[data-testid=\"stMain\"]') || {innerText: ''}).innerText"
FIGURE = "() => document.querySelectorAll('[data-testid=\"stMain\"] .js-plotly-plot .main-svg').length > 0"


def _label(omega: float, beta: float) -> str:
    return f"ω = {omega:g}, β_max = {beta:g}"


def ranking_for(omega: float, beta: float) -> str:
    """JS predicate: the ranking line for this setting is drawn (approximate, or the real fit's)."""
    label = _label(omega, beta)
    return (f"() => {{ const t = ({MAIN_TEXT})(); return (t.includes('Bayesian ranking, approximate') && "
            f"t.includes('real fit at {label}')) || (t.includes('Fit: {label}') && t.includes('Bayesian ranking (best')); }}")


def open_pages(browser, url: str) -> list[dict]:
    rows = []
    for name, address, has_figure in PAGES:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(f"{url}/{address}")
        page.wait_for_selector('[data-testid="stMain"] h1', timeout=180_000)
        page.wait_for_function(f"() => ({MAIN_TEXT})().length > 200", timeout=180_000)
        content = time.perf_counter() - t0
        figure = float("nan")
        if has_figure:
            try:
                page.wait_for_function(FIGURE, timeout=180_000)
                figure = time.perf_counter() - t0
            except Exception:  # noqa: BLE001 — a page still waiting for its fit: reported as missing
                pass
        rows.append({"page": name, "content": content, "figure": figure})
        ctx.close()
    return rows


def slider_moves(browser, url: str, moves: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    omega, beta = 1.3, 6.5  # off the grid: the sidebar shows the continuous sliders
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.goto(f"{url}/?omega={omega:g}&beta_max={beta:g}")
    page.wait_for_function(ranking_for(omega, beta), timeout=300_000)
    rows = []
    sliders = page.locator('[data-testid="stSlider"] [role="slider"]')  # ω first, then β_max (the sidebar's)
    for which, step, top in (("omega", 0.1, 8.0), ("beta_max", 0.5, 20.0)):
        thumb = sliders.nth(0 if which == "omega" else 1)
        for _ in range(moves):
            current = omega if which == "omega" else beta
            n_steps = int(round(top / step))
            target = float(rng.integers(0, n_steps + 1)) * step
            if abs(target - current) < step / 2:
                target = current + step if current + step <= top else current - step
            keys = int(round((target - current) / step))
            thumb.focus()
            for _ in range(abs(keys)):
                page.keyboard.press("ArrowRight" if keys > 0 else "ArrowLeft")
            t0 = time.perf_counter()
            if which == "omega":
                omega = round(target, 1)
            else:
                beta = round(target, 1)
            try:
                page.wait_for_function(ranking_for(omega, beta), timeout=120_000)
                dt = time.perf_counter() - t0
                kind = "approximate" if "approximate" in page.evaluate(MAIN_TEXT) else "fit"
            except Exception:  # noqa: BLE001
                dt, kind = float("nan"), "timeout"
            rows.append({"slider": which, "omega": omega, "beta_max": beta, "seconds": dt, "kind": kind})
            print(f"  {which}: → {_label(omega, beta)}: {dt:.2f} s ({kind})", flush=True)
    ctx.close()
    return rows


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=8615)
    p.add_argument("--moves", type=int, default=20)
    p.add_argument("--grid-wait", type=float, default=240.0, help="seconds for the default fit and the grid")
    p.add_argument("--fast", action="store_true", help="small fits (SIMPLEX_JUDGE_FAST=1)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"# bench.app_latency  {time.strftime('%Y-%m-%d %H:%M:%S')}  moves={args.moves} fast={args.fast}")
    print(f"# load before: {uptime()}")
    with tempfile.TemporaryDirectory(prefix="app-latency-") as cache:
        env = dict(os.environ, SIMPLEX_JUDGE_CACHE=cache, SIMPLEX_JUDGE_BACKGROUND_GRID="1")
        if args.fast:
            env["SIMPLEX_JUDGE_FAST"] = "1"
        else:
            env.pop("SIMPLEX_JUDGE_FAST", None)
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "serve.py", "--server.headless", "true",
                                 "--server.port", str(args.port), "--browser.gatherUsageStats", "false"],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{args.port}"
        try:
            _wait_healthy(url, proc)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
                fresh = open_pages(browser, url)
                for r in fresh:
                    print(f"  fresh {r['page']}: content {r['content']:.2f} s, figure {r['figure']:.2f} s", flush=True)
                print(f"# waiting {args.grid_wait:g} s for the default fit and the background grid", flush=True)
                time.sleep(args.grid_wait)
                moves = slider_moves(browser, url, args.moves, args.seed)
                warm = open_pages(browser, url)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print("\n| page | fresh: content (s) | fresh: figure (s) | warm: content (s) | warm: figure (s) |")
    print("|---|---|---|---|---|")
    for f, w in zip(fresh, warm):
        print(f"| {f['page']} | {f['content']:.2f} | {f['figure']:.2f} | {w['content']:.2f} | {w['figure']:.2f} |")
    print("\n| slider | moves | median (s) | max (s) | approximate first | real fit first | timeouts |")
    print("|---|---|---|---|---|---|---|")
    for which in ("omega", "beta_max"):
        rows = [r for r in moves if r["slider"] == which]
        sec = np.array([r["seconds"] for r in rows], dtype=float)
        kinds = [r["kind"] for r in rows]
        print(f"| {which} | {len(rows)} | {np.nanmedian(sec):.2f} | {np.nanmax(sec):.2f} | {kinds.count('approximate')} | "
              f"{kinds.count('fit')} | {kinds.count('timeout')} |")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
