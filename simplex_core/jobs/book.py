"""The job book: which fits are asked for, by whom, in which order — no processes, no threads.

:class:`JobBook` keeps the jobs and every rule about them: one job per fit key (identical requests
share it, the more urgent priority wins), a priority queue (interactive before sweep before
background; first come, first served within one), preemption (a queued fit more urgent than a
running one sends the least urgent running fit back to the queue: a visitor's fit does not wait
for the background grid to finish), *supersede* (an owner's newer interactive
request withdraws its older queued one), cancel by owner (a job ends only when nobody else waits
for it), a bound on what one owner may have pending (the oldest, least urgent requests make room),
withdrawing everything of an owner who has left, group progress and an estimate of the time left.

The dispatcher (:mod:`simplex_core.jobs.manager`) takes jobs with :meth:`JobBook.start_next` and
reports back with ``on_*``; running jobs the book cancels are handed to it by
:meth:`JobBook.take_stops`. The book is not thread-safe: its owner holds one lock around it.
"""

from __future__ import annotations

import heapq
import itertools
import time
import uuid
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Iterable

from simplex_core.jobs.status import FINAL_STATES, INTERACTIVE, GroupProgress, JobState, JobStatus

#: Finished jobs remembered for status queries; older ones are forgotten.
KEEP_FINISHED = 2000
#: Pending (queued or running) requests one owner may have at once.
MAX_PENDING_PER_OWNER = 40

SUPERSEDED = "Replaced by a newer request."
OWNER_LEFT = "Cancelled: the session that asked for it has left."
TOO_MANY = "Cancelled: this session asked for more fits than one session may queue; newer requests came first."


@dataclass
class Job:
    job_id: str
    key: str
    payload: Any  # what the dispatcher needs to run it (counts, settings); dropped when final
    priority: int
    label: str
    group: str | None
    seq: int
    owners: set[str] = field(default_factory=set)
    state: JobState = "queued"
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
    preemptions: int = 0  # times it was put back in the queue for a more urgent fit

    def snapshot(self, queue_position: int | None = None) -> JobStatus:
        # every field of the snapshot from this record's field of the same name (a new JobStatus
        # field fails here until the record has it)
        return JobStatus(**{f.name: getattr(self, f.name) for f in fields(JobStatus) if f.name != "queue_position"},
                         queue_position=queue_position)


class JobBook:
    """Jobs, their queue and their owners (see the module docstring).

    Parameters
    ----------
    max_pending_per_owner
        Bound on one owner's queued or running requests; past it, that owner's least urgent,
        oldest queued requests are withdrawn.
    clock
        Seconds (``time.time`` by default; tests pass their own).
    """

    def __init__(self, max_pending_per_owner: int = MAX_PENDING_PER_OWNER,
                 clock: Callable[[], float] = time.time) -> None:
        self.max_pending_per_owner = int(max_pending_per_owner)
        self.clock = clock
        self._jobs: dict[str, Job] = {}
        self._live: dict[str, str] = {}  # fit key -> id of its queued or running job
        self._heap: list[tuple[int, int, str]] = []
        self._seq = itertools.count()
        self._stops: list[Job] = []  # running jobs cancelled, for the dispatcher to stop
        self.durations: list[float] = []  # seconds of the fits that ran

    # -- requests ------------------------------------------------------------------------------
    def live(self, key: str) -> Job | None:
        """The queued or running job of this fit, if any."""
        job_id = self._live.get(key)
        return self._jobs[job_id] if job_id is not None else None

    def latest(self, key: str) -> Job | None:
        """The live job of this fit, else its most recent one."""
        live = self.live(key)
        if live is not None:
            return live
        jobs = [j for j in self._jobs.values() if j.key == key]
        return max(jobs, key=lambda j: (j.submitted_at, j.seq)) if jobs else None

    def request(self, key: str, payload: Any, *, priority: int = INTERACTIVE, label: str = "",
                group: str | None = None, owner: str | None = None, supersede: bool = False,
                stored: bool = False) -> Job:
        """Ask for a fit. A live job of the same key is shared (raised to the more urgent priority);
        ``stored=True`` (the result is already stored) gives a job that is done at once."""
        if supersede and owner is not None:
            self._supersede(owner, keep_key=key)
        job = self.live(key)
        if job is not None:
            if owner is not None:
                job.owners.add(owner)
            if priority < job.priority:
                job.priority = priority
                if job.state == "queued":
                    heapq.heappush(self._heap, (priority, next(self._seq), job.job_id))
            if group is not None and job.group is None:
                job.group = group
            self._bound(owner, keep=job)
            return job
        now = self.clock()
        job = Job(job_id=uuid.uuid4().hex[:12], key=key, payload=payload, priority=priority, label=label,
                  group=group, seq=next(self._seq), owners={owner} if owner else set(), submitted_at=now)
        self._jobs[job.job_id] = job
        if stored:
            job.state, job.phase, job.from_cache = "done", "finished", True
            job.started_at = job.finished_at = now
            job.payload = None
            return job
        self._live[key] = job.job_id
        heapq.heappush(self._heap, (priority, job.seq, job.job_id))
        self._bound(owner, keep=job)
        return job

    def cancel(self, job_id: str, owner: str | None = None, message: str = "Cancelled: the fit was stopped before it finished.") -> bool:
        """Cancel a live job; with ``owner``, withdraw that owner's request and cancel only when
        nobody else waits. ``True`` when the job was cancelled."""
        job = self._jobs.get(job_id)
        if job is None or job.state in FINAL_STATES:
            return False
        if owner is not None:
            job.owners.discard(owner)
            if job.owners:
                return False
        self._cancel(job, message)
        return True

    def cancel_group(self, group: str, message: str = "Cancelled with the rest of its group.") -> int:
        jobs = [j for j in self._jobs.values() if j.group == group and j.state not in FINAL_STATES]
        for job in jobs:
            self._cancel(job, message)
        return len(jobs)

    def withdraw_owner(self, owner: str, message: str = OWNER_LEFT) -> int:
        """Withdraw every live request of ``owner`` (e.g. a session that has left); jobs nobody
        else waits for are cancelled. Returns how many were cancelled."""
        n = 0
        for job in list(self._jobs.values()):
            if job.state not in FINAL_STATES and owner in job.owners:
                n += self.cancel(job.job_id, owner=owner, message=message)
        return n

    def owners(self) -> set[str]:
        """Owners with a live request."""
        return {o for j in self._jobs.values() if j.state not in FINAL_STATES for o in j.owners}

    # -- the dispatcher's side -----------------------------------------------------------------
    def start_next(self, free: int) -> list[Job]:
        """Up to ``free`` queued jobs, most urgent first, marked running."""
        out: list[Job] = []
        while len(out) < free and (job := self._peek()) is not None:
            heapq.heappop(self._heap)
            job.state, job.phase, job.started_at = "running", "starting", self.clock()
            out.append(job)
        return out

    def preempt_for_urgent(self, nearly_done: float = 0.9) -> Job | None:
        """When the most urgent queued job is more urgent than a running one, put the least urgent
        running job (the least advanced among equals) back in the queue, in its old place, and hand
        it to the dispatcher to stop (:meth:`take_stops`); returns it, else ``None``. A job past
        ``nearly_done`` of its work, or saving, is left to finish: stopping it would waste more than
        the wait."""
        head = self._peek()
        if head is None:
            return None
        running = [j for j in self.running() if j.priority > head.priority and j.phase != "saving"
                   and (j.reported_fraction or 0.0) < nearly_done]
        if not running:
            return None
        victim = max(running, key=lambda j: (j.priority, -(j.reported_fraction or 0.0)))
        victim.state, victim.phase, victim.stage, victim.started_at = "queued", "waiting", "", None
        victim.draws_done = victim.draws_total = 0
        victim.reported_fraction = None
        victim.preemptions += 1
        heapq.heappush(self._heap, (victim.priority, victim.seq, victim.job_id))
        self._stops.append(victim)
        return victim

    def _peek(self) -> Job | None:
        """The most urgent queued job, at the top of the heap; stale entries (cancelled, or re-pushed at
        a higher priority) are dropped on the way."""
        while self._heap:
            priority, _, job_id = self._heap[0]
            job = self._jobs.get(job_id)
            if job is not None and job.state == "queued" and job.priority == priority:
                return job
            heapq.heappop(self._heap)
        return None

    def take_stops(self) -> list[Job]:
        """Running jobs cancelled or preempted since the last call (the dispatcher stops their work)."""
        stops, self._stops = self._stops, []
        return stops

    def running(self) -> list[Job]:
        return [j for j in self._jobs.values() if j.state == "running"]

    def has_queued(self) -> bool:
        return any(j.state == "queued" for j in self._jobs.values())

    def running_job(self, job_id: str) -> Job | None:
        """The job if it is running (a report about any other job is stale)."""
        job = self._jobs.get(job_id)
        return job if job is not None and job.state == "running" else None

    def on_progress(self, job_id: str, done: int, total: int, fraction: float, stage: str) -> None:
        job = self.running_job(job_id)
        if job is None:
            return
        if total:
            job.draws_done, job.draws_total = int(done), int(total)
        job.reported_fraction = float(fraction)
        job.stage = str(stage)
        job.phase = "sampling" if (total or "sampl" in job.stage.lower()) else "starting"

    def on_saving(self, job_id: str) -> None:
        job = self.running_job(job_id)
        if job is not None:
            job.phase = "saving"

    def on_done(self, job_id: str, message: str | None = None) -> Job | None:
        job = self.running_job(job_id)
        if job is None:
            return None
        job.state, job.phase, job.finished_at, job.message = "done", "finished", self.clock(), message
        if job.draws_total:
            job.draws_done = job.draws_total
        self.durations.append(job.finished_at - (job.started_at or job.finished_at))
        del self.durations[:-50]
        self._final(job)
        return job

    def on_failed(self, job_id: str, message: str) -> Job | None:
        job = self.running_job(job_id)
        if job is None:
            return None
        job.state, job.message, job.finished_at = "failed", message, self.clock()
        self._final(job)
        return job

    # -- reading -------------------------------------------------------------------------------
    def get(self, job_id: str) -> Job:
        return self._jobs[job_id]  # KeyError for an unknown (or forgotten) id

    def landed_at(self, key: str) -> float | None:
        """When a worker last finished this fit (its job's end, on :attr:`clock`), or ``None``: jobs
        that found it already stored do not count."""
        ends = [j.finished_at for j in self._jobs.values()
                if j.key == key and j.state == "done" and not j.from_cache and j.finished_at is not None]
        return max(ends) if ends else None

    def status(self, job: Job) -> JobStatus:
        position = None
        if job.state == "queued":
            mine = (job.priority, job.seq)
            position = 1 + sum(1 for j in self._jobs.values()
                               if j.state == "queued" and (j.priority, j.seq) < mine)
        return job.snapshot(position)

    def jobs(self, group: str | None = None) -> list[Job]:
        chosen = [j for j in self._jobs.values() if group is None or j.group == group]
        return sorted(chosen, key=lambda j: (j.submitted_at, j.seq))

    def mean_seconds(self) -> float | None:
        return sum(self.durations) / len(self.durations) if self.durations else None

    def group_progress(self, group: str, slots: int = 1) -> GroupProgress:
        """A group's fits by state (each fit counted once, by its latest job) and the time left
        with ``slots`` fits running at once."""
        latest: dict[str, Job] = {}
        for j in self._jobs.values():
            if j.group == group and (j.key not in latest or (j.submitted_at, j.seq) >= (latest[j.key].submitted_at, latest[j.key].seq)):
                latest[j.key] = j
        jobs = list(latest.values())
        n = {s: sum(1 for j in jobs if j.state == s) for s in ("queued", "running", "done", "failed", "cancelled")}
        return GroupProgress(group=group, total=len(jobs), done=n["done"], failed=n["failed"],
                             cancelled=n["cancelled"], running=n["running"], queued=n["queued"],
                             eta_seconds=self._eta(jobs, max(1, slots)))

    def prune(self, keep: int = KEEP_FINISHED) -> None:
        """Forget the oldest finished jobs beyond ``keep`` (a long-running server submits many)."""
        finished = [j for j in self._jobs.values() if j.state in FINAL_STATES]
        for job in sorted(finished, key=lambda j: j.finished_at or 0.0)[: max(0, len(finished) - keep)]:
            del self._jobs[job.job_id]

    # -- internals -----------------------------------------------------------------------------
    def _cancel(self, job: Job, message: str) -> None:
        was_running = job.state == "running"
        job.state, job.message, job.finished_at = "cancelled", message, self.clock()
        self._final(job)
        if was_running:
            self._stops.append(job)

    def _final(self, job: Job) -> None:
        job.payload = None
        if self._live.get(job.key) == job.job_id:
            del self._live[job.key]
        self.prune()

    def _supersede(self, owner: str, keep_key: str) -> None:
        for job in list(self._jobs.values()):
            if job.state == "queued" and job.priority == INTERACTIVE and owner in job.owners and job.key != keep_key:
                self.cancel(job.job_id, owner=owner, message=SUPERSEDED)

    def _bound(self, owner: str | None, keep: Job) -> None:
        if owner is None:
            return
        mine = [j for j in self._jobs.values() if j.state not in FINAL_STATES and owner in j.owners]
        excess = len(mine) - self.max_pending_per_owner
        if excess <= 0:
            return
        # least urgent first, oldest first among equals; never the request just made, nor a running fit
        queued = sorted((j for j in mine if j.state == "queued" and j is not keep), key=lambda j: (-j.priority, j.seq))
        for job in queued[:excess]:
            self.cancel(job.job_id, owner=owner, message=TOO_MANY)

    def _eta(self, jobs: Iterable[Job], slots: int) -> float | None:
        mean = self.mean_seconds()
        if mean is None:
            return None
        work = 0.0
        now = self.clock()
        for job in jobs:
            if job.state == "queued":
                work += mean
            elif job.state == "running":
                elapsed = now - (job.started_at or now)
                frac = job.reported_fraction if job.reported_fraction is not None else (
                    job.draws_done / job.draws_total if job.draws_total else 0.0)
                work += max(0.0, elapsed / frac - elapsed) if frac > 0.05 else max(0.0, mean - elapsed)
        return work / slots
