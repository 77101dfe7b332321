"""``leave-one-judge-out``: how the ranking changes without each judge
(:mod:`simplex_core.studies.leave_one_judge_out`).

``python -m simplex_core leave-one-judge-out DATA --out loo.csv [--figure loo.html]`` fits DATA with all
judges and without each one (J + 1 independent fits, on Dask: ``--workers`` / ``--scheduler``) and writes
one row per judge: Spearman of the ranking without it against the full ranking, mean 95% rank-interval
width without it and with all, the candidate that moves most, and whether that fit converged.
"""

from __future__ import annotations

import argparse
import sys

from simplex_core.cli import UsageError, add_dask_options, add_data_options, check_outputs, study_client, usage_message
from simplex_core.cli.fit_commands import add_model_options, line_progress, prepare_setting, write_output
from simplex_core.data.spreadsheet import write_csv


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "leave-one-judge-out", help="refit without each judge and compare the rankings",
        description="Fit DATA with all judges and without each judge in turn; write, per judge, the Spearman of the "
                    "ranking without it against the full ranking and the mean width of the 95%% rank intervals.")
    add_data_options(p)
    p.add_argument("--out", required=True, metavar="loo.csv", help="where to write the table (CSV)")
    p.add_argument("--figure", metavar="loo.html", help="also write the figure (a self-contained HTML file)")
    add_model_options(p)
    add_dask_options(p)
    p.set_defaults(handler=run_leave_one_judge_out)


def run_leave_one_judge_out(args: argparse.Namespace) -> int:
    from simplex_core.studies.leave_one_judge_out import leave_one_judge_out

    if args.figure and not args.figure.lower().endswith((".html", ".htm")):
        raise UsageError(f"--figure {args.figure!r}: the figure is written as HTML; give a name ending in .html.")
    check_outputs(args, "out:CSV", "figure")
    table, _counts, settings = prepare_setting(args)
    if len(table.judges) < 2:
        raise UsageError(f"leave-one-judge-out needs at least 2 judges; {args.data} has {len(table.judges)}.")
    with study_client(args) as client:
        if client is not None and not args.quiet:
            from simplex_core.inference.distributed import describe

            print(f"fitting {len(table.judges) + 1} fits {describe(client)}", file=sys.stderr, flush=True)
        try:
            result = leave_one_judge_out(table, settings, client=client, progress_callback=line_progress(args))
        except ValueError as exc:
            raise UsageError(usage_message(exc)) from None
    write_output(args.out, lambda path: write_csv(result, path))
    if args.figure:
        from simplex_core.figures.judge_panel import leave_one_judge_out_figure

        fig = leave_one_judge_out_figure(result, title=f"Leave one judge out: {args.data}")
        write_output(args.figure, lambda path: fig.write_html(path, include_plotlyjs=True))  # opens offline
    full = result["full_mean_rank_width"].dropna()
    if len(full):
        print(f"all {len(table.judges)} judges: mean 95% rank-interval width {full.iloc[0]:.2f}")
    for row in result.itertuples():
        if row.note:
            print(f"  without {row.judge}: {row.note}")
            continue
        print(f"  without {row.judge}: Spearman {row.spearman_vs_full:.3f}, mean width {row.mean_rank_width:.2f} "
              f"({row.width_change:+.2f}); moves most: {row.largest_shift_candidate} ({row.largest_shift:+g}); "
              f"{'converged' if row.converged else 'NOT converged'}")
    print(f"wrote {args.out}" + (f" and {args.figure}" if args.figure else ""))
    return 0
