"""Baselines: single judge, simple average, bootstrap, Bradley-Terry with ties, PPI.

Expected values are worked by hand in the comments or recomputed by a plain re-implementation of
the definition (explicit loops), never copied from the module's output.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simplex_core.methods.baselines import MethodResult, baseline_methods, bootstrap_ranks, bradley_terry, fit_rao_kupper, pairwise_counts, ppi_labelled_items, ppi_mean_estimate, ppi_mean_ranks, rank_interval, rank_scores, rao_kupper_loglik, run_methods, simple_average, single_judge, table_baseline_methods
from simplex_core.data.scale import Scale


def make_view(scores: dict[str, dict[str, list[float]]], truth: dict[str, list[float]] | None = None) -> pd.DataFrame:
    """Item view from {judge: {candidate: [score per item]}} (items named i0, i1, ...)."""
    judges = list(scores)
    candidates = list(scores[judges[0]])
    n_items = len(scores[judges[0]][candidates[0]])
    index = pd.MultiIndex.from_product([[f"i{i}" for i in range(n_items)], candidates], names=["item", "candidate"])
    data = {j: [scores[j][c][i] for i in range(n_items) for c in candidates] for j in judges}
    if truth is not None:
        data["true_score"] = [truth[c][i] for i in range(n_items) for c in candidates]
    return pd.DataFrame(data, index=index)


def avg_rank_desc(values: list[float]) -> list[float]:
    """Rank 1 = largest; ties share the average rank: 1 + #greater + (#equal - 1) / 2."""
    return [1 + sum(w > v for w in values) + (sum(w == v for w in values) - 1) / 2 for v in values]


# -- ranks and intervals ------------------------------------------------------------------------

def test_rank_scores_average_ties_and_nan():
    # scores 3, 1, 3, 2: the two 3s share ranks 1 and 2 -> 1.5; then 2 -> 3; 1 -> 4
    assert rank_scores(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [1.5, 4.0, 1.5, 3.0]
    # NaN gets no rank, the others are ranked among themselves; nan_last puts it last instead
    assert np.array_equal(rank_scores(np.array([1.0, np.nan, 2.0])), [2.0, np.nan, 1.0], equal_nan=True)
    assert rank_scores(np.array([1.0, np.nan, 2.0]), nan_last=True).tolist() == [2.0, 3.0, 1.0]


def test_rank_interval_order_statistics_taken_outward():
    # 41 draws: positions 0.025 * 40 = 1 and 0.975 * 40 = 39 are exact -> sorted[1], sorted[39]
    draws = np.array([1] * 2 + [2] * 37 + [3] * 1 + [4] * 1, dtype=float)[:, None]
    lo, hi = rank_interval(draws)
    assert (lo[0], hi[0]) == (1.0, 3.0)
    # 10 draws: positions 0.225 and 8.775 -> lower = sorted[0], higher = sorted[9]
    draws = np.array([2, 3, 3, 3, 3, 3, 3, 3, 3, 5], dtype=float)[:, None]
    lo, hi = rank_interval(draws)
    assert (lo[0], hi[0]) == (2.0, 5.0)
    # half-integer (tied) ranks are rounded outward
    lo, hi = rank_interval(np.full((20, 1), 1.5))
    assert (lo[0], hi[0]) == (1.0, 2.0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=2, max_size=8))
def test_rank_scores_properties(values):
    ranks = rank_scores(np.array(values, dtype=float))
    k = len(values)
    assert ranks.sum() == pytest.approx(k * (k + 1) / 2)
    assert ranks.tolist() == avg_rank_desc([float(v) for v in values])


# -- single judge and simple average ------------------------------------------------------------

TWO_BY_TWO = make_view(
    {
        "A": {"a": [1, 1], "b": [0, 1]},
        "B": {"a": [0, 0], "b": [1, 1]},
    }
)


def test_simple_average_equal_judge_weight_by_hand():
    # judge means: A: a = 1, b = 0.5; B: a = 0, b = 1 -> a = (1 + 0) / 2 = 0.5, b = (0.5 + 1) / 2 = 0.75
    res = simple_average(TWO_BY_TWO)
    assert res.scores.to_dict() == {"a": 0.5, "b": 0.75}
    assert res.ranks.to_dict() == {"a": 2.0, "b": 1.0}
    assert res.method == "simple_average" and not res.uses_labels and not res.has_intervals


def test_self_exclusion_changes_simple_average_by_hand():
    # dropping (A, a): candidate a is averaged over judge B alone -> 0; b unchanged at 0.75
    res = simple_average(TWO_BY_TWO, excluded={("A", "a")})
    assert res.scores.to_dict() == {"a": 0.0, "b": 0.75}
    # dropping (B, b) instead: b = 0.5 (judge A alone), a = 0.5 -> tie, average rank 1.5 each
    res = simple_average(TWO_BY_TWO, excluded={("B", "b")})
    assert res.scores.to_dict() == {"a": 0.5, "b": 0.5}
    assert res.ranks.to_dict() == {"a": 1.5, "b": 1.5}


def test_simple_average_weights_judges_equally_not_judgments():
    # judge A scored a on both items, judge B only on item 0 (NaN on item 1):
    # per-judge means A = (1 + 0) / 2 = 0.5, B = 1 -> a = 0.75 (pooling the 3 judgments would give 2/3)
    view = make_view({"A": {"a": [1, 0], "b": [0, 0]}, "B": {"a": [1, np.nan], "b": [0, 0]}})
    assert simple_average(view).scores["a"] == pytest.approx(0.75)


def test_self_exclusion_through_a_judgment_table():
    from simplex_core.data.table import load_table

    rows = [
        (item, cand, judge, TWO_BY_TWO.loc[(item, cand), judge])
        for item in ("i0", "i1") for cand in ("a", "b") for judge in ("A", "B")
    ]
    frame = pd.DataFrame(rows, columns=["item", "candidate", "judge", "score"])
    table = load_table(frame, families={"A": "fam-x", "a": "fam-x", "B": "fam-y", "b": "fam-z"})
    with_excl = run_methods_once(table_baseline_methods(table, single_judges=False)["simple_average"], table)
    without = run_methods_once(table_baseline_methods(table, self_exclusion=False)["simple_average"], table)
    assert with_excl.scores.to_dict() == {"a": 0.0, "b": 0.75}  # (A, a) is self-family
    assert without.scores.to_dict() == {"a": 0.5, "b": 0.75}


def run_methods_once(method, table) -> MethodResult:
    from simplex_core.data.views import item_view

    return method(item_view(table), np.random.default_rng(0))


def test_single_judge_means_and_exclusion_note():
    res = single_judge(TWO_BY_TWO, "A")
    assert res.method == "single_judge:A"
    assert res.scores.to_dict() == {"a": 1.0, "b": 0.5}
    assert res.ranks.to_dict() == {"a": 1.0, "b": 2.0}
    res = single_judge(TWO_BY_TWO, "A", excluded={("A", "a")})
    assert math.isnan(res.scores["a"]) and math.isnan(res.ranks["a"])
    assert res.ranks["b"] == 1.0
    assert "no judgments left for ['a']" in res.notes[0]


def test_single_judge_unknown_judge():
    with pytest.raises(ValueError, match=r"Judge 'C' is not a column of the item view; the judges are \['A', 'B'\]"):
        single_judge(TWO_BY_TWO, "C")


def test_view_must_be_indexed_by_item_and_candidate():
    with pytest.raises(ValueError, match=r"indexed by \(item, candidate\); its index levels are \[None\]"):
        simple_average(TWO_BY_TWO.reset_index(drop=True))


# -- bootstrap ----------------------------------------------------------------------------------

def reference_bootstrap(view: pd.DataFrame, n_resamples: int, seed: int) -> np.ndarray:
    """The definition with loops: resample items, per-judge mean per candidate, equal-weight average,
    rank (ties average)."""
    items = list(dict.fromkeys(view.index.get_level_values("item")))
    candidates = list(dict.fromkeys(view.index.get_level_values("candidate")))
    judges = list(view.columns)
    draws_idx = np.random.default_rng(seed).integers(0, len(items), size=(n_resamples, len(items)))
    out = []
    for b in range(n_resamples):
        drawn = [items[p] for p in draws_idx[b]]
        averages = []
        for c in candidates:
            judge_means = []
            for j in judges:
                vals = [view.loc[(it, c), j] for it in drawn if not np.isnan(view.loc[(it, c), j])]
                if vals:
                    judge_means.append(sum(vals) / len(vals))
            averages.append(sum(judge_means) / len(judge_means))
        out.append(avg_rank_desc(averages))
    return np.array(out)


BOOT_VIEW = make_view(
    {
        "A": {"x": [1, 0, 1, 1, 0], "y": [1, 1, 0, 0, 0], "z": [0, 1, 1, 0, 1]},
        "B": {"x": [1, 1, 0, 1, np.nan], "y": [0, 1, 1, 1, 0], "z": [0, 0, 1, 1, 1]},
    }
)


def test_bootstrap_three_candidates_matches_loop_reference():
    res = bootstrap_ranks(BOOT_VIEW, n_resamples=60, rng=np.random.default_rng(7))
    expected = reference_bootstrap(BOOT_VIEW, 60, seed=7)
    got = res.rank_draws.pivot(index="replicate", columns="candidate", values="rank")[["x", "y", "z"]].to_numpy()
    np.testing.assert_allclose(got, expected)
    # the interval is the outward order statistics at positions 0.025 * 59 and 0.975 * 59
    for k, cand in enumerate(["x", "y", "z"]):
        column = np.sort(expected[:, k])
        assert res.rank_lo[cand] == math.floor(column[math.floor(0.025 * 59)])
        assert res.rank_hi[cand] == math.ceil(column[math.ceil(0.975 * 59)])
    # point: x = (3/5 + 3/4) / 2 = 0.675, y = (2/5 + 3/5) / 2 = 0.5, z = (3/5 + 3/5) / 2 = 0.6
    assert res.scores.to_dict() == pytest.approx({"x": 0.675, "y": 0.5, "z": 0.6})
    assert res.ranks.to_dict() == {"x": 1.0, "y": 3.0, "z": 2.0}


def test_bootstrap_constant_items_gives_point_intervals_and_tied_intervals():
    # every item identical: every replicate ranks p first, q and r tied (1.5 -> ranks 2.5)
    view = make_view({"A": {"p": [1, 1, 1], "q": [0, 0, 0], "r": [0, 0, 0]}})
    res = bootstrap_ranks(view, n_resamples=25, rng=3)
    assert res.rank_lo.to_dict() == {"p": 1.0, "q": 2.0, "r": 2.0}
    assert res.rank_hi.to_dict() == {"p": 1.0, "q": 3.0, "r": 3.0}
    assert res.ranks.to_dict() == {"p": 1.0, "q": 2.5, "r": 2.5}
    assert set(res.rank_draws.columns) == {"replicate", "candidate", "rank"}
    assert len(res.rank_draws) == 25 * 3


def test_bootstrap_gives_no_interval_to_a_candidate_with_no_score():
    # every judgment of w excluded (self-family): the replicates rank it last, which is no interval
    view = make_view({"A": {"p": [1, 0, 1], "q": [0, 0, 1], "w": [1, 1, 1]}})
    res = bootstrap_ranks(view, n_resamples=40, rng=5, excluded=[("A", "w")])
    assert np.isnan(res.rank_lo["w"]) and np.isnan(res.rank_hi["w"]) and np.isnan(res.scores["w"])
    assert "w" not in set(res.rank_draws["candidate"]) and len(res.rank_draws) == 40 * 2
    assert res.rank_lo["p"] == 1.0 and res.rank_hi["q"] == 2.0


def test_bootstrap_same_seed_same_result():
    a = bootstrap_ranks(BOOT_VIEW, 30, rng=11)
    b = bootstrap_ranks(BOOT_VIEW, 30, rng=np.random.default_rng(11))
    pd.testing.assert_frame_equal(a.rank_draws, b.rank_draws)


# -- Bradley-Terry with ties -----------------------------------------------------------------------

def test_rao_kupper_loglik_two_candidates_by_hand():
    # pi = (2, 1), theta = 2:
    # P(1 beats 2) = 2 / (2 + 2 * 1) = 0.5; P(2 beats 1) = 1 / (1 + 2 * 2) = 0.2;
    # P(tie) = (4 - 1) * 2 * 1 / ((2 + 2)(1 + 4)) = 6 / 20 = 0.3 (the three sum to 1)
    wins = np.array([[0, 3], [1, 0]])
    ties = np.array([[0, 2], [2, 0]])
    expected = 3 * math.log(0.5) + 1 * math.log(0.2) + 2 * math.log(0.3)
    assert rao_kupper_loglik(np.log([2.0, 1.0]), 2.0, wins, ties) == pytest.approx(expected, rel=1e-12)
    # the likelihood depends on abilities only through their ratios
    assert rao_kupper_loglik(np.log([6.0, 3.0]), 2.0, wins, ties) == pytest.approx(expected, rel=1e-12)


def test_rao_kupper_fit_two_candidates_is_saturated():
    # With two candidates the model has as many free parameters as outcome probabilities, so the MLE
    # reproduces the shares p1 = 3/6, p2 = 1/6: r = pi1/pi2 = sqrt(p1 (1 - p2) / (p2 (1 - p1))) = sqrt(5)
    # and theta^2 = (1 - p1)(1 - p2) / (p1 p2) = 5.
    beta, theta = fit_rao_kupper(np.array([[0, 3], [1, 0]]), np.array([[0, 2], [2, 0]]), ridge=0.0)
    assert beta[0] - beta[1] == pytest.approx(0.5 * math.log(5), abs=1e-6)
    assert beta.sum() == pytest.approx(0.0, abs=1e-12)
    assert theta == pytest.approx(math.sqrt(5), abs=1e-6)


def test_rao_kupper_recovers_abilities_and_tie_parameter():
    true_beta = np.array([0.8, 0.2, -0.3, -0.7])  # sums to zero
    theta = 1.8
    pi = np.exp(true_beta)
    rng = np.random.default_rng(2024)
    k = len(pi)
    wins, ties = np.zeros((k, k)), np.zeros((k, k))
    for a in range(k):
        for b in range(a + 1, k):
            p_a = pi[a] / (pi[a] + theta * pi[b])
            p_b = pi[b] / (pi[b] + theta * pi[a])
            n_a, n_b, n_t = rng.multinomial(5000, [p_a, p_b, 1 - p_a - p_b])
            wins[a, b], wins[b, a] = n_a, n_b
            ties[a, b] = ties[b, a] = n_t
    beta_hat, theta_hat = fit_rao_kupper(wins, ties)
    np.testing.assert_allclose(beta_hat, true_beta, atol=0.1)
    assert abs(theta_hat - theta) < 0.1


def test_pairwise_counts_by_hand_with_missing_and_excluded():
    # item i0: judge A gives p=2, q=1, r=1; judge B gives p=1, q=1, r=NaN
    # item i1: judge A gives p=0, q=2, r=2; judge B gives p=2, q=0, r=1
    view = make_view({"A": {"p": [2, 0], "q": [1, 2], "r": [1, 2]}, "B": {"p": [1, 2], "q": [1, 0], "r": [np.nan, 1]}})
    wins, ties = pairwise_counts(view)
    # p>q: (i0,A); q>p: (i1,A); tie p-q: (i0,B)... and (i1,B) p>q
    assert wins.loc["p", "q"] == 2 and wins.loc["q", "p"] == 1 and ties.loc["p", "q"] == 1
    # p vs r: i0 A p>r; i0 B missing; i1 A r>p; i1 B p>r
    assert wins.loc["p", "r"] == 2 and wins.loc["r", "p"] == 1 and ties.loc["p", "r"] == 0
    # q vs r: i0 A tie; i1 A tie; i1 B r>q
    assert ties.loc["q", "r"] == ties.loc["r", "q"] == 2 and wins.loc["r", "q"] == 1
    assert np.all(np.diag(ties.to_numpy()) == 0)
    # excluding judge B for p drops (i0,B) tie p-q, (i1,B) p>q, (i1,B) p>r
    wins, ties = pairwise_counts(view, excluded={("B", "p")})
    assert wins.loc["p", "q"] == 1 and ties.loc["p", "q"] == 0 and wins.loc["p", "r"] == 1


def test_bradley_terry_on_view_orders_and_intervals():
    rng = np.random.default_rng(5)
    quality = {"best": 0.8, "mid": 0.5, "worst": 0.2}
    scores = {j: {c: list(rng.binomial(1, q, size=80).astype(float)) for c, q in quality.items()} for j in "AB"}
    res = bradley_terry(make_view(scores), n_resamples=40, rng=1)
    assert res.ranks.to_dict() == {"best": 1.0, "mid": 2.0, "worst": 3.0}
    assert res.scores.sum() == pytest.approx(0.0, abs=1e-9)
    assert res.details["theta"] > 1.0
    assert (res.rank_lo <= res.rank_hi).all() and res.rank_lo.min() >= 1 and res.rank_hi.max() <= 3
    assert len(res.rank_draws) == 40 * 3


def test_bradley_terry_candidate_never_compared():
    view = make_view({"A": {"p": [1, 0], "q": [0, 1], "r": [np.nan, np.nan]}})
    with pytest.raises(ValueError, match=r"candidates \['r'\] are never compared with another candidate"):
        bradley_terry(view, n_resamples=5)


# -- PPI ---------------------------------------------------------------------------------------------

def test_ppi_point_estimate_matches_ppi_py():
    from ppi_py import ppi_mean_pointestimate

    rng = np.random.default_rng(0)
    y = rng.binomial(1, 0.6, size=30).astype(float)
    yhat = np.clip(y + rng.normal(0, 0.4, size=30), 0, 1)
    yhat_unl = np.clip(rng.binomial(1, 0.6, size=300) + rng.normal(0, 0.4, size=300), 0, 1)
    assert ppi_mean_estimate(y, yhat, yhat_unl) == pytest.approx(
        float(np.squeeze(ppi_mean_pointestimate(y, yhat, yhat_unl, lam=1))), rel=1e-12
    )
    assert ppi_mean_estimate(y, yhat, yhat_unl, power_tuning=True) == pytest.approx(
        float(np.squeeze(ppi_mean_pointestimate(y, yhat, yhat_unl))), rel=1e-12
    )
    # by hand, lambda = 1: mean of unlabelled predictions + mean of (label - prediction)
    assert ppi_mean_estimate([1.0, 0.0], [0.5, 0.5], [1.0, 0.0, 0.5]) == pytest.approx(0.5 + 0.0)


PPI_SCALE = Scale((-1.0, 0.0, 1.0), ("incorrect", "abstain", "correct"), (-1.0, 1.0))


def ppi_view(n_items: int = 40, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    quality = {"a": 0.75, "b": 0.55, "c": 0.35}
    truth = {c: list(np.where(rng.random(n_items) < q, 1.0, -1.0)) for c, q in quality.items()}
    scores = {}
    for j, acc in (("J1", 0.85), ("J2", 0.7)):
        scores[j] = {}
        for c in quality:
            t = np.array(truth[c])
            s = np.where(rng.random(n_items) < acc, t, -t)
            s[rng.random(n_items) < 0.1] = 0.0  # abstain
            scores[j][c] = list(s)
    scores["J2"]["c"][3] = np.nan  # a missing judgment
    return make_view(scores, truth)


@pytest.mark.parametrize("power_tuning", [False, True])
def test_ppi_ranks_match_ppi_py_on_the_same_partition_and_resamples(power_tuning):
    from ppi_py import ppi_mean_pointestimate

    view = ppi_view()
    n_res = 12
    res = ppi_mean_ranks(view, PPI_SCALE, 0.10, n_resamples=n_res, rng=9, power_tuning=power_tuning)
    assert res.method == "ppi_10" and res.uses_labels

    # the same draws, in the documented order: partition first, then labelled, then unlabelled resamples
    gen = np.random.default_rng(9)
    labelled = ppi_labelled_items(40, 0.10, gen)
    assert labelled.sum() == 4
    lab_draws = gen.integers(0, 4, size=(n_res, 4))
    unl_draws = gen.integers(0, 36, size=(n_res, 36))
    items = [f"i{i}" for i in range(40)]
    lab_items = [it for it, m in zip(items, labelled) if m]
    unl_items = [it for it, m in zip(items, labelled) if not m]

    def prediction(item, cand):
        # mean over judges of the score rescaled to [0, 1]: -1 -> 0, abstain 0 -> 0.5, 1 -> 1
        vals = [(view.loc[(item, cand), j] + 1) / 2 for j in ("J1", "J2") if not np.isnan(view.loc[(item, cand), j])]
        return sum(vals) / len(vals)

    def estimate(lab, unl, cand):
        y = np.array([(view.loc[(it, cand), "true_score"] + 1) / 2 for it in lab])
        yh = np.array([prediction(it, cand) for it in lab])
        yu = np.array([prediction(it, cand) for it in unl])
        lam = None if power_tuning else 1
        return float(np.squeeze(ppi_mean_pointestimate(y, yh, yu, lam=lam)))

    for cand in "abc":
        assert res.scores[cand] == pytest.approx(estimate(lab_items, unl_items, cand), rel=1e-10)
    got = res.rank_draws.pivot(index="replicate", columns="candidate", values="rank")[list("abc")].to_numpy()
    for b in range(n_res):
        lab = [lab_items[p] for p in lab_draws[b]]
        unl = [unl_items[p] for p in unl_draws[b]]
        expected = avg_rank_desc([estimate(lab, unl, c) for c in "abc"])
        np.testing.assert_allclose(got[b], expected)


def test_ppi_needs_truth_and_a_sensible_fraction():
    view = ppi_view().drop(columns="true_score")
    with pytest.raises(ValueError, match="PPI needs ground truth: the item view has no 'true_score' column"):
        ppi_mean_ranks(view, PPI_SCALE, 0.05)
    with pytest.raises(ValueError, match=r"labelled_fraction must be strictly between 0 and 1; got 1.5"):
        ppi_labelled_items(10, 1.5, 0)
    with pytest.raises(ValueError, match="leaves no unlabelled item"):
        ppi_labelled_items(2, 0.9, 0)


def test_ppi_candidate_without_labelled_truth():
    view = ppi_view()
    view["true_score"] = np.where(view.index.get_level_values("candidate") == "b", np.nan, view["true_score"])
    with pytest.raises(ValueError, match=r"ppi_5: candidate b has no labelled answer with both a true score"):
        ppi_mean_ranks(view, PPI_SCALE, 0.05, n_resamples=5)


# -- the standard set ----------------------------------------------------------------------------

def test_baseline_methods_names_and_ppi_only_with_truth():
    view = ppi_view()
    names = list(baseline_methods(view, PPI_SCALE))
    assert names == ["single_judge:J1", "single_judge:J2", "simple_average", "bootstrap", "bradley_terry", "ppi_5", "ppi_10"]
    names = list(baseline_methods(view.drop(columns="true_score"), PPI_SCALE, single_judges=False))
    assert names == ["simple_average", "bootstrap", "bradley_terry"]


def test_run_methods_results_do_not_depend_on_the_other_methods():
    view = ppi_view()
    methods = baseline_methods(view, PPI_SCALE, bootstrap_resamples=50, bt_resamples=10, ppi_resamples=20)
    all_results = run_methods(view, methods, rng=1)
    alone = run_methods(view, {"bootstrap": methods["bootstrap"]}, rng=1)
    pd.testing.assert_frame_equal(all_results["bootstrap"].rank_draws, alone["bootstrap"].rank_draws)
    for name, res in all_results.items():
        assert list(res.scores.index) == ["a", "b", "c"], name
        assert res.uses_labels == name.startswith("ppi_")
        assert res.has_intervals == (name in {"bootstrap", "bradley_terry", "ppi_5", "ppi_10"})
