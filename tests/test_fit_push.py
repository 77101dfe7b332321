"""app_support.fit_push: which waiting fragments the server reruns when a fit ends, and when.

The runtime is a stand-in (sessions with a real asyncio loop on a thread), so the test sees exactly
the reruns the module asks of Streamlit: a fit's own waiter at once, a group's waiter once per
``min_interval`` however many of its fits end, nobody for a fit of another group."""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

import pytest

from app_support import fit_push


class _Session:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._event_loop = loop
        self.page_script_hash = "page"  # the page of the session's latest run (AppSession's property)
        self._scriptrunner = None  # between runs
        self.reruns: list[tuple[float, str, str]] = []

    def request_rerun(self, state) -> None:  # what AppSession receives from a browser's timer
        self.reruns.append((time.monotonic(), state.fragment_id, state.query_string))


@pytest.fixture()
def sessions(monkeypatch):
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    by_id = {name: _Session(loop) for name in ("waits-for-its-fit", "shows-the-grid", "other-data")}
    runtime = SimpleNamespace(get_app_session=by_id.get)
    import streamlit.runtime as st_runtime

    monkeypatch.setattr(st_runtime, "exists", lambda: True)
    monkeypatch.setattr(st_runtime, "get_instance", lambda: runtime)
    monkeypatch.setattr(fit_push, "_WAITERS", {})
    monkeypatch.setattr(fit_push, "_LATEST", {})
    yield by_id
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_a_fit_wakes_its_own_waiter_at_once_and_its_groups_waiter_not_before_its_interval(sessions):
    started = time.monotonic()
    fit_push._register("fit-a", "waits-for-its-fit", "status-frag", "page", "omega=1", 0.0)
    fit_push._register(fit_push.group_key("grid:data1"), "shows-the-grid", "grid-frag", "page", "", 0.6)
    fit_push._register(fit_push.group_key("grid:data2"), "other-data", "grid-frag-2", "page", "", 0.0)

    fit_push.fit_ended(SimpleNamespace(key="fit-a", group="grid:data1"))
    time.sleep(0.2)
    own = sessions["waits-for-its-fit"].reruns
    assert [(f, q) for _, f, q in own] == [("status-frag", "omega=1")]
    assert sessions["shows-the-grid"].reruns == []  # its interval has not passed yet
    time.sleep(0.7)
    grid = sessions["shows-the-grid"].reruns
    assert [f for _, f, _ in grid] == ["grid-frag"]
    assert grid[0][0] - started >= 0.6
    assert sessions["other-data"].reruns == []  # a fit of another group wakes nobody there


def test_fits_of_a_group_that_end_together_make_one_rerun_until_the_fragment_waits_again(sessions):
    key = fit_push.group_key("grid:data1")
    fit_push._register(key, "shows-the-grid", "grid-frag", "page", "", 0.3)
    for k in ("fit-b", "fit-c", "fit-d"):
        fit_push.fit_ended(SimpleNamespace(key=k, group="grid:data1"))
    time.sleep(0.6)
    assert len(sessions["shows-the-grid"].reruns) == 1
    # the rerun fragment waits again (what grid_status_panel does first): the next fit wakes it again
    fit_push._register(key, "shows-the-grid", "grid-frag", "page", "", 0.0)
    fit_push.fit_ended(SimpleNamespace(key="fit-e", group="grid:data1"))
    time.sleep(0.2)
    assert len(sessions["shows-the-grid"].reruns) == 2
    # a fit without a group, or a session that has gone, is nothing to rerun
    fit_push._register(key, "gone", "grid-frag", "page", "", 0.0)
    fit_push.fit_ended(SimpleNamespace(key="fit-f", group=None))
    fit_push.fit_ended(SimpleNamespace(key="fit-g", group="grid:data1"))
    time.sleep(0.2)
    assert len(sessions["shows-the-grid"].reruns) == 2
    assert fit_push._WAITERS == {}


def test_a_session_that_left_the_page_is_not_rerun_and_a_later_address_wins(sessions):
    # the grid panel's fragment has one id on every page: rerunning it with the page the visitor left
    # blanked the page they were on (seen in Chromium), so a waiter of another page is dropped
    key = fit_push.group_key("grid:data1")
    fit_push._register(key, "shows-the-grid", "grid-frag", "rankings", "omega=1", 0.0)
    sessions["shows-the-grid"].page_script_hash = "simplex"  # the visitor went to the Simplex page
    fit_push.fit_ended(SimpleNamespace(key="fit-h", group="grid:data1"))
    time.sleep(0.2)
    assert sessions["shows-the-grid"].reruns == []
    # on its page still, but the address moved since the fit was asked for (a slider): the rerun
    # carries the latest address, not the one of the older registration
    session = sessions["waits-for-its-fit"]
    session.page_script_hash = "rankings"
    fit_push._register("fit-old", "waits-for-its-fit", "status-frag", "rankings", "omega=1", 0.0)
    fit_push._register("fit-new", "waits-for-its-fit", "status-frag", "rankings", "omega=2", 0.0)
    fit_push.fit_ended(SimpleNamespace(key="fit-old", group=None))
    time.sleep(0.2)
    assert [(f, q) for _, f, q in session.reruns] == [("status-frag", "omega=2")]


def test_a_push_waits_while_the_session_runs_a_script(sessions):
    # during a run (a navigation just asked for, say) the session's page is not known for sure:
    # Streamlit would fold the push into the pending run with the push's page
    session = sessions["waits-for-its-fit"]
    session._scriptrunner = object()
    fit_push._register("fit-busy", "waits-for-its-fit", "status-frag", "page", "omega=1", 0.0)
    fit_push.fit_ended(SimpleNamespace(key="fit-busy", group=None))
    time.sleep(0.6)
    assert session.reruns == []
    session._scriptrunner = None  # the run ended on the same page: the push goes through
    time.sleep(0.6)
    assert [(f, q) for _, f, q in session.reruns] == [("status-frag", "omega=1")]
