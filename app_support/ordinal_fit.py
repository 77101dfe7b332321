"""The ordinal many-facet model in the app: a background fit on the app's fit workers, like the
simplex fits (:mod:`.fits`): the same fit manager and job book (one job per data and settings,
shared by every session), progress with Cancel, the page rerun when it lands; results kept on disk
(:class:`simplex_core.jobs.ResultFileStore`) so a finished fit is shown at once next time.

:func:`ordinal_fit` never blocks: it returns the result if there is one, else (with ``submit``)
queues the fit; :func:`ordinal_status_panel` draws its progress.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from simplex_core.jobs import INTERACTIVE, JobKind, JobStatus, ResultFileStore

from . import fit_push, fits, live_progress
from .safe_text import md
from .state import K

_KEY = "simplex_core.methods.ordinal:ordinal_job_key"
#: The ordinal model as a kind of job of the app's fit manager.
ORDINAL_JOB = JobKind(fit_function="simplex_core.methods.ordinal:fit_ordinal_job", key_function=_KEY,
                      store=ResultFileStore(_KEY))
LABEL = "the ordinal many-facet model"


@dataclass
class OrdinalView:
    """The ordinal fit a page asked for: ``result`` (a MethodResult) or the ``job`` fitting it, or
    ``why`` it cannot run on these data."""

    data: Any = None
    settings: Any = None
    result: Any = None
    job: JobStatus | None = None
    why: str | None = None


@st.cache_resource(show_spinner=False, max_entries=16)
def _data(_table: Any, table_key: str, self_exclusion: bool) -> tuple[Any, str | None]:
    from simplex_core.data.views import item_view
    from simplex_core.methods.ordinal import ordinal_data

    excluded = frozenset(_table.self_family_pairs) if self_exclusion else frozenset()
    try:
        return ordinal_data(item_view(_table), _table.scale, excluded), None
    except ValueError as exc:
        return None, str(exc)


def ordinal_fit(table: Any, self_exclusion: bool, *, submit: bool = True) -> OrdinalView:
    """The ordinal model of ``table`` at the default fit size (:class:`simplex_core.methods.ordinal.OrdinalSettings`):
    stored, else (``submit``) queued as an interactive fit of this session."""
    from simplex_core.methods.ordinal import OrdinalSettings

    from . import data_access as da

    data, why = _data(table, da.table_key(table), self_exclusion)
    if data is None:
        return OrdinalView(why=why)
    settings = OrdinalSettings()
    view = OrdinalView(data=data, settings=settings)
    manager = fits.fit_manager()
    view.result = manager.lookup(data, settings, ORDINAL_JOB)
    if view.result is not None:
        return view
    job = manager.find(data, settings, ORDINAL_JOB)
    cancelled = st.session_state.setdefault(K.CANCELLED, set())
    blocked = job is not None and job.is_final and (job.state == "failed" or job.key in cancelled)
    if submit and not blocked and (job is None or job.is_final):
        job = manager.submit(data, settings, priority=INTERACTIVE, label=LABEL, owner=fits.fit_owner(), kind=ORDINAL_JOB)
    if job is not None and job.state == "done":
        view.result = manager.lookup(data, settings, ORDINAL_JOB)
    view.job = job
    return view


def ordinal_status_panel(view: OrdinalView) -> None:
    """Progress of the ordinal fit with Cancel (rerun by the server when it lands, else polled); a
    failed or cancelled fit says so, with a button to fit it again."""
    if view.result is not None or view.job is None:
        return
    manager = fits.fit_manager()
    if view.job.is_final:
        verb = "was cancelled" if view.job.state == "cancelled" else "failed"
        st.warning(f"The fit of {LABEL} {verb}. {md(view.job.message or '')}", icon=":material/stop_circle:")
        if st.button("Fit the ordinal model again", key=f"retry-ordinal-{view.job.job_id}"):
            st.session_state.setdefault(K.CANCELLED, set()).discard(view.job.key)
            manager.submit(view.data, view.settings, priority=INTERACTIVE, label=LABEL, owner=fits.fit_owner(),
                           kind=ORDINAL_JOB)
            st.rerun()
        return
    job_id, owner = view.job.job_id, st.session_state.get(K.FIT_OWNER)

    @st.fragment(run_every=fits.status_poll_seconds())
    def _panel() -> None:
        if owner is not None:
            manager.touch(owner)
        fit_push.wait_here(view.job.key)  # before reading the status: a fit that ends after this is pushed
        try:
            status = manager.status(job_id)
        except KeyError:
            st.rerun()
            return
        if status.is_final:
            st.rerun()
        with st.container(border=True):
            st.markdown(f"**Fitting {LABEL}** (label-free; in the background, on the fit workers)")
            if live_progress.feed_served():
                live_progress.show_progress(status)
            else:
                st.caption(status.describe())
                st.progress(status.fraction if status.state == "running" else 0.0)
            if st.button("Cancel the ordinal fit", key=f"cancel-ordinal-{job_id}", icon=":material/stop_circle:"):
                st.session_state.setdefault(K.CANCELLED, set()).add(status.key)
                manager.cancel(job_id, owner=owner)
                st.rerun()

    _panel()
