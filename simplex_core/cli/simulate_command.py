"""``simulate``: write a simulated table (a named scenario of ``simplex_core.model.simulate``) as CSV, JSON
Lines or Parquet, by the name of the file (``.csv``, ``.jsonl``, ``.parquet``; ``.gz`` compresses)."""

from __future__ import annotations

import argparse
from pathlib import Path

from simplex_core.model.simulate import SCENARIOS, scenario


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``simulate SCENARIO --seed S --out FILE.csv [--items N]``."""
    parser = subparsers.add_parser(
        "simulate",
        help="write a simulated judgment table with known truth (a named scenario)",
        description="Draw a table from the paper's generative model. Scenarios: "
        + " ".join(f"{name}: {spec.description.rstrip('.')}." for name, spec in SCENARIOS.items()),
    )
    parser.add_argument("scenario", metavar="SCENARIO", help=f"one of {', '.join(SCENARIOS)}")
    parser.add_argument("--seed", default="0", metavar="S", help="random seed, an integer >= 0 (default 0)")
    parser.add_argument("--out", required=True, metavar="FILE.csv", help="where to write the table: CSV, or JSON Lines / Parquet by its name (.jsonl, .parquet; .gz compresses)")
    parser.add_argument("--items", default=None, metavar="N", help="number of items (default: the scenario's)")
    parser.set_defaults(handler=run_simulate)


def _nonneg_int(text: str, option: str, least: int = 0) -> int:
    from simplex_core.cli import UsageError

    try:
        value = int(str(text))
    except ValueError:
        raise UsageError(f"{option} {text!r} is not an integer: give a whole number >= {least}.") from None
    if value < least:
        raise UsageError(f"{option} {text!r} is {'negative' if value < 0 else 'too small'}: give a whole number >= {least}.")
    return value


def run_simulate(args: argparse.Namespace) -> int:
    """Handler: simulate, write the CSV, print a one-line summary with the population ranking."""
    from simplex_core.cli import UsageError

    if args.scenario not in SCENARIOS:
        raise UsageError(f"Unknown scenario {args.scenario!r}: choose one of {', '.join(SCENARIOS)}.")
    seed = _nonneg_int(args.seed, "--seed")
    overrides = {}
    if args.items is not None:
        n_items = _nonneg_int(args.items, "--items", least=1)
        overrides["n_items"] = n_items
    from simplex_core.data.reading import input_limits
    from simplex_core.cli import check_outputs

    spec = SCENARIOS[args.scenario]
    max_rows = input_limits()[1]
    rows = overrides.get("n_items", spec.n_items) * len(spec.candidates) * len(spec.judges)
    if rows > max_rows:  # a table the loader would refuse, and minutes of work to write it
        most = max_rows // (len(spec.candidates) * len(spec.judges))
        raise UsageError(f"--items {args.items}: the table would have {rows:,} rows, more than the {max_rows:,} "
                         f"a table may have; give at most {most:,} items for this scenario.")
    out = Path(args.out)
    if not out.parent.exists():
        raise UsageError(f"--out {args.out!r}: the folder {str(out.parent)!r} does not exist; create it or pick another path.")
    check_outputs(args, "out")
    data = scenario(args.scenario, seed, **overrides)
    try:
        _write_table(data.frame, out)
    except OSError as exc:
        raise UsageError(f"--out {args.out!r}: cannot write ({exc.strerror or exc}).") from None
    s = data.settings
    print(
        f"wrote {out} ({len(data.frame)} rows): scenario {args.scenario}, seed {seed}, "
        f"{len(s.candidates)} candidates x {len(s.judges)} judges x {s.n_items} items; "
        f"population ranking (best first): {' > '.join(data.population_ranking)}"
    )
    return 0


def _write_table(frame, out: Path) -> None:
    """The table in the format its name says, by the loader's own rule (:func:`~simplex_core.data.reading.table_format`;
    pandas compresses by a ``.gz`` suffix)."""
    from simplex_core.data.reading import table_format

    kind = table_format(str(out))
    if kind == "parquet":
        frame.to_parquet(out, index=False)
    elif kind == "jsonl":
        frame.to_json(out, orient="records", lines=True, force_ascii=False)
    else:
        frame.to_csv(out, index=False, sep="\t" if kind == "tsv" else ",")
