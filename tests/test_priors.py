"""Tests of simplex_core/model/priors.py: the weight-propagation graph and samplers, the alternative
judge priors, δ presets and the stochastic-dominance check."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simplex_core.model.priors import DELTA_PRESETS, delta_preset, mean_judge_offset, mean_weight_propagation, parse_delta, propagate, sample_diagonal_heavy, sample_judge_matrices, sample_mixing, sample_weight_propagation, stochastically_dominates, weight_propagation_graph
from simplex_core.data.scale import Scale

BINARY_ABSTAIN = Scale((-1.0, 0.0, 1.0), ("incorrect", "unsure", "correct"), (-1.0, 1.0))
ODD_OF_FIVE = Scale((1.0, 2.0, 3.0, 4.0, 5.0), (), (1.0, 3.0, 5.0))


@st.composite
def scales(draw) -> Scale:
    """Square scales with 2..7 levels and non-square ones (any >= 2 of 2..7 observed levels)."""
    n_obs = draw(st.integers(2, 7))
    start = draw(st.integers(-3, 3))
    values = tuple(float(start + i) for i in range(n_obs))
    if draw(st.booleans()):
        return Scale(values)
    idx = draw(st.lists(st.integers(0, n_obs - 1), min_size=2, max_size=n_obs, unique=True))
    return Scale(values, (), tuple(values[i] for i in sorted(idx)))


def _all_scales() -> st.SearchStrategy[Scale]:
    return st.one_of(st.just(BINARY_ABSTAIN), st.just(ODD_OF_FIVE), scales())


# -- graph structure -------------------------------------------------------------------------------

@given(_all_scales())
@settings(max_examples=60, deadline=None)
def test_graph_structure(scale):
    g = weight_propagation_graph(scale)
    assert (g.n_true, g.n_obs) == (scale.n_true, scale.n_levels)
    assert len(g.nodes) == scale.n_true * scale.n_levels
    assert len(g.transitions) == scale.n_true - 1
    assert g.first_row_boosted == scale.true_index[0]
    for t, tr in enumerate(g.transitions):
        assert tr.source_row == t
        assert tr.parents == tuple(range(g.n_obs))
        target = scale.true_index[t + 1]
        for m2, children, pos in zip(tr.parents, tr.children, tr.boosted):
            assert children == tuple(range(m2, g.n_obs))
            if m2 <= target:
                assert children[pos] == target
            else:
                assert pos == -1
        # only the top observed level passes all its mass
        assert tr.pass_through_nodes == ((g.n_obs - 1, g.n_obs - 1),)
        assert len(tr.dirichlet_nodes) == g.n_obs - 1
    # dense form agrees with the lists
    assert g.edge_mask.sum() == g.n_obs * (g.n_obs + 1) // 2
    assert g.boost_mask.shape == (g.n_true - 1, g.n_obs, g.n_obs)
    for t in range(g.n_true - 1):
        target = scale.true_index[t + 1]
        assert g.boost_mask[t].sum() == target + 1
        assert np.all(g.boost_mask[t][:, target][: target + 1] == 1)


def test_three_level_graph_is_the_papers_appendix_b_parameterisation():
    """Appendix B, 1-based: β_{1,1} = [1, 1+ρβ, 1]; β_{1,2} = [β_{1,1,2}, β_{1,1,3}] = [1+ρβ, 1];
    β_{2,1} = [1, 1, 1+ρβ]; β_{2,2} = [β_{2,1,2}, β_{2,1,3}] = [1, 1+ρβ]; α_{1,3} = α_{2,3} = 1."""
    b = 3.7
    graph = weight_propagation_graph(Scale((1.0, 2.0, 3.0)))
    _, conc = graph.concentration(b)
    paper = {
        (0, 0): [1, 1 + b, 1],
        (0, 1): [1 + b, 1],
        (1, 0): [1, 1, 1 + b],
        (1, 1): [1, 1 + b],
    }
    for (m1, m2), expected in paper.items():
        row = conc[m1, m2]
        np.testing.assert_allclose(row[m2:], expected)   # the children are observed levels m2..3
        assert np.all(row[:m2] == 0)
    for m1 in (0, 1):  # node (m1, 3) has the single child (m1+1, 3): deterministic α = 1
        assert np.count_nonzero(conc[m1, 2]) == 1 and conc[m1, 2, 2] > 0
        assert graph.transitions[m1].pass_through_nodes == ((2, 2),)
    # node (2,1) has weights, i.e. it is a node although m2 < m1 (the all-cells reading)
    assert graph.transitions[1].dirichlet_nodes[0] == (0, (0, 1, 2), 2)


def test_binary_with_abstain_graph():
    graph = weight_propagation_graph(BINARY_ABSTAIN)
    assert graph.first_row_boosted == 0            # Θ[incorrect, ·] boosted on "incorrect"
    (tr,) = graph.transitions
    assert tr.children == ((0, 1, 2), (1, 2), (2,))
    assert tr.boosted == (2, 1, 0)                 # every node boosts its edge into "correct"


def test_graph_boost_unreachable_cell():
    """True {1,3,5} in 1..5: from observed 4 the correct cell 3 of the next row is not a child."""
    graph = weight_propagation_graph(ODD_OF_FIVE)
    assert graph.transitions[0].boosted == (2, 1, 0, -1, -1)
    assert graph.transitions[1].boosted == (4, 3, 2, 1, 0)


# -- propagate ---------------------------------------------------------------------------------

def test_propagate_hand_computed_two_levels():
    graph = weight_propagation_graph(Scale((0.0, 1.0)))
    theta = propagate(np.array([0.7, 0.3]), np.array([[[0.6, 0.4], [0.0, 1.0]]]), graph)
    np.testing.assert_allclose(theta, [[0.7, 0.3], [0.42, 0.58]])


def test_propagate_hand_computed_three_levels():
    graph = weight_propagation_graph(Scale((1.0, 2.0, 3.0)))
    first = np.array([0.5, 0.3, 0.2])
    a0 = np.array([[0.2, 0.5, 0.3], [0.0, 0.6, 0.4], [0.0, 0.0, 1.0]])
    a1 = np.array([[0.1, 0.1, 0.8], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]])
    theta = propagate(first, np.stack([a0, a1]), graph)
    # row 2: [0.5*0.2, 0.5*0.5 + 0.3*0.6, 0.5*0.3 + 0.3*0.4 + 0.2] = [0.10, 0.43, 0.47]
    np.testing.assert_allclose(theta[1], [0.10, 0.43, 0.47])
    # row 3: [0.1*0.1, 0.1*0.1 + 0.43*0.5, 0.1*0.8 + 0.43*0.5 + 0.47] = [0.01, 0.225, 0.765]
    np.testing.assert_allclose(theta[2], [0.01, 0.225, 0.765])


def test_propagate_rejects_weight_on_a_non_edge():
    graph = weight_propagation_graph(Scale((0.0, 1.0)))
    with pytest.raises(ValueError, match="non-edge"):
        propagate(np.array([0.5, 0.5]), np.array([[[1.0, 0.0], [0.5, 0.5]]]), graph)
    with pytest.raises(ValueError, match=r"edge_weights has shape \(2, 2\); expected \[\.\.\., 1, 2, 2\]"):
        propagate(np.array([0.5, 0.5]), np.eye(2), graph)


@given(_all_scales(), st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_any_edge_weights_give_dominating_rows(scale, seed):
    """Monotonicity is a property of the graph, not of the Dirichlet: any nonnegative weights on the
    edges (rows summing to 1) give rows that dominate their predecessors."""
    rng = np.random.default_rng(seed)
    graph = weight_propagation_graph(scale)
    raw = rng.exponential(size=(graph.n_true - 1, graph.n_obs, graph.n_obs)) ** 3 * graph.edge_mask
    weights = raw / raw.sum(axis=-1, keepdims=True)
    first = rng.dirichlet(np.full(graph.n_obs, 0.3))
    theta = propagate(first, weights, graph)
    np.testing.assert_allclose(theta.sum(axis=-1), 1.0, atol=1e-12)
    assert stochastically_dominates(theta)


# -- weight-propagation sampler ----------------------------------------------------------------------

@given(
    _all_scales(),
    st.floats(0.0, 50.0),
    st.one_of(st.none(), st.floats(0.0, 1.0)),
    st.integers(0, 2**32 - 1),
)
@settings(max_examples=80, deadline=None)
def test_weight_propagation_samples_are_monotone_confusion_matrices(scale, beta_max, rho, seed):
    theta = sample_weight_propagation(scale, beta_max, rho, seed, size=5)
    assert theta.shape == (5, scale.n_true, scale.n_levels)
    assert np.all(theta >= 0)
    np.testing.assert_allclose(theta.sum(axis=-1), 1.0, atol=1e-12)
    for one in theta:
        assert stochastically_dominates(one)
    single = sample_weight_propagation(scale, beta_max, rho, seed)
    assert single.shape == (scale.n_true, scale.n_levels)
    assert stochastically_dominates(single)


@pytest.mark.parametrize("scale", [Scale((1.0, 2.0, 3.0)), Scale(tuple(float(i) for i in range(6))), BINARY_ABSTAIN, ODD_OF_FIVE])
@pytest.mark.parametrize("boost", [0.0, 5.0])
def test_weight_propagation_sample_mean_matches_theory(scale, boost):
    """Monte Carlo mean of Θ vs its exact mean; entries lie in [0, 1] with mean μ, so their variance
    is at most μ(1 − μ) (Bhatia–Davis) and 5 of those standard errors bound the error."""
    n = 4000
    draws = sample_weight_propagation(scale, boost, 1.0, np.random.default_rng(11), size=n)
    mu = mean_weight_propagation(scale, boost, rho=1.0)
    tol = 5 * np.sqrt(mu * (1 - mu) / n) + 1e-12
    assert np.all(np.abs(draws.mean(axis=0) - mu) <= tol)


def test_mean_over_rho_matches_draws_with_rho_drawn_and_the_offset_grows_with_the_scale():
    """ρ ~ Beta(1, 1) drawn per matrix: the Monte Carlo mean of Θ within 5 standard errors of the
    ρ-averaged exact mean. The mean judge's offset (observed − true, scale units): 0 for β_max → ∞
    would need every correct edge; at β_max = 5 it is positive and grows with the number of levels,
    and the diagonal prior's (independent rows, boosted on the diagonal) is 0 on square scales."""
    scale, n = Scale(tuple(float(i) for i in range(5))), 20000
    draws = sample_weight_propagation(scale, 5.0, None, np.random.default_rng(3), size=n)
    mu = mean_weight_propagation(scale, 5.0)
    assert np.allclose(mu.sum(axis=1), 1.0)
    assert np.all(np.abs(draws.mean(axis=0) - mu) <= 5 * np.sqrt(mu * (1 - mu) / n) + 1e-12)
    offsets = [mean_judge_offset(Scale(tuple(float(i) for i in range(m))), 5.0) for m in (2, 3, 5, 7, 10)]
    assert all(a < b for a, b in zip(offsets, offsets[1:])) and offsets[0] > 0
    values = np.arange(5.0)
    diagonal = sample_diagonal_heavy(scale, 5.0, None, np.random.default_rng(4), size=n).mean(axis=0)
    assert abs(np.mean(diagonal @ values - values)) < 0.02 < 0.5 < offsets[2]
    # scale units: the same 5 levels spaced by 10 lean ten times as far
    assert mean_judge_offset(Scale(tuple(10.0 * i for i in range(5))), 5.0) == pytest.approx(10 * offsets[2])


@pytest.mark.parametrize("scale", [Scale(tuple(float(i) for i in range(7))), BINARY_ABSTAIN, ODD_OF_FIVE])
def test_large_beta_max_concentrates_mass_on_correct_cells(scale):
    """With boost b = ρβ_max, the mass of the correct cell of row t is at least
    ((1 + b) / (b + M_obs))^(t+1) in expectation: the correct cell of row t is a parent of the correct
    cell of row t + 1, through an edge of mean weight >= (1 + b) / (b + M_obs). With b = 1000 and
    M_obs <= 7 that is >= 0.958; the sample mean of the correct-cell mass must exceed the bound minus
    five standard errors, using the variance bound 1/4 of a variable in [0, 1]."""
    b, n = 1000.0, 2000
    draws = sample_weight_propagation(scale, b, 1.0, np.random.default_rng(5), size=n)
    correct = draws[:, np.arange(scale.n_true), list(scale.true_index)]       # [n, M_true]
    per_step = (1 + b) / (b + scale.n_levels)
    bound = per_step ** np.arange(1, scale.n_true + 1)
    assert np.all(correct.mean(axis=0) >= bound - 5 * 0.5 / math.sqrt(n))


def test_rho_none_draws_rho_and_bad_inputs_raise():
    a = sample_weight_propagation(BINARY_ABSTAIN, 5.0, None, 1, size=3)
    b = sample_weight_propagation(BINARY_ABSTAIN, 5.0, None, 1, size=3)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"rho = \[1\.5\]; expected values in \[0, 1\]"):
        sample_weight_propagation(BINARY_ABSTAIN, 5.0, [1.5], 1, size=1)
    with pytest.raises(ValueError, match=r"rho has shape \(2,\); expected a number or one value per matrix"):
        sample_weight_propagation(BINARY_ABSTAIN, 5.0, [0.5, 0.5], 1, size=3)
    with pytest.raises(ValueError, match=r"beta_max = -1\.0; expected a finite number >= 0"):
        sample_weight_propagation(BINARY_ABSTAIN, -1.0, 0.5, 1)
    with pytest.raises(ValueError, match="Unknown judge prior 'wp'; expected one of ordered, weight-propagation, diagonal, mixing"):
        sample_judge_matrices("wp", BINARY_ABSTAIN, 5.0, 0.5, 1)


# -- alternative priors --------------------------------------------------------------------------

@given(_all_scales(), st.floats(0.0, 30.0), st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_alternative_priors_give_confusion_matrices(scale, beta_max, seed):
    for sampler in (sample_diagonal_heavy, sample_mixing):
        theta = sampler(scale, beta_max, None, seed, size=4)
        assert theta.shape == (4, scale.n_true, scale.n_levels)
        assert np.all(theta >= 0)
        np.testing.assert_allclose(theta.sum(axis=-1), 1.0, atol=1e-12)


def test_diagonal_heavy_rows_have_the_boosted_dirichlet_mean():
    scale, b, n = Scale((1.0, 2.0, 3.0, 4.0)), 6.0, 4000
    draws = sample_diagonal_heavy(scale, b, 1.0, np.random.default_rng(2), size=n)
    mu = np.ones((4, 4)) + b * np.eye(4)
    mu /= mu.sum(axis=1, keepdims=True)
    assert np.all(np.abs(draws.mean(axis=0) - mu) <= 5 * np.sqrt(mu * (1 - mu) / n))


def test_mixing_rows_have_the_mixture_mean():
    """E[row m] = (1 − E λ) E[row m−1] + E λ · E[ε_m] with E λ = 1/2 under Beta(1, 1)."""
    scale, b, n = Scale((1.0, 2.0, 3.0)), 6.0, 4000
    draws = sample_mixing(scale, b, 1.0, np.random.default_rng(3), size=n)
    eps = np.ones((3, 3)) + b * np.eye(3)
    eps /= eps.sum(axis=1, keepdims=True)
    mu = [eps[0]]
    for m in (1, 2):
        mu.append(0.5 * mu[-1] + 0.5 * eps[m])
    mu = np.array(mu)
    assert np.all(np.abs(draws.mean(axis=0) - mu) <= 5 * np.sqrt(mu * (1 - mu) / n))


def test_alternative_priors_can_flip_labels_weight_propagation_cannot():
    """With β_max = 0, rows of the diagonal-heavy prior are independent Dirichlet(1,1) draws: a
    2-level matrix is ordered with probability 1/2, so among 200 draws some are not
    (probability 2^-200 otherwise). The mixing prior likewise; weight-propagation never."""
    scale = Scale((0.0, 1.0))
    diag = sample_diagonal_heavy(scale, 0.0, 1.0, 7, size=200)
    mix = sample_mixing(scale, 0.0, 1.0, 7, size=200)
    wp = sample_weight_propagation(scale, 0.0, 1.0, 7, size=200)
    assert not all(stochastically_dominates(t) for t in diag)
    assert not all(stochastically_dominates(t) for t in mix)
    assert all(stochastically_dominates(t) for t in wp)


# -- stochastic dominance ----------------------------------------------------------------------------

def test_stochastically_dominates_hand_cases():
    assert stochastically_dominates(np.eye(3))
    assert not stochastically_dominates(np.eye(3)[::-1])                    # a label-flipper
    assert stochastically_dominates(np.array([[0.5, 0.5], [0.5, 0.5]]))     # equal rows: weakly
    assert not stochastically_dominates(np.array([[0.5, 0.5], [0.6, 0.4]]))
    assert stochastically_dominates(np.array([[0.5, 0.5], [0.5 + 1e-12, 0.5 - 1e-12]]))  # tolerance
    assert not stochastically_dominates(np.array([[0.5, 0.5], [0.5 + 1e-6, 0.5 - 1e-6]]))


# -- δ presets ------------------------------------------------------------------------------------

def test_delta_presets_three_levels_are_the_papers():
    np.testing.assert_array_equal(delta_preset("inflation", 3), [1, 4, 10])
    np.testing.assert_array_equal(delta_preset("deflation", 3), [10, 4, 1])
    np.testing.assert_array_equal(delta_preset("central", 3), [1, 10, 1])
    np.testing.assert_array_equal(delta_preset("uniform", 3), [1, 1, 1])


def test_delta_presets_other_sizes():
    np.testing.assert_array_equal(delta_preset("inflation", 2), [1, 10])
    np.testing.assert_array_equal(delta_preset("deflation", 2), [10, 1])
    np.testing.assert_array_equal(delta_preset("central", 2), [10, 10])
    np.testing.assert_allclose(delta_preset("inflation", 4), [1, 10 ** (1 / 3), 10 ** (2 / 3), 10])
    np.testing.assert_allclose(delta_preset("central", 4), [1, 10, 10, 1])
    np.testing.assert_allclose(delta_preset("central", 5), [1, math.sqrt(10), 10, math.sqrt(10), 1])
    np.testing.assert_array_equal(delta_preset("uniform", 6), np.ones(6))


@given(st.integers(4, 12))
def test_delta_preset_shapes(n):
    inf, dfl, cen = (delta_preset(k, n) for k in ("inflation", "deflation", "central"))
    assert inf[0] == pytest.approx(1) and inf[-1] == pytest.approx(10)
    assert np.all(np.diff(inf) > 0)
    np.testing.assert_allclose(dfl, inf[::-1])
    np.testing.assert_allclose(cen, cen[::-1])
    assert cen[0] == pytest.approx(1) and cen.max() == pytest.approx(10)
    middle = [(n - 1) // 2, n // 2]
    np.testing.assert_allclose(cen[middle], 10)


def test_parse_delta():
    np.testing.assert_array_equal(parse_delta("central", 3), [1, 10, 1])
    np.testing.assert_array_equal(parse_delta(" Inflation ", 2), [1, 10])
    np.testing.assert_array_equal(parse_delta("2,3.5,1", 3), [2, 3.5, 1])
    assert set(DELTA_PRESETS) == {"inflation", "deflation", "central", "uniform"}
    with pytest.raises(ValueError, match=r"^delta '1,2': it has 2 values but the scale has 3 true levels"):
        parse_delta("1,2", 3)
    with pytest.raises(ValueError, match=r"item 2 \('-1'\) is not a positive finite number"):
        parse_delta("1,-1,2", 3)
    with pytest.raises(ValueError, match=r"item 3 \('x'\) is not a number"):
        parse_delta("1,2,x", 3)
    with pytest.raises(ValueError, match=r"^delta 'inflate' is neither a preset \(inflation, deflation, central, uniform\)"):
        parse_delta("inflate", 3)
    with pytest.raises(ValueError, match="it has 1 values but the scale has 2 true levels"):
        parse_delta("5", 2)
    with pytest.raises(ValueError, match=r"n_true = 1; expected an integer >= 2"):
        delta_preset("inflation", 1)
