"""Latency of the app in a real browser: slider release → redrawn ranking, and time to
first content / first figure per page, on a fresh and on a warm server. Prints figures; asserts nothing.

Usage (repo root, project venv, Debian's Chromium)::

    .venv/bin/python -m bench.app_latency                 # port 8615, 20 moves per slider
    .venv/bin/python -m bench.app_latency --moves 5 --fast   # small fits (SIMPLEX_JUDGE_FAST=1)

One ``streamlit run serve.py`` process with an empty fit cache and the background grid on. Measured
from Chromium:

* **pages, fresh**: right after the server is healthy, each page is opened in a new tab:
  ``content`` = the page's title and some text are drawn, ``figure`` = a Plotly figure has drawn
  (``.js-plotly-plot``), both by the tab's own clock (``performance.now()``, whose zero is the start
  of the navigation, as when a visitor presses Enter) at the first animation frame that shows them;
  the figure by the bench's clock (from ``page.goto``, through Playwright's round trips) beside it;
* the background grid (5 × 5 fits, the reweighting's sources besides the fits shipped with the app)
  is then given up to ``--grid-wait`` seconds to finish (the warm server of the issue: "a fit of
  the dataset already done"); the sidebar's "N of 25 fitted" says when;
* **sliders, warm**: the Rankings page as a visitor finds it (the sidebar's fine-grid sliders, 33
  values of ω and 41 of β_max); ``--moves`` random moves of each slider, each one press and release
  of the mouse on the slider's track where the target value lies (an arrow key on the focused thumb
  when the press landed on the thumb itself). Timed from the release to (a) the ranking line redrawn
  for the new setting — the approximate (reweighted) line or the real fit's, whichever comes first;
  which one it was, and whether k̂ > 0.7 flagged it, is counted —, (b) the rank-distributions
  figure (the page's first figure) drawn with its title naming the new setting, and (c) the
  leaderboard figure's title naming it. The next move waits for (c) plus a second, so that moves
  do not cut each other's page runs short. Error alerts on the page are counted. The times are
  taken by the page's own clock: the ``pointerup`` (or ``keyup``) event's ``performance.now()``
  to the first animation frame at which the predicate holds (Playwright polling on ``raf``, reading
  ``textContent``, which forces no layout); the same moves timed by the bench's clock (from
  ``mouse.up()`` returning to ``wait_for_function`` returning, which adds Playwright's round trips)
  are printed beside them; After the last
  move, the time until the real fit replaces the approximate answer is printed;
* **pages, warm**: each page again.

With ``--pages-only N``: N warm passes of new tabs, each in a new browser context (a first visit:
nothing in the browser's cache); N passes of new tabs in one context whose cache a first pass has
filled (a returning visitor, or a second tab: Streamlit's and Plotly's scripts come from the cache,
and Chromium reuses their compiled code); then N passes inside one tab, each page opened by its
link in the sidebar (how a visitor moves between pages: no new tab, Streamlit and Plotly already
loaded), timed from the click.

The machine's load average is printed before and after: on a shared machine it dominates.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.speed import uptime  # noqa: E402
from tests.streamlit_server import streamlit_server  # noqa: E402
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, PAGES  # noqa: E402

MAIN_TEXT = "() => (document.querySelector('[data-testid=\"stMain\"]') || {innerText: ''}).innerText"
# the same text without forcing a layout, for predicates polled on every animation frame
MAIN_CONTENT = "() => (document.querySelector('[data-testid=\"stMain\"]') || {textContent: ''}).textContent"
# the page's clock at the last release of a pointer or key (added to every page of the sliders' context)
RELEASE_CLOCK = """for (const type of ['pointerup', 'keyup'])
  window.addEventListener(type, () => { window.__released = performance.now(); }, true);"""
SIDEBAR_TEXT = "() => (document.querySelector('[data-testid=\"stSidebar\"]') || {innerText: ''}).innerText"
ERRORS = ("() => Array.from(document.querySelectorAll('[data-testid=\"stMain\"] [data-testid=\"stException\"], "
          "[data-testid=\"stMain\"] [data-testid=\"stAlertContentError\"]')).map(e => e.innerText.slice(0, 200))")
FIGURE = "() => document.querySelectorAll('[data-testid=\"stMain\"] .js-plotly-plot .main-svg').length > 0"
# A new tab's own clock (performance.now(): 0 is the start of the navigation, as when a visitor
# presses Enter): the first animation frame at which the placeholder or the page's title, the page's
# text, and a figure are drawn. Read with textContent (no forced layout), like the sliders' clock.
PAGE_MARKS = """window.__marks = {};
(function mark() {
  const m = window.__marks, now = performance.now(), main = document.querySelector('[data-testid="stMain"]');
  if (!('first' in m) && (document.querySelector('[data-testid="bootPlaceholder"]') || (main && main.querySelector('h1'))))
    m.first = now;
  if (main && main.querySelector('h1')) {
    if (!('content' in m) && main.textContent.length > 200) m.content = now;
    if (!('figure' in m) && main.querySelector('.js-plotly-plot .main-svg')) m.figure = now;
  }
  if (!('figure' in m)) requestAnimationFrame(mark);
})();"""

# The sidebar's continuous sliders (react-aria): a visually hidden <input type="range"> inside the
# thumb, whose parent is the track. Returns the track's box and the input's value.
TRACK = """(label) => {
  const input = Array.from(document.querySelectorAll('[data-testid="stSidebar"] input[type="range"]'))
                     .find(e => (e.getAttribute('aria-label') || '').startsWith(label));
  if (!input) return null;
  const track = input.parentElement.parentElement.parentElement;
  const r = track.getBoundingClientRect();
  // a select_slider's input holds the option's index; its aria-valuetext the value shown
  return {x: r.left, y: r.top + r.height / 2, width: r.width,
          value: parseFloat(input.getAttribute('aria-valuetext') || input.value)};
}"""
#: name -> (aria-label prefix, min, max, step) of the sidebar's fine-grid sliders
SLIDERS = {"omega": ("ω", 0.0, 8.0, 0.25), "beta_max": ("β_max", 0.0, 20.0, 0.5)}


def _label(omega: float, beta: float) -> str:
    return f"ω = {omega:g}, β_max = {beta:g}"


def ranking_for(omega: float, beta: float, text: str = MAIN_TEXT) -> str:
    """JS predicate: the ranking line for this setting is drawn (approximate, or the real fit's)."""
    label = _label(omega, beta)
    return (f"() => {{ const t = ({text})(); return t.includes('Bayesian ranking, approximate ({label},') || "
            f"(t.includes('Fit: {label},') && t.includes('Bayesian ranking (best')); }}")


def _page_clock(page, predicate: str, timeout: float) -> float:
    """Seconds by the page's clock from the last pointer/key release to the first animation frame at
    which ``predicate`` holds."""
    handle = page.wait_for_function(f"() => (({predicate})() ? performance.now() : false)", timeout=timeout,
                                    polling="raf")
    return (float(handle.json_value()) - float(page.evaluate("window.__released"))) / 1000.0


def _figure_titled(part: str, omega: float, beta: float) -> str:
    """JS predicate: a figure whose title holds ``part`` and names this setting is drawn (titles
    wrap with <br>: compared word by word)."""
    return ("() => Array.from(document.querySelectorAll('[data-testid=\"stMain\"] .js-plotly-plot')).some(d => {"
            " const t = String((d.layout && d.layout.title && (d.layout.title.text || d.layout.title)) || '')"
            ".replace(/<br>/g, ' ').replace(/\\s+/g, ' ');"
            f" return t.includes('{part}') && t.includes('({_label(omega, beta)},') && "
            "d.querySelector('.main-svg'); })")


def rank_figure_for(omega: float, beta: float) -> str:
    """JS predicate: the rank-distributions figure (the page's first) is drawn for this setting."""
    return _figure_titled("rank distributions", omega, beta)


def leaderboard_for(omega: float, beta: float) -> str:
    """JS predicate: the leaderboard figure is drawn for this setting (approximate or fitted)."""
    return _figure_titled("leaderboard", omega, beta)


def flagged_for(omega: float, beta: float) -> str:
    """JS: whether the notice of this setting's approximate answer says k̂ > 0.7 (read from that
    notice alone: a figure of the previous move may still be on the page)."""
    return ("() => Array.from(document.querySelectorAll('[data-testid=\"stMain\"] [data-testid=\"stAlert\"]'))"
            f".some(e => e.innerText.includes('real fit at {_label(omega, beta)},') && "
            "e.innerText.includes('not to be trusted'))")


def wait_for_mark(page, mark: str, timeout: float = 180_000) -> None:
    """Wait until the tab's :data:`PAGE_MARKS` script has noted ``mark`` (``first``, ``content`` or
    ``figure``): polled on animation frames, reading a variable only."""
    page.wait_for_function(f"() => window.__marks && '{mark}' in window.__marks", timeout=timeout, polling="raf")


def open_pages(browser, url: str, shared: Any = None) -> list[dict]:
    """Each page in a new tab of a new browser context (a visitor whose browser has never seen the
    app: nothing cached), or with ``shared`` (a context), a new tab of that context (a returning
    visitor: Streamlit's and Plotly's scripts in the browser's cache)."""
    rows = []
    for name, address, has_figure in PAGES:
        ctx = shared or browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        page.add_init_script(PAGE_MARKS)
        t0 = time.perf_counter()
        page.goto(f"{url}/{address}", wait_until="commit")
        # the page's own marks (PAGE_MARKS), waited for without reading the page (no forced layout)
        wait_for_mark(page, "content")
        figure = float("nan")
        if has_figure:
            try:
                wait_for_mark(page, "figure")
                figure = time.perf_counter() - t0  # the bench's clock, printed beside the page's
            except Exception:  # noqa: BLE001 — a page still waiting for its fit: reported as missing
                pass
        marks = {k: v / 1000.0 for k, v in page.evaluate("window.__marks").items()}
        rows.append({"page": name, "first": marks.get("first", float("nan")), "content": marks["content"],
                     "figure": marks.get("figure", float("nan")), "bench_figure": figure,
                     "errors": page.evaluate(ERRORS)})
        if shared is None:
            ctx.close()
        else:
            page.close()
    return rows


def _move(page, which: str, target: float) -> tuple[float, float]:
    """Press the slider's track where ``target`` lies and release; returns (value after, release time).
    A press on the track moves the thumb there (react-aria): one release, one new value."""
    label, lo, hi, _ = SLIDERS[which]
    page.locator(f'[data-testid="stSidebar"] input[type="range"][aria-label^="{label}"]').scroll_into_view_if_needed()
    box = page.evaluate(TRACK, label)
    page.mouse.move(box["x"] + (target - lo) / (hi - lo) * box["width"], box["y"])
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
    setting = {"omega": 1.25, "beta_max": 6.5}  # a setting of the fine-grid sliders, off the background grid
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.add_init_script(RELEASE_CLOCK)
    page = ctx.new_page()
    page.goto(f"{url}/?omega={setting['omega']:g}&beta_max={setting['beta_max']:g}")
    page.wait_for_function(ranking_for(setting["omega"], setting["beta_max"]), timeout=300_000)
    page.wait_for_function(leaderboard_for(setting["omega"], setting["beta_max"]), timeout=300_000)
    rows: list[dict] = []
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
            at = time.time() - (time.perf_counter() - released)  # the release by the wall clock (server logs)
            setting[which] = round(value, 2)
            om, be = setting["omega"], setting["beta_max"]
            row = {"slider": which, **setting, "seconds": float("nan"), "figure": float("nan"), "board": float("nan"),
                   "bench_seconds": float("nan"), "kind": "timeout", "flagged": False}
            try:
                row["seconds"] = _page_clock(page, ranking_for(om, be, MAIN_CONTENT), 120_000)
                row["bench_seconds"] = time.perf_counter() - released
                text = page.evaluate(MAIN_TEXT)
                row["kind"] = "approximate" if f"Bayesian ranking, approximate ({_label(om, be)}," in text else "fit"
                row["flagged"] = row["kind"] == "approximate" and bool(page.evaluate(flagged_for(om, be)))
                row["figure"] = _page_clock(page, rank_figure_for(om, be), 120_000)
                row["board"] = _page_clock(page, leaderboard_for(om, be), 120_000)
            except Exception:  # noqa: BLE001 — reported as a timeout
                pass
            time.sleep(1.0)
            row["errors"] = page.evaluate(ERRORS)
            rows.append(row)
            print(f"  {which}: → {_label(om, be)}: ranking {row['seconds']:.2f} s (bench clock "
                  f"{row['bench_seconds']:.2f} s; {row['kind']}"
                  f"{', k̂ > 0.7' if row['flagged'] else ''}), rank figure {row['figure']:.2f} s, "
                  f"leaderboard figure {row['board']:.2f} s, released at "
                  f"{time.strftime('%H:%M:%S', time.localtime(at))}{f'{at % 1:.3f}'[1:]}"
                  + (f"  ERROR SHOWN: {row['errors']}" if row["errors"] else ""), flush=True)
    if rows and rows[-1]["kind"] == "approximate":
        t0 = time.perf_counter()
        try:
            page.wait_for_function(f"() => ({MAIN_TEXT})().includes('Fit: {_label(om, be)},')", timeout=600_000)
            print(f"  the real fit replaced the last approximate answer {time.perf_counter() - t0 + 1.0 + rows[-1]['board']:.1f} s "
                  "after the release", flush=True)
        except Exception:  # noqa: BLE001
            print("  the real fit did not replace the last approximate answer within 600 s", flush=True)
    ctx.close()
    return rows


def wait_for_grid(browser, url: str, timeout: float) -> str:
    """Wait until the sidebar says the background grid is fitted; returns what it said last."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.goto(url)
    t0, said = time.perf_counter(), "no grid progress shown"
    while time.perf_counter() - t0 < timeout:
        found = [line.strip() for line in page.evaluate(SIDEBAR_TEXT).split("\n") if " fitted" in line and " of " in line]
        if found:
            said = found[0]
            done, total = said.split(" fitted")[0].split(" of ")
            if done.strip() == total.strip():
                break
        time.sleep(5)
    ctx.close()
    return f"background grid after {time.perf_counter() - t0:.0f} s: {said}"


#: page name (PAGES) -> the title its page draws
TITLES = {"rankings": "Rankings", "data": "Data", "simplex": "Simplex", "sensitivity": "Sensitivity",
          "geometry": "Geometry lab", "guide": "Guide", "export": "Export"}
# the new page's own content: its title in the main area's heading, and text beyond it (or a figure)
PAGE_SHOWS = """([title, figure]) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const h1 = main && main.querySelector('h1');
  if (!h1 || !h1.innerText.trim().startsWith(title)) return false;
  return figure ? main.querySelectorAll('.js-plotly-plot .main-svg').length > 0 : main.innerText.length > 200;
}"""


def navigate_pages(browser, url: str) -> list[dict]:
    """Each page opened the way a visitor opens it inside the app: one tab, a click on its link in
    the sidebar (no new tab: Streamlit's scripts, styles and Plotly are already loaded). Timed from
    the click to the new page's title and text, and to its first figure."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_function(FIGURE, timeout=180_000)
    rows = []
    order = PAGES[1:] + PAGES[:1]  # end on Rankings, so that every page is left and entered once
    for name, address, has_figure in order:
        link = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{address}"]' if address else
                            '[data-testid="stSidebarNav"] a').filter(has_text=TITLES[name]).first
        t0 = time.perf_counter()
        link.click()
        page.wait_for_function(PAGE_SHOWS, arg=[TITLES[name], False], timeout=180_000)
        content = time.perf_counter() - t0
        figure = float("nan")
        if has_figure:
            try:
                page.wait_for_function(PAGE_SHOWS, arg=[TITLES[name], True], timeout=180_000)
                figure = time.perf_counter() - t0
            except Exception:  # noqa: BLE001 — reported as missing
                pass
        time.sleep(1.0)  # let the page's run finish before the next click
        rows.append({"page": name, "content": content, "figure": figure, "errors": page.evaluate(ERRORS)})
    ctx.close()
    return sorted(rows, key=lambda r: [n for n, _, _ in PAGES].index(r["page"]))


def _print_pages(fresh: list[dict], passes: list[list[dict]]) -> None:
    """Median and max per page over the warm passes (``--pages-only``); the placeholder's time where
    the pass opened new tabs."""
    print(f"\n| page | fresh: content (s) | fresh: figure (s) | warm ×{len(passes)}: placeholder median / max (s) | "
          "warm: content median / max (s) | warm: figure median / max (s) | warm: figure, bench clock (s) | "
          "error alerts |")
    print("|---|---|---|---|---|---|---|---|")
    for i, f in enumerate(fresh):
        c = np.array([p[i]["content"] for p in passes])
        g = np.array([p[i]["figure"] for p in passes])
        b = np.array([p[i].get("first", np.nan) for p in passes])
        gb = np.array([p[i].get("bench_figure", p[i]["figure"]) for p in passes])
        fig = "–" if np.isnan(g).all() else f"{np.nanmedian(g):.2f} / {np.nanmax(g):.2f}"
        fig_bench = "–" if np.isnan(gb).all() else f"{np.nanmedian(gb):.2f} / {np.nanmax(gb):.2f}"
        first = "–" if np.isnan(b).all() else f"{np.nanmedian(b):.2f} / {np.nanmax(b):.2f}"
        print(f"| {f['page']} | {f['content']:.2f} | {f['figure']:.2f} | {first} | {np.median(c):.2f} / {c.max():.2f} | "
              f"{fig} | {fig_bench} | {len(f['errors']) + sum(len(p[i]['errors']) for p in passes)} |")
    print(f"# load after: {uptime()}")


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=8615)
    p.add_argument("--moves", type=int, default=20)
    p.add_argument("--grid-wait", type=float, default=900.0, help="at most this many seconds for the background grid")
    p.add_argument("--fast", action="store_true", help="small fits (SIMPLEX_JUDGE_FAST=1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--pages-only", type=int, default=0, metavar="N",
                   help="only time first content / first figure per page: one fresh pass, then (once the "
                        "background grid, which holds the Sensitivity page's sweep, is fitted) N warm passes; "
                        "prints median and max per page")
    args = p.parse_args(argv)
    print(f"# bench.app_latency  {time.strftime('%Y-%m-%d %H:%M:%S')}  moves={args.moves} fast={args.fast}  "
          f"({os.cpu_count()} CPUs)")
    print(f"# load before: {uptime()}")
    with tempfile.TemporaryDirectory(prefix="app-latency-") as cache:
        env = dict(os.environ, SIMPLEX_JUDGE_CACHE=cache, SIMPLEX_JUDGE_BACKGROUND_GRID="1")
        if args.fast:
            env["SIMPLEX_JUDGE_FAST"] = "1"
        else:
            env.pop("SIMPLEX_JUDGE_FAST", None)
        with streamlit_server("serve.py", args.port, env) as url:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
                fresh = open_pages(browser, url)
                for r in fresh:
                    print(f"  fresh {r['page']}: placeholder {r['first']:.2f} s, content {r['content']:.2f} s, "
                          f"figure {r['figure']:.2f} s", flush=True)
                print(f"# load: {uptime()}; waiting up to {args.grid_wait:g} s for the background grid", flush=True)
                print(f"# {wait_for_grid(browser, url, args.grid_wait)}; load: {uptime()}", flush=True)
                if args.pages_only:
                    passes = [open_pages(browser, url) for _ in range(args.pages_only)]
                    returning = browser.new_context(viewport={"width": 1400, "height": 1000})
                    open_pages(browser, url, returning)  # fills the browser's cache: not counted
                    again = [open_pages(browser, url, returning) for _ in range(args.pages_only)]
                    returning.close()
                    navigated = [navigate_pages(browser, url) for _ in range(args.pages_only)]
                    browser.close()
                    print("\n## each page in a new tab of a new browser (a first visit: nothing cached)")
                    _print_pages(fresh, passes)
                    print("\n## each page in a new tab of the same browser (a returning visitor: scripts cached)")
                    _print_pages(fresh, again)
                    print("\n## each page by its link in the sidebar (one tab)")
                    _print_pages(fresh, navigated)
                    return
                moves = slider_moves(browser, url, args.moves, args.seed)
                print(f"# load: {uptime()}", flush=True)
                warm = open_pages(browser, url)
                browser.close()
    print("\n| page | fresh: placeholder / content (s) | fresh: figure (s) | warm: placeholder / content (s) | "
          "warm: figure (s) | error alerts |")
    print("|---|---|---|---|---|---|")
    for f, w in zip(fresh, warm):
        print(f"| {f['page']} | {f['first']:.2f} / {f['content']:.2f} | {f['figure']:.2f} | {w['first']:.2f} / "
              f"{w['content']:.2f} | {w['figure']:.2f} | "
              f"{len(f['errors']) + len(w['errors'])} |")
    print("\n| slider | moves | ranking: median / max (s) | ranking, bench clock: median / max (s) | "
          "rank figure: median / max (s) | leaderboard figure: median / max (s) | approximate first (k̂ > 0.7) | "
          "real fit first | timeouts | error alerts |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for which in ("omega", "beta_max"):
        rows = [r for r in moves if r["slider"] == which]
        sec = np.array([r["seconds"] for r in rows], dtype=float)
        bench = np.array([r["bench_seconds"] for r in rows], dtype=float)
        fig = np.array([r["figure"] for r in rows], dtype=float)
        board = np.array([r["board"] for r in rows], dtype=float)
        kinds = [r["kind"] for r in rows]
        print(f"| {which} | {len(rows)} | {np.nanmedian(sec):.2f} / {np.nanmax(sec):.2f} | "
              f"{np.nanmedian(bench):.2f} / {np.nanmax(bench):.2f} | {np.nanmedian(fig):.2f} / {np.nanmax(fig):.2f} | {np.nanmedian(board):.2f} / {np.nanmax(board):.2f} | "
              f"{kinds.count('approximate')} ({sum(r['flagged'] for r in rows)}) | "
              f"{kinds.count('fit')} | {kinds.count('timeout')} | {sum(len(r['errors']) for r in rows)} |")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
