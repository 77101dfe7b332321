"""The fast path (engine ``'fast'``: hand-written numba density driven by nutpie) is the PyMC model.

``simplex_core/model/fast_density.py`` keeps PyMC's parameterisation, so its log density must equal the
PyMC model's ``logp`` up to one additive constant at every point, with the same gradient, for every
scale shape, with and without random effects, with excluded pairs; and a fit with the fast engine
must give the posterior of the plain PyMC model up to Monte Carlo error.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from simplex_core.data.views import Counts
from simplex_core.model.settings import ENGINES, FitSettings
from simplex_core.model.definition import build_model
from simplex_core.data.scale import Scale

fast_density = pytest.importorskip("simplex_core.model.fast_density")


def _counts(scale: Scale, J: int, K: int, n: int, seed: int, exclude: tuple[tuple[int, int], ...] = ()) -> Counts:
    rng = np.random.default_rng(seed)
    M = scale.n_levels
    N = np.stack([[rng.multinomial(n, rng.dirichlet(np.ones(M))) for _ in range(K)] for _ in range(J)])
    included = np.ones((J, K), dtype=bool)
    for j, k in exclude:
        included[j, k] = False
    judges = tuple(f"judge{j}" for j in range(J))
    cands = tuple(f"cand{k}" for k in range(K))
    return Counts(N=N.astype(np.int64), included=included, judges=judges, candidates=cands, scale=scale,
                  excluded_pairs=tuple((judges[j], cands[k]) for j, k in exclude))


BINARY_ABSTAIN = Scale((-1.0, 0.0, 1.0), ("incorrect", "unsure", "correct"), (-1.0, 1.0))
CASES = [
    # (id, scale, J, K, settings)
    ("binary+abstain, omega 2", BINARY_ABSTAIN, 2, 4, FitSettings(likelihood="per-judge", omega=2.0, beta_max=5.0, delta="uniform")),
    ("binary+abstain, omega 0", BINARY_ABSTAIN, 2, 4, FitSettings(likelihood="per-judge", omega=0.0, beta_max=5.0)),
    ("square 2 levels, omega 1", Scale((0.0, 1.0)), 3, 3, FitSettings(likelihood="per-judge", omega=1.0, beta_max=0.0, delta="inflation")),
    ("square 3 levels, omega 4", Scale((1.0, 2.0, 3.0)), 2, 3, FitSettings(likelihood="per-judge", omega=4.0, beta_max=10.0, delta="central")),
    ("square 5 levels, omega 0", Scale((1.0, 2.0, 3.0, 4.0, 5.0)), 2, 3, FitSettings(likelihood="per-judge", omega=0.0, beta_max=5.0)),
    ("5 observed, 3 true, omega 2", Scale((1.0, 2.0, 3.0, 4.0, 5.0), true_values=(1.0, 3.0, 5.0)), 2, 3,
     FitSettings(likelihood="per-judge", omega=2.0, beta_max=20.0, delta=(1.0, 2.0, 3.0))),
    # integrated mode: ω and β_max are coordinates (always with random effects)
    ("binary+abstain, integrated", BINARY_ABSTAIN, 3, 4, FitSettings(likelihood="per-judge", integrated=True)),
    ("5 observed, 3 true, integrated", Scale((1.0, 2.0, 3.0, 4.0, 5.0), true_values=(1.0, 3.0, 5.0)), 2, 3,
     FitSettings(likelihood="per-judge", integrated=True, delta="central")),
    # the other two judge priors (appendix E), with and without random effects, square or not
    ("diagonal, 3 levels, omega 2", Scale((1.0, 2.0, 3.0)), 2, 3,
     FitSettings(likelihood="per-judge", prior="diagonal", omega=2.0, beta_max=7.0)),
    ("diagonal, binary+abstain, omega 0", BINARY_ABSTAIN, 3, 4, FitSettings(likelihood="per-judge", prior="diagonal", omega=0.0)),
    ("diagonal, 5 observed, 3 true, integrated", Scale((1.0, 2.0, 3.0, 4.0, 5.0), true_values=(1.0, 3.0, 5.0)), 2, 3,
     FitSettings(likelihood="per-judge", prior="diagonal", integrated=True)),
    ("mixing, 4 levels, omega 1", Scale((1.0, 2.0, 3.0, 4.0)), 2, 3,
     FitSettings(likelihood="per-judge", prior="mixing", omega=1.0, beta_max=12.0, delta="inflation")),
    ("mixing, binary+abstain, omega 0", BINARY_ABSTAIN, 3, 4, FitSettings(likelihood="per-judge", prior="mixing", omega=0.0)),
    ("mixing, 5 observed, 3 true, integrated", Scale((1.0, 2.0, 3.0, 4.0, 5.0), true_values=(1.0, 3.0, 5.0)), 2, 3,
     FitSettings(likelihood="per-judge", prior="mixing", integrated=True)),
    # the ordered (latent-threshold) judge prior: ρ sets the discrimination, no judge block
    ("ordered, 5 levels, omega 0", Scale((1.0, 2.0, 3.0, 4.0, 5.0)), 2, 3,
     FitSettings(likelihood="per-judge", prior="ordered", omega=0.0)),
    ("ordered, binary+abstain, omega 2", BINARY_ABSTAIN, 3, 4, FitSettings(likelihood="per-judge", prior="ordered", omega=2.0)),
    ("ordered, 5 observed, 3 true, integrated", Scale((1.0, 2.0, 3.0, 4.0, 5.0), true_values=(1.0, 3.0, 5.0)), 2, 3,
     FitSettings(likelihood="per-judge", prior="ordered", integrated=True)),
]


def pymc_reference(model, counts, settings):
    """PyMC's log density of ``model`` as the fast path should give it: point (PyMC's value variables)
    → (logp, gradient laid out in the fast path's order; its coordinates are PyMC's value variables,
    in integrated mode too: R and W through their augmentation's V and E).

    logp and dlogp are compiled once, in FAST_COMPILE: the graph as built, without PyTensor's
    rewrites and C compilation. The same numbers at a few points (logp 1e-13 apart on the integrated
    five-level shared-truth case) for under half the compile time, which dominated these tests
    (10–16 s per compile of the pair)."""
    logp_fn, dlogp = model.compile_logp(mode="FAST_COMPILE"), model.compile_dlogp(mode="FAST_COMPILE")

    def at(point: dict) -> tuple[float, np.ndarray]:
        grads = split_flat_gradient(model, point, dlogp(point))
        return float(logp_fn(point)), fast_density.flat_from_pymc_point(grads, counts, settings)

    return at


def split_flat_gradient(model, point, flat) -> dict:
    """PyMC's flat dlogp vector as one array per value variable, shaped like ``point``."""
    grads, start = {}, 0
    for v in model.value_vars:
        shape = np.shape(point[v.name])
        size = int(np.prod(shape))
        grads[v.name] = flat[start:start + size].reshape(shape)
        start += size
    return grads


@pytest.mark.parametrize("name, scale, J, K, settings", CASES, ids=[c[0] for c in CASES])
def test_log_density_and_gradient_equal_pymc(name, scale, J, K, settings):
    counts = _counts(scale, J, K, n=40, seed=len(name), exclude=((0, 0),))
    model = build_model(counts, settings)
    reference = pymc_reference(model, counts, settings)
    rng = np.random.default_rng(1)
    base = model.initial_point()
    offsets = []
    for _ in range(5):
        point = {k: v + rng.normal(0.0, 1.5, size=np.shape(v)) for k, v in base.items()}
        x = fast_density.flat_from_pymc_point(point, counts, settings)
        lp, grad = fast_density.logp_and_grad(counts, settings, x)
        ref, expected = reference(point)
        offsets.append(lp - ref)
        np.testing.assert_allclose(grad, expected, rtol=1e-8, atol=1e-8)
    # one constant (the dropped normalising constants) at every point
    assert np.ptp(offsets) < 1e-7 * max(1.0, abs(offsets[0]))


def test_no_random_effect_coordinates_at_omega_zero():
    counts = _counts(BINARY_ABSTAIN, 2, 4, n=10, seed=0)
    n0 = fast_density.n_unconstrained(counts, FitSettings(likelihood="per-judge", omega=0.0))
    n2 = fast_density.n_unconstrained(counts, FitSettings(likelihood="per-judge", omega=2.0))
    # Z (K × (T−1)), R (J), W (K) exist only with random effects
    assert n2 - n0 == 4 * 1 + 2 + 4
    model = build_model(counts, FitSettings(likelihood="per-judge", omega=0.0))
    assert n0 == sum(int(np.prod(np.shape(v))) for v in model.initial_point().values())
    # integrated mode: two coordinates per R_j and W_k (the augmentation's V and E), then ω and β_max
    n_int = fast_density.n_unconstrained(counts, FitSettings(likelihood="per-judge", integrated=True))
    assert n_int == n2 + 2 + 4 + 2
    model = build_model(counts, FitSettings(likelihood="per-judge", integrated=True))
    assert n_int == sum(int(np.prod(np.shape(v))) for v in model.initial_point().values())


def test_excluded_pairs_do_not_enter_the_density():
    counts = _counts(Scale((1.0, 2.0, 3.0)), 2, 3, n=30, seed=3, exclude=((1, 2),))
    settings = FitSettings(likelihood="per-judge", omega=2.0, delta="uniform")
    changed_N = counts.N.copy()
    changed_N[1, 2] = [0, 0, 99]
    changed = Counts(N=changed_N, included=counts.included, judges=counts.judges, candidates=counts.candidates,
                     scale=counts.scale, excluded_pairs=counts.excluded_pairs)
    x = np.random.default_rng(0).normal(size=fast_density.n_unconstrained(counts, settings))
    a, ga = fast_density.logp_and_grad(counts, settings, x)
    b, gb = fast_density.logp_and_grad(changed, settings, x)
    assert a == b
    np.testing.assert_array_equal(ga, gb)
    # an included pair's counts do change it
    changed_N[0, 2] = [0, 0, 99]
    c, _ = fast_density.logp_and_grad(
        Counts(N=changed_N, included=counts.included, judges=counts.judges, candidates=counts.candidates,
               scale=counts.scale, excluded_pairs=counts.excluded_pairs), settings, x)
    assert c != a


def test_every_judge_prior_is_supported_and_an_unknown_one_refused():
    from simplex_core.model.settings import PRIORS

    counts = _counts(BINARY_ABSTAIN, 2, 3, n=10, seed=0)
    for prior in PRIORS:
        for likelihood in ("per-judge", "shared-truth"):
            assert fast_density.supports(FitSettings(likelihood=likelihood, prior=prior, integrated=True))
    odd = SimpleNamespace(prior="spiky")  # a prior the settings' own validation would refuse first
    assert not fast_density.supports(odd)
    with pytest.raises(ValueError, match="got prior 'spiky'"):
        fast_density.build_buffer(counts, odd)


@pytest.mark.slow
@pytest.mark.skipif("fast" not in ENGINES, reason="engine 'fast' is not wired into fit_model yet")
def test_fast_posterior_matches_pymc_posterior():
    """Monte Carlo check: the fast engine and PyMC's own NUTS on the plain PyMC model agree on E_k."""
    from simplex_core.inference.fitting import fit_model

    scale = Scale((1.0, 2.0, 3.0))
    rng = np.random.default_rng(7)
    pi = np.array([[0.6, 0.3, 0.1], [0.3, 0.4, 0.3], [0.1, 0.3, 0.6]])
    theta = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]])
    N = np.stack([[rng.multinomial(60, p @ theta) for p in pi] for _ in range(2)]).astype(np.int64)
    counts = Counts(N=N, included=np.ones((2, 3), dtype=bool), judges=("a", "b"), candidates=("x", "y", "z"),
                    scale=scale)
    base = FitSettings(likelihood="per-judge", omega=1.0, beta_max=5.0, delta="uniform", chains=2, draws=1500, tune=1000, seed=3)
    fast = fit_model(counts, base.replace(engine="fast"))
    ref = fit_model(counts, base.replace(engine="pymc", draws=1000, tune=1000))
    for res in (fast, ref):
        assert res.diagnostics.max_rhat < 1.02
    import arviz as az

    for var in ("expected_score", "rho"):
        a = fast.idata.posterior[var]
        b = ref.idata.posterior[var]
        se = np.sqrt(az.mcse(fast.idata.posterior[[var]])[var].values ** 2
                     + az.mcse(ref.idata.posterior[[var]])[var].values ** 2)
        z = np.abs(a.mean(("chain", "draw")).values - b.mean(("chain", "draw")).values) / se
        assert np.all(z < 4.5), (var, z)
        # spreads agree too (posterior SDs within 20 %)
        np.testing.assert_allclose(a.std(("chain", "draw")).values, b.std(("chain", "draw")).values, rtol=0.2)


@pytest.mark.slow
def test_integrated_fast_posterior_matches_nutpie_on_pymc_graph():
    """Integrated mode (ω, β_max random): the fast engine converges on small simulated data and gives
    the posterior of the PyMC graph sampled by nutpie, up to Monte Carlo error, ω and β_max included."""
    import arviz as az

    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.simulate import simulate

    sim = simulate(scale=Scale((0.0, 1.0)), n_items=40, candidates=3, judges=3, omega=0.5, rng=11)
    counts = count_tensor(load_table(sim.frame, scale=sim.scale))
    base = FitSettings(integrated=True, chains=2, draws=1000, tune=1000, seed=5)
    fast = fit_model(counts, base.replace(engine="fast"))
    ref = fit_model(counts, base.replace(engine="nutpie"))
    assert fast.timing["engine_used"] == "fast"
    assert fast.diagnostics.divergences == 0
    assert fast.diagnostics.max_rhat_all < 1.02
    for var in ("expected_score", "omega", "beta_max", "rho"):
        a, b = fast.idata.posterior[var], ref.idata.posterior[var]
        assert a.dims == b.dims
        se = np.sqrt(az.mcse(fast.idata.posterior[[var]])[var].values ** 2
                     + az.mcse(ref.idata.posterior[[var]])[var].values ** 2)
        z = np.abs(a.mean(("chain", "draw")).values - b.mean(("chain", "draw")).values) / se
        assert np.all(z < 4.5), (var, z)
        np.testing.assert_allclose(a.std(("chain", "draw")).values, b.std(("chain", "draw")).values, rtol=0.2)


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["diagonal", "mixing"])
def test_other_judge_priors_fast_posterior_matches_nutpie_on_pymc_graph(prior):
    """The diagonal and mixing judge priors (appendix E) run on the fast engine and give the posterior
    of the PyMC graph sampled by nutpie, up to Monte Carlo error, on simulated three-level data with
    three judges, shared-truth likelihood and random effects."""
    import arviz as az

    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.simulate import simulate

    sim = simulate(scale=Scale((1.0, 2.0, 3.0)), n_items=30, candidates=3, judges=3, omega=0.5, rng=4)
    counts = count_tensor(load_table(sim.frame, scale=sim.scale))
    base = FitSettings(prior=prior, omega=1.0, beta_max=5.0, chains=2, draws=1000, tune=1000, seed=6)
    fast = fit_model(counts, base.replace(engine="fast"))
    ref = fit_model(counts, base.replace(engine="nutpie"))
    assert fast.timing["engine_used"] == "fast"
    assert fast.diagnostics.divergences == 0 and fast.diagnostics.max_rhat_all < 1.02
    # the β_max statistic of reweighting equals the one read from the PyMC graph's own Dirichlets
    from simplex_core.inference.reweighting import _boost_log_from_pymc_vars

    boost = _boost_log_from_pymc_vars(ref.idata.posterior, prior, counts.scale)
    ref_post = ref.idata.posterior.assign(boost_log=ref.idata.posterior["rho"].copy(data=boost.reshape(2, -1, 3)))
    for var in ("expected_score", "rho", "theta", "boost_log"):
        a, b = fast.idata.posterior[var], ref_post[var]
        se = np.sqrt(az.mcse(fast.idata.posterior[[var]])[var].values ** 2 + az.mcse(ref_post[[var]])[var].values ** 2)
        z = np.abs(a.mean(("chain", "draw")).values - b.mean(("chain", "draw")).values) / se
        assert np.all(z < 4.5), (var, z)
        np.testing.assert_allclose(a.std(("chain", "draw")).values, b.std(("chain", "draw")).values, rtol=0.25)


@pytest.mark.parametrize("likelihood", ["per-judge", "shared-truth"])
def test_integrated_density_near_omega_zero(likelihood):
    """ω → 0 (R, W → 0 through the augmentation's shift E/(ωn)): the fast density stays finite and
    equals PyMC's up to the same constant as elsewhere, gradient included."""
    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.model.simulate import simulate

    sim = simulate(scale=Scale((0.0, 1.0)), n_items=12, candidates=3, judges=2, omega=0.5, rng=3)
    counts = count_tensor(load_table(sim.frame, scale=sim.scale))
    settings = FitSettings(likelihood=likelihood, integrated=True)
    model = build_model(counts, settings)
    reference = pymc_reference(model, counts, settings)
    rng = np.random.default_rng(2)
    offsets = []
    for u_omega in (0.0, -4.0, -9.0, -14.0):  # ω = 4, 0.14, 1e-3, 7e-6
        point = {k: v + rng.normal(0.0, 1.0, size=np.shape(v)) for k, v in model.initial_point().items()}
        point["omega_interval__"] = np.asarray(u_omega)
        x = fast_density.flat_from_pymc_point(point, counts, settings)
        lp, grad = fast_density.logp_and_grad(counts, settings, x)
        assert np.isfinite(lp) and np.all(np.isfinite(grad))
        ref, expected = reference(point)
        offsets.append(lp - ref)
        np.testing.assert_allclose(grad, expected, rtol=1e-7, atol=1e-7)
    assert np.ptp(offsets) < 1e-7 * max(1.0, abs(offsets[0]))
    # at ω ≈ 7e-6 the stored R and W are (numerically) 0, not NaN
    buf = fast_density.build_buffer(counts, settings)
    names, shapes, _ = fast_density.stored_variables(counts, settings)
    out = np.zeros(fast_density.stored_slices(shapes)[-1].stop)
    fast_density.expand(x, out, buf)
    stored = {n: out[sl] for n, sl in zip(names, fast_density.stored_slices(shapes))}
    assert np.all(stored["R"] < 1e-6) and np.all(stored["W"] < 1e-6) and np.all(stored["R"] >= 0)


@pytest.mark.parametrize("omega", [0.05, 1.0, 6.0])
def test_augmented_prior_is_the_beta_prior(omega):
    """The augmentation is exact: R = sigmoid(logit V − E/(ωJ)) with V ~ Beta(1 + ωJ, J), E ~ Exp(1)
    is Beta(ωJ, J)-distributed (KS test on draws of the PyMC graph's prior, J = 3 judges; W with K = 4
    likewise)."""
    import pymc as pm
    from scipy import stats

    counts = _counts(BINARY_ABSTAIN, 3, 4, n=5, seed=0)
    model = build_model(counts, FitSettings(likelihood="per-judge", integrated=True))
    fixed = pm.do(model, {"omega": np.asarray(omega)})
    draws = pm.draw([fixed["R"], fixed["W"]], draws=4000, random_seed=int(omega * 100))
    for values, n in ((draws[0], 3), (draws[1], 4)):
        for i in range(values.shape[1]):
            p = stats.kstest(values[:, i], stats.beta(omega * n, n).cdf).pvalue
            assert p > 1e-3, (omega, n, i, p)
    # and a wrong prior is told apart: Beta(1 + ωJ, J) (V itself) fails the same test
    assert stats.kstest(draws[0][:, 0], stats.beta(1 + omega * 3, 3).cdf).pvalue < 1e-3


def test_integrated_draws_store_omega_and_beta_max():
    """The stored ω and β_max are the interval transforms of their coordinates (the last two), as
    scalars per draw, from the parallel-tempering sampler too (it shares the fast path's expand)."""
    from simplex_core.inference.tempering import sample_tempered

    counts = _counts(BINARY_ABSTAIN, 2, 3, n=20, seed=4)
    # 150 warm-up iterations: with 30, the step size of seed 2 ended too large and the chain never moved
    # (the check below then passed only on rounding noise)
    settings = FitSettings(likelihood="per-judge", integrated=True, chains=1, draws=30, tune=150, seed=2)
    names, shapes, _ = fast_density.stored_variables(counts, settings)
    assert dict(zip(names, shapes))["omega"] == () and dict(zip(names, shapes))["beta_max"] == ()
    buf = fast_density.build_buffer(counts, settings)
    x = np.random.default_rng(0).normal(size=fast_density.n_unconstrained(counts, settings))
    out = np.zeros(fast_density.stored_slices(shapes)[-1].stop)
    fast_density.expand(x, out, buf)
    stored = {n: out[sl] for n, sl in zip(names, fast_density.stored_slices(shapes))}
    np.testing.assert_allclose(stored["omega"], 8.0 / (1.0 + np.exp(-x[-2])), rtol=1e-12)
    np.testing.assert_allclose(stored["beta_max"], 20.0 / (1.0 + np.exp(-x[-1])), rtol=1e-12)
    # R and W come from the augmentation: logit R_j = logit V_j − E_j/(ωJ) (J = 2, K = 3: V_R, E_R,
    # V_W, E_W are the 10 coordinates before ω and β_max)
    from scipy.special import expit

    omega = stored["omega"][0]
    rw = x[-2 - 10:-2]
    for name, n, v, e in (("R", 2, rw[0:2], rw[2:4]), ("W", 3, rw[4:7], rw[7:10])):
        np.testing.assert_allclose(stored[name], expit(v - np.exp(e) / (omega * n)), rtol=1e-12)
    post = sample_tempered(counts, settings, [np.zeros_like(x)], replicas=3).posterior
    assert post["omega"].dims == ("chain", "draw") and post["beta_max"].dims == ("chain", "draw")
    assert (0 < post["omega"].values).all() and (post["omega"].values < 8).all()
    assert (0 < post["beta_max"].values).all() and (post["beta_max"].values < 20).all()
    assert post["omega"].values.std() > 0.05  # ω moves: it is a parameter, not a constant
