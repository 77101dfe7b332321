"""Reading a judgment file into a raw frame, within limits: the contract's column names, the formats
(CSV/TSV, JSON Lines, Parquet, compressed, the importers' tool files), the byte, row and pair caps
(:func:`input_limits`), wide headers, and a families mapping (:func:`load_families`). Nothing here checks
the values: :mod:`simplex_core.data.validation` does."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
import warnings
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from simplex_core.data.importers import ImportRefused, import_frame, read_directory, read_log_bytes, sniff_bytes
from simplex_core.data.text import shorten
from simplex_core.data.problems import Problem, ValidationError, values_text


REQUIRED_COLUMNS = ("item", "candidate", "judge", "score")
#: Names other tools give the required columns: named in the missing-column message as a suggestion.
COLUMN_HINTS = {
    "item": ("question", "question_id", "prompt", "prompt_id", "item_id", "id", "example_id", "sample_id", "task_id", "instance_id"),
    "candidate": ("model", "model_name", "candidate_model", "system", "generator", "policy", "answerer", "response_model"),
    "judge": ("grader", "rater", "annotator", "evaluator", "judge_model", "judge_name", "reviewer", "critic", "scorer"),
    "score": ("rating", "grade", "label", "judgment", "judgement", "verdict", "judge_score", "points"),
}
OPTIONAL_COLUMNS = ("true_score", "gold", "candidate_family", "judge_family", "criterion")


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
        keep = [n for n in names if contract_column(n)] if wide else None
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


def mapped_columns(raw: pd.DataFrame, columns: Mapping[str, str], notes: list[str]) -> pd.DataFrame:
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
                                    value=col, expected=f"one of the file's columns: {values_text(in_file)}",
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
    unused = [c for c in raw.columns if c not in used and contract_column(c) in source]
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


def contract_column(name: Any) -> str | None:
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
    keep = [k for k in names if contract_column(k)]
    frame = pd.DataFrame.from_records([{k: r[k] for k in keep if k in r} for r in records], columns=keep)
    frame.attrs["columns_in_file"] = names
    return frame


def _read_wide_delimited(text: str, label: str, fmt: str, sep: str, header: list[str]) -> pd.DataFrame:
    """A CSV/TSV with a very wide header: only the columns the contract knows (by folded name) are
    built; the frame's ``attrs["columns_in_file"]`` keeps every name, for the messages. Rows longer
    than the header are still named (pandas would drop their extra fields without a word here)."""
    keep = [i for i, n in enumerate(header) if contract_column(n)]
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
                                       + (f"; these entries are not text: {values_text(bad)}." if bad else "."),
                                       fix='e.g. {"gpt-4o": "openai", "claude-3": "anthropic"}.')])
    return {str(k): str(v) for k, v in data.items()}


# -- validation ------------------------------------------------------------------------------------

