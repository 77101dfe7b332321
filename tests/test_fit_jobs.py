"""The background fit manager: queue order, progress, cancel, the disk cache, and a real small fit.

Most tests use a stand-in fit function (``fake_fit`` below, imported by the worker process by name)
so they exercise the manager's process handling in seconds; one test runs a real small model fit
and compares it with a direct fit of the same seed.
"""

from __future__ import annotations

import os
import pickle
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simplex_core import fit_jobs
from simplex_core.fit_jobs import BACKGROUND, INTERACTIVE, FitManager, JobStatus, format_duration, grid_settings

# -- stand-ins (module level: the spawned worker imports them by name) ---------------------------


@dataclass(frozen=True)
class FakeSettings:
    """Just enough of FitSettings for the manager: a key, the fields fake_fit reads, replace()."""

    omega: float = 0.0
    beta_max: float = 5.0
    steps: int = 20
    step_seconds: float = 0.02
    fail: bool = False
    integrated: bool = False
    likelihood: str = "per-judge"

    def key(self) -> str:
        return f"o{self.omega:g}-b{self.beta_max:g}-s{self.steps}-t{self.step_seconds:g}-f{int(self.fail)}"

    def replace(self, **changes: Any) -> "FakeSettings":
        from dataclasses import replace

        return replace(self, **changes)


def FakeCounts(N: np.ndarray, included: np.ndarray):  # noqa: N802 — reads like the class it was
    """Real Counts of a hand-made tensor (the fit key reads names and the scale)."""
    from simplex_core.data import Counts
    from simplex_core.scale import Scale

    J, K, M = N.shape
    return Counts(N=N, included=included, judges=tuple(f"j{j}" for j in range(J)),
                  candidates=tuple(f"c{k}" for k in range(K)),
                  scale=Scale(tuple(float(m) for m in range(M)), tuple(str(m) for m in range(M))))


def fake_fit(counts: FakeCounts, settings: FakeSettings, progress_callback=None) -> dict:
    """Sleeps ``steps`` times, reporting progress; the result records the worker's pid."""
    if settings.fail:
        raise ValueError("this setting cannot be fitted (on purpose)")
    for i in range(settings.steps):
        time.sleep(settings.step_seconds)
        if progress_callback is not None:
            progress_callback(i + 1, settings.steps)
    return {"omega": settings.omega, "beta_max": settings.beta_max, "total": int(counts.N.sum()), "pid": os.getpid(),
            "nice": os.nice(0)}


@dataclass(frozen=True)
class PickleStore:
    """A picklable on-disk store for the stand-in results (one file per fit key)."""

    directory: str

    def _path(self, counts: Any, settings: Any) -> Path:
        return Path(self.directory) / f"{fit_jobs.fit_key(counts, settings)}.pkl"

    def contains(self, counts: Any, settings: Any) -> bool:
        return self._path(counts, settings).exists()

    def load(self, counts: Any, settings: Any) -> Any:
        p = self._path(counts, settings)
        return pickle.loads(p.read_bytes()) if p.exists() else None

    def save(self, counts: Any, settings: Any, result: Any) -> None:
        p = self._path(counts, settings)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(result))
        tmp.replace(p)


FAKE = "tests.test_fit_jobs:fake_fit"


def _counts() -> FakeCounts:
    return FakeCounts(N=np.arange(12).reshape(2, 2, 3), included=np.ones((2, 2), dtype=bool))


def wait_until(predicate, timeout: float = 60.0, step: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


@pytest.fixture
def manager(tmp_path):
    m = FitManager(PickleStore(str(tmp_path / "store")), fit_function=FAKE)
    yield m
    m.shutdown()


# -- pure helpers ------------------------------------------------------------------------------

def test_format_duration_words():
    assert format_duration(0.2) == "1 s"
    assert format_duration(45) == "45 s"
    assert format_duration(600) == "10 min"
    assert format_duration(3 * 3600 + 5 * 60) == "3 h 5 min"


def test_grid_settings_cover_the_grid_nearest_first():
    base = FakeSettings(omega=0.0, beta_max=5.0)
    grid = grid_settings(base)
    assert len(grid) == 25
    assert {(s.omega, s.beta_max) for s in grid} == {(o, b) for o in (0, 1, 2, 4, 8) for b in (0, 1, 5, 10, 20)}
    assert (grid[0].omega, grid[0].beta_max) == (0.0, 5.0)  # the base itself first
    # then by distance in grid steps from the base: its four... here three neighbours (ω = 0 is an edge)
    steps = [np.hypot([0, 1, 2, 4, 8].index(s.omega), [0, 1, 5, 10, 20].index(s.beta_max) - 2) for s in grid]
    assert steps == sorted(steps)
    assert {(s.omega, s.beta_max) for s in grid[1:4]} == {(1.0, 5.0), (0.0, 1.0), (0.0, 10.0)}


def test_progress_numbers_accepts_the_usual_callback_shapes():
    pn = fit_jobs._progress_numbers
    # the project's fit_model reports (message, fraction)
    assert pn(("sampling: 120 of 1600 iterations", 0.12), {}) == (120, 1600, 0.12, "sampling: 120 of 1600 iterations")
    assert pn(("preparing the model", 0.0), {}) == (0, 0, 0.0, "preparing the model")
    assert pn((3, 10), {}) == (3, 10, 0.3, "")
    assert pn((), {"done": 4, "total": 8}) == (4, 8, 0.5, "")
    assert pn(({"draws_done": 5, "draws_total": 20},), {}) == (5, 20, 0.25, "")
    assert pn((0.25,), {}) == (0, 0, 0.25, "")
    assert pn(("no numbers here",), {}) is None
    assert pn((1, 0), {}) is None


def test_job_status_describes_itself_in_words():
    s = JobStatus(job_id="x", key="k", state="running", priority=0, phase="sampling", draws_done=50, draws_total=200,
                  started_at=time.time())
    assert s.describe() == "sampling: 50 of 200 draws (25%)"
    assert s.fraction == pytest.approx(0.25)
    q = JobStatus(job_id="y", key="k", state="queued", priority=0, queue_position=2)
    assert "position 2" in q.describe()


# -- the manager with the stand-in fit ----------------------------------------------------------

def test_submit_runs_in_a_worker_reports_progress_and_stores_the_result(manager):
    settings = FakeSettings(steps=15, step_seconds=0.03)
    status = manager.submit(_counts(), settings, label="fake")
    assert status.state in ("queued", "running")
    seen_progress: list[tuple[int, int]] = []

    def done() -> bool:
        s = manager.status(status.job_id)
        if s.draws_total:
            seen_progress.append((s.draws_done, s.draws_total))
        return s.state == "done"

    assert wait_until(done, timeout=120), manager.status(status.job_id)
    final = manager.status(status.job_id)
    assert final.fraction == 1.0 and not final.from_cache
    assert seen_progress and all(t == 15 for _, t in seen_progress)
    assert [d for d, _ in seen_progress] == sorted(d for d, _ in seen_progress)  # progress never goes back
    result = manager.result(status.job_id, _counts(), settings)
    assert result["total"] == int(_counts().N.sum())
    assert result["pid"] != os.getpid()  # fitted in another process
    assert result["nice"] == min(os.nice(0) + 10, 19)  # ... that yields the CPU to the page server
    assert manager.workers_started == 1


def test_a_cached_setting_comes_back_without_starting_a_worker(tmp_path):
    store = PickleStore(str(tmp_path / "store"))
    settings = FakeSettings(omega=2.0)
    store.save(_counts(), settings, {"omega": 2.0, "cached": True})
    m = FitManager(store, fit_function=FAKE)
    try:
        status = m.submit(_counts(), settings)
        assert status.state == "done" and status.from_cache
        assert m.result(status.job_id, _counts(), settings) == {"omega": 2.0, "cached": True}
        time.sleep(0.3)
        assert m.workers_started == 0
    finally:
        m.shutdown()


def test_old_finished_jobs_are_forgotten_but_live_ones_kept(tmp_path):
    store = PickleStore(str(tmp_path / "store"))
    for o in (1.0, 2.0, 4.0):
        store.save(_counts(), FakeSettings(omega=o), {"omega": o})
    m = FitManager(store, fit_function=FAKE)
    try:
        done = [m.submit(_counts(), FakeSettings(omega=o)) for o in (1.0, 2.0, 4.0)]  # cache hits: finished at once
        live = m.submit(_counts(), FakeSettings(omega=8.0, steps=500, step_seconds=0.02))
        with m._lock:
            m._prune(keep=1)
        remaining = {j.job_id for j in m.jobs()}
        assert remaining == {done[-1].job_id, live.job_id}
        with pytest.raises(KeyError):
            m.status(done[0].job_id)
    finally:
        m.shutdown()


def test_the_same_fit_requested_twice_is_one_job(manager):
    s = FakeSettings(steps=30, step_seconds=0.02)
    a = manager.submit(_counts(), s, owner="user-1")
    b = manager.submit(_counts(), s, owner="user-2")
    assert a.job_id == b.job_id


def test_interactive_requests_jump_ahead_of_background_fills(manager):
    blocker = manager.submit(_counts(), FakeSettings(omega=0.0, steps=40, step_seconds=0.02), priority=BACKGROUND)
    assert wait_until(lambda: manager.status(blocker.job_id).state == "running", timeout=120)
    backgrounds = [manager.submit(_counts(), FakeSettings(omega=float(o), steps=2, step_seconds=0.01), priority=BACKGROUND,
                                  group="grid") for o in (1, 2, 4)]
    urgent = manager.submit(_counts(), FakeSettings(omega=8.0, steps=2, step_seconds=0.01), priority=INTERACTIVE)
    assert manager.status(urgent.job_id).queue_position == 2  # behind the running fit only
    ids = [j.job_id for j in backgrounds] + [urgent.job_id]
    assert wait_until(lambda: all(manager.status(i).state == "done" for i in ids), timeout=120)
    started = {i: manager.status(i).started_at for i in ids}
    assert started[urgent.job_id] < min(started[j.job_id] for j in backgrounds)
    progress = manager.group_progress("grid")
    assert (progress.total, progress.done, progress.queued, progress.running) == (3, 3, 0, 0)
    assert progress.finished and progress.describe().startswith("3 of 3 fitted")


def test_cancel_terminates_a_long_running_fit(manager):
    long = manager.submit(_counts(), FakeSettings(steps=10_000, step_seconds=0.05))
    assert wait_until(lambda: manager.status(long.job_id).draws_done > 0, timeout=120)
    assert manager.cancel(long.job_id)
    status = manager.status(long.job_id)
    assert status.state == "cancelled" and "Cancelled" in status.message
    # the manager keeps working after the cancel: a new job runs in a fresh worker
    after = manager.submit(_counts(), FakeSettings(omega=1.0, steps=3, step_seconds=0.01))
    assert wait_until(lambda: manager.status(after.job_id).state == "done", timeout=120)
    assert manager.workers_started == 2
    assert manager.status(long.job_id).state == "cancelled"  # a late event cannot revive it


def test_cancel_by_one_owner_keeps_a_job_another_owner_waits_for(manager):
    s = FakeSettings(steps=200, step_seconds=0.02)
    a = manager.submit(_counts(), s, owner="alice")
    manager.submit(_counts(), s, owner="bob")
    assert not manager.cancel(a.job_id, owner="alice")
    assert manager.status(a.job_id).state in ("queued", "running")
    assert manager.cancel(a.job_id, owner="bob")
    assert manager.status(a.job_id).state == "cancelled"


def test_a_newer_request_of_the_same_user_replaces_the_queued_one(manager):
    manager.submit(_counts(), FakeSettings(omega=0.0, steps=60, step_seconds=0.02), owner="other")  # occupies the worker
    first = manager.submit(_counts(), FakeSettings(omega=1.0), owner="me", supersede=True)
    second = manager.submit(_counts(), FakeSettings(omega=2.0), owner="me", supersede=True)
    assert manager.status(first.job_id).state == "cancelled"
    assert manager.status(first.job_id).message == "Replaced by a newer request."
    assert manager.status(second.job_id).state in ("queued", "running")


def test_a_failing_fit_reports_a_plain_message_and_the_next_one_runs(manager):
    bad = manager.submit(_counts(), FakeSettings(fail=True))
    assert wait_until(lambda: manager.status(bad.job_id).is_final, timeout=120)
    status = manager.status(bad.job_id)
    assert status.state == "failed"
    assert status.message == "The fit could not start: this setting cannot be fitted (on purpose)"
    good = manager.submit(_counts(), FakeSettings(omega=4.0, steps=2, step_seconds=0.01))
    assert wait_until(lambda: manager.status(good.job_id).state == "done", timeout=120)


def test_a_missing_fit_function_fails_the_job_in_words(tmp_path):
    m = FitManager(PickleStore(str(tmp_path / "s")), fit_function="tests.no_such_module:fit")
    try:
        job = m.submit(_counts(), FakeSettings())
        assert wait_until(lambda: m.status(job.job_id).is_final, timeout=120)
        status = m.status(job.job_id)
        assert status.state == "failed" and "could not load the model code" in status.message
    finally:
        m.shutdown()


def test_group_eta_appears_after_the_first_finished_fit(manager):
    first = manager.submit(_counts(), FakeSettings(omega=0.0, steps=5, step_seconds=0.02), group="g")
    assert manager.group_progress("g").eta_seconds is None or manager.group_progress("g").done == 1
    assert wait_until(lambda: manager.status(first.job_id).state == "done", timeout=120)
    for o in (1, 2):
        manager.submit(_counts(), FakeSettings(omega=float(o), steps=50, step_seconds=0.02), group="g", priority=BACKGROUND)
    progress = manager.group_progress("g")
    assert progress.total == 3 and progress.eta_seconds is not None and progress.eta_seconds > 0
    assert "left" in progress.describe()


# -- a real small fit -----------------------------------------------------------------------------

def _small_real_counts():
    from simplex_core.data import count_tensor, load_table
    from simplex_core.simulate import simulate

    rng = np.random.default_rng(3)
    rows = []
    truth_p = {"a": 0.8, "b": 0.5, "c": 0.2}
    accuracy = {"j1": 0.85, "j2": 0.75}
    for i in range(60):
        for cand, p in truth_p.items():
            t = int(rng.random() < p)
            for judge, acc in accuracy.items():
                rows.append({"item": f"q{i}", "candidate": cand, "judge": judge, "score": t if rng.random() < acc else 1 - t})
    import pandas as pd

    return count_tensor(load_table(pd.DataFrame(rows)))


@pytest.mark.slow
def test_a_real_fit_in_the_worker_equals_a_direct_fit_with_the_same_seed(tmp_path):
    from simplex_core.inference import fit_model
    from simplex_core.model import FitSettings

    counts = _small_real_counts()
    settings = FitSettings(chains=2, draws=150, tune=150, seed=11, extra_rounds=0)
    manager = FitManager(PickleStore(str(tmp_path / "store")))  # the default fit function: simplex_core.inference
    try:
        job = manager.submit(counts, settings, label="small")
        fractions = []

        def finished() -> bool:
            s = manager.status(job.job_id)
            fractions.append(s.fraction)
            return s.is_final

        assert wait_until(finished, timeout=600, step=0.2), manager.status(job.job_id)
        status = manager.status(job.job_id)
        assert status.state == "done", status.message
        assert status.fraction == 1.0 and max(fractions) == 1.0
        assert fractions == sorted(fractions)  # progress only moves forward
        from_worker = manager.result(job.job_id, counts, settings)
    finally:
        manager.shutdown()
    direct = fit_model(counts, settings)
    np.testing.assert_array_equal(from_worker.idata.posterior["expected_score"].values,
                                  direct.idata.posterior["expected_score"].values)
    np.testing.assert_array_equal(from_worker.idata.posterior["rank"].values, direct.idata.posterior["rank"].values)
    assert from_worker.diagnostics.message == direct.diagnostics.message


def test_a_fit_cancelled_then_requested_again_counts_once_in_its_group(manager):
    s = FakeSettings(omega=2.0, steps=400, step_seconds=0.02)
    first = manager.submit(_counts(), s, group="grid", priority=BACKGROUND)
    manager.cancel_group("grid")
    assert manager.group_progress("grid").cancelled == 1
    again = manager.submit(_counts(), s, group="grid", priority=BACKGROUND)
    assert again.job_id != first.job_id
    progress = manager.group_progress("grid")
    assert progress.total == 1 and progress.cancelled == 0 and progress.running + progress.queued == 1
