"""Views of a validated table that models and figures read: the count tensor (:func:`count_tensor` →
:class:`Counts`, with the answers' score patterns), the item view (one column per judge) and the score
distributions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd

from simplex_core.data.scale import Scale
from simplex_core.data.patterns import NO_SCORE, ScorePatterns, patterns_from_answers
from simplex_core.data.problems import Problem, ValidationError, values_text
from simplex_core.data.table import JudgmentTable


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
            problems.append(Problem("judge_family", f"every judgment of judge{'s' if len(dead) > 1 else ''} {values_text(dead)} is excluded as self-family.",
                                    value=tuple(dead), fix="switch self-family exclusion off, or remove that judge.", setting="self_exclusion"))
        if unseen:
            # Its rank would come from the prior alone: say so rather than rank it silently.
            problems.append(Problem("candidate_family", f"every judgment of candidate{'s' if len(unseen) > 1 else ''} {values_text(unseen)} is excluded as self-family "
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
    N = (counts if counts is not None else count_tensor(table, self_exclusion=False)).N  # counts without self-exclusion
    rows = []
    for a, j in enumerate(table.judges):
        for b, k in enumerate(table.candidates):
            n = int(N[a, b].sum())
            for m, (v, lab) in enumerate(zip(table.scale.values, table.scale.labels)):
                rows.append({"judge": j, "candidate": k, "level": v, "label": lab, "count": int(N[a, b, m]),
                             "n": n, "share": N[a, b, m] / n if n else float("nan"),
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


