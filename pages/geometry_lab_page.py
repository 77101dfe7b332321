"""Geometry lab: the paper's geometry, hands on, with no data needed.

Barycentric coordinates as area ratios; two levels (theorem 1, and a label-flipping judge); the
3-level non-identifiability flip (theorem 2's construction, appendix F); the augmented simplex.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from app_support.downloads import show_figure
from app_support.errors import guard
from app_support.frame import page_frame
from app_support.guide_links import guide_link
from app_support.state import K

page_frame()

st.title("Geometry lab")
st.caption("No data needed: move the sliders and watch how the judge's vertices decide the ranking.")
guide_link("geometry")

from simplex_core import figures
from simplex_core.model import geometry
from simplex_core.model import identifiability

LEVELS = ("1 (low)", "2 (mid)", "3 (high)")
ss = st.session_state


def flip_span(ex: identifiability.FlipExample) -> float:
    """The h slider's bound for the flip example, with h (shared by the flip and augmented-simplex tabs,
    whichever is opened first) set to half of it if unset or out of range."""
    h_lo, h_hi = identifiability.flip_h_range(ex.Theta, ex.gamma1, ex.gamma2)
    span = round(min(-float(max(h_lo, -1.0)), float(min(h_hi, 1.0))) * 0.98, 3)
    if not (-span <= ss.get(K.LAB_H, span / 2) <= span):
        ss[K.LAB_H] = round(span / 2, 3)
    ss.setdefault(K.LAB_H, round(span / 2, 3))
    return span


# -- barycentric coordinates as area ratios ------------------------------------------------------
def area_view() -> None:
    st.markdown(
        "A judge with three levels is a triangle: vertex θ(m) is the distribution of scores it gives when the true "
        "score is *m*. A candidate it scores with shares γ sits inside. Its true-score distribution π is γ's "
        "**barycentric coordinates**: π(m) = area of the sub-triangle *opposite* θ(m) ÷ area of the whole triangle "
        "(paper, eq. 1). Move the candidate and watch the three areas.")
    theta = np.asarray(identifiability.DEFAULT_FLIP_THETA)
    c1, c2 = st.columns(2)
    ss.setdefault(K.LAB_POINT_A, 0.41)
    ss.setdefault(K.LAB_POINT_B, 0.35)
    high = c1.slider("Candidate's share of level 3 (high)", 0.0, 1.0, step=0.01, key=K.LAB_POINT_A, persist_state="session")
    mid_max = round(1.0 - high, 2)
    if ss.get(K.LAB_POINT_B, 0.0) > mid_max:
        ss[K.LAB_POINT_B] = mid_max
    if mid_max > 0:
        mid = c2.slider("Candidate's share of level 2 (mid)", 0.0, mid_max, step=0.01, key=K.LAB_POINT_B, persist_state="session")
    else:  # a slider needs a range: keep it in place, greyed, rather than let it vanish
        mid = c2.slider("Candidate's share of level 2 (mid)", 0.0, 1.0, 0.0, step=0.01, disabled=True,
                        key=f"{K.LAB_POINT_B}-none", help="Level 3 has the whole share: lower it to give level 2 some.")
    gamma = np.array([max(0.0, 1.0 - high - mid), mid, high])
    fig = figures.barycentric_area_figure(theta, gamma, LEVELS)
    pi = geometry.areal_coordinates(gamma, theta)
    m = st.columns(4)
    for i, lab in enumerate(LEVELS):
        m[i].metric(f"π({lab})", f"{pi[i]:.3f}")
    outside = bool(np.any(pi < -1e-9))
    # outside the triangle π is no distribution: Σ m·π(m) can leave the 1–3 scale (0.326, 3.814), no score
    m[3].metric("Expected score", "—" if outside else f"{float(pi @ np.arange(1, 4)):.3f}",
                help="Σ m·π(m); none outside the triangle")  # short: cut at 1024 px
    if outside:
        st.warning("The candidate is outside the judge's triangle: a negative area share means this judge cannot "
                   "produce these scores for any true-score distribution.", icon=":material/warning:")
    show_figure(fig, "barycentric-areas", key="lab-area", height=560)


# -- two levels --------------------------------------------------------------------------------
def segment_view() -> None:
    st.markdown(
        "With two levels everything lies on a segment: the x axis is the probability of the top score. The judge is "
        "two points, θ₁ = P(top | true low) and θ₂ = P(top | true top). Three candidates have fixed observed "
        "positions γ. Their true prevalence is π = (γ − θ₁)/(θ₂ − θ₁): **wherever the vertices sit, the ranking is the "
        "order along the segment** (theorem 1), as long as the judge is not label-flipping (θ₂ > θ₁). Drag θ₂ below θ₁ "
        "to see the order reverse.")
    ss.setdefault(K.LAB_SEG_T1, 0.20)
    ss.setdefault(K.LAB_SEG_T2, 0.85)
    c1, c2 = st.columns(2)
    t1 = c1.slider("θ₁ = P(judge says top | true low)", 0.0, 1.0, step=0.01, key=K.LAB_SEG_T1, persist_state="session")
    t2 = c2.slider("θ₂ = P(judge says top | true top)", 0.0, 1.0, step=0.01, key=K.LAB_SEG_T2, persist_state="session")
    gammas = np.array([0.35, 0.50, 0.62])
    names = ["candidate A", "candidate B", "candidate C"]
    if abs(t2 - t1) < 1e-9:
        st.warning("θ₁ = θ₂: this judge gives the same scores whatever the truth, so it says nothing about the ranking.",
                   icon=":material/warning:")
    else:
        fig = figures.segment_order_figure(t1, t2, gammas, names, level_labels=("low", "top"))
        pis = identifiability.segment_prevalence(gammas, t1, t2)
        if np.any((pis < 0) | (pis > 1)):
            st.info("Some candidates fall outside [θ₁, θ₂]: their π leaves [0, 1], so this judge position cannot "
                    "explain them (the model would never put the vertices there). The order is still the order along "
                    "the segment.", icon=":material/info:")
        if identifiability.is_label_flipping(t1, t2):
            st.error("Label-flipping judge: it says “top” more often to low answers than to top answers. The ranking "
                     "is reversed. The model's judge prior rules such judges out.", icon=":material/swap_vert:")
        show_figure(fig, "segment-order", key="lab-seg", height=420)


# -- the flip ----------------------------------------------------------------------------------
def flip_view() -> None:
    st.markdown(
        "With three or more levels, the data cannot settle the ranking on their own (theorem 2). Two candidates "
        "(fixed points) are explained by a judge Θ + hΔ for every h in a range: all these triangles contain both "
        "candidates, so all fit the data equally well, yet the expected-score order is opposite for h < 0 and "
        "h > 0. This is the construction of the proof (appendix F): Δ moves the vertices so that the candidates' "
        "expected scores, equal at h = 0, separate in opposite directions. Only a prior on the judge (β_max) can choose.")
    ex = identifiability.canonical_flip_example()
    span = flip_span(ex)
    h = st.slider("h: move the judge's vertices along Θ + hΔ", -span, span, step=max(span / 50, 1e-3), key=K.LAB_H, persist_state="session",
                  format="%.3f")
    conf = identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, h)
    names = ("candidate 1", "candidate 2")
    # one under the other: side by side, both figures' titles and the download buttons were cut at 1024 px
    fig = figures.flip_figure(conf.Theta_h, ex.gamma1, ex.gamma2, Theta_base=ex.Theta, names=names,
                              level_labels=LEVELS, h=h)
    show_figure(fig, "theorem-2-flip", key="lab-flip", height=580)
    grid = np.linspace(-span, span, 81)
    scores = np.array([identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, x).expected_scores for x in grid])
    curve = figures.flip_score_curve_figure(grid, scores, names=names, h_current=h)
    show_figure(curve, "theorem-2-expected-scores", key="lab-flip-curve", height=360)
    verdict = {1: "candidate 1 ranks higher", -1: "candidate 2 ranks higher", 0: "a tie"}[conf.order]
    st.markdown(f"At h = {h:+.3f}: E₁ = {conf.expected_scores[0]:.3f}, E₂ = {conf.expected_scores[1]:.3f} → **{verdict}**. "
                f"Both candidates inside: {'yes' if conf.candidates_inside else 'no'}; "
                f"vertices valid distributions: {'yes' if conf.judge_valid else 'no'}.")


# -- augmented simplex -------------------------------------------------------------------------
def lifted_view() -> None:
    st.markdown(
        "Lift each judge vertex θ(m) to the height of its score value *m*. The lifted triangle is a tilted plane; a "
        "candidate placed at its observed position rises to the plane at a height equal to its **expected score** "
        "(appendix A). Moving the vertices (the flip tab's slider h, used here too) tilts the plane and can change "
        "which candidate sits higher. Rotate the figure with the mouse.")
    ex = identifiability.canonical_flip_example()
    flip_span(ex)
    conf = identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, float(ss[K.LAB_H]))
    fig = figures.augmented_simplex_figure(conf.Theta_h, ex.values, conf.pi, ["candidate 1", "candidate 2"],
                                           level_labels=LEVELS)
    show_figure(fig, "augmented-simplex", key="lab-lift", height=620)
    st.caption(f"h = {conf.h:+.3f}; heights E₁ = {conf.expected_scores[0]:.3f}, E₂ = {conf.expected_scores[1]:.3f}.")


# Only the open tab is drawn (a rerun on switching tabs): drawing all four at once, the 3-D figure by
# software WebGL among them, delayed a first visit's first figure by about 0.9 s.
TABS = {"Barycentric = area ratios": (area_view, "drawing the area view"),
        "Two levels: order on a segment": (segment_view, "drawing the segment view"),
        "Three levels: the flip": (flip_view, "drawing the flip"),
        "Augmented simplex": (lifted_view, "drawing the augmented simplex")}
for tab, (view, doing) in zip(st.tabs(list(TABS), key=K.LAB_TAB, on_change="rerun"), TABS.values()):
    if tab.open:
        with tab, guard(doing):
            view()
