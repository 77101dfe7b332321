"""The truth as one more rater (simplex_core.inference.rater_deviation): τ recovery, the prior alone when
nothing can be learnt, δ in every rank of a real fit, the paper's ranks on request, the same draws on reload."""

from __future__ import annotations

import json

import numpy as np
import pytest

from simplex_core.inference.rater_deviation import (
    PRIOR_SCALE_SHARE,
    add_rater_deviation,
    ensure_rater_deviation,
    judge_deviations,
    rater_deviation,
    rater_deviation_record,
    rater_deviation_text,
    score_distributions,
    without_rater_deviation,
)
from simplex_core.model.ranks import ranks_from_scores


def _residuals(tau: float, J: int, K: int, noise_sd: float, seed: int):
    rng = np.random.default_rng(seed)
    absorbed = np.full((J, K), 1.0 / J)
    noise_var = np.full((J, K), noise_sd ** 2)
    residual = rng.normal(0.0, np.sqrt((1 - absorbed) * (tau ** 2 + noise_var)))
    return residual, noise_var, absorbed


@pytest.mark.parametrize("tau", [0.0, 0.15, 0.4])
def test_judge_deviations_recover_a_known_tau(tau):
    # 4 judges × 300 candidates of residuals with a known deviation SD and sampling noise: each judge's
    # posterior mean of τ lands near it (the prior, scale 0.4, barely matters with 300 pairs)
    residual, noise_var, absorbed = _residuals(tau, 4, 300, noise_sd=0.05, seed=1)
    grid, weights = judge_deviations(residual, noise_var, np.ones_like(residual, bool), absorbed, prior_scale=0.4)
    means = weights @ grid
    assert np.allclose(weights.sum(axis=1), 1.0)
    assert np.all(np.abs(means - tau) < 0.04), means


def test_a_judge_without_evidence_keeps_its_prior():
    residual, noise_var, absorbed = _residuals(0.3, 2, 50, noise_sd=0.05, seed=2)
    evidence = np.ones_like(residual, bool)
    evidence[1] = False  # judge 1 only ever scores candidates no other judge scores
    grid, weights = judge_deviations(residual, noise_var, evidence, absorbed, prior_scale=0.1)
    halfnormal_mean = 0.1 * np.sqrt(2 / np.pi)
    assert abs(weights[1] @ grid - halfnormal_mean) < 0.005
    assert abs(weights[0] @ grid - 0.3) < 0.06


def _gamma_from_means(means: np.ndarray) -> np.ndarray:
    """A binary γ [1, J, K, 2] whose mean score is ``means`` [J, K]."""
    return np.stack([1 - means, means], axis=-1)[None]


def test_rater_deviation_widens_with_disagreement_and_with_fewer_judges():
    # 3 judges, 40 candidates, 400 answers per pair; observed means off the fitted ones by 0.1 (a
    # candidate-specific bias) on every pair but on candidate 0, which only judge 0 scores
    rng = np.random.default_rng(3)
    J, K, n = 3, 40, 400
    fitted = rng.uniform(0.3, 0.7, size=(J, K))
    observed = np.clip(fitted + rng.normal(0.0, 0.1, size=(J, K)), 0.01, 0.99)
    included = np.ones((J, K), bool)
    included[1:, 0] = False
    N = np.stack([n * (1 - observed), n * observed], axis=-1).round()
    dev = rater_deviation(_gamma_from_means(fitted), N, included, np.array([0.0, 1.0]), np.array([0.0, 1.0]),
                          n_draws=4000, seed=0)
    assert dev.draws.shape == (4000, K)
    assert 0.06 < dev.truth_tau < 0.14  # the bias SD, learnt from the pairs of candidates 1..39
    assert list(dev.judge_pairs) == [K - 1, K - 1, K - 1]  # candidate 0 has one judge: no evidence
    sd = dev.draws.std(axis=0)
    # the truth's deviation (τ_0²) plus the panel's (Σ τ_j² / |J_k|²): one judge → about √2 τ, three → √(4/3) τ
    assert sd[0] > 1.15 * sd[1:].mean()
    # no disagreement beyond sampling noise: the deviations shrink towards 0
    quiet = rater_deviation(_gamma_from_means(fitted), np.stack([n * (1 - fitted), n * fitted], -1).round(), included,
                            np.array([0.0, 1.0]), np.array([0.0, 1.0]), n_draws=4000, seed=0)
    assert quiet.truth_tau < 0.5 * dev.truth_tau


def test_one_judge_everywhere_is_the_prior_alone():
    J, K = 1, 6
    fitted = np.linspace(0.2, 0.8, K)[None]
    N = np.stack([100 * (1 - fitted), 100 * fitted], -1).round()
    dev = rater_deviation(_gamma_from_means(fitted), N, np.ones((J, K), bool), np.array([1.0, 2.0]),
                          np.array([1.0, 2.0]), n_draws=20000, seed=1)
    assert dev.judge_pairs.tolist() == [0]
    prior_mean = PRIOR_SCALE_SHARE * np.sqrt(2 / np.pi)
    assert abs(dev.judge_tau[0] - prior_mean) < 0.003
    assert "prior alone" in rater_deviation_text(dev.to_record(["judge"]))


def test_score_distributions_mix_the_random_effects():
    rng = np.random.default_rng(0)
    S, J, K, T, M = 3, 2, 4, 3, 3
    pi = rng.dirichlet(np.ones(T), size=(S, K))
    theta = rng.dirichlet(np.ones(M), size=(S, J, T))
    plain = score_distributions(pi, theta)
    assert np.allclose(plain.sum(-1), 1.0)
    assert np.allclose(plain[1, 0, 2], pi[1, 2] @ theta[1, 0])
    R, W, Z = rng.uniform(size=(S, J)), rng.uniform(size=(S, K)), rng.dirichlet(np.ones(T), size=(S, K))
    mixed = score_distributions(pi, theta, R, W, Z)
    m = R[2, 1] * W[2, 3]
    assert np.allclose(mixed[2, 1, 3], ((1 - m) * pi[2, 3] + m * Z[2, 3]) @ theta[2, 1])


def test_a_real_fit_ranks_the_truth_and_keeps_the_panel_ranks(three_level_fit):
    post = three_level_fit.idata.posterior
    e = np.asarray(post["expected_score"].values)
    d = np.asarray(post["rater_deviation"].values)
    assert d.shape == e.shape and np.all(np.isfinite(d)) and d.std() > 0
    np.testing.assert_array_equal(post["rank"].values, ranks_from_scores(e + d))
    np.testing.assert_array_equal(post["expected_rank"].values, ranks_from_scores(e))
    record = rater_deviation_record(three_level_fit)
    assert set(record["judges"]) == set(three_level_fit.counts.judges) and record["truth_tau"] > 0
    # the paper's estimand on request, the fit itself untouched
    panel = without_rater_deviation(three_level_fit.idata)
    np.testing.assert_array_equal(panel.posterior["rank"].values, ranks_from_scores(e))
    assert "turned off" in json.loads(panel.posterior.attrs["rater_deviation"])["reason"]
    np.testing.assert_array_equal(post["rank"].values, ranks_from_scores(e + d))


def test_a_fit_stored_before_delta_gets_the_same_draws_back(three_level_fit):
    idata = three_level_fit.idata.copy()
    first = np.asarray(idata.posterior["rater_deviation"].values).copy()
    idata.posterior = idata.posterior.drop_vars(["rater_deviation", "expected_rank"])
    idata.posterior["rank"] = (("chain", "draw", "candidate"),
                               ranks_from_scores(np.asarray(idata.posterior["expected_score"].values)))
    ensure_rater_deviation(idata, three_level_fit.counts, three_level_fit.settings.seed)
    np.testing.assert_array_equal(idata.posterior["rater_deviation"].values, first)


def test_gold_labels_turn_delta_off(three_level_fit):
    idata = three_level_fit.idata.copy()
    idata.posterior = idata.posterior.drop_vars(["rater_deviation", "expected_rank"])
    add_rater_deviation(idata, seed=0, gold_labels=12)
    assert np.all(idata.posterior["rater_deviation"].values == 0)
    assert "gold" in rater_deviation_text(rater_deviation_record(idata))


def test_leaderboard_and_pairwise_rank_the_truth():
    from simplex_core.summaries.leaderboard import leaderboard

    # E says a > b in every draw; δ reverses them in a quarter of the draws
    e = np.tile([1.0, 0.9], (8, 1))
    delta = np.zeros_like(e)
    delta[:2, 1] = 0.5
    table = leaderboard(e, ["a", "b"], rater_deviation=delta).set_index("candidate")
    assert table.loc["a", "p_best"] == pytest.approx(0.75)
    assert table.loc["a", "p_ahead_of_next"] == pytest.approx(0.75)
    assert table.loc["a", "expected_score_mean"] == pytest.approx(1.0)  # E's own figures stay E's
    plain = leaderboard(e, ["a", "b"]).set_index("candidate")
    assert plain.loc["a", "p_best"] == 1.0


def test_a_reweighted_view_says_what_its_rank_intervals_include(three_level_fit, tmp_path):
    """An approximate (reweighted) posterior carries its source's δ draws and the record of them, read
    from the fit in memory or from its stored file, so the page can say what the intervals include."""
    import dataclasses

    from simplex_core.inference.reweighting import (prior_draws, prior_draws_from_file, resampled_posterior,
                                                    reweight)

    target = dataclasses.replace(three_level_fit.settings, beta_max=three_level_fit.settings.beta_max + 0.5)
    rw = reweight(three_level_fit, target)
    source_record = rater_deviation_record(three_level_fit)
    path = tmp_path / "posterior.nc"
    three_level_fit.idata.to_netcdf(str(path))
    for draws in (prior_draws(three_level_fit), prior_draws_from_file(path, three_level_fit.settings,
                                                                       three_level_fit.counts.scale)):
        approx = resampled_posterior(draws, rw)
        assert rater_deviation_record(approx) == source_record
        assert "one more rater" in rater_deviation_text(rater_deviation_record(approx))
