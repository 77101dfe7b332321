"""The built-in datasets: a registry over ``assets/datasets/<name>/``.

Each dataset folder holds one table per criterion in the data contract, ``families.json``,
``CARD.md`` (source, licence, every conversion decision) and ``dataset.json`` (the metadata read
here). The folders are produced from the raw files by ``scripts/convert_datasets.py``; users of the
app get them with the repository.

This module owns: :class:`DatasetInfo` / :class:`CriterionInfo` / :class:`CollapseMapping` (frozen
views of ``dataset.json``), :func:`list_datasets`, :func:`get_dataset`, :func:`load_dataset`
(a built-in as a validated :class:`~simplex_core.data.table.JudgmentTable`), :func:`resolve_data`
(DATA = a built-in name or a file), and the one-line / JSON summaries the command line prints.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import pandas as pd


from simplex_core.data.assets import DATASETS_DIR
from simplex_core.data.table import JudgmentTable, load_table
from simplex_core.data.reading import load_families
from simplex_core.data.scale import Scale
from simplex_core.data.scale import format_level as _fmt

#: The dataset the app opens with: small (9 x 9 x 400), binary, with human truth, the primary file of
#: its source paper, and heavy same-family overlap that shows what self-family exclusion does.
DEFAULT_DATASET = "triviaqa-v1"

# Display order; folders not listed here follow in alphabetical order.
_ORDER = ("triviaqa-v1", "triviaqa-v2", "hanna", "topical-chat", "wildbench-v2")


class DatasetError(ValueError):
    """An unknown dataset or criterion, or a dataset folder that cannot be read (the message says which)."""


@dataclass(frozen=True)
class CollapseMapping:
    """A suggested many-to-one map of observed levels onto 3 levels, for simplex views.

    Use with :func:`simplex_core.data.table.collapse_levels` (``collapse_levels(table, m.mapping, m.labels)``).
    """

    name: str
    mapping: Mapping[float, float]
    labels: Mapping[float, str]
    why: str


@dataclass(frozen=True)
class CriterionInfo:
    """One criterion (aspect) of a built-in dataset: its table file, scale and shape."""

    name: str
    title: str
    description: str
    file: Path
    scale: Scale
    n_candidates: int
    n_judges: int
    n_items: int
    n_rows: int
    n_judgments: int
    n_missing: int
    candidates: tuple[str, ...]
    judges: tuple[str, ...]
    has_truth: bool
    collapse_to_3: CollapseMapping | None
    judges_are_prompts_of_one_model: bool

    @property
    def shape_text(self) -> str:
        """``"K x J x n"`` (candidates x judges x items)."""
        return f"{self.n_candidates} x {self.n_judges} x {self.n_items}"


@dataclass(frozen=True)
class DatasetInfo:
    """A built-in dataset as described by its ``dataset.json``."""

    name: str
    title: str
    description: str
    criteria: tuple[CriterionInfo, ...]
    default_criterion: str
    families_file: Path
    has_truth: bool
    licence: str
    licence_warning: str | None
    source: Mapping[str, Any]
    folder: Path
    card_file: Path
    reference_file: Path | None
    n_candidates: int
    n_judges: int
    n_items: int

    @property
    def criterion_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.criteria)

    def criterion(self, name: str | None = None) -> CriterionInfo:
        """The criterion called ``name`` (the default one when ``None``).

        Raises
        ------
        DatasetError
            For an unknown name; the message lists the valid ones.
        """
        wanted = self.default_criterion if name is None else name
        for c in self.criteria:
            if c.name == wanted:
                return c
        raise DatasetError(
            f"Dataset {self.name!r} has no criterion {wanted!r}. Valid criteria: {', '.join(self.criterion_names)} "
            f"(default: {self.default_criterion})."
        )

    @property
    def shape_text(self) -> str:
        """``"K x J x n"`` of the default criterion."""
        return f"{self.n_candidates} x {self.n_judges} x {self.n_items}"

    def families(self) -> dict[str, str]:
        """The {model name: family} mapping of ``families.json``."""
        return load_families(self.families_file)

    def card_text(self) -> str:
        """The dataset card (Markdown)."""
        return self.card_file.read_text(encoding="utf-8")

    def reference(self) -> pd.DataFrame | None:
        """The ranking-level reference table (e.g. Arena ratings), if the dataset ships one."""
        if self.reference_file is None:
            return None
        return pd.read_csv(self.reference_file)


# -- reading dataset.json ------------------------------------------------------------------------

def _collapse_from_json(d: Mapping[str, Any] | None) -> CollapseMapping | None:
    if not d:
        return None
    return CollapseMapping(
        name=str(d["name"]),
        mapping=MappingProxyType({float(k): float(v) for k, v in d["mapping"].items()}),
        labels=MappingProxyType({float(k): str(v) for k, v in d.get("labels", {}).items()}),
        why=str(d.get("why", "")),
    )


def _criterion_from_json(folder: Path, d: Mapping[str, Any]) -> CriterionInfo:
    return CriterionInfo(
        name=str(d["name"]),
        title=str(d.get("title", d["name"])),
        description=str(d.get("description", "")),
        file=folder / d["file"],
        scale=Scale.from_dict(d["scale"]),
        n_candidates=int(d["n_candidates"]),
        n_judges=int(d["n_judges"]),
        n_items=int(d["n_items"]),
        n_rows=int(d.get("n_rows", 0)),
        n_judgments=int(d.get("n_judgments", 0)),
        n_missing=int(d.get("n_missing", 0)),
        candidates=tuple(d.get("candidates", ())),
        judges=tuple(d.get("judges", ())),
        has_truth=bool(d.get("has_truth", False)),
        collapse_to_3=_collapse_from_json(d.get("collapse_to_3")),
        judges_are_prompts_of_one_model=bool(d.get("judges_are_prompts_of_one_model", False)),
    )


def _read_info(folder: Path) -> DatasetInfo:
    path = folder / "dataset.json"
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        criteria = tuple(_criterion_from_json(folder, c) for c in d["criteria"])
        info = DatasetInfo(
            name=str(d["name"]),
            title=str(d.get("title", d["name"])),
            description=str(d.get("description", "")),
            criteria=criteria,
            default_criterion=str(d.get("default_criterion") or criteria[0].name),
            families_file=folder / d.get("families_file", "families.json"),
            has_truth=bool(d.get("has_truth", False)),
            licence=str(d.get("licence", "unknown")),
            licence_warning=d.get("licence_warning") or None,
            source=MappingProxyType(dict(d.get("source", {}))),
            folder=folder,
            card_file=folder / d.get("card", "CARD.md"),
            reference_file=(folder / d["reference_file"]) if d.get("reference_file") else None,
            n_candidates=int(d["n_candidates"]),
            n_judges=int(d["n_judges"]),
            n_items=int(d["n_items"]),
        )
    except (OSError, KeyError, TypeError, ValueError, IndexError) as exc:
        raise DatasetError(
            f"The built-in dataset metadata {path} cannot be read ({type(exc).__name__}: {exc}). "
            "Regenerate it with `python scripts/convert_datasets.py`."
        ) from None
    if info.name != folder.name:
        raise DatasetError(f"{path} names the dataset {info.name!r} but its folder is {folder.name!r}.")
    info.criterion(info.default_criterion)  # the default must be one of the criteria
    return info


def list_datasets() -> list[DatasetInfo]:
    """Every built-in dataset, in display order (the default dataset first)."""
    if not DATASETS_DIR.is_dir():
        return []
    folders = [p for p in DATASETS_DIR.iterdir() if (p / "dataset.json").is_file()]
    rank = {n: i for i, n in enumerate(_ORDER)}
    folders.sort(key=lambda p: (rank.get(p.name, len(_ORDER)), p.name))
    return [_read_info(p) for p in folders]


def dataset_names() -> tuple[str, ...]:
    """The names of the built-in datasets, in display order."""
    return tuple(d.name for d in list_datasets())


def get_dataset(name: str) -> DatasetInfo:
    """The built-in dataset called ``name``.

    Raises
    ------
    DatasetError
        For an unknown name; the message lists the valid ones.
    """
    folder = DATASETS_DIR / str(name)
    if str(name) and "/" not in str(name) and (folder / "dataset.json").is_file():
        return _read_info(folder)
    names = dataset_names()
    raise DatasetError(
        f"No built-in dataset {name!r}. Valid names: {', '.join(names) if names else '(none installed)'}."
    )


def load_dataset(name: str, criterion: str | None = None, **loader_options: Any) -> JudgmentTable:
    """Load a built-in dataset (one criterion) as a validated judgment table.

    Parameters
    ----------
    name
        A built-in dataset name (see :func:`list_datasets`).
    criterion
        One of the dataset's criteria; ``None`` = its default criterion.
    **loader_options
        Passed to :func:`simplex_core.data.table.load_table`. ``scale`` replaces the dataset's declared
        scale. ``families`` replaces the dataset's ``families.json`` when the key is given at all:
        ``families=None`` or ``{}`` means no families (no self-family exclusion).

    Returns
    -------
    JudgmentTable
        With ``source`` = ``"<name>:<criterion>"``, ``criterion`` set, and notes that add to the
        loader's: the licence warning when the dataset has one, and a warning when the judges are
        prompts of one model.

    Raises
    ------
    DatasetError
        Unknown dataset or criterion (a ``ValueError``; the message lists the valid ones).
    simplex_core.data.problems.ValidationError
        When an option (e.g. a ``scale`` that does not fit the scores) makes the table invalid.
    """
    info = get_dataset(name)
    crit = info.criterion(criterion)
    options = dict(loader_options)
    scale = options.pop("scale", None) or crit.scale
    given = "families" in options
    families = options.pop("families") if given else info.families_file
    # the dataset's own families.json covers all its criteria: its names absent here are no slip
    table = load_table(crit.file, scale=scale, families=families, note_unused_families=given, **options)
    notes: list[str] = []
    if info.licence_warning:
        notes.append(f"Licence warning: {info.licence_warning}")
    if crit.judges_are_prompts_of_one_model:
        notes.append(
            f"The {crit.n_judges} judges of criterion {crit.name!r} are prompts of ONE model, not independent judges: "
            "the model treats their agreement as independent evidence, so intervals are too narrow. "
            f"The default criterion {info.default_criterion!r} is the single-judge view."
        )
    return dataclasses.replace(
        table,
        source=f"{info.name}:{crit.name}",
        criterion=crit.name,
        notes=tuple(notes) + tuple(table.notes),
    )


def resolve_data(data: Any, criterion: str | None = None, **loader_options: Any) -> JudgmentTable:
    """DATA as the command line and the app accept it: a built-in name, or a file / DataFrame.

    A string that names a built-in dataset loads it (write ``./NAME`` for a file of that name);
    anything else goes to :func:`simplex_core.data.table.load_table` (``criterion`` then selects rows of a
    ``criterion`` column).
    """
    if isinstance(data, str) and data in dataset_names():
        return load_dataset(data, criterion=criterion, **loader_options)
    return load_table(data, criterion=criterion, **loader_options)


# -- summaries for the command line and the app ----------------------------------------------------

def levels_text(scale: Scale) -> str:
    """Compact level description: ``1..5``, or ``0=incorrect,1=correct`` when labels say more."""
    vals = scale.values
    plain = all(lab == _fmt(v) for v, lab in zip(vals, scale.labels))
    consecutive = all(float(v).is_integer() for v in vals) and all(b - a == 1 for a, b in zip(vals, vals[1:]))
    text = f"{_fmt(vals[0])}..{_fmt(vals[-1])}" if plain and consecutive and len(vals) > 2 else ",".join(
        _fmt(v) if lab == _fmt(v) else f"{_fmt(v)}={lab}" for v, lab in zip(vals, scale.labels)
    )
    if not scale.is_square:
        text += f" (true: {','.join(_fmt(v) for v in scale.true_values)})"
    return text


def _criteria_text(info: DatasetInfo) -> str:
    names = list(info.criterion_names)
    base = [n for n in names if not (n.endswith("-by-prompt") and n[: -len("-by-prompt")] in names)]
    folded = len(base) < len(names)
    shown = [f"{n}*" if n == info.default_criterion else n for n in base]
    return ",".join(shown) + (" (each also <name>-by-prompt)" if folded else "")


def dataset_line(info: DatasetInfo) -> str:
    """One line per dataset for ``python -m simplex_core datasets``: NAME, criteria (* = default),
    K x J x n and levels of the default criterion, truth, and a licence flag."""
    crit = info.criterion()
    other_levels = sorted({levels_text(c.scale) for c in info.criteria} - {levels_text(crit.scale)})
    levels = levels_text(crit.scale) + (f" (also {'; '.join(other_levels)})" if other_levels else "")
    parts = [
        f"{info.name:<13}",
        f"criteria: {_criteria_text(info)}",
        f"{crit.shape_text}",
        f"levels {levels}",
        f"truth: {'yes' if info.has_truth else 'no'}",
    ]
    line = "  ".join(parts)
    if info.licence_warning:
        # the warning's opening words name the restriction ("No licence", "Non-commercial licence")
        line += f"  [{info.licence_warning.split(':', 1)[0].upper()}: research use only]"
    return line


def dataset_summary(info: DatasetInfo) -> dict[str, Any]:
    """Everything about a dataset as plain JSON-able data (``datasets --json``, the app)."""
    return {
        "name": info.name,
        "title": info.title,
        "description": info.description,
        "default": info.name == DEFAULT_DATASET,
        "default_criterion": info.default_criterion,
        "criteria": [
            {
                "name": c.name,
                "title": c.title,
                "candidates": c.n_candidates,
                "judges": c.n_judges,
                "items": c.n_items,
                "judgments": c.n_judgments,
                "missing": c.n_missing,
                "scale": c.scale.to_dict(),
                "levels": levels_text(c.scale),
                "has_truth": c.has_truth,
                "judges_are_prompts_of_one_model": c.judges_are_prompts_of_one_model,
                "collapse_to_3": (
                    {"name": c.collapse_to_3.name, "mapping": {_fmt(k): v for k, v in c.collapse_to_3.mapping.items()}}
                    if c.collapse_to_3 else None
                ),
                "file": str(c.file),
            }
            for c in info.criteria
        ],
        "candidates": info.n_candidates,
        "judges": info.n_judges,
        "items": info.n_items,
        "has_truth": info.has_truth,
        "licence": info.licence,
        "licence_warning": info.licence_warning,
        "source": dict(info.source),
        "card": str(info.card_file),
        "reference_file": str(info.reference_file) if info.reference_file else None,
        "families_file": str(info.families_file),
    }
