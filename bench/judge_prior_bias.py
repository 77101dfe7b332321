"""What a judge prior expects of a judge before any data: per scale size and β_max, the prior mean
probability of the correct level and the prior mean offset (observed − true level, in levels) of
each true level's row of Θ, by Monte Carlo over the prior. Prints figures; asserts nothing.

Why it matters: with three or more judges a latent-class model is identified in principle, but with
few items, or judges that all err alike, "every judge is lenient and the answers are worse" and "the
judges are fair and the answers are better" fit the data almost equally; the judge prior then
chooses. An offset that is not centred on 0 is a prior belief that judges score high (or low), and it
moves every E_k the other way. :mod:`bench.unseen_scenarios` measures the consequence on data whose
judges are not drawn from the prior.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.judge_prior_bias
    .venv/bin/python -m bench.judge_prior_bias --levels 3 5 7 --beta-max 0 5 20 --draws 40000
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def prior_rows(prior: str, levels: int, beta_max: float, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``(P(correct) per row, mean offset per row, share of judges whose mean offset > 0)`` for a
    square scale of ``levels`` levels; ρ ~ Beta(1, 1) as in the model."""
    from simplex_core.model.priors import sample_judge_matrices
    from simplex_core.data.scale import Scale

    theta = sample_judge_matrices(prior, Scale(tuple(float(v) for v in range(levels))), beta_max, None,
                                  np.random.default_rng(seed), size=draws)  # [draws, M, M]
    levels_idx = np.arange(levels)
    correct = np.diagonal(theta, axis1=1, axis2=2).mean(axis=0)
    offset = (theta * levels_idx).sum(axis=2) - levels_idx  # [draws, M]: E[observed | true m] − m
    return correct, offset.mean(axis=0), float((offset.mean(axis=1) > 0).mean())


def main(argv: list[str] | None = None) -> None:
    from simplex_core.model.priors import JUDGE_PRIORS

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", type=int, nargs="+", default=[2, 3, 5, 7, 10])
    p.add_argument("--beta-max", type=float, nargs="+", default=[0.0, 5.0, 20.0])
    p.add_argument("--priors", nargs="+", default=list(JUDGE_PRIORS), choices=JUDGE_PRIORS)
    p.add_argument("--draws", type=int, default=20000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"# bench.judge_prior_bias  {time.strftime('%Y-%m-%d %H:%M:%S')}  {args.draws} prior draws per row "
          "of the table; true levels 0..M-1; offset = E[observed level | true level] − true level")
    print("| prior | levels | β_max | P(correct) per true level | mean offset per true level | mean offset, "
          "all levels | judges with offset > 0 |")
    print("|---|---|---|---|---|---|---|")
    for prior in args.priors:
        for levels in args.levels:
            for beta_max in args.beta_max:
                correct, offset, lenient = prior_rows(prior, levels, beta_max, args.draws, args.seed)
                print(f"| {prior} | {levels} | {beta_max:g} | {' '.join(f'{c:.2f}' for c in correct)} | "
                      f"{' '.join(f'{o:+.2f}' for o in offset)} | {offset.mean():+.2f} | {lenient:.0%} |")


if __name__ == "__main__":
    main()
