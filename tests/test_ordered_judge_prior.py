"""The ordered (latent-threshold) judge prior (``prior="ordered"``): what the model docstring claims of
it, on prior draws of the numpy sampler and of the PyMC graph, and that β_max does not enter it.

Claims: every row is a distribution and stochastically dominates the one above (no judge can be read
as flipped); before any data a judge scores each inner true level about at that level (the end levels
are pulled inward), where the weight-propagation prior leans up (``mean_weight_propagation``)."""

from __future__ import annotations

import numpy as np
import pymc as pm

from simplex_core.data.scale import Scale
from simplex_core.model.definition import build_model
from simplex_core.model.priors import mean_weight_propagation, sample_ordered, stochastically_dominates
from simplex_core.model.settings import FitSettings
from simplex_core.model.simulate import simulate
from tests.fixtures.fit_fixtures import counts_from_simulation

FIVE = Scale(tuple(float(v) for v in range(1, 6)))


def test_ordered_rows_are_distributions_ordered_and_centred_unlike_weight_propagation():
    draws = sample_ordered(FIVE, 5.0, None, rng=1, size=4000)  # [S, T, M]
    assert np.allclose(draws.sum(axis=-1), 1.0, atol=1e-9)
    assert stochastically_dominates(draws, atol=1e-9)
    levels = np.arange(5, dtype=float)
    mean_score = (draws.mean(axis=0) * levels).sum(axis=-1)  # per true level, index units
    assert np.all(np.abs(mean_score[1:-1] - levels[1:-1]) < 0.15), mean_score
    assert mean_score[0] > 0.1 and mean_score[-1] < 3.9  # only the end levels pulled inward
    lean = mean_weight_propagation(FIVE, 5.0) @ levels - levels
    assert lean[1:-1].min() > 0.5  # the default prior's upward lean this one removes


def test_a_sharper_judge_has_a_larger_rho():
    # ρ sets the discrimination: at ρ = 0.9 an inner level is scored right far more often than at ρ = 0.1
    sharp = sample_ordered(FIVE, 5.0, 0.9, rng=2, size=2000)[:, 2, 2].mean()
    blunt = sample_ordered(FIVE, 5.0, 0.1, rng=2, size=2000)[:, 2, 2].mean()
    assert sharp > blunt + 0.15, (sharp, blunt)  # 0.54 against 0.34 (leniency spreads both)


def test_pymc_graph_draws_the_numpy_samplers_prior():
    sim = simulate(scale=Scale((1.0, 2.0, 3.0, 4.0)), n_items=5, candidates=["a", "b"], judges=["j1", "j2"], rng=3)
    counts = counts_from_simulation(sim)
    model = build_model(counts, FitSettings(prior="ordered", omega=0.0, likelihood="per-judge"))
    theta = pm.draw(model["theta"], draws=3000, random_seed=4)  # [S, J, T, M], prior draws
    ref = sample_ordered(counts.scale, 5.0, None, rng=5, size=6000)
    se = np.sqrt(theta.reshape(-1, 4, 4).var(axis=0) / theta.shape[0] / 2 + ref.var(axis=0) / ref.shape[0])
    z = np.abs(theta.reshape(-1, 4, 4).mean(axis=0) - ref.mean(axis=0)) / se
    assert z.max() < 4.5, z


def test_beta_max_sets_how_sharp_the_typical_judge_is():
    # β_max keeps its meaning: 0, no belief that judges are good (near noise); larger, sharper judges
    right = [sample_ordered(FIVE, b, None, rng=9, size=3000)[:, 2, 2].mean() for b in (0.0, 5.0, 20.0)]
    assert right[0] < 0.3 < right[1] < right[2], right
    assert abs(right[0] - 0.2) < abs(right[1] - 0.2)  # 5 levels: chance is 0.2


def test_on_two_levels_the_ordered_setting_is_weight_propagation():
    from simplex_core.model import fast_density

    binary = Scale((0.0, 1.0))
    sim = simulate(scale=binary, n_items=30, candidates=["a", "b", "c"], judges=["j1", "j2"], rng=10)
    counts = counts_from_simulation(sim)
    ordered, wp = FitSettings(prior="ordered", beta_max=3.0), FitSettings(prior="weight-propagation", beta_max=3.0)
    x = np.random.default_rng(11).normal(0.0, 1.0, size=fast_density.n_unconstrained(counts, wp))
    (lp0, g0), (lp1, g1) = fast_density.logp_and_grad(counts, ordered, x), fast_density.logp_and_grad(counts, wp, x)
    assert lp0 == lp1 and np.array_equal(g0, g1)
    assert "leniency" not in build_model(counts, ordered).named_vars
    # three observed levels (binary with abstention) keep the latent thresholds
    abstain = Scale((-1.0, 0.0, 1.0), ("incorrect", "unsure", "correct"), (-1.0, 1.0))
    sim3 = simulate(scale=abstain, n_items=30, candidates=["a", "b"], judges=["j1"], rng=12)
    assert "leniency" in build_model(counts_from_simulation(sim3), ordered).named_vars
