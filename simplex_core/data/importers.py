"""Judgments read where they live: the files of the evaluation tools researchers use, told by their
content (never by their name) and mapped to the data contract, each import saying what it mapped
and what it left out.

- FastChat MT-Bench single-answer grading (``model_judgment/gpt-4_single.jsonl``: ``question_id``,
  ``model``, ``judge`` = [name, prompt], ``score``, ``turn``): item = question id and turn, candidate =
  model, judge = the judge's name (with its prompt only when one answer was scored under several
  prompts of one judge), score; a score of -1 (FastChat's failed parse) is a missing score, counted.
  FastChat's pairwise files (``gpt-4_pair.jsonl``: ``model_1``, ``model_2``, ``g1_winner``) are refused:
  they hold verdicts between two answers, not a score per answer.
- Hugging Face ``datasets`` saved with ``save_to_disk`` (a folder of Arrow stream files and
  ``state.json``), read with pyarrow, so the ``datasets`` package is not needed; Parquet and JSON
  Lines exports already read as tables, with ``--columns`` for their names.

This module knows nothing of the table's checks: :func:`simplex_core.data.table.read_source` calls
:func:`read_folder` for a folder and :func:`import_frame` on every frame it read; a refusal is an
:class:`ImportRefused` the table turns into its usual problem message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

#: attrs key of a frame read by an importer: the notes saying what it mapped and left out.
NOTES_ATTR = "import_notes"

FASTCHAT_SINGLE = "fastchat-single"
FASTCHAT_PAIR = "fastchat-pair"
HF_DISK = "hf-save-to-disk"

_FASTCHAT_COLUMNS = ("question_id", "model", "judge", "score", "turn")
_FASTCHAT_PAIR_COLUMNS = ("question_id", "model_1", "model_2")
_FASTCHAT_MISSING = -1  # FastChat writes -1 when it cannot parse a rating out of the judge's text


class ImportRefused(Exception):
    """A file an importer recognised but cannot map: ``message`` says what it is, ``fix`` what to do."""

    def __init__(self, message: str, fix: str):
        super().__init__(message)
        self.message = message
        self.fix = fix


def detect_format(source: Any) -> str | None:
    """The importer a source needs, by its content: ``"hf-save-to-disk"`` for a ``save_to_disk``
    folder, ``"fastchat-single"`` / ``"fastchat-pair"`` for a frame with FastChat's judgment
    columns, else None (a table read as it is)."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir() and ((path / "state.json").is_file() or (path / "dataset_dict.json").is_file()):
            return HF_DISK
        return None
    if not isinstance(source, pd.DataFrame):
        return None
    names = {str(c) for c in source.columns}
    if all(c in names for c in _FASTCHAT_PAIR_COLUMNS) and ({"g1_winner", "g2_winner", "winner"} & names):
        return FASTCHAT_PAIR
    if all(c in names for c in _FASTCHAT_COLUMNS) and "item" not in names and "candidate" not in names:
        judges = source["judge"].dropna()
        if len(judges) and all(_is_pair(v) for v in judges):
            return FASTCHAT_SINGLE
    return None


def _is_pair(value: Any) -> bool:
    """A FastChat judge cell: [name, prompt] (a list in JSON, an array once read by pyarrow)."""
    return not isinstance(value, (str, bytes, dict)) and hasattr(value, "__len__") and len(value) == 2


def import_frame(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    """``frame`` mapped to the contract when its content is a format this module knows, else
    ``frame`` itself; the mapped frame's ``attrs[NOTES_ATTR]`` says what was mapped and left out."""
    kind = detect_format(frame)
    if kind == FASTCHAT_PAIR:
        raise ImportRefused(
            f"{label!r} is a FastChat pairwise judgment file (columns question_id, model_1, model_2, g1_winner): "
            f"its {len(frame):,} rows say which of two answers won, not a score per answer, which this program needs.",
            fix="give FastChat's single-answer grading file instead (model_judgment/<judge>_single.jsonl, written by "
                "gen_judgment.py --mode single).")
    if kind == FASTCHAT_SINGLE:
        return _fastchat_single(frame, label)
    return frame


def _fastchat_single(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    name = frame["judge"].map(lambda v: None if v is None or (isinstance(v, float) and pd.isna(v)) else str(v[0]))
    prompt = frame["judge"].map(lambda v: None if v is None or (isinstance(v, float) and pd.isna(v)) else str(v[1]))
    qid = frame["question_id"].map(_id_text)
    turn = frame["turn"].map(_id_text)
    item = qid + ":" + turn
    out = pd.DataFrame({"item": item, "candidate": frame["model"], "judge": name, "score": frame["score"]},
                       index=frame.index)
    # A judge's prompt differs by question type (general, math with a reference) and by turn: one judge.
    # Only answers scored under several prompts of one judge make each prompt a judge of its own.
    key = pd.DataFrame({"item": item, "candidate": frame["model"], "name": name, "prompt": prompt})
    several = key.groupby(["item", "candidate", "name"], dropna=False)["prompt"].nunique(dropna=True) > 1
    by_prompt = sorted({str(n) for (_, _, n), many in several.items() if many})
    if by_prompt:
        split = name.isin(by_prompt)
        out.loc[split, "judge"] = name[split] + "/" + prompt[split]
    score = pd.to_numeric(frame["score"], errors="coerce")
    failed = score.eq(_FASTCHAT_MISSING)
    out = out.loc[~failed]
    left = [c for c in frame.columns if str(c) not in _FASTCHAT_COLUMNS]
    notes = [f"Read {label!r} as FastChat MT-Bench single-answer judgments: {len(out):,} of {len(frame):,} rows mapped; "
             f"item = question_id:turn ({out['item'].nunique():,} items), candidate = model "
             f"({out['candidate'].nunique():,}), judge = the judge's name ({out['judge'].nunique():,}), score = score."]
    if by_prompt:
        notes.append(f"Judge{'s' if len(by_prompt) > 1 else ''} {', '.join(map(repr, by_prompt))} scored some answers under "
                     "several prompts, so each of its prompts is a judge of its own (name/prompt).")
    if failed.any():
        notes.append(f"{int(failed.sum()):,} of {len(frame):,} FastChat rows have score -1 (the judge's rating could not "
                     "be parsed) and are left out as missing scores.")
    if left:
        notes.append(f"Columns not used: {', '.join(map(str, left))}.")
    out.attrs[NOTES_ATTR] = notes
    return out.reset_index(drop=True)


def _id_text(value: Any) -> str:
    """An id as text, integers without a decimal point (pyarrow may read 81 as 81.0 beside a gap)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# -- Hugging Face datasets saved to disk ----------------------------------------------------------

def read_folder(path: str | Path, label: str, max_bytes: int, max_rows: int) -> pd.DataFrame:
    """A ``datasets.Dataset.save_to_disk`` folder (``state.json`` naming its Arrow stream files) as a
    frame, read with pyarrow within ``max_bytes`` of files and ``max_rows`` rows. A ``DatasetDict``
    folder of one split reads that split; of several, it is refused with the splits' folders to give."""
    import pyarrow as pa

    folder = Path(path)
    if detect_format(folder) != HF_DISK:
        raise ImportRefused(f"{label!r} is not a regular file but a folder, and no dataset saved by Hugging Face datasets' "
                            "save_to_disk (no state.json or dataset_dict.json in it).",
                            fix="give the path of a data file (CSV, TSV, JSON Lines, Parquet) or of a save_to_disk folder.")
    split = None
    if not (folder / "state.json").is_file():
        splits = _json(folder / "dataset_dict.json", label).get("splits") or []
        if len(splits) != 1:
            raise ImportRefused(f"{label!r} is a Hugging Face DatasetDict with {len(splits)} splits "
                                f"({', '.join(map(str, splits)) or 'none'}).",
                                fix="give the folder of the split to read, e.g. " + str(folder / str(splits[0] if splits else "train")) + ".")
        split = str(splits[0])
        folder = folder / split
    state = _json(folder / "state.json", label)
    files = [folder / str(f.get("filename", "")) for f in state.get("_data_files") or []]
    missing = [f.name for f in files if not f.is_file()]
    if not files or missing:
        raise ImportRefused(f"{label!r} is a save_to_disk folder whose state.json names "
                            + (f"Arrow files that are not there: {', '.join(missing)}." if missing else "no Arrow files."),
                            fix="save the dataset again with save_to_disk, or export it as Parquet (to_parquet).")
    size = sum(f.stat().st_size for f in files)
    if size > max_bytes:
        raise ImportRefused(f"{label!r} holds {size:,} bytes of Arrow files, more than the {max_bytes:,} this program reads.",
                            fix="select fewer rows or columns before saving, or split the dataset.")
    tables = []
    rows = 0
    for f in files:
        try:
            with pa.memory_map(str(f)) as source:
                table = pa.ipc.open_stream(source).read_all()
        except (pa.ArrowInvalid, OSError) as exc:
            raise ImportRefused(f"{label!r}: its Arrow file {f.name} cannot be read ({exc}).",
                                fix="save the dataset again with save_to_disk, or export it as Parquet.") from None
        rows += table.num_rows
        if rows > max_rows:
            raise ImportRefused(f"{label!r} has more than {max_rows:,} rows, the most this program reads.",
                                fix="select fewer rows before saving, or split the dataset.")
        tables.append(table)
    try:
        table = pa.concat_tables(tables)
    except pa.ArrowInvalid as exc:
        raise ImportRefused(f"{label!r}: its Arrow files do not share one schema ({exc}).",
                            fix="save the dataset again with save_to_disk.") from None
    frame = table.to_pandas()
    frame.attrs[NOTES_ATTR] = [f"Read {label!r} as a Hugging Face dataset saved with save_to_disk"
                               + (f" (split {split})" if split else "")
                               + f": {table.num_rows:,} rows from {len(files)} Arrow file{'s' if len(files) > 1 else ''}, "
                               f"columns {', '.join(table.column_names)}."]
    return frame


def _json(path: Path, label: str) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ImportRefused(f"{label!r}: {path.name} cannot be read as JSON ({type(exc).__name__}).",
                            fix="save the dataset again with save_to_disk.") from None
    if not isinstance(data, dict):
        raise ImportRefused(f"{label!r}: {path.name} is not a JSON object.", fix="save the dataset again with save_to_disk.")
    return data
