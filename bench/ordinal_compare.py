"""The ordinal many-facet model beside the simplex model and the simple average.

For every built-in dataset-criterion with ground truth (the 15 of ``bench.diagnose_real.PAIRS``, the
real-data table's) or the cases given, prints one row: Spearman of the point ranking with the true ranking and coverage of
the 95% rank intervals (share of candidates whose true rank lies inside; the simple average has no
interval, so it covers a candidate only when its point rank is exact) for the simple average, the
default simplex model (``bayesian``: ω = 0, β_max = 5) and ``ordinal``; each fit's convergence
(max R-hat and min bulk ESS over the ranked quantity, divergences) and wall time; and the ratio of
the ordinal fit's time to the simplex fit's (issue target: ≤ 2). Full data only (no item
resamples: the intervals are the fits' own). Both fits: 4 chains × 1000 + 1000 (the default fit),
self-family pairs excluded (not where that leaves a candidate without a judge: the row says
"no excl."), fitted one after the other in this process so that they share the
machine's load. The simplex fit's time excludes compiling (``timing['compile_s']``, a one-off per
machine for its numba engine); the ordinal fit's includes loading its numba kernel. Asserts nothing.

Usage (repo root, project venv; run it niced on a shared machine)::

    nice -n 10 .venv/bin/python -m bench.ordinal_compare
    nice -n 10 .venv/bin/python -m bench.ordinal_compare --cases hanna:coherence --cutpoints shared
    nice -n 10 .venv/bin/python -m bench.ordinal_compare --data my.csv   # any table with true_score
"""

from __future__ import annotations

import argparse
import sys
import time

from bench.diagnose_real import PAIRS
from bench.speed import uptime


def _load(case: str):
    from simplex_core.data.datasets import load_dataset, resolve_data

    if ":" in case:
        name, criterion = case.split(":", 1)
        return load_dataset(name, criterion)
    return resolve_data(case)


def compare(table, *, cutpoints: str = "judge", chains: int = 4, draws: int = 1000, tune: int = 1000) -> dict:
    """One case's row (see the module docstring)."""
    from simplex_core.methods.simple_average import simple_average
    from simplex_core.data.views import count_tensor, item_view
    from simplex_core.summaries.evaluation import coverage, spearman, true_ranks
    from simplex_core.studies.experiments import _method_result, bayesian_settings
    from simplex_core.inference.fitting import fit_model
    from simplex_core.methods.ordinal import OrdinalMethod, OrdinalSettings

    from simplex_core.data.table import ValidationError

    view = item_view(table)
    truth = true_ranks(view)
    try:  # exclusion off (and said) where every judge of some candidate is of its family, as bench.real_data_table
        counts, excl = count_tensor(table, self_exclusion=True), True
    except ValidationError:
        counts, excl = count_tensor(table, self_exclusion=False), False
    excluded = frozenset(table.self_family_pairs) if excl else frozenset()
    sa = simple_average(view, excluded=excluded)
    settings = bayesian_settings("bayesian", self_exclusion=excl, chains=chains, draws=draws, tune=tune)
    t0 = time.perf_counter()
    fit = fit_model(counts, settings)
    simplex_s = time.perf_counter() - t0 - float(fit.timing.get("compile_s", 0.0))
    bayes = _method_result("bayesian", fit, simplex_s)
    ordinal = OrdinalMethod(table.scale, excluded, OrdinalSettings(chains=chains, draws=draws, tune=tune,
                                                                    cutpoints=cutpoints))
    t0 = time.perf_counter()
    ores = ordinal(view)
    ordinal_s = time.perf_counter() - t0
    d, b = ores.details, bayes.details
    return {
        "excl": excl, "K": len(table.candidates), "J": len(table.judges), "I": len(table.items),
        "sp_avg": spearman(sa.ranks, truth), "sp_bayes": spearman(bayes.ranks, truth), "sp_ord": spearman(ores.ranks, truth),
        "cov_avg": coverage(sa, truth), "cov_bayes": coverage(bayes, truth), "cov_ord": coverage(ores, truth),
        "bayes_conv": f"{b['max_rhat']:.3f}/{b['min_ess_bulk']:.0f}/{b['divergences']:.0f}",
        "ord_conv": f"{d['max_rhat']:.3f}/{d['min_ess_bulk']:.0f}/{d['divergences']:.0f}",
        "ord_ok": bool(d["converged"]), "bayes_ok": bool(b["converged"]),
        "bayes_s": simplex_s, "ord_s": ordinal_s, "ratio": ordinal_s / simplex_s,
    }


HEADER = (f"{'case':34} {'K':>3} {'J':>2} {'I':>4} | {'Spearman avg':>12} {'simplex':>7} {'ordinal':>7} | "
          f"{'coverage avg':>12} {'simplex':>7} {'ordinal':>7} | {'simplex R-hat/ESS/div':>22} {'s':>5} | "
          f"{'ordinal R-hat/ESS/div':>22} {'s':>5} | {'ratio':>5}")


def format_row(case: str, r: dict) -> str:
    case = case if r["excl"] else f"{case} (no excl.)"
    return (f"{case:34} {r['K']:>3} {r['J']:>2} {r['I']:>4} | {r['sp_avg']:>12.3f} {r['sp_bayes']:>7.3f} "
            f"{r['sp_ord']:>7.3f} | {r['cov_avg']:>12.2f} {r['cov_bayes']:>7.2f} {r['cov_ord']:>7.2f} | "
            f"{r['bayes_conv'] + ('' if r['bayes_ok'] else ' NO'):>22} {r['bayes_s']:>5.0f} | "
            f"{r['ord_conv'] + ('' if r['ord_ok'] else ' NO'):>22} {r['ord_s']:>5.0f} | {r['ratio']:>5.2f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", nargs="*", default=list(PAIRS), help="dataset:criterion pairs (default: all with truth)")
    p.add_argument("--data", nargs="*", default=[], help="other tables with a true_score column (files)")
    p.add_argument("--cutpoints", default="judge", choices=["judge", "shared"])
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    args = p.parse_args(argv)
    print(f"# bench.ordinal_compare, cutpoints={args.cutpoints}, {args.chains} chains x {args.draws} + {args.tune}; "
          f"{time.strftime('%Y-%m-%d %H:%M')}; {uptime()}", flush=True)
    print(HEADER, flush=True)
    rows = []
    for case in list(args.cases) + list(args.data):
        try:
            r = compare(_load(case), cutpoints=args.cutpoints, chains=args.chains, draws=args.draws, tune=args.tune)
        except ValueError as exc:
            print(f"{case:34} could not run: {exc}", flush=True)
            continue
        rows.append(r)
        print(format_row(case, r), flush=True)
    if rows:
        n = len(rows)
        mean = {k: sum(r[k] for r in rows) / n for k in ("sp_avg", "sp_bayes", "sp_ord", "cov_avg", "cov_bayes", "cov_ord")}
        print(f"{'mean over ' + str(n) + ' cases':34} {'':>3} {'':>2} {'':>4} | {mean['sp_avg']:>12.3f} "
              f"{mean['sp_bayes']:>7.3f} {mean['sp_ord']:>7.3f} | {mean['cov_avg']:>12.2f} {mean['cov_bayes']:>7.2f} "
              f"{mean['cov_ord']:>7.2f} |", flush=True)
        print(f"# ordinal converged in {sum(r['ord_ok'] for r in rows)} of {n}; simplex in "
              f"{sum(r['bayes_ok'] for r in rows)} of {n}; ordinal/simplex time ratio median "
              f"{sorted(r['ratio'] for r in rows)[n // 2]:.2f}, max {max(r['ratio'] for r in rows):.2f}; {uptime()}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
