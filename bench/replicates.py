"""Replicates benchmark: 20 simulated GPQA-like data sets (ω = 2, β_max = 5, ρ = 0.8, δ
uniform; self-family pairs excluded), each fitted with δ uniform, β_max = 5, ω = 2: how many
converge (max R-hat ≤ 1.01, min bulk ESS ≥ 400 over E_k) and how often the 95% rank intervals cover
the population rank. Prints figures; asserts nothing.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.replicates                      # 20 replicates, default engine
    .venv/bin/python -m bench.replicates --n 5 --engine nutpie
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench import metrics
from bench.cases import make_case
from bench.speed import uptime


def main(argv: list[str] | None = None) -> None:
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.settings import ENGINES, FitSettings

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=20)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--engine", default=FitSettings().engine, choices=ENGINES)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    args = p.parse_args(argv)

    print(f"# bench.replicates  {time.strftime('%Y-%m-%d %H:%M:%S')}  n={args.n} engine={args.engine} "
          f"chains={args.chains} draws={args.draws} tune={args.tune}")
    print(f"# load before: {uptime()}")
    print("| replicate | wall (s) | sample (s) | min ESS | max R-hat | div. | converged | coverage |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for i in range(args.n):
        seed = args.first_seed + i
        case = make_case("gpqa", seed=seed, chains=args.chains, draws=args.draws, tune=args.tune, engine=args.engine)
        t0 = time.perf_counter()
        res = fit_model(case.counts, case.settings.replace(seed=seed))
        es = np.asarray(res.idata.posterior["expected_score"].values)
        sample_s, div = res.timing["sample_s"], res.diagnostics.divergences
        wall = time.perf_counter() - t0
        c = metrics.convergence(es)
        cov = metrics.coverage(es, case.true_ranks)
        conv = c["converged"] and div == 0
        rows.append({"wall": wall, "sample": sample_s, **c, "div": div,
                     "conv": conv, "coverage": cov, "K": len(case.true_ranks)})
        print(f"| {seed} | {wall:.1f} | {sample_s:.1f} | {c['min_ess']:.0f} | {c['max_rhat']:.3f} | "
              f"{div} | {conv} | {cov:.2f} |", flush=True)
    n_cov = sum(r["coverage"] * r["K"] for r in rows)
    n_all = sum(r["K"] for r in rows)
    print(f"converged: {sum(r['conv'] for r in rows)}/{len(rows)}; coverage of the population ranks by the 95% rank "
          f"intervals: {n_cov / n_all:.3f} ({n_cov:.0f}/{n_all} candidates); median wall {np.median([r['wall'] for r in rows]):.1f} s, "
          f"max {max(r['wall'] for r in rows):.1f} s; worst R-hat {max(r['max_rhat'] for r in rows):.3f}, "
          f"lowest ESS {min(r['min_ess'] for r in rows):.0f}")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
