"""Tests of simplex_core/inference/reweighting.py: the prior ratio term by term against the model's own log
density, the structure rules, and reweighted summaries against real fits at the target setting."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betaln

from simplex_core.model import fast_density
from simplex_core.model.settings import FitSettings
from simplex_core.inference.reweighting import KHAT_OK, PriorDraws, ReweightError, boost_log_from_unconstrained, boosted_node_sizes, log_prior_ratio, prior_draws, reweight, structure_problem
from simplex_core.data.scale import Scale
from simplex_core.model.simulate import scenario

from tests.fixtures.fit_fixtures import BINARY_SCALE, counts_from_simulation


def _draws_from_x(xs: np.ndarray, counts, settings: FitSettings) -> PriorDraws:
    """PriorDraws of unconstrained points, through the fast path's own expand (the stored variables)."""
    buf = fast_density.build_buffer(counts, settings)
    names, shapes, _ = fast_density.stored_variables(counts, settings)
    slices = dict(zip(names, fast_density.stored_slices(shapes)))
    out = np.zeros((len(xs), slices[names[-1]].stop))
    for i, x in enumerate(xs):
        fast_density.expand(np.ascontiguousarray(x), out[i], buf)
    J, K, M = counts.N.shape
    boost = boost_log_from_unconstrained(xs, J, K, M, counts.scale.n_true, counts.scale.true_index, settings.prior)
    R, W = out[:, slices["R"]], out[:, slices["W"]]
    return PriorDraws(settings, boosted_node_sizes(settings.prior, counts.scale), out[:, slices["rho"]], boost,
                      np.log(R), np.log1p(-R), np.log(W), np.log1p(-W), out[:, slices["expected_score"]],
                      tuple(counts.candidates))


def _draws_theta(x: np.ndarray, counts, settings: FitSettings) -> np.ndarray:
    buf = fast_density.build_buffer(counts, settings)
    names, shapes, _ = fast_density.stored_variables(counts, settings)
    slices = dict(zip(names, fast_density.stored_slices(shapes)))
    out = np.zeros(slices[names[-1]].stop)
    fast_density.expand(np.ascontiguousarray(x), out, buf)
    return out[slices["theta"]]


@pytest.mark.parametrize("prior", ["weight-propagation", "diagonal", "mixing", "ordered"])
@pytest.mark.parametrize("scale", [Scale((1.0, 2.0, 3.0)), BINARY_SCALE, Scale((0.0, 1.0, 2.0, 3.0, 4.0))],
                         ids=["three-levels", "binary-with-abstain", "five-levels"])
def test_prior_ratio_equals_the_model_log_density_difference(scale, prior):
    # The fast density at likelihood power 0 is log prior + Jacobian (normalising constants that do not
    # depend on the point left out, among them B(ωJ, J) and B(ωK, K)): the Jacobian cancels between the
    # two settings at the same point, so the difference is our ratio up to those B terms.
    sim = scenario("three-level", seed=2, n_items=20) if scale.n_levels == 3 and scale.n_true == 3 else None
    if sim is None:
        from simplex_core.model.simulate import simulate

        T = scale.n_true
        sim = simulate(scale=scale, n_items=20, candidates=["a", "b", "c"], judges=["j1", "j2"],
                       pi=np.full((3, T), 1.0 / T), rho=[0.7, 0.5], beta_max=5.0, omega=0.0, rng=1)
    counts = counts_from_simulation(sim)
    source = FitSettings(omega=1.0, beta_max=5.0, likelihood="per-judge", prior=prior)
    J, K = counts.N.shape[:2]
    n = fast_density.n_unconstrained(counts, source)
    xs = np.random.default_rng(0).normal(0.0, 1.2, size=(25, n))
    draws = _draws_from_x(xs, counts, source)
    for omega, beta in ((2.5, 5.0), (1.0, 12.0), (0.3, 0.0), (6.0, 19.5)):
        target = source.replace(omega=omega, beta_max=beta)
        bs, bt = fast_density.build_buffer(counts, source), fast_density.build_buffer(counts, target)
        g = np.zeros(n)
        xt = xs.copy()
        if prior == "ordered":  # the same judges (discriminations s_j) sit at other ρ coordinates under another β_max
            o_rho = K * (counts.scale.n_true - 1)
            xt[:, o_rho:o_rho + J] += (np.log1p(0.4 * source.beta_max) - np.log1p(0.4 * beta)) / 0.28
            same_theta = [np.allclose(_draws_theta(x, counts, source), _draws_theta(y, counts, target)) for x, y in zip(xs, xt)]
            assert all(same_theta)
        diff = np.array([fast_density.tempered_logp_grad(y, g, bt, 0.0)[0] - fast_density.tempered_logp_grad(x, g, bs, 0.0)[0]
                         for x, y in zip(xs, xt)])
        constants = (J * (betaln(omega * J, J) - betaln(source.omega * J, J))
                     + K * (betaln(omega * K, K) - betaln(source.omega * K, K)))
        np.testing.assert_allclose(log_prior_ratio(draws, omega, beta), diff - constants, rtol=1e-9, atol=1e-8)


def test_structure_rules_say_why():
    base = FitSettings(omega=1.0, beta_max=5.0)
    assert structure_problem(base, base.replace(omega=3.0, beta_max=0.0)) is None
    assert structure_problem(base.replace(omega=0.0), base.replace(omega=0.0, beta_max=9.0)) is None
    assert "ω = 0 has no random effects" in structure_problem(base, base.replace(omega=0.0))
    assert "ω = 0 has no random effects" in structure_problem(base.replace(omega=0.0), base)
    assert "prior differs" in structure_problem(base, base.replace(prior="diagonal"))
    assert "likelihood differs" in structure_problem(base, base.replace(likelihood="per-judge"))
    assert "integrated" in structure_problem(base, base.replace(integrated=True))


# -- against real fits ------------------------------------------------------------------------------

RUN = dict(chains=2, draws=1000, tune=500, extra_rounds=0)


@pytest.fixture(scope="module")
def data_counts():
    return counts_from_simulation(scenario("three-level", seed=11, n_items=80))


@pytest.fixture(scope="module")
def source_fit(data_counts):
    from simplex_core.inference.fitting import fit_model

    return fit_model(data_counts, FitSettings(omega=1.0, beta_max=5.0, seed=4, **RUN))


def _se(x: np.ndarray, ess: float) -> np.ndarray:
    return x.std(axis=0) / np.sqrt(max(ess, 1.0))


@pytest.mark.parametrize("omega, beta", [(1.25, 5.0), (1.0, 3.0), (1.2, 7.5)])
def test_reweighted_summaries_match_a_real_fit_at_the_target(data_counts, source_fit, omega, beta):
    import arviz as az

    from simplex_core.inference.fitting import fit_model
    from simplex_core.summaries.leaderboard import leaderboard, leaderboard_from_fit

    assert "boost_log" in source_fit.idata.posterior  # the fast engine stores the β_max statistic
    target = source_fit.settings.replace(omega=omega, beta_max=beta, seed=9)
    rw = reweight(source_fit, target)
    assert np.isfinite(rw.khat) and 0 < rw.ess <= rw.n_draws
    assert rw.khat <= KHAT_OK, rw.describe()
    assert "approximate" in rw.describe() and "k̂" in rw.describe()
    draws = prior_draws(source_fit)
    board = leaderboard(draws.expected_score, draws.candidates, weights=rw.weights).set_index("candidate")
    real = fit_model(data_counts, target)
    truth = leaderboard_from_fit(real).set_index("candidate")
    e_real = real.draws("expected_score")
    ess_real = float(np.min(az.ess(real.idata.posterior[["expected_score"]])["expected_score"].values))
    # Monte Carlo error of both sides: the reweighted mean's ESS is at most the importance ESS
    # times the chains' own efficiency (measured on the source's E draws).
    eff = float(np.min(az.ess(source_fit.idata.posterior[["expected_score"]])["expected_score"].values)) / rw.n_draws
    se = np.sqrt(_se(draws.expected_score, rw.ess * min(eff, 1.0)) ** 2 + _se(e_real, ess_real) ** 2)
    names = list(draws.candidates)
    gap = np.abs(board.loc[names, "expected_score_mean"].to_numpy() - truth.loc[names, "expected_score_mean"].to_numpy())
    assert np.all(gap <= 4 * se + 1e-3), (gap, se)
    # rank intervals agree up to one rank at either end
    for col in ("rank_lo", "rank_hi"):
        assert np.all(np.abs(board.loc[names, col].to_numpy() - truth.loc[names, col].to_numpy()) <= 1), col


def test_a_far_move_is_flagged_not_trustworthy(source_fit):
    # ω 1 → 2 doubles the Beta(ωJ, J) / Beta(ωK, K) priors of R and W, which the data barely inform:
    # the weights collapse onto a few draws and k̂ says so (the app then shows the real refit).
    rw = reweight(source_fit, source_fit.settings.replace(omega=2.0))
    assert rw.khat > KHAT_OK and not rw.reliable and "not trustworthy" in rw.describe()
    assert rw.ess < 0.05 * rw.n_draws


def test_moving_nothing_gives_uniform_weights_and_omega_zero_is_refused(source_fit):
    rw = reweight(source_fit, source_fit.settings)
    assert rw.khat == 0.0 and rw.ess == pytest.approx(rw.n_draws)
    with pytest.raises(ReweightError, match="ω = 0 has no random effects"):
        reweight(source_fit, source_fit.settings.replace(omega=0.0))


def test_a_fit_without_the_judge_prior_draws_says_it_must_be_refitted(source_fit):
    idata = source_fit.idata.copy()
    # the judge prior's draws: ρ (the ordered prior's discriminations) and boost_log (the Dirichlet priors')
    idata.posterior = idata.posterior.drop_vars(["boost_log", "rho"])
    with pytest.raises(ReweightError, match="can only be refitted"):
        reweight(idata, source_fit.settings.replace(beta_max=7.0))


def test_the_resampled_posterior_is_the_weighted_posterior_every_summary_reads():
    """resampled_posterior: E draws resampled by the weights, so that a summary of it equals the
    weighted summary up to resampling noise; rank is recomputed from those draws; it says it is
    approximate and which settings it stands for."""
    from simplex_core.model.ranks import ranks_from_scores
    from simplex_core.summaries.leaderboard import leaderboard
    from simplex_core.inference.reweighting import Reweighted, resampled_posterior
    from simplex_core.summaries.posterior_tables import candidate_summary, pairwise_probabilities

    rng = np.random.default_rng(3)
    S, K = 4000, 4
    e = rng.normal([0.2, 0.4, 0.5, 0.6], 0.1, size=(S, K))
    weights = np.exp(-20.0 * e[:, 0])  # favours the low draws of candidate a: its weighted mean drops
    weights /= weights.sum()
    source, target = FitSettings(omega=1.0), FitSettings(omega=2.0)
    draws = PriorDraws(source, np.ones(1), np.ones((S, 1)), np.zeros((S, 1)), None, None, None, None, e,
                       ("a", "b", "c", "d"))
    rw = Reweighted(source, target, weights, 0.1, float(1 / np.sum(weights ** 2)), S)
    idata = resampled_posterior(draws, rw)
    post = idata.posterior
    assert post["expected_score"].shape == (1, S, K)
    assert np.array_equal(post["rank"].values[0], ranks_from_scores(post["expected_score"].values[0]))
    assert "approximate" in post.attrs["approximate"] and FitSettings.from_dict(
        __import__("json").loads(post.attrs["settings"])) == target
    weighted_mean = weights @ e
    table = candidate_summary(idata, sort=False).set_index("candidate")
    assert np.allclose(table["expected_score_mean"].to_numpy(), weighted_mean, atol=0.005)
    assert not np.allclose(weighted_mean, e.mean(axis=0), atol=0.005)  # the weights did move it
    pair = pairwise_probabilities(idata).to_numpy()
    w_pair = np.einsum("s,sab->ab", weights, (e[:, :, None] > e[:, None, :]).astype(float))
    off = ~np.eye(K, dtype=bool)
    assert np.allclose(pair[off], w_pair[off], atol=0.02)
    board = leaderboard(e, ["a", "b", "c", "d"], weights).set_index("candidate")
    # the rank interval of the weighted leaderboard is taken on the same systematic resample
    assert (board.loc[table.index, ["rank_lo", "rank_hi"]].to_numpy()
            == table[["rank_lo", "rank_hi"]].to_numpy()).all()


def test_the_draws_read_from_a_cache_file_equal_those_of_the_whole_fit(tmp_path, data_counts, source_fit):
    """prior_draws_from_file (five variables read with h5py, what a slider move reads for a source
    not yet in memory) gives exactly prior_draws of the fit read back whole, with and without random
    effects; a file without the judge-prior draws says so, and a broken entry is not offered."""
    from simplex_core.inference.fit_cache import FitCache, read_netcdf
    from simplex_core.inference.fitting import fit_model
    from simplex_core.inference.reweighting import prior_draws_from_file

    store = FitCache(tmp_path)
    no_re = fit_model(data_counts, FitSettings(omega=0.0, beta_max=5.0, seed=5, **RUN))
    for fit in (source_fit, no_re):
        store.put(fit)
        path = store.posterior_file(data_counts, fit.settings)
        assert path is not None and path.name == "posterior.nc"
        fast = prior_draws_from_file(path, fit.settings, data_counts.scale)
        whole = prior_draws(read_netcdf(path))
        assert fast.candidates == whole.candidates == tuple(data_counts.candidates)
        assert fast.settings == whole.settings and np.array_equal(fast.node_sizes, whole.node_sizes)
        for name in ("rho", "boost_log", "log_r", "log1m_r", "log_w", "log1m_w", "expected_score"):
            a, b = getattr(fast, name), getattr(whole, name)
            assert (a is None and b is None) or np.array_equal(a, b), name
        assert (fast.log_r is None) == (not fit.settings.has_random_effects)
    assert store.posterior_file(data_counts, source_fit.settings.replace(beta_max=7.0)) is None  # not fitted

    lacking = tmp_path / "lacking.nc"
    idata = source_fit.idata.copy()
    idata.posterior = idata.posterior.drop_vars("boost_log")
    idata.to_netcdf(str(lacking))
    with pytest.raises(ReweightError, match="lacks boost_log"):
        prior_draws_from_file(lacking, source_fit.settings, data_counts.scale)

    path = store.posterior_file(data_counts, no_re.settings)
    path.write_bytes(path.read_bytes()[:1000])  # truncated: the entry is quarantined, not offered
    with pytest.warns(RuntimeWarning, match="is broken"):
        assert store.posterior_file(data_counts, no_re.settings) is None
    assert not store.contains(data_counts, no_re.settings)
