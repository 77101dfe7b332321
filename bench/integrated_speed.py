"""Integrated mode on the fast engine against a fixed-setting fit (issue 12 item 1). Prints figures;
asserts nothing.

Data: the built-in TriviaQA V1 (9 candidates × 9 judges × 400 items, binary). For each likelihood
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


def triviaqa_counts():
    from simplex_core.data import count_tensor
    from simplex_core.datasets import load_dataset

    return count_tensor(load_dataset("triviaqa-v1"))


def main(argv: list[str] | None = None) -> None:
    from simplex_core.inference import fit_model
    from simplex_core.model import FitSettings

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--likelihoods", default="shared-truth")
    p.add_argument("--settings", default=",".join(SETTINGS))
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args(argv)
    counts = triviaqa_counts()
    print(f"# bench.integrated_speed  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"# load before: {uptime()}")
    t0 = time.perf_counter()
    fit_model(counts, FitSettings(draws=50, tune=50, chains=1))
    print(f"# cold (kernel load + a tiny fit): {time.perf_counter() - t0:.1f} s")
    print("| likelihood | setting | seed | seconds | engine | sampler | max R-hat | min bulk ESS | divergences "
          "| ω mean | β_max mean |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    walls: dict[tuple[str, str], list[float]] = {}
    for likelihood in args.likelihoods.split(","):
        for name in args.settings.split(","):
            for seed in range(1, args.repeats + 1):
                settings = FitSettings(likelihood=likelihood, seed=seed, **SETTINGS[name])
                t1 = time.perf_counter()
                res = fit_model(counts, settings)
                wall = time.perf_counter() - t1
                walls.setdefault((likelihood, name), []).append(wall)
                d = res.diagnostics
                post = res.idata.posterior
                hyper = [f"{float(post[v].mean()):.2f}" if v in post else "" for v in ("omega", "beta_max")]
                print(f"| {likelihood} | {name} | {seed} | {wall:.1f} | {res.timing['engine_used']} | "
                      f"{res.timing.get('sampler', 'nuts')} | {d.max_rhat:.3f} | {d.min_ess_bulk:.0f} | "
                      f"{d.divergences} | {hyper[0]} | {hyper[1]} |", flush=True)
        if (likelihood, "integrated") in walls and (likelihood, "fixed") in walls:
            ratio = np.median(walls[(likelihood, "integrated")]) / np.median(walls[(likelihood, "fixed")])
            print(f"# {likelihood}: warm integrated / warm fixed (medians) = {ratio:.2f} (target ≤ 2)")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
