"""Judge diagnostics on hand-computed item views: errors, their decomposition, modal shares,
confusion against the truth, shrinkage and which judge a ranking follows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simplex_core.summaries import judge_diagnostics as JD


def _view(rows):
    """rows: (item, candidate, {judge: score}, true_score)."""
    idx = pd.MultiIndex.from_tuples([(i, c) for i, c, _, _ in rows], names=["item", "candidate"])
    judges = sorted({j for _, _, s, _ in rows for j in s})
    data = {j: [s.get(j, np.nan) for _, _, s, _ in rows] for j in judges}
    data["true_score"] = [t for *_, t in rows]
    return pd.DataFrame(data, index=idx)


# Two items x three candidates; judge "a" is lenient by +1 on every answer, judge "b" is exact
# except +1 on candidate "z" (a candidate-dependent bias).
VIEW = _view([
    ("i1", "x", {"a": 2, "b": 1}, 1), ("i1", "y", {"a": 3, "b": 2}, 2), ("i1", "z", {"a": 4, "b": 4}, 3),
    ("i2", "x", {"a": 3, "b": 2}, 2), ("i2", "y", {"a": 4, "b": 3}, 3), ("i2", "z", {"a": 2, "b": 2}, 1),
])


def test_truth_and_judge_means_by_candidate():
    assert JD.truth_means(VIEW).to_dict() == {"x": 1.5, "y": 2.5, "z": 2.0}
    m = JD.judge_means(VIEW)
    assert m.loc["a"].to_dict() == {"x": 2.5, "y": 3.5, "z": 3.0}
    assert m.loc["b"].to_dict() == {"x": 1.5, "y": 2.5, "z": 3.0}


def test_errors_split_into_leniency_and_candidate_bias():
    e = JD.judge_errors(VIEW)
    assert e.loc["a"].tolist() == [1.0, 1.0, 1.0] and e.loc["b"].tolist() == [0.0, 0.0, 1.0]
    dec = JD.error_decomposition(e)
    assert dec["leniency"]["a"] == pytest.approx(1.0) and dec["leniency"]["b"] == pytest.approx(1 / 3)
    # a's error does not depend on the candidate; b's does (+2/3 on z, -1/3 elsewhere)
    assert dec["interaction_sd"]["a"] == pytest.approx(0.0)
    assert dec["interaction_sd"]["b"] == pytest.approx(np.std([-1 / 3, -1 / 3, 2 / 3]))
    assert dec["consensus"]["z"] == pytest.approx(1 / 3)
    assert np.isnan(dec["shared_corr"])  # a's interaction is constant: no correlation defined


def test_shared_corr_sees_judges_erring_on_the_same_candidates():
    cands = ["p", "q", "r", "s"]
    same = pd.DataFrame([[0.0, 0.1, 0.5, 0.0], [0.2, 0.3, 0.7, 0.2]], index=["j1", "j2"], columns=cands)
    assert JD.error_decomposition(same)["shared_corr"] == pytest.approx(1.0)
    opposite = pd.DataFrame([[0.0, 0.0, 0.4, 0.0], [0.0, 0.0, -0.4, 0.0]], index=["j1", "j2"], columns=cands)
    assert JD.error_decomposition(opposite)["shared_corr"] == pytest.approx(-1.0)
    # a missing cell (excluded pair) is skipped, not read as zero
    gap = same.copy()
    gap.loc["j2", "p"] = np.nan
    assert JD.error_decomposition(gap)["shared_corr"] == pytest.approx(1.0)


def test_modal_share_and_rounding():
    assert JD.modal_share(VIEW).to_dict() == {"a": pytest.approx(2 / 6), "b": pytest.approx(3 / 6)}
    assert JD.round_to_levels(np.array([1.0, 2.5, 2.49, 4 / 3, 5 / 3, 7.0]), [1, 2, 3, 4, 5]).tolist() == [1, 3, 2, 1, 2, 5]


def test_empirical_confusion_and_balanced_accuracy():
    c = JD.empirical_confusion(VIEW, "b", [1, 2, 3, 4], [1, 2, 3, 4])
    # truth 1: b said 1 (x/i1) and 2 (z/i2); truth 2: 2, 2; truth 3: 4, 3; truth 4: never
    assert c.loc[1].tolist() == [0.5, 0.5, 0.0, 0.0]
    assert c.loc[2].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert c.loc[3].tolist() == [0.0, 0.0, 0.5, 0.5]
    assert c.loc[4].isna().all()
    assert JD.balanced_accuracy(c) == pytest.approx((0.5 + 1.0 + 0.5) / 3)
    assert JD.balanced_accuracy(np.eye(3)) == 1.0


def test_shrinkage_reads_slope_offset_and_coverage():
    truth = pd.Series([0.2, 0.5, 0.8], index=["a", "b", "c"])
    shrunk = 0.5 + 0.5 * (truth - 0.5) + 0.1  # half the spread, 0.1 too high
    lo, hi = shrunk - 0.04, shrunk + 0.04
    r = JD.shrinkage(shrunk, truth, lo, hi)
    assert r["slope"] == pytest.approx(0.5) and r["offset"] == pytest.approx(0.1) and r["pearson"] == pytest.approx(1.0)
    assert r["covered"] == pytest.approx(0.0)  # 0.45, 0.6, 0.75 ± 0.04 miss 0.2, 0.5, 0.8
    wide = JD.shrinkage(shrunk, truth, shrunk - 0.2, shrunk + 0.2)
    assert wide["covered"] == pytest.approx(2 / 3)  # b (0.4-0.8) and c (0.55-0.95) hold theirs, a (0.25-0.65) misses 0.2
    assert np.isnan(JD.shrinkage(shrunk, truth)["covered"])


def test_follows_names_the_judge_the_ranking_is_closest_to():
    scores = pd.Series([3.0, 2.0, 1.0, 0.0], index=list("wxyz"))
    means = pd.DataFrame([[9, 8, 7, 6], [6, 7, 8, 9], [1, 3, 2, np.nan]], index=["same", "reversed", "partial"], columns=list("wxyz"))
    f = JD.follows(scores, means)
    assert f["same"] == pytest.approx(1.0) and f["reversed"] == pytest.approx(-1.0)
    assert f["partial"] == pytest.approx(-0.5)  # over w, x, y only
    assert np.isnan(JD.spearman_with(pd.Series([1.0, 1.0, 1.0], index=list("abc")), pd.Series([1.0, 2.0, 3.0], index=list("abc"))))


def test_conditional_dependence_is_zero_for_independent_judges_and_high_for_copies():
    rng = np.random.default_rng(0)
    n = 4000
    truth = rng.integers(0, 2, n).astype(float)
    flip = lambda: np.where(rng.random(n) < 0.2, 1 - truth, truth)  # noqa: E731  20% errors, independent
    idx = pd.MultiIndex.from_arrays([np.arange(n).astype(str), np.repeat("c", n)], names=["item", "candidate"])
    indep = pd.DataFrame({"a": flip(), "b": flip(), "true_score": truth}, index=idx)
    assert abs(JD.conditional_dependence(indep, [0, 1])) < 0.05
    shared = flip()
    copies = pd.DataFrame({"a": shared, "b": np.where(rng.random(n) < 0.05, 1 - shared, shared), "true_score": truth}, index=idx)
    assert JD.conditional_dependence(copies, [0, 1]) > 0.6
    # too few answers per true level: undefined rather than a number from noise
    assert np.isnan(JD.conditional_dependence(VIEW, [1, 2, 3, 4]))


def test_truth_rank_intervals_are_wide_for_near_ties_and_narrow_for_clear_gaps():
    rng = np.random.default_rng(1)
    n = 300
    items = [f"i{i}" for i in range(n)]
    # a far ahead; b and c tied in truth (both 0/1 with p = 0.5)
    rows = [(i, "a", {}, 1.0) for i in items] + [(i, c, {}, float(rng.random() < 0.5)) for i in items for c in ("b", "c")]
    view = pd.DataFrame(
        {"true_score": [t for *_, t in rows]},
        index=pd.MultiIndex.from_tuples([(i, c) for i, c, _, _ in rows], names=["item", "candidate"]))
    iv = JD.truth_rank_intervals(view, n_boot=400, seed=0)
    assert iv.loc["a"].tolist() == [1.0, 1.0]
    assert iv.loc["b", "rank_lo"] == 2.0 and iv.loc["b", "rank_hi"] == 3.0
    assert iv.loc["c", "rank_lo"] == 2.0 and iv.loc["c", "rank_hi"] == 3.0
