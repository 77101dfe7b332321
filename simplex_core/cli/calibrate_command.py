"""``calibrate``: simulation-based calibration of the fit from the command line.

``python -m simplex_core calibrate SCENARIO --out DIR [--replicates 100] [--items N]
[--likelihood shared-truth|per-judge] [--chains 2 --draws 500 --tune 500] [--rank-draws 99]
[--bins B] [--seed 0] [--scheduler ADDR | --workers N]`` runs
:func:`simplex_core.studies.calibration.calibrate` and writes, in DIR: ``sbc.json`` (settings, prior,
uniformity test per parameter, convergence share), ``ranks.csv`` (one row per replicate and
parameter), ``tests.csv`` (the tests as a table), ``diagnostics.csv`` (per replicate) and
``histograms.html`` (the rank histograms). A summary goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from simplex_core.data.spreadsheet import write_csv
from simplex_core.cli import UsageError, add_dask_options, out_folder, study_client

#: p-values below this are flagged (the issue's target: p > 0.01 for every E_k).
FLAG_P = 0.01


def register(subparsers) -> None:
    from simplex_core.studies.calibration import CalibrationSettings
    from simplex_core.model.settings import LIKELIHOODS
    from simplex_core.model.simulate import SCENARIOS

    d = CalibrationSettings()
    p = subparsers.add_parser(
        "calibrate", help="simulation-based calibration: is the fit's uncertainty right on data from the prior?",
        description="Simulation-based calibration (Talts et al. 2018): REPLICATES times, draw the parameters from "
                    "the model's prior in the shape of SCENARIO, simulate data, fit, and rank each true value among "
                    "the posterior draws. Uniform ranks mean calibrated posteriors; a chi-square test per parameter "
                    "says how far from uniform they are.",
    )
    p.add_argument("scenario", choices=list(SCENARIOS), metavar="SCENARIO",
                   help=f"the shape and hyperparameters to draw from: {', '.join(SCENARIOS)} (small: three-level); "
                        f"with the default {d.likelihood} likelihood only those with ω = 0: "
                        f"{', '.join(n for n, sc in SCENARIOS.items() if sc.omega == 0)}")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for sbc.json, ranks.csv, tests.csv, "
                   "diagnostics.csv and histograms.html (created if missing)")
    p.add_argument("--replicates", type=int, default=d.replicates, help=f"simulate → fit cycles (default {d.replicates})")
    p.add_argument("--items", type=int, default=None, metavar="N", help="items per replicate (default: the scenario's)")
    p.add_argument("--likelihood", choices=LIKELIHOODS, default=d.likelihood,
                   help=f"the model's likelihood; the data are simulated the way it reads them (default {d.likelihood})")
    p.add_argument("--chains", type=int, default=d.chains, help=f"MCMC chains per fit (default {d.chains})")
    p.add_argument("--draws", type=int, default=d.draws, help=f"kept draws per chain (default {d.draws})")
    p.add_argument("--tune", type=int, default=d.tune, help=f"warm-up iterations per chain (default {d.tune})")
    p.add_argument("--rank-draws", type=int, default=d.rank_draws, metavar="L",
                   help=f"posterior draws, evenly spaced, to rank each true value among: ranks 0..L (default {d.rank_draws})")
    p.add_argument("--bins", type=int, default=None, help="histogram bins of the uniformity test (default: about 10 "
                   "replicates per bin, 2 to 20)")
    p.add_argument("--seed", type=int, default=d.seed, help=f"seed of the simulations and fits (default {d.seed})")
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    add_dask_options(p)
    p.set_defaults(handler=run_calibrate)


#: The core names a setting by its field; the command line by the flag that sets it.
_SETTING_FLAGS = (("replicates must", "--replicates must"), ("items must", "--items must"),
                  ("chains and draws must be at least 1 and tune 0 or more", "--chains and --draws must be at least 1 "
                   "and --tune 0 or more"), ("seed must", "--seed must"), ("rank draws L must", "--rank-draws must"),
                  ("likelihood must", "--likelihood must"), ("bins must", "--bins must"))


def _by_flag(exc: ValueError) -> str:
    """A calibration settings error in the command line's words."""
    import re

    text = str(exc).removeprefix("Cannot calibrate: ")
    for field, flag in _SETTING_FLAGS:
        def to_flag(m: re.Match[str], flag: str = flag) -> str:
            return m.group(1) + flag
        text = re.sub(rf"(^|; ){re.escape(field)}", to_flag, text)
    return text


def run_calibrate(args: argparse.Namespace) -> int:
    from simplex_core.studies.calibration import CalibrationSettings, calibrate
    from simplex_core.figures.calibration import rank_histogram_figure
    from simplex_core.inference.distributed import describe

    settings = CalibrationSettings(
        scenario=args.scenario, replicates=args.replicates, n_items=args.items, likelihood=args.likelihood,
        chains=args.chains, draws=args.draws, tune=args.tune, seed=args.seed, rank_draws=args.rank_draws,
    )
    try:
        settings.check()
    except ValueError as exc:
        raise UsageError(_by_flag(exc)) from None
    out = out_folder(args.out)
    start = time.perf_counter()

    def say(message: str) -> None:
        if not args.quiet:
            print(f"[{time.perf_counter() - start:6.0f} s] {message}", file=sys.stderr, flush=True)

    with study_client(args) as client:
        say(f"calibrate {args.scenario} ({args.likelihood}): {args.replicates} replicates {describe(client)}")
        try:
            result = calibrate(settings, client=client, bins=args.bins, progress=say)
        except ValueError as exc:
            if str(exc).startswith("Cannot calibrate"):
                raise UsageError(_by_flag(exc)) from None
            raise
    tests = result.tests()
    doc = result.to_dict()
    (out / "sbc.json").write_text(json.dumps(doc, indent=2, allow_nan=False))
    write_csv(result.ranks, out / "ranks.csv")
    write_csv(tests, out / "tests.csv")
    write_csv(result.diagnostics, out / "diagnostics.csv")
    fig = rank_histogram_figure(
        result.ranks, result.n_ranks, result.bins, p_values=dict(zip(tests["parameter"], tests["p_value"])),
        title=f"SBC of {args.scenario} ({args.likelihood}): {args.replicates} replicates, ranks 0..{args.rank_draws}",
    )
    fig.write_html(out / "histograms.html", include_plotlyjs=True)  # self-contained: opens offline

    diag = result.diagnostics
    print(f"SBC of {args.scenario}, likelihood {args.likelihood}: {args.replicates} replicates "
          f"({settings.chains} chains × {settings.draws} + {settings.tune}), ranks 0..{args.rank_draws} in "
          f"{result.bins} bins, {result.seconds:.0f} s")
    print(f"converged fits: {int(diag['converged'].sum())}/{len(diag)}; fits with divergences: "
          f"{int((diag['divergences'] > 0).sum())}")
    shown = tests.assign(flag=["  <-- p < 0.01" if p < FLAG_P else "" for p in tests["p_value"]])
    print(shown[["parameter", "chi2", "dof", "p_value", "flag"]].to_string(
        index=False, formatters={"chi2": "{:.1f}".format, "p_value": "{:.3f}".format}))
    for group, part in tests.groupby("group", sort=False):
        print(f"{group}: {int((part['p_value'] < FLAG_P).sum())} of {len(part)} below p = {FLAG_P}; "
              f"smallest p {part['p_value'].min():.3f}")
    per_bin = args.replicates / result.bins
    if per_bin < 5:  # the χ² approximation's usual rule: about five expected per bin
        print(f"Note: {args.replicates} replicate{'s' if args.replicates != 1 else ''} in {result.bins} bins expect "
              f"{per_bin:.1f} per bin; the χ² p-values above need about 5 per bin to mean much "
              f"(--replicates {5 * result.bins} or more, or fewer --bins).")
    print(f"wrote {out}/sbc.json, ranks.csv, tests.csv, diagnostics.csv, histograms.html")
    return 0
