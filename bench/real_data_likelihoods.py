"""Both likelihoods against the label-free baselines on every built-in dataset with truth.

For each of the 12 dataset-criterion pairs with item-level truth: the true ranking (mean
``true_score``), the label-free baselines (simple average, bootstrap, Bradley–Terry) and the Bayesian
model at the default settings (ω = 0, β_max = 5, 4 chains × 1000 + 1000) with each likelihood; prints
Spearman with the true ranking, coverage of the true ranks by the 95% rank intervals, mean interval
width and the fit's convergence, then the two counts of the targets: on how many pairs the
Bayesian coverage is ≥ every label-free baseline's, and its Spearman ≥ the best baseline's − 0.03.
Point figures on the full data (no item resamples). Asserts nothing.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.real_data_likelihoods
    .venv/bin/python -m bench.real_data_likelihoods --likelihoods shared-truth --pairs hanna:coherence
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.speed import uptime

PAIRS = ("triviaqa-v1:correctness", "triviaqa-v2:correctness", "topical-chat:coherence", "topical-chat:engagingness",
         "topical-chat:naturalness", "topical-chat:groundedness", "hanna:relevance", "hanna:coherence",
         "hanna:empathy", "hanna:surprise", "hanna:engagement", "hanna:complexity")
BASELINES = ("simple_average", "bootstrap", "bradley_terry")


def main(argv: list[str] | None = None) -> None:
    from simplex_core.methods.baselines import run_methods, table_baseline_methods
    from simplex_core.data.views import item_view
    from simplex_core.data.datasets import load_dataset
    from simplex_core.summaries.evaluation import evaluate_results, true_ranks
    from simplex_core.studies.experiments import bayesian_methods

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--likelihoods", default="shared-truth,per-judge")
    p.add_argument("--pairs", default=",".join(PAIRS))
    args = p.parse_args(argv)
    likelihoods = args.likelihoods.split(",")
    print(f"# bench.real_data_likelihoods  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"# load before: {uptime()}")
    print("| data | method | Spearman | coverage | mean width | converged | fit (s) |")
    print("|---|---|---|---|---|---|---|")
    wins = {lk: {"coverage": 0, "spearman": 0, "n": 0} for lk in likelihoods}
    for pair in args.pairs.split(","):
        name, criterion = pair.split(":")
        table = load_dataset(name, criterion=criterion)
        view = item_view(table)
        truth = true_ranks(view)
        methods = dict(table_baseline_methods(table, single_judges=False, ppi_fractions=()))
        results = run_methods(view, {m: methods[m] for m in BASELINES}, rng=0)
        fits = {}
        for lk in likelihoods:
            method = bayesian_methods(table, ["bayesian"], chains=4, draws=1000, tune=1000, likelihood=lk)["bayesian"]
            t0 = time.perf_counter()
            results[f"bayesian:{lk}"] = method(view, np.random.default_rng(0))
            fits[f"bayesian:{lk}"] = time.perf_counter() - t0
        table_out = evaluate_results(results, truth).set_index("method")
        for m, row in table_out.iterrows():
            res = results[m]
            width = (float(np.mean(np.asarray(res.rank_hi) - np.asarray(res.rank_lo)))
                     if getattr(res, "rank_lo", None) is not None else float("nan"))
            conv = res.details.get("converged", "") if m in fits else ""
            print(f"| {pair} | {m} | {row['spearman']:.3f} | {row['coverage']:.2f} | {width:.2f} | {conv} | "
                  f"{fits.get(m, float('nan')):.1f} |", flush=True)
        best_cov = max(table_out.loc[b, "coverage"] for b in BASELINES)
        best_rho = max(table_out.loc[b, "spearman"] for b in BASELINES)
        for lk in likelihoods:
            row = table_out.loc[f"bayesian:{lk}"]
            wins[lk]["n"] += 1
            wins[lk]["coverage"] += int(row["coverage"] >= best_cov - 1e-12)
            wins[lk]["spearman"] += int(row["spearman"] >= best_rho - 0.03)
    print()
    for lk, w in wins.items():
        print(f"{lk}: coverage ≥ every label-free baseline's on {w['coverage']}/{w['n']}; "
              f"Spearman ≥ best baseline − 0.03 on {w['spearman']}/{w['n']}")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
