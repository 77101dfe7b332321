#!/usr/bin/env python
"""Regenerate the built-in datasets under ``assets/datasets/`` from the raw files.

Run from the checkout root::

    .venv/bin/python scripts/convert_datasets.py [--raw ../shared/data/raw] [--out assets/datasets] [--only NAME ...]

One module per dataset in ``scripts/dataset_converters/`` (``triviaqa``, ``hanna``, ``topical_chat``,
``wildbench``, ``faithbench``, ``summhay``; shared writers and card helpers in ``common``), each with
one ``convert_<name>`` function; this file is the command line and re-exports their public names.
Each converter writes, into ``assets/datasets/<name>/``:

- one table per criterion in the data contract (``item, candidate, judge, score[, true_score]``),
  as ``.csv``, or ``.csv.gz`` when the plain CSV would exceed 200 kB (gzip with a fixed header, so
  re-running the script gives byte-identical files);
- ``families.json`` (flat {model name: family}, covering every judge and candidate);
- ``dataset.json`` (the metadata :mod:`simplex_core.data.datasets` reads);
- ``CARD.md`` (source, licence, candidates, judges, levels, ground truth, every conversion decision
  with the counts of rows affected, caveats). The counts in the cards are computed here, from the
  data, so they cannot drift from the files.

Conventions shared by every table: each table holds the full design grid (every item x candidate x
judge the source meant to have a judgment); a judgment that is missing or unusable in the source is
a row with an *empty* ``score``, which :func:`simplex_core.data.table.load_table` excludes and reports
("N judgments with no score excluded"), so nothing disappears silently. Rows that are not
judgments at all (stale duplicates, empty placeholder blocks) are removed here and counted in the card.

The reduction rules (:func:`round_half_up`, :func:`hanna_pool`, :func:`topical_reduce`) are
module-level functions (re-exported here) so that the tests can apply them to raw rows.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

# The converters live next to this file; the folder is put on the path so that both
# ``python scripts/convert_datasets.py`` and a load by file path (the tests) find them. The folder's
# name must not be ``datasets``: that would clash with the installed Hugging Face package.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from dataset_converters.common import DEFAULT_OUT, DEFAULT_RAW, DatasetOutput, round_half_up  # noqa: E402
from dataset_converters.faithbench import convert_faithbench, faithbench_truth, faithbench_worst_severity  # noqa: E402
from dataset_converters.hanna import HANNA_CRITERIA, HANNA_JUDGES, convert_hanna, hanna_pool, hanna_single  # noqa: E402
from dataset_converters.summhay import convert_summhay, summhay_split_key  # noqa: E402
from dataset_converters.topical_chat import (  # noqa: E402
    SAMPLE_COLUMNS,
    TOPICAL_ASPECTS,
    TOPICAL_JUDGE,
    Reduction,
    convert_topical_chat,
    topical_context_ids,
    topical_reduce,
)
from dataset_converters.triviaqa import convert_triviaqa  # noqa: E402
from dataset_converters.wildbench import convert_wildbench  # noqa: E402

__all__ = [
    "CONVERTERS", "DatasetOutput", "HANNA_CRITERIA", "HANNA_JUDGES", "Reduction", "SAMPLE_COLUMNS", "TOPICAL_ASPECTS",
    "TOPICAL_JUDGE", "convert_faithbench", "convert_hanna", "convert_summhay", "convert_topical_chat", "convert_triviaqa",
    "convert_wildbench", "faithbench_truth", "faithbench_worst_severity", "hanna_pool", "hanna_single", "main",
    "round_half_up", "summhay_split_key", "topical_context_ids", "topical_reduce",
]

CONVERTERS: dict[str, Callable[[Path, Path], DatasetOutput]] = {
    "triviaqa-v1": lambda raw, out: convert_triviaqa(raw, out, "v1"),
    "triviaqa-v2": lambda raw, out: convert_triviaqa(raw, out, "v2"),
    "hanna": convert_hanna,
    "topical-chat": convert_topical_chat,
    "wildbench-v2": convert_wildbench,
    "faithbench": convert_faithbench,
    "summhay": convert_summhay,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raw", type=Path, default=DEFAULT_RAW, help=f"raw data folder (default: {DEFAULT_RAW})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    parser.add_argument("--only", nargs="+", choices=sorted(CONVERTERS), help="convert only these datasets")
    args = parser.parse_args(argv)
    if not args.raw.is_dir():
        print(f"error: raw data folder {args.raw} not found (give it with --raw)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only or list(CONVERTERS):
        result = CONVERTERS[name](args.raw, args.out)
        sizes = ", ".join(f"{f} {(result.folder / f).stat().st_size / 1024:.0f} KB" for f in result.files)
        print(f"{name}: {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
