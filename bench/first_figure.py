"""The first figure of Rankings and Simplex in a new browser, on a warm server, with where its time
went. Prints figures; asserts nothing.

Usage (repo root, project venv, Debian's Chromium)::

    .venv/bin/python -m bench.first_figure                  # 4 passes, port 8619
    .venv/bin/python -m bench.first_figure --passes 6 --log server.log

One ``streamlit run serve.py`` (a temporary, empty fit cache: the default dataset's default fit is
the shipped one; no background grid, so that nothing but the visitor runs on the machine). Each
page is opened once in a throwaway browser context first (the server's tables and figures built,
as on a server in use); then ``--passes`` times, each page in a new tab of a new browser context
(nothing cached). By the tab's own clock (0 = start of the navigation):

* ``text``: Streamlit's page has drawn its title and more than 200 characters (the page text);
* ``static``: a figure is visible as the page's own drawing before Plotly has run (an ``svg`` in a
  ``.sj-static`` element; absent when the page draws none);
* ``requested`` / ``fetched``: the Plotly bundle's request start and its response's end
  (Resource Timing; a preloaded bundle is requested early, whoever asked for it);
* ``mounted``: the first figure's element (``.sj-figure``) is in the page;
* ``appended``: the bundle's script element is added to the page (it runs from then on);
* ``evaluated``: the bundle's script element has run (its ``load`` event);
* ``figure``: the first interactive Plotly figure is drawn (``.js-plotly-plot .main-svg``);
* ``shown``: the first figure of either kind (the visitor's first figure);
* the long tasks (> 50 ms, Long Tasks API) of the main thread up to ``figure``: their count, total,
  and the longest.

The 1-minute load average is printed with every pass: on a shared machine it dominates.
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
from bench.app_latency import ERRORS  # noqa: E402
from bench.speed import uptime  # noqa: E402
from bench.browser_session import served_browser  # noqa: E402

PAGES = (("rankings", ""), ("simplex", "simplex"))

#: Noted by the tab itself on animation frames, so that reading them forces no layout.
MARKS = """window.__marks = {}; window.__long = [];
try { new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push([e.startTime, e.duration]); })
        .observe({type: 'longtask', buffered: true}); } catch (e) {}
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes)
    if (n.tagName === 'SCRIPT' && (n.src || '').includes('/_simplex/plotly/') && !('appended' in window.__marks))
      window.__marks.appended = performance.now();
}).observe(document, {childList: true, subtree: true});
document.addEventListener('load', (e) => {
  const s = e.target;
  if (s && s.tagName === 'SCRIPT' && (s.src || '').includes('/_simplex/plotly/') && !('evaluated' in window.__marks))
    window.__marks.evaluated = performance.now();
}, true);
(function mark() {
  const m = window.__marks, now = performance.now(), main = document.querySelector('[data-testid="stMain"]');
  if (main && main.querySelector('h1')) {
    if (!('text' in m) && main.textContent.length > 200) m.text = now;
    if (!('static' in m) && main.querySelector('.sj-static svg')) m.static = now;
    if (!('mounted' in m) && main.querySelector('.sj-figure')) m.mounted = now;
    if (!('figure' in m) && main.querySelector('.js-plotly-plot .main-svg')) {
      m.figure = now;
      m.figures_then = main.querySelectorAll('.js-plotly-plot .main-svg').length;
    }
  }
  if (!('figure' in m)) requestAnimationFrame(mark);
})();"""

READ = """() => {
  const m = Object.assign({}, window.__marks);
  const r = performance.getEntriesByType('resource').find((e) => e.name.includes('/_simplex/plotly/'));
  if (r) { m.requested = r.startTime; m.fetched = r.responseEnd; m.bytes = r.transferSize; }
  const until = m.figure || performance.now();
  const long = window.__long.filter(([s]) => s < until);
  m.long_n = long.length; m.long_total = long.reduce((a, [, d]) => a + d, 0);
  m.long_max = long.reduce((a, [, d]) => Math.max(a, d), 0);
  m.long = long.map(([s, d]) => [Math.round(s), Math.round(d)]);
  return m;
}"""

COLUMNS = ("text", "mounted", "static", "requested", "fetched", "appended", "evaluated", "figure", "shown")


def load1() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def one_visit(browser, url: str, address: str, timeout: float = 120_000) -> dict:
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.add_init_script(MARKS)
    page.goto(f"{url}/{address}", wait_until="commit")
    try:
        page.wait_for_function("() => window.__marks && 'figure' in window.__marks", timeout=timeout, polling="raf")
    except Exception:  # noqa: BLE001 — reported as missing
        pass
    raw = page.evaluate(READ)
    row = {k: raw.get(k, float("nan")) / 1000.0 if k in raw else float("nan") for k in COLUMNS[:-1]}
    row["shown"] = min((v for v in (row["static"], row["figure"]) if v == v), default=float("nan"))
    row.update(long_n=raw["long_n"], long_total=raw["long_total"] / 1000.0, long_max=raw["long_max"] / 1000.0,
               long=raw["long"], figures_then=raw.get("figures_then", 0), errors=page.evaluate(ERRORS), load=load1())
    ctx.close()
    return row


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=8619)
    p.add_argument("--passes", type=int, default=4)
    p.add_argument("--log", type=Path, help="write the server's output here")
    p.add_argument("--long", action="store_true", help="print every long task (start, duration in ms)")
    args = p.parse_args(argv)
    print(f"# bench.first_figure  {time.strftime('%Y-%m-%d %H:%M:%S')}  ({os.cpu_count()} CPUs)")
    print(f"# load before: {uptime()}", flush=True)
    rows: list[dict] = []
    with served_browser(args.port, grid=False, log=args.log, prefix="first-figure-") as (url, browser):
        for _, address in PAGES:  # the server's side warm: its tables and figures built once
            one_visit(browser, url, address, timeout=300_000)
        print(f"# warm; load: {uptime()}", flush=True)
        print("| pass | page | text | figure element | static | bundle requested | fetched | script added | evaluated "
              "| interactive | first shown | long tasks (n / total / max) | figures at the first | load (1 min) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for i in range(args.passes):
            for name, address in PAGES:
                r = one_visit(browser, url, address)
                r["page"] = name
                rows.append(r)
                cells = " | ".join(f"{r[k]:.2f}" for k in COLUMNS)
                print(f"| {i + 1} | {name} | {cells} | {r['long_n']} / {r['long_total']:.2f} / {r['long_max']:.2f} "
                      f"| {r['figures_then']} | {r['load']} |" + (f"  ERROR SHOWN: {r['errors']}" if r["errors"] else ""),
                      flush=True)
                if args.long:
                    print(f"#   long tasks (start, ms): {r['long']}")
    for name, _ in PAGES:
        mine = [r for r in rows if r["page"] == name]
        if not mine:
            continue
        def stat(k: str) -> str:
            v = np.array([r[k] for r in mine], dtype=float)
            return "n/a" if np.isnan(v).all() else f"{np.nanmedian(v):.2f} / {np.nanmax(v):.2f}"
        print(f"{name}: first figure shown, median / max {stat('shown')} s; interactive {stat('figure')} s; text "
              f"{stat('text')} s; static {stat('static')} s; bundle fetched {stat('fetched')} s, evaluated "
              f"{stat('evaluated')} s over {len(mine)} passes (loads {', '.join(r['load'] for r in mine)}); "
              f"error alerts {sum(len(r['errors']) for r in mine)}")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
