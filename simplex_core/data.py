"""The data contract: one long table of judgments, its validation, and the views models need.

One row per (item, candidate, judge) with columns ``item``, ``candidate``, ``judge``, ``score``;
optional ``true_score`` (used for evaluation and labelled baselines; the model fit sees it only for
answers marked gold); optional ``gold`` (true/false: the answer's true score is a known label, which
the shared-truth likelihood takes as observed; see :mod:`simplex_core.gold`); optional
``candidate_family`` / ``judge_family`` (or a {model: family} mapping) for self-family
exclusion; optional ``criterion`` when one file holds several criteria.

Validation collects every problem at once and names the column, the rows (1-based data rows: the
first row after the header is row 1), the offending value, what was expected and how to fix it.
Nothing is dropped silently: anything excluded or normalised is counted in ``JudgmentTable.notes``.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .scale import Scale, ScaleError, collapse_scale
from .patterns import NO_SCORE, ScorePatterns, patterns_from_answers

REQUIRED_COLUMNS = ("item", "candidate", "judge", "score")
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
    more = f" and {len(vals) - _MAX_LISTED} more" if len(vals) > _MAX_LISTED else ""
    return shown + more


def _num(v: Any) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return repr(v)
    return str(int(f)) if f.is_integer() else f"{f:g}"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, said precisely enough to fix it."""

    column: str | None
    message: str
    rows: tuple[int, ...] = ()
    value: Any = None
    expected: str | None = None
    fix: str | None = None

    def __str__(self) -> str:
        parts = [f"The '{self.column}' column: {self.message}" if self.column else self.message]
        if self.expected:
            parts.append(f"Expected {self.expected}.")
        if self.fix:
            parts.append(f"Fix: {self.fix}")
        return " ".join(parts)


class ValidationError(ValueError):
    """Raised with every problem found in the input at once."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in the input:"
        super().__init__("\n".join([head] + [f"- {p}" for p in self.problems]))


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
        """sha256 over the canonical rows, the scale and the families (for caches and provenance)."""
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

def _suffixes(name: str) -> list[str]:
    return [s.lower() for s in Path(name).suffixes]


def read_source(source: Any, name: str | None = None) -> pd.DataFrame:
    """Read CSV (optionally gzipped), TSV, JSONL or Parquet from a path, bytes or file-like object,
    or return a copy of a DataFrame. Raises ``ValidationError`` when the file cannot be parsed."""
    if isinstance(source, pd.DataFrame):
        return source.copy()
    label = name or getattr(source, "name", None) or (str(source) if isinstance(source, (str, Path)) else "upload")
    suffixes = _suffixes(str(label))
    fmt = "csv"
    if ".parquet" in suffixes or ".pq" in suffixes:
        fmt = "parquet"
    elif ".jsonl" in suffixes or ".ndjson" in suffixes or ".json" in suffixes:
        fmt = "jsonl"
    elif ".tsv" in suffixes:
        fmt = "tsv"
    if isinstance(source, (str, Path)):
        if not Path(source).exists():
            raise ValidationError([Problem(None, f"No file at {str(source)!r}.", fix="check the path (or use a built-in dataset name: `python -m simplex_core datasets`).")])
        handle: Any = str(source)
    elif isinstance(source, (bytes, bytearray)):
        handle = io.BytesIO(source)
    else:
        handle = source
    compression = "gzip" if ".gz" in suffixes else "infer"
    try:
        if fmt == "parquet":
            return pd.read_parquet(handle)
        if fmt == "jsonl":
            return pd.read_json(handle, lines=True, dtype=False, compression=compression)
        # Identifier columns stay text: "007" and "7" are different items.
        return pd.read_csv(handle, sep="\t" if fmt == "tsv" else ",", dtype=str, keep_default_na=False,
                           na_values=[""], compression=compression, skipinitialspace=True)
    except Exception as exc:  # pandas raises many parser types; all mean "this file is not readable"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValidationError([Problem(
            None, f"Could not read {label!r} as {fmt.upper()}: {first}.",
            fix="save the table as CSV (comma-separated, one header row), JSON Lines or Parquet.")]) from None


def load_families(spec: Mapping[str, str] | str | Path | None) -> dict[str, str]:
    """A flat {model name: family} mapping from a dict, a JSON file path or a JSON string."""
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        data: Any = dict(spec)
    else:
        text = str(spec)
        try:
            if Path(text).exists():
                text = Path(text).read_text()
            data = json.loads(text)
        except (OSError, json.JSONDecodeError) as exc:
            raise ValidationError([Problem(None, f"The families file could not be read as JSON: {exc}.",
                                           fix='write a flat JSON object such as {"gpt-4o": "openai", "claude-3": "anthropic"}.')]) from None
    bad = [k for k, v in data.items() if not isinstance(v, str) or not str(k)] if isinstance(data, dict) else None
    if not isinstance(data, dict) or bad:
        raise ValidationError([Problem(None, "The families must be a flat JSON object mapping model name to family name"
                                       + (f"; these entries are not text: {_fmt_values(bad)}." if bad else "."),
                                       fix='e.g. {"gpt-4o": "openai", "claude-3": "anthropic"}.')])
    return {str(k): str(v) for k, v in data.items()}


# -- validation ------------------------------------------------------------------------------------

def _rows(mask: pd.Series | np.ndarray, index: pd.Index) -> tuple[int, ...]:
    return tuple(int(i) + 1 for i in np.flatnonzero(np.asarray(mask)))


def _to_number(series: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Numeric version of a column and a mask of entries that are present but not numbers."""
    present = series.notna() & (series.astype(str).str.strip() != "")
    if series.dtype == bool:
        series = series.astype(float)
    lowered = series.astype(str).str.strip().str.lower()
    # True/False verdict columns are common in judge outputs; read them as 1/0.
    mapped = lowered.map({"true": "1", "false": "0"}).fillna(series.astype(str).str.strip()) if not pd.api.types.is_numeric_dtype(series) else series
    numeric = pd.to_numeric(mapped, errors="coerce")
    bad = present & numeric.isna()
    numeric = numeric.where(present)
    return numeric.astype(float), bad


def _to_bool(series: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Boolean version of a gold column (blank = False) and a mask of entries that are not booleans."""
    text = series.map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)).str.strip().str.lower()
    value = text.isin(GOLD_TRUE)
    bad = ~(value | text.isin(GOLD_FALSE) | (text == ""))
    return value.astype(bool), bad


def load_table(
    source: Any,
    *,
    scale: Scale | None = None,
    families: Mapping[str, str] | str | Path | None = None,
    criterion: str | None = None,
    name: str | None = None,
) -> JudgmentTable:
    """Read and validate a judgment table.

    Parameters
    ----------
    source
        A path (CSV, CSV.gz, TSV, JSONL, Parquet), bytes, an uploaded file object or a DataFrame.
    scale
        The declared scale; without it the observed levels are the sorted distinct scores.
    families
        {model: family} mapping, JSON file or JSON text; overrides family columns in the table.
    criterion
        When the table has a ``criterion`` column, the criterion to keep (required if it has several).

    Raises
    ------
    ValidationError
        With every problem found, each naming the column, rows, value, expectation and fix.
    """
    label = name or (str(source) if isinstance(source, (str, Path)) else getattr(source, "name", "table"))
    raw = read_source(source, name=name)
    problems: list[Problem] = []
    notes: list[str] = []

    if raw.shape[1] == 0 or len(raw) == 0:
        raise ValidationError([Problem(None, "The input is empty: it has no data rows." if raw.shape[1] else "The input is empty.",
                                       fix="give one row per (item, candidate, judge) with columns item, candidate, judge, score.")])

    # Column names: tolerate case and surrounding spaces, nothing fuzzier.
    renamed = {c: str(c).strip().lower() for c in raw.columns}
    changed = [f"{c!r}→{n!r}" for c, n in renamed.items() if c != n and n in REQUIRED_COLUMNS + OPTIONAL_COLUMNS]
    raw = raw.rename(columns=renamed)
    if changed:
        notes.append(f"Column names normalised: {', '.join(changed)}.")
    missing = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if missing:
        raise ValidationError([Problem(
            None, f"Missing required column{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)}; "
                  f"found {', '.join(repr(str(c)) for c in raw.columns)}.",
            expected="columns item, candidate, judge, score (optional: true_score, candidate_family, judge_family, criterion)",
            fix="rename your columns or download the template CSV to see the layout.")])
    raw = raw.reset_index(drop=True)

    # Criterion filter.
    if "criterion" in raw.columns:
        crits = [c for c in pd.unique(raw["criterion"].astype(str))]
        if criterion is None and len(crits) > 1:
            raise ValidationError([Problem("criterion", f"The table holds {len(crits)} criteria ({_fmt_values(crits)}).",
                                           fix="choose one with --criterion (or the criterion selector).")])
        if criterion is not None:
            if criterion not in crits:
                raise ValidationError([Problem("criterion", f"No rows for criterion {criterion!r}; the table has {_fmt_values(crits)}.",
                                               fix="pick one of those criteria.")])
            raw = raw[raw["criterion"].astype(str) == criterion].reset_index(drop=True)
        else:
            criterion = crits[0]
    elif criterion is not None:
        raise ValidationError([Problem("criterion", f"--criterion {criterion!r} was given but the table has no 'criterion' column.",
                                       fix="drop the option, or add a criterion column.")])

    # Identifiers: present, text.
    for col in ("item", "candidate", "judge"):
        s = raw[col]
        blank = s.isna() | (s.astype(str).str.strip() == "")
        if blank.any():
            problems.append(Problem(col, f"{blank.sum()} blank value{'s' if blank.sum() > 1 else ''} in {_fmt_rows(_rows(blank, raw.index))}.",
                                    expected=f"{'an' if col == 'item' else 'a'} {col} name on every row", fix=f"fill in the {col} or delete those rows."))
        raw[col] = s.map(lambda v: v if isinstance(v, str) else (_num(v) if isinstance(v, (int, float, np.number)) else str(v))).astype(str).str.strip()

    # Scores.
    score, score_bad = _to_number(raw["score"])
    if score_bad.any():
        problems.append(Problem("score", f"non-numeric value{'s' if score_bad.sum() > 1 else ''} {_fmt_values(raw.loc[score_bad, 'score'])} in {_fmt_rows(_rows(score_bad, raw.index))}.",
                                expected="a number that is one of the scale's levels", fix="replace them with level values, or leave the cell empty for a missing judgment."))
    score_missing = score.isna() & ~score_bad
    if scale is None:
        distinct = sorted(set(score.dropna().tolist()))
        if len(distinct) > MAX_IMPLICIT_LEVELS:
            problems.append(Problem("score", f"{len(distinct)} distinct values ({_fmt_values(distinct)}): too many to be scoring levels.",
                                    expected=f"at most {MAX_IMPLICIT_LEVELS} levels, e.g. integers 1..5",
                                    fix="round or map the scores to levels, or declare the scale with --levels."))
        elif len(distinct) < 2 and not problems:
            problems.append(Problem("score", f"only {len(distinct)} distinct value{'s' if len(distinct) != 1 else ''} ({_fmt_values(distinct)}).",
                                    expected="at least 2 levels", fix="declare the scale with --levels, e.g. --levels=0:incorrect,1:correct."))
        else:
            try:
                scale = Scale(tuple(distinct)) if len(distinct) >= 2 else None
            except ScaleError as exc:
                problems.append(Problem("score", str(exc)))
    if scale is not None:
        in_scale = score.isin(scale.values) | score.isna()
        off = ~in_scale
        if off.any():
            problems.append(Problem("score", f"value{'s' if off.sum() > 1 else ''} {_fmt_values(score[off])} in {_fmt_rows(_rows(off, raw.index))} {'are' if off.sum() > 1 else 'is'} not on the scale.",
                                    expected=f"one of {', '.join(_num(v) for v in scale.values)}",
                                    fix="correct the scores, or declare the scale with --levels (e.g. --levels=1,2,3,4,5)."))
    raw["score"] = score

    # Ground truth.
    has_true = "true_score" in raw.columns
    if has_true:
        ts, ts_bad = _to_number(raw["true_score"])
        if ts_bad.any():
            problems.append(Problem("true_score", f"non-numeric value{'s' if ts_bad.sum() > 1 else ''} {_fmt_values(raw.loc[ts_bad, 'true_score'])} in {_fmt_rows(_rows(ts_bad, raw.index))}.",
                                    expected="a number on the true scale's range (a mean of raters is fine)", fix="correct or empty those cells."))
        raw["true_score"] = ts
        if scale is not None:
            lo, hi = scale.true_values[0], scale.true_values[-1]
            out = ts.notna() & ((ts < lo - 1e-9) | (ts > hi + 1e-9))
            if out.any():
                problems.append(Problem("true_score", f"value{'s' if out.sum() > 1 else ''} {_fmt_values(ts[out])} in {_fmt_rows(_rows(out, raw.index))} outside the true scale's range.",
                                        expected=f"a number from {_num(lo)} to {_num(hi)}", fix="rescale the ground truth to the true levels, or declare --true-levels."))
        if ts.isna().all():
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
                                    expected="true/false (or 1/0, yes/no; a blank cell means not gold)", fix="write true for answers whose true_score is a known label, false otherwise."))
        raw["gold"] = gold
        if gold.any():
            truth_of_answer = (raw.groupby(["item", "candidate"], sort=False)["true_score"].transform("max")
                               if has_true else pd.Series(np.nan, index=raw.index))
            no_truth = gold & truth_of_answer.isna()
            if no_truth.any():
                problems.append(Problem("gold", f"{_fmt_rows(_rows(no_truth, raw.index))} {'are' if no_truth.sum() > 1 else 'is'} marked gold but the answer has no true_score.",
                                        expected="a true_score on every gold answer", fix="add the true_score of those answers, or mark them false."))
            if has_true and scale is not None:
                levels = np.asarray(scale.true_values, dtype=float)
                ts_gold = raw["true_score"]
                off = gold & ts_gold.notna() & ~ts_gold.map(lambda v: bool(np.isclose(v, levels, atol=1e-9).any()) if pd.notna(v) else True)
                if off.any():
                    many = ts_gold[off].nunique() > 1
                    problems.append(Problem("gold", f"gold true score{'s' if many else ''} {_fmt_values(ts_gold[off])} in {_fmt_rows(_rows(off, raw.index))} {'are' if many else 'is'} not a true level of the scale.",
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

    # Duplicated (item, candidate, judge) rows.
    key = ["item", "candidate", "judge"]
    dup_mask = raw.duplicated(key, keep=False)
    drop_idx: list[int] = []
    if dup_mask.any():
        conflicting_rows: list[int] = []
        for _, grp in raw[dup_mask].groupby(key, sort=False):
            scores = grp["score"]
            consistent = scores.nunique(dropna=False) == 1
            if has_true:
                consistent = consistent and grp["true_score"].nunique(dropna=False) == 1
            if consistent:
                drop_idx.extend(grp.index[1:].tolist())
            else:
                conflicting_rows.extend((grp.index + 1).tolist())
        if conflicting_rows:
            problems.append(Problem(None, f"Conflicting duplicate rows: the same (item, candidate, judge) has different scores in {_fmt_rows(conflicting_rows)}.",
                                    expected="one score per (item, candidate, judge)",
                                    fix="keep one row per (item, candidate, judge) (e.g. average repeated samples and round to a level first)."))
        if drop_idx:
            notes.append(f"{len(drop_idx)} exact duplicate row{'s' if len(drop_idx) > 1 else ''} (same item, candidate, judge and score) counted once: {_fmt_rows([i + 1 for i in drop_idx])}.")

    # true_score must agree across judges of one (item, candidate).
    if has_true:
        per_answer = raw.dropna(subset=["true_score"]).groupby(["item", "candidate"], sort=False)["true_score"].agg(["min", "max"])
        differing = per_answer[(per_answer["max"] - per_answer["min"]).abs() > 1e-9]
        if len(differing):
            pairs = [f"({i!r}, {c!r})" for i, c in differing.index[:_MAX_LISTED]]
            problems.append(Problem("true_score", f"differs across judges for {len(differing)} (item, candidate) pair{'s' if len(differing) > 1 else ''}: {', '.join(pairs)}{' …' if len(differing) > _MAX_LISTED else ''}.",
                                    expected="the same ground truth for every judge of an answer", fix="give each (item, candidate) one true_score."))

    # Families.
    fam: dict[str, str] = {}
    for col, who in (("candidate_family", "candidate"), ("judge_family", "judge")):
        if col in raw.columns:
            sub = raw[[who, col]].dropna()
            sub = sub[sub[col].astype(str).str.strip() != ""]
            for model, grp in sub.groupby(who, sort=False):
                vals = pd.unique(grp[col].astype(str).str.strip())
                if len(vals) > 1:
                    problems.append(Problem(col, f"{who} {model!r} has several families ({_fmt_values(vals)}).", expected="one family per model", fix="make the family the same on every row of that model."))
                else:
                    prev = fam.get(str(model))
                    if prev is not None and prev != vals[0]:
                        problems.append(Problem(col, f"{model!r} is in family {prev!r} as one role and {vals[0]!r} as the other.", expected="one family per model", fix="use the same family in candidate_family and judge_family."))
                    fam[str(model)] = str(vals[0])
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

    frame = raw.drop(index=drop_idx)
    n_missing = int(score_missing.drop(index=drop_idx, errors="ignore").sum())
    if n_missing:
        miss_rows = frame[frame["score"].isna()]
        by_judge = miss_rows.groupby("judge", sort=False).size()
        detail = ", ".join(f"{j}: {n}" for j, n in by_judge.items())
        notes.append(f"{n_missing} judgment{'s' if n_missing > 1 else ''} with no score excluded ({detail}).")
    frame = frame[frame["score"].notna()]

    all_candidates = list(pd.unique(raw["candidate"]))
    all_judges = list(pd.unique(raw["judge"]))
    candidates = [c for c in all_candidates if c in set(frame["candidate"])]
    judges = [j for j in all_judges if j in set(frame["judge"])]
    empty_c = [c for c in all_candidates if c not in candidates]
    empty_j = [j for j in all_judges if j not in judges]
    if empty_c:
        problems.append(Problem("candidate", f"no usable rows (every score missing) for {_fmt_values(empty_c)}.", fix="add scores for them or remove their rows."))
    if empty_j:
        problems.append(Problem("judge", f"no usable rows (every score missing) for {_fmt_values(empty_j)}.", fix="add scores for them or remove their rows."))
    if len(candidates) < 2:
        problems.append(Problem("candidate", f"only {len(candidates)} candidate{'s' if len(candidates) != 1 else ''} with usable rows ({_fmt_values(candidates)}).", expected="at least two candidates to rank", fix="add the other candidates' rows."))
    if problems:
        raise ValidationError(problems)

    if has_true:
        no_truth = frame.groupby(["item", "candidate"], sort=False)["true_score"].apply(lambda s: s.isna().all())
        if no_truth.any():
            notes.append(f"{int(no_truth.sum())} (item, candidate) answer{'s' if no_truth.sum() > 1 else ''} without a true_score: left out of evaluation only.")
        # One truth per answer, on every row (rows of the same answer agree by validation).
        filled = frame.groupby(["item", "candidate"], sort=False)["true_score"].transform("max")
        frame = frame.assign(true_score=filled)

    models = set(candidates) | set(judges)
    if fam:
        no_family = sorted(models - set(fam))
        if no_family:
            notes.append(f"No family for {_fmt_values(no_family)}: never excluded as self-family.")
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
                                    fix="switch self-family exclusion off, or remove that judge."))
        if unseen:
            # Its rank would come from the prior alone: say so rather than rank it silently.
            problems.append(Problem("candidate_family", f"every judgment of candidate{'s' if len(unseen) > 1 else ''} {_fmt_values(unseen)} is excluded as self-family "
                                    "(only judges of the same family scored it), so the data say nothing about it.",
                                    fix="switch self-family exclusion off, add a judge of another family, or remove that candidate."))
        if problems:
            raise ValidationError(problems)
    return Counts(N=N, included=included, judges=table.judges, candidates=table.candidates, scale=table.scale,
                  excluded_pairs=tuple(excluded), families=dict(table.families), data_hash=table.data_hash(),
                  patterns=_answer_patterns(table, j_idx, k_idx, m_idx, included))


def _answer_patterns(table: JudgmentTable, j_idx: np.ndarray, k_idx: np.ndarray, m_idx: np.ndarray,
                     included: np.ndarray) -> ScorePatterns:
    """The table's answers (item, candidate) as score patterns over the judges, gold answers with
    their true level (see :mod:`simplex_core.patterns`)."""
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


def score_distribution(table: JudgmentTable) -> pd.DataFrame:
    """Per judge and candidate, the count of each observed level (long form): columns judge,
    candidate, level (value), label, count, n, share. The paper's appendix-D self-preference table
    is this table pivoted."""
    counts = count_tensor(table, self_exclusion=False).N
    rows = []
    for a, j in enumerate(table.judges):
        for b, k in enumerate(table.candidates):
            n = int(counts[a, b].sum())
            for m, (v, lab) in enumerate(zip(table.scale.values, table.scale.labels)):
                rows.append({"judge": j, "candidate": k, "level": v, "label": lab, "count": int(counts[a, b, m]),
                             "n": n, "share": counts[a, b, m] / n if n else float("nan"),
                             "self_family": table.is_self_family(j, k)})
    return pd.DataFrame(rows)


def collapse_levels(table: JudgmentTable, mapping: Mapping[float, float], labels: Mapping[float, str] | None = None) -> JudgmentTable:
    """A new table whose scores are mapped through ``mapping`` (e.g. the paper's 5→3 maps).

    The scale becomes :func:`simplex_core.scale.collapse_scale`. A ``true_score`` is mapped by
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
                         criterion=table.criterion)


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
