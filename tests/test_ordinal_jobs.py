"""The ordinal model as a background job of the app's fit manager: a job kind beside the simplex fits
(its own function, store and key), progress reports, and a cancel that stops the sampler."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from simplex_core.jobs import FitManager, JobKind, ResultFileStore
from simplex_core.methods.ordinal import (OrdinalSettings, fit_ordinal, fit_ordinal_job, ordinal_data,
                                          ordinal_job_key)

# -- stand-ins (module level: the workers import them by name) ----------------------------------


def default_fit(counts: Any, settings: Any, progress_callback=None) -> dict:
    return {"model": "default", "settings": settings}


def other_fit(counts: Any, settings: Any, progress_callback=None) -> dict:
    for i in range(5):
        if progress_callback is not None:
            progress_callback(f"other model: {i + 1} of 5 steps", (i + 1) / 5)
        time.sleep(0.02)
    return {"model": "other", "settings": settings}


def other_key(counts: Any, settings: Any) -> str:
    return f"other-{settings}"


def default_key(counts: Any, settings: Any) -> str:
    return f"default-{settings}"


def _wait(predicate, timeout: float = 120.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _small_data():
    from simplex_core.data.datasets import load_dataset
    from simplex_core.data.views import item_view

    table = load_dataset("topical-chat", "coherence")  # 6 candidates, one judge, 60 items
    return ordinal_data(item_view(table), table.scale)


@pytest.fixture(scope="module")
def client():
    from simplex_core.inference.distributed import start_client

    client, cluster = start_client(None, 2, config={"distributed.scheduler.allowed-failures": 0})
    yield client
    client.close()
    cluster.close()


def test_a_job_of_another_kind_has_its_own_function_store_and_key(tmp_path, client):
    default_store = ResultFileStore("tests.test_ordinal_jobs:default_key", str(tmp_path / "default"))
    manager = FitManager(default_store, fit_function="tests.test_ordinal_jobs:default_fit", client=client)
    # the manager keys default fits by fit_key; a stand-in settings string is enough for the kind's key
    kind = JobKind("tests.test_ordinal_jobs:other_fit", "tests.test_ordinal_jobs:other_key",
                   ResultFileStore("tests.test_ordinal_jobs:other_key", str(tmp_path / "other")))
    try:
        job = manager.submit("data", "s1", label="other", kind=kind)
        assert job.key == "other-s1"
        assert manager.find("data", "s1", kind).job_id == job.job_id
        assert _wait(lambda: manager.status(job.job_id).state == "done")
        assert manager.lookup("data", "s1", kind) == {"model": "other", "settings": "s1"}
        assert (tmp_path / "other" / "other-s1.pkl").exists() and not (tmp_path / "default").exists()
        assert manager.landed_at("data", "s1", kind) is not None
        again = manager.submit("data", "s1", kind=kind)  # stored: answered from the store, no new run
        assert again.state == "done" and manager.tasks_started == 1
    finally:
        manager.shutdown()


def test_the_result_file_store_reads_back_what_it_wrote_and_drops_a_broken_file(tmp_path):
    store = ResultFileStore("tests.test_ordinal_jobs:other_key", str(tmp_path))
    assert not store.contains(None, "a") and store.load(None, "a") is None
    assert store.save(None, "a", {"x": np.arange(3)})
    assert store.contains(None, "a") and list(store.load(None, "a")["x"]) == [0, 1, 2]
    (tmp_path / "other-a.pkl").write_bytes(b"not a pickle")
    assert store.load(None, "a") is None and not store.contains(None, "a")


def test_a_cancel_from_the_progress_callback_stops_the_ordinal_sampler():
    data = _small_data()
    reports: list[str] = []

    def progress(message: str, fraction: float) -> None:
        reports.append(message)
        if "sampling:" in message and not message.endswith(" 0 of 2000000 iterations"):
            raise KeyboardInterrupt("cancelled")  # what a job's cancel raises, as any exception

    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        fit_ordinal(data, OrdinalSettings(chains=2, draws=500_000, tune=500_000, extra_rounds=0), progress)
    assert time.perf_counter() - t0 < 60  # the whole run would take many minutes
    assert reports[0] == "ordinal model: sampling: 0 of 2000000 iterations"
    assert any(m.startswith("ordinal model: sampling: ") and not m.endswith(" 0 of 2000000 iterations") for m in reports)


def test_the_ordinal_model_lands_through_the_fit_manager(tmp_path, client):
    data = _small_data()
    settings = OrdinalSettings(chains=2, draws=300, tune=300)
    key_function = "simplex_core.methods.ordinal:ordinal_job_key"
    kind = JobKind("simplex_core.methods.ordinal:fit_ordinal_job", key_function,
                   ResultFileStore(key_function, str(tmp_path)))
    manager = FitManager(ResultFileStore("tests.test_ordinal_jobs:default_key", str(tmp_path / "d")),
                         fit_function="tests.test_ordinal_jobs:default_fit", client=client)
    try:
        job = manager.submit(data, settings, label="ordinal", kind=kind)
        assert job.key == ordinal_job_key(data, settings) and job.key.startswith("ordinal-")
        assert _wait(lambda: manager.status(job.job_id).is_final, timeout=300)
        assert manager.status(job.job_id).state == "done", manager.status(job.job_id).message
        result = manager.lookup(data, settings, kind)
        direct = fit_ordinal_job(data, settings)  # the same seed: the same fit
        assert result.method == "ordinal" and not result.uses_labels
        assert list(result.ranks.index) == list(data.candidates)
        np.testing.assert_allclose(result.scores.to_numpy(), direct.scores.to_numpy())
    finally:
        manager.shutdown()
