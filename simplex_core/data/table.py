"""The data contract: one long table of judgments (:class:`JudgmentTable`), read and validated by
:func:`load_table`, and new tables made from one (:func:`collapse_levels`, :func:`template_frame`).

One row per (item, candidate, judge) with columns ``item``, ``candidate``, ``judge``, ``score``;
optional ``true_score`` (used for evaluation and labelled baselines; the model fit sees it only for
answers marked gold); optional ``gold`` (true/false: the answer's true score is a known label, which
the shared-truth likelihood takes as observed; see :mod:`simplex_core.data.gold`); optional
``candidate_family`` / ``judge_family`` (or a {model: family} mapping) for self-family
exclusion; optional ``criterion`` when one file holds several criteria.

:func:`load_table` reads (:mod:`~simplex_core.data.reading`), then runs the checks of
:mod:`~simplex_core.data.validation` in order; every problem is collected at once and names the column,
the rows (1-based data rows: the first row after the header is row 1), the offending value, what was
expected and how to fix it (:mod:`~simplex_core.data.problems`). Nothing is dropped silently: anything
excluded or normalised is counted in ``JudgmentTable.notes``. The views models read are in
:mod:`~simplex_core.data.views`.
"""


from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from simplex_core.data.importers import NOTES_ATTR
from simplex_core.data.scale import Scale, collapse_scale
from simplex_core.data.text import shorten
from simplex_core.data.problems import Problem, ValidationError, number_text
from simplex_core.data.reading import read_source
from simplex_core.data.validation import (check_gold, gold_spread_note, check_names, check_scores, check_truth, check_truth_agrees, contract_columns,
                                          duplicate_rows, families_of_models, family_mapping, models_in_use, one_truth_per_answer,
                                          rows_of_criterion, scored_rows)


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
    label = name or (str(source) if isinstance(source, (str, Path)) else str(getattr(source, "name", None) or "table"))
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
    raw = contract_columns(raw, label, columns, notes)
    raw, criterion = rows_of_criterion(raw, criterion)
    check_names(raw, notes, problems)
    scale, widened = check_scores(raw, scale, true_levels, notes, problems)
    raw, has_true = check_truth(raw, scale, widened, notes, problems)
    has_gold = check_gold(raw, scale, has_true, problems)
    drop_idx = duplicate_rows(raw, has_true, notes, problems)
    if has_true:
        check_truth_agrees(raw, problems)
    fam = family_mapping(raw, families, notes, problems)
    if problems:
        raise ValidationError(problems)

    frame = scored_rows(raw, drop_idx, has_gold, notes)
    candidates, judges = models_in_use(raw, frame, problems)
    if problems:
        raise ValidationError(problems)
    if has_true:
        frame = one_truth_per_answer(frame, notes)
        if scale is not None:  # None only with problems, raised above
            gold_spread_note(frame, scale, notes)
    if fam:
        fam = families_of_models(fam, set(candidates) | set(judges), note_unused_families, notes)

    keep = ["item", "candidate", "judge", "score"] + (["true_score"] if has_true else []) + (["gold"] if has_gold else [])
    frame = frame[keep].reset_index(drop=True)
    assert scale is not None  # check_scores reports a problem whenever it finds no scale, raised above
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




def collapse_levels(table: JudgmentTable, mapping: Mapping[float, float], labels: Mapping[float, str] | None = None) -> JudgmentTable:
    """A new table whose scores are mapped through ``mapping`` (e.g. the paper's 5→3 maps).

    The scale becomes :func:`simplex_core.data.scale.collapse_scale`. A ``true_score`` is mapped by
    linear interpolation between the mapped level values, so a mean of raters stays a mean.
    """
    new_scale = collapse_scale(table.scale, mapping, labels)
    m = {float(k): float(v) for k, v in mapping.items()}
    frame = table.frame.copy()
    frame["score"] = frame["score"].map(lambda s: m[float(s)])
    notes = list(table.notes) + [f"Levels collapsed: {', '.join(f'{number_text(k)}→{number_text(v)}' for k, v in sorted(m.items()))}."]
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
