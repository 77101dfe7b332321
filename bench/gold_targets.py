"""Gold-label targets: with 5% and 10% gold labels, the Bayesian model against PPI at the
same labels on every built-in dataset with truth.

For each of the 12 dataset-criterion pairs and each labelled share F ∈ {0.05, 0.10}: ``--draws R``
label draws; in draw r both ``ppi_<pct>`` and ``bayesian_gold_<pct>`` get the generator
``method_generator(seed, "ppi_<pct>", r)``, so they label the same items (the evaluate machinery's
rule). ``bayesian_gold`` is the shared-truth model at ω = 0, β_max = 5 (4 chains × 500 + 500) with
the labelled answers' true levels observed (a mean of raters rounded to the nearest level). Prints
per pair and share: coverage of the true ranks (mean ``true_score`` of the full data) by the 95%
rank intervals, Spearman with the true ranking and the mean interval width, each averaged over the
R draws; then the targets: mean coverage over the datasets ≥ 0.90, Spearman ≥ PPI's on most pairs,
narrower intervals than PPI's. Asserts nothing.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.gold_targets [--draws 3] [--pairs hanna:coherence,...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.real_data_likelihoods import PAIRS
from bench.speed import uptime


def main(argv: list[str] | None = None) -> None:
    from simplex_core.methods.baselines import baseline_methods, method_generator
    from simplex_core.data.views import item_view
    from simplex_core.data.datasets import load_dataset
    from simplex_core.summaries.evaluation import evaluate_results, true_ranks
    from simplex_core.studies.experiments import bayesian_methods, gold_method_name

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", default=",".join(PAIRS))
    p.add_argument("--fractions", default="0.05,0.10")
    p.add_argument("--draws", type=int, default=3, help="label draws per pair and share (default 3)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    fractions = [float(f) for f in args.fractions.split(",")]
    print(f"# bench.gold_targets  {time.strftime('%Y-%m-%d %H:%M:%S')}  draws={args.draws}")
    print(f"# load before: {uptime()}")
    print("| data | share | method | coverage | Spearman | mean width | converged | fit (s) |")
    print("|---|---|---|---|---|---|---|---|")
    summary = {f: {"cov": [], "rho_win": 0, "narrower": 0, "n": 0, "ppi_cov": []} for f in fractions}
    for pair in args.pairs.split(","):
        name, criterion = pair.split(":")
        table = load_dataset(name, criterion=criterion)
        excluded = frozenset(table.self_family_pairs)
        view = item_view(table)
        truth = true_ranks(view)
        for f in fractions:
            pct = int(round(f * 100))
            ppi_name, gold_name = f"ppi_{pct}", gold_method_name(f)
            ppi = baseline_methods(view, table.scale, excluded=excluded, single_judges=False, ppi_fractions=(f,))[ppi_name]
            gold = bayesian_methods(table, [gold_name], chains=4, draws=500, tune=500)[gold_name]
            figures = {ppi_name: [], gold_name: []}
            conv, secs = [], []
            for r in range(args.draws):
                results = {}
                for m_name, method in ((ppi_name, ppi), (gold_name, gold)):
                    t0 = time.perf_counter()
                    res = method(view, method_generator(args.seed, ppi_name, r))
                    if m_name == gold_name:
                        secs.append(time.perf_counter() - t0)
                        conv.append(res.details["converged"])
                    results[m_name] = res
                ev = evaluate_results(results, truth).set_index("method")
                for m_name, res in results.items():
                    width = float(np.mean(np.asarray(res.rank_hi) - np.asarray(res.rank_lo) + 1))
                    figures[m_name].append((ev.loc[m_name, "coverage"], ev.loc[m_name, "spearman"], width))
            means = {m: np.nanmean(np.array(v), axis=0) for m, v in figures.items()}
            for m, (cov, rho, width) in means.items():
                extra = f"{np.mean(conv):.2f} | {np.mean(secs):.1f}" if m == gold_name else " | "
                print(f"| {pair} | {f:g} | {m} | {cov:.2f} | {rho:.3f} | {width:.2f} | {extra} |", flush=True)
            s = summary[f]
            s["n"] += 1
            s["cov"].append(means[gold_name][0])
            s["ppi_cov"].append(means[ppi_name][0])
            s["rho_win"] += int(means[gold_name][1] >= means[ppi_name][1] - 1e-12)
            s["narrower"] += int(means[gold_name][2] < means[ppi_name][2])
    print()
    for f, s in summary.items():
        print(f"share {f:g}: bayesian_gold mean coverage {np.mean(s['cov']):.3f} (target ≥ 0.90; PPI {np.mean(s['ppi_cov']):.3f}); "
              f"Spearman ≥ PPI's on {s['rho_win']}/{s['n']}; narrower intervals than PPI's on {s['narrower']}/{s['n']}")
    print("(width = mean number of ranks inside the interval, both ends included)")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
