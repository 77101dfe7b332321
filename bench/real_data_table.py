"""Every method against the human truth on every built-in dataset-criterion: the real-data table.

For each built-in dataset-criterion with item-level truth, on the full data (point figures, no item
resamples): the default model (shared truth, ω = 0, β_max = 5; its ranks are the truth's, E_k + δ_k with
the rater deviation of :mod:`simplex_core.inference.rater_deviation`), the same fit ranked by E_k alone
(``default, E_k only``: the paper's estimand, what the default was before δ), the same with the paper's
weight-propagation judge prior (the default until 2026-12-08), the paper's whole model (per-judge likelihood,
weight-propagation prior),
integrated mode (ω, β_max learnt), optionally the ordinal many-facet model (``--ordinal``: a fit of a
minute or more per case), and the label-free baselines (simple average, Bradley–Terry, bootstrap),
all on one data view (self-family exclusion on; off, and said, where every judge of some candidate
shares its family). Per method: Spearman with the true ranking, coverage of the 95% rank intervals,
their mean width (ranks admitted) and mean interval score (width + 40 per rank missed), and
convergence for the fitted ones (R-hat ≤ 1.01, bulk ESS ≥ 400, no divergences). Then the issue's
two targets per model: coverage ≥ 0.90, Spearman ≥ the simple average's − 0.02, and how many cases
meet them.

Fits go through the fit cache (a rerun is free). Asserts nothing; prints Markdown (``--write FILE``
also writes it).

Usage (repo root, project venv)::

    nice -n 10 .venv/bin/python -m bench.real_data_table --write docs/RESULTS-real-data.md
    nice -n 10 .venv/bin/python -m bench.real_data_table --models default --extra 'diagonal prior={"prior": "diagonal"}'
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bench.diagnose_real import PAIRS
from bench.speed import uptime

MODELS = {"default": {}, "weight propagation (the paper's prior)": {"prior": "weight-propagation"},
          # the paper's whole model: its likelihood and its judge prior
          "per-judge": {"likelihood": "per-judge", "prior": "weight-propagation"}, "integrated": {"integrated": True},
          # the same as the default but with self-family judgments left out (the paper's practice) instead of kept apart
          "default, self-family dropped": {"self_exclusion": "drop"}}
#: the simple average of every judgment, self-family ones included: ``groupby("candidate").score.mean()``
PLAIN = "plain mean (all judgments)"
#: the default fit's ranks of E_k alone (``fit --no-rater-deviation``): what the default was before δ
PANEL = "default, E_k only"
BASELINES = ("simple_average", "bradley_terry", "bootstrap")


def _f(x, d: int = 2) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:.{d}f}"


def run_pair(pair: str, cache, ordinal: bool, models: dict[str, dict] = MODELS) -> list[dict]:
    from simplex_core.data.datasets import load_dataset
    from simplex_core.data.problems import ValidationError
    from simplex_core.data.views import count_tensor, item_view
    from simplex_core.inference.fit_cache import fit_cached
    from simplex_core.inference.rater_deviation import without_rater_deviation
    from simplex_core.methods.baselines import run_methods, table_baseline_methods
    from simplex_core.model.settings import FitSettings
    from simplex_core.summaries.evaluation import evaluate_results, true_ranks
    from simplex_core.summaries.posterior_views import bayesian_method_result

    name, criterion = pair.split(":")
    table = load_dataset(name, criterion=criterion)
    excl = True
    try:
        counts = count_tensor(table, self_exclusion=True)
    except ValidationError:  # every judge of some candidate shares its family
        excl = False
        counts = count_tensor(table, self_exclusion=False)
    truth = true_ranks(item_view(table))
    results, conv, seconds = {}, {}, {}
    for label, options in models.items():
        t0 = time.perf_counter()
        if not excl and "self_exclusion" in options:
            continue
        settings = FitSettings(**({"self_exclusion": excl} | options))  # per-judge leaves self-family out
        view = counts if settings.self_exclusion == excl else count_tensor(table, self_exclusion=settings.self_exclusion)
        fit = fit_cached(view, settings, cache=cache)
        seconds[label] = time.perf_counter() - t0
        results[label] = bayesian_method_result(fit, max_draws=None)
        d = fit.diagnostics
        conv[label] = f"{'yes' if d.converged else 'NO'} ({d.max_rhat:.3f}/{d.min_ess_bulk:.0f}/{d.divergences})"
        if label == "default":  # the same fit ranked by E_k alone: the paper's estimand, the price of δ
            results[PANEL] = bayesian_method_result(without_rater_deviation(fit.idata), max_draws=None)
            conv[PANEL] = conv[label]
    baselines = table_baseline_methods(table, self_exclusion=excl, ppi_fractions=(), single_judges=False)
    results |= run_methods(item_view(table, self_exclusion=excl), {b: baselines[b] for b in BASELINES}, rng=0)
    plain = table_baseline_methods(table, self_exclusion=False, ppi_fractions=(), single_judges=False)
    results[PLAIN] = run_methods(item_view(table), {"simple_average": plain["simple_average"]}, rng=0)["simple_average"]
    if ordinal:
        from simplex_core.methods.ordinal import ordinal_for_table

        t0 = time.perf_counter()
        res = ordinal_for_table(table, self_exclusion=excl)(item_view(table, self_exclusion=excl), np.random.default_rng(0))
        seconds["ordinal"] = time.perf_counter() - t0
        results["ordinal"] = res
        conv["ordinal"] = "yes" if res.details.get("converged") else "NO"
    table_out = evaluate_results(results, truth).set_index("method")
    rows = []
    for method, r in table_out.iterrows():
        rows.append({"pair": pair, "excl": excl, "method": method, "spearman": r["spearman"], "coverage": r["coverage"],
                     "width": r["width"], "interval_score": r["interval_score"], "converged": conv.get(method, "—"),
                     "seconds": seconds.get(method)})
    return rows


def render(rows: list[dict], header: str) -> str:
    out = [header, "", "| data | method | Spearman | coverage | width (ranks) | interval score | converged (R-hat/ESS/div) |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        data = r["pair"] + ("" if r["excl"] else " (exclusion off)")
        out.append(f"| {data} | {r['method']} | {_f(r['spearman'])} | {_f(r['coverage'])} | {_f(r['width'], 1)} | "
                   f"{_f(r['interval_score'], 1)} | {r['converged']} |")
    out += ["", "Targets per model (coverage ≥ 0.90; Spearman ≥ the simple average's − 0.02, the simple average with "
            "self-family judgments left out as the paper's, and [in brackets] the plain mean of every judgment), over the cases above:", ""]
    by_pair: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_pair.setdefault(r["pair"], {})[r["method"]] = r
    for model in [m for m in (*MODELS, PANEL, "ordinal") if any(m in v for v in by_pair.values())]:
        cov = rho = rho_plain = n = 0
        short = []
        for pair, methods in by_pair.items():
            if model not in methods:
                continue
            n += 1
            ok_cov = methods[model]["coverage"] >= 0.90 - 1e-12
            gap = methods[model]["spearman"] - methods["simple_average"]["spearman"]
            ok_rho = gap >= -0.02 - 1e-12
            cov += ok_cov
            rho += ok_rho
            rho_plain += methods[model]["spearman"] - methods[PLAIN]["spearman"] >= -0.02 - 1e-12
            if not (ok_cov and ok_rho):
                short.append(f"{pair} ({_f(methods[model]['coverage'])}, {gap:+.2f})")
        out.append(f"- `{model}`: coverage ≥ 0.90 on {cov} of {n}; Spearman ≥ simple average − 0.02 on {rho} of {n} "
                   f"[≥ plain mean − 0.02 on {rho_plain} of {n}]"
                   + (f"; short: {'; '.join(short)}" if short else "") + ".")
    means = {}
    for r in rows:
        means.setdefault(r["method"], []).append((r["spearman"], r["coverage"], r["width"], r["interval_score"]))
    out += ["", "Means over the cases (Spearman / coverage / width / interval score):", ""]
    for m, v in means.items():
        a = np.nanmean(np.array(v, dtype=float), axis=0)
        out.append(f"- `{m}`: {a[0]:.3f} / {a[1]:.2f} / {a[2]:.1f} / {a[3]:.1f}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", default=",".join(PAIRS), help="dataset:criterion, comma-separated")
    parser.add_argument("--ordinal", action="store_true", help="also fit the ordinal many-facet model (slow)")
    parser.add_argument("--write", default=None, help="also write the Markdown to this file")
    parser.add_argument("--models", default=",".join(MODELS), help="which of the model rows to fit, comma-separated")
    parser.add_argument("--extra", action="append", default=[], metavar="LABEL=JSON",
                        help="one more model row: FitSettings fields as JSON (repeatable), e.g. "
                             "'diagonal prior={\"prior\": \"diagonal\"}'")
    args = parser.parse_args(argv)
    import json

    import re

    # a comma followed by a space is inside a name ("default, self-family dropped"); one without separates names
    names = [m.strip() for m in re.split(r",(?!\s)", args.models) if m.strip()]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        parser.error(f"unknown model row(s) {', '.join(map(repr, unknown))}; known: {'; '.join(MODELS)}")
    models = {m: MODELS[m] for m in names}
    for extra in args.extra:
        label, _, options = extra.partition("=")
        models[label] = json.loads(options)
    from simplex_core.inference.fit_cache import FitCache

    cache = FitCache()
    rows = []
    for pair in args.pairs.split(","):
        rows += run_pair(pair, cache, args.ordinal, models)
        print(f"# {pair} done ({uptime()})", flush=True)
    header = ("# Every method against the human truth on the built-in datasets\n\n"
              "Printed by `python -m bench.real_data_table` (do not edit by hand): point figures on the full data, "
              "4 chains × 1000 + 1000 for every fit, self-family judgments kept apart (the default: a rater of their own) unless said; `default, self-family dropped` leaves them out (the paper's practice); the baselines leave them out; `plain mean (all judgments)` is the mean of every judgment. Width = mean number of "
              "ranks a 95% interval admits (a point rank: 1); interval score = width + 40 per rank by which the "
              f"interval misses the true rank (lower is better). Run {time.strftime('%Y-%m-%d %H:%M')}, {uptime()}.")
    text = render(rows, header)
    print(text)
    if args.write:
        Path(args.write).write_text(text)


if __name__ == "__main__":
    main()
