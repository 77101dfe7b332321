"""Scoring scales: the ordered observed levels a judge can give and the ordered true levels.

A scale is square when every observed level is also a true level (1..5 scored and meant). It is
non-square when some observed levels exist only as judge outputs, e.g. binary truth (-1 = incorrect,
1 = correct) with an observed abstain level 0. The expected score of a candidate is computed from
the *true level values*; for equally spaced values this ranks exactly as the paper's level indices
1..M do, because E[v] = a + b·E[index] with b > 0.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np


class ScaleError(ValueError):
    """A level specification that cannot be a scale (the message says which part and why).

    ``setting`` names the input it came from (``'levels'`` or ``'true_levels'``), so that each
    front end can point at its own flag or box; None when it came from the data."""

    def __init__(self, message: str, setting: str | None = None):
        super().__init__(message)
        self.setting = setting


def _format_value(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def format_level(v: float) -> str:
    """A level value as people write it: ``3`` for 3.0, ``0.5`` (``:g``) otherwise."""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


@dataclass(frozen=True)
class Scale:
    """Ordered observed levels (values and labels) and the ordered true levels.

    Parameters
    ----------
    values
        Observed level values, strictly ascending.
    labels
        One label per observed level; defaults to the formatted values.
    true_values
        True level values, strictly ascending, each one of ``values``; defaults to ``values``.
    """

    values: tuple[float, ...]
    labels: tuple[str, ...] = field(default=())
    true_values: tuple[float, ...] = field(default=())

    def __post_init__(self) -> None:
        values = tuple(float(v) for v in self.values)
        if len(values) < 2:
            raise ScaleError(f"A scale needs at least 2 levels; got {len(values)}: {list(values)}.")
        if any(not math.isfinite(v) for v in values):
            raise ScaleError(f"Level values must be finite numbers; got {list(values)}.")
        if any(b <= a for a, b in zip(values, values[1:])):
            raise ScaleError(
                f"Level values must be strictly ascending with no repeats; got {list(values)}."
            )
        labels = tuple(str(x) for x in self.labels) if self.labels else tuple(
            _format_value(v) for v in values
        )
        if len(labels) != len(values):
            raise ScaleError(f"{len(labels)} labels for {len(values)} levels: give one label per level.")
        if len(set(labels)) != len(labels):
            raise ScaleError(f"Level labels must be distinct; got {list(labels)}.")
        true_values = tuple(float(v) for v in self.true_values) if self.true_values else values
        missing = [v for v in true_values if v not in values]
        if missing:
            raise ScaleError(
                f"True levels [{', '.join(_format_value(v) for v in missing)}] are not observed levels "
                f"[{', '.join(_format_value(v) for v in values)}]: every true level must be one of the observed levels."
            )
        if len(true_values) < 2:
            raise ScaleError("At least 2 true levels are needed to rank candidates.")
        if any(b <= a for a, b in zip(true_values, true_values[1:])):
            raise ScaleError(f"True level values must be strictly ascending; got {list(true_values)}.")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "true_values", true_values)

    # -- derived -----------------------------------------------------------------------------
    @property
    def n_levels(self) -> int:
        """Number of observed levels (M_obs)."""
        return len(self.values)

    @property
    def n_true(self) -> int:
        """Number of true levels (M_true)."""
        return len(self.true_values)

    @property
    def true_index(self) -> tuple[int, ...]:
        """Position of each true level among the observed levels."""
        return tuple(self.values.index(v) for v in self.true_values)

    @property
    def true_labels(self) -> tuple[str, ...]:
        return tuple(self.labels[i] for i in self.true_index)

    @property
    def is_square(self) -> bool:
        return self.true_values == self.values

    def index_of(self, value: float) -> int:
        """Observed-level index of ``value``; raises ``KeyError`` when it is not a level."""
        try:
            return self.values.index(float(value))
        except ValueError:
            raise KeyError(value) from None

    def label_of(self, value: float) -> str:
        return self.labels[self.index_of(value)]

    def rescale(self, value: np.ndarray | float) -> np.ndarray:
        """Map values on the observed range linearly onto [0, 1] (used by PPI)."""
        lo, hi = self.values[0], self.values[-1]
        return (np.asarray(value, dtype=float) - lo) / (hi - lo)

    def describe(self) -> str:
        obs = ", ".join(
            f"{_format_value(v)}" + (f" ({lab})" if lab != _format_value(v) else "")
            for v, lab in zip(self.values, self.labels)
        )
        if self.is_square:
            return f"{self.n_levels} levels: {obs}"
        true = ", ".join(_format_value(v) for v in self.true_values)
        return f"{self.n_levels} observed levels: {obs}; {self.n_true} true levels: {true}"

    def to_dict(self) -> dict:
        return {"values": list(self.values), "labels": list(self.labels), "true_values": list(self.true_values)}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Scale":
        return cls(tuple(d["values"]), tuple(d.get("labels", ())), tuple(d.get("true_values", ())))

    def key(self) -> str:
        """A stable identifier, usable in cache keys."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]

    @classmethod
    def from_scores(cls, scores: Sequence[float]) -> "Scale":
        """The default scale: the sorted distinct observed scores, square."""
        values = sorted({float(s) for s in scores if s is not None and not (isinstance(s, float) and math.isnan(s))})
        return cls(tuple(values))


# -- level specifications (the command line's --levels / --true-levels, the app's level boxes) -----------------------------------------------------------

def parse_levels(spec: str) -> tuple[tuple[float, ...], tuple[str, ...]]:
    """Parse ``V[:LABEL],...`` (ascending) into values and labels.

    >>> parse_levels("-1:incorrect,0:unsure,1:correct")
    ((-1.0, 0.0, 1.0), ('incorrect', 'unsure', 'correct'))
    """
    values: list[float] = []
    labels: list[str] = []
    parts = [p.strip() for p in spec.split(",")]
    for i, part in enumerate(parts, start=1):
        if not part:
            raise ScaleError(f"Observed levels {spec!r}: item {i} is empty; write V[:LABEL] items separated by commas.",
                             "levels")
        raw_value, _, label = part.partition(":")
        try:
            value = float(raw_value)
        except ValueError:
            raise ScaleError(
                f"Observed levels: item {i} ({part!r}) does not start with a number; write V[:LABEL], e.g. 1:poor.",
                "levels",
            ) from None
        values.append(value)
        labels.append(label.strip() or _format_value(value))
    if any(b <= a for a, b in zip(values, values[1:])):
        raise ScaleError(f"Observed levels must be ascending with no repeats; got {spec!r}.", "levels")
    return tuple(values), tuple(labels)


def parse_true_levels(spec: str) -> tuple[float, ...]:
    """Parse ``V,V,...`` (ascending) into true level values."""
    out: list[float] = []
    for i, part in enumerate((p.strip() for p in spec.split(",")), start=1):
        try:
            out.append(float(part))
        except ValueError:
            raise ScaleError(f"True levels: item {i} ({part!r}) is not a number; write V,V,... ascending.",
                             "true_levels") from None
    if any(b <= a for a, b in zip(out, out[1:])):
        raise ScaleError(f"True levels must be ascending with no repeats; got {spec!r}.", "true_levels")
    return tuple(out)


def scale_from_options(levels: str | None, true_levels: str | None, scores: Sequence[float] | None = None) -> Scale | None:
    """Build a scale from the observed / true level strings; ``None`` when neither is given
    (the loader then uses the sorted distinct scores)."""
    if levels is None and true_levels is None:
        return None
    if levels is None:
        if scores is None:
            raise ScaleError("True levels need the observed levels (or data to read them from).", "levels")
        base = Scale.from_scores(scores)
        values, labels = base.values, base.labels
    else:
        values, labels = parse_levels(levels)
    true_values = parse_true_levels(true_levels) if true_levels else ()
    # built in two steps so that a scale error names the option it came from
    try:
        observed = Scale(values, labels)
    except ScaleError as exc:  # levels read from the data are the data's fault, not an option's
        raise ScaleError(str(exc), "levels" if levels is not None else None) from None
    if not true_values:
        return observed
    try:
        return Scale(values, labels, true_values)
    except ScaleError as exc:
        raise ScaleError(str(exc), "true_levels") from None


# -- collapsing ------------------------------------------------------------------------------------

def collapse_scale(scale: Scale, mapping: Mapping[float, float], labels: Mapping[float, str] | None = None) -> Scale:
    """The scale produced by mapping each observed value to a new value (many to one).

    The new observed levels are the distinct targets; the new true levels are the targets of the old
    true levels. ``labels`` optionally names the new levels.
    """
    missing = [v for v in scale.values if v not in {float(k) for k in mapping}]
    if missing:
        raise ScaleError(
            f"The level mapping does not say where levels [{', '.join(_format_value(v) for v in missing)}] go: "
            "map every observed level."
        )
    m = {float(k): float(v) for k, v in mapping.items()}
    new_values = tuple(sorted({m[v] for v in scale.values}))
    # Monotone maps only: collapsing must not reorder the scale.
    targets = [m[v] for v in scale.values]
    if any(b < a for a, b in zip(targets, targets[1:])):
        raise ScaleError("A level mapping must keep the order of the levels (never map a higher level lower).")
    new_true = tuple(sorted({m[v] for v in scale.true_values}))
    new_labels = tuple((labels or {}).get(v, _format_value(v)) for v in new_values)
    return Scale(new_values, new_labels, new_true)


def parse_level_mapping(text: str, scale: Scale) -> dict[float, float]:
    """Parse ``"1:1, 2:1, 3:2, 4:3, 5:3"`` (old:new per observed level of ``scale``; ``;`` also
    separates). :class:`ScaleError` names every unusable entry, every level left unmapped and every
    value that is not a level."""
    mapping: dict[float, float] = {}
    bad = []
    for part in [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]:
        if ":" not in part:
            bad.append(part)
            continue
        a, b = part.split(":", 1)
        try:
            mapping[float(a)] = float(b)
        except ValueError:
            bad.append(part)
    problems = []
    if bad:
        problems.append(f"these entries are not 'old:new' numbers: {', '.join(repr(b) for b in bad)}")
    missing = [v for v in scale.values if v not in mapping]
    if missing:
        problems.append(f"say where levels {', '.join(format_level(v) for v in missing)} go")
    unknown = [k for k in mapping if k not in scale.values]
    if unknown:
        problems.append(f"{', '.join(format_level(v) for v in unknown)} {'is' if len(unknown) == 1 else 'are'} "
                        f"not a level of the scale ({', '.join(format_level(v) for v in scale.values)})")
    if problems:
        raise ScaleError("The level mapping is not usable: " + "; ".join(problems)
                         + ". Write it as old:new pairs, e.g. 1:1, 2:1, 3:2, 4:3, 5:3.")
    return mapping


def level_mapping_text(mapping: Mapping[float, float] | Sequence[tuple[float, float]]) -> str:
    """The text :func:`parse_level_mapping` reads back: ``"1:1, 2:1, 3:2"`` (sorted by old level)."""
    items = mapping.items() if isinstance(mapping, Mapping) else mapping
    return ", ".join(f"{format_level(a)}:{format_level(b)}" for a, b in sorted(items))


def paper_three_level_mapping(scale: Scale, style: str = "mtbench") -> dict[float, float]:
    """The paper's 5→3 mappings (appendix D, "Score Mapping for Simplex Visualizations").

    ``mtbench``: {1,2}→1, {3}→2, {4,5}→3; ``tldr``: {1,2}→1, {3,4}→2, {5}→3. For other scales with
    more than three levels, the levels are split into three contiguous, near-equal groups.
    """
    vals = scale.values
    if vals == (1.0, 2.0, 3.0, 4.0, 5.0):
        if style == "tldr":
            return {1.0: 1.0, 2.0: 1.0, 3.0: 2.0, 4.0: 2.0, 5.0: 3.0}
        return {1.0: 1.0, 2.0: 1.0, 3.0: 2.0, 4.0: 3.0, 5.0: 3.0}
    groups = np.array_split(np.arange(len(vals)), 3)
    return {vals[i]: float(g + 1) for g, idx in enumerate(groups) for i in idx}
