"""Robustness of the default ranking to judges who see a continuous quality, not a true level.

Real rubric judges (and the human raters whose mean is the truth) read one answer and place it on a
scale; two judges reading the same answer err together, because the answer's quality varies *within*
a level. The shared-truth likelihood assumes the opposite: given the answer's true level, judges err
independently. This bench simulates the many-facet world a psychometrician would assume and checks
whether the default ranking still beats, or ties, the plain mean of the judges' scores there.

Simulation (every figure fixed before the first run, none tuned):

- K = 12 candidates, quality q_k ~ N(0, 0.25²) (close systems, as on summarisation benchmarks);
  100 items, difficulty u_i ~ N(0, 0.7²); the answer's quality x_ik = q_k + u_i + e_ik, e_ik ~ N(0, 0.7²).
- The truth: three human raters, each cut(x_ik + N(0, 0.5²)) at (-1.5, -0.5, 0.5, 1.5) on 1..5; the
  true score is their mean, the true ranking that of its mean per candidate (as HANNA's, SummEval's).
- J = 5 judges: cut(a_j x_ik + b_j + η_jk + ζ_ik + N(0, σ_j²)) at the same cutpoints, with
  discrimination a_j ~ U(0.6, 1.4), leniency b_j ~ N(0, 0.5²), noise σ_j ~ U(0.5, 1.0), a bias of
  its own per candidate η_jk ~ N(0, 0.1²).
- Scenarios: ``latent`` (ζ = 0: judges share only the answer's quality), ``shared`` (ζ_ik ~ N(0,
  0.4²): an answer-level error every judge makes and the humans do not), ``weak`` (``shared`` plus a
  sixth, near-constant judge: a = 0.2, b = 1.5, so about 80% of its scores are one level), ``skewed``
  (``shared`` with every answer's quality moved up by 1.8: most scores are 4 or 5, as on a
  consistency or fluency criterion where most answers are fine).

Per scenario and replicate: the default fit (``FitSettings()``), the plain mean of the judges' scores,
Bradley–Terry (and with ``--ordinal`` the ordinal many-facet model), with Spearman against the true ranking, coverage and width of the 95% rank intervals,
and the default fit's convergence. Asserts nothing; prints Markdown.

Usage (repo root, project venv)::

    nice -n 10 .venv/bin/python -m bench.latent_quality_robustness --replicates 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from bench.speed import uptime

K, N_ITEMS, J, LEVELS = 12, 100, 5, 5
CUTS = np.array([-1.5, -0.5, 0.5, 1.5])
SCENARIOS = ("latent", "shared", "weak", "skewed")
SKEW = 1.8  # ``skewed``: every answer's quality moved up, so most true scores and judges' scores are 4 or 5


def _cut(x: np.ndarray) -> np.ndarray:
    return 1.0 + np.searchsorted(CUTS, x).astype(float)


def simulate_case(scenario: str, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng([seed, 2027])
    q = rng.normal(0.0, 0.25, K)
    u = rng.normal(0.0, 0.7, N_ITEMS)
    x = q[None, :] + u[:, None] + rng.normal(0.0, 0.7, (N_ITEMS, K))  # [item, candidate]
    if scenario == "skewed":
        x = x + SKEW
    humans = np.stack([_cut(x + rng.normal(0.0, 0.5, x.shape)) for _ in range(3)])
    truth = humans.mean(axis=0)
    zeta = rng.normal(0.0, 0.4, x.shape) if scenario in ("shared", "weak", "skewed") else np.zeros_like(x)
    judges = [(rng.uniform(0.6, 1.4), rng.normal(0.0, 0.5), rng.uniform(0.5, 1.0)) for _ in range(J)]
    if scenario == "weak":
        judges.append((0.2, 1.5, 0.5))
    rows = []
    for j, (a, b, s) in enumerate(judges):
        eta = rng.normal(0.0, 0.1, K)
        score = _cut(a * x + b + eta[None, :] + zeta + rng.normal(0.0, s, x.shape))
        for k in range(K):
            rows.append(pd.DataFrame({"item": [f"i{i:03d}" for i in range(N_ITEMS)], "candidate": f"c{k:02d}",
                                      "judge": f"j{j}", "score": score[:, k], "true_score": truth[:, k]}))
    return pd.concat(rows, ignore_index=True)


def main(argv: list[str] | None = None) -> None:
    from simplex_core.data.scale import Scale
    from simplex_core.data.table import load_table
    from simplex_core.data.views import count_tensor, item_view
    from simplex_core.inference.fitting import fit_model
    from simplex_core.methods.baselines import run_methods, table_baseline_methods
    from simplex_core.model.settings import FitSettings
    from simplex_core.summaries.evaluation import evaluate_results, true_ranks
    from simplex_core.summaries.posterior_views import bayesian_method_result

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replicates", type=int, default=4)
    p.add_argument("--scenarios", default=",".join(SCENARIOS))
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--settings", default="{}", help="FitSettings fields as JSON, for the model row")
    p.add_argument("--ordinal", action="store_true", help="also the ordinal many-facet model (methods.ordinal)")
    args = p.parse_args(argv)
    import json

    options = json.loads(args.settings)
    print(f"# bench.latent_quality_robustness  {time.strftime('%Y-%m-%d %H:%M:%S')}  K={K} J={J} items={N_ITEMS} "
          f"levels={LEVELS} replicates={args.replicates} settings={options}")
    print(f"# load before: {uptime()}")
    scale = Scale(tuple(float(v) for v in range(1, LEVELS + 1)))
    rows = []
    for scenario in args.scenarios.split(","):
        for r in range(args.replicates):
            frame = simulate_case(scenario, args.first_seed + r)
            table = load_table(frame, scale=scale)
            truth = true_ranks(item_view(table))
            t0 = time.perf_counter()
            fit = fit_model(count_tensor(table), FitSettings(seed=r, **options))
            seconds = time.perf_counter() - t0
            results = {"default": bayesian_method_result(fit, max_draws=None)}
            methods = table_baseline_methods(table, ppi_fractions=(), single_judges=False)
            results |= run_methods(item_view(table), {m: methods[m] for m in ("simple_average", "bradley_terry")}, rng=0)
            if args.ordinal:
                from simplex_core.methods.ordinal import ordinal_for_table

                results["ordinal"] = ordinal_for_table(table)(item_view(table), np.random.default_rng(r))
            ev = evaluate_results(results, truth).set_index("method")
            d = fit.diagnostics
            for method, e in ev.iterrows():
                rows.append({"scenario": scenario, "replicate": r, "method": method, "spearman": e["spearman"],
                             "coverage": e["coverage"], "width": e["width"],
                             "converged": bool(results[method].details.get("converged")) if method == "ordinal"
                             else d.converged})
            ordinal = f" ordinal {ev.loc['ordinal', 'spearman']:.3f}" if args.ordinal else ""
            print(f"  {scenario} r{r}: ρ default {ev.loc['default', 'spearman']:.3f} average "
                  f"{ev.loc['simple_average', 'spearman']:.3f} BT {ev.loc['bradley_terry', 'spearman']:.3f}{ordinal}; "
                  f"coverage {ev.loc['default', 'coverage']:.2f} width {ev.loc['default', 'width']:.1f}; "
                  f"{d.message} ({seconds:.0f} s)", flush=True)
    print_table(pd.DataFrame(rows))
    print(f"# load after: {uptime()}")


def print_table(df: pd.DataFrame, per: str = "replicate", digits: int = 2) -> None:
    """The Markdown table of mean Spearman (and each run's), coverage, width and, where ``df`` has a
    ``converged`` column, fits converged, per scenario and method."""
    converged = "converged" in df.columns
    print()
    print(f"| scenario | method | Spearman (mean) | Spearman per {per} | coverage | width |"
          + (" fits converged |" if converged else ""))
    print("|---|---|---|---|---|---|" + ("---|" if converged else ""))
    for (scenario, method), g in df.groupby(["scenario", "method"], sort=False):
        runs = " ".join(f"{v:.{digits}f}" for v in g["spearman"])
        print(f"| {scenario} | {method} | {g['spearman'].mean():.3f} | {runs} | {g['coverage'].mean():.2f} | "
              f"{g['width'].mean():.1f} |" + (f" {int(g['converged'].sum())}/{len(g)} |" if converged else ""))


if __name__ == "__main__":
    main()
