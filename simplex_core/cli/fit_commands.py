"""``fit`` and ``sensitivity``: the Bayesian model from the command line.

``python -m simplex_core fit DATA --out result.json [--idata posterior.nc] [--omega 0]
[--beta-max 5] [--integrated] [--prior P] [--delta D] [--no-self-exclusion | --drop-self-family] [--chains 4]
[--draws 1000] [--tune 1000] [--seed 0]`` writes :func:`simplex_core.summaries.posterior_tables.result_json`;
``python -m simplex_core sensitivity DATA --out sens.json [--omegas 0,1,2,4,8]
[--beta-maxes 0,1,5,10,20]`` writes :meth:`simplex_core.studies.sensitivity.SensitivityResult.to_dict`.
Both ignore ``true_score`` except on gold answers (a ``gold`` column, or ``--gold-fraction F``
drawn with ``--seed``; see :mod:`simplex_core.data.gold`), which need ``--likelihood shared-truth``. Bad files or options raise :class:`UsageError` (exit status 2).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from pathlib import Path

from simplex_core.model.settings import DELTA_PRESETS, ENGINES, LIKELIHOODS, PRIORS, FitSettings
from simplex_core.data.spreadsheet import write_csv
from simplex_core.data.selection import selection_record
from simplex_core.cli import UsageError, add_dask_options, add_data_options, check_outputs, load_data_for_fit, selection_flags, study_client, usage_message


def add_model_options(p: argparse.ArgumentParser, sweep: bool = False) -> None:
    """The model and sampler options every fitting command shares (``sweep``: without ``--omega``,
    ``--beta-max`` and ``--integrated``, which a sweep sets itself)."""
    if not sweep:
        p.add_argument("--omega", type=float, default=0.0, help="constancy-violation strength ω ≥ 0 (0 = no random effects; default 0)")
        p.add_argument("--beta-max", type=float, default=5.0, help="judge-quality prior strength β_max ≥ 0 (default 5)")
        p.add_argument("--integrated", action="store_true", help="put hyperpriors on ω ~ U(0, 8) and β_max ~ U(0, 20) instead of fixing them")
    p.add_argument("--likelihood", choices=LIKELIHOODS, default=FitSettings().likelihood,
                   help="shared-truth: one latent true level per answer, seen by every judge (the judges' scores of "
                        "one answer count once); per-judge: the paper's, each judge's counts an independent sample "
                        f"(default {FitSettings().likelihood})")
    p.add_argument("--prior", choices=PRIORS, default=PRIORS[0], help="judge prior (default ordered; the paper's: weight-propagation)")
    p.add_argument("--delta", default="inflation", metavar="|".join(DELTA_PRESETS) + "|V,V,...",
                   help="direction prior δ of the random effects (default inflation)")
    p.add_argument("--no-self-exclusion", action="store_true", help="pool self-family judgments with the judge's others")
    p.add_argument("--drop-self-family", action="store_true",
                   help="leave self-family judgments out of the likelihood (the paper's practice) instead of keeping them "
                        "apart as a rater of their own, with vertices of their own (the default)")
    p.add_argument("--chains", type=int, default=4, help="MCMC chains (default 4)")
    p.add_argument("--draws", type=int, default=1000, help="kept draws per chain (default 1000)")
    p.add_argument("--tune", type=int, default=1000, help="warm-up iterations per chain (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--extra-rounds", type=int, default=FitSettings().extra_rounds, metavar="N",
                   help="if the chains have not converged and more draws can help, sample up to N more rounds of "
                        "--chains chains, each twice as long as the last (default %(default)s; 0 = never)")
    p.add_argument("--gold-fraction", type=float, default=None, metavar="F",
                   help="for experiments: mark a random share F (0-1) of the answers that have a true_score as gold "
                        "(their true level is observed by the shared-truth likelihood), drawn with --seed")
    p.add_argument("--engine", choices=ENGINES, default=ENGINES[0], help=argparse.SUPPRESS)
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")


def register(subparsers) -> None:
    """Add the ``fit`` and ``sensitivity`` subcommands."""
    fit = subparsers.add_parser("fit", help="fit the Bayesian model and write result.json",
                                description="Fit the Bayesian ranking model (paper section 5) to DATA; write the summaries as JSON.")
    add_data_options(fit)
    fit.add_argument("--out", required=True, metavar="result.json", help="where to write the result JSON")
    fit.add_argument("--idata", metavar="posterior.nc", help="also write the posterior draws (ArviZ NetCDF)")
    fit.add_argument("--leaderboard", metavar="leaderboard.csv",
                     help="also write the leaderboard (tiers, rank intervals, P(best), P(top 3)) as CSV")
    fit.add_argument("--ordinal", action="store_true",
                     help="also fit the ordinal many-facet model (a label-free cumulative-logit competitor with judge "
                          "severities and item effects; same chains, draws, tune, seed and self-family exclusion) and "
                          "add its ranking to result.json under 'ordinal'")
    fit.add_argument("--no-rater-deviation", action="store_true",
                     help="rank E_k alone, the paper's estimand (the panel's view), without the candidate-specific "
                          "deviation of the truth as one more rater (narrower intervals that assume judges see every "
                          "candidate alike; see docs/MODEL.md)")
    fit.add_argument("--rubric-note", action="store_true",
                     help="also say whether the scale's levels let the data identify the ranking (the paper's theorems) "
                          "and measure what collapsing to 3 and 2 levels does to the rank intervals (two more fits; "
                          "result.json's 'rubric')")
    add_model_options(fit)
    fit.set_defaults(handler=run_fit)

    sens = subparsers.add_parser("sensitivity", help="sweep ω and β_max and compare rankings",
                                 description="The sensitivity analysis of section 5: fit ω in OMEGAS at the base β_max and β_max in BETA_MAXES at the base ω.")
    add_data_options(sens)
    sens.add_argument("--out", required=True, metavar="sens.json", help="where to write the sweep JSON")
    sens.add_argument("--omegas", default="0,1,2,4,8", metavar="V,V,...", help="ω grid (default 0,1,2,4,8)")
    sens.add_argument("--beta-maxes", default="0,1,5,10,20", metavar="V,V,...", help="β_max grid (default 0,1,5,10,20)")
    sens.add_argument("--base-omega", type=float, default=0.0, help="base ω (default 0)")
    sens.add_argument("--base-beta-max", type=float, default=5.0, help="base β_max (default 5)")
    add_model_options(sens, sweep=True)
    add_dask_options(sens)
    sens.set_defaults(handler=run_sensitivity)


def parse_grid(text: str, option: str) -> tuple[float, ...]:
    """A grid option (``--omegas 0,1,2``) as distinct finite numbers ≥ 0 in the order given; every bad
    item named in one UsageError."""
    values, problems = [], []
    for i, part in enumerate(p.strip() for p in text.split(",")):
        try:
            v = float(part)
        except ValueError:
            problems.append(f"item {i + 1} ({part!r}) is not a number")
            continue
        if not (v >= 0 and v != float("inf")):
            problems.append(f"item {i + 1} ({part!r}) is not a finite number ≥ 0")
        values.append(v)
    if problems or not values:
        raise UsageError(f"{option} {text!r}: " + ("; ".join(problems) or "empty") + ". Write numbers ≥ 0 separated by commas, e.g. 0,1,2,4,8.")
    return tuple(dict.fromkeys(values))  # a value given twice is fitted once


def _prepare(args: argparse.Namespace, flags: dict[str, str] | None = None, **fixed):
    """Table → counts and settings, every problem as a UsageError (``flags``: the flag that set a
    field, where it is not the field's usual one, e.g. ``{"omega": "--base-omega"}``)."""
    from simplex_core.model import priors
    from simplex_core.data.problems import ValidationError
    from simplex_core.data.views import count_tensor

    table = load_data_for_fit(args)
    if args.gold_fraction is not None:
        from simplex_core.data.gold import draw_gold

        try:
            table = draw_gold(table, args.gold_fraction, args.seed)
        except ValueError as exc:
            raise UsageError(usage_message(exc)) from None
    if table.n_gold and args.likelihood != "shared-truth":
        raise UsageError(f"{table.n_gold} answers are gold, but gold labels enter only the shared-truth likelihood: "
                         "add --likelihood shared-truth (or drop the gold labels).")
    try:
        priors.parse_delta(args.delta, table.scale.n_true)  # refused here, with the scale known
    except ValueError as exc:
        raise UsageError(f"--{exc}") from None  # the core names the setting "delta …"; its flag is --delta
    delta = priors.delta_setting(args.delta)
    try:
        settings = FitSettings(
            likelihood=args.likelihood, prior=args.prior, delta=delta, self_exclusion=(False if args.no_self_exclusion else "drop" if getattr(args, "drop_self_family", False) else True), chains=args.chains,
            draws=args.draws, tune=args.tune, seed=args.seed, engine=args.engine, extra_rounds=args.extra_rounds,
            **fixed,
        )
    except ValueError as exc:
        raise UsageError(usage_message(exc, flags)) from None
    try:
        counts = count_tensor(table, self_exclusion=settings.self_exclusion)
    except ValidationError as exc:
        raise UsageError(usage_message(exc)) from None
    return table, counts, settings


def prepare_setting(args: argparse.Namespace):
    """:func:`_prepare` at the setting the user asked for: ``--omega`` and ``--beta-max``, or
    ``--integrated`` (which puts priors on both, so it refuses either beside it)."""
    if args.integrated and (args.omega != 0.0 or args.beta_max != 5.0):
        raise UsageError("--integrated puts priors on ω and β_max: do not also give --omega or --beta-max.")
    return _prepare(args, omega=args.omega, beta_max=args.beta_max, integrated=args.integrated)


def progress_printer(args: argparse.Namespace):
    """A fit's ``progress(message, fraction)`` printed on stderr, about 20 lines per fit (None with ``--quiet``)."""
    if args.quiet:
        return None
    last = [-1]

    def report(message: str, fraction: float) -> None:
        step = int(fraction * 20)  # at most ~20 lines per fit
        if step != last[0]:
            last[0] = step
            print(f"[{fraction:4.0%}] {message}", file=sys.stderr, flush=True)

    return report


def convergence_action(settings: FitSettings, timing: dict | None = None, diagnostics=None) -> str:
    """The command line's one action for a fit that has not converged: under a judge prior that lets
    its chains sit in flipped-judge modes (:func:`simplex_core.inference.fit_result.flipped_judge_modes`), the
    prior that rules them out; tempered chains that crossed between modes too rarely
    (:func:`simplex_core.inference.fit_result.uncrossed_modes`), integrated mode (or, in it, gold answers); otherwise the next, longer run, twice the longest chains that may have
    run (engine ``fast``'s extra rounds double the chain length each:
    :func:`simplex_core.inference.sampling.longest_chains_factor`), or, when only the bulk ESS of ``diagnostics``
    falls short, enough draws for it; one chain: more chains. Never the advice already followed."""
    from simplex_core.inference.fit_result import ESS_MIN, RHAT_MAX, flipped_judge_modes, uncrossed_modes
    from simplex_core.inference.sampling import longest_chains_factor

    if settings.chains < 2:
        return "R-hat compares chains: fit with --chains 4 (the default) or at least 2."
    if flipped_judge_modes(settings, timing):
        return (f"Its chains sit in separate modes, as the {settings.prior} prior allows (a judge read as "
                "flipped or not): fit with --prior weight-propagation, which rules such judges out.")
    if uncrossed_modes(timing):
        if not settings.integrated:
            return ("Its chains move between separate modes too rarely for longer runs to settle: fit with "
                    "--integrated, which lets the data weigh β_max and ω.")
        return ("Its chains move between separate modes too rarely for longer runs to settle: a few answers marked "
                "gold (true_score known) tie the true levels down.")
    factor = 2 * longest_chains_factor(settings)
    if diagnostics is not None and diagnostics.max_rhat <= RHAT_MAX and 0 < diagnostics.min_ess_bulk < ESS_MIN:
        # only the ESS falls short: it grows about in proportion to the draws, so ask for enough of them
        # (with a quarter to spare) rather than a doubling that may still fall short (ESS 71 of 400)
        factor = max(factor, 2 ** math.ceil(math.log2(1.25 * ESS_MIN / diagnostics.min_ess_bulk
                                                     * longest_chains_factor(settings))))
    return f"Sample longer: --draws {factor * settings.draws} --tune {factor * max(settings.tune, 1)}."


def convergence_note(diagnostics, settings: FitSettings, timing: dict | None = None) -> str | None:
    """What went wrong (:func:`simplex_core.inference.fit_result.convergence_problem`) and what to do; None when
    the fit converged."""
    from simplex_core.inference.fit_result import convergence_problem

    problem = convergence_problem(diagnostics)
    return None if problem is None else f"{problem} {convergence_action(settings, timing, diagnostics)}"


def line_progress(args: argparse.Namespace):
    """A line per finished fit (a sweep on Dask reports fits as they finish, not their steps)."""
    if args.quiet:
        return None
    return lambda message, fraction: print(f"[{fraction:4.0%}] {message}", file=sys.stderr, flush=True)


def _command_line(args: argparse.Namespace, command: str, extra: list[str]) -> str:
    parts = ["python", "-m", "simplex_core", command, args.data]
    for opt in ("levels", "true_levels", "families", "criterion", "columns"):
        value = getattr(args, opt, None)
        if value is not None:
            parts.append(f"--{opt.replace('_', '-')}={value}")
    parts += selection_flags(args)
    parts += extra
    if getattr(args, "gold_fraction", None) is not None:
        parts.append(f"--gold-fraction={args.gold_fraction:g}")
    parts += [f"--likelihood={args.likelihood}", f"--prior={args.prior}", f"--delta={args.delta}", f"--chains={args.chains}", f"--draws={args.draws}",
              f"--tune={args.tune}", f"--seed={args.seed}", f"--extra-rounds={args.extra_rounds}"]
    if args.no_self_exclusion:
        parts.append("--no-self-exclusion")
    elif getattr(args, "drop_self_family", False):
        parts.append("--drop-self-family")
    if args.engine != ENGINES[0]:
        parts.append(f"--engine={args.engine}")
    return " ".join(shlex.quote(p) for p in parts)


def write_output(path: str, write) -> None:
    """``write(path)`` after creating the file's folder; an OS error (no permission, a full disk) as a
    UsageError naming the path, never a traceback."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write(path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}.") from None


def _write_json(path: str, doc: dict) -> None:
    write_output(path, lambda p: Path(p).write_text(json.dumps(doc, indent=2, allow_nan=False)))


def run_fit(args: argparse.Namespace) -> int:
    """``fit``: fit, write result.json (and the posterior with --idata), print a short summary."""
    from simplex_core.inference.fitting import fit_model
    from simplex_core.inference.rater_deviation import rater_deviation_text
    from simplex_core.summaries.posterior_tables import data_record, result_json

    check_outputs(args, "out:JSON", "idata:NetCDF", "leaderboard:CSV")  # fail before a long fit, not after
    table, counts, settings = prepare_setting(args)
    fit = fit_model(counts, settings, progress_callback=progress_printer(args))
    extra = ["--integrated"] if settings.integrated else [f"--omega={settings.omega:g}", f"--beta-max={settings.beta_max:g}"]
    extra = ([f"--out={args.out}"] + ([f"--idata={args.idata}"] if args.idata else [])
             + ([f"--leaderboard={args.leaderboard}"] if getattr(args, "leaderboard", None) else []) + extra)
    if getattr(args, "ordinal", False):
        extra.append("--ordinal")
    if getattr(args, "rubric_note", False):
        extra.append("--rubric-note")
    if getattr(args, "no_rater_deviation", False):
        from dataclasses import replace

        from simplex_core.inference.rater_deviation import without_rater_deviation

        extra.append("--no-rater-deviation")
        fit = replace(fit, idata=without_rater_deviation(fit.idata))
    doc = result_json(fit, command_line=_command_line(args, "fit", extra), selection=selection_record(table),
                      data=data_record(table, dataset=None if Path(args.data).exists() else args.data))
    if getattr(args, "ordinal", False):
        doc["ordinal"] = _ordinal_doc(args, table, settings)
    if getattr(args, "rubric_note", False):
        from simplex_core.studies.rubric import rubric_note

        doc["rubric"] = rubric_note(table, settings, full_fit=fit)
    _write_json(args.out, doc)
    if args.idata:
        write_output(args.idata, fit.idata.to_netcdf)
    if getattr(args, "leaderboard", None):
        import pandas as pd

        write_output(args.leaderboard, lambda path: write_csv(pd.DataFrame(doc["leaderboard"]), path))
    if table.n_gold:
        print(f"{table.n_gold} gold answers (true level observed)")
    warning = convergence_note(fit.diagnostics, settings, fit.timing)  # whole sentences: a line of their own
    if warning is None:
        print(f"{len(doc['candidates'])} candidates ranked; {fit.diagnostics.message}")
    else:
        print(f"{len(doc['candidates'])} candidates ranked.\n{warning}")
    for note in doc["notes"]:
        print(f"Note: {note}")
    dev = doc["rater_deviation"]
    if dev is not None:
        print(f"  rank intervals: {rater_deviation_text(dev)}")
    for name, symbol in (("omega", "ω"), ("beta_max", "β_max")):
        h = doc["hyperparameters"].get(name)
        if h:
            print(f"  {symbol} (integrated) = {h['mean']:.2f} [{h['lo']:.2f}, {h['hi']:.2f}]")
    panel = doc["judge_panel"]
    if panel["effective_judges"] is not None:
        e = panel["effective_judges"]
        print(f"  judge panel: {panel['n_judges']} judges worth {e['mean']:.2f} [{e['lo']:.2f}, {e['hi']:.2f}] "
              f"of its most informative judge; adds least: {panel['least_informative_judge']}")
    if "rubric" in doc:
        rubric = doc["rubric"]
        print(f"  rubric: {rubric['conditions']} Mean 95% rank-interval width at {rubric['levels']} levels: "
              f"{rubric['mean_rank_width']:.2f}")
        for c in rubric["collapsed"]:
            if c["mean_rank_width"] is None:
                print(f"    collapsed to {c['levels']} levels: {c['note']}")
                continue
            rho = "n/a" if c["spearman_vs_full"] is None else f"{c['spearman_vs_full']:.2f}"
            print(f"    collapsed to {c['levels']} levels: mean width {c['mean_rank_width']:.2f}, Spearman vs "
                  f"all levels {rho}; {'converged' if c['converged'] else 'NOT converged'}")
    tiers: dict[int, list[str]] = {}
    for row in doc["leaderboard"]:
        tiers.setdefault(row["tier"], []).append(row["candidate"])
    # ">" is the tier rule's claim, no more (simplex_core.summaries.leaderboard): a tier opens at a candidate that
    # some member of the tier above is credibly ahead of; other pairs are in the pairwise matrix
    print("  tiers (order not settled at 95% within a tier; a tier opens where a member of the tier above is "
          "credibly ahead, P ≥ 0.975; other pairs: result.json's pairwise): "
          + " > ".join("{" + ", ".join(names) + "}" for names in tiers.values()))
    for c in doc["candidates"]:
        print(f"  {c['rank_median']:>3} [{c['rank_lo']}-{c['rank_hi']}]  {c['candidate']}  "
              f"E = {c['expected_score_mean']:.3f} [{c['expected_score_lo']:.3f}, {c['expected_score_hi']:.3f}]  "
              f"P(best) = {c['p_best']:.2f}")
    print(f"wrote {args.out}" + (f" and {args.idata}" if args.idata else "")
          + (f" and {args.leaderboard}" if getattr(args, "leaderboard", None) else ""))
    return 0


def _ordinal_doc(args: argparse.Namespace, table, settings: FitSettings) -> dict:
    """The ordinal model fitted to the same table: result.json's ``ordinal`` object, and its ranking printed."""
    from simplex_core.methods.ordinal import ordinal_for_table, ordinal_json

    if not args.quiet:
        print("fitting the ordinal many-facet model (label-free competitor)", file=sys.stderr, flush=True)
    try:
        method = ordinal_for_table(table, self_exclusion=bool(settings.self_exclusion), chains=settings.chains,
                                   draws=settings.draws, tune=settings.tune, seed=settings.seed)
        from simplex_core.data.views import item_view

        result = method(item_view(table))
    except ValueError as exc:
        raise UsageError(usage_message(exc)) from None
    doc = ordinal_json(result, method.settings)
    state = "converged" if doc["diagnostics"]["converged"] else "NOT converged"
    print(f"ordinal model (label-free, {state}): "
          + ", ".join(f"{r['candidate']} {r['rank']:g} [{r['rank_lo']:g}-{r['rank_hi']:g}]"
                      for r in doc["candidates"] if r["rank"] is not None))
    for note in doc["notes"]:
        print(f"Note: {note}")
    return doc


def run_sensitivity(args: argparse.Namespace) -> int:
    """``sensitivity``: the ω and β_max sweeps, written as sens.json."""
    from simplex_core.studies.sensitivity import sensitivity_sweep

    omegas = parse_grid(args.omegas, "--omegas")
    beta_maxes = parse_grid(args.beta_maxes, "--beta-maxes")
    check_outputs(args, "out:JSON")
    table, counts, base = _prepare(args, {"omega": "--base-omega", "beta_max": "--base-beta-max"},
                                   omega=args.base_omega, beta_max=args.base_beta_max)
    with study_client(args) as client:
        if client is not None and not args.quiet:
            from simplex_core.inference.distributed import describe

            print(f"fitting the sweep's settings {describe(client)}", file=sys.stderr, flush=True)
        progress = progress_printer(args) if client is None else line_progress(args)
        result = sensitivity_sweep(counts, base=base, omegas=omegas, beta_maxes=beta_maxes,
                                   progress_callback=progress, client=client)
    doc = result.to_dict()
    doc["selection"] = selection_record(table)
    doc["command_line"] = _command_line(args, "sensitivity", [
        f"--out={args.out}", f"--omegas={args.omegas}", f"--beta-maxes={args.beta_maxes}",
        f"--base-omega={args.base_omega:g}", f"--base-beta-max={args.base_beta_max:g}"])
    _write_json(args.out, doc)
    base_ok = result.base_diagnostics is None or result.base_diagnostics.converged
    # the base first: every Spearman below is measured against it, and the grids may leave it out
    print(f"      base: ω = {base.omega:g}, β_max = {base.beta_max:g}; {'converged' if base_ok else 'NOT converged'}")
    for row in result.rows:
        rho = "n/a" if row.spearman_vs_base != row.spearman_vs_base else f"{row.spearman_vs_base:.2f}"
        print(f"  {row.sweep:>8}: ω = {row.omega:g}, β_max = {row.beta_max:g}: Spearman vs base {rho}; "
              f"{'converged' if row.diagnostics.converged else 'NOT converged'}")
    if not base_ok or not all(row.diagnostics.converged for row in result.rows):
        print(f"Some settings have not converged. {convergence_action(base)}")
    print(f"wrote {args.out}")
    return 0
