"""What to label next: the reweighting is the exact posterior given the label; the expected reduction
formula equals brute force; uncertain answers of close candidates come first; the batch and budget
curve behave; the CLI works end to end."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simplex_core.cli import main
from simplex_core.model.ranks import ranks_from_scores
from simplex_core.methods.labelling import Answers, LabelDraws, budget_curve, expected_reductions, label_probabilities, rank_uncertainty, suggest_labels, weighted_rank_interval
from simplex_core.model.definition import shared_truth_emission
from simplex_core.data.patterns import NO_SCORE


def _draws(prevalence_draws: np.ndarray, theta: np.ndarray) -> LabelDraws:
    """Draws of P(correct) per candidate ``[S, K]`` and one fixed binary Θ ``[J, 2, 2]``."""
    S, K = prevalence_draws.shape
    pi = np.stack([1 - prevalence_draws, prevalence_draws], axis=-1)
    return LabelDraws(pi=pi, theta=np.broadcast_to(theta, (S,) + theta.shape).copy(),
                      ranks=ranks_from_scores(prevalence_draws).astype(float))


def test_reweighting_by_q_is_the_exact_posterior_given_the_label():
    """One candidate, p = P(correct) ~ U(0, 1), one judge with a known Θ, a few answers: draws of the
    posterior without the label, reweighted by q(t), give the posterior mean that quadrature gives
    with the label."""
    theta = np.array([[0.8, 0.2], [0.3, 0.7]])
    scores = np.array([1, 1, 0, 1, 0, 1])
    grid = np.linspace(1e-6, 1 - 1e-6, 200_001)
    like = np.prod([(1 - grid) * theta[0, s] + grid * theta[1, s] for s in scores], axis=0)
    cdf = np.cumsum(like)
    cdf /= cdf[-1]
    p = np.interp((np.arange(40_000) + 0.5) / 40_000, cdf, grid)  # stratified exact posterior draws
    draws = _draws(p[:, None], theta[None])
    q = label_probabilities(draws, np.array([0]), np.array([[scores[0]]]))[0]  # answer 0 (score 1)
    for t in (0, 1):
        exact = like / ((1 - grid) * theta[0, scores[0]] + grid * theta[1, scores[0]])
        exact = exact * (grid if t else 1 - grid) * theta[t, scores[0]]
        exact_mean = np.sum(grid * exact) / np.sum(exact)
        w = q[:, t] / q[:, t].sum()
        assert np.sum(w * p) == pytest.approx(exact_mean, abs=2e-4)
    # the label's predictive probability is the posterior mean of q
    assert q[:, 1].mean() == pytest.approx(np.sum(like * grid * theta[1, 1] / ((1 - grid) * theta[0, 1] + grid * theta[1, 1])) / like.sum(), abs=2e-4)


def test_emission_with_random_effects_matches_the_model():
    rng = np.random.default_rng(0)
    S, J, K, T, M = 3, 2, 4, 3, 3
    theta = rng.dirichlet(np.ones(M), size=(S, J, T))
    Z = rng.dirichlet(np.ones(T), size=(S, K))
    mix = rng.uniform(size=(S, J, K))
    draws = LabelDraws(pi=rng.dirichlet(np.ones(T), size=(S, K)), theta=theta, ranks=np.ones((S, K)), mix=mix, Z=Z)
    for s in range(S):
        np.testing.assert_allclose(np.exp(draws.log_emission()[s]), shared_truth_emission(theta[s], mix[s], Z[s]))


def test_expected_reduction_equals_brute_force():
    rng = np.random.default_rng(1)
    S, K, T = 500, 4, 3
    q = rng.dirichlet(np.ones(T), size=(6, S))
    ranks = np.argsort(rng.normal(size=(S, K)), axis=1).astype(float) + 1
    w = rng.uniform(size=S)
    fast = expected_reductions(q, w, ranks)
    wn = w / w.sum()
    now = rank_uncertainty(wn, ranks)
    for p in range(6):
        after = sum((wn * q[p, :, t]).sum() * rank_uncertainty(wn * q[p, :, t], ranks) for t in range(T))
        assert fast[p] == pytest.approx(now - after, rel=1e-9, abs=1e-12)


def _three_candidates(S=4000, seed=0):
    """Candidates 0 and 1 close (0.60 vs 0.62, uncertain), candidate 2 far ahead (0.95); 3 judges of
    accuracy 0.85."""
    rng = np.random.default_rng(seed)
    p = np.column_stack([rng.beta(60, 40, S), rng.beta(62, 38, S), rng.beta(190, 10, S)])
    acc = 0.85
    theta = np.array([[acc, 1 - acc], [1 - acc, acc]])
    return _draws(p, np.broadcast_to(theta, (3, 2, 2)))


def _answers(patterns: list[tuple[int, tuple[int, ...]]], sizes: list[int]) -> Answers:
    rows = []
    for p, ((k, sc), n) in enumerate(zip(patterns, sizes)):
        for i in range(n):
            rows.append({"item": f"q{p}-{i}", "candidate": f"c{k}", **{f"j{j}": s for j, s in enumerate(sc)}, "pattern": p})
    return Answers(frame=pd.DataFrame(rows), candidate_index=np.array([k for k, _ in patterns]),
                   scores=np.array([sc for _, sc in patterns]), size=np.array(sizes), judges=("j0", "j1", "j2"))


def test_disagreeing_judges_on_a_close_candidate_come_first():
    draws = _three_candidates()
    patterns = [(0, (1, 0, 1)), (0, (1, 1, 1)), (2, (1, 0, 1)), (1, (0, 1, NO_SCORE))]
    q = label_probabilities(draws, np.array([k for k, _ in patterns]), np.array([s for _, s in patterns]))
    value = expected_reductions(q, np.ones(draws.n_draws), draws.ranks)
    disagree, agree, easy, one_each = value
    assert disagree > 3 * agree  # judges that agree leave little doubt about the true level
    assert disagree > 3 * easy  # the far-ahead candidate's rank is certain whatever its answers
    assert one_each > agree  # one judge each way: the most uncertain answer of a close candidate


def test_batch_respects_pattern_sizes_and_gives_probabilities():
    draws = _three_candidates()
    answers = _answers([(0, (1, 0, 1)), (1, (0, 1, 0)), (0, (1, 1, 1)), (2, (1, 0, 1))], [2, 3, 40, 40])
    out = suggest_labels(draws, answers, budget=8, true_labels=("incorrect", "correct"))
    assert list(out["order"]) == list(range(1, 9))
    assert not out.duplicated(["item", "candidate"]).any()
    assert (out["candidate"] != "c2").all()  # never worth labelling the certain candidate here
    np.testing.assert_allclose(out["p_true:incorrect"] + out["p_true:correct"], 1.0)
    assert out["expected_reduction"].iloc[0] == out["expected_reduction"].max()
    assert out.attrs["uncertainty"] > 0
    # alone: the exact one-step value of each chosen pattern; the first pick's is its expected reduction,
    # and no pattern is worth more alone than the first pick
    q = label_probabilities(draws, answers.candidate_index, answers.scores)
    alone = expected_reductions(q, np.ones(draws.n_draws), draws.ranks)
    assert out["alone_reduction"].iloc[0] == pytest.approx(out["expected_reduction"].iloc[0]) == pytest.approx(alone.max())
    assert set(np.round(out["alone_reduction"], 12)) <= set(np.round(alone, 12))


def test_suggested_labels_beat_random_labels_on_the_budget_curve():
    draws = _three_candidates()
    answers = _answers([(0, (1, 0, 1)), (1, (0, 1, 0)), (0, (1, 1, 1)), (1, (0, 0, 0)), (2, (1, 0, 1))],
                       [15, 15, 200, 200, 200])
    out = suggest_labels(draws, answers, budget=20)
    curve = budget_curve(draws, answers, out, replicates=60, seed=2)
    assert curve["suggested"].iloc[0] == curve["random"].iloc[0]
    assert curve["suggested"].iloc[-1] < curve["random"].iloc[-1]
    # the gain is the paired difference, with a Monte Carlo error that puts it clear of noise here
    np.testing.assert_allclose(curve["gain"], curve["random"] - curve["suggested"], atol=1e-12)
    assert curve["gain_se"].iloc[0] == 0 and curve["gain"].iloc[-1] > 2 * curve["gain_se"].iloc[-1] > 0


def test_weighted_rank_interval_with_equal_weights_is_the_inverse_cdf_interval():
    rng = np.random.default_rng(0)
    for S in (1, 7, 40, 400):
        ranks = ranks_from_scores(rng.normal(size=(S, 6)) + np.arange(6) * 0.5).astype(float)
        lo, hi = weighted_rank_interval(np.ones(S), ranks)
        want_lo = np.quantile(ranks, 0.025, axis=0, method="inverted_cdf")
        want_hi = np.quantile(ranks, 0.975, axis=0, method="inverted_cdf")
        np.testing.assert_array_equal(lo, want_lo)
        np.testing.assert_array_equal(hi, want_hi)


def test_weighted_rank_interval_of_concentrated_weights_and_an_exact_case():
    ranks = np.array([[1, 2, 3], [2, 1, 3], [3, 2, 1], [1, 3, 2]], dtype=float)
    lo, hi = weighted_rank_interval(np.array([0.0, 0.0, 1.0, 0.0]), ranks)
    np.testing.assert_array_equal(lo, ranks[2])
    np.testing.assert_array_equal(hi, ranks[2])
    # weights 0.5 / 0.5 on draws 0 and 1: each candidate's interval spans both draws' ranks
    lo, hi = weighted_rank_interval(np.array([0.5, 0.5, 0.0, 0.0]), ranks)
    np.testing.assert_array_equal(lo, [1, 1, 3])
    np.testing.assert_array_equal(hi, [2, 2, 3])


def test_budget_curve_reports_expected_coverage_and_width():
    draws = _three_candidates()
    answers = _answers([(0, (1, 0, 1)), (1, (0, 1, 0)), (0, (1, 1, 1)), (1, (0, 0, 0)), (2, (1, 0, 1))],
                       [15, 15, 200, 200, 200])
    out = suggest_labels(draws, answers, budget=20)
    curve = budget_curve(draws, answers, out, replicates=60, seed=2)
    first = curve.iloc[0]
    lo, hi = weighted_rank_interval(np.ones(draws.n_draws), draws.ranks)
    assert first["suggested_width"] == first["random_width"] == pytest.approx(np.mean(hi - lo + 1))
    # the truth is a posterior draw, so the reweighted intervals keep about their level
    assert (curve[["suggested_coverage", "random_coverage"]] >= 0.85).all().all()


def test_cli_suggest_labels_end_to_end(tmp_path, capsys):
    from simplex_core.data.scale import Scale
    from simplex_core.model.simulate import simulate

    sim = simulate(scale=Scale((0.0, 1.0)), n_items=30, candidates=3, judges=3, rng=5)
    path = tmp_path / "tiny.csv"
    sim.frame.to_csv(path, index=False)
    out = tmp_path / "new" / "next.csv"  # a missing folder is created, as `fit` does
    code = main(["suggest-labels", str(path), "--budget", "5", "--out", str(out), "--chains", "2", "--draws", "200",
                 "--tune", "200", "--quiet", "--curve", "--curve-replicates", "5"])
    printed = capsys.readouterr().out
    assert code == 0
    table = pd.read_csv(out)
    assert list(table.columns[:3]) == ["order", "item", "candidate"]
    assert {"judge1", "judge2", "judge3", "expected_reduction", "alone_reduction"} <= set(table.columns)
    assert len(table) == 5 and (table["expected_reduction"] >= 0).all()
    assert "budget curve" in printed and "labelled_share" in printed and "expected coverage of the 95% rank" in printed
    assert main(["suggest-labels", str(path), "--budget", "0", "--out", str(out)]) == 2
    assert main(["suggest-labels", str(path), "--out", str(out), "--likelihood", "per-judge"]) == 2
    assert "shared-truth posterior" in capsys.readouterr().err
