"""Integrated mode on the fast engine against a fixed-setting fit. Prints figures;
asserts nothing.

Data: ``--cases`` names the data as :mod:`bench.convergence_table` does (``dataset:criterion``,
``simulated:gpqa-like-3-judges``); the default is TriviaQA V1 (9 candidates × 9 judges × 400 items,
binary, whose fixed fit is the cheapest of the built-in data) and HANNA coherence (11 × 5 × 96 on 5
levels, the shape of the "12 × 5 × 100 five-level dataset"). For each case and likelihood
asked for, fits at the default fit size (4 chains × 1000 + 1000, engine ``fast``):

* ``fixed``: the default setting (ω = 0, β_max = 5);
* ``fixed ω=1``: ω = 1, β_max = 5 (the same random-effect coordinates as integrated mode, minus two);
* ``integrated``: ω ~ Uniform(0, 8), β_max ~ Uniform(0, 20).

The first fit in the process pays the loading of the numba kernels ("cold", reported apart); then
every setting is fitted ``--repeats`` times with seeds 1, 2, ... ("warm"). Target: warm integrated ≤
2× warm fixed (the default). Prints wall seconds, the sampler, R-hat / bulk ESS over E_k,
divergences and, for integrated fits, the posterior means of ω and β_max.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.integrated_speed
    .venv/bin/python -m bench.integrated_speed --likelihoods shared-truth,per-judge --repeats 2
    .venv/bin/python -m bench.integrated_speed --cases hanna:relevance,topical-chat:coherence
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.speed import uptime

SETTINGS = {
    "fixed": dict(omega=0.0, beta_max=5.0),
    "fixed ω=1": dict(omega=1.0, beta_max=5.0),
    "integrated": dict(integrated=True),
}


DEFAULT_CASES = "triviaqa-v1:correctness,hanna:coherence"


def triviaqa_counts():
    from bench.convergence_table import case_counts

    return case_counts("triviaqa-v1:correctness")


def main(argv: list[str] | None = None) -> None:
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.settings import FitSettings

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=DEFAULT_CASES, help="comma-separated, as bench.convergence_table names them")
    p.add_argument("--likelihoods", default="shared-truth")
    p.add_argument("--settings", default=",".join(SETTINGS))
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args(argv)
    from bench.convergence_table import case_counts

    cases = {case: case_counts(case) for case in args.cases.split(",")}
    print(f"# bench.integrated_speed  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"# load before: {uptime()}")
    t0 = time.perf_counter()
    fit_model(next(iter(cases.values())), FitSettings(draws=50, tune=50, chains=1))
    print(f"# cold (kernel load + a tiny fit): {time.perf_counter() - t0:.1f} s")
    print("| case | likelihood | setting | seed | seconds | engine | sampler | max R-hat | min bulk ESS | divergences "
          "| ω mean | β_max mean |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for case, counts in cases.items():
        for likelihood in args.likelihoods.split(","):
            walls: dict[str, list[float]] = {}
            for name in args.settings.split(","):
                for seed in range(1, args.repeats + 1):
                    settings = FitSettings(likelihood=likelihood, seed=seed, **SETTINGS[name])
                    t1 = time.perf_counter()
                    res = fit_model(counts, settings)
                    wall = time.perf_counter() - t1
                    walls.setdefault(name, []).append(wall)
                    d = res.diagnostics
                    post = res.idata.posterior
                    hyper = [f"{float(post[v].mean()):.2f}" if v in post else "" for v in ("omega", "beta_max")]
                    print(f"| {case} | {likelihood} | {name} | {seed} | {wall:.1f} | {res.timing['engine_used']} | "
                          f"{res.timing.get('sampler', 'nuts')} | {d.max_rhat:.3f} | {d.min_ess_bulk:.0f} | "
                          f"{d.divergences} | {hyper[0]} | {hyper[1]} |", flush=True)
            if "integrated" in walls:
                for fixed in ("fixed", "fixed ω=1"):
                    if fixed in walls:
                        ratio = np.median(walls["integrated"]) / np.median(walls[fixed])
                        ratios.append(f"# {case}, {likelihood}: warm integrated / warm {fixed} (medians) = "
                                      f"{ratio:.2f} (target ≤ 2)")
    print("\n".join(ratios))
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
