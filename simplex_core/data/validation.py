"""The checks of a raw judgment frame, one step per idea (columns, criterion, names, scores, ground truth,
gold labels, duplicates, families, unscored rows), each collecting its problems and notes, and the
cell-level readers they share (numbers, names, booleans) with the declarations they suggest.
:func:`simplex_core.data.table.load_table` runs the steps in order."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from simplex_core.data.scale import Scale, ScaleError, covering_levels, levels_text, parse_levels
from simplex_core.data.problems import MAX_LISTED, Problem, ValidationError, number_text, rows_text, values_text
from simplex_core.data.reading import COLUMN_HINTS, MAX_PAIRS, REQUIRED_COLUMNS, contract_column, load_families, mapped_columns


# Spellings of a boolean gold cell (case-insensitive); a blank cell means "not gold".
GOLD_TRUE = ("true", "1", "1.0", "yes", "y", "t")
GOLD_FALSE = ("false", "0", "0.0", "no", "n", "f")
# Above this many distinct scores the column is almost surely continuous, not a set of levels.
MAX_IMPLICIT_LEVELS = 15


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
        parts.append(f"{number_text(v)} ({len(rows)} row{'s' if len(rows) != 1 else ''}: {rows_text(rows)})"
                     if len(rows) <= MAX_LISTED else f"{number_text(v)} ({len(rows)} rows)")
    return [f"The scale was read from the scores as {', '.join(number_text(v) for v in levels)}; level{'s' if len(odd) > 1 else ''} "
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
        return number_text(v)
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
                     f"same name (e.g. {', '.join(repr(x) for x in rs[:MAX_LISTED])} all read as {f!r}) and count as one {col}.")
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
    labels.update({v: number_text(v) for v in extra})
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




# -- the steps of load_table, in order ---------------------------------------------------------------
# Each step reads the raw frame (and may set its columns), adds what it finds to ``problems`` and
# what it did to ``notes``; load_table raises the problems collected at the points a later step
# could not run without the earlier ones passing.

def contract_columns(raw: pd.DataFrame, label: str, columns: Mapping[str, str] | None, notes: list[str]) -> pd.DataFrame:
    """The raw frame reduced to the contract's columns under their contract names, one value per cell."""
    problems: list[Problem] = []
    if raw.shape[1] == 0 or len(raw) == 0:
        raise ValidationError([Problem(None, f"{label!r} is empty: it has column names but no data rows." if raw.shape[1] else f"{label!r} is empty.",
                                       fix="give one row per (item, candidate, judge) with columns item, candidate, judge, score.")])

    if columns:
        raw = mapped_columns(raw, columns, notes)

    # Column names: tolerate case and surrounding spaces, nothing fuzzier; ignore other columns.
    by_name: dict[str, list[Any]] = {}
    for c in raw.columns:
        folded = contract_column(c)
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
        hints: list[str] = []
        guessed: dict[str, str] = {}
        for want in missing:
            like = [c for c in found if c.strip().lower().replace(" ", "_").replace("-", "_") in COLUMN_HINTS[want]
                    and not contract_column(c) and c not in guessed.values()]
            if like:
                guessed[want] = like[0]
                hints.append(f"{like[0]!r} looks like the {want} column: if it is, rename it {want!r}, or read it as {want}.")
        # every missing column guessed: the mapping that would read the file, offered, never applied unasked
        offer = ",".join(f"{want}={col}" for want, col in guessed.items()) if len(guessed) == len(missing) else ""
        raise ValidationError([Problem(
            None, f"Missing required column{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)}; "
                  f"found {values_text(found)}." + "".join(" " + h for h in hints),
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
            problems.append(Problem(col, f"{int(mask.sum())} cell{'s' if mask.sum() > 1 else ''} in {rows_text(_rows(mask))} "
                                         f"hold{'s' if mask.sum() == 1 else ''} a list or an object, not a single value "
                                         f"(e.g. {str(raw[col].iloc[int(np.argmax(mask))])[:60]!r}).",
                                    rows=_rows(mask), expected="text or a number in every cell", fix="flatten those cells to one value each."))
    if problems:
        raise ValidationError(problems)
    return raw


def rows_of_criterion(raw: pd.DataFrame, criterion: str | None) -> tuple[pd.DataFrame, str | None]:
    """The rows of the criterion asked for (the only one when the table holds one), and its name."""
    if "criterion" in raw.columns:
        crit_col = raw["criterion"].map(_text) if raw["criterion"].dtype == object else raw["criterion"].astype(str)
        crits = [c for c in pd.unique(crit_col)]
        if criterion is None and len(crits) > 1:
            raise ValidationError([Problem("criterion", f"the table holds {len(crits)} criteria ({values_text(crits)}).",
                                           value=tuple(crits), expected="one criterion", fix="choose one of them.",
                                           setting="criterion")])
        if criterion is not None:
            if criterion not in crits:
                raise ValidationError([Problem("criterion", f"no rows for criterion {criterion!r}; the table has {values_text(crits)}.",
                                               value=criterion, expected=f"one of {values_text(crits)}",
                                               fix="pick one of those criteria.", setting="criterion")])
            raw = raw[(crit_col == criterion).to_numpy()].reset_index(drop=True)
        else:
            criterion = crits[0]
    elif criterion is not None:
        raise ValidationError([Problem(None, f"Criterion {criterion!r} was asked for but the table has no 'criterion' column.",
                                       value=criterion, fix="ask for no criterion, or add a criterion column.",
                                       setting="criterion")])
    return raw, criterion


def check_names(raw: pd.DataFrame, notes: list[str], problems: list[Problem]) -> None:
    """Items, candidates and judges as text, none blank, and not more (judge, candidate) pairs than supported."""
    for col in ("item", "candidate", "judge"):
        raw[col], blank = _as_names(raw[col], col, notes)
        if blank.any():
            problems.append(Problem(col, f"{blank.sum()} blank value{'s' if blank.sum() > 1 else ''} in {rows_text(_rows(blank))}.",
                                    rows=_rows(blank), expected=f"{'an' if col == 'item' else 'a'} {col} name on every row",
                                    fix=f"fill in the {col} or delete those rows."))
    n_cand, n_judge = raw["candidate"].nunique(), raw["judge"].nunique()
    if n_cand * n_judge > MAX_PAIRS:
        raise ValidationError(problems + [Problem(None, f"{n_cand:,} candidates × {n_judge:,} judges = {n_cand * n_judge:,} (judge, candidate) pairs; "
                                                        f"at most {MAX_PAIRS:,} are supported.",
                                                  fix="check that the candidate and judge columns hold model names (not answers or items).")])


def check_scores(raw: pd.DataFrame, scale: Scale | None, true_levels: Sequence[float] | None,
                 notes: list[str], problems: list[Problem]) -> tuple[Scale | None, Scale | None]:
    """Scores as numbers on the scale (read from the scores when none is declared).

    Returns the scale and the scale widened to the scores off it, from which a truth's suggestion starts.
    """
    score, score_bad = _to_number(raw["score"])
    if score_bad.any():
        problems.append(Problem("score", f"non-numeric value{'s' if score_bad.sum() > 1 else ''} {values_text(raw.loc[score_bad, 'score'])} in {rows_text(_rows(score_bad))}.",
                                rows=_rows(score_bad), value=_distinct(raw.loc[score_bad, "score"]),
                                expected="a number that is one of the scale's levels",
                                fix=("write decimals with a point (3.5, not 3,5)." if _decimal_commas(raw.loc[score_bad, "score"]) else
                                     f"replace {'them' if score_bad.sum() > 1 else 'it'} with {'level values' if score_bad.sum() > 1 else 'a level value'}, "
                                     "or leave the cell empty for a missing judgment. Scores are numbers: to keep words as "
                                     "level names, write each as its number and name the levels (e.g. 1:bad, 2:ok, 3:good).")))
    infinite = np.isinf(score.to_numpy())
    if infinite.any():
        problems.append(Problem("score", f"value{'s' if infinite.sum() > 1 else ''} {values_text(raw.loc[infinite, 'score'].astype(str))} in {rows_text(_rows(infinite))} "
                                         f"{'are' if infinite.sum() > 1 else 'is'} not a finite number.",
                                rows=_rows(infinite), value=_distinct(raw.loc[infinite, "score"]),
                                expected="a number that is one of the scale's levels", fix="correct those cells."))
        score = score.where(~infinite)
    merged = _numbers_merged(raw["score"])
    if merged is not None:
        first, second, as_read = merged
        at = (score == as_read).to_numpy()
        problems.append(Problem("score", (f"the scores {first} and {second} ({rows_text(_rows(at))}) are different numbers, but the same one once read "
                                          f"({as_read!r}): a score keeps about 15 significant digits, so their rows would "
                                          "count as one level.") if second else
                                         (f"the score {first} ({rows_text(_rows(at))}) has more digits than a score keeps "
                                          f"(about 15 significant digits): it would be read as {int(as_read)}."),
                                rows=_rows(at), value=first, expected="scores that are the scale's levels (e.g. 1 to 5)",
                                fix="write the levels with fewer digits (e.g. number them 1, 2, 3), and name them if need be."))
    if score.notna().sum() == 0 and not score_bad.any() and not infinite.any():
        problems.append(Problem("score", f"every score is blank ({len(score):,} row{'s' if len(score) != 1 else ''}): there is nothing to rank.",
                                expected="a score on most rows", fix="fill in the score column (a blank cell is a missing judgment)."))
    elif scale is None:
        distinct = sorted(pd.unique(score.dropna()).tolist())
        if len(distinct) > MAX_IMPLICIT_LEVELS:
            problems.append(Problem("score", f"{len(distinct)} distinct values ({values_text(distinct)}): too many to be scoring levels.",
                                    value=tuple(distinct), expected=f"at most {MAX_IMPLICIT_LEVELS} levels, e.g. integers 1..5",
                                    fix="round or map the scores to levels, or declare the scale's levels.", setting="levels",
                                    suggestion=(("levels", levels_text(distinct)),) if len(distinct) <= 100 else ()))
        elif len(distinct) < 2 and not problems:
            problems.append(Problem("score", f"only {len(distinct)} distinct value{'s' if len(distinct) != 1 else ''} ({values_text(distinct)}).",
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
            problems.append(Problem("score", f"value{'s' if off.sum() > 1 else ''} {values_text(score[off])} in {rows_text(_rows(off))} {'are' if off.sum() > 1 else 'is'} not on the scale.",
                                    rows=_rows(off), value=_distinct(score[off]), expected=f"one of {', '.join(number_text(v) for v in scale.values)}",
                                    fix="correct the scores, or declare the scale's levels (e.g. 1,2,3,4,5).", setting="levels",
                                    suggestion=offer))
    raw["score"] = score
    return scale, widened


def check_truth(raw: pd.DataFrame, scale: Scale | None, widened: Scale | None,
                notes: list[str], problems: list[Problem]) -> tuple[pd.DataFrame, bool]:
    """Ground truth as numbers within the true scale's range; an empty column is dropped. Returns the frame
    and whether it has a truth."""
    has_true = "true_score" in raw.columns
    if has_true:
        ts, ts_bad = _to_number(raw["true_score"])
        if ts_bad.any():
            problems.append(Problem("true_score", f"non-numeric value{'s' if ts_bad.sum() > 1 else ''} {values_text(raw.loc[ts_bad, 'true_score'])} in {rows_text(_rows(ts_bad))}.",
                                    rows=_rows(ts_bad), value=_distinct(raw.loc[ts_bad, "true_score"]),
                                    expected="a number on the true scale's range (a mean of raters is fine)", fix="correct or empty those cells."))
        ts_inf = np.isinf(ts.to_numpy())
        if ts_inf.any():
            problems.append(Problem("true_score", f"value{'s' if ts_inf.sum() > 1 else ''} {values_text(raw.loc[ts_inf, 'true_score'].astype(str))} in {rows_text(_rows(ts_inf))} "
                                                  f"{'are' if ts_inf.sum() > 1 else 'is'} not a finite number.",
                                    rows=_rows(ts_inf), value=_distinct(raw.loc[ts_inf, "true_score"]), fix="correct or empty those cells."))
            ts = ts.where(~ts_inf)
        raw["true_score"] = ts
        if scale is not None:
            lo, hi = scale.true_values[0], scale.true_values[-1]
            out = ts.notna() & ((ts < lo - 1e-9) | (ts > hi + 1e-9))
            if out.any():
                suggestion = _truth_range_suggestion(widened if widened is not None else scale, float(ts.min()), float(ts.max()))
                problems.append(Problem("true_score", f"value{'s' if out.sum() > 1 else ''} {values_text(ts[out])} in {rows_text(_rows(out))} outside the true scale's range.",
                                        rows=_rows(out), value=_distinct(ts[out]), expected=f"a number from {number_text(lo)} to {number_text(hi)}",
                                        fix=("rescale the ground truth to the true levels, or declare the true levels that reach it."
                                             if suggestion[0][0] == "true_levels" else
                                             "rescale the ground truth to the scale, or declare the scale's levels down and up to the truth's "
                                             "(a level no judge gave is still a level)."),
                                        setting=suggestion[0][0], suggestion=suggestion))
        if ts.isna().all() and not ts_bad.any() and not ts_inf.any():
            notes.append("The true_score column is empty: the table has no ground truth.")
            raw = raw.drop(columns=["true_score"])
            has_true = False
    return raw, has_true


def check_gold(raw: pd.DataFrame, scale: Scale | None, has_true: bool, problems: list[Problem]) -> bool:
    """Gold flags (answers whose true score the model may take as observed): booleans, on answers with a
    truth that is a true level, the same on every row of an answer. Returns whether any answer is gold."""
    has_gold = "gold" in raw.columns
    if has_gold:
        gold, gold_bad = _to_bool(raw["gold"])
        if gold_bad.any():
            many = raw.loc[gold_bad, "gold"].nunique() > 1
            problems.append(Problem("gold", f"value{'s' if many else ''} {values_text(raw.loc[gold_bad, 'gold'])} in {rows_text(_rows(gold_bad, raw.index))} {'are' if many else 'is'} not true or false.",
                                    rows=_rows(gold_bad, raw.index), value=_distinct(raw.loc[gold_bad, "gold"]),
                                    expected="true/false (or 1/0, yes/no; a blank cell means not gold)", fix="write true for answers whose true_score is a known label, false otherwise."))
        raw["gold"] = gold
        if gold.any():
            truth_of_answer = (raw.groupby(["item", "candidate"], sort=False)["true_score"].transform("max")
                               if has_true else pd.Series(np.nan, index=raw.index))
            no_truth = gold & truth_of_answer.isna()
            if no_truth.any():
                problems.append(Problem("gold", f"{rows_text(_rows(no_truth, raw.index))} {'are' if no_truth.sum() > 1 else 'is'} marked gold but the answer has no true_score.",
                                        rows=_rows(no_truth, raw.index), expected="a true_score on every gold answer", fix="add the true_score of those answers, or mark them false."))
            if has_true and scale is not None:
                levels = np.asarray(scale.true_values, dtype=float)
                ts_gold = raw["true_score"]
                off = gold & ts_gold.notna() & ~ts_gold.map(lambda v: bool(np.isclose(v, levels, atol=1e-9).any()) if pd.notna(v) else True)
                if off.any():
                    many = ts_gold[off].nunique() > 1
                    problems.append(Problem("gold", f"gold true score{'s' if many else ''} {values_text(ts_gold[off])} in {rows_text(_rows(off, raw.index))} {'are' if many else 'is'} not a true level of the scale.",
                                            rows=_rows(off, raw.index), value=_distinct(ts_gold[off]),
                                            expected=f"one of the true levels {', '.join(number_text(v) for v in levels)}",
                                            fix="a gold label is one true level (round a mean of raters to a level first), or mark the answer false."))
                raw.loc[gold & ~off & ts_gold.notna(), "true_score"] = ts_gold[gold & ~off & ts_gold.notna()].map(
                    lambda v: float(levels[np.argmin(np.abs(levels - v))]))
            mixed = raw.groupby(["item", "candidate"], sort=False)["gold"].agg(["min", "max"])
            mixed = mixed[mixed["min"] != mixed["max"]]
            if len(mixed):
                pairs = [f"({i!r}, {c!r})" for i, c in mixed.index[:MAX_LISTED]]
                problems.append(Problem("gold", f"differs across judges for {len(mixed)} (item, candidate) answer{'s' if len(mixed) > 1 else ''}: {', '.join(pairs)}{' …' if len(mixed) > MAX_LISTED else ''}.",
                                        expected="the same gold flag on every row of an answer", fix="mark every row of a gold answer true."))
        else:
            has_gold = False
    return has_gold


#: How a table note that warns (the data is usable but buys less than it seems) begins; the Data page
#: shows such notes as warnings, apart from what was excluded or normalised.
WARNING_PREFIX = "Warning: "


def gold_spread_note(frame: pd.DataFrame, scale: Scale, notes: list[str]) -> None:
    """A warning when every gold answer of a table (two or more) has the same true score: such labels show
    each candidate's labels saying the same thing, so on their own they cannot tell the candidates apart,
    and the labelled ranking's rectifiers have no spread to size its intervals from. Not an error: the
    file is usable, the labels only buy less than they seem to."""
    if "gold" not in frame.columns or "true_score" not in frame.columns:
        return
    gold = frame.loc[frame["gold"].to_numpy(dtype=bool)].drop_duplicates(["item", "candidate"])
    values = pd.unique(gold["true_score"].dropna())
    if len(gold) < 2 or len(values) != 1:
        return
    binary = len(scale.true_values) == 2
    other = ("answers of the other outcome as well (some false as well as true)" if binary
             else "answers at other levels as well")
    notes.append(f"{WARNING_PREFIX}all {len(gold)} gold answers have the same true score ({number_text(values[0])}). "
                 "On their own these labels cannot tell the candidates apart (every candidate's labels say the "
                 "same), and the ranking with labels cannot size its intervals from them. Label "
                 f"{other}: answers drawn at random among each candidate's, whatever their outcome.")


def duplicate_rows(raw: pd.DataFrame, has_true: bool, notes: list[str], problems: list[Problem]) -> np.ndarray:
    """Repeats of one (item, candidate, judge) judgment: exact ones counted once (their index returned, to
    drop), conflicting ones a problem."""
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
            problems.append(Problem(None, f"Conflicting duplicate rows: the same (item, candidate, judge) has different {what} in {rows_text(sub.index[conflict] + 1)}.",
                                    rows=tuple(int(r) + 1 for r in sub.index[conflict]), expected="one row per (item, candidate, judge)",
                                    fix="keep one row per (item, candidate, judge) (e.g. average repeated samples and round to a level first)."))
        repeat = ~conflict & sub.duplicated(key, keep="first").to_numpy()
        drop_idx = sub.index[repeat].to_numpy()
        if len(drop_idx):
            notes.append(f"{len(drop_idx)} exact duplicate row{'s' if len(drop_idx) > 1 else ''} (same item, candidate, judge and score) counted once: {rows_text(drop_idx + 1)}.")
    return drop_idx


def check_truth_agrees(raw: pd.DataFrame, problems: list[Problem]) -> None:
    """One true_score per (item, candidate): every judge's row of an answer gives the same."""
    per_answer = raw.dropna(subset=["true_score"]).groupby(["item", "candidate"], sort=False)["true_score"].agg(["min", "max"])
    differing = per_answer[(per_answer["max"] - per_answer["min"]).abs() > 1e-9]
    if len(differing):
        pairs = [f"({i!r}, {c!r})" for i, c in differing.index[:MAX_LISTED]]
        problems.append(Problem("true_score", f"differs between the rows of {len(differing)} (item, candidate) pair{'s' if len(differing) > 1 else ''}: {', '.join(pairs)}{' …' if len(differing) > MAX_LISTED else ''}.",
                                expected="the same ground truth for every judge of an answer", fix="give each (item, candidate) one true_score."))


def family_mapping(raw: pd.DataFrame, families: Mapping[str, str] | str | Path | None,
                   notes: list[str], problems: list[Problem]) -> dict[str, str]:
    """{model: family} from the family columns (one table of distinct (model, family) pairs: small, whatever
    the number of rows), replaced by a mapping given."""
    fam: dict[str, str] = {}
    for col, who in (("candidate_family", "candidate"), ("judge_family", "judge")):
        if col in raw.columns:
            sub = raw[[who, col]].drop_duplicates()
            sub = pd.DataFrame({who: sub[who].to_numpy(), col: [None if pd.isna(v) else _text(v).strip() for v in sub[col]]}).dropna()
            sub = sub[sub[col] != ""].drop_duplicates()
            several = sub[sub.duplicated(who, keep=False)]
            split = set(several[who])
            for model, vals in list(several.groupby(who, sort=False)[col])[:MAX_LISTED]:
                problems.append(Problem(col, f"{who} {model!r} has several families ({values_text(vals)}).", expected="one family per model", fix="make the family the same on every row of that model."))
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
    return fam


def scored_rows(raw: pd.DataFrame, drop_idx: np.ndarray, has_gold: bool, notes: list[str]) -> pd.DataFrame:
    """The rows that count: exact duplicates dropped, judgments with no score excluded (and said so)."""
    frame = raw.drop(index=drop_idx) if len(drop_idx) else raw
    has_score = frame["score"].notna()
    n_missing = int((~has_score).sum())
    if n_missing:
        by_judge = frame.loc[~has_score].groupby("judge", sort=False).size()
        by_judge = by_judge.reindex([j for j in pd.unique(frame["judge"]) if j in by_judge.index])  # the table's judge order
        detail = ", ".join(f"{j}: {n}" for j, n in list(by_judge.items())[:MAX_LISTED]) + (" …" if len(by_judge) > MAX_LISTED else "")
        lost_items = pd.Index(pd.unique(frame["item"])).difference(pd.unique(frame.loc[has_score, "item"]), sort=False)
        lost = (f"; {len(lost_items)} item{'s' if len(lost_items) > 1 else ''} with no score at all left out "
                f"({values_text(list(lost_items))})") if len(lost_items) else ""
        notes.append(f"{n_missing} judgment{'s' if n_missing > 1 else ''} with no score excluded ({detail}){lost}.")
        if has_gold:
            # A gold label enters the fit with its answer's scores (a pattern over the judges): an
            # answer no judge scored has none, so its label goes with it; say so rather than drop it quietly.
            answer = [frame["item"], frame["candidate"]]
            unscored = (~has_score).groupby(answer, sort=False).all() & frame["gold"].groupby(answer, sort=False).any()
            if unscored.any():
                shown = ", ".join(f"({i}, {c})" for i, c in list(unscored[unscored].index)[:MAX_LISTED])
                n = int(unscored.sum())
                notes.append(f"{n} gold answer{'s' if n > 1 else ''} with no score from any judge left out with "
                             f"{'their labels' if n > 1 else 'its label'}: {shown}{' …' if n > MAX_LISTED else ''} "
                             "(a gold label enters the fit together with its answer's scores).")
        frame = frame[has_score]
    return frame


def models_in_use(raw: pd.DataFrame, frame: pd.DataFrame, problems: list[Problem]) -> tuple[list[str], list[str]]:
    """The candidates and judges with usable rows, in the table's order; at least two candidates."""
    all_candidates = list(pd.unique(raw["candidate"]))
    all_judges = list(pd.unique(raw["judge"]))
    used_c, used_j = set(pd.unique(frame["candidate"])), set(pd.unique(frame["judge"]))
    candidates = [c for c in all_candidates if c in used_c]
    judges = [j for j in all_judges if j in used_j]
    empty_c = [c for c in all_candidates if c not in used_c]
    empty_j = [j for j in all_judges if j not in used_j]
    if empty_c:
        problems.append(Problem("candidate", f"no usable rows (every score missing) for {values_text(empty_c)}.", fix="add scores for them or remove their rows."))
    if empty_j:
        problems.append(Problem("judge", f"no usable rows (every score missing) for {values_text(empty_j)}.", fix="add scores for them or remove their rows."))
    if len(candidates) < 2:
        problems.append(Problem("candidate", f"only {len(candidates)} candidate{'s' if len(candidates) != 1 else ''} with usable rows ({values_text(candidates)}).", expected="at least two candidates to rank", fix="add the other candidates' rows."))
    return candidates, judges


def one_truth_per_answer(frame: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """Every row of an answer carries its answer's truth (rows of the same answer agree by validation)."""
    answer = [frame["item"], frame["candidate"]]
    no_truth = ~frame["true_score"].notna().groupby(answer, sort=False).any()
    if no_truth.any():
        notes.append(f"{int(no_truth.sum())} (item, candidate) answer{'s' if no_truth.sum() > 1 else ''} without a true_score: left out of evaluation only.")
    # One truth per answer, on every row (rows of the same answer agree by validation).
    frame = frame.assign(true_score=frame.groupby(answer, sort=False)["true_score"].transform("max"))
    return frame


def families_of_models(fam: dict[str, str], models: set[str], note_unused_families: bool, notes: list[str]) -> dict[str, str]:
    """The families of the models in use; models without one, and names that are no model, noted."""
    no_family = sorted(models - set(fam))
    if no_family:
        notes.append(f"No family for {values_text(no_family)}: never excluded as self-family.")
    unknown = [m for m in fam if m not in models]
    if unknown and note_unused_families:
        notes.append(f"The families name {values_text(unknown)}, neither a candidate nor a judge with usable rows "
                     "here: ignored (check the spelling).")
    fam = {m: f for m, f in fam.items() if m in models}
    return fam
