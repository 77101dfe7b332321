"""Robustness of the rank intervals to what real judges do and the model does not say: candidate-specific
judge bias, shared between judges in part, and a human truth that is one more rater with a bias of its own.

Data are simulated with shared truth (each answer one true level, every judge sees it through its own
confusion matrix, accuracy uniform in 0.60 … 0.90, the rest to the neighbouring levels), and then each
(judge, candidate) pair gets a bias b_jk = s_k + u_jk (in levels: a score moves one level up with
probability b, down with probability −b, when b < 0); s_k ~ N(0, ρ σ²) is shared by every LLM judge,
u_jk ~ N(0, (1 − ρ) σ²) is the judge's own. The truth is a human rater who sees the true level exactly
but with its own candidate bias b_0k ~ N(0, σ²) (the same mechanism); true ranks are the ranks of the
human's mean score per candidate. σ = 0 is the model's own world (then the human is the truth itself).

Per σ: coverage of the 95% rank intervals of the panel's ranks (E_k alone, the paper's estimand) and of
the product's (E_k + δ_k, :mod:`simplex_core.inference.rater_deviation`), their mean width (ranks
admitted), the Spearman of the posterior-mean ranking and of the judges' simple average with the true
ranking, and convergence. Nothing here was tuned: σ, ρ and the sizes were set before the first run.
Asserts nothing; prints Markdown.

Usage (repo root, project venv)::

    nice -n 10 .venv/bin/python -m bench.rater_deviation_robustness                # 8 replicates per σ
    nice -n 10 .venv/bin/python -m bench.rater_deviation_robustness --replicates 3 --sigmas 0,0.2
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from bench.shared_truth_calibration import judge_matrix
from bench.speed import uptime

K, J, N_ITEMS, LEVELS = 10, 5, 100, 5
SHARED = 0.3  # ρ: the share of a judge's candidate bias that every judge shares
ACCURACY = (0.60, 0.90)


def _shift(scores: np.ndarray, bias: float, rng: np.random.Generator, lo: float, hi: float) -> np.ndarray:
    move = rng.uniform(size=scores.shape) < abs(bias)
    return np.clip(scores + np.where(move, np.sign(bias), 0.0), lo, hi)


def simulate_case(sigma: float, seed: int):
    from simplex_core.data.scale import Scale
    from simplex_core.model.simulate import ordinal_prevalences, simulate

    rng = np.random.default_rng([seed, 2026])
    scale = Scale(tuple(float(v) for v in range(1, LEVELS + 1)))
    pi = ordinal_prevalences(np.linspace(-0.3, 0.3, K), LEVELS)
    theta = np.stack([judge_matrix(a, LEVELS) for a in rng.uniform(*ACCURACY, size=J)])
    sim = simulate(scale=scale, n_items=N_ITEMS, candidates=K, judges=J, pi=pi, theta=theta, omega=0.0,
                   latent_coupling="shared", rng=rng)
    frame = sim.frame.copy()
    cands, judges = sorted(frame["candidate"].unique()), sorted(frame["judge"].unique())
    shared = rng.normal(0.0, np.sqrt(SHARED) * sigma, size=len(cands))
    for a, j in enumerate(judges):
        for b, c in enumerate(cands):
            rows = (frame["judge"] == j) & (frame["candidate"] == c)
            bias = shared[b] + rng.normal(0.0, np.sqrt(1 - SHARED) * sigma)
            frame.loc[rows, "score"] = _shift(frame.loc[rows, "score"].to_numpy(float), bias, rng, 1, LEVELS)
    answers = frame.drop_duplicates(["item", "candidate"])[["item", "candidate", "true_score"]].copy()
    human = pd.Series(0.0, index=answers.index)
    for c in cands:
        rows = answers["candidate"] == c
        human[rows] = _shift(answers.loc[rows, "true_score"].to_numpy(float), rng.normal(0.0, sigma), rng, 1, LEVELS)
    answers["human"] = human
    truth = answers.groupby("candidate")["human"].mean()
    return frame.drop(columns=["true_score"]), scale, truth


def main(argv: list[str] | None = None) -> None:
    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.definition import FitSettings
    from simplex_core.model.ranks import rank_interval, rank_scores, ranks_from_scores
    from simplex_core.summaries.evaluation import rank_correlation

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replicates", type=int, default=8)
    p.add_argument("--sigmas", default="0,0.15,0.3")
    p.add_argument("--first-seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"# bench.rater_deviation_robustness  {time.strftime('%Y-%m-%d %H:%M:%S')}  K={K} J={J} "
          f"items={N_ITEMS} levels={LEVELS} shared share={SHARED} replicates={args.replicates}")
    print(f"# load before: {uptime()}")
    summary = []
    for sigma in (float(s) for s in args.sigmas.split(",")):
        rows = []
        for r in range(args.replicates):
            frame, scale, truth = simulate_case(sigma, args.first_seed + r)
            table = load_table(frame, scale=scale)
            counts = count_tensor(table)
            res = fit_model(counts, FitSettings(seed=r))
            post = res.idata.posterior
            true_rank = rank_scores(truth.reindex(list(counts.candidates)).to_numpy())
            e = np.asarray(post["expected_score"].values).reshape(-1, len(counts.candidates))
            d = np.asarray(post["rater_deviation"].values).reshape(e.shape)
            out = {"conv": res.diagnostics.converged}
            for label, draws in (("panel", e), ("truth", e + d)):
                lo, hi = rank_interval(ranks_from_scores(draws))
                out[f"cov_{label}"] = float(np.mean((lo <= true_rank) & (true_rank <= hi)))
                out[f"width_{label}"] = float(np.mean(hi - lo + 1))
            out["rho_model"] = rank_correlation(rank_scores(e.mean(axis=0)), true_rank)
            avg = table.frame.groupby("candidate")["score"].mean().reindex(list(counts.candidates)).to_numpy()
            out["rho_average"] = rank_correlation(rank_scores(avg), true_rank)
            rows.append(out)
            print(f"  σ={sigma} replicate {r}: panel cov {out['cov_panel']:.2f} width {out['width_panel']:.1f}; "
                  f"with δ cov {out['cov_truth']:.2f} width {out['width_truth']:.1f}; ρ model "
                  f"{out['rho_model']:.2f} average {out['rho_average']:.2f}; {res.diagnostics.message}", flush=True)
        df = pd.DataFrame(rows)
        summary.append((sigma, int(df.conv.sum()), len(df), *df[["cov_panel", "width_panel", "cov_truth",
                                                                 "width_truth", "rho_model", "rho_average"]].mean()))
    print()
    print("| σ (bias SD, levels) | converged | coverage E_k | width E_k | coverage E_k + δ_k | width E_k + δ_k | "
          "Spearman model | Spearman simple average |")
    print("|---|---|---|---|---|---|---|---|")
    for sigma, nc, n, cp, wp, ct, wt, rm, ra in summary:
        print(f"| {sigma:g} | {nc}/{n} | {cp:.3f} | {wp:.2f} | {ct:.3f} | {wt:.2f} | {rm:.3f} | {ra:.3f} |")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
