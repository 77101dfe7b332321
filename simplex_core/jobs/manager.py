"""The fit manager: the job book (:mod:`.book`) dispatched to Dask workers (:mod:`.worker`).

A long-lived program (the app's server) makes one :class:`FitManager` and submits fits to it. The
manager

* answers from the store (the on-disk fit cache) when the fit is there, without any worker;
* otherwise books the request (:class:`~simplex_core.jobs.book.JobBook`: one job per fit key,
  interactive before background, supersede, per-owner bound) and, whenever a worker slot is free,
  submits the most urgent job to ``dask.distributed`` — a ``LocalCluster`` of
  :func:`default_fit_workers` single-threaded processes, started on first need, or an existing
  cluster (``scheduler="tcp://HOST:PORT"`` or ``SIMPLEX_JUDGE_SCHEDULER``) whose workers import
  ``simplex_core`` and see the fit cache folder;
* follows progress through worker events, cancels at the fit's next progress report (and restarts
  a worker that does not let go within :data:`DRAIN_SECONDS`), turns a killed worker into a plain
  message on its job, and goes on with the next;
* withdraws the requests of owners (sessions) that have left: ``owner_alive(owner)`` says so when
  it knows (the app asks Streamlit's runtime), else an owner unseen (:meth:`FitManager.touch`) for
  ``idle_timeout`` seconds has left; either must hold for ``departed_grace`` seconds.

Nothing here imports Streamlit. Callers read immutable :class:`~simplex_core.jobs.status.JobStatus`
snapshots; the state is guarded by one lock and driven by one dispatcher thread.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from typing import Any, Callable

from simplex_core.inference.fit_identity import fit_key

from simplex_core.jobs.book import MAX_PENDING_PER_OWNER, JobBook
from simplex_core.jobs.status import BACKGROUND, INTERACTIVE, GroupProgress, JobStatus
from simplex_core.jobs.worker import (DEFAULT_FIT_FUNCTION, FitCacheStore, FitCancelled, FitStore, JobKind, mark_cancelled,
                                     plain_failure, resolve, run_fit, warm)

log = logging.getLogger(__name__)

ENV_SCHEDULER = "SIMPLEX_JUDGE_SCHEDULER"
ENV_WORKERS = "SIMPLEX_JUDGE_FIT_WORKERS"
#: Seconds a cancelled fit may take to stop at its next progress report before its worker is restarted.
DRAIN_SECONDS = 20.0
_KILLED = ("The fit worker stopped unexpectedly; this often means it ran out of memory. Try fewer draws or "
           "chains, or collapse the scale to fewer levels.")
_MEMORY_ENTRIES = 32
#: Fits that landed and were stored are kept in memory too, up to this many bytes of draws (the pages
#: ask for a fit just landed at once, and the background grid's fits are the sliders' reweighting
#: sources): a 9-candidate fit of 4 × 1000 draws holds 4.4 MB.
_LANDED_BYTES = 256 * 2**20


def default_fit_workers() -> int:
    """Worker processes of the app's local cluster: ``SIMPLEX_JUDGE_FIT_WORKERS``, else min(2, cores)
    (a fit is CPU-bound; the page server needs a share of the machine too)."""
    from simplex_core.inference.distributed import default_workers

    env = os.environ.get(ENV_WORKERS, "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            log.warning("%s=%r is not a whole number; using the default", ENV_WORKERS, env)
    return min(2, default_workers())


_MANAGERS: "weakref.WeakSet[FitManager]" = weakref.WeakSet()


@atexit.register
def _shutdown_all() -> None:
    if _MANAGERS:  # at exit the log streams may be closed already; Dask's goodbyes are not news
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
    for manager in list(_MANAGERS):
        manager.shutdown(wait=False)


def _draws_bytes(result: Any) -> int:
    """The bytes a fit result's draws hold (0 for anything without an InferenceData)."""
    idata = getattr(result, "idata", None)
    groups = idata.groups() if idata is not None and hasattr(idata, "groups") else []
    return int(sum(getattr(idata, g).nbytes for g in groups))


class FitManager:
    """Fits on Dask workers, with a job book, progress, cancel and a store.

    Parameters
    ----------
    store
        Where finished fits live (default :class:`~simplex_core.jobs.worker.FitCacheStore`).
    fit_function
        ``"module:function"`` called on a worker as ``fit(counts, settings, progress_callback=cb)``
        with ``cb(message, fraction)``.
    scheduler
        Address of an existing Dask scheduler; default ``$SIMPLEX_JUDGE_SCHEDULER``, else a local
        cluster of ``n_workers`` (default :func:`default_fit_workers`) processes.
    client
        A ``distributed.Client`` to use instead (not closed by the manager).
    warm
        Start the cluster (and import the model code on its workers) right away.
    worker_nice
        Niceness added for the fits on the workers (POSIX; capped at 19, the lowest priority, which the
        default asks for), so that sampling, the background grid included, yields the cores to the
        page server: with two workers at niceness 10 on two cores, slider moves on a fresh server
        waited for the first refits and the grid (docs/BENCHMARKS.md).
    max_pending_per_owner
        Bound on one owner's pending requests (:class:`~simplex_core.jobs.book.JobBook`).
    owner_alive
        ``owner_alive(owner) -> bool | None``: whether the session ``owner`` is still there
        (``None``: unknown, the heartbeat decides).
    on_landed
        Called on the manager's thread with the final status of every job a worker ended (done or
        failed), at once, so that a page waiting for it can be told instead of finding out at its next
        poll. Must be quick; what it raises is logged.
    idle_timeout, departed_grace
        An owner unseen for ``idle_timeout`` s counts as gone; a gone owner's requests are withdrawn
        after ``departed_grace`` s more (a reconnecting browser keeps them).
    """

    def __init__(self, store: FitStore | None = None, *, fit_function: str = DEFAULT_FIT_FUNCTION,
                 scheduler: str | None = None, n_workers: int | None = None, client: Any = None,
                 warm: bool = False, worker_nice: int = 19, max_pending_per_owner: int = MAX_PENDING_PER_OWNER,
                 owner_alive: Callable[[str], bool | None] | None = None, idle_timeout: float = 900.0,
                 departed_grace: float = 30.0, reap_every: float = 5.0,
                 on_landed: Callable[[JobStatus], None] | None = None) -> None:
        self.store: FitStore = store if store is not None else FitCacheStore()
        self.fit_function = fit_function
        self.scheduler = scheduler if scheduler is not None else (os.environ.get(ENV_SCHEDULER) or None)
        self.n_workers = n_workers
        self.worker_nice = int(worker_nice)
        self.owner_alive = owner_alive
        self.on_landed = on_landed
        self.idle_timeout, self.departed_grace, self.reap_every = float(idle_timeout), float(departed_grace), float(reap_every)
        self._book = JobBook(max_pending_per_owner)
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._client: Any = None  # a dask.distributed Client once started (imported when needed)
        self._own_client = client is None
        self._cluster: Any = None
        self._client_error: tuple[float, str] | None = None
        self._want_client = bool(warm)
        self._slots = 0
        self._slots_at = 0.0
        self._futures: dict[str, Any] = {}  # job id -> future of a running job
        self._runs: dict[str, str] = {}  # job id -> its current run's id (what workers and events name)
        self._draining: dict[str, tuple[Any, float]] = {}  # run id -> (future, since): stopped, still on a worker
        self._memory: OrderedDict[str, Any] = OrderedDict()  # fit key -> result the store could not keep
        self._landed: OrderedDict[str, tuple[Any, int]] = OrderedDict()  # fit key -> (stored result landed lately, bytes)
        self._last_seen: dict[str, float] = {}
        self._gone_since: dict[str, float] = {}
        self._reaped_at = 0.0
        self._topic = f"simplex-fit-{uuid.uuid4().hex[:8]}"
        self.tasks_started = 0
        self._stopped = False
        if client is not None:
            self._attach(client)
        self._thread = threading.Thread(target=self._loop, name="fit-manager", daemon=True)
        self._thread.start()
        _MANAGERS.add(self)

    # -- public API ----------------------------------------------------------------------------
    def _key(self, counts: Any, settings: Any, kind: JobKind | None) -> str:
        return fit_key(counts, settings) if kind is None else resolve(kind.key_function)(counts, settings)

    def lookup(self, counts: Any, settings: Any, kind: JobKind | None = None) -> Any | None:
        """The stored result of this fit (of ``kind``: another model's, see :class:`JobKind`), or ``None``
        (never runs a fit)."""
        key = self._key(counts, settings, kind)
        store = self.store if kind is None else kind.store
        with self._lock:
            held, landed = self._memory.get(key), self._landed.get(key, (None, 0))[0]
        if held is not None:
            return held
        if landed is not None:
            if store.contains(counts, settings):  # a stat, not a read; an entry removed since is refitted
                return landed
            with self._lock:
                self._landed.pop(key, None)
        try:
            return store.load(counts, settings)
        except Exception:  # noqa: BLE001 — an unreadable entry is a miss, logged
            log.warning("fit cache entry unreadable; treating as a miss", exc_info=True)
            return None

    def submit(self, counts: Any, settings: Any, *, priority: int = INTERACTIVE, label: str = "",
               group: str | None = None, owner: str | None = None, supersede: bool = False,
               kind: JobKind | None = None) -> JobStatus:
        """Ask for a fit; returns at once. A stored fit comes back ``'done'`` with ``from_cache``;
        a fit already queued or running is shared. ``kind``: a fit of another model (its function,
        store and key), run on the same workers under the same book."""
        key = self._key(counts, settings, kind)
        store = self.store if kind is None else kind.store
        if owner is not None:
            self.touch(owner)
        with self._lock:
            if self._stopped:
                raise RuntimeError("the fit manager has been shut down")
            if self._book.live(key) is not None:
                job = self._book.request(key, None, priority=priority, label=label, group=group, owner=owner,
                                         supersede=supersede)
                self._wake.set()
                return self._book.status(job)
        stored = key in self._memory
        if not stored:
            try:  # outside the lock: reads the disk
                stored = bool(store.contains(counts, settings))
            except Exception:  # noqa: BLE001
                log.warning("fit cache check failed; fitting", exc_info=True)
        with self._lock:
            job = self._book.request(key, (counts, settings, kind), priority=priority, label=label, group=group,
                                     owner=owner, supersede=supersede, stored=stored)
            self._wake.set()
            return self._book.status(job)

    def touch(self, owner: str) -> None:
        """The owner (a session) is still there: a heartbeat."""
        self._last_seen[owner] = time.time()

    def status(self, job_id: str) -> JobStatus:
        """The current status of a job (``KeyError`` for an unknown id)."""
        with self._lock:
            return self._book.status(self._book.get(job_id))

    def find(self, counts: Any, settings: Any, kind: JobKind | None = None) -> JobStatus | None:
        """The status of the live (else the most recent) job of this fit, if any."""
        key = self._key(counts, settings, kind)
        with self._lock:
            job = self._book.latest(key)
            return self._book.status(job) if job is not None else None

    def landed_at(self, counts: Any, settings: Any, kind: JobKind | None = None) -> float | None:
        """When a worker last finished this fit (``time.time()``), or ``None`` (never fitted here, or
        its job forgotten)."""
        key = self._key(counts, settings, kind)
        with self._lock:
            return self._book.landed_at(key)

    def result(self, job_id: str, counts: Any, settings: Any, kind: JobKind | None = None) -> Any | None:
        """The result of a finished job (``None`` while not done)."""
        with self._lock:
            if self._book.get(job_id).state != "done":
                return None
        return self.lookup(counts, settings, kind)

    def cancel(self, job_id: str, owner: str | None = None) -> bool:
        """Cancel a queued or running job; with ``owner``, only that owner's request is withdrawn
        unless nobody else waits. ``True`` when the job was cancelled."""
        with self._lock:
            done = self._book.cancel(job_id, owner=owner)
        self._wake.set()
        return done

    def cancel_group(self, group: str) -> int:
        """Cancel every queued or running job of a group; returns how many."""
        with self._lock:
            n = self._book.cancel_group(group)
        self._wake.set()
        return n

    def withdraw_owner(self, owner: str) -> int:
        """Withdraw every request of an owner who has left; returns how many jobs were cancelled."""
        with self._lock:
            n = self._book.withdraw_owner(owner)
        self._wake.set()
        return n

    def jobs(self, group: str | None = None) -> list[JobStatus]:
        """Snapshots of the jobs (of one group, when given), oldest first."""
        with self._lock:
            return [self._book.status(j) for j in self._book.jobs(group)]

    def group_progress(self, group: str) -> GroupProgress:
        """A group's fits by state and the time left."""
        with self._lock:
            return self._book.group_progress(group, slots=self._slots or default_fit_workers())

    def describe(self) -> str:
        """Where the fits run, in plain words."""
        from simplex_core.inference.distributed import describe

        return "no fit has run yet" if self._client is None else describe(self._client)

    def shutdown(self, wait: bool = True) -> None:
        """Cancel what is pending and close the cluster this manager started."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            for job in self._book.jobs():
                self._book.cancel(job.job_id, message="Cancelled: the app is shutting down.")
            self._book.take_stops()
        self._wake.set()
        if wait and threading.current_thread() is not self._thread:
            self._thread.join(timeout=10)
        self._close_client()

    # -- the dispatcher thread -----------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stopped:
            try:
                self._step()
            except Exception:  # noqa: BLE001 — the loop must survive anything; the log says what
                log.exception("fit manager step failed")
                time.sleep(1.0)
            self._wake.wait(timeout=0.1)
            self._wake.clear()

    def _step(self) -> None:
        with self._lock:
            need = self._want_client or self._book.has_queued() or bool(self._futures)
        if need and self._client is None and not self._start_client():
            return
        if self._client is None:
            return
        self._collect()
        with self._lock:
            free = self._slots - len(self._futures) - len(self._draining)
            if self._slots and free <= 0 and not self._draining:
                victim = self._book.preempt_for_urgent()  # one at a time: its slot frees once it drains
                if victim is not None:
                    log.info("fit %s put back in the queue for a more urgent fit", victim.label or victim.key[:12])
            stops = self._book.take_stops()
            runs = []
            for job in stops:
                future, run = self._futures.pop(job.job_id, None), self._runs.get(job.job_id)
                if future is not None and run is not None:
                    self._draining[run] = (future, time.monotonic())
                    runs.append((job, run))
                if job.state == "cancelled":
                    self._runs.pop(job.job_id, None)
        for job, run in runs:  # outside the lock: round trips to the workers
            if job.state == "cancelled":
                log.info("fit %s cancelled while running: %s", job.label or job.key[:12], job.message or "")
            self._stop(run)
        self._drain()
        self._refresh_slots()
        with self._lock:
            free = self._slots - len(self._futures) - len(self._draining)
            for job in self._book.start_next(max(0, free)):
                counts, settings, kind = job.payload
                run = f"{job.job_id}.{job.preemptions}"  # a preempted job's next run is a new task
                self._runs[job.job_id] = run
                self._futures[job.job_id] = self._client.submit(
                    run_fit, run, counts, settings, self.store if kind is None else kind.store,
                    self.fit_function if kind is None else kind.fit_function, self._topic,
                    self.worker_nice, key=f"fit-{run}", pure=False)
                self.tasks_started += 1
                log.info("fit %s started (%s, waited %.1f s)", job.label or job.key[:12],
                         "interactive" if job.priority == INTERACTIVE else
                         "background" if job.priority >= BACKGROUND else f"priority {job.priority}",
                         (job.started_at or 0.0) - job.submitted_at)
        self._reap()

    def _start_client(self) -> bool:
        if self._client_error is not None and time.monotonic() - self._client_error[0] < 30:
            self._fail_queued(self._client_error[1])
            return False
        from simplex_core.inference.distributed import start_client

        try:
            client, cluster = start_client(self.scheduler, self.n_workers or default_fit_workers(),
                                           config={"distributed.scheduler.allowed-failures": 0})
        except Exception as exc:  # noqa: BLE001 — every failure becomes a message on the jobs
            message = (f"The fit workers could not be started ({exc}). Try again later." if not self.scheduler else
                       f"The Dask scheduler at {self.scheduler} cannot be reached ({exc}).")
            log.error("fit manager: %s", message, exc_info=True)
            self._client_error = (time.monotonic(), message)
            self._fail_queued(message)
            return False
        self._client_error = None
        self._cluster = cluster
        self._attach(client)
        return True

    def _attach(self, client: Any) -> None:
        client.subscribe_topic(self._topic, self._on_event)
        self._client = client
        try:
            client.run(warm, self.fit_function, self.worker_nice)  # import the model code on every worker now
        except Exception:  # noqa: BLE001 — a fit then reports the import error itself
            log.warning("warming the fit workers failed", exc_info=True)

    def _fail_queued(self, message: str) -> None:
        with self._lock:
            for job in self._book.start_next(10**9):
                self._book.on_failed(job.job_id, message)

    def _refresh_slots(self) -> None:
        if self._slots and (self._cluster is not None or time.monotonic() - self._slots_at < 10):
            return
        try:
            workers = self._client.scheduler_info().get("workers", {})
            self._slots = max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))
        except Exception:  # noqa: BLE001
            self._slots = max(1, self._slots)
        self._slots_at = time.monotonic()

    def _collect(self) -> None:
        with self._lock:
            finished = [(i, f) for i, f in self._futures.items() if f.status != "pending"]
        ended: list[JobStatus] = []
        for job_id, future in finished:
            landed: Any = None
            message, failure = None, None
            try:
                if future.status == "finished":
                    landed = future.result(timeout=60)
                else:
                    failure = future.exception(timeout=60)
            except Exception as exc:  # noqa: BLE001 — a lost or cancelled future
                failure = exc
            if failure is None and not (isinstance(landed, tuple) and len(landed) == 2):
                # never leave a job running for good (its page would wait forever): fail it in words
                failure = RuntimeError(f"the fit task returned {type(landed).__name__}, not (stored, result)")
            with self._lock:
                self._futures.pop(job_id, None)
                self._runs.pop(job_id, None)
                job = self._book.running_job(job_id)
                if job is None:
                    continue
                if failure is None:
                    stored, result = landed
                    if stored:
                        self._keep_landed(job.key, result)
                    else:
                        log.warning("fit %s could not be stored in the fit cache; kept in memory", job.label or job.key)
                        message = "The fit cache folder could not be written: this fit is kept in memory only."
                        self._memory[job.key] = result
                        while len(self._memory) > _MEMORY_ENTRIES:
                            self._memory.popitem(last=False)
                    self._book.on_done(job_id, message)
                    log.info("fit %s landed after %.1f s on a worker", job.label or job.key[:12],
                             (job.finished_at or 0.0) - (job.started_at or 0.0))
                elif isinstance(failure, FitCancelled):
                    self._book.cancel(job_id)
                else:
                    killed = type(failure).__name__ in ("KilledWorker", "CancelledError", "FutureCancelledError")
                    if not killed:
                        log.error("fit %s failed: %r", job.label or job.key, failure)
                    self._book.on_failed(job_id, _KILLED if killed else plain_failure(failure))
                final = self._book.status(job)
                if final.state in ("done", "failed"):
                    ended.append(final)
            future.release()
        if self.on_landed is not None:
            for status in ended:
                try:
                    self.on_landed(status)
                except Exception:  # noqa: BLE001 — a listener must not stop the dispatcher
                    log.exception("the on_landed listener failed for fit %s", status.label or status.key[:12])

    def _keep_landed(self, key: str, result: Any) -> None:
        """Keep a stored fit that landed in memory, dropping the oldest beyond ``_LANDED_BYTES``."""
        self._landed[key] = (result, _draws_bytes(result))
        self._landed.move_to_end(key)
        while len(self._landed) > 1 and sum(size for _, size in self._landed.values()) > _LANDED_BYTES:
            self._landed.popitem(last=False)

    def _stop(self, run: str) -> None:
        try:
            self._client.run(mark_cancelled, run)
        except Exception:  # noqa: BLE001 — the drain restarts the worker instead
            log.warning("could not tell the workers to stop fit run %s", run, exc_info=True)

    def _drain(self) -> None:
        now = time.monotonic()
        with self._lock:
            items = list(self._draining.items())
        for run, (future, since) in items:
            if future.status != "pending":
                with self._lock:
                    self._draining.pop(run, None)
                future.release()
            elif now - since > DRAIN_SECONDS:
                self._restart_worker_of(future)
                with self._lock:
                    self._draining.pop(run, None)
                future.release()

    def _restart_worker_of(self, future: Any) -> None:
        try:
            processing = self._client.processing()
            where = [w for w, keys in processing.items() if future.key in keys]
            if where:
                log.warning("a cancelled fit did not stop; restarting its worker %s", where[0])
                self._client.restart_workers(where, timeout=60, raise_for_error=False)
        except Exception:  # noqa: BLE001
            log.warning("could not restart the worker of a cancelled fit", exc_info=True)

    def _on_event(self, event: Any) -> None:
        _, msg = event
        with self._lock:
            kind, run = msg.get("kind"), msg.get("job")
            job_id = str(run).rpartition(".")[0]
            if self._runs.get(job_id) != run:
                return  # a stopped run's late report
            if kind == "progress":
                self._book.on_progress(job_id, msg["done"], msg["total"], msg["fraction"], msg["stage"])
            elif kind == "saving":
                self._book.on_saving(job_id)

    def _reap(self) -> None:
        now = time.time()
        if now - self._reaped_at < self.reap_every:
            return
        self._reaped_at = now
        with self._lock:
            owners = self._book.owners()
        for owner in owners:
            alive = None
            if self.owner_alive is not None:
                try:
                    alive = self.owner_alive(owner)
                except Exception:  # noqa: BLE001
                    alive = None
            if alive is None:
                seen = self._last_seen.get(owner)
                alive = seen is None or now - seen < self.idle_timeout
            if alive:
                self._gone_since.pop(owner, None)
                continue
            since = self._gone_since.setdefault(owner, now)
            if now - since >= self.departed_grace:
                n = self.withdraw_owner(owner)
                log.info("session %s has left: %d of its fits cancelled", owner, n)
                self._gone_since.pop(owner, None)
                self._last_seen.pop(owner, None)

    def _close_client(self) -> None:
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            try:
                client.unsubscribe_topic(self._topic)
            except Exception:  # noqa: BLE001
                pass
        if client is None or not self._own_client:
            return
        try:
            client.close(timeout=10)
        except Exception:  # noqa: BLE001
            pass
        if cluster is not None:
            try:
                cluster.close(timeout=10)
            except Exception:  # noqa: BLE001
                pass
