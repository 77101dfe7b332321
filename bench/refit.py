"""Refit benchmark: what the app pays when a user moves the ω or β_max slider, and when it
opens a new dataset. Prints figures; asserts nothing.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.refit                  # default engine, 3 repeats
    .venv/bin/python -m bench.refit --engine nutpie --repeats 3 --case gpqa

Measured on GPQA-size data (or ``--case``), δ uniform, 4 chains × 1000 + 1000 by default:

* ``cold``: a fresh process with empty on-disk caches (numba cache, PyTensor compiledir) from
  process start to the first fit's posterior (imports, compilation, sampling);
* ``first fit, filled cache``: the same in a fresh process once the caches are filled — "the first
  fit of a new dataset in a fresh process" (a new dataset of the same shape or not: the compiled
  density does not depend on the data);
* ``warm refit``: in that process, refits after ω 2 → 1 → 4 → 2 and β_max 5 → 10 → 5 (the app's
  slider case): wall time of each ``fit_model`` call, R-hat, ESS and whether it converged.

Figures are medians over ``--repeats`` fresh processes (each with its own sampler seeds).
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from bench import metrics
from bench.cases import CASES
from bench.speed import cold_env, fmt, run_worker, uptime

SLIDER_CHANGES = [{"omega": 1.0}, {"omega": 4.0}, {"omega": 2.0}, {"beta_max": 10.0}, {"beta_max": 5.0}]


def main(argv: list[str] | None = None) -> None:
    from simplex_core.model.settings import ENGINES, FitSettings

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", default="gpqa", choices=CASES)
    p.add_argument("--engine", default=FitSettings().engine, choices=ENGINES)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--no-cold", dest="cold", action="store_false")
    p.add_argument("--timeout", type=float, default=1800.0)
    args = p.parse_args(argv)

    print(f"# bench.refit  {time.strftime('%Y-%m-%d %H:%M:%S')}  case={args.case} engine={args.engine} "
          f"chains={args.chains} draws={args.draws} tune={args.tune} repeats={args.repeats}")
    print(f"# load before: {uptime()}")
    base = {"case": args.case, "engine": args.engine, "data_seed": 0, "chains": args.chains,
            "draws": args.draws, "tune": args.tune}
    if args.cold:
        with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
            info, draws = run_worker({**base, "seeds": [100]}, env_extra=cold_env(tmp), timeout=args.timeout)
        r = info["runs"][0]
        c = metrics.convergence(draws[0])
        print(f"cold fresh process to first posterior: {info['process_start_s'] + r['wall_s']:.1f} s "
              f"(start-up {info['process_start_s']:.1f} s, compile {r['compile_s']:.1f} s, sample {r['sample_s']:.1f} s; "
              f"R-hat {c['max_rhat']:.3f}, ESS {c['min_ess']:.0f}, converged {c['converged']})")

    first, refits = [], {i: [] for i in range(len(SLIDER_CHANGES))}
    for rep in range(args.repeats):
        seeds = [1000 * rep + i for i in range(1 + len(SLIDER_CHANGES))]
        overrides = [{}] + SLIDER_CHANGES
        info, draws = run_worker({**base, "seeds": seeds, "overrides": overrides}, timeout=args.timeout)
        if info["timed_out"]:
            print(f"repeat {rep}: timed out")
            continue
        runs = info["runs"]
        for i, (run, es) in enumerate(zip(runs, draws)):
            c = metrics.convergence(es)
            run.update(c)
            if i == 0:
                run["to_posterior_s"] = info["process_start_s"] + run["wall_s"]
                first.append(run)
            else:
                refits[i - 1].append(run)
        print(f"# repeat {rep}: load {uptime()}", flush=True)

    m = metrics.median
    if first:
        print(f"first fit in a fresh process, filled cache (median of {len(first)}): "
              f"{m([r['to_posterior_s'] for r in first]):.1f} s to the posterior "
              f"(compile {m([r['compile_s'] for r in first]):.1f} s, sample {m([r['sample_s'] for r in first]):.1f} s); "
              f"converged {sum(r['converged'] for r in first)}/{len(first)}")
    print("| change | refit wall (s) | compile (s) | sample (s) | min ESS | max R-hat | converged |")
    print("|---|---|---|---|---|---|---|")
    for i, change in enumerate(SLIDER_CHANGES):
        rs = refits[i]
        if not rs:
            continue
        label = ", ".join(f"{k} → {v:g}" for k, v in change.items())
        print(f"| {label} | {fmt(m([r['wall_s'] for r in rs]))} | {fmt(m([r['compile_s'] for r in rs]), '.2f')} | "
              f"{fmt(m([r['sample_s'] for r in rs]))} | {fmt(m([r['min_ess'] for r in rs]), '.0f')} | "
              f"{fmt(m([r['max_rhat'] for r in rs]), '.3f')} | {sum(r['converged'] for r in rs)}/{len(rs)} |")
    all_refits = [r for rs in refits.values() for r in rs]
    if all_refits:
        walls = np.array([r["wall_s"] for r in all_refits])
        print(f"all warm refits: median {np.median(walls):.1f} s, max {walls.max():.1f} s, "
              f"converged {sum(r['converged'] for r in all_refits)}/{len(all_refits)}")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
