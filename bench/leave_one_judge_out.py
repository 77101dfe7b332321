"""Leave-one-judge-out: its table, and its cost against J × one fit.

Fits DATA (a built-in dataset name, default ``triviaqa-v1``; ``--criterion``) once in this process (the
*one fit*, timed after a warm-up fit so that neither pays the numba load), then runs
:func:`simplex_core.studies.leave_one_judge_out.leave_one_judge_out` with that fit as the full one: J
fits without one judge each, on a Dask ``LocalCluster`` of ``--workers`` processes (default: one per
core). Prints the table and the wall time of the J fits (Dask start included) against J × the one
fit's wall time; the issue's bound is ratio ≤ 1. Asserts nothing.

Usage (repo root, project venv)::

    nice -n 10 .venv/bin/python -m bench.leave_one_judge_out [--data triviaqa-v1] [--workers 2]
        [--chains 2] [--draws 500] [--tune 500]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from simplex_core.data.datasets import load_dataset
from simplex_core.data.views import count_tensor
from simplex_core.inference.distributed import describe, open_client
from simplex_core.inference.fitting import fit_model
from simplex_core.model.definition import FitSettings
from simplex_core.studies.leave_one_judge_out import leave_one_judge_out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="triviaqa-v1")
    ap.add_argument("--criterion", default=None)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--tune", type=int, default=500)
    args = ap.parse_args()

    table = load_dataset(args.data, args.criterion)
    settings = FitSettings(chains=args.chains, draws=args.draws, tune=args.tune, seed=0)
    counts = count_tensor(table, settings.self_exclusion)
    fit_model(counts, settings.replace(draws=50, tune=50))  # warm-up: numba code loaded
    t0 = time.perf_counter()
    full = fit_model(counts, settings)
    one = time.perf_counter() - t0
    J = len(table.judges)
    print(f"{args.data}: {J} judges, {len(table.candidates)} candidates; one fit {one:.1f} s "
          f"({full.diagnostics.message})")
    t0 = time.perf_counter()
    with open_client(None, args.workers) as client:
        print(f"leave-one-judge-out {describe(client)}")
        result = leave_one_judge_out(table, settings, full_fit=full, client=client)
    wall = time.perf_counter() - t0
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(result.drop(columns=["full_mean_rank_width"]).round(3).to_string(index=False))
    print(f"full fit's mean 95% rank-interval width: {result['full_mean_rank_width'].dropna().iloc[0]:.2f}")
    print(f"leave-one-judge-out wall {wall:.1f} s (Dask start included) vs J × one fit = {J} × {one:.1f} = "
          f"{J * one:.1f} s: ratio {wall / (J * one):.2f}")


if __name__ == "__main__":
    main()
