"""Background fits: a process-wide manager that runs model fits in a separate worker process.

This module owns :class:`FitManager`. The app (or any long-lived program) creates one manager and
submits fits to it; the manager

* looks the fit up in the on-disk fit cache first (:mod:`simplex_core.fit_cache`): a cached
  setting comes back at once and never starts a worker;
* otherwise queues it in a priority queue: interactive requests (:data:`INTERACTIVE`) jump ahead
  of background grid fills (:data:`BACKGROUND`); within one priority, first come, first served;
* runs one fit at a time in a worker process started with the ``spawn`` context, so PyMC,
  compilation and the sampler's threads never run inside the caller's process (a Streamlit
  server stays responsive), and so a cancel can terminate the fit;
* reports progress (draws done / total) through a multiprocessing queue, from the fit's
  ``progress_callback``;
* has the worker write each result to the on-disk cache and reads it back from there.

The worker is kept alive between jobs, so a compiled model is reused when only ω or β_max
change. Cancelling the running job terminates the worker; the next job starts a fresh one.

Nothing here imports Streamlit. Everything a caller reads is an immutable :class:`JobStatus`
snapshot; the manager's state is guarded by one lock and updated by one dispatcher thread.
"""

from __future__ import annotations

import atexit
import heapq
import importlib
import itertools
import logging
import math
import multiprocessing as mp
import os
import queue
import re
import threading
import time
import traceback
import uuid
import weakref
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Literal, Protocol

from simplex_core.fit_identity import data_key, fit_key  # noqa: F401 — data_key: for callers of this module

log = logging.getLogger(__name__)

#: Priority of a fit somebody is waiting for (smaller runs first).
INTERACTIVE = 0
#: Priority of a fit that fills the ω × β_max grid in the background.
BACKGROUND = 10

JobState = Literal["queued", "running", "done", "failed", "cancelled"]
FINAL_STATES: frozenset[str] = frozenset({"done", "failed", "cancelled"})

#: The default fit function, as "module:attribute" (imported inside the worker only).
DEFAULT_FIT_FUNCTION = "simplex_core.inference:fit_model"

# Finished jobs remembered for status queries; older ones are forgotten.
_KEEP_FINISHED = 2000

# Progress messages are throttled to this many per second per job (the queue is cheap, the
# caller's redraws are not).
_PROGRESS_PER_SECOND = 5.0


# -- the store: where finished fits live ---------------------------------------------------------

class FitStore(Protocol):
    """Where results are kept between processes and restarts (the on-disk fit cache).

    Implementations must be picklable: the worker process receives the store and saves into it.
    """

    def contains(self, counts: Any, settings: Any) -> bool:
        """Whether a finished fit of these counts and settings is stored."""

    def load(self, counts: Any, settings: Any) -> Any | None:
        """The stored fit result, or ``None``."""

    def save(self, counts: Any, settings: Any, result: Any) -> bool | None:
        """Store a finished fit (called in the worker process). ``False`` = it could not be
        stored where other processes find it (the worker then sends the result itself)."""


@dataclass(frozen=True)
class FitCacheStore:
    """The project's on-disk fit cache (:class:`simplex_core.fit_cache.FitCache`) as a :class:`FitStore`.

    Parameters
    ----------
    directory
        Cache root; ``None`` uses the fit cache's default (``SIMPLEX_JUDGE_CACHE`` or
        ``~/.cache/simplex_judge``), read when the store is used, in each process.
    """

    directory: str | None = None

    def _cache(self) -> Any:
        from simplex_core.fit_cache import FitCache

        return FitCache(self.directory)

    def contains(self, counts: Any, settings: Any) -> bool:
        return self._cache().contains(counts, settings)

    def load(self, counts: Any, settings: Any) -> Any | None:
        return self._cache().get(counts, settings)

    def save(self, counts: Any, settings: Any, result: Any) -> bool:
        cache = self._cache()
        return cache.put(result).exists()  # a read-only folder keeps it in memory instead


# -- status snapshots ----------------------------------------------------------------------------

@dataclass(frozen=True)
class JobStatus:
    """What a caller can know about one fit job (an immutable snapshot).

    Attributes
    ----------
    job_id
        Unique id of the job.
    key
        :func:`fit_key` of the fit; two requests for the same fit share one job.
    state
        ``'queued'``, ``'running'``, ``'done'``, ``'failed'`` or ``'cancelled'``.
    priority
        :data:`INTERACTIVE` or :data:`BACKGROUND` (smaller runs first).
    label
        A short human description (e.g. ``"ω = 1, β_max = 5"``).
    group
        Name of the group the job belongs to (e.g. one dataset's background grid), or ``None``.
    draws_done, draws_total
        Sampling progress (warm-up plus kept draws, over all chains); ``draws_total`` is 0 until
        the sampler reports.
    stage, reported_fraction
        The fit's own words for what it is doing (e.g. ``"sampling: 800 of 1600 iterations"``) and
        its overall fraction done, when it reports them.
    phase
        ``'waiting'``, ``'starting'`` (worker process starting, model compiling), ``'sampling'``,
        ``'saving'`` or ``'finished'``.
    from_cache
        The result was already in the on-disk cache: no worker was used.
    message
        On failure or cancel, what happened and what to do, in plain words.
    """

    job_id: str
    key: str
    state: JobState
    priority: int
    label: str = ""
    group: str | None = None
    draws_done: int = 0
    draws_total: int = 0
    phase: str = "waiting"
    stage: str = ""
    reported_fraction: float | None = None
    from_cache: bool = False
    message: str | None = None
    submitted_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    queue_position: int | None = None

    @property
    def is_final(self) -> bool:
        return self.state in FINAL_STATES

    @property
    def fraction(self) -> float:
        """Share of the sampling done, in [0, 1] (1 when the job is done)."""
        if self.state == "done":
            return 1.0
        if self.reported_fraction is not None:
            return min(1.0, max(0.0, self.reported_fraction))
        if self.draws_total <= 0:
            return 0.0
        return min(1.0, self.draws_done / self.draws_total)

    @property
    def elapsed(self) -> float:
        """Seconds since the job started running (0 while queued)."""
        if self.started_at is None:
            return 0.0
        end = self.finished_at if self.finished_at is not None else time.time()
        return max(0.0, end - self.started_at)

    def describe(self) -> str:
        """One line in plain words, e.g. ``"sampling: 800 of 1600 draws (50%)"``."""
        if self.state == "done":
            return "done (from the cache)" if self.from_cache else f"done in {self.elapsed:.0f} s"
        if self.state in ("failed", "cancelled"):
            return self.message or self.state
        if self.state == "queued":
            pos = f" (position {self.queue_position} in the queue)" if self.queue_position else ""
            return f"waiting for the fit process{pos}"
        if self.phase == "sampling" and self.draws_total:
            return f"sampling: {self.draws_done} of {self.draws_total} draws ({100 * self.fraction:.0f}%)"
        if self.phase == "sampling":
            return f"sampling ({100 * self.fraction:.0f}%)"
        if self.phase == "saving":
            return "saving the posterior"
        what = self.stage or "preparing the model (starting the fit process, compiling)"
        return f"{what} for {self.elapsed:.0f} s"


@dataclass(frozen=True)
class GroupProgress:
    """Progress of a group of jobs (e.g. the background ω × β_max grid of one dataset).

    ``eta_seconds`` is ``None`` until at least one fit has finished in this manager (there is no
    honest estimate before that).
    """

    group: str
    total: int
    done: int
    failed: int
    cancelled: int
    running: int
    queued: int
    eta_seconds: float | None

    @property
    def finished(self) -> bool:
        return self.running == 0 and self.queued == 0

    def describe(self) -> str:
        parts = [f"{self.done} of {self.total} fitted"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.cancelled:
            parts.append(f"{self.cancelled} cancelled")
        if not self.finished:
            if self.eta_seconds is None:
                parts.append("estimating the time left")
            else:
                parts.append(f"about {format_duration(self.eta_seconds)} left")
        return ", ".join(parts)


def format_duration(seconds: float) -> str:
    """``'45 s'``, ``'3 min'``, ``'1 h 5 min'``."""
    seconds = max(0.0, float(seconds))
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = seconds / 60
    if minutes < 90:
        return f"{round(minutes)} min"
    return f"{int(minutes // 60)} h {round(minutes % 60)} min"


@dataclass
class _Job:
    job_id: str
    key: str
    counts: Any
    settings: Any
    priority: int
    label: str
    group: str | None
    owners: set[str] = field(default_factory=set)
    state: JobState = "queued"
    draws_done: int = 0
    draws_total: int = 0
    phase: str = "waiting"
    stage: str = ""
    reported_fraction: float | None = None
    from_cache: bool = False
    message: str | None = None
    submitted_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None

    def snapshot(self, queue_position: int | None = None) -> JobStatus:
        return JobStatus(
            job_id=self.job_id, key=self.key, state=self.state, priority=self.priority,
            label=self.label, group=self.group, draws_done=self.draws_done,
            draws_total=self.draws_total, phase=self.phase, stage=self.stage,
            reported_fraction=self.reported_fraction, from_cache=self.from_cache,
            message=self.message, submitted_at=self.submitted_at, started_at=self.started_at,
            finished_at=self.finished_at, queue_position=queue_position,
        )


# -- the worker process --------------------------------------------------------------------------

def _resolve(path: str) -> Callable[..., Any]:
    module, _, attr = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


_OF = re.compile(r"(\d+)\s+of\s+(\d+)")


def _progress_numbers(args: tuple, kwargs: dict) -> tuple[int, int, float, str] | None:
    """Read (done, total, fraction, stage) from whatever the fit's progress callback was given.

    Accepts the project's ``cb(message, fraction)`` (done/total parsed from "N of M" in the
    message when present), ``cb(done, total)``, ``cb(done=..., total=...)``, ``cb(fraction)`` and
    an object or dict with ``done``/``total`` (or ``draws_done``/``draws_total``) fields.
    """
    def pick(source: Any, *names: str) -> Any:
        for n in names:
            if isinstance(source, dict) and n in source:
                return source[n]
            if hasattr(source, n):
                return getattr(source, n)
        return None

    if args and isinstance(args[0], str):
        stage = args[0]
        fraction = args[1] if len(args) > 1 else kwargs.get("fraction")
        match = _OF.search(stage)
        try:
            frac = float(fraction) if fraction is not None else None
        except (TypeError, ValueError):
            frac = None
        if match and int(match.group(2)) > 0:
            d, t = int(match.group(1)), int(match.group(2))
            return d, t, frac if frac is not None else d / t, stage
        if frac is None:
            return None
        return 0, 0, min(max(frac, 0.0), 1.0), stage
    done = kwargs.get("done", kwargs.get("draws_done"))
    total = kwargs.get("total", kwargs.get("draws_total"))
    if done is None and args:
        first = args[0]
        if isinstance(first, (int, float)) and len(args) >= 2 and isinstance(args[1], (int, float)):
            done, total = first, args[1]
        elif isinstance(first, float) and len(args) == 1 and 0.0 <= first <= 1.0:
            return 0, 0, first, ""
        else:
            done = pick(first, "done", "draws_done", "n_done")
            total = pick(first, "total", "draws_total", "n_total")
    try:
        d, t = int(done), int(total)
    except (TypeError, ValueError):
        return None
    return (d, t, d / t, "") if t > 0 else None


def _worker_main(tasks: Any, events: Any, fit_function: str, parent_pid: int, nice: int = 0) -> None:
    """Worker process loop: take a job, fit, save to the store, report; until told to stop."""
    if nice:
        try:  # fits must not starve the process that serves the pages
            os.nice(nice)
        except OSError:
            pass
    # If the parent dies without telling us (SIGKILL), do not linger.
    def watch_parent() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()
    try:
        fit = _resolve(fit_function)
    except Exception as exc:  # noqa: BLE001 — reported to the parent in plain words
        events.put(("boot_failed", None, f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        return
    events.put(("ready", None))
    while True:
        task = tasks.get()
        if task is None:
            return
        job_id, counts, settings, store = task
        events.put(("started", job_id))
        last = [0.0]

        def progress(*args: Any, **kwargs: Any) -> None:
            nums = _progress_numbers(args, kwargs)
            if nums is None:
                return
            now = time.monotonic()
            if nums[2] < 1.0 and now - last[0] < 1.0 / _PROGRESS_PER_SECOND:
                return
            last[0] = now
            events.put(("progress", job_id, *nums))

        try:
            try:
                result = fit(counts, settings, progress_callback=progress)
            except TypeError as exc:
                if "progress_callback" not in str(exc):
                    raise
                result = fit(counts, settings)  # a fit function without progress reporting
            events.put(("saving", job_id))
            stored = store.save(counts, settings, result)
        except Exception as exc:  # noqa: BLE001 — every failure becomes a plain message
            events.put(("failed", job_id, _plain_failure(exc), traceback.format_exc()))
            continue
        # Not stored (e.g. a read-only cache folder): hand the result over rather than lose it.
        events.put(("done", job_id) if stored is not False else ("done", job_id, result))


def _plain_failure(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, MemoryError):
        return "The fit ran out of memory. Try fewer draws or chains, or collapse the scale to fewer levels."
    if isinstance(exc, ValueError):
        return f"The fit could not start: {text}"
    return f"The fit failed ({type(exc).__name__}: {text.splitlines()[0]}). Try again; if it keeps failing, try other settings or report the problem."


# -- the manager ---------------------------------------------------------------------------------

_MANAGERS: "weakref.WeakSet[FitManager]" = weakref.WeakSet()


@atexit.register
def _shutdown_all() -> None:  # registered after multiprocessing's own handler, so runs before it
    for manager in list(_MANAGERS):
        manager.shutdown(wait=False)


class FitManager:
    """Runs fits in one worker process, with a priority queue, progress, cancel and a disk cache.

    Parameters
    ----------
    store
        Where finished fits live (default: :class:`FitCacheStore`, the on-disk fit cache).
    fit_function
        ``"module:function"`` of the fit, called in the worker as
        ``fit(counts, settings, progress_callback=cb)``; default
        :data:`DEFAULT_FIT_FUNCTION`.
    start_method
        Multiprocessing start method of the worker; ``'spawn'`` (default) gives a clean process
        that shares no threads or compiled state with the caller.
    warm
        Start the worker (and import the model libraries in it) right away, so the first fit does
        not pay for the process start.
    preempt_background
        When an interactive fit arrives while a background fit is running, terminate the
        background fit (it is queued again) so the interactive one starts now. Off by default:
        a fresh worker must compile the model again, which usually costs more than waiting for
        one background fit to finish.
    worker_nice
        Niceness added to the worker process (POSIX), so that sampling, which uses every core,
        does not slow down the process that serves pages; 0 leaves it alone.

    Notes
    -----
    Two requests for the same fit (same :func:`fit_key`) share one job. A request with
    ``owner`` and ``supersede=True`` cancels that owner's other *queued* interactive requests,
    so dragging a slider never queues more than one fit per user.
    """

    def __init__(
        self,
        store: FitStore | None = None,
        *,
        fit_function: str = DEFAULT_FIT_FUNCTION,
        start_method: str = "spawn",
        warm: bool = False,
        preempt_background: bool = False,
        worker_nice: int = 10,
    ) -> None:
        self.store: FitStore = store if store is not None else FitCacheStore()
        self.fit_function = fit_function
        self.preempt_background = preempt_background
        self.worker_nice = int(worker_nice)
        self._ctx = mp.get_context(start_method)
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._jobs: dict[str, _Job] = {}
        self._by_key: dict[str, str] = {}  # fit key -> id of its live (non-final) job
        self._heap: list[tuple[int, int, str]] = []
        self._seq = itertools.count()
        self._process: Any = None
        self._tasks: Any = None
        self._events: Any = None
        self._running: str | None = None
        self._memory: dict[str, Any] = {}  # fit key -> result the store could not keep (bounded)
        self._workers_started = 0
        self._durations: list[float] = []  # seconds of fits that ran in a worker
        self._stopped = False
        self._thread = threading.Thread(target=self._dispatch_loop, name="fit-manager", daemon=True)
        self._thread.start()
        _MANAGERS.add(self)
        if warm:
            with self._lock:
                self._ensure_worker()

    # -- public API ------------------------------------------------------------------------
    @property
    def workers_started(self) -> int:
        """How many worker processes this manager has started (0 = never needed one)."""
        return self._workers_started

    def lookup(self, counts: Any, settings: Any) -> Any | None:
        """The cached result of this fit, or ``None`` (never starts a worker)."""
        held = self._memory.get(fit_key(counts, settings))
        if held is not None:
            return held
        try:
            return self.store.load(counts, settings)
        except Exception:  # noqa: BLE001 — an unreadable cache entry is a miss, logged
            log.warning("fit cache entry unreadable; treating as a miss", exc_info=True)
            return None

    def submit(
        self,
        counts: Any,
        settings: Any,
        *,
        priority: int = INTERACTIVE,
        label: str = "",
        group: str | None = None,
        owner: str | None = None,
        supersede: bool = False,
    ) -> JobStatus:
        """Ask for a fit; returns at once with its status.

        A fit already in the cache comes back ``'done'`` with ``from_cache=True``. A fit already
        queued or running is shared (its priority is raised if this request is more urgent).
        """
        key = fit_key(counts, settings)
        with self._lock:
            if self._stopped:
                raise RuntimeError("the fit manager has been shut down")
            if supersede and owner is not None:
                self._supersede(owner, keep_key=key)
            live_id = self._by_key.get(key)
            if live_id is not None:
                job = self._jobs[live_id]
                if owner is not None:
                    job.owners.add(owner)
                if priority < job.priority:
                    job.priority = priority
                    if job.state == "queued":
                        heapq.heappush(self._heap, (priority, next(self._seq), job.job_id))
                        self._maybe_preempt(job)
                if group is not None and job.group is None:
                    job.group = group
                self._wake.set()
                return self._snapshot(job)
        # Outside the lock: the cache check reads the disk.
        cached = False
        try:
            cached = key in self._memory or bool(self.store.contains(counts, settings))
        except Exception:  # noqa: BLE001
            log.warning("fit cache check failed; fitting", exc_info=True)
        with self._lock:
            live_id = self._by_key.get(key)
            if live_id is not None:  # someone queued it meanwhile
                return self._snapshot(self._jobs[live_id])
            job = _Job(job_id=uuid.uuid4().hex[:12], key=key, counts=counts, settings=settings,
                       priority=priority, label=label, group=group, owners={owner} if owner else set())
            self._jobs[job.job_id] = job
            if cached:
                now = time.time()
                job.state, job.phase, job.from_cache = "done", "finished", True
                job.started_at = job.finished_at = now
                job.counts = None  # results are read from the store by key
                return self._snapshot(job)
            self._by_key[key] = job.job_id
            heapq.heappush(self._heap, (priority, next(self._seq), job.job_id))
            self._maybe_preempt(job)
            self._wake.set()
            return self._snapshot(job)

    def status(self, job_id: str) -> JobStatus:
        """The current status of a job (``KeyError`` for an unknown id)."""
        with self._lock:
            return self._snapshot(self._jobs[job_id])

    def find(self, counts: Any, settings: Any) -> JobStatus | None:
        """The status of the most recent job for this fit, if any."""
        key = fit_key(counts, settings)
        with self._lock:
            live = self._by_key.get(key)
            if live is not None:
                return self._snapshot(self._jobs[live])
            latest = [j for j in self._jobs.values() if j.key == key]
            return self._snapshot(max(latest, key=lambda j: j.submitted_at)) if latest else None

    def result(self, job_id: str, counts: Any, settings: Any) -> Any | None:
        """The result of a finished job, read from the store (``None`` while not done)."""
        with self._lock:
            job = self._jobs[job_id]
            if job.state != "done":
                return None
        held = self._memory.get(fit_key(counts, settings))
        return held if held is not None else self.store.load(counts, settings)

    def cancel(self, job_id: str, owner: str | None = None) -> bool:
        """Cancel a queued or running job; ``True`` when it was cancelled.

        With ``owner``, the request of that owner is withdrawn; the job is cancelled only when
        nobody else is waiting for it. Cancelling the running job terminates the worker.
        """
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state in FINAL_STATES:
                return False
            if owner is not None:
                job.owners.discard(owner)
                if job.owners:
                    return False
            self._cancel_locked(job, "Cancelled: the fit was stopped before it finished.")
            return True

    def cancel_group(self, group: str) -> int:
        """Cancel every queued or running job of a group; returns how many were cancelled."""
        with self._lock:
            jobs = [j for j in self._jobs.values() if j.group == group and j.state not in FINAL_STATES]
            for job in jobs:
                self._cancel_locked(job, "Cancelled with the rest of its group.")
            return len(jobs)

    def jobs(self, group: str | None = None) -> list[JobStatus]:
        """Snapshots of the jobs (of one group, when given), oldest first."""
        with self._lock:
            chosen = [j for j in self._jobs.values() if group is None or j.group == group]
            return [self._snapshot(j) for j in sorted(chosen, key=lambda j: j.submitted_at)]

    def group_progress(self, group: str) -> GroupProgress:
        """Counts of a group's fits by state (each fit counted once, by its latest job) and an
        estimate of the time left."""
        with self._lock:
            latest: dict[str, _Job] = {}  # one job per fit: the most recent request decides its state
            for j in self._jobs.values():
                if j.group == group and (j.key not in latest or j.submitted_at >= latest[j.key].submitted_at):
                    latest[j.key] = j
            jobs = list(latest.values())
            by_state = {s: sum(1 for j in jobs if j.state == s) for s in ("queued", "running", "done", "failed", "cancelled")}
            eta = self._eta_locked(jobs)
        return GroupProgress(group=group, total=len(jobs), done=by_state["done"], failed=by_state["failed"],
                             cancelled=by_state["cancelled"], running=by_state["running"],
                             queued=by_state["queued"], eta_seconds=eta)

    def mean_fit_seconds(self) -> float | None:
        """Mean wall time of the fits that ran in a worker (``None`` before the first)."""
        with self._lock:
            return sum(self._durations) / len(self._durations) if self._durations else None

    def shutdown(self, wait: bool = True) -> None:
        """Stop the dispatcher and the worker; queued jobs are cancelled."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            for job in self._jobs.values():
                if job.state not in FINAL_STATES:
                    job.state, job.message, job.finished_at = "cancelled", "Cancelled: the app is shutting down.", time.time()
            self._stop_worker(graceful=wait)
            self._wake.set()
        if wait and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    # -- internals (call with the lock held) -----------------------------------------------
    def _snapshot(self, job: _Job) -> JobStatus:
        position = None
        if job.state == "queued":
            ahead = sorted((p, s) for p, s, jid in self._heap if jid in self._jobs
                           and self._jobs[jid].state == "queued" and self._jobs[jid].priority == p)
            mine = min(((p, s) for p, s, jid in self._heap if jid == job.job_id and p == job.priority), default=None)
            if mine is not None:
                position = 1 + sum(1 for x in ahead if x < mine) + (1 if self._running else 0)
        return job.snapshot(position)

    def _supersede(self, owner: str, keep_key: str) -> None:
        for job in list(self._jobs.values()):
            if (job.state == "queued" and job.priority == INTERACTIVE and owner in job.owners
                    and job.key != keep_key):
                job.owners.discard(owner)
                if not job.owners:
                    self._cancel_locked(job, "Replaced by a newer request.")

    def _maybe_preempt(self, job: _Job) -> None:
        if not self.preempt_background or job.priority != INTERACTIVE or self._running is None:
            return
        running = self._jobs[self._running]
        if running.priority > INTERACTIVE:
            self._stop_worker(graceful=False)
            running.state, running.phase = "queued", "waiting"
            running.started_at, running.draws_done, running.draws_total = None, 0, 0
            running.reported_fraction, running.stage = None, ""
            heapq.heappush(self._heap, (running.priority, next(self._seq), running.job_id))
            self._running = None

    def _cancel_locked(self, job: _Job, message: str) -> None:
        was_running = job.state == "running"
        job.state, job.message, job.finished_at = "cancelled", message, time.time()
        job.counts = None
        if self._by_key.get(job.key) == job.job_id:
            del self._by_key[job.key]
        if was_running and self._running == job.job_id:
            self._stop_worker(graceful=False)
            self._running = None
        self._wake.set()

    def _ensure_worker(self) -> None:
        if self._process is not None and self._process.is_alive():
            return
        self._tasks = self._ctx.Queue()
        self._events = self._ctx.Queue()
        self._process = self._ctx.Process(
            target=_worker_main, args=(self._tasks, self._events, self.fit_function, os.getpid(), self.worker_nice),
            name="simplex-judge-fit-worker", daemon=True,
        )
        self._process.start()
        self._workers_started += 1

    def _stop_worker(self, graceful: bool) -> None:
        process, tasks, events = self._process, self._tasks, self._events
        self._process = self._tasks = self._events = None
        if process is None:
            return
        if graceful and self._running is None and process.is_alive():
            try:
                tasks.put(None)
                process.join(timeout=2)
            except Exception:  # noqa: BLE001
                pass
        if process.is_alive():
            process.terminate()
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join(timeout=2)
        # Only the task queue has a feeder thread in this process; the event queue is left to the
        # garbage collector (the dispatcher may still be polling it).
        try:
            tasks.cancel_join_thread()
            tasks.close()
        except Exception:  # noqa: BLE001
            pass
        del events

    def _next_job(self) -> _Job | None:
        while self._heap:
            priority, _, job_id = heapq.heappop(self._heap)
            job = self._jobs.get(job_id)
            if job is not None and job.state == "queued" and job.priority == priority:
                return job
        return None

    def _eta_locked(self, jobs: Iterable[_Job]) -> float | None:
        jobs = list(jobs)
        if not self._durations:
            return None
        mean = sum(self._durations) / len(self._durations)
        eta = 0.0
        for job in jobs:
            if job.state == "queued":
                eta += mean
            elif job.state == "running":
                elapsed = time.time() - (job.started_at or time.time())
                frac = job.reported_fraction if job.reported_fraction is not None else (
                    job.draws_done / job.draws_total if job.draws_total else 0.0)
                if frac > 0.05:
                    eta += max(0.0, elapsed / frac - elapsed)
                else:
                    eta += max(0.0, mean - elapsed)
        return eta

    # -- the dispatcher thread -------------------------------------------------------------
    def _dispatch_loop(self) -> None:
        while True:
            with self._lock:
                if self._stopped:
                    return
                self._dispatch_locked()
                events = self._events
                process = self._process
            if events is None:
                self._wake.wait(timeout=0.5)
                self._wake.clear()
                continue
            try:
                event = events.get(timeout=0.1)
            except queue.Empty:
                event = None
            except (EOFError, OSError, ValueError):  # queue closed under us (worker stopped)
                event = None
            with self._lock:
                if self._stopped:
                    return
                if events is not self._events:  # the worker was replaced meanwhile: stale event
                    continue
                if event is not None:
                    self._handle_event(event)
                elif process is not None and not process.is_alive():
                    self._worker_died(process.exitcode)

    def _dispatch_locked(self) -> None:
        if self._running is not None:
            return
        job = self._next_job()
        if job is None:
            return
        self._ensure_worker()
        job.state, job.phase, job.started_at = "running", "starting", time.time()
        self._running = job.job_id
        self._tasks.put((job.job_id, job.counts, job.settings, self.store))

    def _handle_event(self, event: tuple) -> None:
        kind, job_id = event[0], event[1]
        if kind == "ready":  # the worker has imported the model code
            return
        if kind == "boot_failed":
            log.error("fit worker could not start: %s\n%s", event[2], event[3])
            message = ("The fit process could not load the model code "
                       f"({event[2]}). The model may not be installed yet; try again later.")
            self._fail_running(message)
            self._stop_worker(graceful=False)
            return
        job = self._jobs.get(job_id)
        if job is None or job.state in FINAL_STATES or self._running != job_id:
            return
        if kind == "started":
            job.phase = "starting"
        elif kind == "progress":
            done, total, frac, stage = event[2], event[3], event[4], event[5]
            if total:
                job.draws_done, job.draws_total = int(done), int(total)
            job.reported_fraction = float(frac)
            job.stage = str(stage)
            job.phase = "sampling" if (total or "sampl" in job.stage.lower()) else "starting"
        elif kind == "saving":
            job.phase = "saving"
        elif kind == "done":
            if len(event) > 2:  # the store could not keep it: hold it in memory, bounded
                log.warning("fit %s could not be stored in the fit cache (is the folder writable?); kept in memory",
                            job.label or job.key)
                job.message = "The fit cache folder could not be written: this fit is kept in memory only."
                self._memory[job.key] = event[2]
                while len(self._memory) > 32:
                    self._memory.pop(next(iter(self._memory)))
            job.state, job.phase, job.finished_at = "done", "finished", time.time()
            if job.draws_total:
                job.draws_done = job.draws_total
            self._durations.append(job.finished_at - (job.started_at or job.finished_at))
            self._finish(job)
        elif kind == "failed":
            log.error("fit %s failed: %s\n%s", job.label or job.key, event[2], event[3])
            job.state, job.message, job.finished_at = "failed", event[2], time.time()
            self._finish(job)

    def _finish(self, job: _Job) -> None:
        job.counts = None
        if self._by_key.get(job.key) == job.job_id:
            del self._by_key[job.key]
        self._running = None
        self._prune()
        self._wake.set()

    def _prune(self, keep: int = _KEEP_FINISHED) -> None:
        """Forget the oldest finished jobs beyond ``keep`` (a long-running server submits many)."""
        finished = [j for j in self._jobs.values() if j.state in FINAL_STATES]
        if len(finished) <= keep:
            return
        for job in sorted(finished, key=lambda j: j.finished_at or 0.0)[: len(finished) - keep]:
            del self._jobs[job.job_id]

    def _fail_running(self, message: str) -> None:
        if self._running is not None:
            job = self._jobs[self._running]
            job.state, job.message, job.finished_at = "failed", message, time.time()
            self._finish(job)

    def _worker_died(self, exitcode: int | None) -> None:
        if self._running is not None:
            self._fail_running(
                f"The fit process stopped unexpectedly (exit code {exitcode}); this often means it ran "
                "out of memory. Try fewer draws or chains, or collapse the scale to fewer levels.")
        self._stop_worker(graceful=False)


def grid_settings(base: Any, omegas: Iterable[float] = (0, 1, 2, 4, 8),
                  beta_maxes: Iterable[float] = (0, 1, 5, 10, 20)) -> list[Any]:
    """Every (ω, β_max) combination of the grid, other fields as in ``base`` (a FitSettings),
    ordered so that the settings nearest the base come first (they are the likeliest next clicks)."""
    omegas, beta_maxes = list(omegas), list(beta_maxes)
    out = [base.replace(omega=float(o), beta_max=float(b), integrated=False) for o in omegas for b in beta_maxes]

    def distance(s: Any) -> float:
        oi = omegas.index(s.omega) - (omegas.index(base.omega) if base.omega in omegas else 0)
        bi = beta_maxes.index(s.beta_max) - (beta_maxes.index(base.beta_max) if base.beta_max in beta_maxes else 0)
        return math.hypot(oi, bi)

    return sorted(out, key=distance)
