"""Why the default ranking loses to the simple average, or misses coverage, on real data.

For every built-in dataset-criterion with item-level truth: the default fit (``FitSettings()``:
shared truth, ω = 0, β_max = 5, 4 chains × 1000 + 1000, self-family exclusion on) and the
integrated fit (``integrated=True``), both through the fit cache (a rerun is free), against the
label-free baselines run on the same data view. Prints:

1. one summary row per dataset-criterion: Spearman with the true ranking (default, integrated,
   simple average, Bradley–Terry, the single judges' range), coverage of the 95% rank intervals,
   the candidates missed and how many of those misses overlap the truth's own 95% rank interval
   (items resampled: a truth from few items or noisy raters cannot rank near-tied candidates), the
   mean width of that interval, convergence, and the figures that explain a loss — PPC misfits (judge × candidate pairs with
   posterior predictive p < 0.05), judge × candidate bias (spread of each judge's error over
   candidates once its overall leniency is removed) and whether judges share it (mean correlation
   across judges), conditional dependence (judges' scores correlated across answers of one true
   level: the shared-truth likelihood assumes 0), judges left per candidate after self-family exclusion, the most near-constant
   judge (share of its modal level), where E_k sits against the true means (slope, offset, share of
   true means inside the 95% E_k interval), and ω, β_max of the integrated fit;
2. per dataset-criterion, a per-judge block (Spearman alone, leniency, bias spread, modal share,
   balanced accuracy against the rounded truth vs the posterior Θ_j's, PPC misfits, how closely the
   posterior ranking follows the judge) and a per-candidate block (true mean, E_k and interval, true
   rank and rank interval, simple average, the judges' consensus error).

Asserts nothing. A criterion whose every judge shares a family with some candidate (FaithBench's
LLM judges, all OpenAI, on two OpenAI candidates) cannot be fitted with exclusion on; it is run
with exclusion off, and the row says so (``excl`` = off).

Usage (repo root, project venv; niced, one fit at a time)::

    nice -n 10 .venv/bin/python -m bench.diagnose_real > bench/results/diagnose_real.md
    .venv/bin/python -m bench.diagnose_real --pairs summhay:coverage --no-integrated
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.speed import uptime

PAIRS = ("triviaqa-v1:correctness", "triviaqa-v2:correctness", "faithbench:consistency",
         "faithbench:consistency-with-detectors", "summhay:coverage", "topical-chat:coherence",
         "topical-chat:engagingness", "topical-chat:naturalness", "topical-chat:groundedness", "hanna:relevance",
         "hanna:coherence", "hanna:empathy", "hanna:surprise", "hanna:engagement", "hanna:complexity")


def _f(x: float, d: int = 2) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:.{d}f}"


def _conv(diag) -> str:
    return f"{'yes' if diag.converged else 'NO'} ({diag.max_rhat:.3f}/{diag.min_ess_bulk:.0f}/{diag.divergences})"


def diagnose_pair(pair: str, cache, integrated: bool) -> tuple[str, list[str]]:
    from simplex_core.summaries import judge_diagnostics as JD
    from simplex_core.methods.baselines import run_methods, table_baseline_methods
    from simplex_core.data.problems import ValidationError
    from simplex_core.data.views import count_tensor, item_view
    from simplex_core.data.datasets import load_dataset
    from simplex_core.summaries.evaluation import evaluate_results, true_ranks
    from simplex_core.inference.fit_cache import fit_cached
    from simplex_core.model.settings import FitSettings
    from simplex_core.summaries.posterior_views import bayesian_method_result
    from simplex_core.summaries.posterior_tables import candidate_summary, hyperparameter_records, judge_matrices, posterior_predictive_check

    name, criterion = pair.split(":")
    table = load_dataset(name, criterion=criterion)
    excl = True
    try:
        counts = count_tensor(table, self_exclusion=True)
    except ValidationError:  # every judge of some candidate is of its family
        excl = False
        counts = count_tensor(table, self_exclusion=False)
    truth = true_ranks(item_view(table))
    view = item_view(table, self_exclusion=excl)
    tmeans = JD.truth_means(view)

    t0 = time.perf_counter()
    fit = fit_cached(counts, FitSettings(self_exclusion=excl), cache)
    t_fit = time.perf_counter() - t0
    methods = table_baseline_methods(table, self_exclusion=excl, single_judges=True, ppi_fractions=())
    results = run_methods(item_view(table), {m: f for m, f in methods.items() if m != "bootstrap"}, rng=0)
    results["bayesian"] = bayesian_method_result(fit, max_draws=None)
    ifit = None
    if integrated:
        t1 = time.perf_counter()
        ifit = fit_cached(counts, FitSettings(self_exclusion=excl, integrated=True), cache)
        t_ifit = time.perf_counter() - t1
        results["integrated"] = bayesian_method_result(ifit, max_draws=None, method="integrated")
    ev = evaluate_results(results, truth).set_index("method")
    judges = list(table.judges)
    # a judge excluded on some candidates ranks only the others: its Spearman over those
    single = {j: JD.spearman_with(JD.judge_means(view).loc[j], JD.truth_means(view)) for j in judges}

    # (a) posterior predictive check, included pairs only (excluded ones say self-preference, not misfit)
    ppc = posterior_predictive_check(fit).drop_duplicates(["judge", "candidate"])
    inc = ppc[ppc["included"] & (ppc["n"] > 0)]
    misfit = inc[~inc["agrees"]]
    # (b) judge x candidate bias and errors shared across judges
    errors = JD.judge_errors(view)
    dec = JD.error_decomposition(errors)
    # (b') errors shared answer by answer, given the truth (the likelihood assumes none)
    cond_dep = JD.conditional_dependence(view, table.scale.true_values)
    # how sure the truth is of its own ranking (items resampled): a miss inside that is no clear miss
    tri = JD.truth_rank_intervals(item_view(table), n_boot=1000, seed=0)
    # (c) judges per candidate after exclusion
    per_cand = np.asarray(counts.included).sum(axis=0)
    # (d) near-constant judges
    modal = JD.modal_share(view)
    # (e) E_k against the true means
    cs = candidate_summary(fit, sort=False).set_index("candidate")
    shr = JD.shrinkage(cs["expected_score_mean"], tmeans, cs["expected_score_lo"], cs["expected_score_hi"])
    post_theta = judge_matrices(fit)
    scale = table.scale
    emp_ba = {j: JD.balanced_accuracy(JD.empirical_confusion(view, j, scale.true_values, scale.values)) for j in judges}
    post_ba = {j: JD.balanced_accuracy(post_theta[j].to_numpy()) for j in judges}
    means = JD.judge_means(view)
    foll = JD.follows(cs["expected_score_mean"], means)
    # (f) integrated mode
    hyper = hyperparameter_records(ifit) if ifit is not None else {}

    k, jn, n = len(table.candidates), len(judges), len(table.items)
    bay = results["bayesian"]
    miss = [c for c in table.candidates if not (bay.rank_lo[c] <= truth[c] <= bay.rank_hi[c])]
    n_miss = len(miss)
    n_miss_amb = sum(1 for c in miss if bay.rank_lo[c] <= tri.loc[c, "rank_hi"] and tri.loc[c, "rank_lo"] <= bay.rank_hi[c])
    rho_j = [v for v in single.values() if np.isfinite(v)]
    d = fit.diagnostics
    row = [
        pair, f"{k}×{jn}×{n}", "on" if excl else "off",
        _f(ev.loc["bayesian", "spearman"]), _f(ev.loc["simple_average", "spearman"]), _f(ev.loc["bradley_terry", "spearman"]),
        f"{_f(min(rho_j))}–{_f(max(rho_j))}" if rho_j else "–",
        _f(ev.loc["bayesian", "coverage"]), f"{n_miss} ({n_miss_amb})", _f(float((tri['rank_hi'] - tri['rank_lo']).mean()), 1),
        _conv(d),
        f"{len(misfit)}/{len(inc)}",
        f"{_f(float(dec['interaction_sd'].mean()))} / {_f(dec['shared_corr'])}",
        _f(cond_dep),
        f"{int(per_cand.min())}",
        f"{_f(float(modal.max()))} ({modal.idxmax()})",
        f"{_f(shr['slope'])} / {_f(shr['offset'], 2)} / {_f(shr['covered'])}",
    ]
    if ifit is not None:
        om, bm = hyper.get("omega", {}), hyper.get("beta_max", {})
        row += [
            f"{_f(ev.loc['integrated', 'spearman'])} / {_f(ev.loc['integrated', 'coverage'])} / {_conv(ifit.diagnostics)}",
            f"{_f(om.get('mean'))} [{_f(om.get('lo'))}, {_f(om.get('hi'))}]",
            f"{_f(bm.get('mean'), 1)} [{_f(bm.get('lo'), 1)}, {_f(bm.get('hi'), 1)}]",
        ]
    summary_line = "| " + " | ".join(row) + " |"

    lines = [f"### {pair}  (exclusion {'on' if excl else 'OFF: every judge of some candidate is of its family'}; "
             f"default fit {t_fit:.1f} s" + (f", integrated {t_ifit:.1f} s" if ifit is not None else "") + ")", ""]
    lines.append("| judge | ρ alone (its candidates) | leniency | bias SD | modal share | BA vs truth | BA posterior Θ | PPC misfits | posterior follows ρ |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for j in judges:
        nm = int((misfit["judge"] == j).sum())
        ni = int((inc["judge"] == j).sum())
        lines.append(f"| {j} | {_f(single[j])} | {_f(float(dec['leniency'][j]), 3)} | {_f(float(dec['interaction_sd'][j]), 3)} | "
                     f"{_f(float(modal[j]))} | {_f(emp_ba[j])} | {_f(post_ba[j])} | {nm}/{ni} | {_f(float(foll[j]))} |")
    lines.append("")
    sa = results["simple_average"].scores
    lines.append("| candidate | true mean | E_k [95%] | true rank [truth's own 95%] | rank [95%] | covered | simple avg | consensus error | judges |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for c_i, c in enumerate(table.candidates):
        tr = truth[c]
        lo, hi = bay.rank_lo[c], bay.rank_hi[c]
        lines.append(
            f"| {c} | {_f(float(tmeans[c]), 3)} | {_f(cs.loc[c, 'expected_score_mean'], 3)} [{_f(cs.loc[c, 'expected_score_lo'], 3)}, "
            f"{_f(cs.loc[c, 'expected_score_hi'], 3)}] | {tr:g} [{tri.loc[c, 'rank_lo']:g}, {tri.loc[c, 'rank_hi']:g}] | {bay.ranks[c]:g} [{lo:g}, {hi:g}] | {'yes' if lo <= tr <= hi else '**no**'} | "
            f"{_f(float(sa[c]), 3)} | {_f(float(dec['consensus'][c]), 3)} | {int(per_cand[c_i])} |")
    if len(misfit):
        worst = misfit.sort_values("p_value").head(3)
        lines.append("")
        lines.append("PPC misfits (worst 3): " + "; ".join(f"{r.judge} on {r.candidate}: {r.verdict}" for r in worst.itertuples()))
    lines.append("")
    return summary_line, lines


def main(argv: list[str] | None = None) -> None:
    from simplex_core.inference.fit_cache import FitCache

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", default=",".join(PAIRS), help="dataset:criterion,... (default: every one with truth)")
    p.add_argument("--no-integrated", action="store_true", help="skip the integrated fits")
    args = p.parse_args(argv)
    cache = FitCache()
    integrated = not args.no_integrated
    print(f"# bench.diagnose_real  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"# load before: {uptime()}")
    print()
    header = ["data", "K×J×n", "excl", "ρ default", "ρ simple avg", "ρ BT", "ρ single judges (their candidates)", "coverage", "missed (overlapping the truth's own interval)",
              "truth's own rank interval width", "converged (R-hat/ESS/div)", "PPC misfit pairs", "bias SD / shared r", "cond. dep. r", "min judges per cand",
              "max modal share", "E_k slope / offset / E-cov"]
    if integrated:
        header += ["integrated ρ / cov / converged", "ω [95%]", "β_max [95%]"]
    rows, blocks = [], []
    for pair in args.pairs.split(","):
        row, block = diagnose_pair(pair, cache, integrated)
        rows.append(row)
        blocks.append(block)
        print("\n".join(block), flush=True)
    print("## Summary")
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    print("\n".join(rows))
    print()
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
