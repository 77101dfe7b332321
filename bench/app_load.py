"""Load: 8 concurrent browser sessions on the default dataset, each asking for another setting.
Prints figures; asserts nothing.

Usage (repo root, project venv, Debian's Chromium)::

    .venv/bin/python -m bench.app_load                  # port 8611, full-size fits, background grid on
    .venv/bin/python -m bench.app_load --fast --no-grid # small fits (SIMPLEX_JUDGE_FAST=1), no grid

One ``streamlit run serve.py`` with an empty fit cache (fits on its Dask LocalCluster). Eight
Chromium contexts open the Rankings page at once, each at its own ``?omega=..&beta_max=..``. A
script in each page records (browser clock) when the real fit of its setting is drawn ("Fit: ω = …"
and the "Bayesian ranking" line) and every error alert it ever shows. Meanwhile a new visitor opens
the app every ``--visit-every`` seconds: *first paint* = the page's title and text drawn, by the new
tab's own clock from the start of its navigation (and, printed beside it, serve.py's placeholder,
which names the page and what is coming, and the page by the bench's clock from ``goto``). The tabs'
scripts read the page with ``textContent``: ``innerText`` lays the whole page out at every reading,
work a visitor's browser does not do (in the sessions' eight tabs ten times a second). At the end,
per session:

* **correct** — the ranking line on the page equals the one made from the fit cache's entry for
  that setting (candidate order, median ranks and 95% intervals);
* **lag** — from the fit being stored (its ``posterior.nc`` written in the cache) to the page
  showing it; a fit stored before its page was first drawn (its title shown) counts as that
  session's first paint instead (the page could not show it earlier). The lag is split at the start
  of the page run that draws the fit (the server's log line "reached a page that waited for it",
  :func:`delivered`): stored → that run is the server's part (the fit landing, the page's poll
  timer, which its tab drives, and the start of its rerun). It is split again where the session's
  browser received the WebSocket frame carrying the answer (:class:`AnswerFrames`, DevTools' clock
  on the browser's network side): stored → that frame is the server's whole share; the rest is the
  tab's main thread getting to the frame and drawing it, on this machine in a browser that shares
  two cores with everything. Where that rest exceeds 1 s, the tab's tasks over 50 ms in between
  are printed. With one session alone (``--sessions 1``) the answer was drawn 0.04–0.08 s after its
  frame, and shown 0.4–0.6 s after the fit was stored.

Targets: first paint ≤ 5 s, each fit shown ≤ 5 s after it is stored, no error alert.

The eight sessions stand for visitors on machines of their own, but here their Chromium shares the
server's two cores: eight tabs parsing Plotly (about 2–4 s of CPU each) slow the server and the new
visitor's browser. ``--sessions-nice N`` (default 10) runs the sessions' browser at that niceness (its threads, and,
where the kernel schedules by autogroup, its group: :class:`KeepNiced`), so the server and the new
visitor's browser come first, as on a real deployment; ``--sessions-nice 0``
gives every process the same priority (the harsher figure). The new visitor always has a browser of
its own at normal priority.

With ``--moves N`` (default 2) each session, as soon as its page has drawn the ranking for its own
setting (approximate or fitted: it does not wait for its own fit), also moves the sidebar's sliders
while the other sessions' fits run: N rounds of ω one step away and back, then β_max one step away
and back (4N moves; one arrow key on the focused slider, as :mod:`bench.app_fresh_moves` does for one
visitor; down where the setting is at the slider's top). A move starts only once the sliders show
the page's setting (a starved tab drew its ranking before its sidebar, whose sliders then read 0 for
a while; after 60 s the session's remaining moves are dropped and counted). Each move is timed by
the tab's own clock from the key's release to the first animation frame showing the ranking line
for the new setting (approximate or the real fit's, whichever comes first, noted which) and to the
rank-distributions figure titled with it (:func:`bench.app_latency.rank_figure_for`); the next move
follows half a second after that figure. The ranking's time is split where the tab sent the move and
where the browser received the WebSocket frame carrying the line (:class:`MoveFrames`): release →
sent is the tab's, sent → frame the server's. Each move is printed as it ends (session, slider,
from → to, seconds to ranking and to figure, approximate or fitted, 1-minute load); then per session
and over all: median and max, approximate / fitted / timeouts, the sessions' error alerts, and the
server process's CPU time and run-queue wait over the moves (:class:`ServerCpu`). Target: every move
≤ 1.0 s. The sessions end at their own setting, so their own fits are still shown; stored → shown
counts only fits stored after a session's last move (before it, the page was elsewhere some of the
time). Usage: ``nice -n 0 .venv/bin/python -m bench.app_load --log server.log`` (defaults: eight
sessions, ``--moves 2``, full-size fits, background grid on).

The sessions open once the server has finished its warm-up (the "warm-up done" line of serve.py:
imports and the default view's caches, about 10 s after start), as on a server in use;
``--no-wait-warm`` opens them as soon as it answers, so that they pay for the warm-up too.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.app_fresh_moves import _step  # noqa: E402
from bench.app_latency import (MAIN_CONTENT, PAGE_MARKS, RELEASE_CLOCK, SLIDERS, _label, rank_figure_for,  # noqa: E402
                               ranking_for, wait_for_mark)
from bench.speed import uptime  # noqa: E402
from tests.streamlit_server import streamlit_server  # noqa: E402
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

#: (ω, β_max) of the eight sessions: the paper's two sweeps around the shipped default (0, 5).
SETTINGS = [(1.0, 5.0), (2.0, 5.0), (4.0, 5.0), (8.0, 5.0), (0.0, 0.0), (0.0, 1.0), (0.0, 10.0), (0.0, 20.0)]

# Runs in every page from its start: notes when the real fit of the page's setting is drawn, and
# every error alert seen (text), on the browser's clock (ms since the epoch).
WATCH = """(() => {
  window.__shown = null; window.__drawn = null; window.__errors = []; window.__long = [];
  // the tab's main-thread tasks over 50 ms (start and end, ms since the epoch): what it was busy with
  // between the answer's frame arriving and the answer being drawn
  new PerformanceObserver(list => { for (const e of list.getEntries())
    window.__long.push([performance.timeOrigin + e.startTime, performance.timeOrigin + e.startTime + e.duration]); })
    .observe({type: 'longtask', buffered: true});
  const want = () => window.__want;
  setInterval(() => {
    const main = document.querySelector('[data-testid="stMain"]');
    if (!main) return;
    if (window.__drawn === null && main.querySelector('h1')) window.__drawn = Date.now();  // the page's own title
    const t = main.textContent;  // not innerText: a layout of the whole page ten times a second in each tab
    for (const e of main.querySelectorAll('[data-testid="stAlertContentError"], [data-testid="stException"]')) {
      const s = e.innerText.slice(0, 200);
      if (!window.__errors.includes(s)) window.__errors.push(s);
    }
    if (window.__shown === null && want() && t.includes('Fit: ' + want() + ',') && t.includes('Bayesian ranking (best'))
      window.__shown = Date.now();
  }, 100);
})();"""
RANKING_LINE = """() => { const m = document.querySelector('[data-testid="stMain"]');
  const line = Array.from(m.querySelectorAll('p')).map(p => p.innerText).find(s => s.startsWith('Bayesian ranking (best'));
  return line || null; }"""


def label(omega: float, beta: float) -> str:
    return f"ω = {omega:g}, β_max = {beta:g}"


def stored_fits(cache: Path) -> dict[tuple[float, float], tuple[float, Path]]:
    """(ω, β_max) -> (time stored, folder) of every fit in the cache."""
    out = {}
    for d in (cache / "fits").glob("*"):
        if d.name.startswith(".") or not (d / "summary.json").exists():
            continue
        summary = json.loads((d / "summary.json").read_text())
        s = summary["settings"]
        if s.get("integrated"):
            continue
        setting = (float(s["omega"]), float(s["beta_max"]))
        if setting in out:
            print(f"  two stored fits of ω = {setting[0]:g}, β_max = {setting[1]:g}: {out[setting][1].name}, {d.name}",
                  flush=True)
        out[setting] = ((d / "posterior.nc").stat().st_mtime, d)
    return out


#: app_support.fits logs it when a page run first gets a fit its session asked for before it was fitted
DELIVERY = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) fit (.+?), [^,]+ likelihood reached a page that waited for it")


def delivered(log: Path) -> dict[str, float]:
    """Setting label (``"ω = 1, β_max = 5"``) -> when a page run of a session that waited for it first
    got the fit (the server's log, local time), the first such run per setting."""
    out: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        found = DELIVERY.match(line)
        if found:  # Streamlit's log stamps local time
            when = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
            out.setdefault(found.group(2), when)
    return out


def expected_line(folder: Path) -> str:
    """The ranking line the page should show for the fit stored in ``folder``."""
    import arviz as az

    from simplex_core.summaries.posterior_tables import candidate_summary, ranking_sentence

    return ranking_sentence(candidate_summary(az.from_netcdf(str(folder / "posterior.nc")))).replace("**", "")


def wait_for_warm_up(log: Path, timeout: float) -> str:
    """Wait for the server's "warm-up done" line (serve.py imports the page modules and fills the
    default view's caches before the first visitor; a server in use has done this long ago)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        for line in log.read_text(errors="replace").splitlines():
            if "warm-up done" in line or "warm-up failed" in line:
                return f"server {line.split('simplex_judge.warmup:')[-1].strip()} (waited {time.perf_counter() - t0:.1f} s)"
        time.sleep(0.5)
    return "no warm-up line in the server's output"


#: A switch Chromium ignores, to tell the sessions' browser process apart (:class:`KeepNiced`).
SESSIONS_MARK = "--simplex-judge-sessions"


def niced_chromium(folder: Path, nice: int) -> Path:
    """A launcher running Debian's Chromium at niceness ``nice`` (its child processes inherit it,
    until Chromium sets their priorities itself: :class:`KeepNiced`)."""
    if nice <= 0:
        return CHROMIUM
    launcher = folder / "chromium-niced"
    launcher.write_text(f'#!/bin/sh\nexec nice -n {int(nice)} {CHROMIUM} "$@"\n')
    launcher.chmod(0o755)
    return launcher


class KeepNiced:
    """Holds every thread of the sessions' browser (the process started with :data:`SESSIONS_MARK`
    and its descendants) at niceness ``nice`` or above, checked every 0.2 s. Why: Chromium sets its
    threads' priorities itself; run as root it raised its browser and GPU processes to -8 and its
    renderers back to 0 or 5 (seen with ``ps -o ni`` during a run), undoing the launcher's
    ``nice``. And where the kernel schedules by autogroup (``/proc/sys/kernel/sched_autogroup_enabled``),
    threads' niceness only ranks them inside their group, while each group gets an equal share of
    the cores: Playwright starts Chromium in a session, hence a group, of its own, so the eight tabs
    took as much CPU as the server's whole group whatever their niceness. Their group is set to
    ``nice`` too (``/proc/PID/autogroup``)."""

    def __init__(self, nice: int) -> None:
        self.nice, self.reniced = nice, 0
        self.groups: set[str] = set()  # autogroups set to ``nice``
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="keep-niced", daemon=True)

    def __enter__(self) -> "KeepNiced":
        if self.nice > 0:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _run(self) -> None:
        import psutil

        while not self._stop.wait(0.2):
            roots = [p for p in psutil.process_iter(["cmdline"])
                     if SESSIONS_MARK in (p.info["cmdline"] or []) and not any(a.startswith("--type=") for a in p.info["cmdline"])]
            for root in roots:
                try:
                    tree = [root, *root.children(recursive=True)]
                except psutil.Error:
                    continue
                for proc in tree:
                    self._nice_group(proc.pid)
                    try:
                        threads = proc.threads()
                    except psutil.Error:
                        continue
                    for t in threads:
                        try:
                            if os.getpriority(os.PRIO_PROCESS, t.id) < self.nice:
                                os.setpriority(os.PRIO_PROCESS, t.id, self.nice)
                                self.reniced += 1
                        except OSError:
                            pass


    def _nice_group(self, pid: int) -> None:
        try:
            group = Path(f"/proc/{pid}/autogroup")
            name, _, nice = group.read_text().split()
            if name != Path("/proc/self/autogroup").read_text().split()[0] and int(nice) < self.nice:
                group.write_text(str(self.nice))
                self.groups.add(name)
        except (OSError, ValueError):
            pass  # no autogroups here, or the process is gone


def first_paint(browser, url: str) -> tuple[float, float, float]:
    """Seconds to (the first thing drawn: serve.py's placeholder naming the page and what is coming,
    or the page itself; the page's own title and text), by the new tab's own clock (zero: the start
    of the navigation; read at animation frames with ``textContent``, which forces no layout: a
    predicate reading ``innerText`` on every frame lays the page out again and again while it is
    being built); and the page's title and text by the bench's clock from ``goto``, for comparison."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.add_init_script(PAGE_MARKS)
    t0 = time.perf_counter()
    try:
        page.goto(url, wait_until="commit", timeout=300_000)
        wait_for_mark(page, "content", timeout=300_000)
        bench = time.perf_counter() - t0
        marks = page.evaluate("window.__marks")
        return marks.get("first", float("nan")) / 1000.0, marks["content"] / 1000.0, bench
    except Exception:  # noqa: BLE001 — reported as missing
        return float("nan"), float("nan"), float("nan")
    finally:
        ctx.close()


class AnswerFrames:
    """When the sessions' browser received, off the network, the WebSocket frame that carries the
    page's answer for the fit of its own setting (the "**Bayesian ranking** (best first" line, only
    drawn for the fit asked for), by Chrome DevTools' clock on the browser's network side, before the
    tab's main thread has looked at it. It splits the lag between the server (stored → frame in the
    browser: the fit landing, the page's rerun, Streamlit sending it) and the tab (frame → drawn).
    DevTools stamps frames with a monotonic clock; the WebSocket's handshake carries both clocks."""

    ANSWER = "**Bayesian ranking** (best first".encode()
    #: the answer's frame is one Markdown element (a few kB); figures' frames are far larger and are
    #: not decoded (the bench's own CPU competes with the server's)
    LARGEST = 64_000

    def __init__(self, context, page) -> None:
        self.offset: float | None = None  # wall clock − DevTools' monotonic clock
        self.received: float | None = None  # wall clock (s) of the first answer frame
        self.cdp = cdp = context.new_cdp_session(page)
        cdp.on("Network.webSocketWillSendHandshakeRequest", self._handshake)
        cdp.on("Network.webSocketFrameReceived", self._frame)
        cdp.send("Network.enable")

    def _handshake(self, params: dict) -> None:
        self.offset = float(params["wallTime"]) - float(params["timestamp"])

    def _frame(self, params: dict) -> None:
        if self.received is not None or self.offset is None:
            return
        payload = params.get("response", {}).get("payloadData", "")
        if len(payload) > self.LARGEST:
            return
        try:  # binary frames (Streamlit's protobuf messages) come base64-encoded
            data = base64.b64decode(payload, validate=True)
        except (ValueError, TypeError):
            data = payload.encode()
        if self.ANSWER in data:
            self.received = float(params["timestamp"]) + self.offset

    def stop_if_received(self) -> None:
        """Stop DevTools' frame events once the answer is here (each frame crosses to the bench)."""
        if self.received is not None and self.cdp is not None:
            try:
                self.cdp.detach()
            except Exception:  # noqa: BLE001 — the page may be gone; nothing more to hear either way
                pass
            self.cdp = None


# Runs in every session's page (with ``--moves``): at each animation frame, while a move is armed
# (``window.__moveWant``: the setting's label), looks for its ranking line, and notes the frame's
# time (the tab's clock, as ``RELEASE_CLOCK``'s release) and whether the line was the approximate one;
# and, independently, while ``window.__figureFor`` (a predicate: :func:`bench.app_latency.rank_figure_for`)
# is set, the first frame at which the rank figure for that setting is drawn.
MOVE_WATCH = """(() => {
  window.__moveWant = null; window.__moveAt = null; window.__moveKind = null;
  window.__figureFor = null; window.__figureAt = null;
  const content = """ + MAIN_CONTENT + """;
  (function tick() {
    const want = window.__moveWant;
    if (want !== null) {
      const t = content();
      if (t.includes('Bayesian ranking, approximate (' + want + ',')) {
        window.__moveAt = performance.now(); window.__moveKind = 'approximate'; window.__moveWant = null;
      } else if (t.includes('Fit: ' + want + ',') && t.includes('Bayesian ranking (best')) {
        window.__moveAt = performance.now(); window.__moveKind = 'fit'; window.__moveWant = null;
      }
    }
    const figure = window.__figureFor;
    if (figure !== null && figure()) { window.__figureAt = performance.now(); window.__figureFor = null; }
    requestAnimationFrame(tick);
  })();
})();"""


class MoveFrames(AnswerFrames):
    """When the session's browser received the WebSocket frame carrying the ranking line of a move's
    setting (armed with :meth:`arm` just before the key), by DevTools' clock on the network side: the
    server's share of a move (release → that frame: the key's message, the page's rerun, reweighting,
    sending); the rest is the tab's."""

    def __init__(self, context, page) -> None:
        self.patterns: tuple[bytes, ...] = ()
        self.sent: float | None = None  # wall clock: the first frame the tab sent after :meth:`arm` (the move's message)
        super().__init__(context, page)
        self.cdp.on("Network.webSocketFrameSent", self._sent)

    def _sent(self, params: dict) -> None:
        if self.sent is None and self.patterns and self.offset is not None:
            self.sent = float(params["timestamp"]) + self.offset

    def arm(self, setting_label: str) -> None:
        self.received = self.sent = None
        # the rankings page's Markdown as sent; a fitted answer's line names no setting, its caption does
        self.patterns = (f"approximate** ({setting_label},".encode(), f"Fit: {setting_label},".encode())

    def _frame(self, params: dict) -> None:
        if self.received is not None or self.offset is None or not self.patterns:
            return
        payload = params.get("response", {}).get("payloadData", "")
        if len(payload) > self.LARGEST:
            return
        try:
            data = base64.b64decode(payload, validate=True)
        except (ValueError, TypeError):
            data = payload.encode()
        if any(p in data for p in self.patterns):
            self.received = float(params["timestamp"]) + self.offset
            self.patterns = ()


# The sidebar's ω and β_max sliders' values as shown (a select_slider's input holds the option's index,
# its aria-valuetext the value), null where a slider is not on the page.
SLIDER_VALUES = """(labels) => labels.map(label => {
  const e = Array.from(document.querySelectorAll('[data-testid="stSidebar"] input[type="range"]'))
                 .find(i => (i.getAttribute('aria-label') || '').startsWith(label));
  return e ? parseFloat(e.getAttribute('aria-valuetext') || e.value) : null; })"""


class Mover:
    """One session's slider moves (``--moves``): ω one step away from the session's own setting and
    back, then β_max, ``rounds`` times, one move at a time, the next ``PAUSE`` s after the last one's
    rank figure. :meth:`poll` never waits on the page: the tab notes its answers itself
    (:data:`MOVE_WATCH`). Each finished move is printed at once (a run cut short keeps its moves)."""

    PAUSE = 0.5
    TIMEOUT = 120.0  # seconds from the key to its figure, after which the move is given up (timeout)
    SETTLE = 60.0  # seconds the sliders may take to show the page's setting before a move

    def __init__(self, session: dict, context, rounds: int, number: int) -> None:
        self.session, self.page, self.number = session, session["page"], number
        self.frames = MoveFrames(context, self.page)
        self.home = {"omega": session["omega"], "beta_max": session["beta"]}
        self.setting = dict(self.home)
        self.plan: list[tuple[str, str]] = []  # (slider, key)
        for _ in range(rounds):
            for which in ("omega", "beta_max"):
                _, _, hi, step = SLIDERS[which]
                away, back = ("ArrowLeft", "ArrowRight") if self.home[which] + step > hi else ("ArrowRight", "ArrowLeft")
                self.plan += [(which, away), (which, back)]
        self.rows: list[dict] = []
        self.ready_at: float | None = None  # bench clock: when the page had drawn its own ranking
        self.pending: dict | None = None
        self.next_at = 0.0
        self.said_elsewhere = False
        self.dropped = 0  # moves not made: the sliders never showed the page's setting

    @property
    def done(self) -> bool:
        return self.pending is None and len(self.rows) == len(self.plan)

    def poll(self) -> None:
        """Start the next move or look at the pending one; returns at once."""
        now = time.perf_counter()
        if self.ready_at is None:
            if self.page.evaluate(ranking_for(self.home["omega"], self.home["beta_max"], MAIN_CONTENT)):
                self.ready_at = self.next_at = now
            return
        if self.pending is not None:
            self._look(now)
            return
        if len(self.rows) == len(self.plan) or now < self.next_at:
            return
        if self._sliders_elsewhere(now):
            return
        self._move(now)

    def _sliders_elsewhere(self, now: float) -> bool:
        """Whether the sidebar's sliders do not (yet) show the page's setting. A new tab can draw its
        ranking before its sidebar (seen: 2.2 s and 4.7 s), and a slider just mounted read 0 for a
        moment: a key pressed then moved from there, and the bench timed a setting nobody asked for.
        Said once if it lasts over 5 s; the move waits, its clock not started. After ``SETTLE`` s the
        session's remaining moves are dropped (counted in :attr:`dropped`)."""
        shown = self.page.evaluate(SLIDER_VALUES, [SLIDERS["omega"][0], SLIDERS["beta_max"][0]])
        if shown == [self.setting["omega"], self.setting["beta_max"]]:
            return False
        if now - self.next_at > self.SETTLE:
            self.dropped = len(self.plan) - len(self.rows)
            self.plan = self.plan[:len(self.rows)]
            print(f"  move: session {self.number}, sliders still read ω = {shown[0]}, β_max = {shown[1]} after "
                  f"{self.SETTLE:.0f} s: its last {self.dropped} moves dropped", flush=True)
            return True
        if now - self.next_at > 5.0 and not self.said_elsewhere:
            self.said_elsewhere = True
            print(f"  move: session {self.number}, sliders read ω = {shown[0]}, β_max = {shown[1]} for "
                  f"{now - self.next_at:.0f} s where the page is at {_label(self.setting['omega'], self.setting['beta_max'])}",
                  flush=True)
        return True

    def _arm(self, omega: float, beta: float) -> None:
        """Watch for this setting's ranking line and rank figure (both cleared first)."""
        self.page.evaluate("(want) => { window.__moveAt = null; window.__moveKind = null; window.__moveWant = want;"
                           f" window.__figureAt = null; window.__figureFor = {rank_figure_for(omega, beta)}; }}",
                           _label(omega, beta))

    def _move(self, now: float) -> None:
        which, key = self.plan[len(self.rows)]
        step = SLIDERS[which][3]
        target = dict(self.setting, **{which: self.setting[which] + (step if key == "ArrowRight" else -step)})
        self._arm(target["omega"], target["beta_max"])
        self.frames.arm(_label(target["omega"], target["beta_max"]))
        value = _step(self.page, which, key)
        if abs(value - target[which]) > step / 2:  # the key did not move the thumb where planned
            target[which] = value
            self._arm(target["omega"], target["beta_max"])
        self.pending = {"slider": which, "from": self.setting[which], "omega": target["omega"],
                        "beta_max": target["beta_max"], "seconds": float("nan"), "figure": float("nan"),
                        "frame": float("nan"), "kind": "timeout", "load": os.getloadavg()[0], "t": now}
        self.setting = target

    def _look(self, now: float) -> None:
        """Finish the pending move once its figure is drawn (or it timed out); print it."""
        row = self.pending
        ranking_at, figure_at, kind, released, origin = self.page.evaluate(
            "() => [window.__moveAt, window.__figureAt, window.__moveKind, window.__released, performance.timeOrigin]")
        if figure_at is None and now - row["t"] < self.TIMEOUT:
            return
        if released is not None:  # no key release seen: the move stays a timeout
            if ranking_at is not None:
                row["seconds"] = (float(ranking_at) - float(released)) / 1000.0
                row["kind"] = kind
            if figure_at is not None:
                row["figure"] = (float(figure_at) - float(released)) / 1000.0
            row["released"] = (float(origin) + float(released)) / 1000.0  # wall clock
            if self.frames.received is not None:  # wall clock of the frame − wall clock of the release
                row["frame"] = self.frames.received - row["released"]
            if self.frames.sent is not None:  # the tab's share before the server hears of the move
                row["sent"] = self.frames.sent - row["released"]
        self.rows.append(row)
        self.pending, self.next_at = None, now + self.PAUSE
        print(f"  move: session {self.number}, {move_text(row)}, load {row['load']:.1f}", flush=True)


def move_text(row: dict) -> str:
    """``ω 1 → 1.25: ranking 0.41 s (approximate), figure 0.77 s (frame 0.30 s)`` for one move."""
    name = SLIDERS[row["slider"]][0]
    return (f"{name} {row['from']:g} → {row[row['slider']]:g}: ranking {row['seconds']:.2f} s ({row['kind']}), "
            f"figure {row['figure']:.2f} s (sent {row.get('sent', float('nan')):.2f} s, frame {row['frame']:.2f} s)")


class ServerCpu:
    """What the server process (Streamlit's one Python interpreter, not its fit workers) did over
    time, from Linux's scheduler statistics, sampled every 0.25 s: its CPU time (``/proc/PID/stat``,
    threads that ended included) and the time its threads were runnable but waiting for a core
    (``/proc/PID/task/*/schedstat``, summed per thread as it goes: Streamlit's script threads come
    and go); and, every second, the runnable threads of the whole machine at niceness 0 and niced,
    outside the server. Over a move, CPU time near 1 s per second with little waiting means the
    interpreter itself was the limit (its page runs share one GIL); much waiting, with many runnable
    threads at niceness 0 elsewhere, means the machine's other processes held the cores."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.samples: list[tuple[float, float, float]] = []  # (wall clock, cpu s, runnable-waiting s)
        self.machine: list[tuple[float, int, int]] = []  # (wall clock, runnable at nice 0, runnable niced), server excluded
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="server-cpu", daemon=True)

    def __enter__(self) -> "ServerCpu":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _pid(self) -> int | None:
        import psutil

        for proc in psutil.process_iter(["cmdline"]):
            cmd = proc.info["cmdline"] or []
            if "serve.py" in cmd and str(self.port) in cmd and "streamlit" in cmd:
                return proc.pid
        return None

    @staticmethod
    def _runnable(skip: int) -> tuple[int, int]:
        at_zero = niced = 0
        for stat in Path("/proc").glob("[0-9]*/task/*/stat"):
            try:
                text = stat.read_text()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2:].split()  # after the command's name, which may hold spaces
            if fields[0] != "R" or stat.parts[2] == str(skip):
                continue
            if int(fields[16]) > 0:  # field 19 of stat: nice
                niced += 1
            else:
                at_zero += 1
        return at_zero, niced

    def _run(self) -> None:
        pid, seen, wait, tick = None, {}, 0.0, 0
        ticks = os.sysconf("SC_CLK_TCK")
        while not self._stop.wait(0.25):
            pid = pid or self._pid()
            if pid is None:
                continue
            try:
                text = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                return
            fields = text[text.rindex(")") + 2:].split()
            cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime + stime, ended threads included
            for task in Path(f"/proc/{pid}/task").glob("*"):
                try:
                    waiting = int((task / "schedstat").read_text().split()[1]) / 1e9
                except (OSError, ValueError, IndexError):
                    continue
                wait += waiting - seen.get(task.name, 0.0)
                seen[task.name] = waiting
            now = time.time()
            self.samples.append((now, cpu, wait))
            tick += 1
            if tick % 4 == 0:
                self.machine.append((now, *self._runnable(pid)))

    def over(self, start: float, end: float) -> tuple[float, float, float, float]:
        """Between two wall-clock times: the server's CPU seconds per second, its threads' runnable-but-
        waiting seconds per second, and the mean number of runnable threads elsewhere on the machine
        at niceness 0 and niced."""
        nan = float("nan")
        inside = [x for x in self.samples if start - 0.25 <= x[0] <= end + 0.25]
        cpu = wait = nan
        if len(inside) >= 2 and inside[-1][0] > inside[0][0]:
            span = inside[-1][0] - inside[0][0]
            cpu, wait = (inside[-1][1] - inside[0][1]) / span, (inside[-1][2] - inside[0][2]) / span
        around = [x for x in self.machine if start - 1.0 <= x[0] <= end + 1.0]
        zero = float(np.mean([x[1] for x in around])) if around else nan
        niced = float(np.mean([x[2] for x in around])) if around else nan
        return cpu, wait, zero, niced


def renice_server(server: ServerCpu, nice: int) -> str:
    """Every thread of the server process (not its fit workers, niced on their own) at ``nice``; the
    threads it starts later inherit it from the thread that starts them."""
    pid = server._pid()
    if pid is None:
        return "server process not found: not reniced"
    done = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            os.setpriority(os.PRIO_PROCESS, int(task.name), nice)
            done += 1
        except OSError as exc:
            return f"server not reniced: {exc}"
    return f"server's {done} threads set to niceness {nice}"


def _median_max(values: list[float]) -> str:
    """``0.41 / 1.20`` (median / max, s) of the finite values, ``nan / nan`` if there are none."""
    v = np.array(values, dtype=float)
    return f"{np.nanmedian(v):.2f} / {np.nanmax(v):.2f}" if np.isfinite(v).any() else "nan / nan"


def print_moves(movers: list["Mover"], server: "ServerCpu | None" = None, errors: int = 0) -> None:
    """Per session and over all sessions: release → redrawn ranking and → rank figure, the ranking's
    server share, approximate / fitted, the load; then the server process over the moves."""
    print("\n| session | setting | moves | release → ranking, median / max (s) | release → rank figure, median / max (s) | "
          "release → answer's frame, median / max (s) | approximate / fitted / timeout | load (1 min) at the moves |")
    print("|---|---|---|---|---|---|---|---|")
    for i, m in enumerate(movers, start=1):
        kinds = [r["kind"] for r in m.rows]
        loads = [r["load"] for r in m.rows]
        print(f"| {i} | {label(m.home['omega'], m.home['beta_max'])} | {len(m.rows)} | "
              f"{_median_max([r['seconds'] for r in m.rows])} | {_median_max([r['figure'] for r in m.rows])} | "
              f"{_median_max([r['frame'] for r in m.rows])} | "
              f"{kinds.count('approximate')} / {kinds.count('fit')} / {kinds.count('timeout')} | "
              f"{min(loads, default=float('nan')):.1f}–{max(loads, default=float('nan')):.1f} |")
    if server is not None and server.samples:
        print_server_share(movers, server)
    rows = [r for m in movers for r in m.rows]
    sent = np.array([r.get("sent", float("nan")) for r in rows], dtype=float)
    served = np.array([r["frame"] - r.get("sent", float("nan")) for r in rows], dtype=float)
    if np.isfinite(sent).any():
        print(f"release → the tab sent the move (its message to the server, DevTools' clock): median {np.nanmedian(sent):.2f} s, "
              f"max {np.nanmax(sent):.2f} s; sent → answer's frame received (the server's own share): median "
              f"{np.nanmedian(served):.2f} s, max {np.nanmax(served):.2f} s, over 1.0 s: {int((served > 1.0).sum())}")
    if rows:
        secs = np.array([r["seconds"] for r in rows], dtype=float)
        figs = np.array([r["figure"] for r in rows], dtype=float)
        kinds = [r["kind"] for r in rows]
        print(f"moves of {len(movers)} sessions while their fits ran: {len(rows)} moves; release → ranking median / max "
              f"{_median_max(list(secs))} s, over 1.0 s: {int((secs > 1.0).sum())} (target: every move ≤ 1.0 s); "
              f"release → rank figure {_median_max(list(figs))} s, over 1.0 s: {int((figs > 1.0).sum())}; release → "
              f"answer's frame in the browser {_median_max([r['frame'] for r in rows])} s; approximate "
              f"{kinds.count('approximate')}, fitted {kinds.count('fit')}, timeouts {kinds.count('timeout')}, figures "
              f"missing {int(np.isnan(figs).sum())}, dropped {sum(m.dropped for m in movers)}; load (1 min) at the moves {min(r['load'] for r in rows):.1f}–"
              f"{max(r['load'] for r in rows):.1f}; error alerts in the sessions {errors} (target 0)")
    else:
        print(f"no move made: {sum(m.dropped for m in movers)} dropped; error alerts in the sessions {errors}")


def print_server_share(movers: list["Mover"], server: "ServerCpu") -> None:
    """The server process over the moves ≤ 1.0 s and the slower ones (release → ranking): busy, or
    waiting for a core?"""
    timed = [r for m in movers for r in m.rows if "released" in r and np.isfinite(r["seconds"])]
    for name, rows in (("moves ≤ 1.0 s", [r for r in timed if r["seconds"] <= 1.0]),
                       ("moves > 1.0 s", [r for r in timed if r["seconds"] > 1.0])):
        use = np.array([server.over(r["released"], r["released"] + r["seconds"]) for r in rows], dtype=float)
        if len(use):
            print(f"server process over {name} ({len(use)}): CPU {np.nanmedian(use[:, 0]):.2f} s/s median "
                  f"(max {np.nanmax(use[:, 0]):.2f}); its threads runnable but waiting for a core "
                  f"{np.nanmedian(use[:, 1]):.2f} s/s median (max {np.nanmax(use[:, 1]):.2f}); runnable threads "
                  f"elsewhere, mean: {np.nanmedian(use[:, 2]):.1f} at niceness 0, {np.nanmedian(use[:, 3]):.1f} niced")
    if timed:
        first = min(r["released"] for r in timed)
        last = max(r["released"] + r["seconds"] for r in timed)
        cpu, wait, zero, niced = server.over(first, last)
        print(f"server process over the whole moves phase ({last - first:.0f} s): CPU {cpu:.2f} s/s, runnable but "
              f"waiting {wait:.2f} s/s; runnable threads elsewhere: {zero:.1f} at niceness 0, {niced:.1f} niced")


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=8611)
    p.add_argument("--fast", action="store_true", help="small fits (SIMPLEX_JUDGE_FAST=1)")
    p.add_argument("--no-grid", action="store_true", help="no background grid")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for every session's fit")
    p.add_argument("--visit-every", type=float, default=15.0, help="seconds between new visitors")
    p.add_argument("--no-wait-warm", action="store_true",
                   help="open the sessions as soon as the server answers, during its warm-up (the harsher figure)")
    p.add_argument("--sessions-nice", type=int, default=10,
                   help="niceness of the eight sessions' browser (they stand for other machines); 0: same as all")
    p.add_argument("--sessions", type=int, default=len(SETTINGS), choices=range(1, len(SETTINGS) + 1),
                   help="how many of the eight sessions to open (1: the same measures with one visitor, a quiet baseline)")
    p.add_argument("--server-nice", type=int, default=None,
                   help="set the server process's threads to this niceness once it has warmed up (a test of whether "
                        "the machine's other processes hold it back; below 0 needs root)")
    p.add_argument("--log", type=Path, help="copy the server's output here at the end")
    p.add_argument("--moves", type=int, default=2,
                   help="rounds of slider moves per session once its page is drawn (ω away and back, β_max away and back); 0: none")
    return p.parse_args(argv)


def open_sessions(sessions_browser, url: str, settings: list[tuple[float, float]], rounds: int) -> tuple[list[dict], list[Mover]]:
    """One tab per setting, all opened at once; with ``rounds`` > 0 a :class:`Mover` for each."""
    sessions, movers = [], []
    for omega, beta in settings:
        ctx = sessions_browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        page.add_init_script(WATCH + f"\nwindow.__want = {json.dumps(label(omega, beta))};")
        if rounds:
            page.add_init_script(RELEASE_CLOCK + "\n" + MOVE_WATCH)
        session = {"omega": omega, "beta": beta, "page": page, "frames": AnswerFrames(ctx, page)}
        if rounds:  # before the page opens its WebSocket, whose handshake sets the frames' clock
            movers.append(Mover(session, ctx, rounds, len(sessions) + 1))
        page.goto(f"{url}/?omega={omega:g}&beta_max={beta:g}", wait_until="commit", timeout=300_000)
        session["opened"] = time.time()
        sessions.append(session)
    return sessions, movers


def watch(sessions: list[dict], movers: list[Mover], browser, url: str, args: argparse.Namespace,
          paints: list) -> None:
    """Until every session has shown its own fit and made its moves (or ``--timeout``): drive the
    moves, and open a new visitor's tab every ``--visit-every`` s (its first paint into ``paints``)."""
    deadline = time.time() + args.timeout
    next_visit = time.time() + 5
    while time.time() < deadline:
        for m in movers:
            m.poll()
        shown = [s["page"].evaluate("() => window.__shown") for s in sessions]
        for s in sessions:
            s["frames"].stop_if_received()
        if all(v is not None for v in shown) and all(m.done for m in movers):
            break
        if time.time() >= next_visit:
            paints.append((f"{sum(v is not None for v in shown)} of {len(sessions)} shown", first_paint(browser, url)))
            print(f"  first paint while {paints[-1][0]}: placeholder {paints[-1][1][0]:.2f} s, page "
                  f"{paints[-1][1][1]:.2f} s (bench clock {paints[-1][1][2]:.2f} s); load {uptime()}", flush=True)
            next_visit = time.time() + args.visit_every
        time.sleep(0.2 if movers and not all(m.done for m in movers) else 1.0)
    for m in movers:
        m.frames.stop_if_received()
        if m.rows:  # the last move's answer, by the wall clock: the page was elsewhere until then
            m.session["moved_until"] = time.time() - (time.perf_counter() - m.rows[-1]["t"]) + m.rows[-1]["seconds"]


def collect(sessions: list[dict], cache: Path) -> None:
    """What each session's page showed, against the fit cache's entry for its setting."""
    stored = stored_fits(cache)
    reached = delivered(cache / "server.log")
    for s in sessions:
        page = s["page"]
        s["shown"] = page.evaluate("() => window.__shown")
        s["reached"] = reached.get(label(s["omega"], s["beta"]))
        s["received"] = s["frames"].received
        s["long"] = page.evaluate("() => window.__long")
        s["drawn"] = page.evaluate("() => window.__drawn")
        s["errors"] = page.evaluate("() => window.__errors")
        s["line"] = page.evaluate(RANKING_LINE) if s["shown"] else None
        if not s["shown"]:  # what the page says instead, for whoever reads the figures
            said = page.evaluate("() => (document.querySelector('[data-testid=\"stMain\"]') || document.body).innerText")
            print(f"  session {label(s['omega'], s['beta'])} did not show its fit; its page says: "
                  f"{' '.join(said.split())[:2500]}", flush=True)
        entry = stored.get((s["omega"], s["beta"]))
        s["stored"] = entry[0] if entry else None
        want = expected_line(entry[1]) if entry else None
        s["correct"] = bool(want and s["line"] and want in s["line"].replace("\u2060", ""))
        if s["shown"] and not s["correct"]:  # both lines, for whoever reads the figures
            print(f"  session {label(s['omega'], s['beta'])} shows a line that is not its stored fit's:\n"
                  f"    page:   {s['line']}\n    stored: {want} ({entry[1].name if entry else 'no entry'})", flush=True)


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    args = arguments(argv)
    settings = SETTINGS[:args.sessions]
    print(f"# bench.app_load  {time.strftime('%Y-%m-%d %H:%M:%S')}  sessions={len(settings)} fast={args.fast} "
          f"grid={not args.no_grid} sessions-nice={args.sessions_nice} moves={args.moves}  ({os.cpu_count()} CPUs)")
    print(f"# load before: {uptime()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="app-load-") as cache_dir:
        cache = Path(cache_dir)
        env = dict(os.environ, SIMPLEX_JUDGE_CACHE=cache_dir, SIMPLEX_JUDGE_BACKGROUND_GRID="0" if args.no_grid else "1",
                   PYTHONUNBUFFERED="1")
        env.pop("SIMPLEX_JUDGE_FAST", None)
        if args.fast:
            env["SIMPLEX_JUDGE_FAST"] = "1"
        paints: list = []
        with open(cache / "server.log", "w") as log, streamlit_server("serve.py", args.port, env, log, stop_timeout=60) as url:
            with sync_playwright() as pw, KeepNiced(args.sessions_nice) as keep_niced, ServerCpu(args.port) as server_cpu:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
                sessions_browser = pw.chromium.launch(executable_path=str(niced_chromium(cache, args.sessions_nice)),
                                                      headless=True, args=[*CHROMIUM_ARGS, SESSIONS_MARK])
                if not args.no_wait_warm:
                    print(f"  {wait_for_warm_up(cache / 'server.log', args.timeout)}", flush=True)
                if args.server_nice is not None:
                    print(f"  {renice_server(server_cpu, args.server_nice)}", flush=True)
                paints.append(("before the sessions", first_paint(browser, url)))
                print(f"  first paint, idle server: placeholder {paints[-1][1][0]:.2f} s, page {paints[-1][1][1]:.2f} s "
                      f"(bench clock {paints[-1][1][2]:.2f} s)", flush=True)
                t_start = time.time()
                sessions, movers = open_sessions(sessions_browser, url, settings, args.moves)
                watch(sessions, movers, browser, url, args, paints)
                collect(sessions, cache)
                sessions_browser.close()
                browser.close()
        if args.log:
            import shutil

            shutil.copyfile(cache / "server.log", args.log)
        if not all(s["shown"] for s in sessions):  # the server's own words on what happened
            lines = [line.rstrip() for line in open(cache / "server.log", errors="replace")
                     if any(w in line for w in ("fit", "Fit", "ERROR", "Error", "Traceback", "WARNING"))]
            print("  server log (lines about fits and errors):\n    " + "\n    ".join(lines[-60:]), flush=True)
    print_sessions(sessions, paints)
    if movers:
        print_moves(movers, server_cpu, sum(len(s["errors"]) for s in sessions))
    print(f"sessions with their own correct result and no error alert: "
          f"{sum(s['correct'] and not s['errors'] for s in sessions)} of {len(sessions)}")
    print(f"all fits shown {max((s['shown'] or 0) / 1000 for s in sessions) - t_start:.0f} s after the sessions opened"
          if all(s["shown"] for s in sessions) else "not every session saw its fit before the timeout")
    if args.sessions_nice > 0:
        print(f"sessions' browser held at niceness {args.sessions_nice}: {keep_niced.reniced} thread priorities set back; "
              f"its scheduler autogroups set to that niceness: {len(keep_niced.groups)}")
    print(f"# load after: {uptime()}")


def print_sessions(sessions: list[dict], paints: list) -> None:
    """Per session: first drawn, own fit shown, stored → shown and its parts, correct, error alerts;
    then the new visitors' first paints and the tabs' long tasks where the tab's share is large."""
    # A fit stored before its session's page was first drawn (a background grid fit, or one that
    # landed while eight new tabs were still starting) is shown by the page's first runs: that wait
    # is the session's first paint, not the lag between storing and showing a fit.
    print("\n| session | setting | page drawn after open (s) | shown after open (s) | stored → shown (s) | "
          "of which stored → page run (s) | of which stored → answer's frame in the browser (s) | "
          "stored before the page was drawn | own correct result | error alerts |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    lags, early, while_moving, server_parts, frame_parts = [], [], [], [], []
    for i, s in enumerate(sessions, start=1):
        shown = (s["shown"] / 1000 - s["opened"]) if s["shown"] else float("nan")
        drawn = (s["drawn"] / 1000 - s["opened"]) if s["drawn"] else float("nan")
        lag = (s["shown"] / 1000 - s["stored"]) if s["shown"] and s["stored"] else float("nan")
        server_part = (s["reached"] - s["stored"]) if s["reached"] and s["stored"] else float("nan")
        frame_part = (s["received"] - s["stored"]) if s["received"] and s["stored"] else float("nan")
        before = bool(s["stored"] and s["drawn"] and s["stored"] < s["drawn"] / 1000)
        if s["stored"] and s.get("moved_until") and s["stored"] < s["moved_until"]:
            while_moving.append(lag)  # the page was at another setting part of the time
            before = "while moving"
        else:
            (early if before else lags).append(shown if before else lag)
        if not before:
            server_parts.append(server_part)
            frame_parts.append(frame_part)
        print(f"| {i} | {label(s['omega'], s['beta'])} | {drawn:.1f} | {shown:.1f} | {lag:.1f} | {server_part:.1f} | "
              f"{frame_part:.1f} | "
              f"{before if isinstance(before, str) else 'yes' if before else 'no'} | "
              f"{'yes' if s['correct'] else 'NO'} | {len(s['errors'])}{': ' + '; '.join(s['errors']) if s['errors'] else ''} |")
    for i, what in ((1, "the page's own title and text"), (0, "the placeholder (title and what is coming)")):
        during = np.array([v[i] for k, v in paints[1:]], dtype=float)
        print(f"first paint of a new visitor, {what}: idle {paints[0][1][i]:.2f} s; while the sessions work: "
              f"{len(during)} visits, median {np.nanmedian(during) if len(during) else float('nan'):.2f} s, "
              f"max {np.nanmax(during) if len(during) else float('nan'):.2f} s (target ≤ 5 s)")
    lag = np.array(lags, dtype=float)
    print(f"stored → shown, {len(lag)} fits that landed while their session waited: median "
          f"{np.nanmedian(lag) if len(lag) else float('nan'):.2f} s, max {np.nanmax(lag) if len(lag) else float('nan'):.2f} s "
          "(target ≤ 5 s)")
    part = np.array(server_parts, dtype=float)
    print(f"  of which stored → the page run that draws it began (the server's log; the rest is the session's "
          f"tab: its poll timer, receiving and drawing the page): median {np.nanmedian(part) if len(part) else float('nan'):.2f} s, "
          f"max {np.nanmax(part) if len(part) else float('nan'):.2f} s")
    part = np.array(frame_parts, dtype=float)
    print(f"  of which stored → the answer's WebSocket frame received by the session's browser (DevTools' clock: "
          f"the server's whole share; the rest is the tab's main thread getting to it and drawing it): median "
          f"{np.nanmedian(part) if len(part) else float('nan'):.2f} s, max {np.nanmax(part) if len(part) else float('nan'):.2f} s")
    for i, s in enumerate(sessions, start=1):  # the tab's share, where it is large
        if s["shown"] and s["received"] and s["shown"] / 1000 - s["received"] > 1.0:
            a, b = s["received"], s["shown"] / 1000
            busy = [(max(t0 / 1000, a), min(t1 / 1000, b)) for t0, t1 in s["long"] if t1 / 1000 > a and t0 / 1000 < b]
            print(f"  session {i}: frame → drawn {b - a:.1f} s, of which {sum(e - f for f, e in busy):.1f} s in "
                  f"{len(busy)} main-thread tasks over 50 ms (longest {max((e - f for f, e in busy), default=0):.1f} s)")
    if while_moving:
        print(f"stored → shown, {len(while_moving)} fits stored before their session's last move (not counted above): "
              f"{', '.join(f'{v:.1f}' for v in while_moving)} s")
    if early:
        print(f"open → shown, {len(early)} fits stored before their session's page was drawn: "
              f"{', '.join(f'{v:.1f}' for v in early)} s (a first paint in the burst)")


if __name__ == "__main__":
    main()
