"""The running app in a real browser: ``streamlit run serve.py`` (the README's start command: the app
of ``app.py`` with a warm start) driven by Playwright in Debian's Chromium, and ``streamlit run app.py``.

Visits every page at a 1400-px and a 1024-px wide window (no exception, no error box; a screenshot
each, in a temporary folder or ``$SIMPLEX_JUDGE_SCREENSHOTS``, to look at: the Geometry lab one per tab),
moves the ω slider and waits until the ranking figure's data change after the refit, and uploads a
malformed CSV to check the plain message. Skipped, with the reason printed, when
``/usr/bin/chromium`` or the ``playwright`` package is absent.
"""

from __future__ import annotations

import os
import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.streamlit_server import free_port, streamlit_server

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
SHOTS = ROOT / "tests" / "artifacts" / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# (screenshot name, address, whether the page draws a Plotly figure at once)
PAGES = [("rankings", "", True), ("data", "data", True), ("simplex", "simplex", True), ("sensitivity", "sensitivity", True),
         ("geometry", "geometry", True), ("guide", "guide", False), ("export", "export", False)]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _skip_reason() -> str | None:
    if not CHROMIUM.exists():
        return "Debian's Chromium (/usr/bin/chromium) is not installed: apt-get install chromium"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    return None


@contextmanager
def _running(entry: str, tmp_path_factory, log: Path | None = None, **extra_env: str) -> Iterator[str]:
    """``streamlit run <entry>`` on a free port with small fits and a fresh fit cache (and
    ``extra_env``), its output in ``log`` (default: a temporary file); yields its URL."""
    reason = _skip_reason()
    if reason:
        print(f"SKIP browser tests: {reason}")
        pytest.skip(reason)
    port = int(os.environ.get("SIMPLEX_JUDGE_TEST_PORT") or 0) or free_port()  # a fixed port on a shared machine
    cache = tmp_path_factory.mktemp("fit-cache")  # a fresh cache: the ω move must really refit
    # Small fits; no background grid (it would keep both cores busy for the rest of the tests: the grid is
    # checked by tests/test_app.py, tests/test_job_book.py and tests/test_fit_jobs.py).
    env = dict(os.environ, SIMPLEX_JUDGE_FAST="1", SIMPLEX_JUDGE_CACHE=str(cache), SIMPLEX_JUDGE_BACKGROUND_GRID="0",
               PYTHONUNBUFFERED="1") | extra_env
    log = log or tmp_path_factory.mktemp("server") / "streamlit.log"
    try:
        with open(log, "w") as fh, streamlit_server(entry, port, env, fh, stop_timeout=20) as url:
            yield url
    finally:
        text = log.read_text(errors="replace")
        # The app logs failures with tracebacks server-side (never on the page): show them when a test fails.
        print(f"---- streamlit run {entry}: log (tail) ----\n" + text[-4000:])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with _running("serve.py", tmp_path_factory) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    yield pg
    context.close()


def _settle(page, timeout: float = 60) -> None:
    """Wait until the page title is drawn and Streamlit has finished the run."""
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout * 1000)
    end = time.monotonic() + timeout
    quiet = 0
    while time.monotonic() < end and quiet < 3:
        running = page.locator('[data-testid="stStatusWidget"]').count()
        quiet = quiet + 1 if running == 0 else 0
        time.sleep(0.5)


def _shot(page, name: str, folder: Path = SHOTS) -> None:
    """Screenshot of the whole page: Streamlit scrolls inside its main block, so grow the viewport first."""
    folder.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("() => Math.max(...Array.from(document.querySelectorAll('[data-testid=\"stMain\"], "
                           "[data-testid=\"stMainBlockContainer\"]')).map(e => e.scrollHeight), 800)")
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 120, 12000)})
    time.sleep(1.0)  # let the charts resize
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
    page.set_viewport_size(size)


def _no_error_box(page) -> None:
    """No exception and no ``st.error`` box (Streamlit draws it as ``stAlertContentError``): a page that
    merely opens must not have failed, even where the app caught the failure and said so."""
    _no_exception_box(page)
    errors = page.locator('[data-testid="stMain"] [data-testid="stAlertContentError"]')
    assert errors.count() == 0, errors.first.inner_text()


def _no_exception_box(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator('[data-testid="stException"]').first.inner_text()
    assert "Traceback" not in page.locator('[data-testid="stMain"]').inner_text()


def _figure_data(page, title_part: str) -> str | None:
    """The data of the first Plotly figure whose title contains ``title_part`` (JSON text)."""
    return page.evaluate(
        r"""(part) => {
            for (const d of document.querySelectorAll('.js-plotly-plot')) {
                const t = (d.layout && d.layout.title && (d.layout.title.text || d.layout.title)) || '';
                // a long title wraps to the column with <br> (figures.style): compare its words
                if (String(t).replace(/<br>/g, ' ').replace(/\s+/g, ' ').toLowerCase().includes(part.toLowerCase())) {
                    return JSON.stringify(d.data);  // box traces carry their quartiles (q1, median, ...), not x
                }
            }
            return null;
        }""", title_part)


WIDTHS = (1400, 1024)


@pytest.fixture(scope="module")
def shot_dir(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("SIMPLEX_JUDGE_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"screenshots in {folder}")
    return folder


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name, path, has_figure", PAGES, ids=[p[0] for p in PAGES])
def test_every_page_renders_without_an_error_at_two_widths(server, browser, shot_dir, name, path, has_figure, width):
    """Every page on the default built-in dataset, as a new visitor opens it, at two window widths:
    it draws its figures and shows no exception and no error box. The screenshots are for a person
    to look at (overlapping or clipped text is not something a selector can see)."""
    context = browser.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    try:
        page.goto(f"{server}/{path}")
        _settle(page)
        if has_figure:
            page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        time.sleep(3)  # let the remaining charts draw
        _no_error_box(page)
        _shot(page, f"{name}-{width}", shot_dir)
        if name == "geometry":  # its figures live in tabs: each one drawn and seen
            tabs = page.locator('[data-testid="stMain"] [role="tab"]')
            for i in range(1, tabs.count()):
                tabs.nth(i).click()
                time.sleep(2)
                _no_error_box(page)
                _shot(page, f"{name}-tab{i + 1}-{width}", shot_dir)
        if name == "export":  # each figure for slides (the sensitivity curves once the sweep has fits)
            for label in ("All judges on the simplex", "Sensitivity curves"):
                page.locator('[data-testid="stMain"] [role="radiogroup"]').get_by_text(label, exact=True).click()
                _settle(page)
                time.sleep(3)
                _no_error_box(page)
                _shot(page, f"{name}-{label.split()[0].lower()}-{width}", shot_dir)
    finally:
        context.close()


BAYESIAN_DRAWN = ("() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
                  ".some(d => d.data && d.data.some(t => String(t.name).startsWith('bayesian')))")


def test_opening_the_app_shows_a_fitted_ranking_at_once(server, page):
    page.goto(server)
    _settle(page)
    page.wait_for_function(BAYESIAN_DRAWN, timeout=30_000)
    assert "Fitting" not in page.locator('[data-testid="stMain"]').inner_text()
    _no_exception_box(page)


def test_a_new_tab_shows_what_is_coming_before_streamlit_starts_then_the_page(server, page):
    """The HTML page carries a placeholder naming the page (app_support.boot_page), drawn before
    Streamlit's scripts have run; Streamlit's page replaces it."""
    # Streamlit's scripts are held until the placeholder has been seen: from a local server they can
    # arrive and start React before the test's first look (CI saw that once), while a new tab on a
    # busy server waits seconds for them, which is what the placeholder is for
    held: list = []
    releasing = False

    def hold_scripts(route):
        if releasing:
            route.continue_()
        else:
            held.append(route)

    page.route("**/static/js/**", hold_scripts)
    page.goto(f"{server}/sensitivity", wait_until="commit")
    placeholder = page.wait_for_selector('[data-testid="bootPlaceholder"]', state="visible", timeout=30_000)
    title, text = placeholder.evaluate("e => [e.querySelector('h1').textContent, e.querySelector('p').textContent]")
    assert title == "Sensitivity" and text.startswith("Loading the Sensitivity page of Simplex Judge")
    end = time.monotonic() + 10  # the requests' route events may still be on their way to this thread
    while not held and time.monotonic() < end:
        page.wait_for_timeout(100)
    assert held, "Streamlit's scripts were never asked for"
    releasing = True
    for route in held:
        route.continue_()
    _settle(page)
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=60_000)
    assert page.locator('[data-testid="bootPlaceholder"]').count() == 0
    assert page.locator('[data-testid="stMain"] h1').first.inner_text().strip() == "Sensitivity"
    _no_exception_box(page)


def test_a_link_to_a_page_works_as_a_fresh_servers_first_visit(tmp_path_factory, page):
    """A shared link (page and settings in the URL) opened as the first visit of a freshly started
    server shows that page with those settings, not Streamlit's "Page not found" and the main page."""
    with _running("serve.py", tmp_path_factory) as url:
        page.goto(f"{url}/sensitivity?omega=2")
        _settle(page)
        assert page.locator('[data-testid="stMain"] h1').first.inner_text().strip() == "Sensitivity"
        assert page.get_by_text("Page not found").count() == 0
        assert "omega=2" in page.url
        _no_exception_box(page)


def test_a_link_to_rankings_by_name_opens_the_root_with_its_settings(server, page):
    """Rankings is the default page, which Streamlit serves at / only: /rankings?… is redirected there
    (app_support.boot_page.DefaultPageRedirect) instead of opening under "Page not found"."""
    page.goto(f"{server}/rankings?beta_max=10")
    _settle(page)
    assert page.locator('[data-testid="stMain"] h1').first.inner_text().strip() == "Rankings"
    assert page.get_by_text("Page not found").count() == 0
    assert "/rankings" not in page.url and "beta_max=10" in page.url
    _no_exception_box(page)


def test_a_landed_fit_reaches_its_waiting_page_without_the_pages_poll(tmp_path_factory, page):
    """The server tells a waiting page the moment its fit ends (app_support.fit_push): with the
    page's own poll set to 10 minutes, the real fit of an off-grid setting still replaces the
    approximate answer as soon as it lands, and the server's log says it reached a page that had
    waited for it."""
    log = tmp_path_factory.mktemp("push") / "streamlit.log"
    with _running("serve.py", tmp_path_factory, log=log, SIMPLEX_JUDGE_STATUS_POLL="600") as url:
        page.goto(f"{url}/?omega=3&beta_max=6")
        page.wait_for_function("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                               " const t = m ? m.innerText : '';"
                               " return t.includes('Fit: ω = 3, β_max = 6,') && !t.includes('Fitting ω'); }",
                               timeout=300_000)  # well before the poll's 600 s
        _no_exception_box(page)
        delivered = re.search(r"fit ω = 3, β_max = 6, \S+ likelihood reached a page that waited for it ([0-9.]+) s",
                              log.read_text(errors="replace"))
        assert delivered, "the page never waited for the fit: it landed before the page's first run"
        assert float(delivered.group(1)) < 300


def test_a_fits_progress_bar_moves_without_rerunning_the_page(tmp_path_factory, page):
    """The bar of a waiting fit reads its status by itself (app_support.live_progress): with the
    status fragment's poll at 10 minutes, the bar's text moves on while a full-size fit (the
    integrated model) runs, and the fit is shown when it lands."""
    with _running("serve.py", tmp_path_factory, SIMPLEX_JUDGE_FAST="0", SIMPLEX_JUDGE_STATUS_POLL="600") as url:
        page.goto(f"{url}/?integrated=1")
        page.locator(".sj-text").first.wait_for(timeout=120_000)
        seen: list[str] = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            try:
                text = page.locator(".sj-text").first.text_content(timeout=500)
            except PlaywrightTimeout:  # redrawn, or gone: the fit has landed
                if "Fitting integrated" not in page.locator('[data-testid="stMain"]').inner_text():
                    break
                continue
            if text and (not seen or seen[-1] != text):
                seen.append(text)
            time.sleep(0.25)
        assert len(seen) >= 3, seen  # e.g. waiting → preparing … for 1 s, 2 s → sampling 5%, 26% …
        assert any(t.startswith("sampling") for t in seen), seen
        page.wait_for_function("() => document.querySelector('[data-testid=\"stMain\"]').innerText"
                               ".includes('Fit: integrated over ω and β_max')", timeout=60_000)
        _no_exception_box(page)


def test_the_background_grid_panel_moves_on_as_grid_fits_land_without_its_poll(tmp_path_factory, page):
    """The server reruns the grid panel when a grid fit ends (app_support.fit_push, at most every
    GRID_PUSH_MIN_SECONDS): with the panel's own poll set to 10 minutes, its count still climbs while
    the small grid fits land. Stopped after three counts (the grid keeps both cores busy)."""
    with _running("serve.py", tmp_path_factory, SIMPLEX_JUDGE_BACKGROUND_GRID="1", SIMPLEX_JUDGE_GRID_POLL="600") as url:
        page.goto(url)
        _settle(page)
        counts: list[int] = []
        deadline = time.monotonic() + 240
        while len(counts) < 3 and time.monotonic() < deadline:
            found = re.search(r"(\d+) of \d+ fitted", page.locator('[data-testid="stSidebar"]').inner_text())
            if found and (not counts or int(found.group(1)) != counts[-1]):
                counts.append(int(found.group(1)))
            time.sleep(0.5)
        assert len(counts) == 3 and counts == sorted(counts), counts
        _no_exception_box(page)


def test_pages_stay_drawn_when_grid_fits_land_as_the_visitor_moves_between_them(tmp_path_factory, page):
    """While grid fits land, the visitor goes back and forth between Rankings and Simplex: each page
    stays the one they chose, drawn. The grid panel's fragment has one id on every page, and the
    server's push, asked with the page the visitor had left, took the session back to it and left the
    page shown blank ("Bad delta path" in the console, once a reconnect that lost an upload). The
    panel's poll is 15 s here: this test is about the pages, the one above about the push."""
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    title = "() => (document.querySelector('[data-testid=\"stMain\"] h1') || {}).textContent || ''"
    with _running("serve.py", tmp_path_factory, SIMPLEX_JUDGE_BACKGROUND_GRID="1", SIMPLEX_JUDGE_GRID_POLL="15") as url:
        page.goto(url)
        _settle(page)
        counts: list[int] = []
        seen: list[tuple[str, str]] = []  # (page chosen, title drawn)
        chosen = "Rankings"
        deadline = time.monotonic() + 240
        while len(counts) < 5 and time.monotonic() < deadline:
            found = re.search(r"(\d+) of \d+ fitted", page.locator('[data-testid="stSidebar"]').inner_text())
            if found and (not counts or int(found.group(1)) != counts[-1]):
                counts.append(int(found.group(1)))
                chosen = "Simplex" if chosen == "Rankings" else "Rankings"
                page.locator('[data-testid="stSidebarNavLink"]', has_text=chosen).first.click()
                page.wait_for_selector(f'[data-testid="stMain"] h1:has-text("{chosen}")', timeout=60_000)
            seen.append((chosen, page.evaluate(title)))
            time.sleep(0.5)
        assert len(counts) == 5 and counts == sorted(counts), counts
        time.sleep(6)  # app_support.fits.GRID_PUSH_MIN_SECONDS (5) + 1: a pushed rerun due after the last count
        seen.append((chosen, page.evaluate(title)))
        wrong = [(c, t) for c, t in seen if c not in t]
        assert not wrong, wrong
        assert not [e for e in console_errors if "delta path" in e.lower()], console_errors
        _no_exception_box(page)


def test_the_app_also_runs_without_the_launcher(tmp_path_factory, page):
    """``streamlit run app.py`` (no warm start) serves the same app: the precomputed ranking and no
    exception box on the landing page."""
    with _running("app.py", tmp_path_factory) as url:
        page.goto(url)
        _settle(page)
        page.wait_for_function(BAYESIAN_DRAWN, timeout=60_000)
        _no_exception_box(page)
        assert page.locator('[data-testid="stMain"] h1').first.inner_text().strip() == "Rankings"


def test_moving_omega_refits_and_changes_the_ranking_figure(server, page):
    page.goto(server)  # Rankings is the default page (its address is the root)
    _settle(page)
    page.wait_for_function(BAYESIAN_DRAWN, timeout=60_000)
    before = _figure_data(page, "rank distributions")
    assert before is not None and "ω = 0" in page.locator('[data-testid="stMain"]').inner_text()
    # Streamlit's slider thumb is a visually hidden <input type="range"> labelled with the widget's label
    slider = page.locator('[data-testid="stSidebar"] input[type="range"][aria-label^="ω"]')
    slider.focus()
    for _ in range(4):  # the sliders step through the fine grid: ω 0 -> 0.25 -> ... -> 1
        page.keyboard.press("ArrowRight")
    page.wait_for_function("(e) => e.getAttribute('aria-valuetext') === '1'", arg=slider.element_handle(), timeout=60_000)
    _shot(page, "rankings-refitting")
    deadline = time.monotonic() + 900
    after, landed = before, False
    while time.monotonic() < deadline:
        text = page.locator('[data-testid="stMain"]').inner_text()
        after = _figure_data(page, "rank distributions")
        landed = "Fit: ω = 1, β_max = 5" in text and "approximate" not in text
        if after is not None and after != before and landed:
            break
        time.sleep(3)
    assert landed, "the real fit at ω = 1 did not replace the approximate answer"
    assert after != before, "the ranking figure did not change after the refit"
    _no_exception_box(page)
    _shot(page, "rankings-omega-1")
    assert "omega=1" in page.url  # the link carries the new setting


def test_a_malformed_upload_shows_a_plain_message(server, page):
    page.goto(f"{server}/data")
    _settle(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        files=[{"name": "bad.csv", "mimeType": "text/csv", "buffer": b"question,model,grade\nq1,a,5\n"}])
    page.wait_for_selector("text=Missing required columns", timeout=60_000)
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "found 'question', 'model', 'grade'" in text
    _no_exception_box(page)
    _shot(page, "data-malformed-upload")


def test_injected_names_render_as_text_and_fetch_nothing(server, page):
    """Names, cell values and notes that look like Markdown or HTML are shown as text: no image
    fetched, no link made from them (Plotly's labels are the figures' business, left out here)."""
    trap = f"127.0.0.1:{free_port()}"  # nobody listens: only a rendered image would ask for it
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if trap in r.url else None)
    img, link = f"![t](http://{trap}/x.png)", f"<a href='http://{trap}/a'>z</a>"
    bad = f'item,candidate,judge,score\nq1,a,j,"{img}"\nq1,b,j,1\n'
    good = (f'item,candidate,judge,score,candidate_family,judge_family\nq1,"{img}",j,1,"{link}",f\n'
            f'q1," {link}",j,2,g,f\nq2,"{img}",j,2,"{link}",f\nq2,"{link}",j,1,g,f\n')
    outside_figures = ("(t) => Array.from(document.querySelectorAll('[data-testid=\"stMain\"] ' + t))"
                       ".filter(e => !e.closest('.js-plotly-plot')).map(e => e.parentElement.outerHTML.slice(0, 600)).join('\\n')")
    page.goto(f"{server}/data")
    _settle(page)
    uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    for content, shown in ((bad, "non-numeric value"), (good, "had spaces around it removed")):
        uploader.set_input_files(files=[{"name": "names.csv", "mimeType": "text/csv", "buffer": content.encode()}])
        page.wait_for_selector(f"text={shown}", timeout=60_000)
        _settle(page)
        time.sleep(2)
        assert img in page.locator('[data-testid="stMain"]').inner_text().replace("\u2060", "")  # there, as text
        assert trap not in page.evaluate(outside_figures, "img") and trap not in page.evaluate(outside_figures, "a")
    assert not asked, asked
    _no_exception_box(page)


def test_a_declared_scale_survives_page_switches(server, page):
    """The Data page's declarations (here the observed levels' labels) hold on every page and when
    the user comes back, however many pages were visited in between (they were lost on the second
    switch while kept by re-assigning their keys)."""
    rows = "".join(f"q{i},{c},{j},{1 + (i + k + n) % 5}\n" for i in range(12) for k, c in enumerate("abc")
                   for n, j in enumerate(("j1", "j2", "j3")))
    page.goto(f"{server}/data")
    _settle(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        files=[{"name": "scale.csv", "mimeType": "text/csv", "buffer": ("item,candidate,judge,score\n" + rows).encode()}])
    page.wait_for_selector("text=passed validation", timeout=60_000)
    page.locator('[data-testid="stExpander"] summary', has_text="How to read the file").click()
    levels = page.get_by_label("Observed levels (optional)", exact=True)
    levels.fill("1:bad, 2, 3, 4, 5:great")
    levels.press("Enter")
    _settle(page)
    nav = page.locator('[data-testid="stSidebarNav"] a')
    for name in ("Rankings", "Data", "Rankings", "Export", "Data"):
        nav.filter(has_text=name).first.click()
        if name == "Data":
            _settle(page)
            page.locator('[data-testid="stExpander"] summary', has_text="How to read the file").click()
            assert page.get_by_label("Observed levels (optional)", exact=True).input_value() == "1:bad, 2, 3, 4, 5:great"
        else:
            page.wait_for_selector("text=5 (great)", timeout=60_000)  # the data caption names the labels
            time.sleep(3)  # the page's fit panel polls meanwhile (its reruns are fragment runs)
        _no_exception_box(page)


def test_figures_draw_with_the_light_bundle_the_page_asks_for(server, page):
    """serve.py's figures load the Plotly bundle served from the app's own file (the cartesian
    partial bundle: Rankings' box plots and the Geometry lab's ternary flip), never Streamlit's full
    chart module; the 3-D figure alone loads the full bundle; every figure draws, with no error."""
    from app_support.plotly_figure import CARTESIAN_FILE, full_bundle_file

    loaded: dict[str, bytes] = {}

    def seen(response) -> None:
        if "/_simplex/plotly/" in response.url or "PlotlyChart" in response.url:
            loaded[response.url.rsplit("/", 1)[-1]] = response.body()

    page.on("response", seen)
    page.goto(server)
    _settle(page)
    page.wait_for_function(BAYESIAN_DRAWN, timeout=60_000)
    page.goto(f"{server}/geometry")
    _settle(page)
    page.get_by_role("tab", name="Three levels: the flip").click()
    page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot')).some(d => "
                           "(d.data || []).some(t => t.type === 'scatterternary') && d.querySelector('.main-svg'))",
                           timeout=60_000)
    assert not any(name.startswith("PlotlyChart") for name in loaded), sorted(loaded)
    cartesian = [body for name, body in loaded.items() if name.startswith("cartesian.")]
    assert cartesian and cartesian[0] == CARTESIAN_FILE.read_bytes()
    assert not any(name.startswith("full.") for name in loaded)  # no 3-D figure drawn yet
    with page.expect_response(lambda r: "/_simplex/plotly/full." in r.url, timeout=60_000) as full:
        page.get_by_role("tab", name="Augmented simplex").click()
    assert full.value.body() == full_bundle_file().read_bytes()
    page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot')).some(d => "
                           "(d.data || []).some(t => t.type === 'scatter3d') && d.querySelector('.gl-container'))",
                           timeout=60_000)
    assert page.locator("[data-figure-error]").count() == 0


def test_a_file_with_gold_labels_opens_the_rankings_on_its_labelled_ranking(server, page):
    """The labelled ranking drawn by a real browser: the line, the labels used, the moves, and the
    switch back to the label-free ranking, without an error box."""
    rng = np.random.default_rng(5)
    rows = ["item,candidate,judge,score,true_score,gold"]
    for item in range(30):
        for cand, mean in (("a", 1.4), ("b", 2.1), ("c", 2.7)):
            truth = int(np.floor(mean)) + int(rng.random() < mean - np.floor(mean))
            for judge in ("j1", "j2", "j3"):
                score = int(np.clip(truth + rng.choice([-1, 0, 0, 1]), 1, 3))
                rows.append(f"q{item},{cand},{judge},{score},{truth},{'true' if item < 6 else ''}")
    page.goto(f"{server}/data")
    _settle(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        files=[{"name": "labelled.csv", "mimeType": "text/csv", "buffer": "\n".join(rows).encode()}])
    page.wait_for_selector("text=passed validation", timeout=60_000)
    page.locator('[data-testid="stSidebarNav"] a').filter(has_text="Rankings").first.click()
    page.wait_for_selector("text=Labels used:", timeout=300_000)  # drawn once the label-free fit has landed
    _settle(page)
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "Labels used: 18 labelled answers (20% of 90, on 6 items; at least 6 per candidate)." in text
    assert "What the labels changed:" in text and "Label-free Bayesian ranking" in text
    _no_error_box(page)
    _shot(page, "rankings-labelled")
    page.get_by_text("Label-free", exact=True).click()
    page.wait_for_selector("text=gold labels are left out of every ranking on this page", timeout=60_000)
    _settle(page)
    assert "Labels used:" not in page.locator('[data-testid="stMain"]').inner_text()
    _no_error_box(page)
