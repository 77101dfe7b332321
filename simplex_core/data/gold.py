"""Gold labels for experiments: which answers' true scores the model sees.

A *gold* answer (item, candidate) is one whose true score is a known label; the shared-truth
likelihood takes its true level as observed (see :mod:`simplex_core.data.patterns`). Real gold labels
come from a ``gold`` column (validated in :mod:`simplex_core.data.validation`); this module draws them at
random from answers that have a ``true_score``, for experiments:

- :func:`labelled_item_mask`: the draw of labelled *items* shared by the PPI baselines (``ppi_5``,
  ``ppi_10``) and the Bayesian gold methods (``bayesian_gold_5``, ``bayesian_gold_10``): with the
  same generator both label exactly the same items, so they are compared at the same labels;
- :func:`labelled_items`: that draw over an item view's items (in the view's order);
- :func:`mark_gold`: a table with the answers of given items marked gold;
- :func:`draw_gold`: ``--gold-fraction F --seed S``: a random share F of the answers that have a
  true score marked gold.

A true score that is not a true level (e.g. a mean of three raters) is rounded to the nearest true
level (the lower one on a tie) when marked gold here, and a note says how many were rounded.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

import numpy as np
import pandas as pd

from simplex_core.data.table import JudgmentTable

__all__ = ["labelled_item_mask", "labelled_items", "mark_gold", "draw_gold", "nearest_true_level"]


def labelled_item_mask(n_items: int, fraction: float, rng: np.random.Generator | int | None) -> np.ndarray:
    """Boolean mask ``[I]`` of the labelled items: ``max(1, round(fraction * I))`` items, the first
    ones of ``rng.permutation(n_items)`` (the draw PPI makes first from its generator)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"labelled_fraction must be strictly between 0 and 1; got {fraction}.")
    n_lab = max(1, int(round(fraction * n_items)))
    if n_lab >= n_items:
        raise ValueError(
            f"With {n_items} items a labelled fraction of {fraction} leaves no unlabelled item: "
            "PPI needs more items or a smaller fraction."
        )
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(0 if rng is None else rng)
    mask = np.zeros(n_items, dtype=bool)
    mask[gen.permutation(n_items)[:n_lab]] = True
    return mask


def labelled_items(view: pd.DataFrame, fraction: float, rng: np.random.Generator) -> list[str]:
    """The items of an item view labelled by :func:`labelled_item_mask` (items in the view's order
    of first appearance, as :func:`simplex_core.methods.method_base.score_array` orders them)."""
    items = list(dict.fromkeys(view.index.get_level_values("item")))
    mask = labelled_item_mask(len(items), fraction, rng)
    return [it for it, m in zip(items, mask) if m]


def nearest_true_level(values: np.ndarray, true_values: Iterable[float]) -> np.ndarray:
    """Each value replaced by the nearest true level (the lower one on a tie); NaN stays NaN."""
    levels = np.asarray(tuple(true_values), dtype=float)
    values = np.asarray(values, dtype=float)
    out = levels[np.argmin(np.abs(values[..., None] - levels), axis=-1)]
    return np.where(np.isnan(values), np.nan, out)


def mark_gold(table: JudgmentTable, answers: pd.MultiIndex | Iterable[tuple[str, str]], *,
              why: str = "") -> JudgmentTable:
    """A new table whose rows of the given (item, candidate) answers are gold, where the answer has a
    true score (answers without one stay unlabelled). Gold true scores off the true levels are rounded
    to the nearest level; a note says how many answers are gold and how many were rounded."""
    frame = table.frame
    if "true_score" not in frame.columns:
        raise ValueError("Gold labels need a true_score column: this table has no ground truth.")
    answers = pd.MultiIndex.from_tuples(list(answers), names=["item", "candidate"]) if not isinstance(answers, pd.MultiIndex) else answers
    key = pd.MultiIndex.from_arrays([frame["item"], frame["candidate"]])
    gold = key.isin(answers) & frame["true_score"].notna().to_numpy()
    if "gold" in frame.columns:
        gold = gold | frame["gold"].to_numpy(dtype=bool)
    truth = frame["true_score"].to_numpy(dtype=float)
    level = nearest_true_level(truth, table.scale.true_values)
    rounded = gold & ~np.isclose(truth, level, atol=1e-9)
    new = frame.assign(gold=gold, true_score=np.where(gold, level, truth))
    n_gold = int(pd.Series(gold).groupby([frame["item"], frame["candidate"]]).any().sum())
    n_rounded = int(pd.Series(rounded).groupby([frame["item"], frame["candidate"]]).any().sum())
    note = f"{n_gold} answer{'s' if n_gold != 1 else ''} marked gold{' (' + why + ')' if why else ''}"
    note += (f"; {n_rounded} of their true scores rounded to the nearest true level." if n_rounded else ".")
    return dataclasses.replace(table, frame=new, notes=tuple(table.notes) + (note,))


def draw_gold(table: JudgmentTable, fraction: float, seed: int = 0) -> JudgmentTable:
    """Mark a random share ``fraction`` of the answers that have a true score as gold (for
    experiments: ``--gold-fraction F --seed S``).

    ``round(fraction * A)`` answers (at least one when ``fraction > 0``) of the A answers with a
    true score, drawn by ``numpy.random.default_rng(seed).permutation`` over the answers in table
    order; ``fraction = 1`` labels every one (plain supervised estimation).
    """
    if not 0.0 <= float(fraction) <= 1.0:
        raise ValueError(f"--gold-fraction must be between 0 and 1; got {fraction}.")
    if not table.has_truth:
        raise ValueError(
            f"--gold-fraction draws gold labels from the true_score column, but {table.source} has no "
            "true_score. Use data with a true_score column, or mark gold answers with a gold column."
        )
    if table.n_gold:
        raise ValueError(
            f"{table.source} already marks {table.n_gold} answers gold (its gold column); --gold-fraction "
            "would draw others on top. Drop one of the two."
        )
    frame = table.frame
    answers = frame.loc[frame["true_score"].notna(), ["item", "candidate"]].drop_duplicates()
    n = int(round(float(fraction) * len(answers)))
    if fraction > 0:
        n = max(n, 1)
    pick = np.random.default_rng(seed).permutation(len(answers))[:n]
    chosen = pd.MultiIndex.from_frame(answers.iloc[np.sort(pick)])
    return mark_gold(table, chosen, why=f"--gold-fraction {fraction:g} --seed {seed}: {n} of {len(answers)} answers with a true score")
