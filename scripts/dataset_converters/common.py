"""Helpers shared by every converter: table and JSON writers, scale and criterion entries, card tables."""

from __future__ import annotations

import gzip
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

REPO = Path(__file__).resolve().parents[2]  # scripts/dataset_converters/ -> the checkout root
DEFAULT_RAW = REPO.parent / "shared" / "data" / "raw"
DEFAULT_OUT = REPO / "assets" / "datasets"
GZIP_ABOVE_BYTES = 200_000  # plain CSVs larger than this are shipped gzipped (keeps the repo small)
TRUE_SCORE_DECIMALS = 6  # means of 3 raters are thirds; 6 decimals keep them to within 5e-7


def round_half_up(x: float) -> float:
    """Round to the nearest integer, exact halves upwards (2.5 -> 3).

    The tiny epsilon makes a half that float arithmetic left at 2.4999999999999996 count as a half.
    """
    return float(math.floor(x + 0.5 + 1e-9))


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


def write_table(frame: pd.DataFrame, folder: Path, stem: str) -> str:
    """Write a contract table as CSV (or CSV.gz above 200 kB); returns the file name.

    ``score`` is written as an integer level or empty; ``true_score`` rounded to 6 decimals.
    """
    out = frame.copy()
    out["score"] = out["score"].map(lambda v: "" if pd.isna(v) else _fmt(float(v)))
    if "true_score" in out.columns:
        out["true_score"] = out["true_score"].map(
            lambda v: "" if pd.isna(v) else f"{float(v):.{TRUE_SCORE_DECIMALS}f}".rstrip("0").rstrip(".")
        )
    text = out.to_csv(index=False, lineterminator="\n")
    data = text.encode("utf-8")
    for old in (folder / f"{stem}.csv", folder / f"{stem}.csv.gz"):
        if old.exists():
            old.unlink()
    if len(data) > GZIP_ABOVE_BYTES:
        name = f"{stem}.csv.gz"
        buf = io.BytesIO()
        # mtime=0 and no file name in the header: identical input gives identical bytes.
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
            gz.write(data)
        (folder / name).write_bytes(buf.getvalue())
    else:
        name = f"{stem}.csv"
        (folder / name).write_bytes(data)
    return name


def write_json(obj: Any, path: Path) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def table_shape(frame: pd.DataFrame) -> dict[str, int]:
    """K x J x n of the usable rows, plus row counts (blank scores are missing judgments)."""
    usable = frame[frame["score"].notna()]
    return {
        "n_candidates": int(usable["candidate"].nunique()),
        "n_judges": int(usable["judge"].nunique()),
        "n_items": int(usable["item"].nunique()),
        "n_rows": int(len(frame)),
        "n_judgments": int(len(usable)),
        "n_missing": int(frame["score"].isna().sum()),
    }


def scale_dict(values: Sequence[float], labels: Sequence[str], true_values: Sequence[float] | None = None) -> dict:
    return {
        "values": [float(v) for v in values],
        "labels": list(labels),
        "true_values": [float(v) for v in (true_values if true_values is not None else values)],
    }


def collapse_spec(name: str, mapping: dict[int, int], labels: dict[int, str], why: str) -> dict:
    return {
        "name": name,
        "mapping": {str(k): int(v) for k, v in mapping.items()},
        "labels": {str(k): v for k, v in labels.items()},
        "why": why,
    }


MTBENCH_5_TO_3 = collapse_spec(
    "mtbench",
    {1: 1, 2: 1, 3: 2, 4: 3, 5: 3},
    {1: "low (1-2)", 2: "mid (3)", 3: "high (4-5)"},
    "The paper's MTBench-style mapping (appendix D, 'Score Mapping for Simplex Visualizations'): "
    "{1,2}->1, {3}->2, {4,5}->3. The paper's TLDR-style alternative puts 4 in the middle instead.",
)


def criterion_entry(
    name: str,
    title: str,
    description: str,
    frame: pd.DataFrame,
    file: str,
    scale: dict,
    *,
    collapse_to_3: dict | None = None,
    judges_are_prompts_of_one_model: bool = False,
) -> dict:
    usable = frame[frame["score"].notna()]
    return {
        "name": name,
        "title": title,
        "description": description,
        "file": file,
        "scale": scale,
        **table_shape(frame),
        "candidates": list(pd.unique(usable["candidate"])),
        "judges": list(pd.unique(usable["judge"])),
        "has_truth": bool("true_score" in frame.columns and frame["true_score"].notna().any()),
        "collapse_to_3": collapse_to_3,
        "judges_are_prompts_of_one_model": judges_are_prompts_of_one_model,
    }


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(lines)


def criteria_table(criteria: Sequence[dict], default: str) -> str:
    rows = []
    for c in criteria:
        sc = c["scale"]
        levels = ", ".join(f"{_fmt(v)}={lab}" if lab != _fmt(v) else _fmt(v) for v, lab in zip(sc["values"], sc["labels"]))
        rows.append([
            f"`{c['name']}`" + (" (default)" if c["name"] == default else ""),
            f"{c['n_candidates']} x {c['n_judges']} x {c['n_items']}",
            levels,
            "yes" if c["has_truth"] else "no",
            c["n_judgments"],
            c["n_missing"],
            f"`{c['file']}`",
        ])
    return markdown_table(["criterion", "K x J x n", "levels", "truth", "judgments", "missing (blank score)", "file"], rows)


def families_table(families: dict[str, str], judges: Sequence[str], candidates: Sequence[str]) -> str:
    rows = []
    for fam in sorted(set(families.values())):
        j = [m for m in judges if families.get(m) == fam]
        k = [m for m in candidates if families.get(m) == fam]
        rows.append([f"`{fam}`", ", ".join(j) or "-", ", ".join(k) or "-"])
    return markdown_table(["family", "judges", "candidates"], rows)


def self_pairs_text(pairs: Sequence[tuple[str, str]]) -> str:
    """(judge, candidate) pairs grouped: judges with the same excluded candidates share one clause."""
    by_judge: dict[str, list[str]] = {}
    for j, k in pairs:
        by_judge.setdefault(j, []).append(k)
    groups: dict[tuple[str, ...], list[str]] = {}
    for j, ks in by_judge.items():
        groups.setdefault(tuple(ks), []).append(j)
    return "; ".join(f"{', '.join(js)} on {', '.join(ks)}" for ks, js in groups.items())


@dataclass
class DatasetOutput:
    name: str
    folder: Path
    meta: dict
    files: list[str] = field(default_factory=list)


def finish_dataset(folder: Path, meta: dict, families: dict[str, str], card: str) -> DatasetOutput:
    write_json(dict(sorted(families.items(), key=lambda kv: (kv[1], kv[0]))), folder / "families.json")
    write_json(meta, folder / "dataset.json")
    (folder / "CARD.md").write_text(card.rstrip() + "\n", encoding="utf-8")
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    return DatasetOutput(meta["name"], folder, meta, files)


def fresh_folder(out_dir: Path, name: str) -> Path:
    folder = out_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    for p in folder.iterdir():  # the script owns every file in the folder: stale files must not linger
        if p.is_file():
            p.unlink()
    return folder


def source_and_shape(source: dict, criterion: dict, reference_file: str | None = None) -> dict:
    """The closing fields of every ``dataset.json``, in their order: where the data came from, the reference
    file (if any), the card, and the default criterion's candidates, judges and items."""
    return {"source": source, "reference_file": reference_file, "card": "CARD.md",
            "n_candidates": criterion["n_candidates"], "n_judges": criterion["n_judges"], "n_items": criterion["n_items"]}
