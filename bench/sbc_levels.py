"""Simulation-based calibration (:mod:`simplex_core.studies.calibration`) on square scales and judge counts
that the shipped scenarios do not have, e.g. 7 levels, where a latent-class posterior has the most
maxima with relabelled judges. Prints the uniformity tests; asserts nothing.

Each replicate draws π_k ~ Dirichlet(1), ρ_j ~ Beta(1, 1) and Θ_j from the weight-propagation prior
(β_max = 5), simulates answers with one shared true level (ω = 0) and fits at the default settings
(4 chains × 500 + 500 here, as `calibrate`'s 2 × 500 + 500 but with the default 4 chains). When
model, sampler and simulator agree, every rank is uniform. Contrast with :mod:`bench.unseen_scenarios`,
whose judges are fixed kinds (lenient, harsh, near random) that the prior finds unlikely: SBC
checks the inference, that bench the prior against judges it was not drawn from.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.sbc_levels --levels 7 --judges 3 --replicates 100
    .venv/bin/python -m bench.sbc_levels --levels 5 --judges 5 --items 40 --workers 0   # in this process
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from bench.speed import uptime


def square_scenario(levels: int, judges: int, candidates: int, items: int):
    """The three-level scenario's hyperparameters (ω = 0, β_max = 5) on a square scale of ``levels``
    levels, with ``judges`` judges and ``candidates`` candidates (their π and ρ are drawn from the prior
    in every replicate, so the values here are placeholders)."""
    from simplex_core.data.scale import Scale
    from simplex_core.model.simulate import SCENARIOS

    return dataclasses.replace(
        SCENARIOS["three-level"], name=f"square-{levels}-levels-{judges}-judges",
        description=f"{levels} levels, {judges} judges, {candidates} candidates",
        scale=Scale(tuple(float(v) for v in range(levels))),
        candidates=tuple((f"model-{k + 1}", None, tuple([1.0 / levels] * levels)) for k in range(candidates)),
        judges=tuple((f"judge-{j + 1}", None, 0.7) for j in range(judges)), n_items=items)


def main(argv: list[str] | None = None) -> None:
    from simplex_core.studies.calibration import CalibrationSettings, calibrate, uniformity_test
    from simplex_core.inference.distributed import describe, open_client

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", type=int, default=7)
    p.add_argument("--judges", type=int, default=3)
    p.add_argument("--candidates", type=int, default=6)
    p.add_argument("--items", type=int, default=100)
    p.add_argument("--replicates", type=int, default=100)
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--scheduler", default=None)
    p.add_argument("--workers", type=int, default=None)
    args = p.parse_args(argv)
    for flag, value, least in (("--levels", args.levels, 2), ("--judges", args.judges, 1),
                               ("--candidates", args.candidates, 2), ("--items", args.items, 1),
                               ("--replicates", args.replicates, 2)):
        if value < least:
            p.error(f"{flag} must be at least {least}; got {value}.")
    scenario = square_scenario(args.levels, args.judges, args.candidates, args.items)
    settings = CalibrationSettings(scenario=scenario, replicates=args.replicates, chains=4, draws=500,
                                   tune=500, seed=args.seed)
    settings.check()
    print(f"# bench.sbc_levels  {time.strftime('%Y-%m-%d %H:%M:%S')}  {scenario.name}, {args.candidates} "
          f"candidates, {args.items} items, {args.replicates} replicates, seed {args.seed}")
    print(f"# load before: {uptime()}", flush=True)

    def show(line: str) -> None:
        print(f"# {line}", flush=True)

    if args.workers == 0:
        result, where = calibrate(settings, progress=show), "in this process"
    else:
        with open_client(args.scheduler, args.workers) as client:
            where = describe(client)
            result = calibrate(settings, client=client, progress=show)
    diag, tests = result.diagnostics, result.tests()
    print(f"# fits ran {where}; {result.seconds:.0f} s")
    print(f"converged fits: {int(diag['converged'].sum())}/{len(diag)}; fits with divergences: "
          f"{int((diag['divergences'] > 0).sum())}")
    print(tests[["parameter", "chi2", "dof", "p_value"]].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for group, part in tests.groupby("group", sort=False):
        print(f"{group}: {int((part['p_value'] < 0.01).sum())} of {len(part)} below p = 0.01; "
              f"smallest p {part['p_value'].min():.3f}")
    # The candidates are exchangeable under the prior: pooled, their ranks show the direction of a
    # miscalibration (both ends heavy: intervals too narrow; one end: bias) with 6× the replicates.
    e = result.ranks[result.ranks["group"] == "expected_score"]["rank"].to_numpy()
    n_ranks = settings.rank_draws + 1
    counts = np.bincount(np.minimum(e * 10 // n_ranks, 9).astype(int), minlength=10)
    chi2, dof, pval = uniformity_test(e, n_ranks, 10)
    print(f"E_k pooled ({e.size} ranks) in 10 bins: {' '.join(str(c) for c in counts)} (chi2 {chi2:.1f}, "
          f"dof {dof}, p {pval:.3f}; the pooled ranks share replicates, so p is indicative)")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
