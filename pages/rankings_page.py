"""Rankings: the posterior rank distributions beside the baselines; intervals, P(best), pairwise
probabilities; Spearman and coverage per method when the data have ground truth; which answers to
label next (shared-truth fits)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_support import data_access as da
from app_support import fits, results
from app_support.downloads import csv_button, show_figure
from app_support.errors import guard
from app_support.frame import page_frame
from app_support.guide_links import guide_link
from app_support.leaderboard_view import summary_columns
from app_support.page_parts import (data_caption, fit_header, numbers_as_text, require_settings, require_table,
                                     waiting_for_first_fit)
from app_support.sidebar import context
from app_support.safe_text import md

page_frame()

st.title("Rankings")
guide_link("rankings")
ctx = context()
if not (require_table(ctx) and require_settings(ctx)):
    st.stop()
data_caption(ctx)
settings = ctx.settings
# A file with gold answers opens on the ranking its labels give; every fit on this page is the label-free one
# (the labelled ranking's predictor, and the ranking it is compared with).
file_table = ctx.table
n_labels = file_table.n_gold
labels_on = False
if n_labels:
    from app_support.labelled_view import labels_switch

    labels_on = labels_switch(n_labels)
table = ctx.fit_table
truth = da.truth_ranks(table, da.table_key(table))

view = approx = None
with guard("preparing the fit"):
    view = fits.get_fit(table, settings)
with guard("reweighting a fit already done"):  # the instant, approximate answer while the fit runs
    from app_support.approximate import approximate, approximate_notice

    approx = approximate(view)
if view is not None:
    with guard("preparing the fit"):
        fits.start_grid(view)
        fit_header(view, stale_shown=approx is None, labels_left_out=n_labels)
    with guard("reweighting a fit already done"):
        approximate_notice(view, approx)

# What the Bayesian views show: the fit asked for; else, while it runs, the reweighted answer for the
# setting asked for (labelled approximate everywhere); else the previous fit of these data (labelled).
shown = shown_key = shown_label = None
if view is not None and view.result is not None and (view.current or approx is None):
    shown, shown_key = view.result, view.result_key
    shown_label = fits.settings_label(view.result_settings)
elif approx is not None:
    shown, shown_key = approx.result, approx.key
    shown_label = f"{fits.settings_label(view.requested)}, approximate"
approximate_shown = approx is not None and shown is approx.result
# downloads name the setting shown, and say so when it is the approximate answer
file_label = fits.download_stem(ctx.source_label, view.requested if approximate_shown
                                else view.result_settings if shown is not None else None, approximate=approximate_shown)

baseline, baseline_failed = {}, {}
with guard("running the baselines"):
    baseline, baseline_failed = da.baseline_results(table, da.table_key(table), ctx.self_exclusion)
    for name, why in baseline_failed.items():
        st.caption(f"Baseline {md(name)} could not run on these data: {md(str(why).removeprefix(f'{name}: '))}")

bayes = None
if shown is not None:
    with guard("summarising the posterior"):
        bayes = results.bayesian_method_result(shown, shown_key)
elif view is not None and view.result is None:
    waiting_for_first_fit(view)

labelled = None
if labels_on:
    with guard("ranking with the file's labels"):
        from app_support.labelled_view import labelled_section

        why = waiting = None
        if view is None:
            why = "the label-free fit it starts from cannot run on these data and settings (see above)."
        elif view.current and view.result_settings.likelihood != "shared-truth":
            why = "it reads the shared-truth fit's predictions per answer: choose the shared-truth likelihood."
        elif view.current:
            labelled, why = results.labelled_ranking(view.result, view.result_key, file_table, da.table_key(file_table),
                                                     view.counts, ctx.self_exclusion)
        else:
            waiting = ("The ranking with the file's labels starts from the label-free fit at this setting, which is "
                       "being fitted; it appears here when that fit lands.")
        labelled_section(labelled, why, bayes if view is not None and view.current else None, file_table, file_label,
                         waiting=waiting)

methods = results.evaluation_methods(bayes, baseline, labelled)
# the ordinal many-facet model is a full MCMC fit: run on request only, in the background like the other fits
if st.toggle("Add the ordinal many-facet model (label-free competitor; a background MCMC fit, a minute or more)",
             value=False, key="w_rank_ordinal"):
    with guard("fitting the ordinal many-facet model"):
        from app_support.ordinal_fit import ordinal_fit, ordinal_status_panel

        ordinal = ordinal_fit(table, ctx.self_exclusion)
        if ordinal.why is not None:
            st.caption(f"The ordinal model could not run on these data: {md(str(ordinal.why))}")
        elif ordinal.result is not None:
            methods["ordinal"] = ordinal.result
            for note in ordinal.result.notes:
                st.caption(md(note))
        else:
            ordinal_status_panel(ordinal)

if bayes is not None:  # the answer in one line, drawn before the figures' script loads in the browser
    with guard("summarising the ranking"):
        from simplex_core.summaries.posterior_tables import ranking_sentence

        # the approximate line names its setting; the previous fit's line says whose it is
        head = (f"**Bayesian ranking, approximate** ({fits.settings_label(view.requested)}; best first" if approximate_shown
                else f"**Previous fit's ranking ({shown_label})** (best first" if view.origin == "stale"
                else "**Label-free Bayesian ranking** (best first" if n_labels
                else "**Bayesian ranking** (best first")
        st.markdown(f"{head}; median rank and 95% rank interval): "
                    f"{ranking_sentence(results.candidate_table(shown, shown_key), name=md)}")
        from simplex_core.inference.rater_deviation import rater_deviation_record, rater_deviation_text

        deviation = rater_deviation_record(shown)
        if deviation is not None:
            st.caption("Rank intervals: " + md(rater_deviation_text(deviation)) + " The Guide (Rankings) says why.")
    if not approximate_shown and view.current and view.counts is not None:
        with guard("checking the fit against the data"):
            from simplex_core.summaries.posterior_tables import misfit_sentence

            misfit = misfit_sentence(results.ppc_table(shown, shown_key, view.counts),
                                     integrated=bool(view.result_settings.integrated))
            if misfit:
                st.warning(md(misfit) + " Details: the posterior predictive check on the Sensitivity page.",
                           icon=":material/rule:")

# -- rank distributions -----------------------------------------------------------------------
with guard("drawing the rank distributions"):
    from simplex_core.summaries.evaluation import figure_order, method_rank_draws
    from simplex_core.figures import rank_boxplot_figure
    from simplex_core.figures.style import safe_text

    if methods:
        if truth is not None:
            how = "ordered by true rank (black stars)"
        elif bayes is not None:
            how = "ordered by posterior median rank"
        else:
            state = ("cannot run on these data and settings: see the message above" if view is None
                     else "failed, above" if view.failed else "is not ready yet")
            how = f"ordered by the simple average (the Bayesian fit {state})"
        uses = {m: bool(r.uses_labels) for m, r in methods.items()}
        singles = [m for m in methods if m.startswith("single_judge:")]
        method_order = [m for m in methods if m not in singles] + singles
        st.subheader("Rank distributions by method")
        st.caption(f"Rank 1 = best; {how}. Boxes: 25–75% of the draws/replicates with the median; whiskers: the 95% "
                   "rank interval. Points: methods without intervals. PPI and bayesian_ppi (the ranking with the file's labels) "
                   "are hollow: they use gold labels. ordinal: "
                   "the label-free ordinal many-facet model (judge severities and cutpoints, item effects).")
        show_singles = st.toggle("Show every single judge", value=len(singles) <= 4, key="w_rank_singles")
        drawn = method_order if show_singles else [m for m in method_order if m not in singles]
        title = f"{safe_text(ctx.source_label)}: rank distributions ({shown_label if bayes is not None else 'baselines only'})"

        def rank_figure():
            draws = method_rank_draws(methods)
            order = figure_order(draws, truth, "bayesian" if bayes is not None else "simple_average")
            return rank_boxplot_figure(draws[draws["method"].isin(drawn)], order, true_ranks=truth, uses_labels=uses,
                                       method_order=drawn, title=title)

        # the figure is a function of the fit shown, the data's baselines and the methods drawn: built once
        show_figure(rank_figure, f"{file_label}-rank-distributions", key="fig-ranks",  # compact: sized by the figure
                    memo=("rank-distributions", shown_key, da.table_key(table), ctx.self_exclusion, tuple(drawn), title))
        csv_button(lambda: method_rank_draws(methods), f"{file_label}-rank-draws", label="Rank draws CSV",
                   key="dl-rank-draws")

# -- intervals table ------------------------------------------------------------------------------
if bayes is not None:
    with guard("building the interval table"):
        st.subheader("Posterior summary")
        if approximate_shown:
            st.caption(f"Approximate: {md(approx.label().removeprefix('Approximate: '))}.")
        summary = results.candidate_table_with_truth(shown, shown_key, truth)
        st.dataframe(summary, hide_index=True, width="stretch", column_config={
            **summary_columns(),
            "point_rank": st.column_config.NumberColumn("point rank", help="Rank of the posterior mean of E"),
        })
        csv_button(summary, f"{file_label}-posterior-summary", label="Summary CSV", key="dl-summary")
if bayes is not None:
    with guard("building the leaderboard"):
        from app_support.leaderboard_view import leaderboard_section
        from simplex_core.figures.style import safe_text

        leaderboard_section(results.leaderboard_table(shown, shown_key), file_label,
                            f"{safe_text(ctx.source_label)}: leaderboard ({shown_label})",
                            note=approx.label() if approximate_shown else None, memo=shown_key)

# -- baselines' intervals -----------------------------------------------------------------------
if baseline:
    with guard("building the baseline table"), st.expander("Baselines: scores, ranks and intervals"):
        rows = []
        for name, res in baseline.items():
            s = res.summary()
            s.insert(0, "method", name + (" (uses labels)" if res.uses_labels else ""))
            rows.append(s)
        btable = pd.concat(rows, ignore_index=True)
        st.dataframe(btable, hide_index=True, width="stretch")
        st.caption("Scores mean different things per method: mean score (single judge, simple average, bootstrap), "
                   "log-ability (Bradley–Terry), estimated mean true score on [0, 1] (PPI).")
        csv_button(btable, f"{ctx.source_label}-baselines", label="Baselines CSV", key="dl-baselines")

# -- what to label next --------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=16)
def _label_suggestions(_result, result_key: str, _table, _included, _raters, budget: int) -> pd.DataFrame:
    from simplex_core.methods.labelling import LabelDraws, answers_of, suggest_labels

    answers = answers_of(_table, _included, _raters)
    if len(answers.frame) == 0:
        return pd.DataFrame()
    return suggest_labels(LabelDraws.from_fit(_result), answers, budget, true_labels=_table.scale.true_labels)


def label_suggestions_panel(table, view, source_label: str) -> None:
    """Answers whose true score would most reduce the ranking's uncertainty (simplex_core.methods.labelling)."""
    if view is None or not view.current:
        return  # suggestions reweight the draws of the fit asked for: not a previous or approximate answer
    # computed only while open (on_change="rerun" gives the expander an .open state): the suggestions
    # cost seconds of server CPU per fit, which every visitor would otherwise pay on each new fit
    panel = st.expander("What to label next", key="exp_label_next", on_change="rerun")
    with panel:
        if not panel.open:
            st.caption("Open to compute the suggestions.")
            return
        if view.result_settings.likelihood != "shared-truth":
            st.caption("Label suggestions reweight the draws of the shared-truth model: they need a fit with the "
                       "shared-truth likelihood.")
            return
        budget = int(st.number_input("Answers to suggest", min_value=1, max_value=200, value=20, key="w_label_budget"))
        suggested = _label_suggestions(view.result, view.result_key, table, view.counts.included, view.counts.judges, budget)
        if suggested.empty:
            st.caption("Every answer is already labelled (gold).")
            return
        st.caption(f"A batch of answers whose true score would shrink the uncertainty of the ranking "
                   f"(now {suggested.attrs.get('uncertainty', float('nan')):.3f}: the posterior variances of the ranks, "
                   "summed over candidates), computed by reweighting the posterior draws. Picked one after another: "
                   "each next answer is the best given the labels of those above it, so its expected reduction can "
                   "exceed an earlier one's; “if labelled alone” is its value on its own. A judge's score “None”: no "
                   "score, or excluded as self-family. Label them, add a gold column (true) with their true_score, "
                   "and fit again.")
        probability = {c: st.column_config.NumberColumn(f"P(true = {c.removeprefix('p_true:')})", format="%.3f")
                       for c in suggested.columns if c.startswith("p_true:")}  # one format, not 0.000002 beside 0.7368
        st.dataframe(suggested, hide_index=True, width="stretch", column_config={
            **probability,
            "expected_reduction": st.column_config.NumberColumn(
                "expected reduction", format="%.4f", help="given the labels of the answers above it"),
            "alone_reduction": st.column_config.NumberColumn(
                "if labelled alone", format="%.4f", help="this answer's exact value if it were the only label")})
        csv_button(suggested, f"{source_label}-next-labels", label="Suggestions CSV", key="dl-next-labels")


with guard("suggesting answers to label"):
    label_suggestions_panel(file_table, view, ctx.source_label)  # the answers already labelled are not suggested

# -- pairwise -----------------------------------------------------------------------------------
if bayes is not None:
    with guard("drawing the pairwise probabilities"):
        from simplex_core.figures import pairwise_heatmap_figure

        st.subheader("Who beats whom")
        st.caption("P(row beats column) = the share of posterior draws in which the row's score, as the truth would "
                   "see it (E + δ, the rank intervals' own), is higher.")
        pw = results.pairwise_table(shown, shown_key)
        order_pw = list(results.candidate_table(shown, shown_key)["candidate"])
        title = f"P(row beats column) ({shown_label})"
        show_figure(lambda: pairwise_heatmap_figure(pw, title=title, order=order_pw), f"{file_label}-pairwise",
                    key="fig-pairwise", height=max(420, 40 * len(order_pw) + 160), memo=("pairwise", shown_key, title))
        csv_button(pw, f"{file_label}-pairwise", label="Pairwise CSV", key="dl-pairwise", index=True)

# -- evaluation against the truth -------------------------------------------------------------------
if truth is not None and methods:
    with guard("scoring the methods against the ground truth"):
        from simplex_core.summaries.evaluation import evaluate_results

        st.subheader("Against the ground truth")
        ev = evaluate_results(methods, truth)
        ev["method"] = [m + (" (uses labels)" if u else "") + (" (approximate)" if m == "bayesian" and approximate_shown else "")
                        for m, u in zip(ev["method"], ev["uses_labels"])]
        from simplex_core.summaries.evaluation import ranked_note

        over = [ranked_note(r) for _, r in ev.iterrows()]
        shown_ev = pd.DataFrame({
            "method": ev["method"],
            "spearman": [t + o for t, o in zip(numbers_as_text(ev["spearman"], ".3f", "n/a"), over)],
            "coverage": [t + o for t, o in zip(numbers_as_text(ev["coverage"], ".2f", "n/a"), over)],
            "width": [t if s != s else f"{t} ({s:.0%})" for t, s in
                      zip(numbers_as_text(ev["width"], ".1f", "n/a"), ev["width_share"])],
            "interval_score": numbers_as_text(ev["interval_score"], ".1f", "n/a"),
        })
        st.dataframe(shown_ev, hide_index=True, width="stretch",
                     column_config={"spearman": "Spearman with the truth", "coverage": "Coverage of the true rank",
                                    "width": st.column_config.TextColumn(
                                        "Interval width", help="Mean width of the 95% rank intervals, in ranks "
                                        "(and as a share of the candidates ranked); a point rank has width 1."),
                                    "interval_score": st.column_config.TextColumn(
                                        "Interval score", help="Width plus 40 per rank by which an interval misses "
                                        "the true rank (Gneiting & Raftery, α = 0.05); lower is better.")})
        st.caption("Spearman: agreement of the point ranking with the true ranking (mean true_score). Coverage: share "
                   "of candidates whose true rank is inside the method's 95% interval (a method without intervals covers "
                   "a candidate only when its point rank is exactly right). Coverage has a price: wide intervals cover "
                   "more and say less, so read it with the width; the interval score weighs both (lower is better). "
                   "A method that ranks only part of the candidates (a single judge whose own family's candidates are "
                   "excluded) is scored over those it ranks, against their true order among themselves (\"over 3 of 9\"). "
                   "PPI uses gold labels: not a label-free competitor. "
                   "Intervals for these figures: `python -m simplex_core evaluate`.")
        csv_button(ev, f"{file_label}-evaluation", label="Evaluation CSV", key="dl-evaluation")
