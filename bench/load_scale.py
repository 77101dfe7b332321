"""Loading at scale: time to read, validate and count one million valid rows.

Usage (from the repo root, project venv)::

    PYTHONPATH=. .venv/bin/python -m bench.load_scale               # 1,000,000 rows, CSV
    PYTHONPATH=. .venv/bin/python -m bench.load_scale --rows 200000 --format jsonl

Writes a table of ``--rows`` valid rows (items x 20 candidates x 50 judges, scores 1..5, a
true_score and family columns) to a temporary file, then times ``describe``'s work in this
process: ``load_table`` (read + validate), ``count_tensor`` (which hashes the data) and the score
distribution. Prints the figures and the peak resident memory; asserts nothing.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def make_frame(rows: int, candidates: int = 20, judges: int = 50, seed: int = 0) -> pd.DataFrame:
    """``rows`` valid rows in the data contract (rounded down to whole items)."""
    rng = np.random.default_rng(seed)
    items = max(1, rows // (candidates * judges))
    i, k, j = np.meshgrid(np.arange(items), np.arange(candidates), np.arange(judges), indexing="ij")
    i, k, j = i.ravel(), k.ravel(), j.ravel()
    truth = rng.integers(1, 6, size=(items, candidates))
    score = np.clip(truth[i, k] + rng.integers(-1, 2, size=i.size), 1, 5)
    cand = np.array([f"model-{c:02d}" for c in range(candidates)])
    judge = np.array([f"judge-{x:02d}" for x in range(judges)])
    return pd.DataFrame({
        "item": np.char.add("q", i.astype(str)), "candidate": cand[k], "judge": judge[j], "score": score,
        "true_score": truth[i, k], "candidate_family": np.char.add("fam-", (k % 7).astype(str)),
        "judge_family": np.char.add("fam-", (j % 9).astype(str)),
    })


def main(argv: list[str] | None = None) -> int:
    from simplex_core.cli.data_commands import describe_table
    from simplex_core.data.table import load_table

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--format", choices=("csv", "jsonl", "parquet"), default="csv")
    args = p.parse_args(argv)
    frame = make_frame(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"big.{args.format}"
        if args.format == "csv":
            frame.to_csv(path, index=False)
        elif args.format == "jsonl":
            frame.to_json(path, orient="records", lines=True)
        else:
            frame.to_parquet(path)
        size = path.stat().st_size
        t0 = time.perf_counter()
        table = load_table(path)
        t1 = time.perf_counter()
        describe_table(table)
        t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{len(frame):,} rows, {args.format}, {size / 1e6:.1f} MB on disk")
    print(f"load_table: {t1 - t0:.2f} s; describe (counts, hash, distribution): {t2 - t1:.2f} s; "
          f"total {t2 - t0:.2f} s; peak RSS {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
