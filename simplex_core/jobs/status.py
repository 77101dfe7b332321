"""What a caller can know about fit jobs: states, priorities, immutable snapshots, the progress shape.

Every fit reports progress the way :func:`simplex_core.inference.fitting.fit_model` does:
``progress(message, fraction)`` (:data:`ProgressCallback`), with ``"N of M"`` in the message when it
counts draws; :func:`progress_numbers` reads that into (done, total, fraction, stage).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Callable, Literal

#: Priority of a fit somebody is waiting for (smaller runs first).
INTERACTIVE = 0
#: Priority of a fit that fills the ω × β_max grid in the background.
BACKGROUND = 10

JobState = Literal["queued", "running", "done", "failed", "cancelled"]
FINAL_STATES: frozenset[str] = frozenset({"done", "failed", "cancelled"})

#: The one progress-callback shape: ``progress(message, fraction in [0, 1])``.
ProgressCallback = Callable[[str, float], None]

_OF = re.compile(r"(\d+)\s+of\s+(\d+)")


def progress_numbers(message: str, fraction: float | None) -> tuple[int, int, float, str] | None:
    """(draws done, draws total, fraction, stage) from one progress report; ``None`` when it says
    nothing usable. Done/total come from ``"N of M"`` in the message (0, 0 when absent)."""
    try:
        frac = None if fraction is None else min(1.0, max(0.0, float(fraction)))
    except (TypeError, ValueError):
        frac = None
    stage = str(message)
    match = _OF.search(stage)
    if match and int(match.group(2)) > 0:
        done, total = int(match.group(1)), int(match.group(2))
        return done, total, frac if frac is not None else done / total, stage
    if frac is None:
        return None
    return 0, 0, frac, stage


def format_duration(seconds: float) -> str:
    """``'45 s'``, ``'3 min'``, ``'1 h 5 min'``."""
    seconds = max(0.0, float(seconds))
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = seconds / 60
    if minutes < 90:
        return f"{round(minutes)} min"
    return f"{int(minutes // 60)} h {round(minutes % 60)} min"


@dataclass(frozen=True)
class JobStatus:
    """What a caller can know about one fit job (an immutable snapshot).

    Attributes
    ----------
    job_id
        Unique id of the job.
    key
        :func:`simplex_core.inference.fit_identity.fit_key` of the fit; requests for one fit share one job.
    state
        ``'queued'``, ``'running'``, ``'done'``, ``'failed'`` or ``'cancelled'``.
    priority
        :data:`INTERACTIVE`, :data:`BACKGROUND` or between (smaller runs first).
    label
        A short human description (e.g. ``"ω = 1, β_max = 5"``).
    group
        Name of the group the job belongs to (e.g. one dataset's background grid), or ``None``.
    draws_done, draws_total
        Sampling progress; ``draws_total`` is 0 until the sampler reports.
    stage, reported_fraction
        The fit's own words for what it is doing and its overall fraction done.
    phase
        ``'waiting'``, ``'starting'`` (worker loading, model compiling), ``'sampling'``,
        ``'saving'`` or ``'finished'``.
    from_cache
        The result was already stored: no worker was used.
    message
        On failure or cancel, what happened and what to do, in plain words.
    queue_position
        While queued: 1 = the next to start when a worker is free.
    preemptions
        Times the fit was stopped and sent back to the queue for a more urgent one (it then runs
        again from the start).
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
    preemptions: int = 0

    @property
    def is_final(self) -> bool:
        return self.state in FINAL_STATES

    @property
    def fraction(self) -> float:
        """Share of the fit done, in [0, 1] (1 when the job is done)."""
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
            again = "; paused for a more urgent fit, it will start again" if self.preemptions else ""
            return f"waiting for a fit worker{pos}{again}"
        if self.phase == "sampling" and self.draws_total:
            this_run = self.draws_done / self.draws_total
            if abs(this_run - self.fraction) > 0.1:  # a later round or stage: its draws are not the whole fit's
                return (f"sampling: {self.draws_done} of {self.draws_total} draws of this run; "
                        f"{100 * self.fraction:.0f}% of the fit")
            return f"sampling: {self.draws_done} of {self.draws_total} draws ({100 * self.fraction:.0f}%)"
        if self.phase == "sampling":
            return f"sampling ({100 * self.fraction:.0f}%)"
        if self.phase == "saving":
            return "saving the posterior"
        what = self.stage or "preparing the model (starting the fit worker, compiling)"
        return f"{what} for {self.elapsed:.0f} s"


@dataclass(frozen=True)
class GroupProgress:
    """Progress of a group of jobs (e.g. the background ω × β_max grid of one dataset).

    ``eta_seconds`` is ``None`` until one fit has finished in this manager (no honest estimate
    before that).
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
