"""Sensitivity: how the ranking moves as ω goes 0 → 8 and β_max goes 0 → 20 (the paper's protocol),
how each candidate's rank interval moves, and whether the current fit can be trusted
(convergence, posterior predictive check)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_support import fits, results
from app_support.downloads import csv_button, json_button, show_figure
from app_support.errors import guard
from app_support.frame import page_frame
from app_support.guide_links import guide_link
from app_support.page_parts import data_caption, fit_header, require_settings, require_table, waiting_for_first_fit
from app_support.sidebar import context
from app_support.state import BASE_BETA_MAX, BASE_OMEGA
from app_support.safe_text import md
from simplex_core.data.selection import selection_record

page_frame()

st.title("Sensitivity")
st.caption("Are the conclusions robust to what we assume about the judges? The paper's protocol: start at ω = 0, "
           "β_max = 5; relax constancy (ω from 0 to 8); vary the judge-quality prior (β_max from 0 to 20). Move ω and "
           "β_max in the sidebar to refit at any setting.")
guide_link("sensitivity")
ctx = context()
if not (require_table(ctx) and require_settings(ctx)):
    st.stop()
data_caption(ctx)
table, settings = ctx.fit_table, ctx.settings  # label-free, as on every page (the data caption says so)

# -- the current fit ------------------------------------------------------------------------------
view = None
with guard("preparing the fit"):
    view = fits.get_fit(table, settings)
    fits.start_grid(view)
    fit_header(view, labels_left_out=ctx.table.n_gold)

# -- the sweep -------------------------------------------------------------------------------------
st.subheader("The sweep")
sweep = fits.sweep_settings(settings)
views: list[fits.FitView] = []
with guard("collecting the sweep's fits"):
    views = [fits.get_fit(table, s, purpose=f"sweep-{s.key()}", priority=fits.SWEEP) for s in sweep]
ready = [v for v in views if v.current]
pending = [v for v in views if not v.current]
if pending:
    fits.sweep_status_panel(pending, total=len(views))

base = next((v for v in ready if v.requested.omega == BASE_OMEGA and v.requested.beta_max == BASE_BETA_MAX), None)
if base is None:
    st.info("The base fit (ω = 0, β_max = 5) is not ready yet: the sweep curves appear as soon as it and another "
            "setting are fitted.", icon=":material/hourglass_top:")
else:
    # said at once; the curves (reweighting the fits on a fine grid) take a moment
    slot = st.empty()
    slot.caption(f"Drawing the sweep's curves: Spearman with the base ranking along ω and β_max, from {len(ready)} "
                 "fitted settings…")
    with guard("comparing the settings with the base"), slot.container():
        from simplex_core.figures import rank_interval_shift_figure, sensitivity_curve_figure
        from simplex_core.figures.style import safe_text

        sens = results.sweep({(v.requested.omega, v.requested.beta_max): v.result for v in ready}, base.requested,
                             base.counts)
        sweep_df = sens.table()
        title = "Spearman with the base ranking (ω = 0, β_max = 5)"
        from app_support.approximate import fine_sweep_figure

        fig = fine_sweep_figure(ready, base, sweep_df, f"{safe_text(ctx.source_label)}: {title}")  # 33 × 41 values by reweighting the fits
        if fig is None:
            fig = sensitivity_curve_figure(sweep_df, base_omega=BASE_OMEGA, base_beta_max=BASE_BETA_MAX,
                                           title=title, subtitle=safe_text(ctx.source_label))
        else:
            st.caption("Dotted: every 0.25 of ω and 0.5 of β_max, by reweighting the fitted posteriors (approximate); "
                       "black points: real fits; grey bands: k̂ > 0.7, where the reweighting cannot be trusted.")
        show_figure(fig, f"{ctx.source_label}-sensitivity", key="fig-sens", height=420)
        rho = sweep_df["spearman_vs_base"].dropna()
        if len(ready) > 1 and len(rho):
            worst = rho.min()
            verdict = ("is stable: it barely moves across the settings fitted so far" if worst >= 0.95 else
                       "moves noticeably: the order of some candidates depends on what is assumed about the judges"
                       if worst >= 0.8 else "depends strongly on the assumptions: read the intervals below with care")
            st.markdown(f"Lowest Spearman with the base ranking: **{worst:.2f}**, so the ranking {verdict}.")
        not_converged = sweep_df[~sweep_df["converged"].astype(bool)]
        if len(not_converged):
            st.warning("Not converged (read these points with care): " + "; ".join(
                f"ω = {r.omega:g}, β_max = {r.beta_max:g}" for r in not_converged.drop_duplicates(["omega", "beta_max"]).itertuples()),
                icon=":material/warning:")
        csv_button(sweep_df, f"{ctx.source_label}-sensitivity", label="Sweep CSV", key="dl-sweep")
        json_button(lambda: {**sens.to_dict(), "selection": selection_record(ctx.table)}, f"{ctx.source_label}-sens",
                    label="sens.json", key="dl-sens-json",
                    help="The command line's sens.json for the settings fitted so far")

        st.subheader("How the rank intervals move")
        which = st.radio("Sweep", ["ω (β_max = 5)", "β_max (ω = 0)"], horizontal=True, key="w_sens_sweep")
        rows = [r for r in sens.rows if r.sweep == ("omega" if which.startswith("ω") else "beta_max")]
        if rows:
            tables = {f"ω = {r.omega:g}, β_max = {r.beta_max:g}": r.candidates for r in rows}
            order = list(results.candidate_table(base.result, base.result_key)["candidate"])
            fig2 = rank_interval_shift_figure(tables, candidate_order=order,
                                              title=f"Median rank and 95% interval per setting ({which})")
            show_figure(fig2, f"{ctx.source_label}-rank-interval-shift", key="fig-shift",
                        height=max(380, 70 + 48 * len(order)))
            long = pd.concat([t.assign(setting=k) for k, t in tables.items()], ignore_index=True)
            csv_button(long, f"{ctx.source_label}-intervals-by-setting", label="Intervals CSV", key="dl-shift")

# -- can the current fit be trusted? ----------------------------------------------------------------
st.subheader(f"Checks of the current fit ({fits.settings_label(settings)})")
if view is None or view.result is None:
    if view is not None:
        waiting_for_first_fit(view)
elif view.origin == "stale":
    st.info("The checks appear when the fit for the current setting is ready.")
else:
    with guard("checking the fit"):
        d = results.diagnostics(view.result)
        if d:
            cols = st.columns(4)
            def num(name: str, spec: str) -> str:
                v = d.get(name)
                return "—" if v is None else format(v, spec)

            cols[0].metric("max R-hat (E_k)", num("max_rhat", ".3f"), help="Needs ≤ 1.01")
            cols[1].metric("min bulk ESS (E_k)", num("min_ess_bulk", ".0f"), help="Needs ≥ 400")
            cols[2].metric("min tail ESS (E_k)", num("min_ess_tail", ".0f"))
            cols[3].metric("divergences", num("divergences", "d"), help="Needs 0")
            (st.success if d.get("converged") else st.warning)(d.get("message") or "", icon=":material/monitor_heart:")
        ppc = results.ppc_table(view.result, view.result_key, view.counts)
        st.markdown("**Posterior predictive check**: does the fitted model reproduce each judge's observed score "
                    "distribution for each candidate?")
        pairs = ppc.drop_duplicates(["judge", "candidate"])
        bad = pairs[~pairs["agrees"].astype(bool) & pairs["included"].astype(bool)]
        bad_excluded = pairs[~pairs["agrees"].astype(bool) & ~pairs["included"].astype(bool)]
        if bad.empty:
            st.success(f"All {int(pairs['included'].sum())} fitted (judge, candidate) pairs agree with the model "
                       "(posterior predictive p ≥ 0.05).", icon=":material/check_circle:")
        else:
            st.warning(f"{len(bad)} of {int(pairs['included'].sum())} fitted (judge, candidate) pairs score "
                       "differently from what the model predicts. The model cannot explain them with one behaviour "
                       "per judge: consider a larger ω, checking the families (self-preference), or leaving that "
                       "judge out.", icon=":material/warning:")
            # every misfit in view up to a screenful (the default height hid rows 11 on behind a scroll bar)
            st.dataframe(bad[["judge", "candidate", "verdict"]], hide_index=True, width="stretch",
                         height="content" if len(bad) <= 20 else "auto")
        if not bad_excluded.empty:
            listed = list(bad_excluded[["judge", "candidate"]].itertuples(index=False))
            n = len(listed)
            st.caption(f"{n} excluded self-family pair{'s' if n > 1 else ''} also disagree{'' if n > 1 else 's'} with the "
                       "model — what self-preference looks like: " + "; ".join(f"{md(j)} on {md(k)}" for j, k in listed[:6])
                       + (f"; and {n - 6} more (all in the PPC CSV below)" if n > 6 else "") + ".")
        from simplex_core.figures import ppc_figure
        from simplex_core.summaries.posterior_views import ppc_figure_table

        fig3 = ppc_figure(ppc_figure_table(ppc),
                          title="Observed vs fitted shares (one point per judge, candidate and level)")
        show_figure(fig3, f"{fits.download_stem(ctx.source_label, settings)}-ppc", key="fig-ppc", height=520)
        csv_button(ppc, f"{fits.download_stem(ctx.source_label, settings)}-ppc", label="PPC CSV", key="dl-ppc")
