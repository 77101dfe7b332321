"""The job book without processes: dedupe, priorities, queue positions, supersede, owners, bounds, ETA."""

from __future__ import annotations

import dataclasses

import pytest

from simplex_core.jobs import BACKGROUND, INTERACTIVE, JobBook, JobStatus, format_duration, progress_numbers
from simplex_core.jobs.book import OWNER_LEFT, SUPERSEDED, TOO_MANY


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def book(clock):
    return JobBook(clock=clock)


def test_format_duration_words():
    assert format_duration(0.2) == "1 s"
    assert format_duration(45) == "45 s"
    assert format_duration(600) == "10 min"
    assert format_duration(3 * 3600 + 5 * 60) == "3 h 5 min"


def test_progress_numbers_read_the_one_callback_shape():
    assert progress_numbers("sampling: 800 of 1600 iterations", 0.4) == (800, 1600, 0.4, "sampling: 800 of 1600 iterations")
    assert progress_numbers("sampling: 3 of 4", None) == (3, 4, 0.75, "sampling: 3 of 4")
    assert progress_numbers("compiling", 0.1) == (0, 0, 0.1, "compiling")
    assert progress_numbers("compiling", 7.0)[2] == 1.0  # clipped
    assert progress_numbers("compiling", None) is None


def test_job_status_describes_itself_in_words():
    s = JobStatus(job_id="x", key="k", state="running", priority=0, phase="sampling", draws_done=400, draws_total=1600)
    assert s.describe() == "sampling: 400 of 1600 draws (25%)"
    assert s.fraction == pytest.approx(0.25)
    # a later run of the fit (an extra round, tempering) counts its own draws: they are not the fit's share
    later = dataclasses.replace(s, draws_done=7789, draws_total=8000, reported_fraction=0.3)
    assert later.describe() == "sampling: 7789 of 8000 draws of this run; 30% of the fit"
    q = JobStatus(job_id="y", key="k", state="queued", priority=0, queue_position=2)
    assert "position 2" in q.describe()


def test_the_same_fit_asked_twice_is_one_job_raised_to_the_more_urgent_priority(book):
    a = book.request("k1", "payload", priority=BACKGROUND, owner="alice", group="grid")
    b = book.request("k1", "payload", priority=INTERACTIVE, owner="bob")
    assert a is b and a.priority == INTERACTIVE and a.owners == {"alice", "bob"} and a.group == "grid"
    assert [j.key for j in book.start_next(5)] == ["k1"]


def test_interactive_before_sweep_before_background_first_come_first_served_within(book):
    for key, p in [("b1", BACKGROUND), ("s1", 5), ("i1", INTERACTIVE), ("b2", BACKGROUND), ("i2", INTERACTIVE)]:
        book.request(key, None, priority=p)
    positions = {j.key: book.status(j).queue_position for j in book.jobs()}
    assert positions == {"i1": 1, "i2": 2, "s1": 3, "b1": 4, "b2": 5}
    assert [j.key for j in book.start_next(2)] == ["i1", "i2"]
    assert [j.key for j in book.start_next(10)] == ["s1", "b1", "b2"]
    assert book.start_next(3) == []


def test_a_stored_fit_is_done_at_once_and_never_started(book):
    job = book.request("k", ("c", "s"), stored=True)
    assert job.state == "done" and job.from_cache and job.payload is None
    assert book.start_next(1) == [] and book.live("k") is None


def test_a_fit_landed_when_its_worker_finished_it_not_when_it_was_later_found_stored(book, clock):
    assert book.landed_at("k") is None
    job = book.request("k", ("c", "s"))
    book.start_next(1)
    clock.t += 7
    book.on_done(job.job_id)
    clock.t += 30
    again = book.request("k", ("c", "s"), stored=True)  # e.g. another session's grid, once it is stored
    assert again.from_cache and again.finished_at == 1037.0
    assert book.landed_at("k") == 1007.0
    failed = book.request("f", None)
    book.start_next(1)
    book.on_failed(failed.job_id, "no")
    assert book.landed_at("f") is None


def test_a_newer_request_of_one_owner_replaces_its_queued_one_but_not_anothers(book):
    first = book.request("k1", None, owner="me", supersede=True)
    shared = book.request("k2", None, owner="me", supersede=True)
    book.request("k2", None, owner="other")
    book.request("k3", None, owner="me", supersede=True)
    assert first.state == "cancelled" and first.message == SUPERSEDED
    assert shared.state == "queued" and shared.owners == {"other"}  # someone else still waits for it


def test_cancel_by_one_owner_keeps_a_job_another_waits_for_and_hands_running_ones_to_stop(book):
    job = book.request("k", None, owner="alice")
    book.request("k", None, owner="bob")
    (started,) = book.start_next(1)
    assert not book.cancel(job.job_id, owner="alice") and job.state == "running"
    assert book.take_stops() == []
    assert book.cancel(job.job_id, owner="bob") and job.state == "cancelled"
    assert book.take_stops() == [job] and book.take_stops() == []
    book.on_progress(job.job_id, 5, 10, 0.5, "late")  # a late report cannot revive it
    assert book.on_done(job.job_id) is None and job.state == "cancelled" and job.draws_done == 0


def test_an_urgent_fit_sends_the_least_urgent_least_advanced_running_fit_back_to_its_place(book):
    sweep = book.request("sweep", None, priority=5)
    far, near = (book.request(k, None, priority=BACKGROUND) for k in ("far", "near"))
    later = book.request("later", None, priority=BACKGROUND)
    assert book.start_next(3) == [sweep, far, near]
    book.on_progress(far.job_id, 10, 100, 0.1, "sampling")
    book.on_progress(near.job_id, 50, 100, 0.5, "sampling")
    assert book.preempt_for_urgent() is None  # nothing queued is more urgent than what runs
    urgent = book.request("urgent", None, priority=INTERACTIVE)
    assert book.preempt_for_urgent() is far  # background before sweep; the least work lost
    assert far.state == "queued" and far.draws_done == 0 and far.started_at is None and far.preemptions == 1
    assert book.take_stops() == [far]
    assert book.start_next(2) == [urgent, far]  # back in its old place, before a later request
    assert later.state == "queued"


def test_a_fit_nearly_done_or_saving_is_left_to_finish(book):
    nearly, saving = (book.request(k, None, priority=BACKGROUND) for k in ("nearly", "saving"))
    book.start_next(2)
    book.on_progress(nearly.job_id, 95, 100, 0.95, "sampling")
    book.on_saving(saving.job_id)
    book.request("urgent", None, priority=INTERACTIVE)
    assert book.preempt_for_urgent() is None and book.take_stops() == []
    assert nearly.state == saving.state == "running"


def test_one_owner_cannot_queue_without_bound_the_least_urgent_oldest_make_room(clock):
    book = JobBook(max_pending_per_owner=3, clock=clock)
    grid = [book.request(f"g{i}", None, priority=BACKGROUND, owner="me") for i in range(3)]
    urgent = book.request("now", None, priority=INTERACTIVE, owner="me")
    assert grid[0].state == "cancelled" and grid[0].message == TOO_MANY
    assert [j.state for j in grid[1:]] == ["queued", "queued"] and urgent.state == "queued"
    theirs = book.request("x", None, priority=BACKGROUND, owner="you")
    assert theirs.state == "queued"  # another owner's allowance is their own
    assert len([j for j in book.jobs() if j.state == "queued" and "me" in j.owners]) == 3


def test_an_owner_who_left_is_withdrawn_everywhere_shared_jobs_survive(book):
    mine = [book.request(f"g{i}", None, priority=BACKGROUND, owner="gone", group="grid") for i in range(3)]
    book.request("g0", None, priority=BACKGROUND, owner="still-here")
    book.start_next(1)  # g0 runs
    assert book.withdraw_owner("gone") == 2
    assert mine[0].state == "running" and mine[0].owners == {"still-here"}
    assert [j.state for j in mine[1:]] == ["cancelled", "cancelled"] and mine[1].message == OWNER_LEFT
    assert book.owners() == {"still-here"}


def test_group_progress_counts_each_fit_once_and_estimates_the_time_left(book, clock):
    first = book.request("g0", None, group="g")
    assert book.group_progress("g").eta_seconds is None
    book.start_next(1)
    clock.t += 10
    book.on_done(first.job_id)
    for k in ("g1", "g2", "g3"):
        book.request(k, None, group="g", priority=BACKGROUND)
    (running,) = book.start_next(1)
    clock.t += 5
    book.on_progress(running.job_id, 50, 100, 0.5, "sampling: 50 of 100")
    progress = book.group_progress("g", slots=1)
    assert (progress.total, progress.done, progress.running, progress.queued) == (4, 1, 1, 2)
    assert progress.eta_seconds == pytest.approx(5 + 2 * 10)  # the running one halfway, two more at 10 s
    assert book.group_progress("g", slots=2).eta_seconds == pytest.approx(25 / 2)
    assert "left" in progress.describe()
    book.cancel_group("g")
    again = book.request("g2", None, group="g")
    progress = book.group_progress("g")
    assert progress.total == 4 and progress.cancelled == 2 and progress.queued == 1 and again.state == "queued"


def test_old_finished_jobs_are_forgotten_but_live_ones_kept(book):
    done = [book.request(f"k{i}", None, stored=True) for i in range(3)]
    live = book.request("live", None)
    book.prune(keep=1)
    assert {j.job_id for j in book.jobs()} == {done[-1].job_id, live.job_id}
    with pytest.raises(KeyError):
        book.get(done[0].job_id)


def test_a_fit_worker_lowers_every_thread_of_its_process_and_those_made_later():
    # Linux keeps a niceness per thread: os.nice alone would leave the worker's other threads (and the
    # sampler threads they start) at the priority of the pages' server
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import os, threading
        from simplex_core.jobs import worker
        base = os.getpriority(os.PRIO_PROCESS, 0)
        seen, go = {}, threading.Event()
        def waiting():
            go.wait(); seen["existing"] = os.getpriority(os.PRIO_PROCESS, 0) - base
        t = threading.Thread(target=waiting); t.start()
        worker.warm("simplex_core.inference.fitting:fit_model", 5)
        go.set(); t.join()
        def new(): seen["new"] = os.getpriority(os.PRIO_PROCESS, 0) - base
        t = threading.Thread(target=new); t.start(); t.join()
        seen["caller"] = os.getpriority(os.PRIO_PROCESS, 0) - base
        print(seen)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    start = int(subprocess.run(["nice"], capture_output=True, text=True).stdout.strip() or 0)
    want = min(19, start + 5) - start
    assert out.stdout.strip().splitlines()[-1] == str({"existing": want, "new": want, "caller": want})
