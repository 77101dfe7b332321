"""Geometry: embeddings, barycentric/areal coordinates, the augmented simplex, theorems 1 and 2."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata

from simplex_core.model import geometry as G
from simplex_core.model import identifiability

SQRT3 = np.sqrt(3.0)

# -- strategies -------------------------------------------------------------------------------------

weights = st.floats(min_value=0.02, max_value=1.0, allow_nan=False)


@st.composite
def distributions(draw, n: int = 3):
    w = np.array([draw(weights) for _ in range(n)])
    return w / w.sum()


@st.composite
def judges(draw, n: int = 3, min_area_ratio: float = 0.02):
    """A judge matrix with rows strictly inside the simplex and a non-degenerate triangle."""
    T = np.stack([draw(distributions(n)) for _ in range(n)])
    if n == 3:
        assume(G.triangle_area(T) > min_area_ratio * SQRT3 / 4)
    return T


affine = st.floats(min_value=-2.0, max_value=2.0, allow_nan=False)


# -- embeddings -------------------------------------------------------------------------------------

def test_ternary_vertices_form_the_unit_equilateral_triangle():
    V = G.TERNARY_VERTICES
    np.testing.assert_allclose(V, [[0, 0], [1, 0], [0.5, SQRT3 / 2]])
    for i in range(3):
        for j in range(i + 1, 3):
            assert np.linalg.norm(V[i] - V[j]) == pytest.approx(1.0)
    np.testing.assert_allclose(G.simplex_to_cartesian(np.eye(3)), V)
    # lowest level on plotly's b axis (bottom-left), highest on a (top)
    assert G.TERNARY_AXIS_OF_LEVEL == ("b", "c", "a")


@given(affine, affine)
def test_simplex_cartesian_round_trip(p1, p2):
    p = np.array([p1, p2, 1.0 - p1 - p2])
    np.testing.assert_allclose(G.cartesian_to_simplex(G.simplex_to_cartesian(p)), p, atol=1e-12)
    xy = np.array([p1, p2])
    np.testing.assert_allclose(G.simplex_to_cartesian(G.cartesian_to_simplex(xy)), xy, atol=1e-12)


@given(st.floats(min_value=-1, max_value=2, allow_nan=False))
def test_segment_round_trip(x):
    p = G.cartesian_to_segment(x)
    assert p.sum() == pytest.approx(1.0)
    assert G.segment_to_cartesian(p) == pytest.approx(x)


def test_embedding_rejects_wrong_shapes():
    with pytest.raises(ValueError, match=r"3 coordinates on its last axis"):
        G.simplex_to_cartesian([0.5, 0.5])
    with pytest.raises(ValueError, match=r"2 coordinates on its last axis \(low, top\)"):
        G.segment_to_cartesian([0.2, 0.3, 0.5])


# -- barycentric and areal coordinates --------------------------------------------------------------

def test_barycentric_hand_case_right_triangle():
    verts = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(G.barycentric_coordinates([0.25, 0.25], verts), [0.5, 0.25, 0.25])
    # outside: a negative coordinate
    np.testing.assert_allclose(G.barycentric_coordinates([1.0, 1.0], verts), [-1.0, 1.0, 1.0])
    assert G.triangle_area(verts) == pytest.approx(0.5)


def test_reference_simplex_areas_by_hand():
    assert G.triangle_area(np.eye(3)) == pytest.approx(SQRT3 / 4)
    areas = G.subtriangle_areas(np.full(3, 1 / 3), np.eye(3))
    np.testing.assert_allclose(areas, np.full(3, SQRT3 / 12))
    # against the identity judge the areal coordinates are the point itself
    np.testing.assert_allclose(G.areal_coordinates([0.2, 0.3, 0.5], np.eye(3)), [0.2, 0.3, 0.5])


@settings(max_examples=200)
@given(judges(), distributions())
def test_barycentric_round_trip_recovers_pi(Theta, pi):
    gamma = Theta.T @ pi  # what the judge shows
    np.testing.assert_allclose(G.barycentric_coordinates(gamma, Theta), pi, atol=1e-8)
    np.testing.assert_allclose(G.areal_coordinates(gamma, Theta), pi, atol=1e-8)
    # the square-case formula pi = Theta^{-T} gamma
    np.testing.assert_allclose(np.linalg.solve(Theta.T, gamma), pi, atol=1e-8)
    assert G.is_on_simplex(gamma)
    assert G.is_inside(gamma, Theta, atol=1e-9)


@settings(max_examples=200)
@given(judges(), affine, affine)
def test_areal_equals_barycentric_anywhere_in_the_plane(Theta, l1, l2):
    lam = np.array([l1, l2, 1.0 - l1 - l2])  # may lie outside the triangle
    gamma = Theta.T @ lam
    np.testing.assert_allclose(G.areal_coordinates(gamma, Theta), lam, atol=1e-7)
    np.testing.assert_allclose(G.barycentric_coordinates(gamma, Theta), lam, atol=1e-7)


@settings(max_examples=200)
@given(judges(), distributions(), affine, affine)
def test_subareas_sum_to_the_total(Theta, pi, l1, l2):
    inside = Theta.T @ pi
    areas = G.subtriangle_areas(inside, Theta)
    assert np.all(areas >= -1e-12)
    assert areas.sum() == pytest.approx(G.triangle_area(Theta), rel=1e-9)
    # signed areas: the identity holds outside too
    outside = Theta.T @ np.array([l1, l2, 1.0 - l1 - l2])
    assert G.subtriangle_areas(outside, Theta).sum() == pytest.approx(G.triangle_area(Theta), rel=1e-9)


def test_subareas_do_not_depend_on_vertex_orientation():
    T = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]])
    g = np.array([0.3, 0.35, 0.35])
    reversed_T = T[::-1]
    np.testing.assert_allclose(G.subtriangle_areas(g, reversed_T), G.subtriangle_areas(g, T)[::-1])
    assert G.signed_triangle_area(reversed_T) == pytest.approx(-G.signed_triangle_area(T))


def test_degenerate_triangle_is_refused():
    collinear = np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match=r"affinely dependent"):
        G.barycentric_coordinates([0.3, 0.7, 0.0], collinear)
    with pytest.raises(ValueError, match=r"degenerate \(area 0\)"):
        G.subtriangle_areas([0.3, 0.7, 0.0], collinear)


def test_binary_truth_segment_coordinates():
    # two vertices (true incorrect, true correct) in the 3-level simplex (incorrect, abstain, correct)
    Theta = np.array([[0.8, 0.15, 0.05], [0.1, 0.1, 0.8]])
    pi = np.array([0.3, 0.7])
    gamma = Theta.T @ pi
    np.testing.assert_allclose(G.barycentric_coordinates(gamma, Theta), pi)
    assert G.is_inside(gamma, Theta)
    off = gamma + np.array([0.05, -0.1, 0.05])  # still sums to 1, off the segment
    assert not G.is_inside(off, Theta)
    # the coordinates of its orthogonal projection onto the segment's line
    lam = G.barycentric_coordinates(off, Theta)
    foot = lam @ Theta
    assert np.dot(off - foot, Theta[1] - Theta[0]) == pytest.approx(0.0, abs=1e-12)


# -- projections ------------------------------------------------------------------------------------

def test_project_to_simplex_hand_cases():
    np.testing.assert_allclose(G.project_to_simplex([1.0, 1.0, 0.0]), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(G.project_to_simplex([2.0, 0.0, 0.0]), [1.0, 0.0, 0.0])
    # all coordinates stay positive: shift by tau = (0.8 - 1) / 3
    np.testing.assert_allclose(G.project_to_simplex([0.5, 0.2, 0.1]), [0.5 + 0.2 / 3, 0.2 + 0.2 / 3, 0.1 + 0.2 / 3])
    np.testing.assert_allclose(G.project_to_simplex([[-1.0, 3.0], [0.5, 0.5]]), [[0.0, 1.0], [0.5, 0.5]])


vectors = st.lists(st.floats(min_value=-3, max_value=3, allow_nan=False), min_size=2, max_size=6)


@settings(max_examples=200)
@given(vectors, st.integers(min_value=0, max_value=2**32 - 1))
def test_projection_lands_on_simplex_and_is_closest(v, seed):
    v = np.array(v)
    p = G.project_to_simplex(v)
    assert G.is_on_simplex(p, atol=1e-9)
    np.testing.assert_allclose(G.project_to_simplex(p), p, atol=1e-12)  # idempotent
    others = np.random.default_rng(seed).dirichlet(np.ones(v.size), size=50)
    assert np.all(np.linalg.norm(others - v, axis=1) >= np.linalg.norm(p - v) - 1e-9)


def test_is_on_simplex():
    assert G.is_on_simplex([0.2, 0.3, 0.5])
    assert not G.is_on_simplex([0.2, 0.3, 0.6])
    assert not G.is_on_simplex([-0.1, 0.6, 0.5])
    assert not G.is_on_simplex([np.nan, 0.5, 0.5])
    np.testing.assert_array_equal(G.is_on_simplex([[1, 0], [0.5, 0.6]]), [True, False])


# -- augmented simplex ------------------------------------------------------------------------------

def test_augmented_vertices_by_hand():
    lifted = G.augmented_vertices(np.eye(3), [1, 2, 3])
    np.testing.assert_allclose(lifted, [[0, 0, 1], [1, 0, 2], [0.5, SQRT3 / 2, 3]])
    seg = G.augmented_vertices([[0.9, 0.1], [0.2, 0.8]], [0, 1])
    np.testing.assert_allclose(seg, [[0.1, 0, 0], [0.8, 0, 1]])


@settings(max_examples=100)
@given(judges(), distributions(), st.lists(st.floats(min_value=-5, max_value=5), min_size=3, max_size=3))
def test_height_in_augmented_simplex_is_the_expected_score(Theta, pi, values):
    values = np.sort(np.array(values))
    lifted = G.lift_points(pi, Theta, values)
    assert lifted[2] == pytest.approx(float(pi @ values), abs=1e-9)
    assert lifted[2] == pytest.approx(G.expected_score_height(pi, values), abs=1e-9)
    # the horizontal position is where the judge shows the candidate
    np.testing.assert_allclose(lifted[:2], G.simplex_to_cartesian(Theta.T @ pi), atol=1e-9)


# -- theorem 2 --------------------------------------------------------------------------------------

def test_tie_direction_is_the_papers_a():
    np.testing.assert_allclose(identifiability.tie_direction([0, 1, 2]), [1, -2, 1])
    np.testing.assert_allclose(identifiability.tie_direction([1, 2, 3]), [1, -2, 1])
    a = identifiability.tie_direction([0.0, 0.3, 1.0])
    assert a.sum() == pytest.approx(0.0)
    assert a @ np.array([0.0, 0.3, 1.0]) == pytest.approx(0.0)


def _paper_delta(Theta_rows: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Appendix F in the paper's column convention: Theta_p columns are the vertices."""
    Theta_p = Theta_rows.T
    u = np.linalg.inv(Theta_p).T @ v
    ubar = np.ones(3) @ u / 3
    return np.outer(u - ubar * np.ones(3), a)  # Delta_p, columns sum to zero


@settings(max_examples=100)
@given(judges())
def test_delta_matches_appendix_f_in_our_row_convention(Theta):
    v = np.array([0.0, 1.0, 2.0])
    a = np.array([1.0, -2.0, 1.0])
    D = identifiability.nonidentifiability_direction(Theta, v)
    np.testing.assert_allclose(D, _paper_delta(Theta, v, a).T, atol=1e-9)
    np.testing.assert_allclose(D.sum(axis=1), 0.0, atol=1e-9)  # vertices stay on the simplex's plane
    # values 1..3 (our default) give the same Delta: u shifts by a constant
    np.testing.assert_allclose(identifiability.nonidentifiability_direction(Theta), D, atol=1e-9)


def test_canonical_example_ties_at_h0_and_derivative_is_nonzero():
    ex = identifiability.canonical_flip_example(epsilon=0.1)
    np.testing.assert_allclose(ex.pi1 - ex.pi2, 0.1 * np.array([1, -2, 1]))
    np.testing.assert_allclose(ex.gamma1, ex.Theta.T @ ex.pi1)
    cfg0 = identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, 0.0)
    assert cfg0.expected_scores[0] == pytest.approx(cfg0.expected_scores[1], abs=1e-12)
    assert cfg0.order == 0
    deriv = identifiability.expected_score_difference_derivative(ex.Theta, ex.Delta, ex.gamma1, ex.gamma2, ex.values)
    u = np.linalg.solve(ex.Theta, ex.values)
    expected = -ex.epsilon * np.sum(ex.a**2) * np.sum((u - u.mean()) ** 2)
    assert deriv == pytest.approx(expected, rel=1e-9)
    assert abs(deriv) > 1e-3
    # and it is the slope of the score gap as the judge moves
    step = 1e-6
    gap = [np.subtract(*identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, h).expected_scores) for h in (-step, step)]
    assert (gap[1] - gap[0]) / (2 * step) == pytest.approx(deriv, rel=1e-5)


def _assert_flip(Theta, gamma1, gamma2, values=None):
    lo, hi = identifiability.flip_h_range(Theta, gamma1, gamma2, values)
    assert lo < 0 < hi
    h = 0.5 * min(-lo, hi)
    plus = identifiability.flip_configuration(Theta, gamma1, gamma2, h, values)
    minus = identifiability.flip_configuration(Theta, gamma1, gamma2, -h, values)
    for cfg in (plus, minus):
        assert cfg.judge_valid and G.is_on_simplex(cfg.Theta_h, atol=1e-12).all()
        assert cfg.candidates_inside
        # inside both triangles, checked independently with areas
        for g in (gamma1, gamma2):
            assert np.all(G.subtriangle_areas(g, cfg.Theta_h) > 0)
    assert plus.order != 0 and minus.order != 0
    assert plus.order == -minus.order  # the expected-score order flips


def test_canonical_example_flips_while_both_candidates_stay_inside():
    ex = identifiability.canonical_flip_example()
    _assert_flip(ex.Theta, ex.gamma1, ex.gamma2)
    assert 0.0 in np.round(identifiability.expected_score_tie_h(ex.Theta, ex.gamma1, ex.gamma2), 12)


@settings(max_examples=60, deadline=None)
@given(judges(min_area_ratio=0.05), st.floats(min_value=0.02, max_value=0.2))
def test_flip_exists_for_any_interior_judge(Theta, epsilon):
    assume(Theta.min() > 0.01)
    ex = identifiability.canonical_flip_example(Theta, epsilon=epsilon)
    assert identifiability.expected_score_difference_derivative(ex.Theta, ex.Delta, ex.gamma1, ex.gamma2, ex.values) != 0
    _assert_flip(ex.Theta, ex.gamma1, ex.gamma2)


def test_flip_range_is_tight():
    ex = identifiability.canonical_flip_example()
    lo, hi = identifiability.flip_h_range(ex.Theta, ex.gamma1, ex.gamma2)
    for edge in (lo, hi):
        inside = identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, edge * 0.999)
        assert inside.judge_valid and inside.candidates_inside
        beyond = identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, edge * 1.01)
        assert not (beyond.judge_valid and beyond.candidates_inside)


def test_tie_h_for_a_pair_that_starts_apart():
    ex = identifiability.canonical_flip_example()
    # candidate 1 moved towards the top level: E_1 - E_2 = 0.02 at h = 0
    pi1 = ex.pi1 + np.array([-0.01, 0.0, 0.01])
    g1, g2 = ex.Theta.T @ pi1, ex.gamma2
    start = identifiability.flip_configuration(ex.Theta, g1, g2, 0.0)
    assert start.expected_scores[0] - start.expected_scores[1] == pytest.approx(0.02)
    lo, hi = identifiability.flip_h_range(ex.Theta, g1, g2)
    ties = identifiability.expected_score_tie_h(ex.Theta, g1, g2)
    in_range = ties[(ties > lo) & (ties < hi)]
    assert in_range.size == 1
    h_tie = float(in_range[0])
    cfg = identifiability.flip_configuration(ex.Theta, g1, g2, h_tie)
    assert cfg.expected_scores[0] == pytest.approx(cfg.expected_scores[1], abs=1e-9)
    # the order on either side of the tie differs, inside the valid range
    side = [identifiability.flip_configuration(ex.Theta, g1, g2, h_tie + d).order for d in (-1e-4, 1e-4)]
    assert side[0] == -side[1] != 0


def test_a_pair_far_apart_never_ties_inside_the_valid_range():
    ex = identifiability.canonical_flip_example()
    pi1, pi2 = np.array([0.1, 0.2, 0.7]), np.array([0.7, 0.2, 0.1])  # E_1 - E_2 = 1.2
    g1, g2 = ex.Theta.T @ pi1, ex.Theta.T @ pi2
    lo, hi = identifiability.flip_h_range(ex.Theta, g1, g2)
    ties = identifiability.expected_score_tie_h(ex.Theta, g1, g2)
    assert not np.any((ties > lo) & (ties < hi))
    for h in np.linspace(lo, hi, 41)[1:-1]:
        assert identifiability.flip_configuration(ex.Theta, g1, g2, h).order == 1


def test_flip_errors_are_explicit():
    ex = identifiability.canonical_flip_example()
    edge = ex.Theta.T @ np.array([0.0, 0.5, 0.5])
    with pytest.raises(ValueError, match=r"candidate 1 must be strictly inside the judge triangle at h = 0"):
        identifiability.flip_h_range(ex.Theta, edge, ex.gamma2)
    with pytest.raises(ValueError, match=r"Theta must be square"):
        identifiability.nonidentifiability_direction(np.ones((2, 3)) / 3)
    with pytest.raises(ValueError, match=r"Theta is singular"):
        identifiability.nonidentifiability_direction(np.full((3, 3), 1 / 3))
    with pytest.raises(ValueError, match=r"small enough that both pi stay strictly positive"):
        identifiability.canonical_flip_example(epsilon=0.8)
    with pytest.raises(ValueError, match=r"every row of Delta must sum to 0"):
        identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, 0.1, Delta=np.eye(3))


# -- theorem 1 --------------------------------------------------------------------------------------

def test_segment_prevalence_by_hand():
    assert identifiability.segment_prevalence(0.5, 0.2, 0.8) == pytest.approx(0.5)
    assert identifiability.segment_prevalence(0.35, 0.8, 0.2) == pytest.approx(0.75)
    np.testing.assert_allclose(identifiability.segment_prevalence([0.2, 0.8], 0.2, 0.8), [0.0, 1.0])
    with pytest.raises(ValueError, match=r"theta1 == theta2 == 0.4: the judge gives the top level equally often"):
        identifiability.segment_prevalence(0.5, 0.4, 0.4)
    assert identifiability.is_label_flipping(0.8, 0.2) and not identifiability.is_label_flipping(0.2, 0.8)


@settings(max_examples=200)
@given(st.floats(0.0, 0.49), st.floats(0.51, 1.0),
       st.lists(st.floats(0.0, 1.0), min_size=2, max_size=8, unique=True))
def test_order_along_segment_is_the_ranking_and_flips_for_a_flipped_judge(t_low, t_high, fractions):
    f = np.array(fractions)
    gammas = t_low + f * (t_high - t_low)  # candidates between the vertices
    assume(np.unique(np.round(gammas, 12)).size == gammas.size)
    by_position = rankdata(-gammas, method="min")
    np.testing.assert_array_equal(identifiability.segment_ranks(gammas, t_low, t_high), by_position)
    np.testing.assert_allclose(identifiability.segment_prevalence(gammas, t_low, t_high), f, atol=1e-9)
    # a label-flipping judge with the same two points swaps the vertices: order reversed
    np.testing.assert_array_equal(identifiability.segment_ranks(gammas, t_high, t_low), rankdata(gammas, method="min"))
