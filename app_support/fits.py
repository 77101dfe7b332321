"""Fits in the app: the process-wide fit manager, cached results, progress panels and the
background ω × β_max grid.

Pages call :func:`get_fit` for the settings they show. It never blocks: a result comes from the
in-memory memo or the fit store (through the manager, without starting a worker): the on-disk fit
cache, then the fits shipped in ``assets/precomputed/`` as its read-only layer (the default fit,
shown on opening whatever the app's sampler sizes); otherwise an interactive fit is queued for the manager's Dask workers and
the page draws :func:`fit_status_panel`, a fragment that polls the job (:func:`status_poll_seconds`; its bar moves by itself, :mod:`.live_progress`), shows
progress with a Cancel button, and reruns the page when the result is ready; the server reruns that
fragment itself the moment the fit ends (:mod:`.fit_push`), so the page need not wait for its poll. While a fit runs the
page may show the last result of the same data (``FitView.origin == "stale"``), marked as such.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

import streamlit as st
from streamlit.logger import get_logger

from simplex_core.data.views import Counts, count_tensor
from simplex_core.data.table import JudgmentTable
from simplex_core.inference.fit_identity import data_key, fit_key
from simplex_core.inference.fit_cache import SHIPPED_DIR
from simplex_core.jobs import BACKGROUND, INTERACTIVE, FitCacheStore, FitManager, GroupProgress, JobStatus, format_duration
from simplex_core.studies import sensitivity
from simplex_core.studies.sensitivity import base_settings, grid_settings
from simplex_core.model.settings import FitSettings, check_fit_size

from . import data_access as da
from . import fit_push, live_progress
from .lru import Lru
from .safe_text import md
from .state import BETA_MAX_GRID, OMEGA_GRID, K, parse_number

#: Priority of the sensitivity sweep's fits: after interactive requests, before the grid fill.
SWEEP = 5
_MEMO_SIZE = 48
_LOG = get_logger("simplex_judge.fits")  # Streamlit's handler: the lines show in the server's output


#: Seconds between a waiting page's polls of its fit when ``SIMPLEX_JUDGE_STATUS_POLL`` is unset. Why 2,
#: not 1: each poll costs the visitor's tab about 0.15 s of main-thread work on the Rankings page
#: (mostly Chromium's own, outside scripts, by its profiler), and the server pushes the fit's end anyway
#: (:mod:`.fit_push`).
#: With eight sessions on this 2-core machine, polls of 2 s (and 5 s for the grid panel) took their
#: tabs' CPU from about 105 to 88 s and the server's from about 29 to 21 s over 110 s, and every fit
#: was shown 73-76 s after the sessions opened instead of 90-94 s (``bench.app_load``).
STATUS_POLL_DEFAULT = 2.0
#: The same where the progress bar moves by itself (:mod:`.live_progress`): the fragment's poll is then
#: only the last fallback, after the server's push and the bar's own request for a rerun.
STATUS_POLL_LIVE = 30.0

#: The background grid panel (its progress, and the moment the page reads the grid's new fits, the next
#: slider move's reweighting sources) reruns when the server says a grid fit ended
#: (:func:`app_support.fit_push.fit_ended`), at most once per ``GRID_PUSH_MIN_SECONDS``; its own poll,
#: every ``GRID_POLL_SECONDS``, is the fallback and moves the time-left estimate on. Why: a tab spends
#: about 0.15 s of main-thread time per rerun of the panel, and while live fits hold the workers no
#: grid fit ends, so a waiting page need not rerun it at all.
GRID_POLL_SECONDS = 30.0
GRID_PUSH_MIN_SECONDS = 5.0


@functools.cache
def status_poll_seconds(live_bar: bool = True) -> float:
    """How often a waiting page reruns its fit's status fragment (``SIMPLEX_JUDGE_STATUS_POLL``, at
    least 0.5 s; default :data:`STATUS_POLL_DEFAULT`, or :data:`STATUS_POLL_LIVE` where ``serve.py``
    serves the live progress bar, :mod:`.live_progress`, which moves without reruns, and the panel
    draws it: ``live_bar``). It is the fallback of :mod:`.fit_push`, which tells the page the moment
    the fit ends. Read once per process."""
    default = STATUS_POLL_LIVE if live_bar and live_progress.feed_served() else STATUS_POLL_DEFAULT
    return _poll_seconds("SIMPLEX_JUDGE_STATUS_POLL", default, "waiting pages poll")


@functools.cache
def grid_poll_seconds() -> float:
    """How often the background grid panel polls (``SIMPLEX_JUDGE_GRID_POLL``, default
    :data:`GRID_POLL_SECONDS`): the fallback of the server's push when a grid fit ends."""
    return _poll_seconds("SIMPLEX_JUDGE_GRID_POLL", GRID_POLL_SECONDS, "the background grid panel polls")


def _poll_seconds(variable: str, default: float, what: str) -> float:
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    seconds = parse_number(text, 0.5, float("inf"))  # finite: an infinite poll is no fallback
    if seconds is None:
        _LOG.warning("%s=%r is not a number of seconds ≥ 0.5; %s every %g s", variable, text, what, default)
        return default
    return seconds


# -- process-wide objects ---------------------------------------------------------------------------

@st.cache_resource(show_spinner=False)
def fit_manager() -> FitManager:
    """The one fit manager of this server process: fits run on Dask workers (a local cluster started
    at once, loading PyMC, unless ``SIMPLEX_JUDGE_WARM_WORKER=0``; or the cluster at
    ``SIMPLEX_JUDGE_SCHEDULER`` / ``serve.py --scheduler``). The fits of a session that has left
    are cancelled (:func:`owner_alive`)."""
    warm = os.environ.get("SIMPLEX_JUDGE_WARM_WORKER", "1") not in ("0", "false", "no")
    manager = FitManager(store=fit_store(), warm=warm, owner_alive=owner_alive, on_landed=fit_push.fit_ended)
    live_progress.register_manager(manager)  # the progress feed answers from it
    return manager


def fit_store() -> FitCacheStore:
    """The app's fit store: the fit cache, with the fits shipped with the app as a read-only layer."""
    return FitCacheStore(read_only=(str(SHIPPED_DIR),))


def shipped_fits(counts: Counts) -> list[Any]:
    """The fits shipped with the app for these data (the default and the ω = 1 reweighting source)."""
    return fit_store().read_only_fits(counts)


def origin_of(result: Any) -> str:
    """``"precomputed"`` for a fit shipped with the app, else ``"cache"``."""
    return "precomputed" if result.timing.get("read_only") else "cache"


# Fit owner (K.FIT_OWNER) -> the Streamlit session it belongs to. A module global, not a cached
# resource: the manager's thread reads it, off any script run.
_OWNER_SESSIONS: dict[str, str] = {}


def fit_owner() -> str | None:
    """This session's fit owner id; tells the manager the session is still here (a heartbeat) and
    which Streamlit session it belongs to."""
    owner = st.session_state.get(K.FIT_OWNER)
    if owner is None:
        return None
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is not None:
        _OWNER_SESSIONS[owner] = ctx.session_id
    fit_manager().touch(owner)
    return owner


def owner_alive(owner: str) -> bool | None:
    """Whether the session of ``owner`` is still connected (``None`` when Streamlit's runtime cannot
    say, e.g. under AppTest: the heartbeat of :func:`fit_owner` decides then)."""
    from streamlit import runtime

    session = _OWNER_SESSIONS.get(owner)
    if session is None or not runtime.exists():
        return None
    alive = runtime.get_instance().is_active_session(session)
    return alive


@st.cache_resource(show_spinner=False)
def _memo() -> Lru:
    """Fit results by fit key (results are large: keep few)."""
    return Lru(_MEMO_SIZE)


def background_grid_enabled() -> bool:
    """``SIMPLEX_JUDGE_BACKGROUND_GRID=0`` turns the background grid off (tests do)."""
    return os.environ.get("SIMPLEX_JUDGE_BACKGROUND_GRID", "1") not in ("0", "false", "no")


# -- counts -----------------------------------------------------------------------------------------

@st.cache_data(show_spinner=False, max_entries=32)
def counts_for(_table: JudgmentTable, table_key: str, self_exclusion: bool) -> Counts:
    """The count tensor of a table (raises ValidationError when a judge has no usable pair)."""
    return count_tensor(_table, self_exclusion=self_exclusion)


# -- what a page gets ---------------------------------------------------------------------------------

@dataclass
class FitView:
    """The fit a page shows for the settings it asked for.

    Attributes
    ----------
    requested
        The settings asked for.
    result
        A fit result (idata, diagnostics, timing) or ``None``.
    result_settings
        The settings of ``result`` (differs from ``requested`` when ``origin == "stale"``).
    origin
        ``"cache"`` (fitted, from memory or disk), ``"precomputed"`` (shipped with the app),
        ``"stale"`` (the last result shown for this data while the requested one is fitted) or
        ``"none"``.
    job
        The job fitting ``requested`` when it is not available yet (or failed / was cancelled).
    key
        ``fit_key(counts, requested)``, hashed once by :func:`get_fit`; the view's other keys
        (:attr:`result_key`, :attr:`data_key`, :attr:`grid_group`) reuse it or are hashed once per view,
        so one page run hashes its settings and data once.
    """

    requested: FitSettings
    counts: Counts
    key: str
    result: Any | None = None
    result_settings: FitSettings | None = None
    origin: str = "none"
    job: JobStatus | None = None

    @property
    def result_key(self) -> str:
        """A cache key naming the result shown (not the one requested: they differ while stale)."""
        if self.result_settings is None:
            return ""
        key = self.key if self.result_settings == self.requested else fit_key(self.counts, self.result_settings)
        return f"{key}:{'pre' if self.origin == 'precomputed' else 'fit'}"

    @functools.cached_property
    def data_key(self) -> str:
        """:func:`~simplex_core.inference.fit_identity.data_key` of the counts (every fit of these data)."""
        return data_key(self.counts)

    @functools.cached_property
    def grid_group(self) -> str:
        """Name of the background-grid group of these data and the requested non-grid settings."""
        return f"grid:{self.data_key}:{base_settings(self.requested).key()}"

    @property
    def current(self) -> bool:
        """Whether the result shown is the one asked for."""
        return self.result is not None and self.origin in ("cache", "precomputed")

    @property
    def failed(self) -> bool:
        """Whether the fit asked for failed (or was refused before it was queued)."""
        return self.job is not None and self.job.state == "failed"


def settings_label(settings: FitSettings) -> str:
    """``"ω = 1, β_max = 5, shared-truth likelihood"`` (or ``"integrated …"``), plus prior/δ when not
    the defaults."""
    head = "integrated over ω and β_max" if settings.integrated else f"ω = {settings.omega:g}, β_max = {settings.beta_max:g}"
    head += f", {settings.likelihood} likelihood"
    extra = []
    if settings.prior != FitSettings().prior:
        extra.append(f"{settings.prior} prior")
    if settings.delta != "inflation" and (settings.has_random_effects or settings.integrated):
        extra.append(f"δ = {settings.delta if isinstance(settings.delta, str) else list(settings.delta)}")
    return head + (f" ({', '.join(extra)})" if extra else "")


def settings_slug(settings: FitSettings) -> str:
    """The setting in a file name, ``"omega1-beta5"`` or ``"integrated"`` (plus the likelihood, prior
    and δ when not the defaults): downloads of two settings of one dataset must not share a name,
    or the second replaces the first in the downloads folder."""
    from simplex_core.model.settings import FitSettings as Defaults

    default = Defaults()
    parts = ["integrated"] if settings.integrated else [f"omega{settings.omega:g}", f"beta{settings.beta_max:g}"]
    if settings.likelihood != default.likelihood:
        parts.append(settings.likelihood)
    if settings.prior != default.prior:
        parts.append(f"{settings.prior}-prior")
    if settings.delta != default.delta and (settings.has_random_effects or settings.integrated):
        parts.append("delta-" + (settings.delta if isinstance(settings.delta, str)
                                 else "-".join(f"{v:g}" for v in settings.delta)))
    return "-".join(parts)


def download_stem(source_label: str, settings: FitSettings | None, approximate: bool = False) -> str:
    """The start of a download's file name: the dataset, then the setting of the fit it comes from
    (:func:`settings_slug`; none for files that do not depend on a fit), then ``-approximate`` for
    the reweighted answer shown while the fit runs."""
    stem = source_label if settings is None else f"{source_label}-{settings_slug(settings)}"
    return f"{stem}-approximate" if approximate else stem


def cached_result(counts: Counts, settings: FitSettings, key: str | None = None) -> Any | None:
    """A finished fit from memory or the disk cache, never starting a worker (``key``: its
    ``fit_key``, when the caller has it)."""
    key = key or fit_key(counts, settings)
    memo = _memo()
    hit = memo.lookup(key)
    if hit is not None:
        return hit
    result = fit_manager().lookup(counts, settings)
    if result is not None:
        memo.store(key, result)
    return result


def get_fit(table: JudgmentTable, settings: FitSettings, *, purpose: str = "main", submit: bool = True,
            priority: int = INTERACTIVE) -> FitView:
    """The fit of ``table`` at ``settings``: a result if there is one, else a queued job.

    Never blocks on sampling. ``purpose`` separates the "last shown" memory of different views of
    the same data (e.g. the Simplex page's collapsed table).
    """
    counts = counts_for(table, da.table_key(table), settings.self_exclusion)
    key = fit_key(counts, settings)
    view = FitView(requested=settings, counts=counts, key=key)
    try:
        check_fit_size(counts.scale)
    except ValueError as exc:  # a scale too large to fit: say so at once, never queue it
        view.job = JobStatus(job_id="", key=key, state="failed", priority=priority, label=settings_label(settings),
                             message=str(exc))
        return view
    result = cached_result(counts, settings, key)
    if result is not None:
        _note_delivery(counts, settings, key)
        view.result, view.result_settings, view.origin = result, settings, origin_of(result)
        return view
    st.session_state.setdefault(K.WAITING_FITS, set()).add(key)
    manager = fit_manager()
    job = manager.find(counts, settings)
    explicit = st.session_state.setdefault(K.CANCELLED, set())
    blocked = job is not None and job.is_final and (job.state == "failed" or job.key in explicit)
    if submit and not blocked:
        if job is None or job.is_final:
            job = manager.submit(counts, settings, priority=priority, label=settings_label(settings),
                                 owner=fit_owner(), supersede=priority == INTERACTIVE)
        elif priority < job.priority:
            job = manager.submit(counts, settings, priority=priority, label=settings_label(settings),
                                 owner=fit_owner())
    view.job = job
    if job is not None and job.state == "done":
        result = cached_result(counts, settings, key)
        if result is not None:
            _note_delivery(counts, settings, key)
            view.result, view.result_settings, view.origin = result, settings, "cache"
            return view
        # Finished but unreadable: the cache has set the broken entry aside; fit once more, saying
        # so. A second failure is reported (a "done" job without a result would rerun forever).
        healed = st.session_state.setdefault("fit_cache_healed", set())
        if submit and key not in healed:
            healed.add(key)
            st.toast("A stored fit for these settings could not be read back (it was set aside); fitting it again.",
                     icon=":material/healing:")
            view.job = manager.submit(counts, settings, priority=priority, label=settings_label(settings),
                                      owner=fit_owner())
            job = view.job
        else:
            view.job = job = replace(job, state="failed", message="The fit finished but its result could not be read "
                                     "back from the fit cache, twice. Check that the cache folder is writable and "
                                     "has free space, then try again.")
    # the last result shown for this data, while the new one is fitted
    shown = st.session_state.setdefault(K.SHOWN_FITS, {}).get((view.data_key, purpose))
    if shown is not None:
        old_settings = FitSettings.from_dict(shown)
        old = cached_result(counts, old_settings)
        if old is not None:
            view.result, view.result_settings, view.origin = old, old_settings, "stale"
    return view


def _note_delivery(counts: Counts, settings: FitSettings, key: str) -> None:
    """Log, once, how long after it landed a fit reached a page run of a session that had asked for
    it before it was fitted: the server's share of the wait between a fit being stored and a visitor
    seeing it (the rest is the visitor's browser drawing the page)."""
    waiting = st.session_state.get(K.WAITING_FITS)
    if not waiting or key not in waiting:
        return
    waiting.discard(key)
    fit_push.stop_waiting(key)
    manager = fit_manager()
    landed = manager.landed_at(counts, settings)
    if landed is None:
        # The worker stores a fit before the job book hears that it ended: a fit that is stored while
        # its job still runs landed a moment ago (a page run that reads it then would log nothing).
        job = manager.find(counts, settings)
        if job is not None and not job.is_final:
            landed = time.time()
    if landed is not None:
        _LOG.info("fit %s reached a page that waited for it %.2f s after it landed", settings_label(settings),
                  time.time() - landed)


def remember_shown(view: FitView, purpose: str = "main") -> None:
    """Remember the fit a page showed (the fallback while the next one is fitted)."""
    if view.current:
        st.session_state.setdefault(K.SHOWN_FITS, {})[(view.data_key, purpose)] = view.requested.to_dict()


def retry(view: FitView) -> None:
    """Forget a failure or a cancel of this fit so that the next run submits it again."""
    st.session_state.setdefault(K.CANCELLED, set()).discard(view.key)
    manager = fit_manager()
    manager.submit(view.counts, view.requested, priority=INTERACTIVE, label=settings_label(view.requested),
                   owner=fit_owner(), supersede=True)


# -- background grid ----------------------------------------------------------------------------------

def start_grid(view: FitView) -> str | None:
    """After a dataset's first fit is shown, queue the rest of the ω × β_max grid in the background."""
    if not background_grid_enabled() or not view.current or view.requested.integrated:
        return None
    base = view.requested
    group = view.grid_group
    started = st.session_state.setdefault(K.GRIDS_STARTED, set())
    if group in started:
        return group
    manager = fit_manager()
    owner = fit_owner()  # the grid is this session's: cancelled when it leaves, bounded per session
    # Submitting is idempotent: fits already queued, running or cached are shared, not repeated.
    base_key = base.key()
    for s in grid_settings(base.replace(integrated=False)):
        if s.key() != base_key:
            manager.submit(view.counts, s, priority=BACKGROUND, label=settings_label(s), group=group, owner=owner)
    started.add(group)
    return group


def sweep_settings(base: FitSettings) -> list[FitSettings]:
    """The paper's two sweeps around the base (:func:`simplex_core.studies.sensitivity.sweep_settings`)."""
    return sensitivity.sweep_settings(base)


# -- panels -------------------------------------------------------------------------------------------

def fit_status_panel(view: FitView) -> None:
    """Progress of the requested fit (polled every :func:`status_poll_seconds`, and rerun by the
    server when the fit ends), with Cancel; reruns the page when the job ends. A job that ended
    before this run (failed, cancelled) is shown once, without polling.

    Draws nothing when the requested result is already shown.
    """
    if view.current or view.job is None:
        return
    if view.job.is_final:
        _ended_box(view, view.job)
        return
    manager = fit_manager()
    job_id = view.job.job_id
    owner = st.session_state.get(K.FIT_OWNER)

    @st.fragment(run_every=status_poll_seconds())
    def _panel() -> None:
        if owner is not None:
            manager.touch(owner)
        fit_push.wait_here(view.key)  # before reading the status: a fit that ends after this is pushed
        try:
            status = manager.status(job_id)
        except KeyError:
            st.rerun()
            return
        if status.is_final:
            st.rerun()  # the page rebuilds with the result (or the reason there is none)
        with st.container(border=True):
            if live_progress.feed_served():
                st.markdown(f"**Fitting {status.label}**")
                live_progress.show_progress(status)
            else:
                st.markdown(f"**Fitting {status.label}** — {status.describe()}")
                st.progress(status.fraction if status.state == "running" else 0.0)
            if st.button("Cancel this fit", key=f"cancel-{job_id}", icon=":material/stop_circle:"):
                st.session_state.setdefault(K.CANCELLED, set()).add(status.key)
                manager.cancel(job_id, owner=owner)
                st.rerun()

    _panel()


def _ended_box(view: FitView, status: JobStatus) -> None:
    if status.state == "cancelled":
        st.warning(f"The fit of {status.label or settings_label(view.requested)} was cancelled. {md(status.message or '')}",
                   icon=":material/stop_circle:")
        label = "Fit it again"
    else:
        st.error(f"The fit of {status.label or settings_label(view.requested)} failed. {md(status.message or '')}",
                 icon=":material/error:")
        label = "Try again"
    if not status.job_id:  # refused before queueing (e.g. a scale too large): trying again cannot help
        return
    if st.button(label, key=f"retry-{status.job_id}"):
        retry(view)
        st.rerun()


def grid_status_panel(view: FitView, on_landed: Callable[[], None] | None = None) -> None:
    """Background-grid progress (rerun by the server when a grid fit ends, at most every
    :data:`GRID_PUSH_MIN_SECONDS`, else polled every :func:`grid_poll_seconds`) with an estimate of the
    time left and a Stop button.
    ``on_landed`` is called on the first poll and whenever more grid fits have finished than at the
    last one (the pages read the grid's fits then, so that the next slider move finds its
    reweighting sources in memory)."""
    if not background_grid_enabled() or view.requested.integrated:
        return
    manager = fit_manager()
    group = view.grid_group
    progress = manager.group_progress(group)
    if progress.total and progress.finished:  # nothing more will end: drawn once, no poll
        if on_landed is not None:
            on_landed()
        _draw_grid_progress(manager, group, progress)
        return
    seen = {"done": -1}

    @st.fragment(run_every=grid_poll_seconds())
    def _panel() -> None:
        fit_push.wait_here(fit_push.group_key(group), min_interval=GRID_PUSH_MIN_SECONDS)  # before reading
        progress = manager.group_progress(group)
        if progress.total and progress.finished:
            fit_push.stop_waiting(fit_push.group_key(group))
        if on_landed is not None and progress.done != seen["done"]:  # on the first poll too
            seen["done"] = progress.done
            on_landed()
        _draw_grid_progress(manager, group, progress)

    _panel()


def _draw_grid_progress(manager: FitManager, group: str, progress: GroupProgress) -> None:
    if progress.total == 0:
        return
    # the grid's jobs are its settings but the one shown first, when that one is on the grid (an
    # off-grid first setting, e.g. from a link, leaves all of them to the background)
    total = max(len(OMEGA_GRID) * len(BETA_MAX_GRID), progress.total)
    done = progress.done + (total - progress.total)
    st.markdown(f"**Background grid** ({len(OMEGA_GRID)} × {len(BETA_MAX_GRID)} settings)")
    st.progress(done / total, text=f"{done} of {total} fitted"
                + ("" if progress.finished else (f", about {_fmt_eta(progress.eta_seconds)} left"
                                                 if progress.eta_seconds is not None else ", estimating the time left")))
    if progress.failed:
        st.caption(f"{progress.failed} background fit(s) failed; those settings fit live when chosen.")
    if not progress.finished and st.button("Stop background fits", key=f"stop-{group}"):
        manager.cancel_group(group)
        st.rerun(scope="fragment")


def _fmt_eta(seconds: float) -> str:
    return format_duration(seconds)


def result_notice(view: FitView) -> None:
    """One line saying which fit is on the page (and whether it is the one asked for)."""
    if view.result is None:
        return
    if view.origin == "stale":
        st.info(f"Showing the previous fit ({settings_label(view.result_settings)}) while "
                f"{settings_label(view.requested)} is fitted.", icon=":material/hourglass_top:")
    elif view.origin == "precomputed":
        st.caption(f"Fit: {settings_label(view.requested)} — precomputed with the app (thinned posterior); "
                   "refits with any other setting run live.")
    else:
        st.caption(f"Fit: {settings_label(view.requested)}.")


def sweep_status_panel(pending: list[FitView], total: int) -> None:
    """Progress of the sweep's missing fits (polled every 2 s, and rerun by the server when one
    ends); reruns the page when one finishes."""
    manager = fit_manager()
    job_ids = [v.job.job_id for v in pending if v.job is not None]
    n_ready = total - len(pending)

    # its text names the running fit's progress, which only a rerun moves (no live bar here)
    @st.fragment(run_every=max(2.0, status_poll_seconds(live_bar=False)))
    def _panel() -> None:
        for v in pending:  # before reading the statuses: a fit that ends after this is pushed
            fit_push.wait_here(v.key)
        statuses = []
        for job_id in job_ids:
            try:
                statuses.append(manager.status(job_id))
            except KeyError:
                continue
        if any(s.state == "done" for s in statuses):
            st.rerun()
        failed = [s for s in statuses if s.state in ("failed", "cancelled")]
        running = next((s for s in statuses if s.state == "running"), None)
        text = f"{n_ready} of {total} sweep settings fitted"
        if running is not None:
            text += f"; now {running.label}: {running.describe()}"
        st.progress(n_ready / total if total else 1.0, text=text)
        if failed:
            st.caption("Not fitted: " + "; ".join(f"{s.label} ({s.state})" for s in failed))

    _panel()
