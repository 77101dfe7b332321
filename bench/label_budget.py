"""Budget curve of suggested labels against random labels (the target: suggested labels beat
random labels after 20 labels on TriviaQA V1 and on a simulated dataset).

For each data set: one shared-truth fit at the default settings (ω = 0, β_max = 5, 4 chains × 1000 +
1000); :func:`simplex_core.methods.labelling.suggest_labels` picks a batch of 20 answers; the budget curve
(:func:`simplex_core.methods.labelling.budget_curve`) simulates labels from the fitted model (a posterior draw
taken as the truth; labelling an answer reweights the draws) and prints the uncertainty (summed
posterior variance of the ranks), the expected coverage and mean width of the 95% rank intervals after
n = 0, 1, 2, 5, 10, 15, 20 labels (share = n / unlabelled answers) for the suggested order and
for random orders (mean over replicates), the effective sample size of the weights, and whether
suggested < random after 20. The simulated data set: 8 binary candidates with close accuracies
(0.55 … 0.65), 300 items, 5 judges of accuracy 0.70 … 0.95, one true level per answer shared by the
judges. Asserts nothing.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.label_budget [--replicates 300] [--budget 20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.speed import uptime


def simulated_table(seed: int = 0):
    from simplex_core.data.table import load_table
    from simplex_core.data.scale import Scale
    from simplex_core.model.simulate import simulate

    rng = np.random.default_rng(seed)
    acc = np.linspace(0.55, 0.65, 8)
    judge_acc = rng.uniform(0.70, 0.95, size=5)
    theta = np.array([[[a, 1 - a], [1 - a, a]] for a in judge_acc])
    sim = simulate(scale=Scale((0.0, 1.0)), n_items=300, candidates=8, judges=5, pi=np.column_stack([1 - acc, acc]),
                   theta=theta, latent_coupling="shared", rng=rng)
    return load_table(sim.frame, scale=sim.scale)


def run(name: str, table, budget: int, replicates: int) -> bool:
    from simplex_core.data.views import count_tensor
    from simplex_core.inference.fitting import fit_model
    from simplex_core.methods.labelling import LabelDraws, answers_of, budget_curve, suggest_labels
    from simplex_core.model.settings import FitSettings

    counts = count_tensor(table)
    t0 = time.perf_counter()
    fit = fit_model(counts, FitSettings(likelihood="shared-truth"))
    t_fit = time.perf_counter() - t0
    draws = LabelDraws.from_fit(fit)
    answers = answers_of(table, counts.included, counts.judges)
    t0 = time.perf_counter()
    suggested = suggest_labels(draws, answers, budget)
    t_suggest = time.perf_counter() - t0
    curve = budget_curve(draws, answers, suggested, replicates=replicates, seed=1)
    print(f"\n## {name}: {len(answers.frame)} unlabelled answers, {len(answers.size)} patterns; fit {t_fit:.1f} s "
          f"({fit.diagnostics.message}); suggest {t_suggest:.1f} s; {replicates} simulated label sets")
    print("| n | share | suggested | random | coverage sugg. | coverage random | width sugg. | width random "
          "| ESS suggested | ESS random |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in sorted({0, 1, 2, 5, 10, 15, budget} & set(curve["n"])):
        r = curve.loc[curve["n"] == n].iloc[0]
        print(f"| {n} | {n / len(answers.frame):.3f} | {r['suggested']:.4f} | {r['random']:.4f} "
              f"| {r['suggested_coverage']:.3f} | {r['random_coverage']:.3f} | {r['suggested_width']:.3f} "
              f"| {r['random_width']:.3f} | {r['suggested_ess']:.0f} | {r['random_ess']:.0f} |")
    first, last = curve.iloc[0], curve.iloc[-1]
    won = bool(last["suggested"] < last["random"])
    print(f"after {budget} labels: uncertainty down {first['suggested'] - last['suggested']:.4f} (suggested) vs "
          f"{first['random'] - last['random']:.4f} (random): suggested {'beats' if won else 'does NOT beat'} random; "
          f"mean interval width {first['suggested_width']:.3f} -> {last['suggested_width']:.3f} (suggested) vs "
          f"{last['random_width']:.3f} (random); expected coverage {last['suggested_coverage']:.3f} vs "
          f"{last['random_coverage']:.3f}")
    return won


def main(argv: list[str] | None = None) -> None:
    from simplex_core.data.datasets import load_dataset

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replicates", type=int, default=300)
    p.add_argument("--budget", type=int, default=20)
    args = p.parse_args(argv)
    print(f"# bench.label_budget  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"# load before: {uptime()}")
    wins = {"triviaqa-v1": run("triviaqa-v1", load_dataset("triviaqa-v1"), args.budget, args.replicates),
            "simulated": run("simulated (8 close candidates, 5 judges, 300 items)", simulated_table(), args.budget,
                             args.replicates)}
    print(f"\ntarget (suggested < random after {args.budget} labels): " + ", ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in wins.items()))
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
