"""A centred, ordered judge prior, prototyped in PyMC: does it close the skewed-scale loss?

docs/DIAGNOSIS-real-data.md, part 6: on a crowded 5-level scale the default ranking falls behind the
judges' plain mean because the weight-propagation prior leans lenient (a 4 reads as a true 3), while
the centred diagonal prior ranks ahead of the plain mean but lets judges be read as flipped (separate
modes, fits of minutes). This prototype keeps the product's shared-truth model (``build_model`` with
``FitSettings()``) and swaps only the judge prior for a latent-threshold (ordinal) judge, centred and
ordered by construction::

    P(score ≤ m | true level t) = logistic(s_j (c_jm − t − ℓ_j)),   m = 0 .. M−2 (level indices)
    c_j0 = 0.5, c_jm = c_j(m−1) + exp(γ_jm)                           (cut-points near the midpoints)
    s_j ~ LogNormal(log 3, 0.5), ℓ_j ~ Normal(0, 0.5), γ_jm ~ Normal(0, 0.3)

so every row stochastically dominates the one above (no flipped judge, no extra mode) and, before any
data, a judge scores each true level around that level (only the end levels are pulled inward). The
product's ρ_j and β_max stay in the model, unused by this prior. Every figure was fixed before the first
run. Compared, per case, with the product's default fit and the plain mean on
``bench.latent_quality_robustness.simulate_case``; rankings from E_k alone. Asserts nothing.

Usage (repo root, project venv)::

    nice -n 10 .venv/bin/python -m bench.ordered_judge_prior_prototype --cases skewed:0,skewed:1,latent:0
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

S_LOG_MEAN, S_LOG_SD, LENIENCY_SD, GAP_LOG_SD = float(np.log(3.0)), 0.5, 0.5, 0.3


def ordered_judge_rows(prior, scale, strength, J: int, T: int, M: int, correct):
    """Θ [J, T, M] of the latent-threshold judge (the module docstring); the signature of
    ``simplex_core.model.definition._judge_prior``, whose arguments other than the sizes it ignores."""
    import pymc as pm
    import pytensor.tensor as pt

    s = pm.LogNormal("discrimination", S_LOG_MEAN, S_LOG_SD, shape=J)
    lenient = pm.Normal("leniency", 0.0, LENIENCY_SD, shape=J)
    if M > 2:
        gamma = pm.Normal("log_gap", 0.0, GAP_LOG_SD, shape=(J, M - 2))
        cuts = pt.concatenate([pt.full((J, 1), 0.5), 0.5 + pt.cumsum(pt.exp(gamma), axis=1)], axis=1)  # [J, M-1]
    else:
        cuts = pt.full((J, 1), 0.5)
    true_pos = np.asarray(correct, dtype=float)  # the observed position of each true level
    z = s[:, None, None] * (cuts[:, None, :] - true_pos[None, :, None] - lenient[:, None, None])  # [J, T, M-1]
    cdf = pm.math.sigmoid(z)
    upper = pt.concatenate([cdf, pt.ones((J, T, 1))], axis=2)
    lower = pt.concatenate([pt.zeros((J, T, 1)), cdf], axis=2)
    return pt.clip(upper - lower, 1e-12, 1.0)  # build_model names it theta


def fit_ordered(counts, seed: int, draws: int = 1000, tune: int = 1000, chains: int = 4):
    """The product's shared-truth model with :func:`ordered_judge_rows` as its judge prior, sampled by
    :func:`bench.answer_effect_prototype.sample_expected_scores`: E_k draws and their diagnostics."""
    import simplex_core.model.definition as definition
    from bench.answer_effect_prototype import sample_expected_scores
    from simplex_core.model.settings import FitSettings

    original = definition._judge_prior  # a prototype: the product's priors have no hook for a new one yet
    definition._judge_prior = ordered_judge_rows
    try:
        model = definition.build_model(counts, FitSettings())
    finally:
        definition._judge_prior = original
    E, diag, _ = sample_expected_scores(model, len(counts.candidates), seed, draws, tune, chains)
    return E, diag


def main(argv: list[str] | None = None) -> None:
    from bench.answer_effect_prototype import draws_method_result
    from bench.latent_quality_robustness import LEVELS, print_table, simulate_case
    from bench.speed import uptime
    from simplex_core.data.scale import Scale
    from simplex_core.data.table import load_table
    from simplex_core.data.views import count_tensor, item_view
    from simplex_core.inference.fitting import fit_model
    from simplex_core.methods.baselines import run_methods, table_baseline_methods
    from simplex_core.model.settings import FitSettings
    from simplex_core.summaries.evaluation import evaluate_results, true_ranks

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default="skewed:0,skewed:1,skewed:2,skewed:3,latent:0", help="scenario:seed, comma-separated")
    args = p.parse_args(argv)
    print(f"# bench.ordered_judge_prior_prototype  {time.strftime('%Y-%m-%d %H:%M:%S')}  cases={args.cases}; "
          f"s ~ LogNormal(log 3, {S_LOG_SD}), leniency ~ N(0, {LENIENCY_SD}), log gaps ~ N(0, {GAP_LOG_SD}); "
          "nutpie 4 chains x 1000 + 1000; rankings by E_k")
    print(f"# load before: {uptime()}", flush=True)
    scale = Scale(tuple(float(v) for v in range(1, LEVELS + 1)))
    rows = []
    for case in args.cases.split(","):
        scenario, seed = case.split(":")
        table = load_table(simulate_case(scenario, int(seed)), scale=scale)
        counts = count_tensor(table)
        fit = fit_model(counts, FitSettings(seed=int(seed)))
        E_default = np.asarray(fit.idata.posterior["expected_score"].values).reshape(-1, len(counts.candidates))
        results = {"default (E_k)": draws_method_result(E_default, counts.candidates, "default (E_k)")}
        methods = table_baseline_methods(table, ppi_fractions=(), single_judges=False)
        results |= run_methods(item_view(table), {"simple_average": methods["simple_average"]}, rng=0)
        E, diag = fit_ordered(counts, int(seed))
        results["ordered prior"] = draws_method_result(E, counts.candidates, "ordered prior")
        ev = evaluate_results(results, true_ranks(item_view(table))).set_index("method")
        for method, e in ev.iterrows():
            rows.append({"scenario": scenario, "seed": int(seed), "method": method, "spearman": e["spearman"],
                         "coverage": e["coverage"], "width": e["width"]})
        print(f"  {case}: ρ ordered {ev.loc['ordered prior', 'spearman']:.3f} default "
              f"{ev.loc['default (E_k)', 'spearman']:.3f} mean {ev.loc['simple_average', 'spearman']:.3f}; ordered "
              f"coverage {ev.loc['ordered prior', 'coverage']:.2f} width {ev.loc['ordered prior', 'width']:.1f}; "
              f"E_k R-hat ≤ {diag['rhat']:.3f}, bulk ESS ≥ {diag['ess_bulk']:.0f}, {diag['divergences']} divergences; "
              f"compile {diag['compile_s']:.0f} s, sample {diag['sample_s']:.0f} s; default {fit.diagnostics.message}",
              flush=True)
    print_table(pd.DataFrame(rows), per="seed", digits=3)
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
