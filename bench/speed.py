"""Speed benchmark: the same model and data in Stan (pystan) and every engine of
``simplex_core.inference.fitting.fit_model``, side by side. Prints figures; asserts nothing.

Usage (from the repo root, project venv)::

    .venv/bin/python -m bench.speed                       # all cases, all engines, 3 repeats
    .venv/bin/python -m bench.speed --cases gpqa mtbench --engines stan nutpie --repeats 3
    .venv/bin/python -m bench.speed --quick               # small run to see that it works

For every (case, engine):

* ``compile cold``: a fresh process with empty on-disk caches (httpstan cache for Stan; PyTensor
  compiledir and numba cache for the PyMC-based engines) compiles the model (``--no-cold`` skips);
* ``compile warm``: a fresh process with the on-disk caches filled (what a new app process pays);
* then ``--repeats`` fits with different sampler seeds (same data): in one process for the
  fit_model engines (the compiled model is reused), one process per fit for Stan (cached build).
  ``sample`` is warm-up plus draws, compilation excluded; min ESS is the smallest bulk ESS over the
  E_k, ESS/s = min ESS / sample; R-hat the largest over the E_k; ``conv`` counts fits with R-hat ≤
  1.01 and ESS ≥ 400; ``agree`` counts fits whose E_k means are within 0.15 posterior SD of the
  reference and whose 95% rank-interval ends are within 1 (reference: all Stan draws pooled when
  Stan ran, else the first engine's); figures are medians over the repeats.

Results are also written to ``bench/results/speed-<time>.json``. The machine is shared: ``uptime``
is printed next to the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import metrics
from bench.cases import CASES, make_case

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "uptime unavailable"


def run_worker(spec: dict, *, env_extra: dict | None = None, timeout: float | None = None) -> tuple[dict, list]:
    """Run ``bench._worker`` in a fresh process; return (info, list of E_k draw arrays)."""
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.npz"
        spec_path.write_text(json.dumps(spec))
        env = dict(os.environ)
        env.update(env_extra or {})
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        proc = subprocess.Popen([sys.executable, "-m", "bench._worker", str(spec_path), str(out_path)],
                                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            return {"timed_out": True, "runs": []}, []
        if proc.returncode != 0:
            raise RuntimeError(f"worker failed for {spec['case']}/{spec['engine']}:\n{err[-4000:]}")
        out = np.load(out_path)
        info = json.loads(str(out["runs"]))
        draws = [out[f"es_{i}"] for i in range(len(info["runs"]))]
        info["timed_out"] = False
        return info, draws


def cold_env(tmp: str) -> dict:
    """Environment of a process with empty PyTensor/numba on-disk caches."""
    return {"PYTENSOR_FLAGS": f"compiledir={tmp}/pytensor", "NUMBA_CACHE_DIR": f"{tmp}/numba"}


def bench_engine(case_name: str, engine: str, args, seeds: list[int]) -> dict:
    """Cold compile, warm compile and the repeated fits of one engine on one case."""
    case = make_case(case_name, seed=args.data_seed, chains=args.chains, draws=args.draws, tune=args.tune)
    out: dict = {"case": case_name, "engine": engine, "runs": [], "draws": []}
    timeout = args.timeout
    if engine == "stan":
        from bench.stan_reference import run_stan

        if args.cold:
            try:
                r = run_stan(case.counts, case.settings.replace(chains=1, draws=20, tune=20), cold=True, timeout=timeout)
                out["compile_cold"] = None if r["timed_out"] else r["compile_s"]
            except RuntimeError as exc:  # e.g. pystan's own HTTP timeout while compiling on a loaded machine
                print(f"# {case_name}/stan cold compile failed: {str(exc).strip().splitlines()[-1]}", flush=True)
                out["compile_cold"] = None
        for s in seeds:
            r = run_stan(case.counts, case.settings.replace(seed=s), timeout=timeout)
            if r["timed_out"]:
                out["timed_out"] = True
                break
            out["runs"].append({"seed": s, "compile_s": r["compile_s"], "sample_s": r["sample_s"],
                                "divergences": r["divergences"]})
            out["draws"].append(r["expected_score"])
        out["compile_warm"] = out["runs"][0]["compile_s"] if out["runs"] else None
        return out

    base = {"case": case_name, "engine": engine, "data_seed": args.data_seed, "chains": args.chains,
            "draws": args.draws, "tune": args.tune}
    if args.cold:
        with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
            info, _ = run_worker({**base, "draws": 20, "tune": 20, "seeds": [0]}, env_extra=cold_env(tmp),
                                 timeout=timeout)
        out["compile_cold"] = None if info["timed_out"] else info["runs"][0]["compile_s"]
    info, draws = run_worker({**base, "seeds": seeds}, timeout=timeout * len(seeds) if timeout else None)
    out["timed_out"] = info["timed_out"]
    out["runs"], out["draws"] = info["runs"], draws
    out["compile_warm"] = info["runs"][0]["compile_s"] if info["runs"] else None
    out["process_start_s"] = info.get("process_start_s")
    return out


def summarise(res: dict, ref: np.ndarray | None) -> dict:
    rows = []
    for run, es in zip(res["runs"], res["draws"]):
        c = metrics.convergence(es)
        row = {**run, **c, "ess_per_s": c["min_ess"] / run["sample_s"]}
        if ref is not None:
            row.update(metrics.agreement(es, ref))
        rows.append(row)
    res["rows"] = rows
    m = metrics.median
    return {
        "case": res["case"], "engine": res["engine"], "n": len(rows), "timed_out": res.get("timed_out", False),
        "compile_cold": res.get("compile_cold"), "compile_warm": res.get("compile_warm"),
        "sample_s": m([r["sample_s"] for r in rows]), "min_ess": m([r["min_ess"] for r in rows]),
        "ess_per_s": m([r["ess_per_s"] for r in rows]), "max_rhat": m([r["max_rhat"] for r in rows]),
        "divergences": m([r["divergences"] for r in rows]),
        "converged": sum(r["converged"] for r in rows),
        "agree": sum(r.get("agrees", False) for r in rows) if ref is not None else None,
        "mean_sd": m([r.get("mean_sd") for r in rows]) if ref is not None else None,
        "rank_end": m([r.get("rank_end") for r in rows]) if ref is not None else None,
    }


def fmt(x, spec=".1f") -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and np.isnan(x):
        return "nan"
    return format(x, spec)


def print_table(summaries: list[dict]) -> None:
    head = ("| case | engine | compile cold / warm (s) | sample (s) | min ESS | ESS/s | max R-hat | div. "
            "| converged | agree (Δmean SD, Δrank end) |")
    print(head)
    print("|" + "---|" * 10)
    for s in summaries:
        agree = "—" if s["agree"] is None else f"{s['agree']}/{s['n']} ({fmt(s['mean_sd'], '.2f')}, {fmt(s['rank_end'], '.0f')})"
        to = " (timed out)" if s["timed_out"] else ""
        print(f"| {s['case']} | {s['engine']}{to} | {fmt(s['compile_cold'])} / {fmt(s['compile_warm'])} | "
              f"{fmt(s['sample_s'])} | {fmt(s['min_ess'], '.0f')} | {fmt(s['ess_per_s'], '.1f')} | "
              f"{fmt(s['max_rhat'], '.3f')} | {fmt(s['divergences'], '.0f')} | {s['converged']}/{s['n']} | {agree} |")


def main(argv: list[str] | None = None) -> None:
    from simplex_core.model.settings import ENGINES

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    p.add_argument("--engines", nargs="+", default=["stan", *ENGINES],
                   help=f"stan and/or {', '.join(ENGINES)}")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--seed", type=int, default=1, help="first sampler seed; repeat i uses seed + i")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per fit before it is killed")
    p.add_argument("--no-cold", dest="cold", action="store_false", help="skip the cold-compile measurement")
    p.add_argument("--quick", action="store_true", help="2 chains x 300 + 300, 1 repeat, no cold compile")
    p.add_argument("--reference", default=None, help="engine whose pooled draws are the reference (default: stan if run)")
    args = p.parse_args(argv)
    if args.quick:
        args.chains, args.draws, args.tune, args.repeats, args.cold = 2, 300, 300, 1, False
    unknown = [e for e in args.engines if e != "stan" and e not in ENGINES]
    if unknown:
        p.error(f"unknown engine(s) {unknown}; expected stan or one of {', '.join(ENGINES)}")
    seeds = [args.seed + i for i in range(args.repeats)]

    print(f"# bench.speed  {time.strftime('%Y-%m-%d %H:%M:%S')}  chains={args.chains} draws={args.draws} "
          f"tune={args.tune} repeats={args.repeats}")
    print(f"# load before: {uptime()}")
    all_summaries, raw = [], []
    for case_name in args.cases:
        results = []
        for engine in args.engines:
            t0 = time.perf_counter()
            try:
                res = bench_engine(case_name, engine, args, seeds)
            except Exception as exc:  # report and go on: a benchmark prints what it can
                print(f"# {case_name}/{engine} failed: {str(exc)[-1500:]}", flush=True)
                continue
            print(f"# {case_name}/{engine}: {time.perf_counter() - t0:.0f} s; load: {uptime()}", flush=True)
            results.append(res)
            # print the row at once (reference: the Stan draws if Stan already ran, else this engine's)
            early_ref = next((r for r in results if r["engine"] == (args.reference or "stan") and r["draws"]), res)
            if early_ref["draws"] and res["draws"]:
                row = summarise(dict(res), np.concatenate(early_ref["draws"], axis=0))
                print("# row: " + json.dumps({k: v for k, v in row.items()}, default=float), flush=True)
        ref_engine = args.reference or ("stan" if any(r["engine"] == "stan" and r["draws"] for r in results) else None)
        ref_res = next((r for r in results if r["engine"] == ref_engine and r["draws"]), None)
        if ref_res is None:
            ref_res = next((r for r in results if r["draws"]), None)
        ref = np.concatenate(ref_res["draws"], axis=0) if ref_res else None
        for res in results:
            s = summarise(res, ref)
            s["reference"] = ref_res["engine"] if ref_res else None
            all_summaries.append(s)
            raw.append({k: v for k, v in res.items() if k != "draws"})
        print_table([s for s in all_summaries if s["case"] == case_name])
        print(flush=True)
    print(f"# load after: {uptime()}")
    print_table(all_summaries)
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"speed-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"args": vars(args), "summaries": all_summaries, "raw": raw}, indent=1, default=float))
    print(f"# written {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
