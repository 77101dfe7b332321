"""Slider moves on a fresh server with an empty fit cache, and the first figure of a new browser on a
warm one. Prints figures; asserts nothing.

Usage (repo root, project venv, Debian's Chromium)::

    .venv/bin/python -m bench.app_fresh_moves                 # port 8617, full-size fits, background grid on
    .venv/bin/python -m bench.app_fresh_moves --passes 5      # five first-figure passes

One ``streamlit run serve.py`` with a temporary, empty fit cache and the background grid on, as a
new deployment finds itself. As soon as it answers, one Chromium tab opens the Rankings page (the
default dataset and settings: the shipped fit at ω = 0, β_max = 5) and waits until its ranking line
and first figure are drawn. Then, at once, ten moves, each one arrow key on the focused slider (one
step): ω 0 → 1.25 by 0.25, then β_max 5 → 7.5 by 0.5. Each move is timed by the tab's own clock from
the key's release to the first animation frame showing the ranking line for the new setting (the
approximate, reweighted line or the real fit's, whichever comes first; see
:func:`bench.app_latency.ranking_for`), and to the rank-distributions figure titled with it; the
next move follows half a second after that figure. Everything the server does meanwhile (the
dataset's refits, the background grid) competes for the same two cores, and so does the browser.

Then, with ``--passes`` > 0, the first figure of Rankings and Simplex in a new tab of a new browser
context (nothing cached), ``--passes`` times, on the now warm server (``--grid-wait`` seconds at
most are given to the background grid first, as on a server in use).

The 1-minute load average is printed before, between and after: on a shared machine it dominates.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.app_latency import (ERRORS, MAIN_CONTENT, PAGE_MARKS, RELEASE_CLOCK, SLIDERS, _label, _page_clock,  # noqa: E402
                               rank_figure_for, ranking_for, wait_for_grid, wait_for_mark)
from bench.speed import uptime  # noqa: E402
from bench.browser_session import served_browser  # noqa: E402

#: (slider, number of one-step moves up): ω 0 → 1.25 by 0.25, then β_max 5 → 7.5 by 0.5
MOVES = (("omega", 5), ("beta_max", 5))
START = {"omega": 0.0, "beta_max": 5.0}


def load1() -> str:
    return os.getloadavg()[0].__format__(".2f")


def _step(page, which: str, key: str = "ArrowRight") -> float:
    """One arrow key (``ArrowRight``: one step up; ``ArrowLeft``: down) on the slider's focused thumb;
    returns the slider's value after it."""
    label = SLIDERS[which][0]
    thumb = page.locator(f'[data-testid="stSidebar"] input[type="range"][aria-label^="{label}"]')
    thumb.scroll_into_view_if_needed()
    thumb.focus()
    page.keyboard.press(key)
    return float(page.evaluate(
        "(label) => { const e = Array.from(document.querySelectorAll('[data-testid=\"stSidebar\"] input[type=\"range\"]'))"
        ".find(i => (i.getAttribute('aria-label') || '').startsWith(label));"
        " return parseFloat(e.getAttribute('aria-valuetext') || e.value); }", label))


def fresh_moves(browser, url: str) -> tuple[float, list[dict]]:
    """Seconds from ``goto`` to the first drawn Rankings page, and one row per move."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.add_init_script(RELEASE_CLOCK)
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(url)
    om, be = START["omega"], START["beta_max"]
    page.wait_for_function(ranking_for(om, be), timeout=300_000)
    page.wait_for_function(rank_figure_for(om, be), timeout=300_000)
    opened = time.perf_counter() - t0
    rows = []
    setting = dict(START)
    for which, count in MOVES:
        for _ in range(count):
            value = _step(page, which)
            setting[which] = round(value, 2)
            om, be = setting["omega"], setting["beta_max"]
            row = {"slider": which, "omega": om, "beta_max": be, "ranking": float("nan"), "figure": float("nan"),
                   "kind": "timeout", "load": load1()}
            try:
                row["ranking"] = _page_clock(page, ranking_for(om, be, MAIN_CONTENT), 120_000)
                text = page.evaluate(MAIN_CONTENT)
                row["kind"] = "approximate" if f"Bayesian ranking, approximate ({_label(om, be)}," in text else "fit"
                row["figure"] = _page_clock(page, rank_figure_for(om, be), 120_000)
            except Exception:  # noqa: BLE001 — reported as a timeout
                pass
            row["errors"] = page.evaluate(ERRORS)
            rows.append(row)
            print(f"  {which} → {_label(om, be)}: ranking {row['ranking']:.2f} s ({row['kind']}), rank figure "
                  f"{row['figure']:.2f} s, load {row['load']}"
                  + (f"  ERROR SHOWN: {row['errors']}" if row["errors"] else ""), flush=True)
            time.sleep(0.5)
    ctx.close()
    return opened, rows


def first_figures(browser, url: str, pages: list[tuple[str, str]]) -> list[dict]:
    """Each page in a new tab of a new browser context: the tab's own clock (0 = start of the
    navigation) at its text and at its first drawn figure."""
    rows = []
    for name, address in pages:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        page.add_init_script(PAGE_MARKS)
        page.goto(f"{url}/{address}", wait_until="commit")
        try:
            wait_for_mark(page, "figure", timeout=120_000)
        except Exception:  # noqa: BLE001 — reported as missing
            pass
        marks = {k: v / 1000.0 for k, v in page.evaluate("window.__marks").items()}
        rows.append({"page": name, "content": marks.get("content", float("nan")),
                     "figure": marks.get("figure", float("nan")), "errors": page.evaluate(ERRORS), "load": load1()})
        ctx.close()
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=8617)
    p.add_argument("--passes", type=int, default=3, help="first-figure passes on the warm server (0: none)")
    p.add_argument("--grid-wait", type=float, default=600.0, help="at most this many seconds for the background grid "
                   "before the first-figure passes")
    p.add_argument("--log", type=Path, help="write the server's output here")
    args = p.parse_args(argv)
    print(f"# bench.app_fresh_moves  {time.strftime('%Y-%m-%d %H:%M:%S')}  ({os.cpu_count()} CPUs)")
    print(f"# load before: {uptime()}", flush=True)
    with served_browser(args.port, grid=True, log=args.log, prefix="app-fresh-") as (url, browser):
        opened, moves = fresh_moves(browser, url)
        print(f"# load after the moves: {uptime()}", flush=True)
        pages = []
        if args.passes:
            print(f"# {wait_for_grid(browser, url, args.grid_wait)}; load: {uptime()}", flush=True)
            for _ in range(args.passes):
                pages.extend(first_figures(browser, url, [("rankings", ""), ("simplex", "simplex")]))
    seconds = np.array([r["ranking"] for r in moves], dtype=float)
    figures = np.array([r["figure"] for r in moves], dtype=float)
    print(f"\nfresh server, empty cache: first Rankings page drawn {opened:.1f} s after goto")
    print("| move | setting | release → ranking (s) | release → rank figure (s) | answer | load (1 min) |")
    print("|---|---|---|---|---|---|")
    for i, r in enumerate(moves, start=1):
        print(f"| {i} | {_label(r['omega'], r['beta_max'])} | {r['ranking']:.2f} | {r['figure']:.2f} | {r['kind']} | "
              f"{r['load']} |")
    print(f"release → ranking over {len(moves)} moves: median {np.nanmedian(seconds):.2f} s, max {np.nanmax(seconds):.2f} s; "
          f"rank figure median {np.nanmedian(figures):.2f} s, max {np.nanmax(figures):.2f} s; "
          f"timeouts {int(np.isnan(seconds).sum())}; error alerts {sum(len(r['errors']) for r in moves)}")
    for name in ("rankings", "simplex"):
        rows = [r for r in pages if r["page"] == name]
        if rows:
            fig = np.array([r["figure"] for r in rows], dtype=float)
            print(f"first figure, new browser, warm server, {name}: median {np.nanmedian(fig):.2f} s, max "
                  f"{np.nanmax(fig):.2f} s over {len(rows)} ({', '.join(f'{v:.2f}' for v in fig)}; loads "
                  f"{', '.join(r['load'] for r in rows)}); error alerts {sum(len(r['errors']) for r in rows)}")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
