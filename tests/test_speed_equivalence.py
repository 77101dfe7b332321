"""The fast path (engine ``'fast'``: hand-written numba density driven by nutpie) is the PyMC model.

``simplex_core/fast_density.py`` keeps PyMC's parameterisation, so its log density must equal the
PyMC model's ``logp`` up to one additive constant at every point, with the same gradient, for every
scale shape, with and without random effects, with excluded pairs; and a fit with the fast engine
must give the posterior of the plain PyMC model up to Monte Carlo error.
"""

from __future__ import annotations

import numpy as np
import pytest

from simplex_core.data import Counts
from simplex_core.model import ENGINES, FitSettings, build_model
from simplex_core.scale import Scale

fast_density = pytest.importorskip("simplex_core.fast_density")


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
]


def expected_fast(lp: float, grads: dict, point: dict, counts, settings) -> tuple[float, np.ndarray]:
    """The fast density's value and gradient expected from PyMC's logp ``lp`` and gradient ``grads``
    at ``point``: the same in PyMC's coordinates; in integrated mode R and W are non-centred
    (logit R_j = μ + σ y_j, μ = ψ(ωJ) − ψ(J), σ² = ψ'(ωJ) + ψ'(J); likewise W with K), so the
    value gains the log-Jacobian Σ log σ and the gradient maps by the chain rule (computed here
    with SciPy's polygamma, independently of the kernel)."""
    from scipy.special import expit, polygamma

    if not settings.integrated:
        return lp, fast_density.flat_from_pymc_point(grads, counts, settings)
    grads = dict(grads)
    J, K = len(counts.judges), len(counts.candidates)
    s = float(expit(float(point["omega_interval__"])))
    omega, domega_du = 8.0 * s, 8.0 * s * (1.0 - s)
    dlp_domega = 0.0
    for name, n in (("R_logodds__", J), ("W_logodds__", K)):
        a = omega * n
        mu = polygamma(0, a) - polygamma(0, n)
        sd = np.sqrt(polygamma(1, a) + polygamma(1, n))
        dsd = n * polygamma(2, a) / (2 * sd)  # dσ/dω
        y = (np.asarray(point[name]) - mu) / sd
        g_x = np.asarray(grads[name])
        lp += n * np.log(sd)  # n variables, log σ each
        dlp_domega += float(np.sum(g_x * (n * polygamma(1, a) + y * dsd))) + n * dsd / sd
        grads[name] = g_x * sd
    grads["omega_interval__"] = np.asarray(grads["omega_interval__"]) + dlp_domega * domega_du
    return lp, fast_density.flat_from_pymc_point(grads, counts, settings, values=False)


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
    logp_fn = model.compile_logp()
    dlogp = model.compile_dlogp()
    rng = np.random.default_rng(1)
    base = model.initial_point()
    offsets = []
    for _ in range(5):
        point = {k: v + rng.normal(0.0, 1.5, size=np.shape(v)) for k, v in base.items()}
        x = fast_density.flat_from_pymc_point(point, counts, settings)
        lp, grad = fast_density.logp_and_grad(counts, settings, x)
        grads = split_flat_gradient(model, point, dlogp(point))
        ref, expected = expected_fast(float(logp_fn(point)), grads, point, counts, settings)
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
    # integrated mode adds ω and β_max to the random effects' coordinates
    assert fast_density.n_unconstrained(counts, FitSettings(likelihood="per-judge", integrated=True)) == n2 + 2


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


def test_unsupported_settings_are_refused():
    counts = _counts(BINARY_ABSTAIN, 2, 3, n=10, seed=0)
    assert not fast_density.supports(FitSettings(likelihood="per-judge", prior="diagonal"))
    for likelihood in ("per-judge", "shared-truth"):
        assert fast_density.supports(FitSettings(likelihood=likelihood, integrated=True))
    with pytest.raises(ValueError, match="weight-propagation prior only; got prior 'mixing'"):
        fast_density.build_buffer(counts, FitSettings(likelihood="per-judge", prior="mixing"))


@pytest.mark.slow
@pytest.mark.skipif("fast" not in ENGINES, reason="engine 'fast' is not wired into fit_model yet")
def test_fast_posterior_matches_pymc_posterior():
    """Monte Carlo check: the fast engine and PyMC's own NUTS on the plain PyMC model agree on E_k."""
    from simplex_core.inference import fit_model

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

    from simplex_core.data import count_tensor, load_table
    from simplex_core.inference import fit_model
    from simplex_core.simulate import simulate

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


def test_polygamma_matches_scipy():
    """ψ, ψ', ψ'' of the non-centring (small arguments: ω near 0) against SciPy."""
    from scipy.special import polygamma

    for x in np.concatenate([np.geomspace(1e-6, 1e3, 60), [0.5, 1.0, 9.99, 10.0, 10.01, 37.3]]):
        got = fast_density.polygamma012(float(x))
        for n in range(3):
            assert got[n] == pytest.approx(float(polygamma(n, x)), rel=1e-13, abs=1e-13), (n, x)


def test_integrated_draws_store_omega_and_beta_max():
    """The stored ω and β_max are the interval transforms of their coordinates (the last two), as
    scalars per draw, from the parallel-tempering sampler too (it shares the fast path's expand)."""
    from simplex_core.tempering import sample_tempered

    counts = _counts(BINARY_ABSTAIN, 2, 3, n=20, seed=4)
    settings = FitSettings(likelihood="per-judge", integrated=True, chains=1, draws=30, tune=30, seed=2)
    names, shapes, _ = fast_density.stored_variables(counts, settings)
    assert dict(zip(names, shapes))["omega"] == () and dict(zip(names, shapes))["beta_max"] == ()
    buf = fast_density.build_buffer(counts, settings)
    x = np.random.default_rng(0).normal(size=fast_density.n_unconstrained(counts, settings))
    out = np.zeros(fast_density.stored_slices(shapes)[-1].stop)
    fast_density.expand(x, out, buf)
    stored = {n: out[sl] for n, sl in zip(names, fast_density.stored_slices(shapes))}
    np.testing.assert_allclose(stored["omega"], 8.0 / (1.0 + np.exp(-x[-2])), rtol=1e-12)
    np.testing.assert_allclose(stored["beta_max"], 20.0 / (1.0 + np.exp(-x[-1])), rtol=1e-12)
    # R and W are non-centred: logit R_j = μ + σ y_j with the prior moments of logit R_j at this ω
    from scipy.special import expit, polygamma

    omega = stored["omega"][0]
    for name, n, y in (("R", 2, x[-2 - 3 - 2:-2 - 3]), ("W", 3, x[-2 - 3:-2])):
        mu = polygamma(0, omega * n) - polygamma(0, n)
        sd = np.sqrt(polygamma(1, omega * n) + polygamma(1, n))
        np.testing.assert_allclose(stored[name], expit(mu + sd * y), rtol=1e-12)
    post = sample_tempered(counts, settings, [np.zeros_like(x)], replicas=3).posterior
    assert post["omega"].dims == ("chain", "draw") and post["beta_max"].dims == ("chain", "draw")
    assert (0 < post["omega"].values).all() and (post["omega"].values < 8).all()
    assert (0 < post["beta_max"].values).all() and (post["beta_max"].values < 20).all()
    assert post["omega"].values.std() > 0  # ω moves: it is a parameter, not a constant
