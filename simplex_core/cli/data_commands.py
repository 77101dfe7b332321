"""``datasets`` and ``describe``: what data is built in, and what a table holds."""

from __future__ import annotations

import argparse
import json

import pandas as pd

from simplex_core.data.table import JudgmentTable
from simplex_core.data.problems import ValidationError
from simplex_core.data.views import count_tensor, score_distribution, score_distribution_wide
from simplex_core.data.selection import selection_record
from simplex_core.cli import ADVICE, UsageError, add_data_options, load_data_from_args


def describe_table(table: JudgmentTable) -> dict:
    """Everything ``describe`` reports, as plain data."""
    counts = count_tensor(table, self_exclusion=False)
    dist = score_distribution(table, counts)
    fit_problems: list[str] = []
    if table.self_family_pairs:  # what `fit` would refuse at its defaults (self-family exclusion on): said here too
        try:
            count_tensor(table)
        except ValidationError as exc:
            fit_problems = [p.describe(ADVICE) for p in exc.problems]
    return {
        **table.summary(),
        "scale_text": table.scale.describe(),
        "candidates_list": list(table.candidates),
        "judges_list": list(table.judges),
        "families": dict(table.families),
        "self_family_pairs": [list(p) for p in table.self_family_pairs],
        "judgments": int(counts.N.sum()),
        "gold_answers": table.n_gold,
        "notes": list(table.notes),
        **selection_record(table),
        "fit_problems": fit_problems,
        "distribution": [
            {"judge": r.judge, "candidate": r.candidate, "label": r.label, "count": int(r.count)}
            for r in dist.itertuples()
        ],
    }


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def _describe(args: argparse.Namespace) -> int:
    try:
        table = load_data_from_args(args)
    except UsageError as exc:
        if args.json:  # a script reading stdout learns that, and why, the table was refused
            print(json.dumps({"valid": False, "error": str(exc)}, indent=2))
        raise
    info = describe_table(table)
    if args.json:
        print(json.dumps({"valid": True, **info}, indent=2))
        return 0
    print(f"source: {info['source']}" + (f" (criterion {info['criterion']})" if info["criterion"] else ""))
    print(f"scale: {info['scale_text']}")
    print(f"{_n(info['candidates'], 'candidate')} x {_n(info['judges'], 'judge')} x {_n(info['items'], 'item')}; {_n(info['judgments'], 'judgment')}; ground truth: {'yes' if info['has_truth'] else 'no'}"
          + (f"; {info['gold_answers']} gold answers (true level observed)" if info["gold_answers"] else ""))
    print("candidates: " + ", ".join(table.candidates))
    print("judges: " + ", ".join(table.judges))
    if table.families:
        print("families: " + ", ".join(f"{m}={f}" for m, f in table.families.items()))
        pairs = table.self_family_pairs
        print(f"self-family (judge, candidate) pairs, excluded by default: {len(pairs)}" + (": " + "; ".join(f"{j} on {k}" for j, k in pairs) if pairs else ""))
    else:
        print("families: " + ("none of the names given is a candidate or judge here (no self-family exclusion; "
                              "see the notes below)" if args.families
                              else "none given (no self-family exclusion)"))
    print("\nscore distribution per judge (counts of each level; – where the judge scored none of the candidate's answers):")
    with pd.option_context("display.width", 200, "display.max_columns", 100):
        print(score_distribution_wide(table).astype(object).fillna("–").to_string())
    problems = info["fit_problems"]
    status = ([f"{len(problems)} problem{'s' if len(problems) > 1 else ''} for `fit` at its defaults"] if problems else []) \
        + ([f"{len(table.notes)} note{'s' if len(table.notes) > 1 else ''}"] if table.notes else [])
    print("\nvalidation: " + (", ".join(status) if status else "no problems"))
    for problem in problems:
        print(f"- {problem}")
    for note in table.notes:
        print(f"- {note}")
    return 0


def _datasets(args: argparse.Namespace) -> int:
    from simplex_core.data import datasets

    infos = datasets.list_datasets()
    if args.json:
        print(json.dumps([datasets.dataset_summary(d) for d in infos], indent=2))
        return 0
    for d in infos:
        print(datasets.dataset_line(d))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("datasets", help="list the built-in datasets (NAME first; NAME works wherever DATA does)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_datasets)

    p = sub.add_parser("describe", help="scale, counts, per-judge score distributions and validation messages of DATA")
    add_data_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_describe)
