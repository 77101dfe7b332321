"""Score patterns: the sufficient statistics of the shared-truth likelihood.

This module owns :class:`ScorePatterns` and :func:`score_patterns`. Every judge scores the *same*
answers, so the judges' scores of one answer (item i, candidate k) are one observation of one
latent true level t_ik, not J independent ones. What the shared-truth likelihood of
:mod:`simplex_core.model.definition` needs from the data is therefore, per candidate, each distinct vector of
scores over the judges (a *pattern*: one observed-level index per judge, or "no score" where the
score is missing or the pair is excluded as self-family), the gold true level when the answer is
labelled, and how many answers share it. Summing a pattern's judges over its multiplicity gives back
the count tensor ``N[j, k, m]`` of the per-judge likelihood (checked in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NO_SCORE", "ScorePatterns", "patterns_from_answers"]

#: Code of a judge that gave no usable score to an answer (missing, or excluded as self-family);
#: also the code of "not gold" in :attr:`ScorePatterns.truth`.
NO_SCORE = -1


@dataclass(frozen=True)
class ScorePatterns:
    """Each candidate's distinct answer patterns with their multiplicities.

    Attributes
    ----------
    candidate
        int64 ``[P]``: candidate index of each pattern.
    scores
        int64 ``[P, J]``: observed-level index that judge j gave, :data:`NO_SCORE` where it gave none
        (missing score, or an excluded self-family pair).
    truth
        int64 ``[P]``: true-level index of gold (labelled) answers, :data:`NO_SCORE` for the others.
    weight
        int64 ``[P]``: how many answers have this pattern.
    """

    candidate: np.ndarray
    scores: np.ndarray
    truth: np.ndarray
    weight: np.ndarray

    @property
    def n_patterns(self) -> int:
        return int(self.weight.size)

    @property
    def n_answers(self) -> int:
        return int(self.weight.sum())

    @property
    def n_gold(self) -> int:
        return int(self.weight[self.truth >= 0].sum())

    def count_tensor(self, n_judges: int, n_candidates: int, n_levels: int) -> np.ndarray:
        """``N[j, k, m]``: the per-judge counts these patterns imply (excluded pairs count zero)."""
        N = np.zeros((n_judges, n_candidates, n_levels), dtype=np.int64)
        for j in range(n_judges):
            scored = self.scores[:, j] >= 0
            np.add.at(N[j], (self.candidate[scored], self.scores[scored, j]), self.weight[scored])
        return N


def patterns_from_answers(candidate: np.ndarray, scores: np.ndarray, truth: np.ndarray | None = None,
                          included: np.ndarray | None = None) -> ScorePatterns:
    """Collapse one row per answer into distinct patterns with multiplicities.

    Parameters
    ----------
    candidate
        int ``[A]``: candidate index of each answer.
    scores
        int ``[A, J]``: observed-level index per judge, :data:`NO_SCORE` where there is none.
    truth
        int ``[A]`` or None: gold true-level index, :data:`NO_SCORE` where the answer is not gold.
    included
        bool ``[J, K]`` or None: pairs that enter the likelihood; scores of excluded (self-family)
        pairs become :data:`NO_SCORE`.

    Answers with neither a score nor a gold label carry no information and are left out (their
    likelihood term is exactly 0).
    """
    candidate = np.asarray(candidate, dtype=np.int64)
    scores = np.array(scores, dtype=np.int64, copy=True)
    if scores.ndim != 2 or scores.shape[0] != candidate.size:
        raise ValueError(f"scores must have shape (answers, judges) = ({candidate.size}, J); got {scores.shape}.")
    truth = np.full(candidate.size, NO_SCORE, dtype=np.int64) if truth is None else np.asarray(truth, dtype=np.int64)
    if included is not None:
        excluded = ~np.asarray(included, dtype=bool)[:, candidate].T  # [A, J]
        scores[excluded] = NO_SCORE
    informative = (scores >= 0).any(axis=1) | (truth >= 0)
    rows = np.column_stack([candidate, truth, scores])[informative]
    if rows.shape[0] == 0:
        J = scores.shape[1]
        empty = np.zeros(0, dtype=np.int64)
        return ScorePatterns(candidate=empty, scores=np.zeros((0, J), dtype=np.int64), truth=empty, weight=empty)
    unique, weight = np.unique(rows, axis=0, return_counts=True)
    return ScorePatterns(candidate=np.ascontiguousarray(unique[:, 0]), truth=np.ascontiguousarray(unique[:, 1]),
                         scores=np.ascontiguousarray(unique[:, 2:]), weight=weight.astype(np.int64))
