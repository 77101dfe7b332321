"""The data contract: one long table of judgments, its validation, and the views models need.

One row per (item, candidate, judge) with columns ``item``, ``candidate``, ``judge``, ``score``;
optional ``true_score`` (used for evaluation and labelled baselines; the model fit sees it only for
answers marked gold); optional ``gold`` (true/false: the answer's true score is a known label, which
the shared-truth likelihood takes as observed; see :mod:`simplex_core.data.gold`); optional
``candidate_family`` / ``judge_family`` (or a {model: family} mapping) for self-family
exclusion; optional ``criterion`` when one file holds several criteria.

Validation collects every problem at once and names the column, the rows (1-based data rows: the
first row after the header is row 1), the offending value, what was expected and how to fix it.
Nothing is dropped silently: anything excluded or normalised is counted in ``JudgmentTable.notes``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from simplex_core.data.importers import NOTES_ATTR, ImportRefused, import_frame, read_directory, read_log_bytes, sniff_bytes
from simplex_core.data.scale import Scale, ScaleError, collapse_scale, covering_levels, levels_text, parse_levels
from simplex_core.data.text import shorten
from simplex_core.data.patterns import NO_SCORE, ScorePatterns, patterns_from_answers

REQUIRED_COLUMNS = ("item", "candidate", "judge", "score")
#: Names other tools give the required columns: named in the missing-column message as a suggestion.
COLUMN_HINTS = {
    "item": ("question", "question_id", "prompt", "prompt_id", "item_id", "id", "example_id", "sample_id", "task_id", "instance_id"),
    "candidate": ("model", "model_name", "candidate_model", "system", "generator", "policy", "answerer", "response_model"),
    "judge": ("grader", "rater", "annotator", "evaluator", "judge_model", "judge_name", "reviewer", "critic", "scorer"),
    "score": ("rating", "grade", "label", "judgment", "judgement", "verdict", "judge_score", "points"),
}
OPTIONAL_COLUMNS = ("true_score", "gold", "candidate_family", "judge_family", "criterion")
# Spellings of a boolean gold cell (case-insensitive); a blank cell means "not gold".
GOLD_TRUE = ("true", "1", "1.0", "yes", "y", "t")
GOLD_FALSE = ("false", "0", "0.0", "no", "n", "f")
# Above this many distinct scores the column is almost surely continuous, not a set of levels.
MAX_IMPLICIT_LEVELS = 15
_MAX_LISTED = 8  # rows/values quoted per problem before "and N more"


# -- problems ------------------------------------------------------------------------------------

def _fmt_rows(rows: Sequence[int]) -> str:
    rows = list(rows)
    shown = ", ".join(str(r) for r in rows[:_MAX_LISTED])
    more = f" and {len(rows) - _MAX_LISTED} more" if len(rows) > _MAX_LISTED else ""
    return ("row " if len(rows) == 1 else "rows ") + shown + more


def _fmt_values(values: Iterable[Any]) -> str:
    vals = list(dict.fromkeys(values))
    shown = ", ".join(repr(v) if isinstance(v, str) else _num(v) for v in vals[:_MAX_LISTED])
    more = f" and {len(vals) - _MAX_LISTED:,} more" if len(vals) > _MAX_LISTED else ""
    return shown + more


def _num(v: Any) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return repr(v)
    return str(int(f)) if f.is_integer() else f"{f:g}"


#: The longest problem message shown: the start and the end of a longer one, with the count cut
MAX_MESSAGE_CHARS = 1500


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, said precisely enough to fix it.

    ``rows`` are the 1-based data rows concerned (the first row after the header is row 1) and
    ``value`` the offending value(s) (a tuple of the distinct ones), when known. ``fix`` says what
    to change in words of the data; ``setting`` names the input setting that can also fix it
    (``'data'``, ``'levels'``, ``'true_levels'``, ``'criterion'``, ``'families'``,
    ``'self_exclusion'``), which each front end phrases in its own words (a flag, a widget) through
    :meth:`describe`. ``suggestion``, when known, is the declaration that fixes it, as
    ``(setting, value)`` pairs in the settings' syntax (e.g. ``(("levels", "1,2,3,4,5"),)``).
    """

    column: str | None
    message: str
    rows: tuple[int, ...] = ()
    value: Any = None
    expected: str | None = None
    fix: str | None = None
    setting: str | None = None
    suggestion: tuple[tuple[str, str], ...] = ()

    def describe(self, advice: Mapping[str, str] | None = None,
                 suggest: Callable[[tuple[tuple[str, str], ...]], str] | None = None) -> str:
        """The problem in one paragraph, with the front end's ``advice[setting]`` after the fix (or,
        with a ``suggestion``, ``suggest(suggestion)``: the front end's words for that declaration); an
        echoed name or value of any length is cut to :data:`MAX_MESSAGE_CHARS` (a 100 MB cell must not
        become a 100 MB message)."""
        message = shorten(self.message, MAX_MESSAGE_CHARS, say_how_many=True)
        parts = [f"The '{shorten(self.column, 200, say_how_many=True)}' column: {message}" if self.column else message]
        if self.expected:
            parts.append(f"Expected {self.expected}.")
        if self.fix:
            parts.append(f"Fix: {self.fix}")
        if self.suggestion and suggest is not None:
            parts.append(suggest(self.suggestion))
        elif advice and self.setting in advice:
            parts.append(advice[self.setting])
        return " ".join(parts)

    def __str__(self) -> str:
        return self.describe()


class ValidationError(ValueError):
    """Raised with every problem found in the input at once."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        super().__init__(self.describe())

    def describe(self, advice: Mapping[str, str] | None = None,
                 suggest: Callable[[tuple[tuple[str, str], ...]], str] | None = None) -> str:
        """Every problem, one per line (:meth:`Problem.describe` with the front end's ``advice``)."""
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in the input:"
        return "\n".join([head] + [f"- {p.describe(advice, suggest)}" for p in self.problems])


# -- the validated table ---------------------------------------------------------------------------

@dataclass(frozen=True)
class JudgmentTable:
    """A validated judgment table, its scale and families.

    ``frame`` holds the usable rows with columns item, candidate, judge, score (float level values)
    and, when present, true_score. Orders (``candidates``, ``judges``, ``items``) are those of first
    appearance and are used by every view.
    """

    frame: pd.DataFrame
    scale: Scale
    families: Mapping[str, str]
    candidates: tuple[str, ...]
    judges: tuple[str, ...]
    items: tuple[str, ...]
    notes: tuple[str, ...] = ()
    source: str = "table"
    criterion: str | None = None
    #: (role, name) of each candidate / judge left out by choice (:func:`simplex_core.data.selection.select_models`)
    left_out: tuple[tuple[str, str], ...] = ()

    @property
    def has_truth(self) -> bool:
        return "true_score" in self.frame.columns and self.frame["true_score"].notna().any()

    @property
    def n_gold(self) -> int:
        """Number of gold answers (item, candidate) whose true score the model takes as observed."""
        if "gold" not in self.frame.columns:
            return 0
        return int(self.frame.loc[self.frame["gold"], ["item", "candidate"]].drop_duplicates().shape[0])

    def family(self, model: str) -> str | None:
        return self.families.get(model)

    def is_self_family(self, judge: str, candidate: str) -> bool:
        fj, fc = self.families.get(judge), self.families.get(candidate)
        return fj is not None and fj == fc

    @property
    def self_family_pairs(self) -> tuple[tuple[str, str], ...]:
        """(judge, candidate) pairs whose judge and candidate share a family."""
        return tuple((j, k) for j in self.judges for k in self.candidates if self.is_self_family(j, k))

    def data_hash(self) -> str:
        """sha256 over the canonical rows, the scale and the families (for caches and provenance).

        Computed once per table (it serialises every row); the table is immutable."""
        cached = self.__dict__.get("_data_hash")
        if cached is None:
            cached = self.__dict__["_data_hash"] = self._compute_hash()
        return cached

    def _compute_hash(self) -> str:
        cols = [c for c in ("item", "candidate", "judge", "score", "true_score", "gold") if c in self.frame.columns]
        canon = self.frame[cols].sort_values(["item", "candidate", "judge"]).to_csv(index=False)
        h = hashlib.sha256(canon.encode())
        h.update(json.dumps(self.scale.to_dict(), sort_keys=True).encode())
        h.update(json.dumps(dict(sorted(self.families.items()))).encode())
        return h.hexdigest()

    def summary(self) -> dict:
        return {
            "source": self.source,
            "criterion": self.criterion,
            "candidates": len(self.candidates),
            "judges": len(self.judges),
            "items": len(self.items),
            "rows": int(len(self.frame)),
            "scale": self.scale.to_dict(),
            "has_truth": bool(self.has_truth),
        }


# -- reading ---------------------------------------------------------------------------------------

#: Largest input read, in bytes after decompression (``SIMPLEX_JUDGE_MAX_BYTES`` overrides).
MAX_BYTES = 256 * 1024 * 1024
#: Most data rows read (``SIMPLEX_JUDGE_MAX_ROWS`` overrides).
MAX_ROWS = 3_000_000
#: Most (judge, candidate) pairs: the count tensor and the per-pair tables grow with this.
MAX_PAIRS = 100_000

_FORMAT_HELP = "save the table as CSV (comma-separated, one header row), JSON Lines or Parquet."


def _limit(env: str, default: int) -> int:
    import os

    try:
        return max(1, int(os.environ.get(env, "")))
    except ValueError:
        return default


def input_limits() -> tuple[int, int]:
    """(max bytes after decompression, max rows) read from one input."""
    return _limit("SIMPLEX_JUDGE_MAX_BYTES", MAX_BYTES), _limit("SIMPLEX_JUDGE_MAX_ROWS", MAX_ROWS)


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 10e6 else f"{n / 1e6:,.1f} MB" if n >= 1e5 else f"{n:,} bytes"


def table_format(name: str) -> str:
    """``"parquet"``, ``"jsonl"``, ``"tsv"`` or ``"csv"``: the format a file's name says (any
    compression suffix aside), the one rule for reading a table and for writing one to be read back."""
    suffixes = [s.lower() for s in Path(name).suffixes]
    if ".parquet" in suffixes or ".pq" in suffixes:
        return "parquet"
    if ".jsonl" in suffixes or ".ndjson" in suffixes or ".json" in suffixes:
        return "jsonl"
    return "tsv" if ".tsv" in suffixes else "csv"


def _read_error(label: str, message: str, fix: str = _FORMAT_HELP) -> ValidationError:
    return ValidationError([Problem(None, f"{label!r} {message}", fix=fix)])


def _bounded_bytes(source: Any, label: str, max_bytes: int) -> bytes:
    """The raw bytes of a path, bytes or file-like object, never more than ``max_bytes`` + 1."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise ValidationError([Problem(None, f"No file at {str(source)!r}.", fix="check the path, or give the name of a built-in dataset.", setting="data")])
        if not path.is_file():  # a folder, a device such as /dev/zero, a pipe
            raise _read_error(label, "is not a regular file.", fix="give the path of a data file.")
        try:
            with open(path, "rb") as fh:
                return fh.read(max_bytes + 1)
        except OSError as exc:
            raise _read_error(label, f"cannot be read ({exc.strerror or type(exc).__name__}).", fix="check the file's permissions.") from None
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    read = getattr(source, "read", None)
    if read is None:
        raise ValidationError([Problem(None, f"Cannot read a table from a {type(source).__name__}.",
                                       fix="give a file path, bytes, a file object or a DataFrame.")])
    if hasattr(source, "seek"):
        try:
            source.seek(0)
        except (OSError, ValueError):
            pass
    data = read(max_bytes + 1)
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def _decompress(data: bytes, label: str, max_bytes: int) -> bytes:
    """Inflate gzip, bzip2, xz or a one-file zip (told by their magic bytes, whatever the name),
    stopping as soon as the result passes ``max_bytes``: a small archive can inflate to gigabytes."""
    import bz2
    import gzip
    import lzma
    import zipfile

    opener: Any = None
    if data[:2] == b"\x1f\x8b":
        opener, kind = (lambda f: gzip.GzipFile(fileobj=f)), "gzip"
    elif data[:3] == b"BZh":
        opener, kind = bz2.BZ2File, "bzip2"
    elif data[:6] == b"\xfd7zXZ\x00":
        opener, kind = lzma.LZMAFile, "xz"
    elif data[:4] == b"PK\x03\x04":
        kind = "zip"
    else:
        return data
    try:
        if kind == "zip":
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                members = [m for m in zf.infolist() if not m.is_dir()]
                if len(members) != 1:
                    raise _read_error(label, f"is a zip archive with {len(members)} files.", fix="zip exactly one data file, or upload the file itself.")
                with zf.open(members[0]) as fh:
                    out = fh.read(max_bytes + 1)
        else:
            with opener(io.BytesIO(data)) as fh:
                out = fh.read(max_bytes + 1)
    except ValidationError:
        raise
    except Exception as exc:  # noqa: BLE001 — every codec error means "a damaged archive"
        raise _read_error(label, f"looks {kind}-compressed but could not be decompressed ({type(exc).__name__}).",
                          fix="check that the file is complete, or give it uncompressed.") from None
    if len(out) > max_bytes:
        raise _read_error(label, f"decompresses to more than {_mb(max_bytes)}, the most this program reads.",
                          fix="split the table or remove unused columns.")
    return out


def _decode(data: bytes, label: str, fmt: str) -> str:
    """The bytes as UTF-8 text; binary content and other encodings are named with their line."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise _read_error(label, f"is not a text table: it holds binary data (a zero byte on line {line}).",
                          fix=f"give the table itself as {fmt.upper()} text, or as Parquet.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _read_error(label, f"is not UTF-8 text (byte {data[exc.start]:#04x} on line {line}).",
                          fix="save the file with UTF-8 encoding.") from None


_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "true/false", type(None): "null"}


def _jsonl_problem(text: str, label: str) -> ValidationError:
    """The first line of a JSON Lines file that is not a JSON object (only called on failure)."""
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:
            return _read_error(label, f"is not JSON Lines: line {n} is not valid JSON ({str(exc).split(':')[0]}).",
                               fix="write one JSON object per line (JSON Lines), e.g. {\"item\": \"q1\", \"candidate\": \"a\", \"judge\": \"j\", \"score\": 1}.")
        if not isinstance(obj, dict):
            return _read_error(label, f"is not JSON Lines: line {n} is a JSON {_JSON_TYPES.get(type(obj), 'value')}, not an object.",
                               fix="write one JSON object per line (JSON Lines), e.g. {\"item\": \"q1\", \"candidate\": \"a\", \"judge\": \"j\", \"score\": 1}.")
    return _read_error(label, "could not be read as JSON Lines.")


#: A JSON escape of half a UTF-16 surrogate pair (confirmed by :func:`_lone_surrogate`).
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _lone_surrogate(text: str, label: str) -> ValidationError | None:
    """The first line whose JSON text holds half a surrogate pair (``"\\ud800"`` alone): not a
    character, so pandas' reader drops it without a word ("a\\ud800" became "a", one candidate
    with "a") and it cannot be shown or written as UTF-8."""
    def lone(value: Any) -> bool:
        if isinstance(value, str):
            return any("\ud800" <= ch <= "\udfff" for ch in value)
        return isinstance(value, dict) and any(lone(k) or lone(v) for k, v in value.items()) or (
            isinstance(value, list) and any(lone(v) for v in value))

    for n, line in enumerate(text.splitlines(), start=1):
        if not _ESCAPED_SURROGATE.search(line):
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue  # the reader names the line that does not parse
        if not isinstance(record, dict):
            continue
        for key, value in record.items():
            if lone(key) or lone(value):
                where = f"the key {shorten(ascii(key), 60)}" if lone(key) else f"the value of {shorten(key, 60)!r}"
                return _read_error(label, f"line {n}: {where} holds half of a UTF-16 surrogate pair (an escape such as "
                                          "\\ud800 without its other half), which is not a character.",
                                   fix="write the character itself (the file is UTF-8), or both escapes of its pair.")
    return None


def _read_jsonl(text: str, label: str, data: bytes | None = None) -> pd.DataFrame:
    head = text.lstrip()[:1]
    if head == "[":
        # A JSON array is not JSON Lines; an array of records is unambiguous, so read it.
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise _read_error(label, f"is a JSON array that does not parse ({str(exc).split(':')[0]}).") from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise _read_error(label, "is a JSON array, not JSON Lines: give one JSON object per line.",
                              fix="write one JSON object per line, e.g. {\"item\": \"q1\", \"candidate\": \"a\", \"judge\": \"j\", \"score\": 1}.")
        return _records_frame(data)
    if head != "{":
        raise _jsonl_problem(text, label)
    if _ESCAPED_SURROGATE.search(text):
        problem = _lone_surrogate(text, label)
        if problem is not None:
            raise problem
    first_line = text[:text.find("\n") if "\n" in text else len(text)]
    if len(first_line) > 8 * WIDE_HEADER_COLUMNS and first_line.count(":") > WIDE_HEADER_COLUMNS:  # cheap tests first
        return _python_json_lines(text, label)
    fast = _read_jsonl_arrow(text, label, data)
    if fast is not None:
        return fast
    try:
        return pd.read_json(io.StringIO(text), lines=True, dtype=False)
    except MemoryError:
        raise  # read_source says so
    except Exception:  # noqa: BLE001 — Python's reader then, or the line to name
        pass
    # pandas' reader refuses integers past 64 bits ("Value is too big"), which Python's reads exactly
    return _python_json_lines(text, label)


def _python_json_lines(text: str, label: str) -> pd.DataFrame:
    """JSON Lines read by Python's ``json``, line by line (exact integers of any size); a line that is
    not an object is named."""
    records = []
    for line in text.splitlines():
        if line.strip():
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                raise _jsonl_problem(text, label) from None
            if not isinstance(record, dict):
                raise _jsonl_problem(text, label)
            records.append(record)
    return _records_frame(records)


#: pyarrow JSON column types read exactly as pandas reads them (a test holds the two readers equal)
_ARROW_JSON_TYPES = ("string", "int64", "double", "bool")
_LONG_INTEGER = re.compile(rb"\d{19}")


def _repeated_key(text: str, label: str) -> ValidationError | None:
    """The first line whose object names a key twice (JSON readers keep one of the two silently)."""
    def pairs(items):
        seen = set()
        for key, _ in items:
            if key in seen:
                raise KeyError(key)
            seen.add(key)
        return dict(items)

    for n, line in enumerate(text.splitlines(), start=1):
        try:
            json.loads(line, object_pairs_hook=pairs)
        except KeyError as exc:
            return _read_error(label, f"line {n} names the key {shorten(str(exc.args[0]), 80)!r} twice.",
                               fix="keep one value per key in each object.")
        except (ValueError, RecursionError):
            continue
    return None


def _read_jsonl_arrow(text: str, label: str = "upload", data: bytes | None = None) -> pd.DataFrame | None:
    """JSON Lines read by pyarrow's reader (a million rows in 0.6 s, pandas' takes 9 s and 3 times
    the memory), or None where it would not read the text as pandas does: any error (mixed types in
    a column, a number past a double; a key twice in an object is named), a column of nulls, dates (pyarrow
    reads "2024-01-01" as a timestamp), nested values, and integers past int64 (pyarrow makes them
    doubles, losing digits). pandas then reads it and its messages stay as they are. ``data``: the
    bytes ``text`` was decoded from, when the caller has them (not encoded again)."""
    import pyarrow as pa
    import pyarrow.json as pa_json

    try:
        data = text.encode("utf-8") if data is None else data.removeprefix(b"\xef\xbb\xbf")  # the BOM _decode drops
        table = pa_json.read_json(io.BytesIO(data))
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 — pandas reads it, or names the fault
        if "specified twice" in str(exc):
            problem = _repeated_key(text, label)
            if problem is not None:
                raise problem from None
        return None
    types = {str(f.type) for f in table.schema}
    if not types <= set(_ARROW_JSON_TYPES):
        return None
    if "double" in types and _LONG_INTEGER.search(data):
        return None
    if any(pa.types.is_boolean(c.type) and c.null_count for c in table.columns):
        return None  # pandas gives NaN where pyarrow gives None
    if any(pa.types.is_floating(c.type) and not _has_a_number(c) for c in table.columns):
        return None  # only NaN (and nulls): pandas reads a column of nulls (object), pyarrow doubles
    return table.to_pandas()


def _has_a_number(column) -> bool:
    """Whether a floating-point Arrow column holds a value that is neither null nor NaN."""
    import pyarrow.compute as pc

    return bool(pc.any(pc.invert(pc.fill_null(pc.is_nan(column), True))).as_py())


def _read_parquet(data: bytes, label: str, max_bytes: int, max_rows: int) -> pd.DataFrame:
    import pyarrow.parquet as pq

    if data[:4] != b"PAR1":
        raise _read_error(label, "is not a Parquet file (it does not start with PAR1).")
    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        meta = pf.metadata
        rows = meta.num_rows
        size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    except Exception as exc:  # noqa: BLE001
        raise _read_error(label, f"is a damaged Parquet file ({type(exc).__name__}).") from None
    if rows > max_rows:
        raise _read_error(label, f"has {rows:,} rows; at most {max_rows:,} are read.", fix="split the table.")
    if size > max_bytes:
        raise _read_error(label, f"holds {_mb(size)} of data once decompressed; at most {_mb(max_bytes)} are read.",
                          fix="split the table or remove unused columns.")
    try:
        # dictionary-encoded text is counted as decoded: a small file can repeat one huge value
        names = pf.schema_arrow.names
        wide = len(names) > WIDE_HEADER_COLUMNS  # then only the contract's columns are read
        keep = [n for n in names if _contract_column(n)] if wide else None
        text_columns = [f.name for f in pf.schema_arrow if _is_text(f.type) and (keep is None or f.name in keep)]
        table = pq.ParquetFile(io.BytesIO(data), read_dictionary=text_columns).read(columns=keep)
        decoded = _decoded_bytes(table)
        if decoded > max_bytes:
            raise _read_error(label, f"holds {_mb(decoded)} of data once decoded; at most {_mb(max_bytes)} are read.",
                              fix="split the table or shorten its longest values.")
        frame = _dictionaries_decoded(table).to_pandas()
        if wide:
            frame.attrs["columns_in_file"] = list(names)
        return frame
    except (ValidationError, MemoryError):  # read_source words a MemoryError
        raise
    except Exception as exc:  # noqa: BLE001
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise _read_error(label, f"could not be read as Parquet ({first[:200]}).") from None


def _is_text(arrow_type: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or pa.types.is_binary(arrow_type) \
        or pa.types.is_large_binary(arrow_type)


def _dictionaries_decoded(table: Any) -> Any:
    """The table with its dictionary-encoded columns as plain ones (pandas would make them categories)."""
    import pyarrow as pa

    columns = [column.cast(column.type.value_type) if pa.types.is_dictionary(column.type) else column
               for column in table.columns]
    return pa.Table.from_arrays(columns, names=table.column_names)  # duplicate names stay, to be reported


def _decoded_bytes(table: Any) -> int:
    """The table's size with its dictionary-encoded columns decoded (without decoding them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    total = 0
    for column in table.columns:
        for chunk in column.chunks:
            if pa.types.is_dictionary(chunk.type) and _is_text(chunk.type.value_type):
                lengths = pc.binary_length(chunk.dictionary)
                total += int(pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0) + 8 * len(chunk)
            else:
                total += chunk.nbytes
    return total


_DELIMITERS = (",", ";", "\t", "|")


def _delimiter(text: str, default: str) -> str:
    """The separator of the header line: the one that splits it into the most fields (quotes
    respected), the format's own on a tie. Why: spreadsheets in locales with a decimal comma save
    "CSV" with ';', and a tab-separated file is often named .csv; both are read as they are meant."""
    header = next((line for line in text.splitlines() if line.strip()), "")
    try:
        fields = {d: len(next(csv.reader([header], delimiter=d), [])) for d in _DELIMITERS}
    except csv.Error:  # e.g. a field past the csv module's size limit: pandas reports what is wrong
        return default
    best = max(_DELIMITERS, key=lambda d: (fields[d], d == default))
    return best if fields[best] > fields[default] else default


def read_source(source: Any, name: str | None = None, *, max_bytes: int | None = None,
                max_rows: int | None = None) -> pd.DataFrame:
    """Read CSV, TSV, JSON Lines or Parquet (each optionally gzip/bzip2/xz/zip-compressed) from a
    path, bytes or file-like object, or return a copy of a DataFrame.

    Never reads more than ``max_bytes`` (after decompression) or ``max_rows`` rows (defaults:
    :func:`input_limits`). Raises ``ValidationError`` when the input cannot be read, naming why.
    The files of evaluation tools are told by their content and mapped to the contract
    (:mod:`simplex_core.data.importers`: FastChat single-answer judgments, Inspect AI eval logs, a
    Hugging Face ``save_to_disk`` folder), the notes of what was mapped in the frame's ``attrs["import_notes"]``.
    """
    limit_bytes, limit_rows = input_limits()
    max_bytes = max_bytes or limit_bytes
    max_rows = max_rows or limit_rows
    named = None if isinstance(source, pd.DataFrame) else getattr(source, "name", None)  # a frame's .name is a column
    label = str(name or named or (str(source) if isinstance(source, (str, Path)) else "upload"))
    try:  # the files of evaluation tools (told by content) mapped to the contract; notes in attrs
        if isinstance(source, (str, Path)) and Path(source).is_dir():
            return import_frame(read_directory(source, label, max_bytes, max_rows), label)
        return import_frame(_read_source(source, label, max_bytes, max_rows), label)
    except ImportRefused as exc:
        raise ValidationError([Problem(None, exc.message, fix=exc.fix)]) from None


def _read_source(source: Any, label: str, max_bytes: int, max_rows: int) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):
        if len(source) > max_rows:
            raise ValidationError([Problem(None, f"The table has {len(source):,} rows; at most {max_rows:,} are read.", fix="split the table.")])
        return source.copy()
    fmt = table_format(label)
    data = _bounded_bytes(source, label, max_bytes)
    if len(data) > max_bytes:
        raise _read_error(label, f"is larger than {_mb(max_bytes)}, the most this program reads.", fix="split the table or remove unused columns.")
    if sniff_bytes(data):  # an Inspect AI eval log (.eval zip or JSON), read by inspect_ai's own reader
        return read_log_bytes(data, label, max_bytes, max_rows)
    data = _decompress(data, label, max_bytes)
    if not data.strip():
        raise ValidationError([Problem(None, f"{label!r} is empty" + (" (0 bytes)." if not data else " (only blank space)."),
                                       fix="give one row per (item, candidate, judge) with columns item, candidate, judge, score.")])
    try:
        if fmt == "parquet":
            return _read_parquet(data, label, max_bytes, max_rows)
        text = _decode(data, label, fmt)
        lines = text.count("\n") + (not text.endswith("\n"))
        if lines - (fmt != "jsonl") > max_rows:
            raise _read_error(label, f"has {lines - (fmt != 'jsonl'):,} lines; at most {max_rows:,} rows are read.", fix="split the table.")
        if fmt == "jsonl":
            return _read_jsonl(text, label, data)
        return _read_delimited(text, label, fmt)
    except MemoryError:  # within the byte and row caps, yet past this machine's memory once parsed
        raise _read_error(label, "needs more memory than this machine has once read.",
                          fix="split the table, or shorten its longest names.") from None


def _read_delimited(text: str, label: str, fmt: str) -> pd.DataFrame:
    """A CSV/TSV text as a frame of strings; rows and a header that do not line up are named, never
    shifted: pandas reads data rows one field longer than the header by taking their first field as
    the row index, which moves every value one column to the left."""
    sep = _delimiter(text, "\t" if fmt == "tsv" else ",")
    # the header and the first data row, without splitting a million-line text into lines
    first_lines = [line for line in itertools.islice((ln for ln in io.StringIO(text) if ln.strip()), 2)]
    header_line, first_row = (first_lines + ["", ""])[:2]
    header_line, first_row = header_line.rstrip("\r\n"), first_row.rstrip("\r\n")
    try:
        header = next(csv.reader([header_line], delimiter=sep), [])
    except csv.Error:
        header = []
    if len(header) > 1 and first_row and sep not in first_row:
        others = [d for d in _DELIMITERS if d != sep and d in first_row
                  and len(next(csv.reader([first_row], delimiter=d), [])) == len(header)]
        if others:  # e.g. a header typed with ';' over rows exported with ','
            names = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars"}
            raise _read_error(label, f"separates its header with {names.get(sep, repr(sep))} but its rows with "
                                     f"{names.get(others[0], repr(others[0]))}.",
                              fix="use one separator for the whole file.")
    seen: set[str] = set()
    for name in header:  # pandas would rename the second 'score' 'score.1' and the contract ignore it
        if name in seen:
            raise _read_error(label, f"has two columns named {name!r} in its header.",
                              fix="keep one of them, or rename the other.")
        seen.add(name)

    if len(header) > WIDE_HEADER_COLUMNS:
        return _read_wide_delimited(text, label, fmt, sep, header)

    def read(index_col):
        # Identifier columns stay text: "007" and "7" are different items.
        return pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=[""],
                           index_col=index_col)

    try:
        frame = read(None)
        if not isinstance(frame.index, pd.RangeIndex):  # data rows with more fields than the header
            # pandas made the first n fields the index, so the n extra fields are the last n columns
            extra = frame.iloc[:, -frame.index.nlevels:]
            filled = np.flatnonzero(extra.notna().any(axis=1).to_numpy())
            if len(filled):
                row = int(filled[0]) + 1
                value = extra.iloc[row - 1].dropna().iloc[0]
                raise _read_error(
                    label, f"has more fields in its rows than columns in its header: data row {row} has a value "
                           f"({str(value)[:40]!r}) after its {len(frame.columns)}th field, and the header "
                           f"names {len(frame.columns)} columns ({', '.join(map(str, frame.columns))}).",
                    fix="name every column in the header, or remove the extra values (a separator inside a value "
                        "needs the value in double quotes).")
            with warnings.catch_warnings():  # pandas warns of lost data: the extra fields are empty on every row
                warnings.simplefilter("ignore", pd.errors.ParserWarning)
                frame = read(False)  # every row ends in empty fields (trailing separators): nothing to lose
        return frame
    except ValidationError:
        raise
    except Exception as exc:  # noqa: BLE001 — pandas raises many parser types; all mean "not readable"
        raise _parser_error(exc, label, fmt) from None


def _parser_error(exc: Exception, label: str, fmt: str) -> ValidationError:
    """pandas' CSV parser error in the words of this project: which line, and what to do."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    shape = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", first)
    if shape:
        want, line, got = (int(g) for g in shape.groups())
        return _read_error(label, f"has {got} fields on line {line} (data row {line - 1}) where the header and the "
                                 f"rows above have {want}.",
                           fix="give every row as many fields as the header (a separator inside a value needs the "
                               "value in double quotes).")
    quote = re.search(r"EOF inside string starting at row (\d+)", first)
    if quote:  # pandas counts lines from 0
        return _read_error(label, f"has a double quote on line {int(quote.group(1)) + 1} that is never closed: "
                                 "everything after it was read as one value.",
                           fix="close the quote, or remove it (a value with a separator or a quote inside it "
                               "goes in double quotes, its quotes doubled: \"say \"\"hi\"\"\").")
    return _read_error(label, f"could not be read as {fmt.upper()}: {first[:300]}.")


def _mapped_columns(raw: pd.DataFrame, columns: Mapping[str, str], notes: list[str]) -> pd.DataFrame:
    """The file's columns read as the contract's names ``columns`` gives them. A name that is no
    contract column, a file column that is not there (with its close matches) or is given twice are
    problems; a file column that already bears a mapped name is left unused, in a note."""
    import difflib

    known = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
    in_file = [str(c) for c in raw.columns]
    problems: list[Problem] = []
    source: dict[str, Any] = {}
    for want, col in columns.items():
        if want not in known:
            problems.append(Problem(None, f"The column mapping names {want!r}, which is no column of the contract.",
                                    value=want, expected=f"one of {', '.join(known)}", fix="write contract=column pairs, e.g. item=question_id.",
                                    setting="columns"))
            continue
        exact = [c for c in raw.columns if str(c) == col] or [c for c in raw.columns if str(c).strip().lower() == str(col).strip().lower()]
        if not exact:
            close = difflib.get_close_matches(str(col), in_file, n=3, cutoff=0.6)
            problems.append(Problem(None, f"The column mapping reads {want} from {shorten(str(col), 200, say_how_many=True)!r}, "
                                          f"but the file has no such column"
                                          + (f"; close match{'es' if len(close) > 1 else ''}: {', '.join(repr(c) for c in close)}." if close else "."),
                                    value=col, expected=f"one of the file's columns: {_fmt_values(in_file)}",
                                    fix="write the column's name as the file's header has it.", setting="columns"))
            continue
        source[want] = exact[0]
    twice = {c for c in source.values() if list(source.values()).count(c) > 1}
    for c in twice:
        problems.append(Problem(None, f"The column mapping reads {' and '.join(w for w, s in source.items() if s == c)} from the same column {str(c)!r}.",
                                value=str(c), expected="each contract column from a column of its own", fix="map each to its own column.",
                                setting="columns"))
    if problems:
        raise ValidationError(problems)
    used = set(source.values())
    unused = [c for c in raw.columns if c not in used and _contract_column(c) in source]
    out = pd.DataFrame({want: raw[c].to_numpy() for want, c in source.items()})
    for c in raw.columns:  # the rest as before: contract names still read, others ignored
        if c not in used and c not in unused and str(c) not in out.columns:
            out[c] = raw[c].to_numpy()
    out.attrs = dict(raw.attrs)
    renamed = [f"{want} ← {str(c)!r}" for want, c in source.items() if str(c) != want]
    said = (["Columns read as: " + ", ".join(renamed) + "."] if renamed else []) + (
        [f"The file's own {', '.join(repr(str(c)) for c in unused)} column{'s' if len(unused) > 1 else ''} "
         f"{'is' if len(unused) == 1 else 'are'} not used."] if unused else [])
    if said:
        notes.append(" ".join(said))
    return out


def _contract_column(name: Any) -> str | None:
    """The contract's name for a column name (case and surrounding spaces ignored, nothing fuzzier),
    or ``None`` for a column the contract does not know (ignored)."""
    folded = str(name).strip().lower()
    return folded if folded in REQUIRED_COLUMNS + OPTIONAL_COLUMNS else None


#: Header width past which a CSV/TSV is read for the contract's columns only: pandas builds every
#: column it reads (about 50 µs each here), so a header of a million names took 48 s to describe.
WIDE_HEADER_COLUMNS = 1000


def _records_frame(records: list[dict]) -> pd.DataFrame:
    """JSON records as a frame. When one of them has more than :data:`WIDE_HEADER_COLUMNS` keys,
    only the contract's columns are built (pandas' JSON reader took 55 s over a million keys), and
    ``attrs["columns_in_file"]`` keeps every key, for the messages."""
    if not any(len(r) > WIDE_HEADER_COLUMNS for r in records):
        return pd.DataFrame.from_records(records)
    names = list(dict.fromkeys(k for r in records for k in r))
    keep = [k for k in names if _contract_column(k)]
    frame = pd.DataFrame.from_records([{k: r[k] for k in keep if k in r} for r in records], columns=keep)
    frame.attrs["columns_in_file"] = names
    return frame


def _read_wide_delimited(text: str, label: str, fmt: str, sep: str, header: list[str]) -> pd.DataFrame:
    """A CSV/TSV with a very wide header: only the columns the contract knows (by folded name) are
    built; the frame's ``attrs["columns_in_file"]`` keeps every name, for the messages. Rows longer
    than the header are still named (pandas would drop their extra fields without a word here)."""
    keep = [i for i, n in enumerate(header) if _contract_column(n)]
    row = 0
    for fields in csv.reader(io.StringIO(text), delimiter=sep):
        if not fields or not any(f.strip() for f in fields):
            continue
        if row and len(fields) > len(header) and any(f.strip() for f in fields[len(header):]):
            value = next(f for f in fields[len(header):] if f.strip())
            raise _read_error(label, f"has more fields in its rows than columns in its header: data row {row} has a "
                                     f"value ({str(value)[:40]!r}) after its {len(header):,}th field.",
                              fix="name every column in the header, or remove the extra values (a separator inside a "
                                  "value needs the value in double quotes).")
        row += 1
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=[""],
                            usecols=keep, index_col=False)
    except Exception as exc:  # noqa: BLE001 — pandas raises many parser types; all mean "not readable"
        raise _parser_error(exc, label, fmt) from None
    frame.attrs["columns_in_file"] = list(header)
    return frame


def load_families(spec: Mapping[str, str] | str | Path | None) -> dict[str, str]:
    """A flat {model name: family} mapping from a dict, a JSON file (a ``Path``) or JSON text.

    A ``str`` is always JSON text, never a path: text typed into the app must not read the
    server's files. The command line passes its ``--families FILE`` as a ``Path``.
    """
    if spec is None:
        return {}
    fix = 'write a flat JSON object such as {"gpt-4o": "openai", "claude-3": "anthropic"}.'
    if isinstance(spec, Mapping):
        data: Any = dict(spec)
    else:
        if isinstance(spec, Path):
            if not spec.is_file():
                raise ValidationError([Problem(None, f"No families file at {str(spec)!r}." if not spec.exists()
                                               else f"The families path {str(spec)!r} is not a file.", fix="check the path of the families file.",
                                               setting="families")])
            raw = _bounded_bytes(spec, str(spec), 10 * 1024 * 1024)
            where = f"The families file {str(spec)!r}"
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise ValidationError([Problem(None, f"{where} is not UTF-8 text.", fix=fix)]) from None
        else:
            text, where = str(spec), "The families text"
        if not text.strip():
            raise ValidationError([Problem(None, f"{where} is empty.", fix=fix)])
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # ValueError: Python's cap on an integer's digits, too
            detail = (f"{exc.msg} at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError)
                      else "nested too deeply" if isinstance(exc, RecursionError)
                      else "a number with more digits than a number can have")
            raise ValidationError([Problem(None, f"{where} is not valid JSON ({detail}).", fix=fix)]) from None
    bad = [k for k, v in data.items() if not isinstance(v, str) or not str(k)] if isinstance(data, dict) else None
    if not isinstance(data, dict) or bad:
        raise ValidationError([Problem(None, "The families must be a flat JSON object mapping model name to family name"
                                       + (f"; these entries are not text: {_fmt_values(bad)}." if bad else "."),
                                       fix='e.g. {"gpt-4o": "openai", "claude-3": "anthropic"}.')])
    return {str(k): str(v) for k, v in data.items()}


# -- validation ------------------------------------------------------------------------------------

def _distinct(values: Iterable[Any]) -> tuple:
    """The distinct values of a selection, in order of appearance (a Problem's ``value``)."""
    return tuple(dict.fromkeys(v.item() if isinstance(v, np.generic) else v for v in values))


#: A level read from the data that so few rows use, in a table of at least RARE_LEVEL_TABLE scores,
#: is named in a note: a typo makes a level of its own and changes the scale of the whole fit.
RARE_LEVEL_ROWS = 2
RARE_LEVEL_TABLE = 100


def _odd_levels(score: pd.Series, levels: Sequence[float]) -> list[str]:
    """Notes on levels read from the data that look like typos: used by at most RARE_LEVEL_ROWS rows,
    or the only fractional levels among whole ones."""
    scored = score.dropna()
    if len(scored) < RARE_LEVEL_TABLE:
        return []
    whole = [v for v in levels if float(v).is_integer()]
    odd = {v for v in levels if (scored == v).sum() <= RARE_LEVEL_ROWS}
    if len(whole) >= 2 and len(whole) < len(levels) and len(levels) - len(whole) <= RARE_LEVEL_ROWS:
        odd |= {v for v in levels if not float(v).is_integer()}
    if not odd:
        return []
    parts = []
    for v in sorted(odd):
        rows = _rows(score == v)
        parts.append(f"{_num(v)} ({len(rows)} row{'s' if len(rows) != 1 else ''}: {_fmt_rows(rows)})"
                     if len(rows) <= _MAX_LISTED else f"{_num(v)} ({len(rows)} rows)")
    return [f"The scale was read from the scores as {', '.join(_num(v) for v in levels)}; level{'s' if len(odd) > 1 else ''} "
            f"{'; '.join(parts)} look{' like typos' if len(odd) > 1 else 's like a typo'}. Every level read becomes part of the scale "
            "the model fits: correct those cells, or declare the scale's levels, if they are not meant."]


def _rows(mask: pd.Series | np.ndarray, index: pd.Index | None = None) -> tuple[int, ...]:
    return tuple(int(i) + 1 for i in np.flatnonzero(np.asarray(mask)))


_NOT_A_VALUE = (dict, list, tuple, set, frozenset, np.ndarray, bytes, bytearray)


def _non_scalar(series: pd.Series) -> np.ndarray | None:
    """Mask of cells that hold a list, an object or bytes instead of one value (None: there are none)."""
    if series.dtype != object:
        return None
    if pd.api.types.infer_dtype(series, skipna=True) in ("string", "integer", "floating", "boolean", "mixed-integer-float", "empty"):
        return None
    mask = np.fromiter((isinstance(v, _NOT_A_VALUE) for v in series.to_numpy()), dtype=bool, count=len(series))
    return mask if mask.any() else None


def _decimal_commas(values: pd.Series) -> bool:
    """Whether unreadable numbers look written with a decimal comma ("3,5"), as spreadsheets in many
    locales save them (with ';' between columns, which :func:`_delimiter` reads)."""
    return bool(values.astype(str).str.fullmatch(r"\s*[-+]?\d+,\d+\s*").any())


def _to_number(series: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Numeric version of a column and a mask of entries that are present but not numbers."""
    if pd.api.types.is_bool_dtype(series.dtype) or pd.api.types.is_numeric_dtype(series.dtype):
        return series.astype(float), pd.Series(False, index=series.index)
    # Parse each distinct cell once: a score column has a handful of distinct values.
    codes, uniques = pd.factorize(series.to_numpy(dtype=object))
    text = pd.Series(uniques, dtype=object).map(_text).astype(str).str.strip()
    # True/False verdict columns are common in judge outputs; read them as 1/0.
    mapped = text.str.lower().map({"true": "1", "false": "0"}).fillna(text)
    numeric_u = pd.to_numeric(mapped, errors="coerce").astype(float).to_numpy()
    present_u = (text != "").to_numpy()
    numeric = np.where(codes >= 0, numeric_u[codes] if len(uniques) else np.nan, np.nan)
    present = (codes >= 0) & (present_u[codes] if len(uniques) else False)
    numeric = np.where(present, numeric, np.nan)
    bad = present & np.isnan(numeric)
    return pd.Series(numeric, index=series.index), pd.Series(bad, index=series.index)


def _numbers_merged(values: pd.Series, most: int = 10_000) -> tuple[str, str, float] | None:
    """Two different numbers of a column that are one number once read as floating point (digits
    past the 15th or 16th, e.g. 12345678901234567890123 and …124), with the number they become, or
    a whole number that floating point does not hold exactly (the second text then empty); only for
    a column of at most ``most`` distinct values (more are refused as levels anyway)."""
    from decimal import Decimal, InvalidOperation

    uniques = pd.unique(values.dropna().to_numpy(dtype=object))
    if len(uniques) > most:
        return None
    seen: dict[float, Decimal] = {}
    too_long: tuple[str, str, float] | None = None
    for v in uniques:
        if isinstance(v, (bool, np.bool_)):
            continue
        try:
            exact = Decimal(int(v)) if isinstance(v, (int, np.integer)) else Decimal(str(v).strip())
            as_read = float(exact)
        except (InvalidOperation, ValueError, OverflowError):
            continue
        if not math.isfinite(as_read):
            continue
        other = seen.setdefault(as_read, exact)
        if other != exact:  # the fuller answer: two numbers become one
            return str(other), str(exact), as_read
        if too_long is None and exact == exact.to_integral_value() and Decimal(as_read) != exact:
            too_long = str(exact), "", as_read  # a whole number with more digits than a float holds
    return too_long


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, (int, np.integer)):  # exactly: through a float, ids past 2^53 lost digits and merged
        return str(int(v))
    if isinstance(v, (float, np.number)):
        return _num(v)
    return str(v)


def _as_names(series: pd.Series, col: str, notes: list[str]) -> tuple[pd.Series, np.ndarray]:
    """Identifiers as text without surrounding spaces, and the mask of blank cells.

    Both normalisations can make two different cells one name (' a' and 'a'; JSON 1, "1" and
    1.0), so each is reported in ``notes``. Work is per distinct value, not per row."""
    values = series.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(series, skipna=True) == "string":
        codes, uniques = pd.factorize(values)
        raw_shown = list(uniques)
    else:
        # Keep 1, 1.0, True and "1" apart (they hash alike), to see which ones become one name.
        keys = np.fromiter((f"{type(v).__name__}:{v!r}" for v in values), dtype=object, count=len(values))
        codes, key_uniques = pd.factorize(keys)
        first = np.full(len(key_uniques), -1)
        first[codes[::-1]] = np.arange(len(codes))[::-1]
        raw_shown = [values[i] for i in first]
    isna = [v is None or (isinstance(v, float) and v != v) or v is pd.NA for v in raw_shown]
    converted = ["" if na else _text(v) for v, na in zip(raw_shown, isna)]
    final = [c.strip() for c in converted]
    spaced = [(r, f) for r, c, f, na in zip(raw_shown, converted, final, isna) if not na and c != f and f]
    if spaced:
        r, f = spaced[0]
        notes.append(f"{len(spaced)} {col} name{'s had' if len(spaced) > 1 else ' had'} spaces around {'them' if len(spaced) > 1 else 'it'} removed (e.g. {r!r} → {f!r}).")
    groups: dict[str, list[Any]] = {}
    for r, f in zip(raw_shown, final):
        if f:
            groups.setdefault(f, []).append(r)
    merged = [(f, rs) for f, rs in groups.items() if len(rs) > 1]
    if merged:
        f, rs = merged[0]
        notes.append(f"{len(merged)} {col} name{'s' if len(merged) > 1 else ''} came from several different cells that read as the "
                     f"same name (e.g. {', '.join(repr(x) for x in rs[:_MAX_LISTED])} all read as {f!r}) and count as one {col}.")
    final_arr = np.asarray(final + [""], dtype=object)  # the extra "" is where code -1 (missing) points
    blank = (final_arr == "")[codes]
    if not spaced and len(final) and all(isinstance(r, str) for r in raw_shown) and pd.api.types.is_string_dtype(series.dtype):
        return series, blank  # already clean text: keep pandas' compact string column
    return pd.Series(final_arr[codes], index=series.index, dtype=object), blank


def _to_bool(series: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Boolean version of a gold column (blank = False) and a mask of entries that are not booleans."""
    text = series.map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)).str.strip().str.lower()
    value = text.isin(GOLD_TRUE)
    bad = ~(value | text.isin(GOLD_FALSE) | (text == ""))
    return value.astype(bool), bad


def _two_level_suggestion(distinct: Sequence[float]) -> tuple[tuple[str, str], ...]:
    """A scale for scores that all have one value: 0/1 for a 0 or a 1, 1..5 for a whole number in it."""
    if len(distinct) != 1:
        return ()
    v = float(distinct[0])
    if v in (0.0, 1.0):
        return (("levels", "0,1"),)
    if v.is_integer() and 1 <= v <= 5:
        return (("levels", "1,2,3,4,5"),)
    return ()


def _off_scale_suggestion(scale: Scale, off: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    """The declared levels widened by the scores that are not on them (labels kept), when few."""
    extra = sorted({float(v) for v in off if isinstance(v, (int, float, np.number)) and math.isfinite(float(v))})
    if not extra or scale.n_levels + len(extra) > 100:
        return ()
    labels = dict(zip(scale.values, scale.labels))
    labels.update({v: _num(v) for v in extra})
    values = sorted(labels)
    out = [("levels", levels_text(values, [labels[v] for v in values]))]
    if not scale.is_square:
        out.append(("true_levels", levels_text(scale.true_values)))
    return tuple(out)


def _truth_range_suggestion(scale: Scale, low: float, high: float) -> tuple[tuple[str, str], ...]:
    """The declaration that makes a truth from ``low`` to ``high`` fit ``scale``: more true levels
    when the truth stays within the observed levels, else observed levels reaching it (and, on a
    non-square scale, true levels reaching it too)."""
    values = scale.values
    if low >= values[0] - 1e-9 and high <= values[-1] + 1e-9:
        below = max(v for v in values if v <= low + 1e-9)
        above = min(v for v in values if v >= high - 1e-9)
        true = sorted(set(scale.true_values) | {below, above})
        return (("true_levels", levels_text(true)),)
    wider, labels = covering_levels(scale, low, high)
    out = [("levels", levels_text(wider, labels))]
    if not scale.is_square:
        below = max(v for v in wider if v <= low + 1e-9)
        above = min(v for v in wider if v >= high - 1e-9)
        out.append(("true_levels", levels_text(sorted(set(scale.true_values) | {below, above}))))
    return tuple(out)


def load_table(
    source: Any,
    *,
    scale: Scale | None = None,
    families: Mapping[str, str] | str | Path | None = None,
    criterion: str | None = None,
    name: str | None = None,
    note_unused_families: bool = True,
    true_levels: Sequence[float] | None = None,
    columns: Mapping[str, str] | None = None,
) -> JudgmentTable:
    """Read and validate a judgment table.

    Parameters
    ----------
    source
        A path (CSV, CSV.gz, TSV, JSONL, Parquet), bytes, an uploaded file object or a DataFrame.
    scale
        The declared scale; without it the observed levels are the sorted distinct scores.
    true_levels
        True level values for a scale read from the scores (``scale`` not given): the command
        line's ``--true-levels`` alone.
    columns
        {contract name: the file's column}, e.g. ``{"item": "question_id", "score": "rating"}``: the
        file's columns read as the contract's (:func:`simplex_core.data.column_mapping.parse_columns` reads
        the command line's ``--columns``); said in a note.
    families
        {model: family} mapping, a JSON file (``Path``) or JSON text (``str``, never read as a
        path); overrides family columns in the table.
    criterion
        When the table has a ``criterion`` column, the criterion to keep (required if it has several).
    note_unused_families
        Note family names that are no model of this table (a user's spelling slip); False for a
        mapping that covers more tables than this one (a built-in dataset's, shared by its criteria).

    Raises
    ------
    ValidationError
        With every problem found, each naming the column, rows, value, expectation and fix.
        Inputs past :func:`input_limits` are refused the same way.
    """
    label = name or (str(source) if isinstance(source, (str, Path)) else getattr(source, "name", "table"))
    try:
        return _load_table(source, label, scale=scale, families=families, criterion=criterion, name=name,
                           note_unused_families=note_unused_families, true_levels=true_levels, columns=columns)
    except MemoryError:  # past the byte and row caps, e.g. values that decode far larger than stored
        raise ValidationError([Problem(None, f"{shorten(label, 200, say_how_many=True)!r} needs more memory than this machine has once its "
                                             "values are decoded.", fix="split the table, or shorten its longest names.")]) from None


def _load_table(source: Any, label: str, *, scale: Scale | None, families: Mapping[str, str] | str | Path | None,
                criterion: str | None, name: str | None, note_unused_families: bool,
                true_levels: Sequence[float] | None = None, columns: Mapping[str, str] | None = None) -> JudgmentTable:
    raw = read_source(source, name=name)
    problems: list[Problem] = []
    notes: list[str] = list(raw.attrs.get(NOTES_ATTR, ()))

    if raw.shape[1] == 0 or len(raw) == 0:
        raise ValidationError([Problem(None, f"{label!r} is empty: it has column names but no data rows." if raw.shape[1] else f"{label!r} is empty.",
                                       fix="give one row per (item, candidate, judge) with columns item, candidate, judge, score.")])

    if columns:
        raw = _mapped_columns(raw, columns, notes)

    # Column names: tolerate case and surrounding spaces, nothing fuzzier; ignore other columns.
    by_name: dict[str, list[Any]] = {}
    for c in raw.columns:
        folded = _contract_column(c)
        if folded:
            by_name.setdefault(folded, []).append(c)
    clashes = {n: cs for n, cs in by_name.items() if len(cs) > 1}
    if clashes:
        raise ValidationError([Problem(n, f"{len(cs)} columns are named {n!r} once case and spaces are ignored: "
                                          f"{', '.join(repr(str(c)) for c in cs)}.",
                                       expected=f"one {n} column", fix="rename or delete the extra column, or say which one is meant.",
                                       setting="columns", suggestion=(("columns", f"{n}={cs[0]}"),)) for n, cs in clashes.items()])
    missing = [c for c in REQUIRED_COLUMNS if c not in by_name]
    if missing:
        found = [str(c) for c in raw.attrs.get("columns_in_file", raw.columns)]
        # a suggestion, never a silent rename: 'grader' may be a judge or something else entirely
        hints, guessed = [], {}
        for want in missing:
            like = [c for c in found if c.strip().lower().replace(" ", "_").replace("-", "_") in COLUMN_HINTS[want]
                    and not _contract_column(c) and c not in guessed.values()]
            if like:
                guessed[want] = like[0]
                hints.append(f"{like[0]!r} looks like the {want} column: if it is, rename it {want!r}, or read it as {want}.")
        # every missing column guessed: the mapping that would read the file, offered, never applied unasked
        offer = ",".join(f"{want}={col}" for want, col in guessed.items()) if len(guessed) == len(missing) else ""
        raise ValidationError([Problem(
            None, f"Missing required column{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)}; "
                  f"found {_fmt_values(found)}." + "".join(" " + h for h in hints),
            expected="columns item, candidate, judge, score (optional: true_score, candidate_family, judge_family, criterion)",
            fix="rename your columns to these names (the app's Data page offers a template CSV), or say which column is which.",
            setting="columns", suggestion=(("columns", offer),) if offer and "," not in "".join(guessed.values()) else ())])
    changed = [f"{str(cs[0])!r}→{n!r}" for n, cs in by_name.items() if cs[0] != n]
    if changed:
        notes.append(f"Column names normalised: {', '.join(changed)}.")
    raw = pd.DataFrame({n: raw[cs[0]].to_numpy() for n, cs in by_name.items()})

    # Every cell must be one value: JSON objects/arrays, Parquet lists and bytes are not.
    for col in raw.columns:
        mask = _non_scalar(raw[col])
        if mask is not None:
            problems.append(Problem(col, f"{int(mask.sum())} cell{'s' if mask.sum() > 1 else ''} in {_fmt_rows(_rows(mask))} "
                                         f"hold{'s' if mask.sum() == 1 else ''} a list or an object, not a single value "
                                         f"(e.g. {str(raw[col].iloc[int(np.argmax(mask))])[:60]!r}).",
                                    rows=_rows(mask), expected="text or a number in every cell", fix="flatten those cells to one value each."))
    if problems:
        raise ValidationError(problems)

    # Criterion filter.
    if "criterion" in raw.columns:
        crit_col = raw["criterion"].map(_text) if raw["criterion"].dtype == object else raw["criterion"].astype(str)
        crits = [c for c in pd.unique(crit_col)]
        if criterion is None and len(crits) > 1:
            raise ValidationError([Problem("criterion", f"the table holds {len(crits)} criteria ({_fmt_values(crits)}).",
                                           value=tuple(crits), expected="one criterion", fix="choose one of them.",
                                           setting="criterion")])
        if criterion is not None:
            if criterion not in crits:
                raise ValidationError([Problem("criterion", f"no rows for criterion {criterion!r}; the table has {_fmt_values(crits)}.",
                                               value=criterion, expected=f"one of {_fmt_values(crits)}",
                                               fix="pick one of those criteria.", setting="criterion")])
            raw = raw[(crit_col == criterion).to_numpy()].reset_index(drop=True)
        else:
            criterion = crits[0]
    elif criterion is not None:
        raise ValidationError([Problem(None, f"Criterion {criterion!r} was asked for but the table has no 'criterion' column.",
                                       value=criterion, fix="ask for no criterion, or add a criterion column.",
                                       setting="criterion")])

    # Identifiers: present, text.
    for col in ("item", "candidate", "judge"):
        raw[col], blank = _as_names(raw[col], col, notes)
        if blank.any():
            problems.append(Problem(col, f"{blank.sum()} blank value{'s' if blank.sum() > 1 else ''} in {_fmt_rows(_rows(blank))}.",
                                    rows=_rows(blank), expected=f"{'an' if col == 'item' else 'a'} {col} name on every row",
                                    fix=f"fill in the {col} or delete those rows."))
    n_cand, n_judge = raw["candidate"].nunique(), raw["judge"].nunique()
    if n_cand * n_judge > MAX_PAIRS:
        raise ValidationError(problems + [Problem(None, f"{n_cand:,} candidates × {n_judge:,} judges = {n_cand * n_judge:,} (judge, candidate) pairs; "
                                                        f"at most {MAX_PAIRS:,} are supported.",
                                                  fix="check that the candidate and judge columns hold model names (not answers or items).")])

    # Scores.
    score, score_bad = _to_number(raw["score"])
    if score_bad.any():
        problems.append(Problem("score", f"non-numeric value{'s' if score_bad.sum() > 1 else ''} {_fmt_values(raw.loc[score_bad, 'score'])} in {_fmt_rows(_rows(score_bad))}.",
                                rows=_rows(score_bad), value=_distinct(raw.loc[score_bad, "score"]),
                                expected="a number that is one of the scale's levels",
                                fix=("write decimals with a point (3.5, not 3,5)." if _decimal_commas(raw.loc[score_bad, "score"]) else
                                     f"replace {'them' if score_bad.sum() > 1 else 'it'} with {'level values' if score_bad.sum() > 1 else 'a level value'}, "
                                     "or leave the cell empty for a missing judgment. Scores are numbers: to keep words as "
                                     "level names, write each as its number and name the levels (e.g. 1:bad, 2:ok, 3:good).")))
    infinite = np.isinf(score.to_numpy())
    if infinite.any():
        problems.append(Problem("score", f"value{'s' if infinite.sum() > 1 else ''} {_fmt_values(raw.loc[infinite, 'score'].astype(str))} in {_fmt_rows(_rows(infinite))} "
                                         f"{'are' if infinite.sum() > 1 else 'is'} not a finite number.",
                                rows=_rows(infinite), value=_distinct(raw.loc[infinite, "score"]),
                                expected="a number that is one of the scale's levels", fix="correct those cells."))
        score = score.where(~infinite)
    merged = _numbers_merged(raw["score"])
    if merged is not None:
        first, second, as_read = merged
        at = (score == as_read).to_numpy()
        problems.append(Problem("score", (f"the scores {first} and {second} ({_fmt_rows(_rows(at))}) are different numbers, but the same one once read "
                                          f"({as_read!r}): a score keeps about 15 significant digits, so their rows would "
                                          "count as one level.") if second else
                                         (f"the score {first} ({_fmt_rows(_rows(at))}) has more digits than a score keeps "
                                          f"(about 15 significant digits): it would be read as {int(as_read)}."),
                                rows=_rows(at), value=first, expected="scores that are the scale's levels (e.g. 1 to 5)",
                                fix="write the levels with fewer digits (e.g. number them 1, 2, 3), and name them if need be."))
    if score.notna().sum() == 0 and not score_bad.any() and not infinite.any():
        problems.append(Problem("score", f"every score is blank ({len(score):,} row{'s' if len(score) != 1 else ''}): there is nothing to rank.",
                                expected="a score on most rows", fix="fill in the score column (a blank cell is a missing judgment)."))
    elif scale is None:
        distinct = sorted(pd.unique(score.dropna()).tolist())
        if len(distinct) > MAX_IMPLICIT_LEVELS:
            problems.append(Problem("score", f"{len(distinct)} distinct values ({_fmt_values(distinct)}): too many to be scoring levels.",
                                    value=tuple(distinct), expected=f"at most {MAX_IMPLICIT_LEVELS} levels, e.g. integers 1..5",
                                    fix="round or map the scores to levels, or declare the scale's levels.", setting="levels",
                                    suggestion=(("levels", levels_text(distinct)),) if len(distinct) <= 100 else ()))
        elif len(distinct) < 2 and not problems:
            problems.append(Problem("score", f"only {len(distinct)} distinct value{'s' if len(distinct) != 1 else ''} ({_fmt_values(distinct)}).",
                                    value=tuple(distinct), expected="at least 2 levels",
                                    fix="declare the scale's levels (e.g. 0:incorrect, 1:correct).", setting="levels",
                                    suggestion=_two_level_suggestion(distinct)))
        elif len(distinct) >= 2:
            try:
                scale = Scale(tuple(distinct), (), tuple(true_levels or ()))
            except ScaleError as exc:
                problems.append(Problem("score", str(exc), setting=exc.setting or "levels", suggestion=exc.suggestion))
            else:
                notes.extend(_odd_levels(score, distinct))
    widened = scale  # the declared scale with the scores off it: what a truth's suggestion starts from
    if scale is not None:
        off = ~(score.isin(scale.values) | score.isna())
        if off.any():
            offer = _off_scale_suggestion(scale, _distinct(score[off]))
            if offer:
                values, labels = parse_levels(offer[0][1])
                widened = Scale(values, labels, () if scale.is_square else scale.true_values)
            problems.append(Problem("score", f"value{'s' if off.sum() > 1 else ''} {_fmt_values(score[off])} in {_fmt_rows(_rows(off))} {'are' if off.sum() > 1 else 'is'} not on the scale.",
                                    rows=_rows(off), value=_distinct(score[off]), expected=f"one of {', '.join(_num(v) for v in scale.values)}",
                                    fix="correct the scores, or declare the scale's levels (e.g. 1,2,3,4,5).", setting="levels",
                                    suggestion=offer))
    raw["score"] = score

    # Ground truth.
    has_true = "true_score" in raw.columns
    if has_true:
        ts, ts_bad = _to_number(raw["true_score"])
        if ts_bad.any():
            problems.append(Problem("true_score", f"non-numeric value{'s' if ts_bad.sum() > 1 else ''} {_fmt_values(raw.loc[ts_bad, 'true_score'])} in {_fmt_rows(_rows(ts_bad))}.",
                                    rows=_rows(ts_bad), value=_distinct(raw.loc[ts_bad, "true_score"]),
                                    expected="a number on the true scale's range (a mean of raters is fine)", fix="correct or empty those cells."))
        ts_inf = np.isinf(ts.to_numpy())
        if ts_inf.any():
            problems.append(Problem("true_score", f"value{'s' if ts_inf.sum() > 1 else ''} {_fmt_values(raw.loc[ts_inf, 'true_score'].astype(str))} in {_fmt_rows(_rows(ts_inf))} "
                                                  f"{'are' if ts_inf.sum() > 1 else 'is'} not a finite number.",
                                    rows=_rows(ts_inf), value=_distinct(raw.loc[ts_inf, "true_score"]), fix="correct or empty those cells."))
            ts = ts.where(~ts_inf)
        raw["true_score"] = ts
        if scale is not None:
            lo, hi = scale.true_values[0], scale.true_values[-1]
            out = ts.notna() & ((ts < lo - 1e-9) | (ts > hi + 1e-9))
            if out.any():
                suggestion = _truth_range_suggestion(widened, float(ts.min()), float(ts.max()))
                problems.append(Problem("true_score", f"value{'s' if out.sum() > 1 else ''} {_fmt_values(ts[out])} in {_fmt_rows(_rows(out))} outside the true scale's range.",
                                        rows=_rows(out), value=_distinct(ts[out]), expected=f"a number from {_num(lo)} to {_num(hi)}",
                                        fix=("rescale the ground truth to the true levels, or declare the true levels that reach it."
                                             if suggestion[0][0] == "true_levels" else
                                             "rescale the ground truth to the scale, or declare the scale's levels down and up to the truth's "
                                             "(a level no judge gave is still a level)."),
                                        setting=suggestion[0][0], suggestion=suggestion))
        if ts.isna().all() and not ts_bad.any() and not ts_inf.any():
            notes.append("The true_score column is empty: the table has no ground truth.")
            raw = raw.drop(columns=["true_score"])
            has_true = False

    # Gold labels: answers whose true score the model may take as observed.
    has_gold = "gold" in raw.columns
    if has_gold:
        gold, gold_bad = _to_bool(raw["gold"])
        if gold_bad.any():
            many = raw.loc[gold_bad, "gold"].nunique() > 1
            problems.append(Problem("gold", f"value{'s' if many else ''} {_fmt_values(raw.loc[gold_bad, 'gold'])} in {_fmt_rows(_rows(gold_bad, raw.index))} {'are' if many else 'is'} not true or false.",
                                    rows=_rows(gold_bad, raw.index), value=_distinct(raw.loc[gold_bad, "gold"]),
                                    expected="true/false (or 1/0, yes/no; a blank cell means not gold)", fix="write true for answers whose true_score is a known label, false otherwise."))
        raw["gold"] = gold
        if gold.any():
            truth_of_answer = (raw.groupby(["item", "candidate"], sort=False)["true_score"].transform("max")
                               if has_true else pd.Series(np.nan, index=raw.index))
            no_truth = gold & truth_of_answer.isna()
            if no_truth.any():
                problems.append(Problem("gold", f"{_fmt_rows(_rows(no_truth, raw.index))} {'are' if no_truth.sum() > 1 else 'is'} marked gold but the answer has no true_score.",
                                        rows=_rows(no_truth, raw.index), expected="a true_score on every gold answer", fix="add the true_score of those answers, or mark them false."))
            if has_true and scale is not None:
                levels = np.asarray(scale.true_values, dtype=float)
                ts_gold = raw["true_score"]
                off = gold & ts_gold.notna() & ~ts_gold.map(lambda v: bool(np.isclose(v, levels, atol=1e-9).any()) if pd.notna(v) else True)
                if off.any():
                    many = ts_gold[off].nunique() > 1
                    problems.append(Problem("gold", f"gold true score{'s' if many else ''} {_fmt_values(ts_gold[off])} in {_fmt_rows(_rows(off, raw.index))} {'are' if many else 'is'} not a true level of the scale.",
                                            rows=_rows(off, raw.index), value=_distinct(ts_gold[off]),
                                            expected=f"one of the true levels {', '.join(_num(v) for v in levels)}",
                                            fix="a gold label is one true level (round a mean of raters to a level first), or mark the answer false."))
                raw.loc[gold & ~off & ts_gold.notna(), "true_score"] = ts_gold[gold & ~off & ts_gold.notna()].map(
                    lambda v: float(levels[np.argmin(np.abs(levels - v))]))
            mixed = raw.groupby(["item", "candidate"], sort=False)["gold"].agg(["min", "max"])
            mixed = mixed[mixed["min"] != mixed["max"]]
            if len(mixed):
                pairs = [f"({i!r}, {c!r})" for i, c in mixed.index[:_MAX_LISTED]]
                problems.append(Problem("gold", f"differs across judges for {len(mixed)} (item, candidate) answer{'s' if len(mixed) > 1 else ''}: {', '.join(pairs)}{' …' if len(mixed) > _MAX_LISTED else ''}.",
                                        expected="the same gold flag on every row of an answer", fix="mark every row of a gold answer true."))
        else:
            has_gold = False

    # Duplicated (item, candidate, judge) rows: repeats of one judgment count once, conflicts are errors.
    key = ["item", "candidate", "judge"]
    dup_mask = raw.duplicated(key, keep=False).to_numpy()
    drop_idx: np.ndarray = np.zeros(0, dtype=np.int64)
    if dup_mask.any():
        sub = raw.loc[dup_mask]
        group = sub.groupby(key, sort=False, dropna=False).ngroup().to_numpy()  # blank names: reported above
        values = ["score"] + (["true_score"] if has_true else [])
        per_value = sub[values].groupby(group).nunique(dropna=False)
        conflict = per_value.max(axis=1).to_numpy()[group] > 1
        if conflict.any():
            # name what differs: a true_score that differs between repeats of one judgment is not "different scores"
            what = " and ".join(w for v, w in (("score", "scores"), ("true_score", "true_score values"))
                                if v in per_value and (per_value[v].to_numpy()[group][conflict] > 1).any())
            problems.append(Problem(None, f"Conflicting duplicate rows: the same (item, candidate, judge) has different {what} in {_fmt_rows(sub.index[conflict] + 1)}.",
                                    rows=tuple(int(r) + 1 for r in sub.index[conflict]), expected="one row per (item, candidate, judge)",
                                    fix="keep one row per (item, candidate, judge) (e.g. average repeated samples and round to a level first)."))
        repeat = ~conflict & sub.duplicated(key, keep="first").to_numpy()
        drop_idx = sub.index[repeat].to_numpy()
        if len(drop_idx):
            notes.append(f"{len(drop_idx)} exact duplicate row{'s' if len(drop_idx) > 1 else ''} (same item, candidate, judge and score) counted once: {_fmt_rows(drop_idx + 1)}.")

    # true_score must agree across judges of one (item, candidate).
    if has_true:
        per_answer = raw.dropna(subset=["true_score"]).groupby(["item", "candidate"], sort=False)["true_score"].agg(["min", "max"])
        differing = per_answer[(per_answer["max"] - per_answer["min"]).abs() > 1e-9]
        if len(differing):
            pairs = [f"({i!r}, {c!r})" for i, c in differing.index[:_MAX_LISTED]]
            problems.append(Problem("true_score", f"differs between the rows of {len(differing)} (item, candidate) pair{'s' if len(differing) > 1 else ''}: {', '.join(pairs)}{' …' if len(differing) > _MAX_LISTED else ''}.",
                                    expected="the same ground truth for every judge of an answer", fix="give each (item, candidate) one true_score."))

    # Families (one table of distinct (model, family) pairs: small, whatever the number of rows).
    fam: dict[str, str] = {}
    for col, who in (("candidate_family", "candidate"), ("judge_family", "judge")):
        if col in raw.columns:
            sub = raw[[who, col]].drop_duplicates()
            sub = pd.DataFrame({who: sub[who].to_numpy(), col: [None if pd.isna(v) else _text(v).strip() for v in sub[col]]}).dropna()
            sub = sub[sub[col] != ""].drop_duplicates()
            several = sub[sub.duplicated(who, keep=False)]
            split = set(several[who])
            for model, vals in list(several.groupby(who, sort=False)[col])[:_MAX_LISTED]:
                problems.append(Problem(col, f"{who} {model!r} has several families ({_fmt_values(vals)}).", expected="one family per model", fix="make the family the same on every row of that model."))
            for model, value in zip(sub[who], sub[col]):
                prev = fam.get(model)
                if prev is not None and prev != value and model not in split:
                    problems.append(Problem(col, f"{model!r} is in family {prev!r} as one role and {value!r} as the other.", expected="one family per model", fix="use the same family in candidate_family and judge_family."))
                fam.setdefault(model, value)
    if families is not None:
        try:
            given = load_families(families)
        except ValidationError as exc:
            problems.extend(exc.problems)
            given = {}
        if fam and given:
            notes.append("The families mapping given replaces the family columns of the table.")
        fam = given

    if problems:
        raise ValidationError(problems)

    frame = raw.drop(index=drop_idx) if len(drop_idx) else raw
    has_score = frame["score"].notna()
    n_missing = int((~has_score).sum())
    if n_missing:
        by_judge = frame.loc[~has_score].groupby("judge", sort=False).size()
        by_judge = by_judge.reindex([j for j in pd.unique(frame["judge"]) if j in by_judge.index])  # the table's judge order
        detail = ", ".join(f"{j}: {n}" for j, n in list(by_judge.items())[:_MAX_LISTED]) + (" …" if len(by_judge) > _MAX_LISTED else "")
        lost_items = pd.Index(pd.unique(frame["item"])).difference(pd.unique(frame.loc[has_score, "item"]), sort=False)
        lost = (f"; {len(lost_items)} item{'s' if len(lost_items) > 1 else ''} with no score at all left out "
                f"({_fmt_values(list(lost_items))})") if len(lost_items) else ""
        notes.append(f"{n_missing} judgment{'s' if n_missing > 1 else ''} with no score excluded ({detail}){lost}.")
        if has_gold:
            # A gold label enters the fit with its answer's scores (a pattern over the judges): an
            # answer no judge scored has none, so its label goes with it; say so rather than drop it quietly.
            answer = [frame["item"], frame["candidate"]]
            unscored = (~has_score).groupby(answer, sort=False).all() & frame["gold"].groupby(answer, sort=False).any()
            if unscored.any():
                shown = ", ".join(f"({i}, {c})" for i, c in list(unscored[unscored].index)[:_MAX_LISTED])
                n = int(unscored.sum())
                notes.append(f"{n} gold answer{'s' if n > 1 else ''} with no score from any judge left out with "
                             f"{'their labels' if n > 1 else 'its label'}: {shown}{' …' if n > _MAX_LISTED else ''} "
                             "(a gold label enters the fit together with its answer's scores).")
        frame = frame[has_score]

    all_candidates = list(pd.unique(raw["candidate"]))
    all_judges = list(pd.unique(raw["judge"]))
    used_c, used_j = set(pd.unique(frame["candidate"])), set(pd.unique(frame["judge"]))
    candidates = [c for c in all_candidates if c in used_c]
    judges = [j for j in all_judges if j in used_j]
    empty_c = [c for c in all_candidates if c not in used_c]
    empty_j = [j for j in all_judges if j not in used_j]
    if empty_c:
        problems.append(Problem("candidate", f"no usable rows (every score missing) for {_fmt_values(empty_c)}.", fix="add scores for them or remove their rows."))
    if empty_j:
        problems.append(Problem("judge", f"no usable rows (every score missing) for {_fmt_values(empty_j)}.", fix="add scores for them or remove their rows."))
    if len(candidates) < 2:
        problems.append(Problem("candidate", f"only {len(candidates)} candidate{'s' if len(candidates) != 1 else ''} with usable rows ({_fmt_values(candidates)}).", expected="at least two candidates to rank", fix="add the other candidates' rows."))
    if problems:
        raise ValidationError(problems)

    if has_true:
        answer = [frame["item"], frame["candidate"]]
        no_truth = ~frame["true_score"].notna().groupby(answer, sort=False).any()
        if no_truth.any():
            notes.append(f"{int(no_truth.sum())} (item, candidate) answer{'s' if no_truth.sum() > 1 else ''} without a true_score: left out of evaluation only.")
        # One truth per answer, on every row (rows of the same answer agree by validation).
        frame = frame.assign(true_score=frame.groupby(answer, sort=False)["true_score"].transform("max"))

    models = set(candidates) | set(judges)
    if fam:
        no_family = sorted(models - set(fam))
        if no_family:
            notes.append(f"No family for {_fmt_values(no_family)}: never excluded as self-family.")
        unknown = [m for m in fam if m not in models]
        if unknown and note_unused_families:
            notes.append(f"The families name {_fmt_values(unknown)}, neither a candidate nor a judge with usable rows "
                         "here: ignored (check the spelling).")
        fam = {m: f for m, f in fam.items() if m in models}

    keep = ["item", "candidate", "judge", "score"] + (["true_score"] if has_true else []) + (["gold"] if has_gold else [])
    frame = frame[keep].reset_index(drop=True)
    return JudgmentTable(
        frame=frame,
        scale=scale,
        families=dict(fam),
        candidates=tuple(candidates),
        judges=tuple(judges),
        items=tuple(pd.unique(frame["item"])),
        notes=tuple(notes),
        source=str(label),
        criterion=criterion,
    )


# -- derived views ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Counts:
    """Sufficient statistics for the model: N[judge, candidate, observed level] and the mask."""

    N: np.ndarray
    included: np.ndarray
    judges: tuple[str, ...]
    candidates: tuple[str, ...]
    scale: Scale
    excluded_pairs: tuple[tuple[str, str], ...] = ()
    families: Mapping[str, str] = field(default_factory=dict)
    data_hash: str = ""
    #: Each candidate's distinct answer patterns (the shared-truth likelihood's data); None when the
    #: counts were built without item-level data.
    patterns: ScorePatterns | None = None

    @property
    def n_items(self) -> int:
        return int(self.N.sum(axis=2).max()) if self.N.size else 0


def count_tensor(table: JudgmentTable, self_exclusion: bool = True) -> Counts:
    """Count tensor N[j, k, m] of judge j giving observed level m to candidate k.

    With ``self_exclusion`` (the default), (judge, candidate) pairs of the same family are marked
    not included; the model leaves them out of the likelihood. A judge left with no included pair
    is an error, since it would carry no information.
    """
    J, K, M = len(table.judges), len(table.candidates), table.scale.n_levels
    j_idx = pd.Categorical(table.frame["judge"], categories=table.judges).codes
    k_idx = pd.Categorical(table.frame["candidate"], categories=table.candidates).codes
    m_idx = np.searchsorted(np.asarray(table.scale.values), table.frame["score"].to_numpy())
    N = np.zeros((J, K, M), dtype=np.int64)
    np.add.at(N, (j_idx, k_idx, m_idx), 1)
    included = np.ones((J, K), dtype=bool)
    excluded: list[tuple[str, str]] = []
    if self_exclusion:
        for a, j in enumerate(table.judges):
            for b, k in enumerate(table.candidates):
                if table.is_self_family(j, k):
                    included[a, b] = False
                    excluded.append((j, k))
        has_data = N.sum(axis=2) > 0
        dead = [j for a, j in enumerate(table.judges) if not (included[a] & has_data[a]).any()]
        unseen = [k for b, k in enumerate(table.candidates) if not (included[:, b] & has_data[:, b]).any()]
        problems = []
        if dead:
            problems.append(Problem("judge_family", f"every judgment of judge{'s' if len(dead) > 1 else ''} {_fmt_values(dead)} is excluded as self-family.",
                                    value=tuple(dead), fix="switch self-family exclusion off, or remove that judge.", setting="self_exclusion"))
        if unseen:
            # Its rank would come from the prior alone: say so rather than rank it silently.
            problems.append(Problem("candidate_family", f"every judgment of candidate{'s' if len(unseen) > 1 else ''} {_fmt_values(unseen)} is excluded as self-family "
                                    "(only judges of the same family scored it), so the data say nothing about it.",
                                    value=tuple(unseen), fix="switch self-family exclusion off, add a judge of another family, or remove that candidate.",
                                    setting="self_exclusion"))
        if problems:
            raise ValidationError(problems)
    return Counts(N=N, included=included, judges=table.judges, candidates=table.candidates, scale=table.scale,
                  excluded_pairs=tuple(excluded), families=dict(table.families), data_hash=table.data_hash(),
                  patterns=_answer_patterns(table, j_idx, k_idx, m_idx, included))


def _answer_patterns(table: JudgmentTable, j_idx: np.ndarray, k_idx: np.ndarray, m_idx: np.ndarray,
                     included: np.ndarray) -> ScorePatterns:
    """The table's answers (item, candidate) as score patterns over the judges, gold answers with
    their true level (see :mod:`simplex_core.data.patterns`)."""
    K = len(table.candidates)
    i_idx = pd.Categorical(table.frame["item"], categories=table.items).codes.astype(np.int64)
    answers, row_answer = np.unique(i_idx * K + k_idx, return_inverse=True)
    scores = np.full((answers.size, len(table.judges)), NO_SCORE, dtype=np.int64)
    scores[row_answer, j_idx] = m_idx
    truth = np.full(answers.size, NO_SCORE, dtype=np.int64)
    if "gold" in table.frame.columns:
        gold = table.frame["gold"].to_numpy(dtype=bool)
        true_values = np.asarray(table.scale.true_values, dtype=float)
        truth[row_answer[gold]] = np.searchsorted(true_values, table.frame["true_score"].to_numpy(dtype=float)[gold])
    return patterns_from_answers(answers % K, scores, truth, included)


def item_view(table: JudgmentTable, self_exclusion: bool = False) -> pd.DataFrame:
    """Each judge's score for each (item, candidate): index (item, candidate), one column per judge.

    With ``self_exclusion``, self-family judgments are set to NaN. A ``true_score`` column is added
    when the table has ground truth.
    """
    frame = table.frame
    if self_exclusion and table.families:
        mask = np.array([table.is_self_family(j, k) for j, k in zip(frame["judge"], frame["candidate"])], dtype=bool)
        frame = frame.assign(score=frame["score"].where(~mask))
    view = frame.pivot(index=["item", "candidate"], columns="judge", values="score")
    view = view.reindex(columns=list(table.judges))
    order = pd.MultiIndex.from_product([list(table.items), list(table.candidates)], names=["item", "candidate"])
    view = view.reindex(order.intersection(view.index, sort=False))
    view.columns.name = None
    if table.has_truth:
        truth = table.frame.groupby(["item", "candidate"], sort=False)["true_score"].first()
        view["true_score"] = truth.reindex(view.index)
    return view


def score_distribution(table: JudgmentTable, counts: "Counts | None" = None) -> pd.DataFrame:
    """Per judge and candidate, the count of each observed level (long form): columns judge,
    candidate, level (value), label, count, n, share. The paper's appendix-D self-preference table
    is this table pivoted."""
    counts = (counts if counts is not None else count_tensor(table, self_exclusion=False)).N  # counts without self-exclusion
    rows = []
    for a, j in enumerate(table.judges):
        for b, k in enumerate(table.candidates):
            n = int(counts[a, b].sum())
            for m, (v, lab) in enumerate(zip(table.scale.values, table.scale.labels)):
                rows.append({"judge": j, "candidate": k, "level": v, "label": lab, "count": int(counts[a, b, m]),
                             "n": n, "share": counts[a, b, m] / n if n else float("nan"),
                             "self_family": table.is_self_family(j, k)})
    return pd.DataFrame(rows)


def score_distribution_wide(table: JudgmentTable) -> pd.DataFrame:
    """Rows: candidate; columns: (judge, level label); cells: counts — the paper's appendix-D table
    (:func:`score_distribution` pivoted, without self-family exclusion). A judge that scored none of a
    candidate's answers has missing cells (``pd.NA``), not zeros: "never scored" is not "never gave
    this level"."""
    dist = score_distribution(table)
    wide = dist.pivot_table(index="candidate", columns=["judge", "label"], values="count", aggfunc="sum", sort=False)
    cols = pd.MultiIndex.from_product([list(table.judges), list(table.scale.labels)])
    wide = wide.reindex(index=list(table.candidates)).reindex(columns=cols).fillna(0).astype("Int64")
    scored = dist.pivot_table(index="candidate", columns=["judge", "label"], values="n", aggfunc="first", sort=False)
    return wide.mask(scored.reindex_like(wide).fillna(0).eq(0))


def collapse_levels(table: JudgmentTable, mapping: Mapping[float, float], labels: Mapping[float, str] | None = None) -> JudgmentTable:
    """A new table whose scores are mapped through ``mapping`` (e.g. the paper's 5→3 maps).

    The scale becomes :func:`simplex_core.data.scale.collapse_scale`. A ``true_score`` is mapped by
    linear interpolation between the mapped level values, so a mean of raters stays a mean.
    """
    new_scale = collapse_scale(table.scale, mapping, labels)
    m = {float(k): float(v) for k, v in mapping.items()}
    frame = table.frame.copy()
    frame["score"] = frame["score"].map(lambda s: m[float(s)])
    notes = list(table.notes) + [f"Levels collapsed: {', '.join(f'{_num(k)}→{_num(v)}' for k, v in sorted(m.items()))}."]
    if "true_score" in frame.columns:
        xs = np.array(table.scale.true_values)
        ys = np.array([m[v] for v in xs])
        frame["true_score"] = np.interp(frame["true_score"].to_numpy(dtype=float), xs, ys)
    return JudgmentTable(frame=frame, scale=new_scale, families=table.families, candidates=table.candidates,
                         judges=table.judges, items=table.items, notes=tuple(notes), source=table.source,
                         criterion=table.criterion, left_out=table.left_out)


def template_frame() -> pd.DataFrame:
    """A small example in the data contract (the downloadable template)."""
    rows = []
    truth = {("q1", "model-a"): 1, ("q1", "model-b"): 0, ("q2", "model-a"): 1, ("q2", "model-b"): 1}
    scores = {("q1", "model-a", "judge-x"): 1, ("q1", "model-a", "judge-y"): 1, ("q1", "model-b", "judge-x"): 0,
              ("q1", "model-b", "judge-y"): 1, ("q2", "model-a", "judge-x"): 1, ("q2", "model-a", "judge-y"): 0,
              ("q2", "model-b", "judge-x"): 1, ("q2", "model-b", "judge-y"): 1}
    fams = {"model-a": "vendor-a", "model-b": "vendor-b", "judge-x": "vendor-a", "judge-y": "vendor-c"}
    for (item, cand, judge), s in scores.items():
        rows.append({"item": item, "candidate": cand, "judge": judge, "score": s, "true_score": truth[(item, cand)],
                     "candidate_family": fams[cand], "judge_family": fams[judge]})
    return pd.DataFrame(rows)
