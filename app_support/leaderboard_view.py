"""The Rankings page's leaderboard section: the tier table and its slide-ready figure (the table
comes from :mod:`simplex_core.summaries.leaderboard`; this module only draws it)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from simplex_core.summaries.leaderboard import CREDIBLE

from .downloads import csv_button, show_figure
from .page_parts import numbers_as_text

TIER_RULE = (f"**Tiers**: candidates whose order the data cannot settle at 95%. Reading down by posterior mean, a "
             f"candidate joins the tier above unless some member of that tier is credibly ahead of it "
             f"(P(E higher) ≥ {CREDIBLE}); so no member of a tier is credibly ahead of another, and each tier starts "
             "where the one above is credibly ahead.")


def leaderboard_section(board: pd.DataFrame, file_label: str, title: str, *, note: str | None = None,
                        key: str = "leaderboard", memo: Any = None) -> None:
    """Draw the leaderboard table, its CSV and the figure (PNG/SVG for slides). ``note`` (e.g. the
    reweighting's "approximate: k̂ = 0.3, ESS 800") is shown above the table and in the figure.
    ``memo``: a key naming the board (the fit shown), so that the figure is built once
    (:func:`~app_support.downloads.show_figure`)."""
    from simplex_core.figures import leaderboard_figure

    st.subheader("Leaderboard")
    st.caption(TIER_RULE)
    if note:
        st.caption(note)
    shown = board.assign(p_ahead_of_next=numbers_as_text(board["p_ahead_of_next"], ".3f", "–"))  # the last row has no next
    st.dataframe(shown, hide_index=True, width="stretch", column_config=_columns())
    csv_button(board, f"{file_label}-leaderboard", label="Leaderboard CSV", key=f"dl-{key}")
    show_figure(lambda: leaderboard_figure(board, title=title, note=note), f"{file_label}-leaderboard", key=f"fig-{key}",
                memo=None if memo is None else ("leaderboard", memo, title, note))


def summary_columns() -> dict[str, Any]:
    """Column headings of a candidate summary (expected score, rank interval, P(best)), shared by
    the leaderboard and the Rankings page's posterior summary. Narrow numeric columns, so that the
    leaderboard's eleven fit the page's width without a scroll bar."""
    return {
        "expected_score_mean": st.column_config.NumberColumn("E (mean)", format="%.3f", width="small"),
        "expected_score_lo": st.column_config.NumberColumn("E 2.5%", format="%.3f", width="small"),
        "expected_score_hi": st.column_config.NumberColumn("E 97.5%", format="%.3f", width="small"),
        "rank_median": st.column_config.NumberColumn("rank", format="%.1f", width="small", help="median rank"),
        "rank_lo": st.column_config.NumberColumn("rank 2.5%", width="small"),
        "rank_hi": st.column_config.NumberColumn("rank 97.5%", width="small"),
        "p_best": st.column_config.ProgressColumn("P(best)", min_value=0.0, max_value=1.0, format="%.2f",
                                                  width="small"),
    }


def _columns() -> dict[str, Any]:
    return {
        "tier": st.column_config.NumberColumn("tier", help="1 = top tier; order within a tier is not settled at 95%",
                                       width="small"),
        **summary_columns(),
        "p_top3": st.column_config.ProgressColumn("P(top 3)", min_value=0.0, max_value=1.0, format="%.2f",
                                               width="small"),
        "p_ahead_of_next": st.column_config.Column("P(> next)", help="P(ahead of next): P(E above the next row's E)",
                                                  width="small"),
    }
