"""Data page: pick a built-in dataset or upload a file; the scale, the families and level collapsing;
the validation report in plain words; the per-judge per-candidate score distributions."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_support import data_access as da
from app_support.downloads import csv_button, show_figure, slug
from app_support.errors import guard, show_error
from app_support.frame import page_frame
from app_support.guide_links import guide_link
from app_support.sidebar import context
from app_support.state import UPLOAD, K
from app_support.safe_text import md
from simplex_core.data.scale import level_mapping_text, levels_text, parse_level_mapping
from simplex_core.data.validation import WARNING_PREFIX

#: Longer lists of families or self-family pairs are shown as tables, not as a line of text.
LONG_LIST = 8


def _table_in_expander(title: str, table: pd.DataFrame, file_stem: str) -> None:
    with st.expander(title):
        st.dataframe(table, hide_index=True, width="content")
        csv_button(table, file_stem, key=f"csv_{file_stem}")

page_frame()

ss = st.session_state
st.title("Data")
st.caption("One row per (item, candidate, judge): the score a judge gave one candidate's answer to one item.")
guide_link("data")


BOXES_CLEARED = "data_upload_boxes_cleared"  # (file name, the boxes emptied for it), said under "Loaded: …"


def _store_upload() -> None:
    """Keep the uploaded bytes under a non-widget key, so they survive page switches."""
    up = ss.get(K.UPLOADER)
    if up is None:
        return
    if ss.get(K.UPLOAD_NAME) is not None and up.name != ss.get(K.UPLOAD_NAME):
        # another file: the reading boxes were written for the last one (its levels would be read as
        # this file's scale, "values 0 are not on the scale 1, 2, 3"); a new version of the same file keeps
        # them, and so does a first file (boxes a link filled, or typed before it)
        boxes = {K.LEVELS: "Observed levels", K.TRUE_LEVELS: "True levels", K.FAMILIES: "Families", K.COLUMNS: "Columns"}
        filled = {K.LEVELS: (ss.get(K.LEVELS_PREFILLED) or (None, None, None))[2],
                  K.COLUMNS: (ss.get(K.COLUMNS_GUESSED) or (None, None))[1]}
        cleared = [label for key, label in boxes.items() if str(ss.get(key) or "").strip()
                   and ss.get(key) != filled.get(key)]  # filled from the last file, not written by hand
        for key in boxes:
            ss[key] = ""
        ss[BOXES_CLEARED] = (up.name, cleared) if cleared else None
    ss[K.UPLOAD_BYTES] = up.getvalue()
    ss[K.UPLOAD_NAME] = up.name
    ss[K.DATASET] = UPLOAD
    ss.pop(K.CRITERION, None)


def _clear_upload() -> None:
    for key in (K.UPLOAD_BYTES, K.UPLOAD_NAME):
        ss.pop(key, None)
    for key in (K.LEVELS, K.TRUE_LEVELS, K.FAMILIES, K.COLUMNS):  # how to read the file forgotten
        ss[key] = ""


def _store_mapping(text_key: str, table_key: str, scale, default_labels, default_mapping) -> None:
    """Parse the mapping when it is edited (before the rerun builds the table from it)."""
    try:
        parsed = parse_level_mapping(ss.get(text_key, ""), scale)
    except ValueError as exc:
        ss[f"{text_key}_error"] = str(exc)
        return
    ss[f"{text_key}_error"] = None
    same_targets = set(parsed.values()) == {v for _, v in default_mapping}
    ss[K.COLLAPSE_MAP][table_key] = {"mapping": tuple(sorted(parsed.items())),
                                     "labels": tuple(default_labels) if same_targets else ()}


ctx = context()

# -- source ----------------------------------------------------------------------------------------
left, right = st.columns([3, 2], gap="large")
with left:
    if ctx.dataset is not None:
        st.subheader(ctx.dataset.title)
        if ctx.dataset.description:
            st.write(ctx.dataset.description)
        if ctx.dataset.licence_warning:
            st.warning(ctx.dataset.licence_warning, icon=":material/gavel:")
        card = da.dataset_card(ctx.dataset.name)
        if card:
            with st.expander("Dataset card: source, licence, conversion decisions, caveats"):
                st.markdown(card)
        st.caption("Choose another dataset or criterion in the sidebar, or upload your own file here.")
    else:
        st.subheader(f"Your file: {md(ss.get(K.UPLOAD_NAME))}" if ss.get(K.UPLOAD_BYTES) is not None else "Your file")
        st.markdown("One row per judgment, with the columns `item`, `candidate`, `judge` and `score`; optional: "
                    "`true_score` (for evaluation only), `candidate_family` and `judge_family` (self-family "
                    "exclusion), `criterion` (several criteria in one file). CSV, TSV, JSON Lines or Parquet; the "
                    "template shows the layout.")
        if ctx.table_error is not None:
            st.caption("Not loaded: what is wrong is listed below, with the rows at fault and how to fix each.")
with right:
    with st.container(border=True):
        st.markdown("**Upload a file** (CSV, TSV, JSON Lines or Parquet)")
        st.file_uploader("Judgment table", type=["csv", "tsv", "gz", "jsonl", "json", "ndjson", "parquet", "pq", "eval"],
                         key=K.UPLOADER, on_change=_store_upload, label_visibility="collapsed",
                         help="Columns item, candidate, judge, score; optional true_score, candidate_family, judge_family, criterion. "
                              "FastChat MT-Bench judgments and Inspect AI logs are read as they are.")
        from simplex_core.data.table import template_frame

        csv_button(template_frame(), "simplex-judge-template", label="Template CSV", key="dl-template",
                   help="A small example file in the expected layout")
        if ss.get(K.UPLOAD_BYTES) is not None:
            st.caption(f"Loaded: {md(ss.get(K.UPLOAD_NAME))} ({len(ss[K.UPLOAD_BYTES]) / 1024:.0f} kB)")
            if ss.get(BOXES_CLEARED) and ss[BOXES_CLEARED][0] == ss.get(K.UPLOAD_NAME):
                st.caption("Emptied for this new file (they were written for the previous one): "
                           + ", ".join(ss[BOXES_CLEARED][1]) + " under “How to read the file”.")
            if ctx.dataset is not None:
                st.button("Analyse this file", key="use-upload", on_click=lambda: ss.update({K.DATASET: UPLOAD}))
            st.button("Forget the file", key="forget-upload", on_click=_clear_upload)

if (ctx.dataset is None and ss.get(K.UPLOAD_BYTES) is not None
        and (ss.get(K.COLUMNS_GUESSED) or (None,))[0] != ss.get(K.UPLOAD_NAME)):
    # once per file: a header lacking the contract's columns gets the mapping its names suggest, shown
    # in the box (editable) and, once read, in the notes ("Columns read as: …"); never a silent rename
    guess = da.guessed_columns(ss[K.UPLOAD_BYTES], ss.get(K.UPLOAD_NAME, "upload.csv"))
    ss[K.COLUMNS_GUESSED] = (ss.get(K.UPLOAD_NAME), guess)
    if guess and not str(ss.get(K.COLUMNS) or "").strip():
        ss[K.COLUMNS] = guess
        st.rerun()
if ctx.dataset is None:
    if ctx.raw_table is not None and not str(ss.get(K.LEVELS) or "").strip():
        # the levels read from the scores, written out so they can be edited (a level no judge gave added);
        # declared as read they are the same scale, so the table and its hash do not change
        ss[K.LEVELS] = levels_text(ctx.raw_table.scale.values, ctx.raw_table.scale.labels)
        ss[K.LEVELS_PREFILLED] = (ss.get(K.UPLOAD_NAME), ctx.criterion, ss[K.LEVELS])
    with st.expander("How to read the file: columns, scale and families",
                     expanded=ctx.table_error is not None or bool(str(ss.get(K.COLUMNS) or "").strip())):
        st.text_input("Columns (optional)", key=K.COLUMNS, persist_state="session",
                      placeholder="item=question_id, candidate=model, judge=grader, score=rating, true_score=human",
                      help="Which of the file's columns are the contract's, as contract=column pairs; filled with a guess "
                           "when the file's header lacks them. Kept in the page's link.")
        c1, c2 = st.columns(2)
        c1.text_input("Observed levels (optional)", key=K.LEVELS, persist_state="session", placeholder="-1:incorrect, 0:unsure, 1:correct",
                      help="Ascending values, each with an optional label: V[:LABEL],... Filled with the distinct scores "
                           "once the file is read; edit it to add a level no judge gave (a 1 on a 1–5 rubric).")
        c2.text_input("True levels (optional)", key=K.TRUE_LEVELS, persist_state="session", placeholder="-1, 1",
                      help="A subset of the observed values; leave empty when every level can be a true score.")
        st.text_area("Families (optional JSON)", key=K.FAMILIES, persist_state="session", height=80,
                     placeholder='{"gpt-4o": "openai", "gpt-4o-mini": "openai", "claude-3": "anthropic"}',
                     help="{model name: family} for judges and candidates; replaces family columns. "
                          "Judgments of a model by its own family are left out when self-family exclusion is on.")

if ctx.loaded_table is not None:
    # drawn before the validation stops the page: a choice that leaves too little is undone here
    chosen = bool(ss.get(K.DROP_CANDIDATES) or ss.get(K.DROP_JUDGES))
    with st.expander("Candidates and judges: leave some out", expanded=chosen):
        c1, c2 = st.columns(2)
        c1.multiselect("Candidates left out", list(ctx.loaded_table.candidates), key=K.DROP_CANDIDATES,
                       persist_state="session", placeholder="none",
                       help="A row that is no competitor (a human reference answer) leaves every page, figure, "
                            "table and export, which say so. Kept in the page's link.")
        c2.multiselect("Judges left out", list(ctx.loaded_table.judges), key=K.DROP_JUDGES,
                       persist_state="session", placeholder="none",
                       help="A judge you do not want in the analysis (one that says “correct” to nearly everything). "
                            "Kept in the page's link.")

# -- validation ------------------------------------------------------------------------------------
if ctx.table_error is not None:
    show_error(ctx.table_error, "reading the data")
    st.stop()
if ctx.raw_table is None:
    st.info("Upload a file above (or download the template to see the layout), or pick a built-in dataset in the sidebar.",
            icon=":material/upload_file:")
    st.stop()

raw = ctx.raw_table
table = ctx.table
key = da.table_key(raw)

with guard("summarising the table"):
    st.divider()
    m = st.columns(5)
    m[0].metric("Candidates", len(raw.candidates))
    m[1].metric("Judges", len(raw.judges))
    m[2].metric("Items", len(raw.items))
    m[3].metric("Judgments", f"{len(raw.frame):,}")
    m[4].metric("Ground truth", (f"{raw.n_gold:,} gold" if raw.n_gold else "yes") if raw.has_truth else "no")
    st.markdown(f"**Scale:** {md(raw.scale.describe())}")
    if raw.n_gold:
        st.caption(f"{raw.n_gold:,} answer{'s' if raw.n_gold != 1 else ''} marked `gold`: the app's Bayesian fit leaves "
                   f"{'them' if raw.n_gold != 1 else 'it'} out (label-free on every page), and the Rankings page ranks with "
                   f"{'them' if raw.n_gold != 1 else 'it'}: the label-free fit predicts every answer's true score and the "
                   "labels correct its bias, candidate by candidate (bayesian_ppi; shared-truth likelihood). Every "
                   "`true_score` also evaluates the methods and feeds PPI.")
    elif raw.has_truth:
        st.caption("`true_score` is used only to evaluate the methods and by PPI (which uses labels); the model never sees it.")
    pairs = raw.self_family_pairs if raw.families else []
    all_notes = list(raw.notes) + ctx.notes
    for note in all_notes:
        if note.startswith(WARNING_PREFIX):
            st.warning(md(note.removeprefix(WARNING_PREFIX)), icon=":material/warning:")
    plain_notes = [n for n in all_notes if not n.startswith(WARNING_PREFIX)]
    if plain_notes:
        with st.container(border=True):
            st.markdown("**What was excluded or normalised** (nothing is dropped silently)")
            for note in plain_notes:
                st.markdown(f"- {md(note)}")
    elif pairs and ctx.self_exclusion:
        left_out = int(raw.frame.set_index(["judge", "candidate"]).index.isin(pairs).sum())
        st.success(f"The table passed validation; the fits leave out its {len(pairs)} self-family "
                   f"pair{'s' if len(pairs) != 1 else ''} ({left_out:,} judgment{'s' if left_out != 1 else ''}), listed below.",
                   icon=":material/check_circle:")
    else:
        st.success("The table passed validation with nothing excluded.", icon=":material/check_circle:")

    if raw.families:
        # a line of text for a few; a table (with its CSV) for more, which a paragraph would bury
        if len(raw.families) <= LONG_LIST:
            st.markdown("**Families:** " + ", ".join(f"{md(m_)} → {md(f)}" for m_, f in raw.families.items()))
        else:
            _table_in_expander(f"**Families** of {len(raw.families)} models", pd.DataFrame(
                {"model": list(raw.families), "family": list(raw.families.values())}), f"{slug(raw.source)}-families")
        if pairs:
            state = "excluded" if ctx.self_exclusion else "kept (self-family exclusion is off in the sidebar)"
            if len(pairs) <= LONG_LIST:
                st.markdown(f"**Self-family (judge, candidate) pairs**, {state}: " + "; ".join(f"{md(j)} on {md(k)}" for j, k in pairs))
            else:
                _table_in_expander(f"**{len(pairs)} self-family (judge, candidate) pairs**, {state}",
                                   pd.DataFrame(list(pairs), columns=["judge", "candidate"]),
                                   f"{slug(raw.source)}-self-family-pairs")
    else:
        st.caption("No families given: no judgment is excluded as self-judging.")

# -- level collapsing (a 3-level scale has nothing to collapse to that the pages would use) -------------
if raw.scale.n_levels > 3:
    with guard("collapsing the levels"):
        st.divider()
        st.subheader("Level collapsing")
        crit = ctx.dataset.criterion(ctx.criterion) if ctx.dataset is not None else None
        mapping, labels, why = da.default_three_level_mapping(raw, crit)
        stored = ss[K.COLLAPSE_MAP].get(key)
        current_text = level_mapping_text(stored["mapping"] if stored else mapping)
        st.toggle("Collapse the levels for the whole analysis", key=K.COLLAPSE_ON, persist_state="session",
                  help="Fit and rank on fewer levels (e.g. 1–5 → 3). The Simplex page collapses to 3 levels on its own "
                       "whenever there are more than 3, whatever you choose here.")
        text_key = f"w_collapse_text_{key[:12]}"
        st.text_input("Mapping old:new", value=current_text, key=text_key, on_change=_store_mapping,
                      args=(text_key, key, raw.scale, labels, mapping),
                      help="Every observed level to a new level, order kept, e.g. 1:1, 2:1, 3:2, 4:3, 5:3.")
        if why:
            st.caption(f"Default: {why}")
        if ss.get(f"{text_key}_error"):
            st.error(md(ss[f"{text_key}_error"]), icon=":material/error:")
        else:
            chosen = ss[K.COLLAPSE_MAP].get(key) or {"mapping": mapping, "labels": labels}
            preview = da.collapse(raw, key, tuple(chosen["mapping"]), tuple(chosen.get("labels", ())))
            st.markdown(f"Collapsed scale: {md(preview.scale.describe())}" + (" — **in use**" if ctx.collapsed else ""))

# -- distributions --------------------------------------------------------------------------------
with guard("drawing the score distributions"):
    st.divider()
    st.subheader("Score distributions per judge and candidate")
    st.caption("Each bar is one candidate as seen by one judge: the share of each level it received. "
               "Hatched bars are self-family pairs (left out of the fit when self-family exclusion is on).")
    dist = da.distribution(table, da.table_key(table))
    from simplex_core.figures import score_distribution_figure
    from simplex_core.figures.style import safe_text

    fig = score_distribution_figure(dist, title="Score shares per judge and candidate" + (" (collapsed levels)" if ctx.collapsed else ""),
                                    subtitle=safe_text(ctx.source_label))
    show_figure(fig, f"{ctx.source_label}-score-distributions", key="fig-dist")  # sized by the figure (legend, title)
    wide = da.distribution_wide(table, da.table_key(table))
    st.markdown("Counts (the paper's appendix-D layout: rows candidates, columns judge | level; "
                "*None* where the judge scored none of the candidate's answers)")
    st.dataframe(wide, width="stretch")
    c1, c2 = st.columns(2)
    with c1:
        csv_button(wide, f"{ctx.source_label}-distribution-wide", label="Counts CSV", key="dl-dist-wide", index=True)
    with c2:
        csv_button(dist, f"{ctx.source_label}-distribution-long", label="Long table CSV", key="dl-dist-long")
    with st.expander("The rows as loaded"):
        st.dataframe(table.frame.head(500), width="stretch", hide_index=True)
        st.caption(f"First {min(500, len(table.frame))} of {len(table.frame):,} rows.")
        csv_button(lambda: da.rows_table(table), f"{ctx.source_label}-rows", label="All rows CSV", key="dl-rows")
