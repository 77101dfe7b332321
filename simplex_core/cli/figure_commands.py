"""``figures``: the paper's figure types drawn on any dataset, as files for slides and papers.

``python -m simplex_core figures DATA --out DIR [--size 16:9|paper|both] [--formats png,svg,html]
[--omegas 0,1,2,4,8] [--beta-maxes 0,1,5,10,20] [--no-sensitivity] [model options of fit]`` fits the
model once (plus the sensitivity sweep's settings) and writes into DIR:

- ``simplex-judges``: every judge on the simplex with its posterior judge triangles (the paper's
  figure 3 style; a scale with more than 3 levels is collapsed to 3 with the dataset's suggested
  mapping or the paper's, and refitted for this figure);
- ``rank-distributions``: rank box plots by method, candidates in true-rank order when the data
  have truth (the paper's GPQA figure);
- ``sensitivity``: Spearman with the base ranking along the ω and β_max sweeps.

Each figure carries a title and a caption naming dataset, setting and likelihood. PNG and SVG need
the optional exporter (``pip install -r requirements-export.txt`` and a Chromium); HTML does not.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


from simplex_core.cli import UsageError, out_folder
from simplex_core.cli.fit_commands import add_model_options, parse_grid, prepare_setting, progress_printer

FIGURE_FORMATS = ("png", "svg", "html")


def register(subparsers) -> None:
    p = subparsers.add_parser("figures", help="draw the paper's figure types (simplex, rank boxes, sensitivity) as files",
                              description=__doc__.split("\n\n")[0])
    from simplex_core.cli import add_data_options

    add_data_options(p)
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the figure files (created if needed)")
    p.add_argument("--size", choices=("16:9", "paper", "both"), default="both", help="page size (default both)")
    p.add_argument("--formats", default="png,svg", metavar="png,svg,html", help="file formats (default png,svg)")
    p.add_argument("--omegas", default="0,1,2,4,8", metavar="V,V,...", help="ω grid of the sensitivity figure")
    p.add_argument("--beta-maxes", default="0,1,5,10,20", metavar="V,V,...", help="β_max grid of the sensitivity figure")
    p.add_argument("--no-sensitivity", action="store_true", help="skip the sensitivity figure (it fits every grid setting)")
    p.add_argument("--max-draws", type=int, default=40, help="posterior judge triangles drawn per judge (default 40)")
    add_model_options(p)
    p.set_defaults(handler=run_figures)


def _formats(text: str) -> tuple[str, ...]:
    fmts = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    bad = [f for f in fmts if f not in FIGURE_FORMATS]
    if bad or not fmts:
        raise UsageError(f"--formats {text!r}: {', '.join(bad) or 'empty'} not known; use some of png,svg,html.")
    return fmts


def _unconverged(fit) -> str | None:
    """A caption mark for a figure drawn from a fit that did not converge (a slide must not hide it)."""
    d = fit.diagnostics
    return None if d.converged else f"fit NOT converged: {d.message.removeprefix('not converged: ').rstrip('.')}"


def _three_levels(table, criterion):
    """The table on 3 levels for the simplex: the dataset's suggested collapse, else the paper's."""
    from simplex_core.data.table import collapse_levels
    from simplex_core.data.scale import paper_three_level_mapping

    suggestion = getattr(criterion, "collapse_to_3", None)
    if suggestion is not None and set(suggestion.mapping) == set(table.scale.values):
        return collapse_levels(table, dict(suggestion.mapping), dict(suggestion.labels)), suggestion.name
    return collapse_levels(table, paper_three_level_mapping(table.scale)), "paper (appendix D)"


def run_figures(args: argparse.Namespace) -> int:
    """``figures``: fit, draw the three figure types, write them at the chosen sizes and formats."""
    from simplex_core import figures as F
    from simplex_core.methods.baselines import run_methods, table_baseline_methods
    from simplex_core.data.views import count_tensor, item_view, score_distribution
    from simplex_core.summaries.evaluation import NoTruthError, figure_order, method_rank_draws, true_ranks
    from simplex_core.figures import slides as S
    from simplex_core.inference.fitting import fit_model
    from simplex_core.summaries.posterior_views import bayesian_method_result, judge_simplex_data

    fmts = _formats(args.formats)
    sizes = ("16:9", "paper") if args.size == "both" else (args.size,)
    omegas: tuple[float, ...] = ()
    beta_maxes: tuple[float, ...] = ()
    if not args.no_sensitivity:
        omegas, beta_maxes = parse_grid(args.omegas, "--omegas"), parse_grid(args.beta_maxes, "--beta-maxes")
    if args.max_draws < 1:
        raise UsageError(f"--max-draws must be at least 1; got {args.max_draws}.")
    out = out_folder(args.out)
    before = {p.resolve() for p in out.iterdir() if p.is_file()}  # to name the files an earlier run left there
    table, counts, settings = prepare_setting(args)
    from simplex_core.data.selection import selection_text

    # the caption names what was left out of the file: a figure travels without its command line
    dataset = (Path(args.data).name + (f" · {args.criterion}" if args.criterion else "")
               + (f" ({selection_text(table)})" if table.left_out else ""))
    written: list[Path] = []

    def save(fig, name: str, title: str, note: str | None = None, fit_settings=settings) -> None:
        caption = S.figure_caption(dataset, fit_settings, note)
        for size in sizes:
            page = S.for_slides(fig, title, caption, size=size)
            for fmt in fmts:
                path = out / f"{name}-{size.replace(':', 'x')}.{fmt}"
                if fmt == "html":
                    page.write_html(path, include_plotlyjs=True)  # self-contained: opens offline
                else:
                    try:
                        S.write_static(page, path)
                    except RuntimeError as exc:
                        raise UsageError(f"{exc}; or ask for --formats html.") from None
                written.append(path)
                print(f"wrote {path}", file=sys.stderr if args.quiet else sys.stdout)

    t0 = time.perf_counter()
    fit = fit_model(counts, settings, progress_callback=progress_printer(args))

    # 1. the judges on the simplex (3 levels, or 2: segments)
    shown, note = table, None
    if table.scale.n_levels > 3:
        from simplex_core.data import datasets

        crit = None
        if not Path(args.data).exists():
            info = {d.name: d for d in datasets.list_datasets()}[args.data]
            crit = info.criterion(args.criterion) if hasattr(info, "criterion") else None
        shown, how = _three_levels(table, crit)
        note = f"levels collapsed to 3 ({how} mapping), refitted"
    simplex_fit = fit
    if shown is not table:
        simplex_fit = fit_model(count_tensor(shown, self_exclusion=settings.self_exclusion), settings,
                                progress_callback=progress_printer(args))
    parts = judge_simplex_data(simplex_fit, score_distribution(shown), args.max_draws)
    grid = S.ternary_judges_grid_figure(parts, list(shown.scale.labels), true_labels=list(shown.scale.true_labels),
                                        max_draws=args.max_draws)
    save(grid, "simplex-judges", "Judges on the simplex: posterior judge triangles",
         "; ".join(n for n in (note, _unconverged(simplex_fit)) if n) or None)

    # 2. rank distributions by method, in true-rank order when the data have truth
    methods = {"bayesian": bayesian_method_result(fit, max_draws=None)}  # every draw: the whiskers are the stated intervals
    methods |= run_methods(item_view(table), table_baseline_methods(table, self_exclusion=settings.self_exclusion), rng=args.seed)
    draws = method_rank_draws(methods)
    try:
        truth = true_ranks(item_view(table))
    except NoTruthError:
        truth = None
    order = figure_order(draws, truth)
    singles = [m for m in methods if m.startswith("single_judge:")]
    keep = [m for m in methods if m not in singles]  # one box per method; single judges are in the evaluation
    ranks = F.rank_boxplot_figure(draws[draws["method"].isin(keep)], order, true_ranks=truth,
                                  uses_labels={m: bool(r.uses_labels) for m, r in methods.items()}, method_order=keep,
                                  title="")
    save(ranks, "rank-distributions", "Rank distributions by method" + (" (true-rank order)" if truth is not None else ""),
         _unconverged(fit))

    # 3. sensitivity curves over ω and β_max
    if not args.no_sensitivity:
        from simplex_core.studies.sensitivity import sensitivity_sweep

        def fit_or_reuse(c, s, progress_callback=None):
            """The sweep's point at the base setting is the fit already made above: not fitted twice."""
            return fit if s == settings else fit_model(c, s, progress_callback=progress_callback)

        # the sweep fixes ω and β_max: after an integrated fit it starts from the fixed base ω = 0, β_max = 5
        base = settings.replace(integrated=False)
        sweep = sensitivity_sweep(counts, base=base, omegas=omegas, beta_maxes=beta_maxes,
                                  progress_callback=progress_printer(args), fit_fn=fit_or_reuse)
        curves = F.sensitivity_curve_figure(sweep.table(), title="", base_omega=base.omega,
                                            base_beta_max=base.beta_max)
        save(curves, "sensitivity", "How much the ranking moves as the priors change",
             "base setting above; ω and β_max swept", fit_settings=base)
    print(f"{len(written)} files in {out} ({time.perf_counter() - t0:.0f} s)")
    stale = sorted(before - {p.resolve() for p in written})
    if stale:  # a figure of another fit beside this run's would be taken for one of them
        print(f"Note: {len(stale)} other file{'s' if len(stale) != 1 else ''} in {out} {'were' if len(stale) != 1 else 'was'} "
              f"not written by this run (an earlier run's?): {', '.join(p.name for p in stale[:4])}"
              + (f" and {len(stale) - 4} more" if len(stale) > 4 else "") + ".")
    return 0
