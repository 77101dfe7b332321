"""Evaluation: true ranks, Spearman, coverage (with the no-interval convention), resampled intervals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from simplex_core.methods.method_base import MethodResult
from simplex_core.methods.simple_average import bootstrap_ranks
from simplex_core.model.ranks import rank_scores
from simplex_core.summaries.evaluation import EVALUATION_COLUMNS, NoTruthError, candidate_interval_scores, coverage, covered, evaluate_methods, evaluate_results, figure_order, interval_score, interval_width, method_rank_draws, ranked_count, resample_items, spearman, true_ranks

CANDS = ["a", "b", "c", "d"]


def series(values, name="rank"):
    return pd.Series(values, index=pd.Index(CANDS[: len(values)], name="candidate"), name=name, dtype=float)


def result(ranks, lo=None, hi=None, uses_labels=False, draws=None) -> MethodResult:
    r = series(ranks)
    return MethodResult(
        method="m",
        uses_labels=uses_labels,
        scores=-r,
        ranks=r,
        rank_lo=None if lo is None else series(lo),
        rank_hi=None if hi is None else series(hi),
        rank_draws=draws,
    )


def view_with_truth() -> pd.DataFrame:
    # true scores over 2 items: a = (1 + 1) / 2 = 1, b = (1 + 0) / 2 = 0.5, c = (0 + 1) / 2 = 0.5,
    # d = 0 -> true ranks a = 1, b = c = 2.5 (tie for 2nd and 3rd), d = 4
    truth = {"a": [1, 1], "b": [1, 0], "c": [0, 1], "d": [0, 0]}
    judge = {"a": [1, 1], "b": [1, 1], "c": [0, 0], "d": [0, 1]}
    index = pd.MultiIndex.from_product([["q1", "q2"], CANDS], names=["item", "candidate"])
    return pd.DataFrame(
        {
            "J": [float(judge[c][i]) for i in range(2) for c in CANDS],
            "true_score": [float(truth[c][i]) for i in range(2) for c in CANDS],
        },
        index=index,
    )


def test_true_ranks_average_ties():
    assert true_ranks(view_with_truth()).to_dict() == {"a": 1.0, "b": 2.5, "c": 2.5, "d": 4.0}


def test_true_ranks_need_truth():
    with pytest.raises(NoTruthError, match=r"The data has no ground truth \(no 'true_score' column\)"):
        true_ranks(view_with_truth().drop(columns="true_score"))


def test_spearman_by_hand():
    # d^2 = 0 + 0 + 1 + 1 -> 1 - 6 * 2 / (4 * 15) = 0.8
    assert spearman(series([1, 2, 3, 4]), series([1, 2, 4, 3])) == pytest.approx(0.8)
    # with a tie in the truth: x = (1, 2, 3), y = (1, 2.5, 2.5); deviations (-1, 0, 1) and (-1, .5, .5):
    # cov = 1.5, |x| = sqrt(2), |y| = sqrt(1.5) -> r = 1.5 / sqrt(3)
    assert spearman(series([1, 2, 3]), series([1, 2.5, 2.5])) == pytest.approx(1.5 / math.sqrt(3))
    assert spearman(series([4, 3, 2, 1]), series([1, 2, 3, 4])) == pytest.approx(-1.0)


def test_spearman_matches_candidates_by_name_and_takes_partial_rankings_over_what_they_rank():
    reordered = series([1, 2, 3, 4]).iloc[::-1]
    assert spearman(reordered, series([1, 2, 3, 4])) == pytest.approx(1.0)
    # b unranked: a, c, d ranked 1, 2, 3 among themselves, in their true order -> 1 over those three
    assert spearman(series([1, np.nan, 2, 3]), series([1, 2, 3, 4])) == pytest.approx(1.0)
    # ... and against their true order: c, a, d ranked 1, 2, 3 vs true 1, 3, 4 -> (2, 1, 3) vs (1, 2, 3): 0.5
    assert spearman(series([2, np.nan, 1, 3]), series([1, 2, 3, 4])) == pytest.approx(0.5)
    # one ranked candidate cannot be correlated
    assert math.isnan(spearman(series([1, np.nan, np.nan, np.nan]), series([1, 2, 3, 4])))
    # a candidate without a true rank is simply left out
    assert spearman(series([1, 2, 3, 4]), series([1, 2, np.nan, 3])) == pytest.approx(1.0)
    assert math.isnan(spearman(series([1, 1, 1, 1]), series([1, 2, 3, 4])))


def test_coverage_with_inclusive_intervals():
    truth = series([1, 2.5, 2.5, 4])
    res = result([1, 2, 3, 4], lo=[1, 3, 1, 2], hi=[2, 4, 2, 4])
    # a: 1 in [1, 2] yes (inclusive lower end); b: 2.5 in [3, 4] no; c: 2.5 in [1, 2] no;
    # d: 4 in [2, 4] yes (inclusive upper end)
    assert covered(res, truth).tolist() == [True, False, False, True]
    assert coverage(res, truth) == 0.5


def test_coverage_without_intervals_needs_exact_point_rank():
    truth = series([1, 2.5, 2.5, 4])
    # point ranks equal the truth only for a and for the tied pair's average rank 2.5 (b)
    res = result([1, 2.5, 3, 4.0])
    assert covered(res, truth).tolist() == [True, True, False, True]
    assert coverage(res, truth) == 0.75
    # a partial ranking is scored over the candidates it ranks, against their true order among
    # themselves: a, b, d ranked 1, 2, 3 are exactly right (d's true rank 4 is 3 among the three)
    assert covered(result([1, 2, np.nan, 3]), series([1, 2, 3, 4])).tolist() == [True, True, True]
    assert coverage(result([1, 2, np.nan, 3]), series([1, 2, 3, 4])) == 1.0
    assert ranked_count(result([1, 2, np.nan, 3]), series([1, 2, 3, 4])) == (3, 4)
    assert np.isnan(coverage(result([np.nan] * 4), series([1, 2, 3, 4])))


def test_interval_width_and_score_exact_small_cases():
    truth = series([1, 2, 3, 4])
    # [1, K] has width K and, covering everything, score K
    everything = result([1, 2, 3, 4], lo=[1, 1, 1, 1], hi=[4, 4, 4, 4])
    assert interval_width(everything, truth) == 4 and interval_score(everything, truth) == 4
    # an interval missing the true rank by one adds 2 / 0.05 = 40 to its width
    off_by_one = result([2, 2, 3, 4], lo=[2, 2, 3, 4], hi=[3, 2, 3, 4])
    per = candidate_interval_scores(off_by_one, truth)
    assert per["width"].tolist() == [2, 1, 1, 1]
    assert per["interval_score"].tolist() == [42, 1, 1, 1]
    assert interval_score(off_by_one, truth) == pytest.approx(45 / 4)
    # a point rank equal to the truth scores 1, one two ranks off scores 1 + 80
    assert candidate_interval_scores(result([1, 2, 3, 4]), truth)["interval_score"].tolist() == [1, 1, 1, 1]
    assert candidate_interval_scores(result([3, 2, 1, 4]), truth)["interval_score"].tolist() == [81, 1, 81, 1]
    # a lower miss counts as an upper one
    above = result([1, 2, 3, 4], lo=[1, 2, 1, 1], hi=[4, 4, 1, 2])
    assert candidate_interval_scores(above, truth)["interval_score"].tolist() == [4, 3, 1 + 80, 2 + 80]


def test_evaluate_results_reports_price_and_count():
    truth = series([1, 2, 3, 4])
    table = evaluate_results({"wide": result([1, 2, 3, 4], lo=[1] * 4, hi=[4] * 4),
                              "partial": result([1, 2, np.nan, 3])}, truth).set_index("method")
    assert table.loc["wide", "width"] == 4 and table.loc["wide", "width_share"] == 1.0
    assert table.loc["wide", "coverage"] == 1.0 and table.loc["wide", "ranked"] == 4
    assert table.loc["partial", "width"] == 1 and table.loc["partial", "width_share"] == pytest.approx(1 / 3)
    assert (table.loc["partial", "ranked"], table.loc["partial", "candidates"]) == (3, 4)


def ranks_of_truth(view: pd.DataFrame, rng: np.random.Generator) -> MethodResult:
    """An oracle: the true ranks of whatever view it is given, as a point method."""
    truth = true_ranks(view)
    return MethodResult("oracle", False, -truth, truth)


def reversed_truth(view: pd.DataFrame, rng: np.random.Generator) -> MethodResult:
    truth = true_ranks(view)
    reverse = pd.Series(rank_scores(truth.to_numpy()), index=truth.index)
    return MethodResult("reverse", True, truth, reverse, reverse - 0.5, reverse + 0.5)


def test_evaluate_methods_point_figures_without_resampling():
    table = evaluate_methods(view_with_truth(), {"oracle": ranks_of_truth, "reverse": reversed_truth}, ci_resamples=0)
    assert list(table.columns) == list(EVALUATION_COLUMNS)
    oracle = table.set_index("method").loc["oracle"]
    assert oracle["spearman"] == pytest.approx(1.0) and oracle["coverage"] == 1.0 and not oracle["uses_labels"]
    assert all(math.isnan(oracle[c]) for c in ("spearman_lo", "spearman_hi", "coverage_lo", "coverage_hi",
                                               "width_lo", "width_hi", "interval_score_lo", "interval_score_hi"))
    assert oracle["width"] == 1 and oracle["interval_score"] == 1
    # the reversed ranking: true (1, 2.5, 2.5, 4) -> reverse (4, 2.5, 2.5, 1): Spearman -1;
    # intervals [r - 0.5, r + 0.5] contain the truth only for the tied pair b, c -> coverage 0.5
    reverse = table.set_index("method").loc["reverse"]
    assert reverse["spearman"] == pytest.approx(-1.0) and reverse["coverage"] == 0.5 and reverse["uses_labels"]


def test_evaluate_methods_resampled_intervals():
    rng = np.random.default_rng(0)
    n_items = 30
    scores = rng.random((n_items, 4)) + np.array([0.6, 0.4, 0.2, 0.0])
    index = pd.MultiIndex.from_product([[f"q{i}" for i in range(n_items)], CANDS], names=["item", "candidate"])
    view = pd.DataFrame({"J": scores.reshape(-1), "true_score": scores.reshape(-1)}, index=index)
    lines: list[str] = []
    table = evaluate_methods(view, {"oracle": ranks_of_truth}, ci_resamples=8, rng=5, progress=lines.append).set_index("method")
    assert lines[-1] == "item resample 8 of 8 done (1 method)" and len(lines) == 8  # a line per tenth, at least one each
    # the oracle recomputes the truth of every resample: every figure is exactly 1
    assert table.loc["oracle", ["spearman", "spearman_lo", "spearman_hi"]].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert table.loc["oracle", ["coverage", "coverage_lo", "coverage_hi"]].tolist() == [1.0, 1.0, 1.0]
    # same seed, same table; a real method's interval brackets figures between -1 and 1
    methods = {"bootstrap": lambda v, g: bootstrap_ranks(v, 50, g)}
    first = evaluate_methods(view, methods, ci_resamples=6, rng=3)
    pd.testing.assert_frame_equal(first, evaluate_methods(view, methods, ci_resamples=6, rng=3))
    row = first.iloc[0]
    assert -1.0 <= row["spearman_lo"] <= row["spearman_hi"] <= 1.0
    assert 0.0 <= row["coverage_lo"] <= row["coverage_hi"] <= 1.0


def test_evaluate_methods_population_ranks_replace_the_truth():
    view = view_with_truth().drop(columns="true_score")
    population = series([4, 3, 2, 1])
    fixed = {"fixed": lambda v, g: result([1, 2, 3, 4])}
    table = evaluate_methods(view, fixed, ci_resamples=3, rng=0, population_ranks=population)
    assert table.loc[0, "spearman"] == pytest.approx(-1.0)
    assert table.loc[0, "spearman_lo"] == pytest.approx(-1.0) and table.loc[0, "coverage_hi"] == 0.0


def test_evaluate_methods_without_truth():
    with pytest.raises(NoTruthError, match="no ground truth"):
        evaluate_methods(view_with_truth().drop(columns="true_score"), {"oracle": ranks_of_truth})


def test_evaluate_methods_names_the_failing_method():
    def broken(view, rng):
        raise ValueError("cannot rank")

    with pytest.raises(ValueError, match="cannot rank") as info:
        evaluate_methods(view_with_truth(), {"broken": broken}, ci_resamples=0)
    assert "(while running method 'broken' on the full data)" in info.value.__notes__


def test_resample_items_relabels_repeats():
    view = view_with_truth()
    out = resample_items(view, np.array([1, 1, 0]))
    assert list(dict.fromkeys(out.index.get_level_values("item"))) == ["q2#0", "q2#1", "q1#2"]
    np.testing.assert_array_equal(out.loc["q2#1"].to_numpy(), view.loc["q2"].to_numpy())
    np.testing.assert_array_equal(out.loc["q1#2"].to_numpy(), view.loc["q1"].to_numpy())
    assert list(out.index.names) == ["item", "candidate"] and len(out) == 12


def test_method_rank_draws_long_table():
    draws = pd.DataFrame({"replicate": [0, 0, 1, 1], "candidate": ["a", "b", "a", "b"], "rank": [1.0, 2.0, 2.0, 1.0]})
    with_draws = result([1, 2], lo=[1, 1], hi=[2, 2], uses_labels=True, draws=draws)
    point = result([2, 1])
    long = method_rank_draws({"boot": with_draws, "avg": point})
    assert list(long.columns) == ["method", "candidate", "rank", "uses_labels"]
    assert long["method"].tolist() == ["boot"] * 4 + ["avg"] * 2
    assert long.loc[long["method"] == "avg", "rank"].tolist() == [2.0, 1.0]
    assert long.groupby("method")["uses_labels"].first().to_dict() == {"avg": False, "boot": True}


def test_figure_order_by_truth_else_median_then_mean_rank_never_by_name():
    draws = pd.DataFrame({
        "method": ["bayesian"] * 9 + ["simple_average"] * 4,
        # a and c share median rank 2; c's mean rank is better; z is ranked by the baseline only
        "candidate": ["a", "a", "a", "c", "c", "c", "b", "b", "b", "a", "b", "c", "z"],
        "rank": [2, 2, 3, 1, 2, 2, 1, 1, 1, 2, 1, 3, 4],
    })
    assert figure_order(draws) == ["b", "c", "a", "z"]
    assert figure_order(draws, method="simple_average") == ["b", "a", "c", "z"]
    truth = pd.Series({"z": 1.0, "a": 2.0, "b": 3.0, "c": 4.0})
    assert figure_order(draws, truth) == ["z", "a", "b", "c"]
