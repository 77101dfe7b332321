"""Self-family judgments kept apart, left out or pooled: Spearman and coverage on data with and without
self-preference, against the simple averages.

Data follow a latent-continuous (many-facet) generator the simplex model does not assume, so this is a
robustness check, not a calibration: 12 candidates of four families (A, B, C, D, three each), 5 judges
of families A, A, A, B, C (so a family-A candidate keeps 2 judges once its own family's are left out),
100 items. An answer's true quality is candidate + item + noise; the truth is the mean of three
human raters who see it through fixed cut points with noise of their own; each judge sees it with its
own slope, leniency and cut points, an error every judge shares on the answer, a small candidate bias,
and — on its own family's candidates — a self-preference ``pref`` × U(0.5, 1.5) (latent units; the
human scale's cut points are 0.7–0.8 apart). Nothing was tuned: the sizes and spreads were set before
the first run.

Per replicate: the default fit (self-family judgments kept apart), the same with them left out
(``self_exclusion="drop"``, the paper's practice) and pooled (``False``); the simple average with
self-family judgments left out, and the plain mean of every judgment. Prints Spearman with the true
ranking, coverage and mean width of the 95% rank intervals, and convergence. Asserts nothing.

Usage (repo root, project venv)::

    nice -n 10 .venv/bin/python -m bench.self_family_apart [--replicates 5] [--prefs 0,0.6]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from bench.speed import uptime

JUDGE_FAMILIES = ("A", "A", "A", "B", "C")
K, N_ITEMS = 12, 100
HUMAN_CUTS = np.array([-1.5, -0.7, 0.0, 0.8])
VIEWS = {"kept apart (default)": True, "left out (paper)": "drop", "pooled": False}


def simulate(seed: int, pref: float) -> tuple[pd.DataFrame, dict[str, str]]:
    rng = np.random.default_rng([seed, 7])
    quality = rng.normal(0, 0.35, K)
    latent = quality[None] + rng.normal(0, 0.8, N_ITEMS)[:, None] + rng.normal(0, 0.6, (N_ITEMS, K))
    human = np.mean([np.searchsorted(HUMAN_CUTS, latent + rng.normal(0, 0.4, latent.shape)) + 1 for _ in range(3)], axis=0)
    fam = ["ABCD"[k % 4] for k in range(K)]
    shared_answer = rng.normal(0, 0.4, (N_ITEMS, K))
    shared_candidate = rng.normal(0, 0.1, K)
    rows = []
    for j, jf in enumerate(JUDGE_FAMILIES):
        slope, leniency = rng.uniform(0.6, 1.4), rng.normal(0.3, 0.4)
        cuts = np.sort(HUMAN_CUTS + rng.normal(0, 0.25, 4))
        own_bias = rng.normal(0, 0.1, K)
        self_pref = np.array([pref * rng.uniform(0.5, 1.5) if fam[k] == jf else 0.0 for k in range(K)])
        seen = (slope * (latent + shared_answer) + leniency + shared_candidate[None] + own_bias[None] + self_pref[None]
                + rng.normal(0, 0.5, (N_ITEMS, K)))
        score = np.searchsorted(cuts, seen) + 1
        for k in range(K):
            rows.append(pd.DataFrame({"item": np.arange(N_ITEMS), "candidate": f"{fam[k]}-c{k:02d}", "judge": f"{jf}-j{j}",
                                      "score": score[:, k].astype(float), "true_score": human[:, k]}))
    families = {f"{jf}-j{j}": jf for j, jf in enumerate(JUDGE_FAMILIES)} | {f"{fam[k]}-c{k:02d}": fam[k] for k in range(K)}
    return pd.concat(rows, ignore_index=True), families


def main(argv: list[str] | None = None) -> None:
    from simplex_core.data.scale import Scale
    from simplex_core.data.table import load_table
    from simplex_core.data.views import count_tensor, item_view
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.ranks import rank_interval, rank_scores
    from simplex_core.model.settings import FitSettings
    from simplex_core.summaries.evaluation import rank_correlation, true_ranks

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replicates", type=int, default=5)
    p.add_argument("--prefs", default="0,0.6")
    args = p.parse_args(argv)
    print(f"# bench.self_family_apart  {time.strftime('%Y-%m-%d %H:%M:%S')}  replicates={args.replicates}  load: {uptime()}")
    summary = []
    for pref in (float(x) for x in args.prefs.split(",")):
        rows = []
        for r in range(args.replicates):
            frame, families = simulate(r, pref)
            table = load_table(frame, scale=Scale(tuple(float(v) for v in range(1, 6))), families=families)
            truth = true_ranks(item_view(table))
            cands = list(table.candidates)
            true_rank = truth.reindex(cands).to_numpy()
            row: dict = {}
            for label, view in VIEWS.items():
                counts = count_tensor(table, self_exclusion=view)
                fit = fit_model(counts, FitSettings(seed=r, self_exclusion=view))
                post = fit.idata.posterior
                e = np.asarray(post["expected_score"].values).reshape(-1, len(cands))
                lo, hi = rank_interval(np.asarray(post["rank"].values).reshape(-1, len(cands)))
                row[label] = (rank_correlation(rank_scores(e.mean(axis=0)), true_rank),
                              float(np.mean((lo <= true_rank) & (true_rank <= hi))), float(np.mean(hi - lo + 1)),
                              fit.diagnostics.converged)
            for label, v in (("simple average (self-family left out)", item_view(table, self_exclusion=True)),
                             ("plain mean (all judgments)", item_view(table))):
                judges = [c for c in v.columns if c != "true_score"]
                avg = v[judges].mean(axis=1).groupby(level="candidate").mean().reindex(cands).to_numpy()
                row[label] = (rank_correlation(rank_scores(avg), true_rank), float("nan"), 1.0, True)
            print(f"  pref={pref:g} replicate {r}: " + "; ".join(f"{k} ρ {v[0]:.3f} cov {v[1]:.2f} width {v[2]:.1f}"
                                                                  for k, v in row.items()), flush=True)
            rows.append(row)
        for label in rows[0]:
            vals = np.array([r[label][:3] for r in rows], dtype=float)
            means = [float(np.mean(col)) if np.isfinite(col).any() else float("nan") for col in vals.T]
            summary.append((pref, label, *means, sum(r[label][3] for r in rows), len(rows)))
    print()
    print("| self-preference | method | Spearman | coverage | width (ranks of 12) | converged |")
    print("|---|---|---|---|---|---|")
    for pref, label, rho, cov, width, ok, n in summary:
        print(f"| {pref:g} | {label} | {rho:.3f} | {'–' if np.isnan(cov) else f'{cov:.2f}'} | {width:.1f} | {ok}/{n} |")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
