"""Views of a validated table that models and figures read: the count tensor (:func:`count_tensor` →
:class:`Counts`, with the answers' score patterns), the item view (one column per judge) and the score
distributions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

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


#: A judge's own-family judgments, kept apart (see :func:`count_tensor`), are the rater of this name.
OWN_FAMILY_SUFFIX = " · own family"


def own_family_rater(judge: str) -> str:
    """The name of the rater that holds ``judge``'s judgments of its own family's candidates."""
    return f"{judge}{OWN_FAMILY_SUFFIX}"


def self_family_mask(table: JudgmentTable) -> np.ndarray:
    """``[J, K]``: judge j and candidate k share a model family (the table's judges and candidates order)."""
    return np.array([[table.is_self_family(j, k) for k in table.candidates] for j in table.judges],
                    dtype=bool).reshape(len(table.judges), len(table.candidates))


def _row_codes(table: JudgmentTable) -> tuple[np.ndarray, np.ndarray]:
    """Each row's judge and candidate index in the table's order."""
    return (pd.Categorical(table.frame["judge"], categories=table.judges).codes.astype(np.int64),
            pd.Categorical(table.frame["candidate"], categories=table.candidates).codes.astype(np.int64))


def kept_apart_frame(table: JudgmentTable, raters: Sequence[str]) -> pd.DataFrame:
    """The table's rows with each self-family judgment under its own-family rater's name
    (:func:`own_family_rater`) wherever ``raters`` (a :class:`Counts`'s judges) has that rater: the
    judgments as the model saw them."""
    apart = {r for r in raters if r.endswith(OWN_FAMILY_SUFFIX)}
    frame = table.frame
    if not apart:
        return frame
    has_rater = np.array([own_family_rater(j) in apart for j in table.judges], dtype=bool)
    j_idx, k_idx = _row_codes(table)
    own = (self_family_mask(table) & has_rater[:, None])[j_idx, k_idx]
    judge = frame["judge"].astype(object).where(~own, frame["judge"].astype(str) + OWN_FAMILY_SUFFIX)
    return frame.assign(judge=judge)


def count_tensor(table: JudgmentTable, self_exclusion: bool | str = True) -> Counts:
    """Count tensor N[j, k, m] of judge j giving observed level m to candidate k.

    How self-family judgments (a judge scoring a candidate of its own model family) are treated:

    - ``True`` (the default): **kept apart**. They leave the judge's own vertices and become a rater of
      their own, ``"<judge> · own family"`` (:func:`own_family_rater`), with vertices of its own: the
      paper's Moderate Constancy (one confusion matrix for every other candidate, a separate one when
      the judge scores its own family). The shared-truth likelihood learns the separate vertices from
      the same answers' other judges, so a self-preference is modelled rather than thrown away, and a
      candidate keeps every judgment it has.
    - ``"drop"``: left out of the likelihood (marked not included), the paper's practice.
    - ``False``: pooled with the judge's other judgments.

    With ``True`` or ``"drop"`` every candidate must keep at least one judge of another family (its
    own family's judges alone cannot be told apart from a self-preference), and every judge some
    judgment of another family: otherwise a :class:`ValidationError` says which.
    """
    mode = "pool" if self_exclusion is False else "drop" if self_exclusion == "drop" else "apart"
    if mode == "apart" and self_exclusion is not True:
        raise ValueError(f"self_exclusion must be True, False or 'drop', not {self_exclusion!r}")
    J, K, M = len(table.judges), len(table.candidates), table.scale.n_levels
    j_idx, k_idx = _row_codes(table)
    m_idx = np.searchsorted(np.asarray(table.scale.values), table.frame["score"].to_numpy())
    own = self_family_mask(table) if mode != "pool" else np.zeros((J, K), dtype=bool)
    judges = list(table.judges)
    families = dict(table.families)
    apart: list[int] = []
    if mode == "apart" and own.any():
        scored = np.zeros((J, K), dtype=bool)
        scored[j_idx, k_idx] = True
        apart = [a for a in range(J) if (own[a] & scored[a]).any()]
        rater = {a: J + p for p, a in enumerate(apart)}
        rows = own[j_idx, k_idx]
        j_idx = j_idx.copy()
        j_idx[rows] = [rater[a] for a in j_idx[rows]]
        for a in apart:
            judges.append(own_family_rater(table.judges[a]))
            if table.judges[a] in families:
                families[judges[-1]] = families[table.judges[a]]
    N = np.zeros((len(judges), K, M), dtype=np.int64)
    np.add.at(N, (j_idx, k_idx, m_idx), 1)
    included = np.ones((len(judges), K), dtype=bool)
    included[:J] = ~own
    for p, a in enumerate(apart):
        included[J + p] = own[a]
    excluded = [(table.judges[a], table.candidates[b]) for a, b in zip(*np.nonzero(own))]
    if mode != "pool":
        has_data = N.sum(axis=2) > 0
        dead = [j for a, j in enumerate(table.judges) if not (included[a] & has_data[a]).any()]
        # the judges of another family: a candidate only its own family scored has nothing to be
        # compared with (kept apart, its raters' vertices could not be told from its quality)
        outside = included[:J] & has_data[:J]
        unseen = [k for b, k in enumerate(table.candidates) if not outside[:, b].any() and has_data[:, b].any()]
        problems = []
        if dead:
            problems.append(Problem("judge_family", f"every judgment of judge{'s' if len(dead) > 1 else ''} {values_text(dead)} is excluded as self-family.",
                                    value=tuple(dead), fix="switch self-family exclusion off, or remove that judge.", setting="self_exclusion"))
        if unseen:
            # Its rank would come from its own family's judges alone: say so rather than rank it silently.
            problems.append(_own_family_only(unseen, mode))
        if problems:
            raise ValidationError(problems)
    return Counts(N=N, included=included, judges=tuple(judges), candidates=table.candidates, scale=table.scale,
                  excluded_pairs=tuple(excluded), families=families, data_hash=table.data_hash(),
                  patterns=_answer_patterns(table, j_idx, k_idx, m_idx, included))


def _own_family_only(candidates: Sequence[str], mode: str) -> Problem:
    """The problem of candidates that only judges of their own family scored, in the words of ``mode``
    (``"apart"``: their judgments are kept, as own-family raters; ``"drop"``: they are left out)."""
    many = len(candidates) > 1
    names = f"candidate{'s' if many else ''} {values_text(candidates)}"
    if mode == "apart":
        message = (f"{names} {'have' if many else 'has'} no judge of another family: only judges of "
                   f"{'their' if many else 'its'} own family scored {'them' if many else 'it'}, and those "
                   "judgments, kept apart as own-family raters, cannot tell a self-preference from "
                   f"{'their' if many else 'its'} quality, so the data say nothing about "
                   f"{'them' if many else 'it'}.")
        fix = (f"add a judge of another family, pool self-family judgments with the judges' other judgments, "
               f"or remove {'those candidates' if many else 'that candidate'}.")
    else:
        message = (f"every judgment of {names} is excluded as self-family (only judges of the same family "
                   f"scored {'them' if many else 'it'}), so the data say nothing about {'them' if many else 'it'}.")
        fix = (f"switch self-family exclusion off, add a judge of another family, or remove "
               f"{'those candidates' if many else 'that candidate'}.")
    return Problem("candidate_family", message, value=tuple(candidates), fix=fix, setting="self_exclusion")


def _answer_patterns(table: JudgmentTable, j_idx: np.ndarray, k_idx: np.ndarray, m_idx: np.ndarray,
                     included: np.ndarray) -> ScorePatterns:
    """The table's answers (item, candidate) as score patterns over the judges, gold answers with
    their true level (see :mod:`simplex_core.data.patterns`)."""
    K = len(table.candidates)
    i_idx = pd.Categorical(table.frame["item"], categories=table.items).codes.astype(np.int64)
    answers, row_answer = np.unique(i_idx * K + k_idx, return_inverse=True)
    scores = np.full((answers.size, included.shape[0]), NO_SCORE, dtype=np.int64)
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
        j_idx, k_idx = _row_codes(table)
        frame = frame.assign(score=frame["score"].where(~self_family_mask(table)[j_idx, k_idx]))
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


