"""Links from every page to the Guide (one place, so the wording and target stay consistent)."""

from __future__ import annotations

import streamlit as st

GUIDE_PAGE = "pages/guide_page.py"

_TOPICS = {
    "data": "How to read the Data page",
    "simplex": "How to read the simplex",
    "rankings": "What a rank interval means",
    "sensitivity": "What ω and β_max mean, and when to distrust a fit",
    "geometry": "The geometry behind the model",
    "export": "What each download holds",
}


def guide_link(topic: str) -> None:
    """A link to the Guide, worded for the page it sits on."""
    st.page_link(GUIDE_PAGE, label=f"Guide: {_TOPICS.get(topic, 'how to read this page')}", icon=":material/menu_book:")
