"""Convergence at the default fit settings on every built-in dataset. Prints the
table dataset × setting → max R-hat, min bulk ESS, divergences, seconds, sampler; asserts nothing.

Cases: every dataset-criterion pair with truth (12), WildBench (with and without self-family
exclusion), and simulated binary data with abstention and 3 judges (the gpqa-like scenario with a
third judge). Settings: the base (ω = 0, β_max = 5); ``--integrated`` adds integrated mode,
``--grid`` the app's 5 × 5 grid (ω ∈ {0, 1, 2, 4, 8} × β_max ∈ {0, 1, 5, 10, 20}). Fits run on
Dask (:mod:`simplex_core.inference.distributed`: a LocalCluster by default, ``--scheduler`` for a cluster,
``--workers 0`` in this process), 4 chains × 1000 + 1000, the default likelihood unless
``--likelihood`` says otherwise, the default judge prior unless ``--priors`` lists others (every
fit then runs once per prior).

Usage (repo root, project venv)::

    .venv/bin/python -m bench.convergence_table                      # base setting, every case
    .venv/bin/python -m bench.convergence_table --integrated --grid --cases triviaqa-v1:correctness
    .venv/bin/python -m bench.convergence_table --points hanna:coherence@0,0 triviaqa-v2:correctness@1,10
    .venv/bin/python -m bench.convergence_table --integrated --priors weight-propagation,diagonal,mixing
"""

from __future__ import annotations

import argparse
import time

from bench.speed import uptime

TRUTH_PAIRS = ("triviaqa-v1:correctness", "triviaqa-v2:correctness", "topical-chat:coherence",
               "topical-chat:engagingness", "topical-chat:naturalness", "topical-chat:groundedness",
               "hanna:relevance", "hanna:coherence", "hanna:empathy", "hanna:surprise", "hanna:engagement",
               "hanna:complexity")
# WildBench with self-family exclusion on leaves gpt-3.5-turbo-0125 with no judgment at all (the data
# loader refuses it with a message), so WildBench runs with exclusion off, as asked.
OTHER = ("wildbench-v2:overall:no-exclusion", "simulated:gpqa-like-3-judges")


def case_counts(case: str):
    """The count tensor of a case name (``dataset:criterion[:no-exclusion]`` or ``simulated:NAME``)."""
    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.data.datasets import load_dataset

    parts = case.split(":")
    if parts[0] == "simulated":
        from simplex_core.model.simulate import scenario

        sim = scenario("gpqa-like", seed=0, judges=["claude-judge", "gpt-judge", "third-judge"], rho=[0.8, 0.6, 0.7])
        return count_tensor(load_table(sim.frame, scale=sim.scale, families=sim.families))
    table = load_dataset(parts[0], criterion=parts[1])
    return count_tensor(table, self_exclusion=not (len(parts) > 2 and parts[2] == "no-exclusion"))


def fit_case(task: tuple) -> dict:
    """One fit (a Dask task): ``(case, settings)`` -> its diagnostics and wall seconds."""
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.settings import FitSettings

    case, settings = task
    counts = case_counts(case)
    t0 = time.perf_counter()
    res = fit_model(counts, settings)
    d = res.diagnostics
    setting = "integrated" if settings.integrated else f"ω={settings.omega:g} β={settings.beta_max:g}"
    if settings.prior != FitSettings().prior:
        setting += f", {settings.prior} prior"
    if settings.seed != FitSettings().seed:
        setting += f", seed {settings.seed}"
    return {"case": case, "setting": setting,
            "rhat": d.max_rhat, "ess": d.min_ess_bulk, "div": d.divergences, "converged": d.converged,
            "seconds": time.perf_counter() - t0, "sampler": res.timing.get("sampler", res.timing.get("engine_used", "")),
            "restarted": res.timing.get("restarted_chains", 0), "rounds": res.timing.get("rounds", 1)}


def _point(text: str) -> tuple[str, float, float]:
    """``CASE@OMEGA,BETA_MAX`` -> (case, ω, β_max), or an argparse error naming the text."""
    case, _, setting = text.partition("@")
    try:
        omega, beta = (float(v) for v in setting.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not CASE@OMEGA,BETA_MAX (e.g. hanna:coherence@0,0)") from None
    return case, omega, beta


def _seeds(text: str) -> range:
    """``FIRST-LAST`` (inclusive) or ``SEED`` -> the seeds, or an argparse error naming the text."""
    first, _, last = text.partition("-")
    try:
        seeds = range(int(first), int(last or first) + 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not SEED or FIRST-LAST (e.g. 0-3)") from None
    if not seeds:
        raise argparse.ArgumentTypeError(f"{text!r} names no seed: FIRST must be at most LAST")
    return seeds


def main(argv: list[str] | None = None) -> None:
    from simplex_core.inference.distributed import describe, map_tasks, open_client
    from simplex_core.model.settings import FitSettings

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=",".join(TRUTH_PAIRS + OTHER))
    p.add_argument("--integrated", action="store_true")
    p.add_argument("--grid", action="store_true")
    p.add_argument("--likelihood", default=FitSettings().likelihood)
    p.add_argument("--priors", default=FitSettings().prior, help="judge priors, comma-separated (default: the project's)")
    p.add_argument("--scheduler", default=None)
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--seeds", type=_seeds, default=range(1), help="fit seeds, FIRST-LAST inclusive (default 0): each fit once per seed")
    p.add_argument("--points", nargs="*", type=_point, default=None, metavar="CASE@OMEGA,BETA_MAX",
                   help="only these fits, e.g. hanna:coherence@0,0 triviaqa-v2:correctness@1,10 (replaces the other options)")
    args = p.parse_args(argv)
    settings = [FitSettings(omega=0.0, beta_max=5.0, likelihood=args.likelihood)]
    if args.integrated:
        settings.append(FitSettings(integrated=True, likelihood=args.likelihood))
    if args.grid:  # the app's grid, from the protocol's owner
        from simplex_core.studies.sensitivity import base_settings, grid_settings

        base = base_settings(FitSettings(likelihood=args.likelihood))
        settings += [s for s in grid_settings(base) if (s.omega, s.beta_max) != (base.omega, base.beta_max)]
    if args.points:
        tasks = [(case, FitSettings(omega=omega, beta_max=beta, likelihood=args.likelihood))
                 for case, omega, beta in args.points]
    else:
        tasks = [(case, s) for case in args.cases.split(",") for s in settings]
    tasks = [(case, s.replace(prior=prior)) for case, s in tasks for prior in args.priors.split(",")]
    tasks = [(case, s.replace(seed=seed)) for case, s in tasks for seed in args.seeds]
    print(f"# bench.convergence_table  {time.strftime('%Y-%m-%d %H:%M:%S')}  likelihood={args.likelihood}  priors={args.priors}")
    print(f"# load before: {uptime()}", flush=True)
    def show(_i: int, r: dict) -> None:  # a row as soon as its fit ends: a long run shows its progress
        print(f"# done: {r['case']} {r['setting']}: R-hat {r['rhat']:.3f}, ESS {r['ess']:.0f}, "
              f"{r['div']} divergences, {r['seconds']:.0f} s", flush=True)

    if args.workers == 0:
        rows = map_tasks(fit_case, tasks, labels=[f"{c} {s.key()[:8]}" for c, s in tasks], on_result=show)
        where = "in this process"
    else:
        with open_client(args.scheduler, args.workers) as client:
            where = describe(client)
            rows = map_tasks(fit_case, tasks, client=client, labels=[f"{c} {s.key()[:8]}" for c, s in tasks],
                             on_result=show)
    print(f"# fits ran {where}")
    print("| case | setting | max R-hat | min bulk ESS | divergences | converged | seconds | sampler | rounds | chains restarted |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['setting']} | {r['rhat']:.3f} | {r['ess']:.0f} | {r['div']} | "
              f"{'yes' if r['converged'] else 'NO'} | {r['seconds']:.1f} | {r['sampler']} | {r['rounds']} | {r['restarted']} |")
    n_conv = sum(r["converged"] for r in rows)
    print(f"\n{n_conv}/{len(rows)} fits converged (R-hat ≤ 1.01, bulk ESS ≥ 400, no divergences)")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
