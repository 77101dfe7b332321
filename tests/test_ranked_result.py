"""The one builder of a ranked MethodResult (simplex_core.methods.method_base.ranked_result)."""

from __future__ import annotations

import numpy as np

from simplex_core.methods.method_base import ranked_result


def test_scores_ranks_and_interval_from_draws():
    # scores 2, 5, 5: b and c share ranks 1-2 -> 1.5 each, a is 3rd
    draws = np.array([[3, 1, 2], [3, 2, 1], [2, 1, 3], [3, 1, 2]], dtype=float)
    r = ranked_result("m", ("a", "b", "c"), np.array([2.0, 5.0, 5.0]), draws, score_name="log_ability",
                      details={"x": 1.0}, notes=("n",))
    assert r.scores.name == "log_ability" and r.scores.index.name == "candidate"
    assert r.ranks.tolist() == [3.0, 1.5, 1.5]
    # 4 draws at level 0.95: lower order statistic at floor(0.025 * 3) = 0, upper at ceil(0.975 * 3) = 3
    assert r.rank_lo.tolist() == [2.0, 1.0, 1.0] and r.rank_hi.tolist() == [3.0, 2.0, 3.0]
    assert len(r.rank_draws) == 12 and r.rank_draws["candidate"].tolist()[:3] == ["a", "b", "c"]
    assert r.rank_draws["rank"].tolist()[3:6] == [3.0, 2.0, 1.0]
    assert dict(r.details) == {"x": 1.0} and r.notes == ("n",) and not r.uses_labels


def test_without_draws_no_interval():
    r = ranked_result("m", ("a", "b"), np.array([1.0, np.nan]))
    assert not r.has_intervals and r.rank_draws is None
    assert r.ranks.tolist()[0] == 1.0 and np.isnan(r.ranks.tolist()[1])


def test_unscored_candidate_gets_no_interval_only_when_asked():
    draws = np.array([[1, 2], [1, 2]], dtype=float)  # the unscored b is "last" in every replicate
    scores = np.array([3.0, np.nan])
    kept = ranked_result("m", ("a", "b"), scores, draws)
    assert kept.rank_lo.tolist() == [1.0, 2.0] and set(kept.rank_draws["candidate"]) == {"a", "b"}
    blank = ranked_result("m", ("a", "b"), scores, draws, unscored_without_interval=True)
    assert blank.rank_lo.tolist()[0] == 1.0 and np.isnan(blank.rank_lo.tolist()[1]) and np.isnan(blank.rank_hi.tolist()[1])
    assert blank.rank_draws["candidate"].tolist() == ["a", "a"] and blank.rank_draws.index.tolist() == [0, 1]
