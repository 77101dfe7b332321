"""Tell a waiting page at once that its fit has ended, instead of at its next poll.

A page waiting for a fit draws a status fragment that its browser reruns every few seconds
(:func:`app_support.fits.fit_status_panel`). A tab on a busy machine fires that timer late, and
every waiting tab costs the server a run per poll. So the fragment also registers here (the
session, the fragment, the page and its query), and when the fit manager reports the fit ended
(``FitManager(on_landed=...)``, on its own thread) the server reruns that fragment itself, exactly
as the browser's timer would: the fragment sees the job final and reruns the page with the result.
The timer stays as the fallback (a session that reconnected, a Streamlit that moved its internals).

Streamlit has no public call to rerun another session; this module is the one place that uses
what its runtime does for run-on-save (``AppSession.request_rerun`` with a ``ClientState``, on the
server's event loop), pinned with the Streamlit version in ``requirements.txt``.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import urlencode

from streamlit.logger import get_logger

_LOG = get_logger("simplex_judge.fit_push")
_LOCK = threading.Lock()
# fit key (or group key) -> session id -> (fragment id, page script hash, query string, earliest rerun
# time) of the fragment to rerun
_WAITERS: dict[str, dict[str, tuple[str, str, str, float]]] = {}
# session id -> (page script hash, query string) of its latest registration: a fragment rerun from an
# older one must not take the page back to the address it had then
_LATEST: dict[str, tuple[str, str]] = {}
#: Fits waited for at most (the oldest are forgotten: a fit cancelled never ends here; the poll remains)
_MAX_KEYS = 512
_warned: set[str] = set()


def _warn_once(what: str) -> None:
    if what not in _warned:
        _warned.add(what)
        _LOG.warning("waiting pages are told of landed fits by their poll only: %s", what)


def _current_fragment_id() -> str | None:
    """The id of the fragment running now (``None`` outside one, or when Streamlit cannot say)."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

        return getattr(ThreadState.get(), "fragment_id", None)
    except (ImportError, RuntimeError) as exc:
        _warn_once(f"the running fragment's id is unknown ({exc})")
        return None


def group_key(group: str) -> str:
    """The key a fragment waits on for "any fit of ``group`` ended" (:func:`wait_here`)."""
    return f"group:{group}"


def wait_here(key: str, min_interval: float = 0.0) -> None:
    """Called inside a status fragment: rerun this fragment when the fit ``key`` ends (or, for
    :func:`group_key`, any fit of that group), but not sooner than ``min_interval`` seconds after
    this run: fits of a group that end close together make one rerun. Call it before reading the
    status: a fit that ends after that is pushed, and the fragment waits again when it reruns."""
    import streamlit as st
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    fragment_id = _current_fragment_id()
    if ctx is None or not fragment_id:
        return
    query = urlencode(st.query_params.to_dict())  # the page's address now (the app may have rewritten it)
    _register(key, ctx.session_id, fragment_id, ctx.page_script_hash, query, min_interval)


def _register(key: str, session_id: str, fragment_id: str, page_hash: str, query: str, min_interval: float) -> None:
    with _LOCK:
        _WAITERS.setdefault(key, {})[session_id] = (fragment_id, page_hash, query,
                                                    time.monotonic() + max(0.0, float(min_interval)))
        _LATEST.pop(session_id, None)
        _LATEST[session_id] = (page_hash, query)
        while len(_WAITERS) > _MAX_KEYS:
            _WAITERS.pop(next(iter(_WAITERS)))
        while len(_LATEST) > 8 * _MAX_KEYS:
            _LATEST.pop(next(iter(_LATEST)))


def stop_waiting(key: str) -> None:
    """This session no longer waits for ``key`` (it has the fit, or moved on)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return
    with _LOCK:
        sessions = _WAITERS.get(key)
        if sessions is not None:
            sessions.pop(ctx.session_id, None)
            if not sessions:
                _WAITERS.pop(key, None)


def fit_ended(status: Any) -> None:
    """The fit manager's ``on_landed``: rerun the status fragment of every session waiting for the
    fit of ``status.key`` or for any fit of its group (``status.group``)."""
    group = getattr(status, "group", None)
    with _LOCK:
        waiting = list(_WAITERS.pop(status.key, {}).items())
        if group:
            waiting += list(_WAITERS.pop(group_key(group), {}).items())
    from streamlit import runtime

    if not waiting or not runtime.exists():
        return
    rt = runtime.get_instance()
    for session_id, (fragment_id, page_hash, query, not_before) in waiting:
        session = rt.get_app_session(session_id)  # thread-safe; None for a session that has gone
        if session is None:
            continue
        loop = getattr(session, "_event_loop", None)  # AppSession's methods run on the server's loop
        if loop is None:
            _warn_once("this Streamlit's AppSession has no _event_loop")
            return
        try:
            delay = not_before - time.monotonic()
            if delay > 0:  # call_later belongs to the loop's thread
                loop.call_soon_threadsafe(loop.call_later, delay, _rerun_fragment, session, session_id, fragment_id,
                                          page_hash, query)
            else:
                loop.call_soon_threadsafe(_rerun_fragment, session, session_id, fragment_id, page_hash, query)
        except RuntimeError:  # the loop is closed: the server is stopping
            return


#: How long a push waits for a session that is running a script (a navigation, a slider move): its
#: page is known for sure only between runs
_BUSY_RETRY_SECONDS, _BUSY_RETRIES = 0.25, 120


def _rerun_fragment(session: Any, session_id: str, fragment_id: str, page_hash: str, query: str,
                    attempt: int = 0) -> None:
    """On the server's event loop: what the browser sends when the fragment's timer fires, when the
    session is between runs and still on the fragment's page. Fragment ids do not name their page
    (the sidebar's grid panel has one id on every page), and Streamlit folds a rerun request into a
    pending one taking the newer request's page: a push asked with the page the visitor was leaving
    took the session back to it and blanked the page shown (seen in Chromium). Between runs (no
    script runner) the session's page is that of its last run, and a navigation that comes after
    this request simply replaces the fragment's run."""
    from streamlit.proto.ClientState_pb2 import ClientState

    if not hasattr(session, "_scriptrunner"):
        _warn_once("this Streamlit's AppSession has no _scriptrunner")
    elif session._scriptrunner is not None:  # a run is on or asked for: its page may be another
        if attempt < _BUSY_RETRIES:
            session._event_loop.call_later(_BUSY_RETRY_SECONDS, _rerun_fragment, session, session_id, fragment_id,
                                           page_hash, query, attempt + 1)
        return
    if getattr(session, "page_script_hash", page_hash) != page_hash:
        return  # the visitor left the page: its new page's fragments registered themselves if they wait
    with _LOCK:
        latest_page, latest_query = _LATEST.get(session_id, (page_hash, query))
    if latest_page == page_hash:
        query = latest_query  # a later run on this page may have moved the address (a slider)
    state = ClientState(query_string=query, page_script_hash=page_hash, fragment_id=fragment_id, is_auto_rerun=True)
    try:
        session.request_rerun(state)  # a fragment gone since (the page moved on) is dropped by Streamlit
    except Exception:  # noqa: BLE001 — the poll is still there; the log says why this did not work
        _LOG.warning("could not rerun a waiting page's status fragment", exc_info=True)
