"""Tests of simplex_core/summaries/leaderboard.py: the tier rule on hand-made draws, and its properties on
random posteriors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simplex_core.model.ranks import rank_interval
from simplex_core.model.ranks import ranks_from_scores
from simplex_core.summaries.leaderboard import LEADERBOARD_COLUMNS, credibly_ahead, leaderboard, leaderboard_records, tiers, weighted_pairwise


def chain_draws() -> np.ndarray:
    """100 draws with P(a>b) = 0.9, P(b>c) = 0.9, P(a>c) = 0.99 (written out by hand)."""
    s = np.arange(100)
    a = np.full(100, 3.0)
    b = np.where(s < 10, 4.0, 2.0)
    c = np.where((s >= 10) & (s <= 18), 2.5, np.where(s == 99, 3.5, 1.0))
    return np.column_stack([a, b, c])


def test_chain_probabilities_are_what_the_test_says():
    p = weighted_pairwise(chain_draws())
    assert p[0, 1] == pytest.approx(0.9) and p[1, 2] == pytest.approx(0.9) and p[0, 2] == pytest.approx(0.99)


def test_chain_of_unsettled_pairs_splits_where_the_top_is_credibly_ahead():
    # a ≈ b, b ≈ c, but a is credibly ahead of c: greedy in mean order gives {a, b}, {c}
    e = chain_draws()
    assert list(tiers(weighted_pairwise(e), e.mean(axis=0))) == [1, 1, 2]
    # a stricter threshold (0.995) settles nothing
    assert list(tiers(weighted_pairwise(e), e.mean(axis=0), credible=0.995)) == [1, 1, 1]
    # a looser one (0.9) settles every adjacent pair
    assert list(tiers(weighted_pairwise(e), e.mean(axis=0), credible=0.9)) == [1, 2, 3]


def test_threshold_is_inclusive_at_exactly_0975():
    e = np.column_stack([np.r_[np.full(39, 2.0), 0.0], np.ones(40)])  # P(a > b) = 39/40 = 0.975
    assert weighted_pairwise(e)[0, 1] == pytest.approx(0.975)
    assert list(tiers(weighted_pairwise(e), e.mean(axis=0))) == [1, 2]
    e2 = np.column_stack([np.r_[np.full(38, 2.0), 0.0, 0.0], np.ones(40)])  # 0.95: one tier
    assert list(tiers(weighted_pairwise(e2), e2.mean(axis=0))) == [1, 1]


def test_probabilities_are_exact_shares_of_the_draws():
    """3900 of 4000 draws ahead is 0.975 exactly (credibly ahead), and a sure winner has P(best) = 1,
    not 1.0000000000000007 (summing 1/S per draw gave both errors)."""
    S = 4000
    a = np.r_[np.full(3900, 2.0), np.zeros(100)]
    e = np.column_stack([a, np.ones(S), np.full(S, -5.0)])
    pair = weighted_pairwise(e)
    assert pair[0, 1] == 0.975 and pair[1, 2] == 1.0
    assert list(tiers(pair, e.mean(axis=0))) == [1, 2, 3]
    board = leaderboard(np.column_stack([np.full(S, 9.0), e]), ["sure", "a", "b", "c"])
    assert board["p_best"].tolist() == [1.0, 0.0, 0.0, 0.0] and board["p_top3"].max() <= 1.0
    weighted = leaderboard(np.column_stack([np.full(S, 9.0), e]), ["sure", "a", "b", "c"], weights=np.random.default_rng(0).random(S))
    assert weighted["p_best"].max() <= 1.0 and weighted["p_top3"].max() <= 1.0


def test_tiers_follow_input_order_not_column_order():
    e = chain_draws()[:, ::-1]  # columns c, b, a
    assert list(tiers(weighted_pairwise(e), e.mean(axis=0))) == [2, 1, 1]


def test_weights_move_the_tiers():
    # Two draws: a wins one, b the other. Uniform weights: one tier; weight 0.98 on "a wins": two tiers.
    e = np.array([[2.0, 1.0], [1.0, 2.0]])
    assert list(leaderboard(e, ["a", "b"])["tier"]) == [1, 1]
    lb = leaderboard(e, ["a", "b"], weights=np.array([0.98, 0.02]))
    assert list(lb["candidate"]) == ["a", "b"] and list(lb["tier"]) == [1, 2]
    assert lb["p_best"].tolist() == pytest.approx([0.98, 0.02])
    assert lb["p_ahead_of_next"].iloc[0] == pytest.approx(0.98)


def test_leaderboard_table_matches_the_rank_interval_rule_and_probabilities():
    rng = np.random.default_rng(3)
    e = rng.normal([0.0, 0.1, 1.0, 2.0, 2.05], 0.2, size=(800, 5))
    names = ["a", "b", "c", "d", "e"]
    lb = leaderboard(e, names)
    assert tuple(lb.columns) == LEADERBOARD_COLUMNS
    assert list(lb["candidate"]) == ["e", "d", "c", "b", "a"]
    r = ranks_from_scores(e)
    lo, hi = rank_interval(r)
    by = lb.set_index("candidate")
    for k, n in enumerate(names):
        assert (by.loc[n, "rank_lo"], by.loc[n, "rank_hi"]) == (lo[k], hi[k])
        assert by.loc[n, "p_best"] == pytest.approx((r[:, k] == 1).mean())
        assert by.loc[n, "p_top3"] == pytest.approx((r[:, k] <= 3).mean())
    assert lb["p_best"].sum() == pytest.approx(1.0) and lb["p_top3"].sum() == pytest.approx(3.0)
    # d and e overlap; c is far below them and far above a and b: tiers {e, d}, {c}, {b, a}
    assert list(lb["tier"]) == [1, 1, 2, 3, 3]
    recs = leaderboard_records(lb)
    assert recs[-1]["p_ahead_of_next"] is None and recs[0]["tier"] == 1 and isinstance(recs[0]["rank_lo"], int)


def test_bad_weights_are_refused_with_a_reason():
    e = np.zeros((3, 2))
    with pytest.raises(ValueError, match="one weight per draw"):
        leaderboard(e, ["a", "b"], weights=np.ones(2))
    with pytest.raises(ValueError, match="non-negative"):
        leaderboard(e, ["a", "b"], weights=np.array([1.0, -1.0, 1.0]))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), K=st.integers(2, 9), spread=st.floats(0.0, 3.0))
def test_tier_properties_on_random_posteriors(seed, K, spread):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, spread, K)
    scales = rng.uniform(0.05, 1.0, K)
    e = centres + scales * rng.standard_normal((200, K))
    mean = e.mean(axis=0)
    p = weighted_pairwise(e)
    t = tiers(p, mean)
    ahead = credibly_ahead(p)
    order = sorted(range(K), key=lambda k: (-mean[k], k))
    seq = t[order]
    # a partition into tiers 1..T, contiguous in the mean order and never going back up
    assert seq[0] == 1 and set(seq) == set(range(1, seq.max() + 1))
    assert np.all(np.diff(seq) >= 0) and np.all(np.diff(seq) <= 1)
    for tier in range(1, seq.max() + 1):
        members = [k for k in order if t[k] == tier]
        # no member credibly ahead of another
        assert not any(ahead[a, b] for a in members for b in members if a != b)
        if tier > 1:  # the tier's best is credibly behind some member of the tier above
            above = [k for k in order if t[k] == tier - 1]
            assert any(ahead[a, members[0]] or ahead[members[0], a] for a in above)


def test_leaderboard_figure_draws_every_interval_and_one_band_per_tier(tmp_path):
    from simplex_core.figures import leaderboard_figure

    e = chain_draws()
    lb = leaderboard(e, ["a", "b<i>x</i>", "c"])
    fig = leaderboard_figure(lb, note="approximate")
    bars = next(t for t in fig.data if t.meta["role"] == "rank_interval")
    ends = [x for x in bars.x if x is not None]
    assert ends == pytest.approx(sum(([lo - 0.3, hi + 0.3] for lo, hi in zip(lb["rank_lo"], lb["rank_hi"])), []))
    medians = next(t for t in fig.data if t.meta["role"] == "rank_median")
    assert list(medians.x) == list(lb["rank_median"].astype(float))
    assert len(fig.layout.shapes) == lb["tier"].nunique() == 2
    assert "<i>" not in "".join(fig.layout.yaxis.ticktext)  # names are data, never markup
    assert any("Tier 2" in a.text for a in fig.layout.annotations)
    assert "approximate" in fig.layout.title.text


def test_result_json_carries_the_leaderboard():
    import arviz as az

    from simplex_core.summaries.leaderboard import leaderboard_from_fit

    e = chain_draws()
    idata = az.from_dict(posterior={"expected_score": e[None]}, coords={"candidate": ["a", "b", "c"]},
                         dims={"expected_score": ["candidate"]})
    lb = leaderboard_from_fit(idata)
    assert list(lb["candidate"]) == ["a", "b", "c"] and list(lb["tier"]) == [1, 1, 2]
