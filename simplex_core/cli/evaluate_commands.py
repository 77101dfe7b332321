"""``evaluate`` and ``experiment``: the paper's comparison of ranking methods from the command line.

``python -m simplex_core evaluate DATA --out table.csv [--methods ...] [--ci-resamples 50]
[--bayes-ci-resamples N] [--seed 0] [--chains 2 --draws 500 --tune 500]`` runs the baselines and
the Bayesian model on DATA, compares each method's ranking with the true ranking (mean
``true_score``), and writes one row per method with the columns of
:data:`simplex_core.summaries.evaluation.EVALUATION_COLUMNS` (Spearman, coverage of the 95% rank intervals, their
mean width and interval score, each with its item-resample interval, and over how many candidates);
a readable table goes to stdout.

``python -m simplex_core experiment self-preference|priors DATA --out FILE.csv`` runs the paper's
stress experiments (appendix E): the same columns plus ``setting`` (and a few extra columns, see
:mod:`simplex_core.studies.experiments`).

Data without ground truth exits with status 2 and says so, before anything is fitted.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import pandas as pd

from simplex_core.methods.method_base import FittingMethod
from simplex_core.model.settings import FitSettings
from simplex_core.data.spreadsheet import write_csv
from simplex_core.cli import UsageError, add_dask_options, add_data_options, check_outputs, load_data_for_fit, study_client, usage_message

METHOD_HELP = (
    "comma-separated methods: bayesian_integrated, bayesian, single_judge (every judge) or "
    "single_judge:<judge>, simple_average, bootstrap, bradley_terry, ordinal (the ordinal many-facet model, "
    "label-free; each resample is a fit, like the Bayesian ones), ppi_5, ppi_10; or the groups "
    "'baselines' and 'all' (default: all, ordinal included); bayesian_gold_<pct> and bayesian_ppi_<pct> (PPI with "
    "the label-free model as predictor; see --gold-fractions)"
)


def _add_fit_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Bayesian fit size (trade time for precision)")
    g.add_argument("--chains", type=int, default=2, help="MCMC chains per fit (default 2)")
    g.add_argument("--draws", type=int, default=500, help="kept draws per chain (default 500)")
    g.add_argument("--tune", type=int, default=500, help="warm-up iterations per chain (default 500)")
    g.add_argument("--fit-seed", type=int, default=0, help="seed of every fit (default 0)")
    g.add_argument("--extra-rounds", type=int, default=FitSettings().extra_rounds, metavar="N",
                   help="a fit that has not converged gets up to N more rounds of --chains chains, each twice as long as the "
                        "last, where that can help "
                        "(default %(default)s; 0 = never)")
    g.add_argument("--fit-cache", metavar="DIR", help="keep fits on disk in DIR and reuse them in later runs")


def _add_common(p: argparse.ArgumentParser, default_ci: int) -> None:
    add_data_options(p)
    p.add_argument("--out", required=True, metavar="FILE.csv", help="where to write the table (CSV)")
    p.add_argument("--ci-resamples", type=int, default=default_ci,
                   help=f"item resamples for the 95%% intervals of Spearman and coverage (default {default_ci}; 0 = none)")
    p.add_argument("--bayes-ci-resamples", type=int, default=None, metavar="N",
                   help="item resamples for the Bayesian methods' intervals (default: --ci-resamples); each is a full fit")
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling and the baselines (default 0)")
    p.add_argument("--no-self-exclusion", action="store_true",
                   help="keep self-family (judge, candidate) pairs (every method; default: excluded)")
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    _add_fit_options(p)
    add_dask_options(p)


def register(subparsers) -> None:
    """Add the ``evaluate`` and ``experiment`` subcommands."""
    ev = subparsers.add_parser(
        "evaluate", help="compare ranking methods with the ground truth (Spearman, coverage)",
        description="Run the baselines and the Bayesian model on DATA (which needs a true_score column) and "
                    "compare each ranking with the true one: Spearman correlation and coverage of the 95% "
                    "rank intervals, with intervals from item resamples (paper section 6, Table 1).",
    )
    _add_common(ev, default_ci=50)
    ev.add_argument("--methods", default="all", help=METHOD_HELP)
    ev.add_argument("--gold-fractions", metavar="F,F,...", default=None,
                    help="also run bayesian_gold_<pct> and bayesian_ppi_<pct> for each labelled share F (e.g. "
                         "0.05,0.10): the shared-truth model with the answers of a share F of the items as gold "
                         "labels, and PPI with the label-free model's posterior mean true score as predictor, the "
                         "same items as ppi_<pct> labels in every resample (ppi_<pct> is added too)")
    ev.set_defaults(handler=run_evaluate)

    ex = subparsers.add_parser(
        "experiment", help="the paper's stress experiments: self-preference, priors",
        description="self-preference: inject self-preference (self-family judgments below 'correct' become "
                    "correct with probability --probability) and compare every method with and without "
                    "self-family exclusion, before and after. priors: the Bayesian model under the "
                    "weight-propagation, diagonal and mixing judge priors, with label-switching detection.",
    )
    ex.add_argument("experiment", choices=["self-preference", "priors"], help="which experiment")
    _add_common(ex, default_ci=50)
    ex.add_argument("--probability", type=float, default=None, help="self-preference: injection probability (default 0.8)")
    ex.add_argument("--injection-seed", type=int, default=None, help="self-preference: seed of the injection (default 0)")
    ex.add_argument("--bayes-method", choices=["bayesian_integrated", "bayesian"], default=None,
                    help="the Bayesian method (default: bayesian_integrated for self-preference, bayesian for priors)")
    ex.add_argument("--priors", default=None,
                    help="priors: which priors (comma-separated; default weight-propagation,diagonal,mixing)")
    ex.set_defaults(handler=run_experiment)


# -- helpers -------------------------------------------------------------------------------------

def _check_counts(args: argparse.Namespace) -> None:
    problems = []
    from simplex_core.model.settings import MAX_CHAINS, MAX_DRAWS

    # resamples past these would run for days (each Bayesian one is a full fit): refused, not started
    for name, most in (("ci_resamples", 100_000), ("bayes_ci_resamples", 10_000)):
        v = getattr(args, name)
        if v is not None and not 0 <= v <= most:
            problems.append(f"--{name.replace('_', '-')} must be between 0 and {most:,}; got {v:,}")
    for name, most in (("chains", MAX_CHAINS), ("draws", MAX_DRAWS)):
        if not 1 <= getattr(args, name) <= most:
            problems.append(f"--{name} must be between 1 and {most:,}; got {getattr(args, name):,}")
    if not 0 <= args.tune <= MAX_DRAWS:
        problems.append(f"--tune must be between 0 and {MAX_DRAWS:,}; got {args.tune:,}")
    for name in ("seed", "injection_seed"):  # numpy's seeds: whole numbers from 0
        v = getattr(args, name, None)
        if v is not None and not 0 <= v < 2**32:
            problems.append(f"--{name.replace('_', '-')} must be between 0 and 2**32 - 1; got {v}")
    if problems:
        raise UsageError("; ".join(problems) + ".")

    try:
        FitSettings(**_fit_options(args))
    except ValueError as exc:  # here --seed draws the resamples; the fits' seed is --fit-seed
        raise UsageError(usage_message(exc, {"seed": "--fit-seed"})) from None


def _load_with_truth(args: argparse.Namespace):
    table = load_data_for_fit(args)
    if not table.has_truth:
        raise UsageError(
            f"{args.data} has no ground truth (no true_score column), so the methods cannot be evaluated: "
            "there is no true ranking to compare with. Use data with a true_score column "
            "(e.g. the built-ins triviaqa-v1, triviaqa-v2, hanna, topical-chat)."
        )
    return table


def _progress(args):
    if args.quiet:
        return None
    start = time.perf_counter()

    def say(msg: str) -> None:
        print(f"[{time.perf_counter() - start:6.0f} s] {msg}", file=sys.stderr, flush=True)

    return say


def _fit_options(args) -> dict:
    return dict(chains=args.chains, draws=args.draws, tune=args.tune, seed=args.fit_seed, extra_rounds=args.extra_rounds)


def _cache(args):
    if not args.fit_cache:
        return None
    from simplex_core.inference.fit_cache import FitCache

    if Path(args.fit_cache).exists() and not Path(args.fit_cache).is_dir():
        raise UsageError(f"--fit-cache {args.fit_cache!r} is a file; give a folder (created if missing).")

    return FitCache(args.fit_cache)


def parse_fractions(text: str | None) -> tuple[float, ...]:
    """``--gold-fractions 0.05,0.10`` -> (0.05, 0.1); UsageError naming the bad entry."""
    if text is None:
        return ()
    values = []
    for i, part in enumerate(p.strip() for p in text.split(",")):
        try:
            v = float(part)
        except ValueError:
            v = float("nan")
        if not 0.0 < v < 1.0 or round(v * 100) < 1:
            raise UsageError(f"--gold-fractions {text!r}: entry {i + 1} ({part!r}) is not a share strictly between "
                             "0 and 1 of at least 0.01; write e.g. 0.05,0.10.")
        values.append(v)
    by_percent: dict[int, list[str]] = {}
    for v in dict.fromkeys(values):  # methods are named ppi_<percent>: two shares of one name would collide
        by_percent.setdefault(int(round(v * 100)), []).append(f"{v:g}")
    same = [shares for shares in by_percent.values() if len(shares) > 1]
    if same:
        raise UsageError(f"--gold-fractions {text!r}: {' and '.join(same[0])} both name ppi_{int(round(float(same[0][0]) * 100))}; "
                         "give shares that differ by at least 0.01.")
    return tuple(dict.fromkeys(values))


def _check_labelled_shares(table, fractions: tuple[float, ...]) -> None:
    """Before any fit: PPI (5% and 10% always, plus ``--gold-fractions``) labels max(1, round(f·I)) of
    the I items and needs at least one left unlabelled (:func:`simplex_core.data.gold.labelled_item_mask`)."""
    n = len(table.items)
    if n < 2:
        raise UsageError(f"{table.source} has {n} item: evaluate compares methods over items (PPI labels some "
                         "and needs others left unlabelled); give data with at least 2 items.")
    for f in fractions:
        if max(1, round(f * n)) >= n:
            raise UsageError(f"--gold-fractions: {f:g} of {n} items labels all of them, which leaves PPI no unlabelled "
                             f"item; use a share below {(n - 0.5) / n:.2f} here.")


def select_methods(spec: str, table, *, self_exclusion: bool, progress=None, cache=None,
                   gold_fractions: tuple[float, ...] = (), **fit_options):
    """Methods named by ``--methods`` (see METHOD_HELP) plus, per gold fraction, ``ppi_<pct>``,
    ``bayesian_gold_<pct>`` and ``bayesian_ppi_<pct>``: name -> method, and the names that are fitted."""
    from simplex_core.methods.baselines import table_baseline_methods
    from simplex_core.methods.ordinal import ORDINAL, ordinal_for_table
    from simplex_core.studies.experiments import BAYESIAN_METHODS, bayesian_methods, gold_method_fraction, gold_method_name
    from simplex_core.studies.model_ppi import model_ppi_fraction, model_ppi_methods, model_ppi_name

    ppi_fractions = tuple(dict.fromkeys((0.05, 0.10) + tuple(gold_fractions)))
    baselines = table_baseline_methods(table, self_exclusion=self_exclusion, ppi_fractions=ppi_fractions)
    tokens = [t.strip() for t in spec.split(",") if t.strip()]
    if not tokens:
        raise UsageError("--methods is empty: name at least one method, e.g. --methods bayesian_integrated,bootstrap.")
    wanted: list[str] = []
    unknown = []
    for t in tokens:
        if t == "all":
            wanted += list(BAYESIAN_METHODS[::-1]) + list(baselines) + [ORDINAL]
        elif t == "baselines":
            wanted += list(baselines)
        elif t == "single_judge":
            wanted += [m for m in baselines if m.startswith("single_judge:")]
        elif t in BAYESIAN_METHODS or t in baselines or t == ORDINAL:
            wanted.append(t)
        elif t.startswith(("bayesian_gold_", "bayesian_ppi_")):
            try:
                gold_method_fraction(t)
                model_ppi_fraction(t)
            except ValueError as exc:
                raise UsageError(usage_message(exc)) from None
            wanted.append(t)
        else:
            unknown.append(t)
    if unknown:
        valid = ["all", "baselines", "single_judge", *BAYESIAN_METHODS, ORDINAL, *baselines]
        raise UsageError(f"unknown method(s) {', '.join(map(repr, unknown))} in --methods. Valid: {', '.join(valid)}.")
    for f in gold_fractions:
        wanted += [f"ppi_{int(round(f * 100))}", gold_method_name(f), model_ppi_name(f)]
    wanted = list(dict.fromkeys(wanted))
    for m in wanted:  # a gold method is compared with PPI at the same labels
        frac = gold_method_fraction(m) or model_ppi_fraction(m)
        if frac is not None and f"ppi_{int(round(frac * 100))}" not in baselines:
            baselines.update(table_baseline_methods(table, self_exclusion=self_exclusion, ppi_fractions=(frac,),
                                                    single_judges=False))
    bayes_names = [m for m in wanted if m in BAYESIAN_METHODS or gold_method_fraction(m) is not None]
    bayes = bayesian_methods(table, bayes_names, self_exclusion=self_exclusion, progress=progress, cache=cache, **fit_options)
    bayes.update(model_ppi_methods(table, [m for m in wanted if model_ppi_fraction(m) is not None],
                                   self_exclusion=self_exclusion, progress=progress, cache=cache, **fit_options))
    fitted: dict[str, FittingMethod] = dict(bayes)
    if ORDINAL in wanted:  # a fit per resample, like the Bayesian methods: counted among them
        fitted[ORDINAL] = ordinal_for_table(table, self_exclusion=self_exclusion, progress=progress, **fit_options)
    methods = {m: (fitted[m] if m in fitted else baselines[m]) for m in wanted}
    return methods, set(fitted)


def format_table(df: pd.DataFrame) -> str:
    """The evaluation table as aligned text (figures with intervals)."""
    from simplex_core.summaries.evaluation import ranked_note


    def fmt(v, lo, hi, digits=3):
        if pd.isna(v):
            return "n/a"
        s = f"{v:.{digits}f}"
        if not pd.isna(lo):
            s += f" [{lo:.{min(digits, 2)}f}, {hi:.{min(digits, 2)}f}]"
        return s

    rows = []
    for _, r in df.iterrows():
        row = {}
        if "setting" in df.columns:
            row["setting"] = r["setting"]
        row["method"] = r["method"] + (" (uses labels)" if r["uses_labels"] else "")
        row["spearman [95% CI]"] = fmt(r["spearman"], r["spearman_lo"], r["spearman_hi"]) + ranked_note(r)
        row["coverage [95% CI]"] = fmt(r["coverage"], r["coverage_lo"], r["coverage_hi"]) + ranked_note(r)
        if "width" in df.columns:  # coverage's price: how wide the intervals are, and the interval score
            share = "" if pd.isna(r["width_share"]) else f" ({r['width_share']:.0%} of ranks)"
            row["width [95% CI]"] = fmt(r["width"], r["width_lo"], r["width_hi"], 1) + share
            row["interval score [95% CI]"] = fmt(r["interval_score"], r["interval_score_lo"],
                                                 r["interval_score_hi"], 1)
        if "resamples" in df.columns:
            row["resamples"] = str(int(r["resamples"]))
        if "converged" in df.columns:
            row["converged"] = _converged_cell(r["converged"], r.get("resamples_converged"))
        if "label_switched" in df.columns:
            sw = r["label_switched"]
            row["label-switched judges"] = sw if isinstance(sw, str) and sw else "none"
        rows.append(row)
    return pd.DataFrame(rows).to_string(index=False)


def _converged_cell(converged, share) -> str:
    """A Bayesian row's convergence: of the full-data fit, and the share of resample fits."""
    if converged is None or pd.isna(converged):
        return "—"
    text = "yes" if bool(converged) else "NO"
    if share is not None and not pd.isna(share):
        text += f" ({float(share):.0%} of resamples)"
    return text


def _write(df: pd.DataFrame, path: str) -> None:
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_csv(df, out, float_format="%.10g")  # 0.9, not 0.8999999999999998
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}.") from None


# -- handlers ------------------------------------------------------------------------------------

def run_evaluate(args: argparse.Namespace) -> int:
    from simplex_core.studies.experiments import evaluate_table

    _check_counts(args)
    check_outputs(args, "out:CSV")
    table = _load_with_truth(args)
    if table.n_gold:
        print(f"data: {table.n_gold} answers are marked gold; evaluate does not read that column: it scores every "
              "method against true_score and draws labelled answers itself (--gold-fractions).", file=sys.stderr)
    fractions = parse_fractions(args.gold_fractions)
    _check_labelled_shares(table, fractions)
    progress = _progress(args)
    methods, bayes = select_methods(
        args.methods, table, self_exclusion=not args.no_self_exclusion, progress=progress,
        cache=_cache(args), gold_fractions=fractions, **_fit_options(args),
    )
    if progress:
        n_bayes = args.bayes_ci_resamples if args.bayes_ci_resamples is not None else args.ci_resamples
        progress(f"evaluating {len(methods)} method(s) on {table.source}: {args.ci_resamples} item resamples"
                 + (f"; {len(bayes)} fitted method(s) × (1 + {n_bayes} resamples) = {len(bayes) * (1 + n_bayes)} "
                    f"MCMC fit{'s' if len(bayes) * (1 + n_bayes) != 1 else ''}"
                    + (" (use --bayes-ci-resamples to run fewer)" if n_bayes else "") if bayes else ""))
    with study_client(args) if bayes else contextlib.nullcontext() as client:
        result = evaluate_table(
            table, methods, ci_resamples=args.ci_resamples, expensive=bayes,
            expensive_ci_resamples=args.bayes_ci_resamples, seed=args.seed, client=client, progress=progress,
        )
    _write(result, args.out)
    print(format_table(result))
    _say_rough_intervals(args)
    print(f"\nwrote {args.out}")
    return 0


#: Fewer item resamples than this make percentile intervals too rough to read (one of 3 resamples can
#: miss the full-data estimate altogether).
ROUGH_RESAMPLES = 20


def _say_rough_intervals(args: argparse.Namespace) -> None:
    given = {"--ci-resamples": args.ci_resamples, "--bayes-ci-resamples": args.bayes_ci_resamples}
    rough = [f"{flag} {n}" for flag, n in given.items() if n is not None and 0 < n < ROUGH_RESAMPLES]
    if rough:
        print(f"Note: {' and '.join(rough)}: too few item resamples for a 95% interval, which may not even contain "
              f"the full-data figure; give at least {ROUGH_RESAMPLES} (the default is 50).")


def run_experiment(args: argparse.Namespace) -> int:
    from simplex_core.studies.experiments import prior_experiment, self_preference_experiment
    from simplex_core.model.settings import PRIORS

    _check_counts(args)
    check_outputs(args, "out:CSV")
    table = _load_with_truth(args)
    progress = _progress(args)
    common = dict(resample_seed=args.seed, cache=_cache(args), progress=progress, **_fit_options(args))
    for flag, value, owner in (("--probability", args.probability, "self-preference"),
                               ("--injection-seed", args.injection_seed, "self-preference"),
                               ("--priors", args.priors, "priors")):
        if value is not None and args.experiment != owner:  # a flag another experiment reads: never ignored
            raise UsageError(f"{flag} is read by the {owner} experiment only; the {args.experiment} experiment "
                             "does not use it: drop it.")
    if args.injection_seed is None:
        args.injection_seed = 0
    if args.priors is None:
        args.priors = "weight-propagation,diagonal,mixing"
    if args.experiment == "self-preference":
        if args.probability is None:
            args.probability = 0.8
        if not 0.0 <= args.probability <= 1.0:
            raise UsageError(f"--probability must be between 0 and 1; got {args.probability}.")
        if not table.self_family_pairs:
            raise UsageError(
                f"{args.data} has no self-family (judge, candidate) pairs, so there is nothing to inject: "
                "give families with --families FILE.json."
            )

        def run(client):
            return self_preference_experiment(
                table, probability=args.probability, injection_seed=args.injection_seed,
                bayesian=(args.bayes_method or "bayesian_integrated",), ci_resamples=args.ci_resamples,
                bayes_ci_resamples=args.bayes_ci_resamples, client=client, **common,
            )
    else:
        priors = [p.strip() for p in args.priors.split(",") if p.strip()]
        bad = [p for p in priors if p not in PRIORS]
        if bad or not priors:
            raise UsageError(f"--priors {args.priors!r}: unknown {', '.join(map(repr, bad)) or 'empty list'}; "
                             f"choose from {', '.join(PRIORS)}.")
        n = args.bayes_ci_resamples if args.bayes_ci_resamples is not None else args.ci_resamples

        def run(client):
            return prior_experiment(
                table, priors=priors, method=args.bayes_method or "bayesian",
                self_exclusion=not args.no_self_exclusion, ci_resamples=n, client=client, **common,
            )
    with study_client(args) as client:
        result = run(client)
    _write(result, args.out)
    print(format_table(result))
    _say_rough_intervals(args)
    print(f"\nwrote {args.out}")
    return 0
