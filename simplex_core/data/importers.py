"""Judgments read where they live: the files of the evaluation tools researchers use, told by their
content (never by their name) and mapped to the data contract, each import saying what it mapped
and what it left out.

- FastChat MT-Bench single-answer grading (``model_judgment/gpt-4_single.jsonl``: ``question_id``,
  ``model``, ``judge`` = [name, prompt], ``score``, ``turn``): item = question id and turn, candidate =
  model, judge = the judge's name (with its prompt only when one answer was scored under several
  prompts of one judge), score; a score of -1 (FastChat's failed parse) is a missing score, counted.
  FastChat's pairwise files (``gpt-4_pair.jsonl``: ``model_1``, ``model_2``, ``g1_winner``) are refused:
  they hold verdicts between two answers, not a score per answer.
- Inspect AI eval logs (``.eval`` zips and ``.json`` logs, one file or a folder of them), read with
  ``inspect_ai``'s own reader (``inspect_ai.log.read_eval_log``; the optional extra
  ``requirements-import.txt``): item = sample id (with the task when several, the epoch when
  several), candidate = the evaluated model, judge = the scorer, score = its value (letter grades
  C/P/I/N through inspect's ``value_to_float``); a ``multi_scorer`` panel (``model_graded_qa`` with
  several graders) gives one judge per member from the votes its reducer records.
- Hugging Face ``datasets`` saved with ``save_to_disk`` (a folder of Arrow stream files and
  ``state.json``), read with pyarrow, so the ``datasets`` package is not needed; Parquet and JSON
  Lines exports already read as tables, with ``--columns`` for their names.

This module knows nothing of the table's checks: :func:`simplex_core.data.reading.read_source` calls
:func:`read_folder` for a folder, :func:`read_log_bytes` for bytes :func:`sniff_bytes` recognises and
:func:`import_frame` on every frame it read; a refusal is an :class:`ImportRefused` the table turns
into its usual problem message.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd

#: attrs key of a frame read by an importer: the notes saying what it mapped and left out.
NOTES_ATTR = "import_notes"

FASTCHAT_SINGLE = "fastchat-single"
FASTCHAT_PAIR = "fastchat-pair"
HF_DISK = "hf-save-to-disk"
INSPECT_EVAL = "inspect-eval"
INSPECT_JSON = "inspect-json"
INSPECT_FOLDER = "inspect-folder"

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
    folder, ``"inspect-folder"`` for a folder of Inspect logs, ``"inspect-eval"`` / ``"inspect-json"``
    for an Inspect log (a path or bytes), ``"fastchat-single"`` / ``"fastchat-pair"`` for a frame with
    FastChat's judgment columns, else None (a table read as it is)."""
    if isinstance(source, (bytes, bytearray)):
        return sniff_bytes(bytes(source))
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            if (path / "state.json").is_file() or (path / "dataset_dict.json").is_file():
                return HF_DISK
            return INSPECT_FOLDER if _log_files(path) else None
        if path.is_file():
            with open(path, "rb") as fh:
                head = fh.read(_SNIFF)
            return _zip_kind(path) if head[:4] == b"PK\x03\x04" else sniff_bytes(head)
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


_SNIFF = 4096  # bytes read to tell an Inspect JSON log: its "version" and "eval" keys come first


def sniff_bytes(data: bytes) -> str | None:
    """``"inspect-eval"`` for an Inspect ``.eval`` zip (its ``header.json`` or ``_journal/start.json``),
    ``"inspect-json"`` for an Inspect JSON log (an object opening with ``"version"`` … ``"eval": {``),
    else None."""
    if data[:4] == b"PK\x03\x04":
        return _zip_kind(io.BytesIO(data))
    head = data[:_SNIFF].lstrip()
    if head[:1] == b"{" and re.search(rb'"version"\s*:\s*\d', head) and re.search(rb'"eval"\s*:\s*\{', head):
        return INSPECT_JSON
    return None


def _zip_kind(source: Any) -> str | None:
    try:
        with zipfile.ZipFile(source) as zf:
            names = set(zf.namelist())
    except (zipfile.BadZipFile, ValueError, OSError):
        return None  # a damaged zip: read as before, which names it
    return INSPECT_EVAL if {"header.json", "_journal/start.json"} & names else None


def _log_files(folder: Path) -> list[Path]:
    """The Inspect logs of a folder (not its subfolders), by content, in name order."""
    out = []
    for f in sorted(folder.iterdir()):
        if f.is_file() and f.suffix.lower() in (".eval", ".json"):
            if detect_format(f) in (INSPECT_EVAL, INSPECT_JSON):
                out.append(f)
    return out


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


# -- Inspect AI eval logs ---------------------------------------------------------------------------

def _inspect_log_module(label: str):
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError:
        raise ImportRefused(f"{label!r} is an Inspect AI eval log, which is read with inspect_ai's own log reader, and the "
                            "inspect_ai package is not installed here.",
                            fix="install the optional extra: pip install -r requirements-import.txt (or export the scores "
                                "as a table with columns item, candidate, judge, score).") from None
    return read_eval_log, value_to_float


def read_log_bytes(data: bytes, label: str, max_bytes: int, max_rows: int) -> pd.DataFrame:
    """One Inspect eval log (the bytes of a ``.eval`` or ``.json`` log) in the contract."""
    return _read_logs([(label, data)], label, max_bytes, max_rows)


def read_log_folder(folder: str | Path, label: str, max_bytes: int, max_rows: int) -> pd.DataFrame:
    """Every Inspect eval log of a folder in the contract, within ``max_bytes`` of files."""
    files = _log_files(Path(folder))
    size = sum(f.stat().st_size for f in files)
    if size > max_bytes:
        raise ImportRefused(f"{label!r} holds {size:,} bytes of Inspect logs, more than the {max_bytes:,} this program reads.",
                            fix="move some logs to another folder.")
    return _read_logs([(f.name, f.read_bytes()) for f in files], label, max_bytes, max_rows)


def _read_logs(logs: list[tuple[str, bytes]], label: str, max_bytes: int, max_rows: int) -> pd.DataFrame:
    read_eval_log, value_to_float = _inspect_log_module(label)
    to_float = value_to_float()
    read = []
    inflated = 0
    for name, data in logs:
        kind = "eval" if sniff_bytes(data) == INSPECT_EVAL else "json"
        if kind == "eval":  # a zip: its size once inflated, before the reader inflates it
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                inflated += sum(i.file_size for i in zf.infolist())
        else:
            inflated += len(data)
        if inflated > max_bytes:
            raise ImportRefused(f"{label!r} holds Inspect logs of more than {max_bytes:,} bytes once decompressed, the most "
                                "this program reads.", fix="read fewer logs at a time, or export the scores as a table.")
        try:
            read.append((name, read_eval_log(io.BytesIO(data), format=kind)))
        except Exception as exc:  # noqa: BLE001 — the reader's errors (pydantic, zip, JSON) all mean "cannot be read"
            raise ImportRefused(f"{name!r} looks like an Inspect AI eval log but inspect_ai cannot read it "
                                f"({type(exc).__name__}: {str(exc)[:200]}).",
                                fix="check that the log is complete (inspect log dump shows it), or export the scores as a table.") from None
    tasks = {str(log.eval.task) for _, log in read}
    epochs = max((int(s.epoch or 1) for _, log in read for s in log.samples or []), default=1)
    rows: list[dict] = []
    unscored: dict[str, int] = {}
    not_scalar: dict[str, int] = {}
    not_success = [f"{name} ({log.status})" for name, log in read if log.status != "success"]
    no_votes: set[str] = set()
    for name, log in read:
        members = _panel_members(log)
        for sample in log.samples or []:
            item = str(sample.id)
            if len(tasks) > 1:
                item = f"{log.eval.task}/{item}"
            if epochs > 1:
                item = f"{item}/epoch{sample.epoch}"
            for scorer, score in (sample.scores or {}).items():
                panel = (score.metadata or {}).get("panel") if isinstance(score.metadata, dict) else None
                votes = panel.get("votes") if isinstance(panel, dict) else None
                if scorer in members and isinstance(votes, list) and votes:
                    names = members[scorer]
                    judged = [(f"{scorer}/{names[i] if i < len(names) else f'#{i + 1}'}", v) for i, v in enumerate(votes)]
                else:
                    if scorer in members:
                        no_votes.add(scorer)
                    judged = [(scorer, score.value)]
                for judge, value in judged:
                    level = _level(value, to_float)
                    if level is None:
                        unscored[judge] = unscored.get(judge, 0) + 1
                    elif level is _NOT_SCALAR:
                        not_scalar[judge] = not_scalar.get(judge, 0) + 1
                    else:
                        rows.append({"item": item, "candidate": str(log.eval.model), "judge": judge, "score": level})
                    if len(rows) > max_rows:
                        raise ImportRefused(f"{label!r} has more than {max_rows:,} scores, the most this program reads.",
                                            fix="read fewer logs at a time.")
    frame = pd.DataFrame(rows, columns=["item", "candidate", "judge", "score"])
    panels = sorted({j.split("/")[0] for j in frame["judge"] if "/" in j and j.split("/")[0] in
                     {s for _, log in read for s in _panel_members(log)}})
    notes = [f"Read {label!r} as Inspect AI eval log{'s' if len(read) > 1 else ''} ({len(read)} log{'s' if len(read) > 1 else ''}, "
             f"task{'s' if len(tasks) > 1 else ''} {', '.join(sorted(tasks))}): {len(frame):,} scores; item = sample id"
             + (" with its task" if len(tasks) > 1 else "") + (" and epoch" if epochs > 1 else "")
             + f" ({frame['item'].nunique():,} items), candidate = the evaluated model ({frame['candidate'].nunique():,}), "
             f"judge = the scorer ({frame['judge'].nunique():,}: {', '.join(sorted(frame['judge'].unique()))})."]
    if panels:
        notes.append(f"multi_scorer panel{'s' if len(panels) > 1 else ''} {', '.join(panels)}: one judge per member, "
                     "from the votes the reducer recorded (the reduced score is not read).")
    if no_votes:
        notes.append(f"multi_scorer {', '.join(sorted(no_votes))} recorded no member votes (only the 'majority' reducer "
                     "records them), so its reduced score is read as one judge; run it with reducer='majority' to read "
                     "each member as a judge.")
    if unscored:
        notes.append("Unscored (left out as missing scores): " + ", ".join(f"{n:,} by {j}" for j, n in sorted(unscored.items())) + ".")
    if not_scalar:
        notes.append("Scores that are lists or dictionaries (left out; give the scorer one value per sample): "
                     + ", ".join(f"{n:,} by {j}" for j, n in sorted(not_scalar.items())) + ".")
    if not_success:
        notes.append(f"Log{'s' if len(not_success) > 1 else ''} not finished successfully, read as far as they go: {', '.join(not_success)}.")
    frame.attrs[NOTES_ATTR] = notes
    return frame


_NOT_SCALAR = object()
_GRADES = ("C", "I", "P", "N", "yes", "no", "true", "false")  # what inspect's value_to_float maps, beside numbers


def _level(value: Any, to_float) -> Any:
    """A score's value as a level: a number, a letter grade through inspect's ``value_to_float``, a
    text it does not know kept as it is (the table names it); None when unscored."""
    if value is None or isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (dict, list, tuple)):
        return _NOT_SCALAR
    if isinstance(value, (bool, int, float)):
        return float(value)
    text = str(value).strip()
    if text in _GRADES or text.lower() in _GRADES[4:] or re.fullmatch(r"[-+]?\d+(\.\d+)?", text):
        return to_float(text)
    return text


def _panel_members(log: Any) -> dict[str, list[str]]:
    """{scorer: its members' names} for the multi_scorer panels of a log, from the scorer options the
    log header records (``scorers`` of a multi_scorer; a model_graded scorer's ``model`` list)."""
    out: dict[str, list[str]] = {}
    for spec in log.eval.scorers or []:
        options = spec.options or {}
        members = options.get("scorers")
        models = options.get("model")
        if isinstance(members, list) and members:
            out[spec.name] = [str(m.get("name", f"#{i + 1}")) if isinstance(m, dict) else str(m) for i, m in enumerate(members)]
        elif isinstance(models, list) and models:
            out[spec.name] = [str(m) for m in models]
    for scorer, names in out.items():  # one scorer twice in a panel: told apart by its place
        out[scorer] = [n if names.count(n) == 1 else f"{n}#{i + 1}" for i, n in enumerate(names)]
    return out


# -- Hugging Face datasets saved to disk ----------------------------------------------------------

def read_directory(path: str | Path, label: str, max_bytes: int, max_rows: int) -> pd.DataFrame:
    """A folder: a Hugging Face ``save_to_disk`` folder or a folder of Inspect eval logs."""
    if detect_format(path) == INSPECT_FOLDER:
        return read_log_folder(path, label, max_bytes, max_rows)
    return read_folder(path, label, max_bytes, max_rows)


def read_folder(path: str | Path, label: str, max_bytes: int, max_rows: int) -> pd.DataFrame:
    """A ``datasets.Dataset.save_to_disk`` folder (``state.json`` naming its Arrow stream files) as a
    frame, read with pyarrow within ``max_bytes`` of files and ``max_rows`` rows. A ``DatasetDict``
    folder of one split reads that split; of several, it is refused with the splits' folders to give."""
    import pyarrow as pa

    folder = Path(path)
    if detect_format(folder) != HF_DISK:
        raise ImportRefused(f"{label!r} is not a regular file but a folder, and no dataset saved by Hugging Face datasets' "
                            "save_to_disk (no state.json or dataset_dict.json in it) nor a folder of Inspect AI eval logs.",
                            fix="give the path of a data file (CSV, TSV, JSON Lines, Parquet), of a save_to_disk folder "
                                "or of a folder of Inspect logs.")
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
