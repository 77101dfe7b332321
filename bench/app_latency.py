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
ERRORS = ("() => Array.from(document.querySelectorAll('[data-testid=\"stMain\"] [data-testid=\"stException\"], "
          "[data-testid=\"stMain\"] [data-testid=\"stAlertContentError\"]')).map(e => e.innerText.slice(0, 200))")
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


# The sidebar's continuous sliders (react-aria): a visually hidden <input type="range"> inside the
# thumb, whose parent is the track. Returns the track's box and the input's value.
TRACK = """(label) => {
  const input = Array.from(document.querySelectorAll('[data-testid="stSidebar"] input[type="range"]'))
                     .find(e => (e.getAttribute('aria-label') || '').startsWith(label));
  if (!input) return null;
  const track = input.parentElement.parentElement.parentElement;
  const r = track.getBoundingClientRect();
  return {x: r.left, y: r.top + r.height / 2, width: r.width, value: parseFloat(input.value)};
}"""
SLIDERS = {"omega": ("ω", 0.0, 8.0, 0.1), "beta_max": ("β_max", 0.0, 20.0, 0.5)}


def _move(page, which: str, target: float) -> tuple[float, float]:
    """Press the slider's track where ``target`` lies and release; returns (value after, release time).
    A press on the track moves the thumb there (react-aria), one release = one new value."""
    label, lo, hi, _ = SLIDERS[which]
    page.locator(f'[data-testid="stSidebar"] input[type="range"][aria-label^="{label}"]').scroll_into_view_if_needed()
    box = page.evaluate(TRACK, label)
    x = box["x"] + (target - lo) / (hi - lo) * box["width"]
    page.mouse.move(x, box["y"])
    page.mouse.down()
    page.mouse.up()
    released = time.perf_counter()
    return float(page.evaluate(TRACK, label)["value"]), released


def _nudge(page, which: str, key: str) -> tuple[float, float]:
    """One arrow key on the focused thumb (when a press on the track did not move it)."""
    label = SLIDERS[which][0]
    page.locator(f'[data-testid="stSidebar"] input[type="range"][aria-label^="{label}"]').focus()
    page.keyboard.press(key)
    released = time.perf_counter()
    return float(page.evaluate(TRACK, label)["value"]), released


def slider_moves(browser, url: str, moves: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    setting = {"omega": 1.3, "beta_max": 6.5}  # off the grid: the sidebar shows the continuous sliders
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.goto(f"{url}/?omega={setting['omega']:g}&beta_max={setting['beta_max']:g}")
    page.wait_for_function(ranking_for(setting["omega"], setting["beta_max"]), timeout=300_000)
    rows = []
    for which in ("omega", "beta_max"):
        _, lo, hi, step = SLIDERS[which]
        for _ in range(moves):
            current = setting[which]
            target = lo + step * float(rng.integers(0, int(round((hi - lo) / step)) + 1))
            if abs(target - current) < step / 2:
                target = current + step if current + step <= hi else current - step
            value, released = _move(page, which, target)
            if abs(value - current) < step / 2:  # the press landed on the thumb itself
                value, released = _nudge(page, which, "ArrowRight" if current + step <= hi else "ArrowLeft")
            setting[which] = round(value, 2)
            try:
                page.wait_for_function(ranking_for(setting["omega"], setting["beta_max"]), timeout=120_000, polling=20)
                dt = time.perf_counter() - released
                kind = "approximate" if "Bayesian ranking, approximate" in page.evaluate(MAIN_TEXT) else "fit"
            except Exception:  # noqa: BLE001
                dt, kind = float("nan"), "timeout"
            alerts = page.evaluate(ERRORS)
            rows.append({"slider": which, **setting, "seconds": dt, "kind": kind, "errors": alerts})
            print(f"  {which}: → {_label(setting['omega'], setting['beta_max'])}: {dt:.2f} s ({kind})"
                  + (f"  ERROR SHOWN: {alerts}" if alerts else ""), flush=True)
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
