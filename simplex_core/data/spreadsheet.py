"""Tables written as CSV that a spreadsheet opens as text, never as formulas (CSV injection).

Candidate, judge and item names come from other people's files: a name such as ``=HYPERLINK(…)``
would run when a report is opened in a spreadsheet. Every CSV the project writes for people to read
(the app's downloads, the command line's reports) goes through :func:`spreadsheet_safe`; data files
meant to be read back (``simulate --out``) are written as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _defuse(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value  # a spreadsheet shows the text instead of running it as a formula
    return value


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells, column names and index labels cannot run as
    spreadsheet formulas: text starting with = + - @, a tab or a carriage return gets a leading
    apostrophe. Numbers (negative ones included) are left alone."""
    out = frame.copy()
    for col in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[col].dtype) or pd.api.types.is_bool_dtype(out[col].dtype)):
            out[col] = out[col].map(_defuse)
    out.columns = out.columns.map(_defuse) if not isinstance(out.columns, pd.MultiIndex) else pd.MultiIndex.from_tuples(
        [tuple(_defuse(v) for v in t) for t in out.columns], names=out.columns.names)
    if isinstance(out.index, pd.MultiIndex):
        out.index = pd.MultiIndex.from_tuples([tuple(_defuse(v) for v in t) for t in out.index], names=out.index.names)
    elif not pd.api.types.is_numeric_dtype(out.index.dtype):
        out.index = out.index.map(_defuse)
    return out


def write_csv(frame: pd.DataFrame, path: str | Path, **to_csv: Any) -> None:
    """``frame.to_csv(path, index=False, **to_csv)`` of its :func:`spreadsheet_safe` copy."""
    spreadsheet_safe(frame).to_csv(path, **{"index": False, **to_csv})
