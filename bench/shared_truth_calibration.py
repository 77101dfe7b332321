"""Calibration of the rank intervals on data simulated with shared truth (the targets).

Every answer has one true level, seen by every judge through its own confusion matrix (the
simulator's ``latent_coupling="shared"`` at ω = 0). Close candidates (binary: accuracies 0.55 … 0.65;
5 levels: qualities −0.2 … 0.2), 300 items, J ∈ {1, 3, 9} judges whose accuracy is drawn uniformly
from 0.70 … 0.95 per replicate (binary: symmetric confusion; 5 levels: the rest of each row split
between the neighbouring levels). Each replicate is fitted at the default settings (ω = 0,
β_max = 5, 4 chains × 1000 + 1000) with each likelihood asked for. Prints, per setting: how many fits
converged (R-hat ≤ 1.01, bulk ESS ≥ 400, no divergences), the share of candidates whose 95% rank
interval covers the population rank, and the mean interval width (ranks). Asserts nothing.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.shared_truth_calibration                       # 20 replicates each
    .venv/bin/python -m bench.shared_truth_calibration --replicates 5 --judges 9 --likelihoods per-judge
    .venv/bin/python -m bench.shared_truth_calibration --settings '{"prior": "diagonal"}'
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench import metrics
from bench.speed import uptime

N_CANDIDATES = 8
ACCURACY_RANGE = (0.70, 0.95)


def judge_matrix(accuracy: float, n_levels: int) -> np.ndarray:
    """Θ with ``accuracy`` on the diagonal, the rest split between the neighbouring levels."""
    theta = np.zeros((n_levels, n_levels))
    for t in range(n_levels):
        neighbours = [m for m in (t - 1, t + 1) if 0 <= m < n_levels]
        theta[t, t] = accuracy
        for m in neighbours:
            theta[t, m] = (1.0 - accuracy) / len(neighbours)
    return theta


def simulate_case(scale_name: str, n_judges: int, seed: int, n_items: int = 300):
    from simplex_core.data.scale import Scale
    from simplex_core.model.simulate import ordinal_prevalences, simulate

    rng = np.random.default_rng([seed, n_judges, 11])
    if scale_name == "binary":
        scale = Scale((0.0, 1.0), ("incorrect", "correct"))
        acc = np.linspace(0.55, 0.65, N_CANDIDATES)
        pi = np.column_stack([1 - acc, acc])
    else:
        scale = Scale((1.0, 2.0, 3.0, 4.0, 5.0))
        pi = ordinal_prevalences(np.linspace(-0.2, 0.2, N_CANDIDATES), 5)
    accuracies = rng.uniform(*ACCURACY_RANGE, size=n_judges)
    theta = np.stack([judge_matrix(a, scale.n_levels) for a in accuracies])
    return simulate(scale=scale, n_items=n_items, candidates=N_CANDIDATES, judges=n_judges, pi=pi, theta=theta,
                    omega=0.0, latent_coupling="shared", rng=rng)


def main(argv: list[str] | None = None) -> None:
    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.settings import LIKELIHOODS, FitSettings

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replicates", type=int, default=20)
    p.add_argument("--scales", default="binary,five")
    p.add_argument("--judges", default="1,3,9")
    p.add_argument("--likelihoods", default="shared-truth")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--settings", default="{}", help="more FitSettings fields as JSON, e.g. '{\"prior\": \"diagonal\"}'")
    args = p.parse_args(argv)
    import json

    options = json.loads(args.settings)
    likelihoods = args.likelihoods.split(",")
    assert all(lk in LIKELIHOODS for lk in likelihoods), likelihoods

    print(f"# bench.shared_truth_calibration  {time.strftime('%Y-%m-%d %H:%M:%S')}  replicates={args.replicates}  "
          f"first seed={args.first_seed}  settings={options}")
    print(f"# load before: {uptime()}")
    summary = []
    for scale_name in args.scales.split(","):
        for n_judges in (int(j) for j in args.judges.split(",")):
            for likelihood in likelihoods:
                rows = []
                for r in range(args.replicates):
                    sim = simulate_case(scale_name, n_judges, args.first_seed + r)
                    counts = count_tensor(load_table(sim.frame, scale=sim.scale))
                    t0 = time.perf_counter()
                    res = fit_model(counts, FitSettings(likelihood=likelihood, seed=r, **options))
                    wall = time.perf_counter() - t0
                    es = np.asarray(res.idata.posterior["expected_score"].values)
                    lo, hi = metrics.rank_intervals(es)  # the panel's ranks (E_k alone)
                    covered = (lo <= sim.ranks) & (sim.ranks <= hi)
                    # the product's rank intervals: E_k + δ_k (simplex_core.inference.rater_deviation)
                    lo_t, hi_t = metrics.rank_intervals(es + np.asarray(res.idata.posterior["rater_deviation"].values))
                    covered_t = (lo_t <= sim.ranks) & (sim.ranks <= hi_t)
                    rows.append({"conv": res.diagnostics.converged, "covered": covered.sum(), "K": covered.size,
                                 "width": float(np.mean(hi - lo)), "wall": wall, "covered_t": covered_t.sum(),
                                 "width_t": float(np.mean(hi_t - lo_t))})
                    print(f"  {scale_name} J={n_judges} {likelihood} replicate {r}: coverage {covered.mean():.2f} "
                          f"(with δ {covered_t.mean():.2f}), width {rows[-1]['width']:.2f} (with δ "
                          f"{rows[-1]['width_t']:.2f}), {wall:.1f} s, {res.diagnostics.message}", flush=True)
                n_cov, n_all = sum(x["covered"] for x in rows), sum(x["K"] for x in rows)
                n_cov_t = sum(x["covered_t"] for x in rows)
                summary.append((scale_name, n_judges, likelihood, sum(x["conv"] for x in rows), len(rows),
                                n_cov / n_all, n_cov, n_all, np.mean([x["width"] for x in rows]),
                                np.median([x["wall"] for x in rows]), n_cov_t / n_all, n_cov_t,
                                np.mean([x["width_t"] for x in rows])))
    print()
    print("Coverage and width of the panel's ranks (E_k) and of the product's (E_k + δ_k, the truth as one more "
          "rater; here the truth is the population's, with no rater deviation: the price of δ is its width).")
    print()
    print("| scale | judges | likelihood | converged | coverage E_k | width E_k (hi − lo) | coverage E_k + δ_k | "
          "width E_k + δ_k | median wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s, j, lk, nc, n, cov, n_cov, n_all, width, wall, cov_t, n_cov_t, width_t in summary:
        print(f"| {s} | {j} | {lk} | {nc}/{n} | {cov:.3f} ({n_cov}/{n_all}) | {width:.2f} | "
              f"{cov_t:.3f} ({n_cov_t}/{n_all}) | {width_t:.2f} | {wall:.1f} |")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
