"""Cached access to data: the built-in catalogue, loading, collapsing, distributions, baselines.

Thin ``st.cache_data`` / ``st.cache_resource`` wrappers around :mod:`simplex_core`; the pages never
call the loaders directly. Arguments whose name starts with ``_`` are not hashed by Streamlit; the
wrappers take a hashable key (the table's data hash) beside them.
"""

from __future__ import annotations

import weakref
from typing import Any

import pandas as pd
import streamlit as st

from simplex_core.data import datasets
from simplex_core.data.table import JudgmentTable, collapse_levels, load_table
from simplex_core.data.problems import ValidationError
from simplex_core.data.views import score_distribution, score_distribution_wide
from simplex_core.data.datasets import CriterionInfo, DatasetInfo
from simplex_core.data.scale import Scale, format_level, paper_three_level_mapping, parse_true_levels, scale_from_options


@st.cache_resource(show_spinner=False)
def dataset_catalogue() -> tuple[DatasetInfo, ...]:
    """The built-in datasets (:func:`simplex_core.data.datasets.list_datasets`, read once per process)."""
    return tuple(datasets.list_datasets())


def default_dataset_name() -> str | None:
    """The built-in dataset opened by default."""
    names = [d.name for d in dataset_catalogue()]
    if datasets.DEFAULT_DATASET in names:
        return datasets.DEFAULT_DATASET
    return names[0] if names else None


def dataset_choice(name: str | None) -> DatasetInfo | None:
    for d in dataset_catalogue():
        if d.name == name:
            return d
    return None


@st.cache_data(show_spinner=False)
def dataset_card(name: str) -> str:
    """The dataset card's text (Markdown), or an empty string."""
    try:
        return str(datasets.get_dataset(name).card_text())
    except Exception:  # noqa: BLE001 — a missing card is not an error for the page
        return ""


# -- loading ------------------------------------------------------------------------------------

def _scale(levels: str, true_levels: str) -> Scale | None:
    return scale_from_options(levels.strip() or None, true_levels.strip() or None)


def _families(text: str) -> str | None:
    """Families typed in the app: JSON text (a ``str`` is never read as a path by the loader)."""
    text = str(text).strip()
    return text or None


# Tables are cached as resources (the same object on every run, never mutated by the app), so their
# data hash is computed once (see table_key).
@st.cache_resource(show_spinner="Loading the dataset…", max_entries=24)
def load_builtin(name: str, criterion: str | None, levels: str = "", true_levels: str = "", families: str = "") -> JudgmentTable:
    """A built-in dataset (optionally with a declared scale or families)."""
    options: dict[str, Any] = {}
    scale = _scale(levels, true_levels)
    if scale is not None:
        options["scale"] = scale
    fam = _families(families)
    if fam is not None:
        options["families"] = fam
    return datasets.load_dataset(name, criterion=criterion, **options)


@st.cache_resource(show_spinner="Reading your file…", max_entries=4)
def _parsed_upload(data: bytes, filename: str) -> pd.DataFrame | ValidationError:
    """The uploaded bytes parsed once (within the loader's byte and row caps); a file that cannot be
    read is remembered as its error, so that it is not parsed again on every rerun either."""
    from simplex_core.data.reading import read_source

    try:
        return read_source(data, name=filename)
    except ValidationError as exc:
        return exc


def read_upload(data: bytes, filename: str) -> pd.DataFrame:
    """The raw rows of an upload (shared, never mutated); ValidationError when unreadable."""
    parsed = _parsed_upload(data, filename)
    if isinstance(parsed, ValidationError):
        raise parsed
    return parsed


@st.cache_resource(show_spinner="Checking your file…", max_entries=8)
def load_uploaded(data: bytes, filename: str, criterion: str | None, levels: str = "", true_levels: str = "",
                  families: str = "", columns: str = "") -> JudgmentTable:
    """An uploaded file in the data contract; raises ValidationError with every problem.

    ``families`` is JSON text typed by the visitor: the loader never reads it as a path. ``columns``
    is the column box's text (:func:`simplex_core.data.column_mapping.parse_columns`)."""
    from simplex_core.data.column_mapping import parse_columns

    frame = read_upload(data, filename)
    mapping = parse_columns(columns) or None
    scale, alone = None, None
    if levels.strip():
        scale = _scale(levels, true_levels)
    elif true_levels.strip():  # true levels alone: the loader adds the observed levels it reads from the scores
        alone = parse_true_levels(true_levels)
    return load_table(frame, scale=scale, families=_families(families), criterion=criterion or None, name=filename,
                      true_levels=alone, columns=mapping)


def upload_criteria(data: bytes, filename: str, columns: str = "") -> list[str]:
    """The criteria of an uploaded file that has a ``criterion`` column, or the column the column box
    reads as criterion (else an empty list)."""
    from simplex_core.data.column_mapping import parse_columns

    try:
        frame = read_upload(data, filename)
        mapped = parse_columns(columns).get("criterion")
    except ValidationError:
        return []
    cols = {str(c).strip().lower(): c for c in frame.columns}
    column = cols.get(mapped.strip().lower()) if mapped else cols.get("criterion")
    if column is None:
        return []
    return [str(c) for c in pd.unique(frame[column].astype(str))]


def guessed_columns(data: bytes, filename: str) -> str:
    """The column box's guess for an upload whose header lacks required columns (``""`` when it has
    them, or when some missing one looks like none of its columns: then the message says what is missing)."""
    from simplex_core.data.column_mapping import columns_text, guess_columns
    from simplex_core.data.reading import REQUIRED_COLUMNS

    try:
        frame = read_upload(data, filename)
    except ValidationError:
        return ""
    guess = guess_columns(frame.columns)
    header = {str(c).strip().lower() for c in frame.columns}
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    return columns_text(guess) if missing and set(guess) == set(missing) else ""


@st.cache_resource(show_spinner=False, max_entries=16)
def select(_table: JudgmentTable, table_key: str, drop_candidates: tuple[str, ...] = (),
           drop_judges: tuple[str, ...] = ()) -> JudgmentTable:
    """The table without the candidates and judges the Data page leaves out
    (:func:`simplex_core.data.selection.select_models`; the same table when none is)."""
    from simplex_core.data.selection import select_models

    return select_models(_table, drop_candidates=drop_candidates, drop_judges=drop_judges)


@st.cache_resource(show_spinner=False, max_entries=16)
def label_free(_table: JudgmentTable, table_key: str) -> JudgmentTable:
    """The table without its gold column (:func:`simplex_core.studies.labelled_ranking.without_labels`),
    one object per table, so that its data hash and the fits keyed by it are computed once."""
    from simplex_core.studies.labelled_ranking import without_labels

    return without_labels(_table)


@st.cache_resource(show_spinner=False, max_entries=32)
def collapse(_table: JudgmentTable, table_key: str, mapping: tuple[tuple[float, float], ...],
             labels: tuple[tuple[float, str], ...] = ()) -> JudgmentTable:
    """The table with its levels collapsed through ``mapping`` (old value → new value)."""
    return collapse_levels(_table, dict(mapping), dict(labels) or None)


def default_three_level_mapping(table: JudgmentTable, criterion: CriterionInfo | None) -> tuple[tuple[tuple[float, float], ...], tuple[tuple[float, str], ...], str]:
    """The mapping to 3 levels the app proposes: the dataset's suggestion, else the paper's."""
    values = set(table.scale.values)
    suggestion = criterion.collapse_to_3 if criterion is not None else None
    if suggestion is not None and {float(k) for k in suggestion.mapping} == values:
        return (tuple(sorted((float(k), float(v)) for k, v in suggestion.mapping.items())),
                tuple(sorted((float(k), str(v)) for k, v in suggestion.labels.items())), suggestion.why)
    mapping = paper_three_level_mapping(table.scale)
    why = ("The paper's MTBench mapping (appendix D): {1,2}→1, {3}→2, {4,5}→3."
           if table.scale.values == (1.0, 2.0, 3.0, 4.0, 5.0)
           else "Three contiguous groups of near-equal size (the paper gives mappings for 1–5 scales only).")
    groups: dict[float, list[str]] = {}
    for old, new in sorted(mapping.items()):
        groups.setdefault(new, []).append(table.scale.label_of(old))
    names = {1.0: "low", 2.0: "mid", 3.0: "high"}
    labels = tuple((new, f"{names.get(new, format_level(new))} ({members[0]}–{members[-1]})" if len(members) > 1
                    else f"{names.get(new, format_level(new))} ({members[0]})") for new, members in sorted(groups.items()))
    return tuple(sorted(mapping.items())), labels, why


# -- derived tables -------------------------------------------------------------------------------

@st.cache_data(show_spinner=False, max_entries=32)
def distribution(_table: JudgmentTable, table_key: str) -> pd.DataFrame:
    """Per judge and candidate, the count and share of each level (long form)."""
    return score_distribution(_table)


@st.cache_data(show_spinner=False, max_entries=32)
def distribution_wide(_table: JudgmentTable, table_key: str) -> pd.DataFrame:
    """The paper's appendix-D layout: rows candidates, columns ``judge | level``, counts
    (:func:`simplex_core.data.views.score_distribution_wide`)."""
    out = score_distribution_wide(_table)
    out.columns = [f"{j} | {lab}" for j, lab in out.columns]
    return out


_HASHES: dict[int, str] = {}


def table_key(table: JudgmentTable) -> str:
    """A cache key for a table: its data hash, computed once per table object (it costs a
    serialisation of the whole table)."""
    key = _HASHES.get(id(table))
    if key is None:
        key = table.data_hash()
        _HASHES[id(table)] = key
        weakref.finalize(table, _HASHES.pop, id(table), None)
    return key


def rows_table(table: JudgmentTable) -> pd.DataFrame:
    """The table's rows for download, scores written as the file wrote them: whole levels as
    integers (1, not 1.0); a fractional true_score (a mean of raters) stays as it is."""
    frame = table.frame.copy()
    for col in ("score", "true_score"):
        if col in frame.columns:
            values = frame[col]
            if values.notna().any() and (values.dropna() % 1 == 0).all():
                frame[col] = values.astype("Int64")
    return frame


@st.cache_data(show_spinner=False, max_entries=16)
def truth_ranks(_table: JudgmentTable, table_key: str) -> pd.Series | None:
    """True ranks (rank 1 = best; mean true_score per candidate) when the table has truth."""
    if not _table.has_truth:
        return None
    from simplex_core.data.views import item_view
    from simplex_core.summaries.evaluation import true_ranks

    return true_ranks(item_view(_table))


@st.cache_data(show_spinner="Running the baselines…", max_entries=16)
def baseline_results(_table: JudgmentTable, table_key: str, self_exclusion: bool, seed: int = 0) -> tuple[dict[str, Any], dict[str, str]]:
    """Every baseline on the table, each on its own: ({method: MethodResult}, {method: why it could
    not run}). Bootstrap and Bradley–Terry intervals included; PPI when the table has truth."""
    from simplex_core.methods import baselines
    from simplex_core.data.views import item_view

    view = item_view(_table)
    methods = baselines.table_baseline_methods(_table, self_exclusion=self_exclusion)
    done: dict[str, Any] = {}
    failed: dict[str, str] = {}
    for name, method in methods.items():
        try:  # one method's failure (e.g. a candidate never compared pairwise) must not hide the others
            done.update(baselines.run_methods(view, {name: method}, rng=seed))
        except ValueError as exc:
            failed[name] = str(exc)
    return done, failed
