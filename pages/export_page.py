"""Export: every table as CSV, the posterior as NetCDF, the settings and the full result as JSON, and a
link that reproduces the current view. (Figures download as HTML beside each figure.)"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from app_support import data_access as da
from app_support import fits, results
from app_support.downloads import csv_button, json_button, netcdf_button, static_export_available
from app_support.errors import guard
from app_support.frame import page_frame
from app_support.guide_links import guide_link
from app_support.page_parts import data_caption, require_settings, require_table
from app_support.safe_text import md
from app_support.sidebar import context
from simplex_core.data.selection import selection_record

page_frame()

st.title("Export")
st.caption("Everything on the other pages, as files. Each figure also has its own download buttons beside it "
           "(interactive HTML" + (", PNG, SVG" if static_export_available() else
                                  "; PNG/SVG need the optional `kaleido` package and Chromium") + ").")
guide_link("export")
ctx = context()

st.subheader("Link to this view")
query = urlencode(st.query_params.to_dict())
base = st.context.url or "http://localhost:8501/"
st.code(f"{base.split('?')[0]}?{query}" if query else base, language=None, wrap_lines=True)
st.caption("The address carries the dataset, the criterion, the candidates and judges left out and the model settings: "
           "opening it shows the same view. "
           "An uploaded file cannot travel in a link.")

if not (require_table(ctx) and require_settings(ctx)):
    st.stop()
data_caption(ctx)
# the file's rows as read (gold column included); every fit and method on the label-free table, as on every page
file_table, table, settings = ctx.table, ctx.fit_table, ctx.settings
label = ctx.source_label


def _data_record() -> dict:
    from simplex_core.summaries.posterior_tables import data_record

    return data_record(table, ctx.dataset.name if ctx.dataset is not None else None, ctx.collapsed)


def settings_payload() -> dict:
    """The fit's reproducibility record, as ``fit``'s result.json has it under ``settings`` (the fit need not
    have run: the counts and settings it will read stand in for it)."""
    from simplex_core.summaries.posterior_tables import settings_record

    return settings_record(counts=fits.counts_for(table, da.table_key(table), settings.self_exclusion), settings=settings,
                           command_line=_command_line(), selection=selection_record(table), data=_data_record(),
                           extra_versions=("streamlit", "plotly"))


def _command_line() -> str:
    if ctx.dataset is None:
        return "(an uploaded file: save it and pass its path as DATA)"
    from simplex_core.summaries.command_lines import fit_command_line

    return fit_command_line(ctx.dataset.name, settings, ctx.criterion, one_option_per_line=True,
                            left_out=selection_record(table))


st.subheader("Settings")
json_button(settings_payload, f"{label}-settings", label="Settings JSON", key="dl-settings")
st.code(_command_line(), language="bash", wrap_lines=True)
if ctx.collapsed:
    st.caption("The analysis uses collapsed levels; the command line reads the full scale (collapse the file first).")
if file_table.n_gold:
    st.caption("The command line's `fit` observes the true level of the file's gold answers; the app's fits leave them "
               "out (label-free): drop the `gold` column to reproduce them.")

st.subheader("Data")
with guard("preparing the data downloads"):
    c = st.columns(3)
    with c[0]:
        csv_button(lambda: da.rows_table(file_table), f"{label}-rows", label="Rows CSV", key="dl-x-rows")
    with c[1]:
        csv_button(lambda: da.distribution(table, da.table_key(table)), f"{label}-distribution", label="Score distribution CSV",
                   key="dl-x-dist")
    with c[2]:
        csv_button(lambda: da.distribution_wide(table, da.table_key(table)), f"{label}-distribution-wide",
                   label="Distribution (wide) CSV", key="dl-x-dist-wide", index=True)

st.subheader(f"The fit ({fits.settings_label(settings)})")
view = None
with guard("looking up the fit"):
    view = fits.get_fit(table, settings)  # a setting chosen here is fitted here, as on every page with the sliders
if view is None or not view.current:
    if view is not None:
        fits.fit_status_panel(view)  # progress and Cancel; the page redraws when the fit lands
    if view is None or view.job is None or not view.job.is_final:
        st.info("The fit's downloads appear here when the fit for these settings lands.", icon=":material/hourglass_top:")
else:
    with guard("preparing the fit downloads"):
        key = view.result_key
        r = view.result
        fit_label = fits.download_stem(label, view.result_settings)  # the fit's files name their setting
        if view.origin == "precomputed":
            st.caption("This is the precomputed fit shipped with the app (thinned posterior).")
        c = st.columns(3)
        with c[0]:
            netcdf_button(r.idata, f"{fit_label}-posterior", key="dl-x-nc")
        with c[1]:
            json_button(lambda: results.result_json(r, key, view.counts, _command_line(), selection_record(table), _data_record()), f"{fit_label}-result", label="result.json",
                        key="dl-x-result", help="The command line's result.json: candidates, pairwise, judges, diagnostics, settings")
        with c[2]:
            csv_button(lambda: results.candidate_table_with_truth(r, key, da.truth_ranks(table, da.table_key(table))),
                       f"{fit_label}-posterior-summary", label="Candidate summary CSV",
                       key="dl-x-summary")
        c = st.columns(3)
        with c[0]:
            csv_button(lambda: results.rank_probability_table(r, key), f"{fit_label}-rank-probabilities",
                       label="Rank probabilities CSV", key="dl-x-rankprob", index=True)
        with c[1]:
            csv_button(lambda: results.pairwise_table(r, key), f"{fit_label}-pairwise", label="Pairwise CSV", key="dl-x-pairwise",
                       index=True)
        with c[2]:
            csv_button(lambda: results.judge_matrix_table(r, key), f"{fit_label}-judge-matrices", label="Judge matrices CSV",
                       key="dl-x-judges")
        c = st.columns(3)
        with c[0]:
            csv_button(lambda: results.ppc_table(r, key, view.counts), f"{fit_label}-ppc", label="Posterior predictive CSV",
                       key="dl-x-ppc")
        with c[1]:
            csv_button(lambda: results.rank_draws(r, key), f"{fit_label}-rank-draws", label="Rank draws CSV", key="dl-x-rankdraws")
        with c[2]:
            csv_button(lambda: results.leaderboard_table(r, key), f"{fit_label}-leaderboard", label="Leaderboard CSV",
                       key="dl-x-leaderboard")

st.subheader("Baselines")
ordinal = None
with guard("looking up the ordinal model's fit"):
    from app_support.ordinal_fit import ordinal_fit, ordinal_status_panel

    ordinal = ordinal_fit(table, ctx.self_exclusion, submit=False)  # fitted on request only (below)
with guard("preparing the baseline downloads"):
    import pandas as pd

    def baseline_table() -> pd.DataFrame:
        out = []
        for name, res in da.baseline_results(table, da.table_key(table), ctx.self_exclusion)[0].items():
            s = res.summary()
            s.insert(0, "method", name)
            s.insert(1, "uses_labels", res.uses_labels)
            out.append(s)
        return pd.concat(out, ignore_index=True)

    csv_button(baseline_table, f"{label}-baselines", label="Baselines CSV", key="dl-x-baselines")

    truth = da.truth_ranks(table, da.table_key(table))
    if truth is not None:
        # the rows of the Rankings page's evaluation table: the labelled ranking and the Bayesian fit when
        # this setting's fit is ready, the baselines, the ordinal model when its fit has landed
        fitted = view is not None and view.current and view.result is not None
        bayes = results.bayesian_method_result(view.result, view.result_key) if fitted else None
        labelled = labelled_why = None
        if fitted and file_table.n_gold:
            if view.result_settings.likelihood == "shared-truth":
                labelled, labelled_why = results.labelled_ranking(view.result, view.result_key, file_table,
                                                                  da.table_key(file_table), view.counts, ctx.self_exclusion)
            else:
                labelled_why = "it reads the shared-truth fit's predictions per answer."
        evaluated = results.evaluation_methods(
            bayes, da.baseline_results(table, da.table_key(table), ctx.self_exclusion)[0], labelled,
            ordinal.result if ordinal is not None else None)

        def evaluation_table() -> pd.DataFrame:
            """Every method against the truth: Spearman, coverage and its price (interval width, interval
            score), over how many candidates."""
            from simplex_core.summaries.evaluation import evaluate_results

            return evaluate_results(evaluated, truth)

        csv_button(evaluation_table, f"{label}-evaluation", label="Evaluation against the truth CSV",
                   key="dl-x-evaluation")
        later = ([] if fitted else ["the Bayesian fit's rows join when it lands (above)"]) + (
            ["the ordinal model's row joins when its fit has landed (below)"]
            if ordinal is not None and ordinal.why is None and ordinal.result is None else [])
        if labelled_why:
            later.append(f"no ranking with the file's labels: {labelled_why.removesuffix('.')}")
        st.caption(f"Rows of the evaluation CSV: {md(', '.join(evaluated))}" + "".join(f"; {md(t)}" for t in later) + ".")

st.subheader("Ordinal many-facet model (label-free)")
with guard("preparing the ordinal model's download"):
    if ordinal is None:
        pass  # the look-up failed, said above
    elif ordinal.result is not None:
        def ordinal_table() -> pd.DataFrame:
            res = ordinal.result
            s = res.summary()
            s.insert(0, "method", res.method)
            s.insert(1, "uses_labels", res.uses_labels)
            s["p_best"] = [res.details.get(f"p_best:{c}") for c in s["candidate"]]
            return s

        csv_button(ordinal_table, f"{label}-ordinal", label="Ordinal model CSV", key="dl-x-ordinal",
                   help="The label-free ordinal many-facet model: quality on the logit scale, rank, 95% rank interval, "
                        "P(best)")
    elif ordinal.why is not None:
        st.caption(f"The ordinal model cannot run on these data: {md(str(ordinal.why))}")
    elif ordinal.job is not None:
        ordinal_status_panel(ordinal)
    else:
        st.caption("The label-free competitor a psychometrician would fit (cumulative logits with judge severities and "
                   "cutpoints): an MCMC fit of a minute or more, run in the background on request. Its table is offered "
                   "here when it lands (the Rankings page's ordinal switch fits it too).")
        if st.button("Fit the ordinal model", key="x-fit-ordinal", icon=":material/play_arrow:"):
            ordinal_fit(table, ctx.self_exclusion)
            st.rerun()

st.subheader("Figures for slides and papers")
st.caption("The main figures at a fixed page size, with a title and a caption naming the dataset, the setting and the "
           "likelihood. Reproduce the paper's figure types (simplex with posterior judge triangles, rank boxes by method "
           "in true-rank order, sensitivity curves) on this dataset from the command line:")
from simplex_core.summaries.command_lines import figures_command_line

st.code(figures_command_line(ctx.dataset.name if ctx.dataset is not None else "DATA", ctx.criterion,
                             selection_record(table)),
        language="bash", wrap_lines=True)
FIGURES = ["Rank distributions", "All judges on the simplex", "Sensitivity curves"]


def _sensitivity_page():
    """The sensitivity curves over the sweep settings fitted so far (never starts a fit: the Sensitivity
    page does), with the base setting and how many settings are drawn in the caption."""
    from simplex_core import figures as F
    from simplex_core.figures import slides as S
    from app_support.state import BASE_BETA_MAX, BASE_OMEGA

    views = [fits.get_fit(table, s, purpose=f"sweep-{s.key()}", submit=False) for s in fits.sweep_settings(settings)]
    ready = [v for v in views if v.current and v.result is not None]
    base = next((v for v in ready if (v.requested.omega, v.requested.beta_max) == (BASE_OMEGA, BASE_BETA_MAX)), None)
    if base is None or len(ready) < 2:
        st.info(f"{len(ready)} of the sweep's {len(views)} settings are fitted: open the Sensitivity page to fit them "
                "(the curves need the base ω = 0, β_max = 5 and at least one other setting).", icon=":material/hourglass_top:")
        return None
    sens = results.sweep({(v.requested.omega, v.requested.beta_max): v.result for v in ready}, base.requested, base.counts)
    fig = F.sensitivity_curve_figure(sens.table(), title="", base_omega=BASE_OMEGA, base_beta_max=BASE_BETA_MAX)
    note = ("base setting above; ω swept at β_max = 5 and β_max at ω = 0"
            + ("" if len(ready) == len(views) else f" ({len(ready)} of {len(views)} settings fitted)"))
    return fig, "How much the ranking moves as the priors change", S.figure_caption(label, base.requested, note), base.requested


def _slide_figure(which: str):
    """(figure, title, caption, the setting it shows) for the chosen figure, or None (with a message) when it
    cannot be drawn yet. The curves show the sweep around the base setting, whatever the sidebar's: their
    file is named by the base (a name with the sidebar's ω = 0.75 read as another figure)."""
    from simplex_core import figures as F
    from simplex_core.summaries.evaluation import figure_order, method_rank_draws
    from simplex_core.figures import slides as S
    from simplex_core.summaries.posterior_views import judge_simplex_data

    if which == "Sensitivity curves":
        return _sensitivity_page()
    if view is None or not view.current or view.result is None:
        st.info("This figure appears when the fit for these settings is ready (its progress is shown above).",
                icon=":material/hourglass_top:")
        return None
    r, key = view.result, view.result_key
    shown = view.result_settings or settings
    caption = S.figure_caption(label, shown)
    if which == "Rank distributions":
        methods = {"bayesian": results.bayesian_method_result(r, key)}
        methods |= da.baseline_results(table, da.table_key(table), ctx.self_exclusion)[0]
        keep = [m for m in methods if not m.startswith("single_judge:")]
        draws = method_rank_draws({m: methods[m] for m in keep})
        truth = da.truth_ranks(table, da.table_key(table))  # as on Rankings: true-rank order and stars
        fig = F.rank_boxplot_figure(draws, figure_order(draws, truth), true_ranks=truth,
                                    uses_labels={m: bool(methods[m].uses_labels) for m in keep}, method_order=keep, title="")
        return fig, "Rank distributions by method", caption, shown
    if table.scale.n_levels not in (2, 3):
        st.info("This table has more than 3 levels: the simplex grid for slides is drawn by the command above "
                "(it collapses to 3 levels and refits).")
        return None
    parts = judge_simplex_data(r, da.distribution(table, da.table_key(table)), 40)
    fig = S.ternary_judges_grid_figure(parts, list(table.scale.labels), true_labels=list(table.scale.true_labels))
    return fig, "Judges on the simplex: posterior judge triangles", caption, shown


@st.cache_data(max_entries=16, show_spinner="Drawing the page as it will be saved…")
def _page_png(spec: str) -> bytes:
    import plotly.io as pio

    return pio.from_json(spec).to_image(format="png", scale=1)


def _preview(page) -> None:
    """The page as its file will look: an image scaled to the column. Drawn by Plotly in the page, a
    1280-px slide squeezed into a 560-px column ran its panels and labels into each other."""
    if static_export_available():
        try:
            st.image(_page_png(page.to_json()), width="stretch",
                     caption=f"Preview of the {page.layout.width} × {page.layout.height} px page")
            return
        except Exception:  # noqa: BLE001 — the exporter failed: the interactive figure instead
            pass
    st.plotly_chart(page, theme=None, key="slide-preview", width="content", config={"displaylogo": False})


with guard("preparing the figures for slides"):
    from app_support.downloads import slug
    from simplex_core.figures import slides as S

    c = st.columns([2, 1])
    which = c[0].radio("Figure", FIGURES, horizontal=True, key="w_slide_fig")
    size = c[1].radio("Page", list(S.PAGE_SIZES), horizontal=True, key="w_slide_size",
                      format_func=lambda s: "16:9 slide" if s == "16:9" else "paper figure")
    drawn = _slide_figure(which)
    if drawn is not None:
        fig, title, caption, shown = drawn
        page = S.for_slides(fig, title, caption, size=size)
        name = f"{fits.download_stem(label, shown)}-{which}-{size.replace(':', 'x')}"
        _preview(page)
        b = st.columns(3)
        b[0].download_button("HTML", data=lambda: page.to_html(include_plotlyjs=True, full_html=True),
                             file_name=f"{slug(name)}.html", mime="text/html", key="dl-slide-html", on_click="ignore",
                             icon=":material/download:")
        if static_export_available():
            b[1].download_button("PNG", data=lambda: page.to_image(format="png", scale=2), file_name=f"{slug(name)}.png",
                                 mime="image/png", key="dl-slide-png", on_click="ignore", icon=":material/download:")
            b[2].download_button("SVG", data=lambda: page.to_image(format="svg"), file_name=f"{slug(name)}.svg",
                                 mime="image/svg+xml", key="dl-slide-svg", on_click="ignore", icon=":material/download:")
