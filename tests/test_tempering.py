"""Parallel tempering (``simplex_core.inference.tempering``): the tempered densities are what they claim, the
tempered chains sample the same posterior as NUTS where NUTS works, cross between two modes where
NUTS chains stay in the mode they start in, and are reproducible with an ordered ladder."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from simplex_core.model import fast_density
from simplex_core.inference import fast_engine
from simplex_core.data.views import Counts
from simplex_core.model.settings import FitSettings
from simplex_core.data.scale import Scale
from simplex_core.model.simulate import simulate

BINARY_ABSTAIN = Scale((-1.0, 0.0, 1.0), ("incorrect", "unsure", "correct"), (-1.0, 1.0))


def _counts(sim, self_exclusion: bool = False) -> Counts:
    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table

    return count_tensor(load_table(sim.frame, scale=sim.scale, families=sim.families), self_exclusion=self_exclusion)


def test_the_tempered_density_is_prior_plus_power_times_likelihood():
    """At power b the log density is log prior + b · log likelihood, with its exact gradient: at b = 0
    it equals the density of the same model with every count zero (the prior), and for any b it is
    the linear blend of the two, value and gradient."""
    rng = np.random.default_rng(3)
    N = rng.integers(0, 30, size=(2, 4, 3))
    counts = Counts(N=N, included=np.ones((2, 4), dtype=bool), judges=("a", "b"), candidates=("w", "x", "y", "z"),
                    scale=BINARY_ABSTAIN, excluded_pairs=())
    empty = dataclasses.replace(counts, N=np.zeros_like(N))
    settings = FitSettings(likelihood="per-judge", omega=2.0, beta_max=5.0, delta="uniform")
    buf, buf0 = fast_density.build_buffer(counts, settings), fast_density.build_buffer(empty, settings)
    n = fast_density.n_unconstrained(counts, settings)
    for _ in range(4):
        x = rng.normal(0.0, 1.0, size=n)
        g1, g0, gb, gp = (np.zeros(n) for _ in range(4))
        full, lik = fast_density.tempered_logp_grad(x, g1, buf, 1.0)
        prior, lik0 = fast_density.tempered_logp_grad(x, gp, buf0, 1.0)
        assert lik0 == 0.0
        at0, _ = fast_density.tempered_logp_grad(x, g0, buf, 0.0)
        assert at0 == pytest.approx(prior, rel=1e-12)
        np.testing.assert_allclose(g0, gp, rtol=1e-10, atol=1e-10)
        b = 0.3
        atb, likb = fast_density.tempered_logp_grad(x, gb, buf, b)
        assert likb == pytest.approx(lik, rel=1e-12)
        assert atb == pytest.approx(prior + b * (full - prior), rel=1e-10)
        np.testing.assert_allclose(gb, gp + b * (g1 - gp), rtol=1e-8, atol=1e-8)
        assert full == pytest.approx(fast_density.logp_and_grad(counts, settings, x)[0], rel=1e-12)


def test_the_reference_path_density_blends_the_reference_and_the_posterior():
    """Towards a reference q (a mixture of diagonal normals), the replica at power b has log density
    (1 − b) · log q + b · log posterior, with its exact gradient, and the swap statistic is log
    posterior − log q; log q is the mixture's density as SciPy computes it."""
    from scipy.special import logsumexp
    from scipy.stats import norm

    rng = np.random.default_rng(8)
    N = rng.integers(0, 30, size=(2, 3, 3))
    counts = Counts(N=N, included=np.ones((2, 3), dtype=bool), judges=("a", "b"), candidates=("x", "y", "z"),
                    scale=BINARY_ABSTAIN, excluded_pairs=())
    settings = FitSettings(likelihood="per-judge", omega=1.0, beta_max=5.0, delta="uniform")
    buf = fast_density.build_buffer(counts, settings)
    n = fast_density.n_unconstrained(counts, settings)
    mean, sd = rng.normal(0.0, 1.0, size=(2, n)), rng.uniform(0.3, 2.0, size=(2, n))
    logw = np.log([0.3, 0.7])
    for b in (0.0, 0.4, 1.0):
        x = rng.normal(0.0, 1.0, size=n)
        g, gq = np.zeros(n), np.zeros(n)
        ref = fast_density.reference_arrays(mean, sd, logw)
        np.testing.assert_allclose(fast_density.reference_weights(ref[1], ref[2]), [0.3, 0.7], rtol=1e-12)
        value, swap = fast_density.ladder_logp_grad(x, g, buf, b, *ref, gq)
        log_q = logsumexp(logw + norm.logpdf(x, mean, sd).sum(axis=1))
        g_post = np.zeros(n)
        log_post = fast_density.tempered_logp_grad(x, g_post, buf, 1.0)[0]
        assert value == pytest.approx((1 - b) * log_q + b * log_post, rel=1e-10)
        assert swap == pytest.approx(log_post - log_q, rel=1e-10)
        h = 1e-6
        numeric = np.array([(fast_density.ladder_logp_grad(x + h * e, np.zeros(n), buf, b, *ref, gq)[0]
                             - fast_density.ladder_logp_grad(x - h * e, np.zeros(n), buf, b, *ref, gq)[0])
                            / (2 * h) for e in np.eye(n)])
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-5)
    # without a reference, the ladder's density is the likelihood-tempered one
    x = rng.normal(0.0, 1.0, size=n)
    g1, g2 = np.zeros(n), np.zeros(n)
    none = np.zeros((0, n))
    assert (fast_density.ladder_logp_grad(x, g1, buf, 0.3, none, none, np.zeros(0), np.zeros(n))
            == fast_density.tempered_logp_grad(x, g2, buf, 0.3))
    np.testing.assert_array_equal(g1, g2)


@pytest.mark.slow
def test_tempering_towards_a_reference_samples_the_posterior_nuts_samples():
    """The same posterior as NUTS, from a reference that is only roughly right (a normal at the mode,
    SDs twice the Laplace approximation's, shifted by half of them): the path's bottom replica draws
    the reference exactly and the swaps correct for the difference."""
    from simplex_core.inference.fast_fit import fit_fast
    from simplex_core.inference.tempering import Reference, sample_tempered

    sim = simulate(scale=BINARY_ABSTAIN, n_items=150, candidates=5, judges=2, omega=1.0, beta_max=5.0, rho=0.8,
                   rng=11)
    counts = _counts(sim)
    settings = FitSettings(likelihood="per-judge", omega=1.0, beta_max=5.0, delta="uniform", chains=4, draws=1000,
                           tune=800, seed=5)
    nuts = fit_fast(counts, settings.replace(extra_rounds=0), None)
    assert nuts.diagnostics.converged, nuts.diagnostics.message
    mode = fast_engine.find_modes(counts, settings, seed=settings.seed)[0].point
    buf = fast_density.build_buffer(counts, settings)
    laplace_sd = np.sqrt(np.diag(np.linalg.inv(fast_engine.negative_hessian(mode, buf))))
    reference = Reference(mean=(mode + 0.5 * laplace_sd)[None], sd=2.0 * laplace_sd[None], log_weight=np.zeros(1))
    tempered = sample_tempered(counts, settings, [mode], replicas=8, thin=2, reference=reference)
    assert tempered.sample_stats.attrs["sampler"].endswith("variational reference")
    a = nuts.idata.posterior["expected_score"].values.reshape(-1, 5)
    b = tempered.posterior["expected_score"].values.reshape(-1, 5)
    sd = a.std(axis=0)
    assert np.max(np.abs(a.mean(axis=0) - b.mean(axis=0)) / sd) < 0.2
    np.testing.assert_allclose(b.std(axis=0), sd, rtol=0.2)


def _fit_both(counts, settings):
    from simplex_core.inference.fast_fit import fit_fast
    from simplex_core.inference.tempering import sample_tempered

    nuts = fit_fast(counts, settings.replace(extra_rounds=0), None)
    modes = fast_engine.find_modes(counts, settings, seed=settings.seed)
    starts = [p for p, _ in fast_engine.chain_starts(modes, settings.chains)]
    tempered = sample_tempered(counts, settings, starts, thin=2)
    return nuts, tempered


@pytest.mark.slow
def test_tempered_chains_sample_the_posterior_nuts_samples_on_unimodal_data():
    sim = simulate(scale=BINARY_ABSTAIN, n_items=150, candidates=5, judges=2, omega=1.0, beta_max=5.0, rho=0.8,
                   rng=11)
    counts = _counts(sim)
    settings = FitSettings(likelihood="per-judge", omega=1.0, beta_max=5.0, delta="uniform", chains=4, draws=1000, tune=800, seed=5)
    nuts, tempered = _fit_both(counts, settings)
    assert nuts.diagnostics.converged, nuts.diagnostics.message
    a = nuts.idata.posterior["expected_score"].values.reshape(-1, 5)
    b = tempered.posterior["expected_score"].values.reshape(-1, 5)
    sd = a.std(axis=0)
    # Both are Monte Carlo estimates (ESS in the hundreds): means within 0.2 posterior SD, SDs within 20 %
    assert np.max(np.abs(a.mean(axis=0) - b.mean(axis=0)) / sd) < 0.2
    np.testing.assert_allclose(b.std(axis=0), sd, rtol=0.2)
    rho_a = nuts.idata.posterior["rho"].values.reshape(-1, 2).mean(axis=0)
    rho_b = tempered.posterior["rho"].values.reshape(-1, 2).mean(axis=0)
    np.testing.assert_allclose(rho_b, rho_a, atol=0.05)


@pytest.mark.slow
def test_tempered_chains_cross_between_modes_that_stop_nuts():
    """GPQA-like data (bench replicate 2: ω = 2, β_max = 5, ρ = 0.8) whose posterior has two modes of
    comparable mass, "judge 1 carries the random effects" and "judge 2 does": NUTS chains started in
    each stay there (the fast engine's first round: R-hat about 1.7). Tempered chains started in the
    same two modes must each visit both and agree on their shares."""
    from simplex_core.inference.fast_fit import fit_fast
    from simplex_core.model.simulate import scenario

    sim = scenario("gpqa-like", 2, rho=0.8, omega=2.0, beta_max=5.0, delta="uniform")
    counts = _counts(sim, self_exclusion=True)
    settings = FitSettings(likelihood="per-judge", omega=2.0, beta_max=5.0, delta="uniform", chains=4, draws=1000, tune=1000, seed=2,
                           prior="weight-propagation")  # the paper's prior, whose two modes these are
    modes = fast_engine.find_modes(counts, settings, seed=2)
    assert len(fast_engine.chain_starts(modes, 4)) == 2  # two modes of comparable mass

    def share(R):  # per chain: share of draws in the mode where judge 1's random-effect weight is larger
        return (R[..., 0] > R[..., 1]).mean(axis=1)

    result = fit_fast(counts, settings, None)
    assert result.timing["sampler"] == "parallel tempering"  # the engine saw its NUTS chains disagree
    assert "separate modes" in result.diagnostics.message
    shares = share(result.idata.posterior["R"].values)
    assert np.all((shares > 0.1) & (shares < 0.9)), shares  # every chain visits both modes
    assert np.ptp(shares) < 0.25, shares  # and the chains agree on how much each mode holds
    assert result.diagnostics.converged, result.diagnostics.message


@pytest.mark.parametrize("tune", [30, 200])
def test_tempered_sampling_is_reproducible_and_keeps_its_ladder_in_order(tune):
    """Same seed, same draws (each chain reseeds its own thread's generator); the adapted ladder
    runs from 1 down to B_MIN, strictly decreasing; short warm-ups (one adaptation window, or none
    long enough to estimate a metric) still give finite draws."""
    from simplex_core.inference.tempering import B_MIN, sample_tempered

    sim = simulate(scale=BINARY_ABSTAIN, n_items=60, candidates=3, judges=2, omega=1.0, beta_max=5.0, rho=0.8, rng=4)
    counts = _counts(sim)
    settings = FitSettings(likelihood="per-judge", omega=1.0, beta_max=5.0, chains=2, draws=50, tune=tune, seed=9)
    start = fast_engine.find_modes(counts, settings, seed=9)[0].point
    a = sample_tempered(counts, settings, [start], replicas=4, thin=2)
    b = sample_tempered(counts, settings, [start], replicas=4, thin=2)
    np.testing.assert_array_equal(a.posterior["expected_score"].values, b.posterior["expected_score"].values)
    assert a.posterior.sizes["chain"] == 2 and a.posterior.sizes["draw"] == 50
    assert np.all(np.isfinite(a.posterior["expected_score"].values))
    ladder = np.asarray(a.sample_stats.attrs["ladder_chain0"])
    assert ladder[0] == 1.0 and ladder[-1] == pytest.approx(B_MIN) and np.all(np.diff(ladder) < 0)
    step = a.sample_stats["step_size"].values
    assert np.all(step == step[:, :1])  # no adaptation after warm-up


@pytest.mark.timeout(300)  # unstopped, the chains below would run for many minutes
def test_tempered_chains_report_progress_and_stop_when_the_callback_raises():
    """The chains run in numba for minutes on large data: the caller hears "N of M iterations" while
    they run, and an exception from its callback (a cancelled fit) stops every chain at its next
    iteration instead of after the whole run."""
    from simplex_core.inference.tempering import sample_tempered

    sim = simulate(scale=BINARY_ABSTAIN, n_items=60, candidates=3, judges=2, omega=1.0, beta_max=5.0, rho=0.8, rng=4)
    counts = _counts(sim)
    settings = FitSettings(likelihood="per-judge", omega=1.0, beta_max=5.0, chains=2, draws=400, tune=400, seed=9)
    start = fast_engine.find_modes(counts, settings, seed=9)[0].point
    sample_tempered(counts, settings, [start], replicas=4, thin=1)  # compiled and warm
    heard: list[tuple[str, float]] = []

    class Stop(Exception):
        pass

    def stop_at_first_report(message: str, fraction: float) -> None:
        heard.append((message, fraction))
        raise Stop

    big = settings.replace(draws=1_000_000, tune=1000)  # many minutes of sampling if nothing stopped it
    with pytest.raises(Stop):
        sample_tempered(counts, big, [start], replicas=4, thin=1, progress_callback=stop_at_first_report)
    (message, fraction), = heard
    assert message.startswith("parallel tempering: ") and message.endswith(f" of {2 * 1_001_000} iterations")
    assert 0.0 <= fraction < 0.5


def test_reference_tempering_lengthens_its_runs_by_their_ess_and_keeps_only_a_better_run(monkeypatch):
    """The engine's fallback after likelihood tempering left modes uncrossed: each run towards the
    reference is longer than the last by what its bulk ESS says a converged run needs (at least
    twice, at most REFERENCE_GROWTH times, at most every REFERENCE_MAX_THIN-th iteration kept), it
    stops at convergence or at divergences, and its result replaces the tempered run only with a
    lower R-hat."""
    import simplex_core.inference.fast_fit as fast_fit
    import simplex_core.inference.tempering as tempering
    from simplex_core.inference.fast_fit import REFERENCE_GROWTH, REFERENCE_MAX_THIN, REFERENCE_THIN
    from simplex_core.inference.fit_result import Diagnostics

    def diag(rhat, ess, divergences=0):
        ok = rhat <= 1.01 and ess >= 400 and not divergences
        return Diagnostics(max_rhat=rhat, min_ess_bulk=ess, min_ess_tail=ess, divergences=divergences,
                           max_rhat_all=rhat, converged=ok, message="converged." if ok else f"not converged: R-hat {rhat}.")

    def run(outcomes, before=diag(1.3, 10), extra_rounds=3):
        thins, results = [], iter(outcomes)
        monkeypatch.setattr(tempering, "sample_tempered", lambda *a, thin, **k: thins.append(thin) or f"run{len(thins)}")
        monkeypatch.setattr(fast_fit, "diagnose", lambda idata, candidates: next(results))
        counts = SimpleNamespace(candidates=("a", "b"))
        found = fast_fit._reference_tempering(counts, FitSettings(extra_rounds=extra_rounds), [np.zeros(3)],
                                               np.zeros((2, 5, 3)), before, 2, "R-hat 1.3", None)
        return thins, found

    thins, found = run([diag(1.05, 40), diag(1.002, 700)])
    asked = int(np.ceil(REFERENCE_THIN * 400 / 40))  # what the ESS says, capped at 8 times as long
    assert thins == [REFERENCE_THIN, min(REFERENCE_MAX_THIN, REFERENCE_GROWTH * REFERENCE_THIN, asked)]
    assert found[0] == "run2" and found[1].converged and found[2] == thins[-1]
    thins, found = run([diag(1.02, 300), diag(1.015, 350), diag(1.012, 380), diag(1.011, 390)])
    assert thins == [4, 8, 16, 32]  # at least twice as long each time; extra_rounds + 1 runs at most
    assert found[0] == "run4"
    thins, found = run([diag(1.02, 100), diag(1.01, 500, divergences=3)])
    assert found[0] == "run1"  # a run with divergences is never kept
    assert run([diag(1.4, 5)], before=diag(1.3, 10), extra_rounds=0)[1] is None  # no better than before

