"""``suggest-labels``: which answers to label next (:mod:`simplex_core.methods.labelling`).

``python -m simplex_core suggest-labels DATA --budget 20 --out next.csv`` fits the shared-truth
model (gold answers, if any, taken as labelled), ranks the unlabelled answers by the expected
reduction of the ranking's uncertainty (summed posterior variance of the ranks) that knowing their
true score would bring, and writes a batch of ``--budget`` answers: ``order, item, candidate``, each
judge's score, ``expected_reduction`` (given the earlier picks), ``alone_reduction`` (labelled alone) and the
predictive probability of each true level.
``--curve`` also prints the budget curve (uncertainty, expected coverage and mean width of the 95%
rank intervals after n labels, with the labelled share, suggested against random order, labels
simulated from the fit).
"""

from __future__ import annotations

import argparse
import sys

from simplex_core.data.spreadsheet import write_csv
from simplex_core.cli import UsageError, add_data_options, check_outputs
from simplex_core.cli.fit_commands import add_model_options, prepare_setting, progress_printer

#: Summed rank variance below which the ranking counts as settled (float noise of a sum of zeros).
SETTLED_UNCERTAINTY = 1e-9


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "suggest-labels", help="which answers to label next (largest expected drop in rank uncertainty)",
        description="Fit the shared-truth model to DATA and list the unlabelled answers whose true score would "
                    "most reduce the uncertainty of the ranking (expected posterior variance of the ranks), "
                    "computed by reweighting the posterior draws.")
    add_data_options(p)
    p.add_argument("--budget", type=int, default=20, help="how many answers to suggest (default 20)")
    p.add_argument("--out", required=True, metavar="next.csv", help="where to write the suggestions (CSV)")
    p.add_argument("--curve", action="store_true",
                   help="also print the budget curve: uncertainty, expected coverage and mean width of the 95%% rank "
                        "intervals after n labels (and the labelled share), suggested vs random order")
    p.add_argument("--curve-replicates", type=int, default=100, metavar="N",
                   help="simulated label sets behind the budget curve (default 100)")
    add_model_options(p)
    p.set_defaults(handler=run_suggest, likelihood="shared-truth")


#: Below this effective sample size the reweighted draws of the budget curve are too few to read.
CURVE_ESS_MIN = 100


def run_suggest(args: argparse.Namespace) -> int:
    from simplex_core.inference.fitting import fit_model
    from simplex_core.methods.labelling import LabelDraws, answers_of, budget_curve, suggest_labels

    if args.budget < 1:
        raise UsageError(f"--budget must be at least 1; got {args.budget}.")
    if args.likelihood != "shared-truth":
        raise UsageError("suggest-labels reweights the draws of the shared-truth posterior: drop --likelihood per-judge.")
    if args.curve_replicates < 1:
        raise UsageError(f"--curve-replicates must be at least 1; got {args.curve_replicates}.")
    out_path = args.out
    from pathlib import Path

    check_outputs(args, "out:CSV")  # fail before the fit; a missing folder is created, as `fit` does
    table, counts, settings = prepare_setting(args)
    fit = fit_model(counts, settings, progress_callback=progress_printer(args))
    draws = LabelDraws.from_fit(fit, seed=args.seed)
    answers = answers_of(table, counts.included, counts.judges)
    if len(answers.frame) == 0:
        raise UsageError("every answer is already labelled (gold): nothing to suggest.")
    suggested = suggest_labels(draws, answers, args.budget, seed=args.seed, true_labels=table.scale.true_labels)
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    write_csv(suggested, out_path)
    print(f"{fit.diagnostics.message}")
    if len(suggested) < args.budget:
        print(f"Note: --budget {args.budget} asks for more answers than are unlabelled: all {len(suggested)} are suggested.")
    print(f"current uncertainty (summed posterior variance of the ranks): {max(0.0, suggested.attrs['uncertainty']):.3f}; "
          f"{len(answers.frame)} unlabelled answers in {len(answers.size)} score patterns"
          + (f"; {table.n_gold} gold" if table.n_gold else ""))
    if suggested.attrs["uncertainty"] < SETTLED_UNCERTAINTY:
        print("The ranking is the same in every posterior draw: no label can make it more certain, so the "
              "order below is arbitrary (every expected reduction is 0 up to rounding).")
    show = suggested[["order", "item", "candidate", "expected_reduction", "alone_reduction"]]
    print(show.head(10).to_string(index=False) + ("\n…" if len(show) > 10 else ""))
    if args.curve:
        curve = budget_curve(draws, answers, suggested, replicates=args.curve_replicates, seed=args.seed)
        print(f"\nbudget curve (mean over {args.curve_replicates} simulated label sets; gain = random − suggested, "
              "gain_se its Monte Carlo standard error: a gain within about 2 gain_se is noise):")
        shown = curve.round({"suggested_ess": 0, "random_ess": 0}).astype({"suggested_ess": int, "random_ess": int})  # no decimals
        n_answers = len(answers.frame) + table.n_gold
        shown.insert(1, "labelled_share", (curve["n"] + table.n_gold) / n_answers)
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        first, last = curve.iloc[0], curve.iloc[-1]
        print(f"after {int(last['n'])} more labels ({last['n'] / n_answers:.1%} of the answers): expected coverage of the "
              f"95% rank intervals {last['suggested_coverage']:.3f} suggested / {last['random_coverage']:.3f} random "
              f"(now {first['suggested_coverage']:.3f}); mean interval width {last['suggested_width']:.2f} suggested / "
              f"{last['random_width']:.2f} random ranks (now {first['suggested_width']:.2f}). Coverage and width are "
              "the model's own expectation (labels simulated from the fit).")
        thin = curve[curve[["suggested_ess", "random_ess"]].min(axis=1) < CURVE_ESS_MIN]
        if len(thin):
            print(f"Note: from n = {int(thin['n'].iloc[0])} the reweighted draws fall below an effective sample "
                  f"size of {CURVE_ESS_MIN}: the curve is rough there; refit with the first labels marked gold "
                  "for a sharper view.")
    print(f"wrote {out_path}", file=sys.stdout)
    return 0
