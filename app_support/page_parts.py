"""Pieces several pages draw the same way: the data header, the fit header (status, progress,
diagnostics) and the "nothing to show yet" states."""

from __future__ import annotations

from typing import Any

import streamlit as st

from . import fits, results
from .safe_text import md
from .errors import show_error
from .sidebar import AnalysisContext, convergence_action, fit_slot


def numbers_as_text(values: Any, fmt: str, missing: str) -> list[str]:
    """Figures formatted for a table on the page, a missing one (NaN) as ``missing``: Streamlit shows
    NaN as "None" and ignores a Styler's ``na_rep``. Downloads keep the numbers."""
    return [format(v, fmt) if v == v else missing for v in values]


def require_table(ctx: AnalysisContext) -> bool:
    """Say why there is no table (plain words) and return False; True when there is one."""
    if ctx.licence_warning:
        st.warning(ctx.licence_warning, icon=":material/gavel:")
    if ctx.table_error is not None:
        show_error(ctx.table_error, "reading the data")
        st.page_link("pages/data_page.py", label="Go to the Data page", icon=":material/table:")
        return False
    if ctx.table is None:
        st.info("No data yet: upload a file on the Data page, or pick a built-in dataset in the sidebar.",
                icon=":material/upload_file:")
        st.page_link("pages/data_page.py", label="Go to the Data page", icon=":material/table:")
        return False
    return True


def require_settings(ctx: AnalysisContext) -> bool:
    if ctx.settings is None:
        st.error(f"The model settings are not valid: {md(ctx.settings_error)}", icon=":material/error:")
        return False
    return True


def data_caption(ctx: AnalysisContext) -> None:
    t = ctx.table
    def n(count: int, noun: str) -> str:
        return f"{count} {noun}{'s' if count != 1 else ''}"

    st.caption(f"{md(ctx.source_label)}: {n(len(t.candidates), 'candidate')} × {n(len(t.judges), 'judge')} × "
               f"{n(len(t.items), 'item')}; "
               f"{md(t.scale.describe())}" + (" (collapsed)" if ctx.collapsed else "")
               + ("" if ctx.self_exclusion or not t.self_family_pairs else "; self-family judgments included")
               + (f"; {t.n_gold} gold answer{'s' if t.n_gold != 1 else ''} (left out of the Bayesian fit, label-free on "
                  "every page; the Rankings page's ranking with labels uses them)" if t.n_gold else ""))


def fit_header(view: fits.FitView, *, stale_shown: bool = True, labels_left_out: int = 0) -> None:
    """Status of the fit on this page: progress/cancel while fitting, which fit is shown, the
    convergence verdict, the background grid's progress in the sidebar (the page starts the grid:
    :func:`app_support.fits.start_grid`).
    ``stale_shown=False``: the page shows something else than the previous fit while the fit runs
    (the Rankings page's reweighted answer), so the previous fit is not announced.
    ``labels_left_out``: the file's gold answers, which this label-free fit leaves out."""
    fits.fit_status_panel(view)
    if view.current or stale_shown:
        fits.result_notice(view)
    if view.current:
        fits.remember_shown(view)
    with fit_slot():
        from .approximate import prefetch_sources

        # the grid's fits in the cache, and those that land later, are read on a background thread: the
        # next slider move finds its reweighting sources in memory
        fits.grid_status_panel(view, on_landed=lambda: prefetch_sources(view))
    if view.result is not None and (view.current or stale_shown):
        diagnostics_banner(view.result)
    # what the data settle: said while the first fit runs too
    data_notes_banner(view.counts, view.requested, labels_left_out)


def diagnostics_banner(result: Any) -> None:
    d = results.diagnostics(result)
    if not d:
        return
    message = d.get("message") or ""
    if d.get("converged", True):
        if message:
            st.caption(f"Convergence: {message}")
    else:
        action = convergence_action(getattr(result, "settings", None), getattr(result, "timing", None))
        st.warning(f"{results.convergence_problem(result) or message} {action}",
                   icon=":material/warning:")


def data_notes_banner(counts: Any, settings: Any = None, labels_left_out: int = 0) -> None:
    """:func:`simplex_core.model.data_notes.data_notes` for these counts under the model ``settings`` asked for
    (what the data can and cannot settle), one box each; of a label-free fit of a file with
    ``labels_left_out`` gold answers, without proposing the labels it has
    (:func:`simplex_core.studies.labelled_ranking.label_free_notes`)."""
    from simplex_core.studies.labelled_ranking import label_free_notes

    for note in label_free_notes(counts, settings, labels_left_out):
        st.info(md(note), icon=":material/info:")


def waiting_for_first_fit(view: fits.FitView) -> None:
    if view.job is not None and view.job.state in ("failed", "cancelled"):
        return  # the status panel already says what happened
    st.info("The model is being fitted for these settings; the results appear here when it finishes. "
            "Other pages stay usable meanwhile.", icon=":material/hourglass_top:")
