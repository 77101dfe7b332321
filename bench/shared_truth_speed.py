"""Speed of default shared-truth fits (the speed targets). Prints figures; asserts nothing.

Two cases, each fitted at the default settings (ω = 0, β_max = 5, 4 chains × 1000 + 1000, engine
``fast``) with the likelihood asked for:

* ``triviaqa-v1``: the built-in TriviaQA V1 (9 candidates × 9 judges × 400 items, binary);
  target ≤ 10 s warm;
* ``k50``: simulated with shared truth, K = 50 candidates, J = 5 judges, M = 5 levels, 2000 items
  (judges of accuracy 0.70–0.95, candidates of spread qualities); target ≤ 120 s.

The first fit of a case in this process pays the compilation ("cold"); the next ``--repeats`` fits
(other seeds) reuse it ("warm"). Prints wall seconds, the number of distinct score patterns (the
shared-truth likelihood's sufficient statistics), the sampler used and the convergence of each fit.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.shared_truth_speed
    .venv/bin/python -m bench.shared_truth_speed --cases k50 --repeats 1 --likelihoods shared-truth,per-judge
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.speed import uptime


def k50_counts(seed: int = 0):
    from bench.shared_truth_calibration import judge_matrix
    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.data.scale import Scale
    from simplex_core.model.simulate import ordinal_prevalences, simulate

    rng = np.random.default_rng([seed, 50])
    scale = Scale((1.0, 2.0, 3.0, 4.0, 5.0))
    pi = ordinal_prevalences(np.linspace(-1.0, 1.0, 50), 5)
    theta = np.stack([judge_matrix(a, 5) for a in rng.uniform(0.70, 0.95, size=5)])
    sim = simulate(scale=scale, n_items=2000, candidates=50, judges=5, pi=pi, theta=theta, omega=0.0,
                   latent_coupling="shared", rng=rng)
    return count_tensor(load_table(sim.frame, scale=sim.scale))


def triviaqa_counts():
    from simplex_core.data.views import count_tensor
    from simplex_core.data.datasets import load_dataset

    return count_tensor(load_dataset("triviaqa-v1"))


CASES = {"triviaqa-v1": (triviaqa_counts, 10.0), "k50": (k50_counts, 120.0)}


def main(argv: list[str] | None = None) -> None:
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.settings import FitSettings

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--likelihoods", default="shared-truth")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    print(f"# bench.shared_truth_speed  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"# load before: {uptime()}")
    print("| case | likelihood | patterns | fit | seconds | mode search / mode search + sampling (s) | target (s) | sampler "
          "| convergence |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        make, target = CASES[case]
        counts = make()
        n_patterns = counts.patterns.weight.size if counts.patterns is not None else 0
        for likelihood in args.likelihoods.split(","):
            for r in range(args.repeats + 1):
                t0 = time.perf_counter()
                res = fit_model(counts, FitSettings(likelihood=likelihood, seed=r))
                wall = time.perf_counter() - t0
                phases = f"{res.timing.get('modes_s', 0.0):.1f} / {res.timing.get('sample_s', 0.0):.1f}"
                print(f"| {case} | {likelihood} | {n_patterns} | {'cold' if r == 0 else f'warm {r}'} | {wall:.1f} | "
                      f"{phases} | {target:.0f} | {res.timing.get('sampler', '')} | {res.diagnostics.message} |",
                      flush=True)
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
