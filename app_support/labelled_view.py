"""The Rankings page's labelled ranking: on a file with gold answers, the page opens on the ranking
those labels give (:mod:`simplex_core.studies.labelled_ranking` chooses the method and computes it),
says how many labels it used and what they changed against the label-free ranking; a switch goes back
to the label-free one. This module only draws."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from .downloads import csv_button
from .safe_text import md

WITH_LABELS = "With the file's labels"
LABEL_FREE = "Label-free"


def labels_switch(n_labels: int) -> bool:
    """The switch between the labelled and the label-free ranking (labelled first): True = labelled."""
    choice = st.radio("Ranking shown", [WITH_LABELS, LABEL_FREE], horizontal=True, key="w_rank_labels",
                      help=f"The file marks {n_labels} answer{'s' if n_labels != 1 else ''} gold (a known true score). "
                           "With them, the ranking is prediction-powered: the label-free model predicts every answer's "
                           "true score and the labels correct its bias. Label-free ignores them.")
    if choice == LABEL_FREE:
        st.caption(f"Label-free: the file's {n_labels} gold label{'s' if n_labels != 1 else ''} are left out of every "
                   "ranking on this page; choose “With the file's labels” to use them.")
    return choice == WITH_LABELS


def _interval(lo: float, hi: float) -> str:
    if lo != lo or hi != hi:
        return "–"
    return f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}"


def labelled_section(labelled: Any, why: str | None, label_free: Any, table: Any, file_label: str,
                     waiting: str | None = None) -> None:
    """The labelled ranking in one line, the labels it used, and its moves against ``label_free``
    (a MethodResult) with their CSV. ``waiting``: why it is not there yet (the label-free fit runs);
    ``why``: why it cannot be made from these labels."""
    from simplex_core.studies.labelled_ranking import labelled_ranking_sentence, labels_used_sentence, rank_moves

    if waiting is not None:
        st.info(waiting, icon=":material/hourglass_top:")
        return
    if labelled is None:
        st.warning(f"No labelled ranking: {md(str(why))}", icon=":material/label_off:")
        return
    st.markdown("**Ranking with the file's labels** (prediction-powered; best first; rank and 95% rank interval): "
                + labelled_ranking_sentence(labelled, name=md))
    st.caption("Labels used: " + labels_used_sentence(labelled, table) + " The label-free model predicts every "
               "answer's true score; the labelled answers correct its bias, pooled over candidates (each candidate moves as "
               "far as its labels stand out from the others' noise and from the model's own doubt about it). This holds "
               "when each candidate's labelled answers are a random sample of its answers. The Bayesian views below "
               "(summary, leaderboard, pairwise) are the label-free fit's; the labels enter this ranking, row "
               "bayesian_ppi of the figure.")
    for note in labelled.notes:  # e.g. candidates whose labels are all alike
        st.caption(md(note))
    if label_free is None:
        return
    moves = rank_moves(label_free, labelled)
    shown = pd.DataFrame({
        "candidate": moves["candidate"],
        "what the labels changed": moves["move"],
        "label-free rank": [_interval(a, a) + f" (95%: {_interval(lo, hi)})" for a, lo, hi in
                            zip(moves["label_free_rank"], moves["label_free_lo"], moves["label_free_hi"])],
        "rank with labels": [_interval(a, a) + f" (95%: {_interval(lo, hi)})" for a, lo, hi in
                             zip(moves["labelled_rank"], moves["labelled_lo"], moves["labelled_hi"])],
    })
    moved = int((moves["moved_up"] != 0).sum())
    with st.expander(f"What the labels changed: {moved} of {len(moves)} candidates moved", expanded=moved > 0):
        st.dataframe(shown, hide_index=True, width="stretch")
        csv_button(moves, f"{file_label}-labelled-vs-label-free", label="Comparison CSV", key="dl-labelled-moves")
