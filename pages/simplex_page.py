"""Simplex: each judge as a triangle (3 levels) or a segment (2 levels), the candidates inside it,
and the posterior's judge triangles over them. More than 3 levels are collapsed to 3 (editable
mapping) and that table is fitted like any other."""

from __future__ import annotations

import streamlit as st

from app_support import data_access as da
from app_support import fits, results
from app_support.downloads import csv_button, show_figure
from app_support.errors import guard
from app_support.frame import page_frame
from app_support.guide_links import guide_link
from app_support.page_parts import data_caption, fit_header, require_settings, require_table, waiting_for_first_fit
from app_support.sidebar import context
from app_support.state import K
from app_support.safe_text import md
from simplex_core.data.scale import level_mapping_text, parse_level_mapping
from simplex_core.summaries.judge_panel import judge_panel_sentence

page_frame()

ss = st.session_state
st.title("Simplex")
st.caption("A judge is a triangle whose corners are its score distributions for each true level; each candidate sits "
           "inside at the shares of scores it received. Its position relative to the corners is its true-score "
           "distribution, so where the corners are decides the ranking.")
guide_link("simplex")
ctx = context()
if not (require_table(ctx) and require_settings(ctx)):
    st.stop()
data_caption(ctx)
table, settings = ctx.fit_table, ctx.settings  # label-free, as on every page (the data caption says so)


def _store_simplex_mapping(text_key: str, table_key: str, scale, labels, mapping) -> None:
    try:
        parsed = parse_level_mapping(ss.get(text_key, ""), scale)
    except ValueError as exc:
        ss[f"{text_key}_error"] = str(exc)
        return
    ss[f"{text_key}_error"] = None
    if len(set(parsed.values())) != 3:
        ss[f"{text_key}_error"] = f"The Simplex page needs exactly 3 levels after collapsing; this mapping gives {len(set(parsed.values()))}."
        return
    same = set(parsed.values()) == {v for _, v in mapping}
    ss[K.SIMPLEX_MAP][table_key] = {"mapping": tuple(sorted(parsed.items())), "labels": tuple(labels) if same else ()}


# -- more than 3 levels: collapse for this view -------------------------------------------------------
shown_table = table
if table.scale.n_levels > 3:
    with guard("collapsing the levels for the simplex"):
        key = da.table_key(table)
        crit = ctx.dataset.criterion(ctx.criterion) if ctx.dataset is not None else None
        mapping, labels, why = da.default_three_level_mapping(table, crit)
        chosen = ss[K.SIMPLEX_MAP].get(key) or {"mapping": mapping, "labels": labels}
        text_key = f"w_simplex_map_{key[:12]}"
        with st.container(border=True):
            st.markdown(f"**This table has {table.scale.n_levels} levels; the simplex shows 3.** The model is refitted on "
                        "the table collapsed with the mapping below (a separate, cached fit).")
            st.text_input("Mapping old:new", value=level_mapping_text(chosen["mapping"]), key=text_key,
                          on_change=_store_simplex_mapping, args=(text_key, key, table.scale, labels, mapping))
            if why:
                st.caption(f"Default: {why}")
            if ss.get(f"{text_key}_error"):
                st.error(md(ss[f"{text_key}_error"]), icon=":material/error:")
        shown_table = da.collapse(table, key, tuple(chosen["mapping"]), tuple(chosen.get("labels", ())))
        st.caption(f"Collapsed scale: {md(shown_table.scale.describe())}")

scale = shown_table.scale
view = None
with guard("preparing the fit"):
    view = fits.get_fit(shown_table, settings, purpose="simplex" if shown_table is not table else "main")
    if shown_table is table:  # a collapsed table's fit is a view of its own, not the grid's base
        fits.start_grid(view)
    fit_header(view, labels_left_out=ctx.table.n_gold)

judges = list(shown_table.judges)
c1, c2, c3 = st.columns([3, 1, 1])
if ss.get(K.SIMPLEX_JUDGES) is not None and not set(ss[K.SIMPLEX_JUDGES]) <= set(judges):
    ss.pop(K.SIMPLEX_JUDGES)
# Two judges by default: one row at a desktop width, and a new tab draws them sooner (every figure
# of a page is drawn in the same frame once Plotly's module runs: four took ~0.6 s longer); the
# multiselect adds any others.
ss.setdefault(K.SIMPLEX_JUDGES, judges[: min(2, len(judges))])
ss.setdefault(K.SIMPLEX_DRAWS, 40)
chosen_judges = c1.multiselect("Judges", judges, key=K.SIMPLEX_JUDGES, persist_state="session")
# overlaid compares judges: with one, its candidates lose their names and the posterior to no purpose
layout = c2.radio("Layout", ["side by side", "overlaid"], key=K.SIMPLEX_LAYOUT, persist_state="session", horizontal=True,
                  disabled=scale.n_levels != 3 or len(chosen_judges) < 2,
                  help="Overlaid draws two judges or more in one triangle." if len(chosen_judges) < 2 else None)
if len(chosen_judges) < 2:
    layout = "side by side"
n_draws = c3.slider("Posterior draws drawn", 0, 100, step=10, key=K.SIMPLEX_DRAWS, persist_state="session")
if not chosen_judges:
    st.info("Pick at least one judge.")
    st.stop()

if view is not None and view.result is None:
    waiting_for_first_fit(view)

dist = da.distribution(shown_table, da.table_key(shown_table))
from simplex_core import figures
from simplex_core.figures.style import safe_text

parts = {}
if view is not None and view.result is not None:
    with guard("reading the posterior draws"):
        for j in chosen_judges:
            parts[j] = results.judge_simplex_parts(view.result, view.result_key, j, max(n_draws, 1))


def judge_data(j: str) -> figures.JudgeSimplex:
    observed, counts = figures.judge_observed_table(dist, j, list(shown_table.candidates))
    p = parts.get(j)
    if p is None:
        return figures.JudgeSimplex(observed, counts)
    index = [p["candidates"].index(c) for c in observed.index]
    return figures.JudgeSimplex(observed, counts, p["theta_draws"][:n_draws] if n_draws else None, p["theta_mean"],
                                p["candidate_posterior"][:, index, :][:n_draws] if n_draws else None)


true_labels = list(scale.true_labels)
note = ""
if scale.n_levels == 3 and scale.n_true == 2:
    note = ("Binary truth with an abstain level: each judge has two vertices (true "
            f"{true_labels[0]}, true {true_labels[1]}) in the 3-level simplex, drawn as segments.")
elif scale.n_levels == 2:
    note = ("Two levels: everything lies on a segment. Wherever the judge's two vertices sit, the ranking is the order "
            "along it, unless the judge flips labels (theorem 1).")
if shown_table.self_family_pairs and ctx.self_exclusion:
    note += (" A judge's own-family candidates are drawn too, although the fit kept those judgments apart (as the rater "
             "'<judge> · own family', with vertices of its own): the gap between their observed point and "
             "their posterior position here is what self-preference looks like.")
if note:
    st.caption(md(note.strip()))

with guard("drawing the simplex"):
    if scale.n_levels == 3 and layout == "overlaid":
        fig = figures.ternary_judges_overlay_figure({j: judge_data(j) for j in chosen_judges}, list(scale.labels),
                                                    true_labels=true_labels, max_draws=min(n_draws, 20),
                                                    title=f"{safe_text(ctx.source_label)}: judges overlaid")
        show_figure(fig, f"{fits.download_stem(ctx.source_label, settings)}-simplex-overlay", key="fig-simplex-overlay", height=700)
    else:
        # a triangle with many named candidates needs the full width to keep its labels apart (at 1024 px too)
        crowded = scale.n_levels == 3 and len(shown_table.candidates) > 6
        cols = st.columns(2 if len(chosen_judges) > 1 and not crowded else 1)
        for i, j in enumerate(chosen_judges):
            d = judge_data(j)
            with cols[i % len(cols)]:
                if scale.n_levels == 3:
                    fig = figures.ternary_judge_figure(d.observed, list(scale.labels), d.theta_draws, d.theta_mean,
                                                       d.candidate_posterior, counts=d.counts, true_labels=true_labels,
                                                       judge=j, max_draws=n_draws, title=f"Judge {safe_text(j)}")
                    height = None  # the figure sizes itself to its legend
                else:
                    fig = figures.segment_judge_figure(d.observed, list(scale.labels), d.theta_draws, d.theta_mean,
                                                       d.candidate_posterior, counts=d.counts, true_labels=true_labels,
                                                       judge=j, max_draws=n_draws, title=f"Judge {safe_text(j)}")
                    height = None
                show_figure(fig, f"{fits.download_stem(ctx.source_label, settings)}-simplex-{j}", key=f"fig-simplex-{i}", height=height)

if view is not None and view.result is not None:
    with guard("summarising the judges"), st.expander("Posterior mean confusion matrices (rows: true level, columns: score given)"):
        jm = results.judge_matrix_table(view.result, view.result_key)
        st.dataframe(jm, hide_index=True, width="stretch")
        csv_button(jm, f"{fits.download_stem(ctx.source_label, settings)}-judge-matrices", label="Judge matrices CSV", key="dl-judge-matrices")

if view is not None and view.result is not None:
    st.subheader("Judges")
    with guard("explaining the judge panel"):
        panel_table, panel = results.judge_panel(view.result, view.result_key, view.counts)
        st.caption(md(judge_panel_sentence(panel)))
        st.dataframe(panel_table.round(3), hide_index=True, width="stretch")
        csv_button(panel_table, f"{fits.download_stem(ctx.source_label, settings)}-judge-panel", label="Judge panel CSV",
                   key="dl-judge-panel")
