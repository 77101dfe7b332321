"""The fit manager on a real small Dask LocalCluster: progress, the store, cancel, failures, a killed
worker, sessions that leave, and a real small fit.

Most tests use a stand-in fit (``fake_fit`` below, imported by the workers by name) so they take
seconds; one runs a real small model fit and compares it with a direct fit of the same seed. The
book's rules (priorities, supersede, bounds) are tested without processes in test_job_book.py.
"""

from __future__ import annotations

import os
import pickle
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simplex_core.inference.fit_identity import fit_key
from simplex_core.jobs import BACKGROUND, INTERACTIVE, FitManager

# -- stand-ins (module level: the workers import them by name) ----------------------------------


@dataclass(frozen=True)
class FakeSettings:
    """Just enough of FitSettings for the manager: a key, a likelihood, the fields fake_fit reads."""

    omega: float = 0.0
    beta_max: float = 5.0
    steps: int = 20
    step_seconds: float = 0.02
    fail: bool = False
    die: bool = False
    likelihood: str = "per-judge"

    def key(self) -> str:
        return f"o{self.omega:g}-b{self.beta_max:g}-s{self.steps}-t{self.step_seconds:g}-f{int(self.fail)}-d{int(self.die)}"


def FakeCounts(N: np.ndarray, included: np.ndarray):  # noqa: N802 — reads like the class it was
    """Real Counts of a hand-made tensor (the fit key reads names and the scale)."""
    from simplex_core.data.views import Counts
    from simplex_core.data.scale import Scale

    J, K, M = N.shape
    return Counts(N=N, included=included, judges=tuple(f"j{j}" for j in range(J)),
                  candidates=tuple(f"c{k}" for k in range(K)),
                  scale=Scale(tuple(float(m) for m in range(M)), tuple(str(m) for m in range(M))))


def fake_fit(counts: Any, settings: FakeSettings, progress_callback=None) -> dict:
    """Sleeps ``steps`` times, reporting progress the project's way; records the worker's pid."""
    if settings.fail:
        raise ValueError("this setting cannot be fitted (on purpose)")
    if settings.die:
        os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's OOM killer would
    for i in range(settings.steps):
        time.sleep(settings.step_seconds)
        if progress_callback is not None:
            progress_callback(f"sampling: {i + 1} of {settings.steps} draws", (i + 1) / settings.steps)
    return {"omega": settings.omega, "beta_max": settings.beta_max, "total": int(counts.N.sum()), "pid": os.getpid(),
            "nice": os.nice(0)}


@dataclass(frozen=True)
class PickleStore:
    """A picklable on-disk store for the stand-in results (one file per fit key)."""

    directory: str

    def _path(self, counts: Any, settings: Any) -> Path:
        return Path(self.directory) / f"{fit_key(counts, settings)}.pkl"

    def contains(self, counts: Any, settings: Any) -> bool:
        return self._path(counts, settings).exists()

    def load(self, counts: Any, settings: Any) -> Any:
        p = self._path(counts, settings)
        return pickle.loads(p.read_bytes()) if p.exists() else None

    def save(self, counts: Any, settings: Any, result: Any) -> None:
        p = self._path(counts, settings)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(result))
        tmp.replace(p)


FAKE = "tests.test_fit_jobs:fake_fit"


def _counts():
    return FakeCounts(N=np.arange(12).reshape(2, 2, 3), included=np.ones((2, 2), dtype=bool))


def wait_until(predicate, timeout: float = 60.0, step: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


@pytest.fixture(scope="module")
def client():
    """One small local cluster (2 single-threaded worker processes) for the module."""
    from simplex_core.inference.distributed import start_client

    client, cluster = start_client(None, 2, config={"distributed.scheduler.allowed-failures": 0})
    yield client
    client.close()
    cluster.close()


@pytest.fixture
def manager(tmp_path, client):
    m = FitManager(PickleStore(str(tmp_path / "store")), fit_function=FAKE, client=client)
    yield m
    m.shutdown()


# -- the manager with the stand-in fit ----------------------------------------------------------

def test_a_fit_runs_on_a_worker_reports_progress_and_is_stored(manager):
    settings = FakeSettings(steps=15, step_seconds=0.05)
    status = manager.submit(_counts(), settings, label="fake")
    assert status.state in ("queued", "running")
    seen: list[tuple[int, int]] = []

    def done() -> bool:
        s = manager.status(status.job_id)
        if s.draws_total:
            seen.append((s.draws_done, s.draws_total))
        return s.state == "done"

    assert wait_until(done, timeout=120), manager.status(status.job_id)
    final = manager.status(status.job_id)
    assert final.fraction == 1.0 and not final.from_cache
    assert seen and all(t == 15 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)  # progress never goes back
    result = manager.result(status.job_id, _counts(), settings)
    assert result["total"] == int(_counts().N.sum())
    assert result["pid"] != os.getpid()  # fitted in another process
    assert result["nice"] == 19  # ... at the lowest priority: it yields the CPU to the page server
    assert manager.tasks_started == 1


def test_a_fit_that_landed_is_shown_from_memory_while_its_entry_is_stored(manager, tmp_path, monkeypatch):
    """The page that asked for a fit gets it without reading it back from disk; an entry removed
    from the store since (cleared, evicted) is a miss, so that the fit runs again."""
    settings = FakeSettings(omega=3.0, steps=2, step_seconds=0.01)
    job = manager.submit(_counts(), settings)
    assert wait_until(lambda: manager.status(job.job_id).state == "done", timeout=120)
    reads = []
    monkeypatch.setattr(PickleStore, "load", lambda self, *a: reads.append(a))
    assert manager.lookup(_counts(), settings)["omega"] == 3.0 and not reads
    manager.store._path(_counts(), settings).unlink()
    assert manager.lookup(_counts(), settings) is None and len(reads) == 1


def test_the_landing_listener_hears_each_ended_fit_once_with_its_final_state(tmp_path, client):
    """What the app uses to tell a waiting page at once: one call per fit a worker ended (done or
    failed), with that final status; a listener that raises does not stop the manager."""
    heard = []

    def listener(status):
        heard.append((status.job_id, status.state, status.message))
        raise RuntimeError("a broken listener")

    m = FitManager(PickleStore(str(tmp_path / "store")), fit_function=FAKE, client=client, on_landed=listener)
    try:
        good = m.submit(_counts(), FakeSettings(omega=6.0, steps=3, step_seconds=0.01))
        bad = m.submit(_counts(), FakeSettings(omega=7.0, fail=True))
        assert wait_until(lambda: len(heard) == 2, timeout=120), heard
        assert sorted(heard) == sorted([(good.job_id, "done", None),
                                        (bad.job_id, "failed", "The fit could not start: this setting cannot be fitted (on purpose)")])
        stored = m.submit(_counts(), FakeSettings(omega=6.0, steps=3, step_seconds=0.01))  # from the store: no worker
        after = m.submit(_counts(), FakeSettings(omega=8.0, steps=2, step_seconds=0.01))
        assert stored.from_cache and wait_until(lambda: len(heard) == 3, timeout=120)
        assert heard[2][:2] == (after.job_id, "done")  # the manager went on after the listener raised
        time.sleep(0.3)
        assert len(heard) == 3
    finally:
        m.shutdown()


def test_a_stored_fit_comes_back_without_a_task(tmp_path, client):
    store = PickleStore(str(tmp_path / "store"))
    settings = FakeSettings(omega=2.0)
    store.save(_counts(), settings, {"omega": 2.0, "cached": True})
    m = FitManager(store, fit_function=FAKE, client=client)
    try:
        status = m.submit(_counts(), settings)
        assert status.state == "done" and status.from_cache
        assert m.result(status.job_id, _counts(), settings) == {"omega": 2.0, "cached": True}
        time.sleep(0.3)
        assert m.tasks_started == 0
    finally:
        m.shutdown()


def test_two_workers_fit_at_once_and_interactive_requests_go_first(manager):
    blockers = [manager.submit(_counts(), FakeSettings(omega=float(o), steps=30, step_seconds=0.05), priority=BACKGROUND)
                for o in (10, 11)]
    assert wait_until(lambda: all(manager.status(b.job_id).state == "running" for b in blockers), timeout=60)
    backgrounds = [manager.submit(_counts(), FakeSettings(omega=float(o), steps=2, step_seconds=0.01), priority=BACKGROUND,
                                  group="grid") for o in (1, 2, 4)]
    urgent = manager.submit(_counts(), FakeSettings(omega=8.0, steps=2, step_seconds=0.01), priority=INTERACTIVE)
    assert manager.status(urgent.job_id).queue_position == 1  # next when a worker is free
    ids = [j.job_id for j in backgrounds] + [urgent.job_id]
    assert wait_until(lambda: all(manager.status(i).state == "done" for i in ids), timeout=120)
    started = {i: manager.status(i).started_at for i in ids}
    assert started[urgent.job_id] <= min(started[j.job_id] for j in backgrounds)
    progress = manager.group_progress("grid")
    assert (progress.total, progress.done, progress.queued, progress.running) == (3, 3, 0, 0)


def test_a_visitors_fit_does_not_wait_for_the_background_fits_that_hold_every_worker(manager):
    grid = [manager.submit(_counts(), FakeSettings(omega=float(o), steps=200, step_seconds=0.05), priority=BACKGROUND)
            for o in (20, 21)]
    assert wait_until(lambda: all(manager.status(j.job_id).draws_done > 0 for j in grid), timeout=60)
    urgent = manager.submit(_counts(), FakeSettings(omega=22.0, steps=2, step_seconds=0.01), priority=INTERACTIVE)
    assert wait_until(lambda: manager.status(urgent.job_id).state == "done", timeout=120)
    assert sum(manager.status(j.job_id).preemptions for j in grid) == 1  # one was sent back to the queue
    assert wait_until(lambda: all(manager.status(j.job_id).state == "done" for j in grid), timeout=120)
    assert manager.status(urgent.job_id).finished_at < min(manager.status(j.job_id).finished_at for j in grid)
    for job, omega in zip(grid, (20.0, 21.0)):  # the preempted one ran again, whole, and was stored
        assert manager.lookup(_counts(), FakeSettings(omega=omega, steps=200, step_seconds=0.05))["omega"] == omega


def test_cancel_stops_a_running_fit_and_frees_its_worker(manager):
    long = manager.submit(_counts(), FakeSettings(steps=10_000, step_seconds=0.05))
    assert wait_until(lambda: manager.status(long.job_id).draws_done > 0, timeout=120)
    assert manager.cancel(long.job_id)
    status = manager.status(long.job_id)
    assert status.state == "cancelled" and "Cancelled" in status.message
    assert wait_until(lambda: not manager._draining and not manager._futures, timeout=30)  # the worker let go
    after = manager.submit(_counts(), FakeSettings(omega=1.0, steps=3, step_seconds=0.01))
    assert wait_until(lambda: manager.status(after.job_id).state == "done", timeout=120)
    assert manager.status(long.job_id).state == "cancelled"  # a late event cannot revive it


def test_a_fit_waiting_for_its_workers_warm_up_can_be_cancelled_without_restarting_the_worker(tmp_path, client):
    # the warm-up (numba compiling the sampler, on a new machine) cannot be interrupted; a fit that
    # waits for it can, so a preempted or cancelled fit gives its worker back at once
    from simplex_core.jobs.worker import WARMING_UP

    m = FitManager(PickleStore(str(tmp_path / "s")), fit_function="tests.slow_warm_up_fit:fit", client=client)
    try:
        pids = client.run(os.getpid)
        job = m.submit(_counts(), FakeSettings())
        assert wait_until(lambda: m.status(job.job_id).stage == WARMING_UP, timeout=60)
        assert m.cancel(job.job_id)
        assert wait_until(lambda: not m._draining and not m._futures, timeout=10)  # restarts come after 20 s
        assert m.status(job.job_id).state == "cancelled"
        assert client.run(os.getpid) == pids  # no worker was restarted
    finally:
        m.shutdown()


def test_a_failing_fit_reports_a_plain_message_and_the_next_one_runs(manager):
    bad = manager.submit(_counts(), FakeSettings(fail=True))
    assert wait_until(lambda: manager.status(bad.job_id).is_final, timeout=120)
    status = manager.status(bad.job_id)
    assert status.state == "failed"
    assert status.message == "The fit could not start: this setting cannot be fitted (on purpose)"
    good = manager.submit(_counts(), FakeSettings(omega=4.0, steps=2, step_seconds=0.01))
    assert wait_until(lambda: manager.status(good.job_id).state == "done", timeout=120)


def test_a_killed_worker_fails_its_fit_in_words_and_the_next_fit_runs(manager):
    doomed = manager.submit(_counts(), FakeSettings(die=True))
    assert wait_until(lambda: manager.status(doomed.job_id).is_final, timeout=120)
    status = manager.status(doomed.job_id)
    assert status.state == "failed" and "stopped unexpectedly" in status.message
    good = manager.submit(_counts(), FakeSettings(omega=5.0, steps=2, step_seconds=0.01))
    assert wait_until(lambda: manager.status(good.job_id).state == "done", timeout=120)


def test_the_fits_of_a_session_that_left_are_cancelled_the_others_kept(tmp_path, client):
    left: set[str] = set()
    m = FitManager(PickleStore(str(tmp_path / "s")), fit_function=FAKE, client=client,
                   owner_alive=lambda owner: owner not in left, departed_grace=0.3, reap_every=0.1)
    try:
        mine = [m.submit(_counts(), FakeSettings(omega=float(o), steps=2000, step_seconds=0.05),
                         priority=BACKGROUND, owner="visitor", group="g") for o in range(4)]
        theirs = m.submit(_counts(), FakeSettings(omega=99.0, steps=2000, step_seconds=0.05), owner="stays")
        time.sleep(1.0)
        assert all(not m.status(j.job_id).is_final for j in mine)  # alive: nothing cancelled
        left.add("visitor")
        assert wait_until(lambda: all(m.status(j.job_id).state == "cancelled" for j in mine), timeout=30)
        assert not m.status(theirs.job_id).is_final
    finally:
        m.shutdown()


def test_without_a_liveness_answer_the_heartbeat_decides(tmp_path, client):
    m = FitManager(PickleStore(str(tmp_path / "s")), fit_function=FAKE, client=client, idle_timeout=0.5,
                   departed_grace=0.0, reap_every=0.1)
    try:
        job = m.submit(_counts(), FakeSettings(steps=2000, step_seconds=0.05), owner="quiet", priority=BACKGROUND)
        for _ in range(8):  # a session whose pages keep polling stays
            time.sleep(0.2)
            m.touch("quiet")
        assert not m.status(job.job_id).is_final
        assert wait_until(lambda: m.status(job.job_id).state == "cancelled", timeout=10)  # silent: gone
    finally:
        m.shutdown()


def test_a_missing_fit_function_fails_in_words_on_an_own_local_cluster(tmp_path):
    m = FitManager(PickleStore(str(tmp_path / "s")), fit_function="tests.no_such_module:fit", n_workers=1)
    try:
        job = m.submit(_counts(), FakeSettings())
        assert wait_until(lambda: m.status(job.job_id).is_final, timeout=120)
        status = m.status(job.job_id)
        assert status.state == "failed" and "could not load the model code" in status.message
        assert "1 worker(s)" in m.describe()
    finally:
        m.shutdown()
    assert m._client is None


# -- a real small fit -----------------------------------------------------------------------------

def _small_real_counts():
    import pandas as pd

    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table

    rng = np.random.default_rng(3)
    rows = []
    truth_p = {"a": 0.8, "b": 0.5, "c": 0.2}
    accuracy = {"j1": 0.85, "j2": 0.75}
    for i in range(60):
        for cand, p in truth_p.items():
            t = int(rng.random() < p)
            for judge, acc in accuracy.items():
                rows.append({"item": f"q{i}", "candidate": cand, "judge": judge, "score": t if rng.random() < acc else 1 - t})
    return count_tensor(load_table(pd.DataFrame(rows)))


@pytest.mark.slow
def test_a_real_fit_on_a_worker_equals_a_direct_fit_with_the_same_seed(tmp_path, client):
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.definition import FitSettings

    counts = _small_real_counts()
    settings = FitSettings(chains=2, draws=150, tune=150, seed=11, extra_rounds=0)
    manager = FitManager(PickleStore(str(tmp_path / "store")), client=client)  # the default fit function
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
