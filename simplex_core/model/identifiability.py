"""The paper's identifiability constructions, in plain numpy over :mod:`simplex_core.model.geometry`'s
coordinates (its conventions hold here): theorem 2's non-identifiability flip (appendix F: a direction
that moves a square judge and two candidates' true distributions without changing what the judge
reports, and how far it can go before the candidates' order flips) and theorem 1's order along the
segment (two levels: a candidate's prevalence and rank from its position). What the Geometry lab draws;
no sampling, no fitting, no plotting.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from simplex_core.model.geometry import DEFAULT_ATOL, TERNARY_VERTICES, barycentric_coordinates, cross_2d, float_array

__all__ = [
    "tie_direction",
    "nonidentifiability_direction",
    "expected_score_difference_derivative",
    "FlipConfiguration",
    "flip_configuration",
    "flip_h_range",
    "expected_score_tie_h",
    "FlipExample",
    "canonical_flip_example",
    "segment_prevalence",
    "segment_ranks",
    "is_label_flipping",
]

# -- theorem 2: the non-identifiability flip (appendix F) -----------------------------------------

def _square(Theta: ArrayLike) -> NDArray[np.float64]:
    T = float_array(Theta, "Theta")
    if T.ndim != 2 or T.shape[0] != T.shape[1]:
        raise ValueError(f"Theta must be square (M_true == M_obs) for this construction; got shape {T.shape}.")
    if np.linalg.matrix_rank(T) < T.shape[0]:
        raise ValueError(f"Theta is singular (its vertices do not span a triangle): {T.tolist()}.")
    return T


def _values_for(M: int, values: ArrayLike | None) -> NDArray[np.float64]:
    v = np.arange(1.0, M + 1.0) if values is None else float_array(values, "values")
    if v.shape != (M,):
        raise ValueError(f"values must give one value per true level ({M}); got {v.tolist()}.")
    return v


def tie_direction(values: ArrayLike | None = None) -> NDArray[np.float64]:
    """The direction ``a`` in true-level space that keeps mass and expected score unchanged (3 levels).

    :math:`a \\perp \\mathbf 1` and :math:`a \\perp v`: :math:`a \\propto \\mathbf 1 \\times v =
    (v_3 - v_2,\\; v_1 - v_3,\\; v_2 - v_1)`, scaled by :math:`2/(v_3 - v_1)` so that equally spaced
    values give the paper's :math:`a = (1, -2, 1)`.

    Parameters
    ----------
    values : array_like, shape (3,), optional
        True level values (default ``(1, 2, 3)``), strictly increasing.

    Returns
    -------
    ndarray, shape (3,)
    """
    v = _values_for(3, values)
    if not (v[0] < v[1] < v[2]):
        raise ValueError(f"values must be strictly increasing; got {v.tolist()}.")
    a = np.array([v[2] - v[1], v[0] - v[2], v[1] - v[0]])
    return a * 2.0 / (v[2] - v[0])


def nonidentifiability_direction(Theta: ArrayLike, values: ArrayLike | None = None,
                                 a: ArrayLike | None = None) -> NDArray[np.float64]:
    """The perturbation :math:`\\Delta` of the proof of theorem 2 (appendix F), in our row convention.

    With the paper's column-vertex matrix :math:`\\Theta_p = \\texttt{Theta}^T`,

    .. math::
        u = \\Theta_p^{-T} v = \\texttt{Theta}^{-1} v, \\qquad \\bar u = \\tfrac13 \\mathbf 1^T u,
        \\qquad \\Delta_p = (u - \\bar u \\mathbf 1)\\, a^T,

    and we return :math:`\\Delta = \\Delta_p^T = a\\,(u - \\bar u\\mathbf 1)^T`: row ``m`` (true
    level ``m``) moves vertex :math:`\\theta_m` by :math:`a_m (u - \\bar u \\mathbf 1)`. Every row
    sums to 0, so :math:`\\Theta + h\\Delta` keeps its rows on the simplex's plane.

    Parameters
    ----------
    Theta : array_like, shape (M, M)
        Non-singular judge matrix, rows = vertices.
    values : array_like, shape (M,), optional
        True level values ``v`` (default ``1..M``; the paper's ``(0, 1, 2)`` gives the same
        :math:`\\Delta` up to nothing: ``u`` shifts by a constant that :math:`\\bar u` removes).
    a : array_like, shape (M,), optional
        Direction in true-level space; default :func:`tie_direction` (the paper's ``(1, -2, 1)``).
        The expected-score gap of two candidates moves at :math:`h = 0` iff
        :math:`a^T(\\pi_1 - \\pi_2) \\ne 0`; ``a = pi1 - pi2`` guarantees it for any distinct pair.

    Returns
    -------
    ndarray, shape (M, M)
    """
    T = _square(Theta)
    M = T.shape[0]
    v = _values_for(M, values)
    if a is None:
        if M != 3:
            raise ValueError(f"the default direction a is defined for 3 levels; give a for {M} levels.")
        a_vec = tie_direction(v)
    else:
        a_vec = float_array(a, "a")
        if a_vec.shape != (M,):
            raise ValueError(f"a must have {M} entries; got {a_vec.tolist()}.")
    u = np.linalg.solve(T, v)
    return np.outer(a_vec, u - u.mean())


def expected_score_difference_derivative(Theta: ArrayLike, Delta: ArrayLike, gamma1: ArrayLike,
                                         gamma2: ArrayLike, values: ArrayLike | None = None) -> float:
    """:math:`\\frac{d}{dh}\\big[E_1(h) - E_2(h)\\big]_{h=0}` for the judge :math:`\\Theta + h\\Delta`.

    With :math:`E_k(h) = v^T(\\Theta_p + h\\Delta_p)^{-1}\\gamma_k` and
    :math:`d = \\Theta_p^{-1}(\\gamma_1 - \\gamma_2) = \\pi_1 - \\pi_2`,

    .. math:: \\frac{d}{dh}\\Big|_0 = -\\,v^T\\Theta_p^{-1}\\Delta_p\\Theta_p^{-1}(\\gamma_1-\\gamma_2)
              = -\\,u^T \\Delta_p d = -\\,d^T \\Delta\\, u .

    For theorem 2's :math:`\\Delta` and :math:`d = \\epsilon a` this is
    :math:`-\\epsilon\\lVert a\\rVert^2 \\sum_m (u_m - \\bar u)^2 < 0` (the paper states it up to sign).

    Parameters
    ----------
    Theta : array_like, shape (M, M)
    Delta : array_like, shape (M, M)
    gamma1, gamma2 : array_like, shape (M,)
    values : array_like, shape (M,), optional

    Returns
    -------
    float
    """
    T = _square(Theta)
    D = float_array(Delta, "Delta")
    v = _values_for(T.shape[0], values)
    u = np.linalg.solve(T, v)
    d = np.linalg.solve(T.T, float_array(gamma1, "gamma1") - float_array(gamma2, "gamma2"))
    return float(-(d @ D @ u))


@dataclass(frozen=True)
class FlipConfiguration:
    """One position of theorem 2's slider: the judge :math:`\\Theta + h\\Delta` and what it implies.

    Attributes
    ----------
    h : float
    Theta_h : ndarray, shape (M, M)
        :math:`\\Theta + h\\Delta` (rows = vertices).
    Delta : ndarray, shape (M, M)
    pi : ndarray, shape (2, M)
        Each candidate's barycentric coordinates relative to ``Theta_h``.
    expected_scores : ndarray, shape (2,)
        :math:`E_k = v^T\\pi_k` (heights in the augmented simplex).
    judge_valid : bool
        Every row of ``Theta_h`` is a distribution (non-negative).
    candidates_inside : bool
        Both candidates lie inside the triangle (all :math:`\\pi_k \\ge 0`).
    order : int
        ``+1`` when candidate 1's expected score is higher, ``-1`` when lower, ``0`` at a tie
        (within ``1e-12``).
    """

    h: float
    Theta_h: NDArray[np.float64]
    Delta: NDArray[np.float64]
    pi: NDArray[np.float64]
    expected_scores: NDArray[np.float64]
    judge_valid: bool
    candidates_inside: bool
    order: int


def _delta_for(T: NDArray[np.float64], values: NDArray[np.float64], a: ArrayLike | None,
               Delta: ArrayLike | None) -> NDArray[np.float64]:
    if Delta is not None:
        D = float_array(Delta, "Delta")
        if D.shape != T.shape:
            raise ValueError(f"Delta must have Theta's shape {T.shape}; got {D.shape}.")
        if not np.allclose(D.sum(axis=1), 0.0, atol=1e-9):
            raise ValueError(f"every row of Delta must sum to 0 (so vertices stay on the simplex); row sums {D.sum(axis=1).tolist()}.")
        return D
    return nonidentifiability_direction(T, values, a)


def flip_configuration(Theta: ArrayLike, gamma1: ArrayLike, gamma2: ArrayLike, h: float,
                       values: ArrayLike | None = None, a: ArrayLike | None = None,
                       Delta: ArrayLike | None = None) -> FlipConfiguration:
    """Move the judge to :math:`\\Theta + h\\Delta` and report both candidates' :math:`\\pi` and scores.

    The candidates' observed distributions :math:`\\gamma_1, \\gamma_2` stay fixed; only the
    judge's vertices move, so their barycentric coordinates and expected scores change. Theorem 2:
    for :math:`\\gamma_k = \\Theta^T\\pi_k` from :func:`canonical_flip_example`, the expected-score
    order at :math:`h` and at :math:`-h` is opposite for small :math:`h > 0` while both triangles
    still contain both candidates (see :func:`flip_h_range`).

    Parameters
    ----------
    Theta : array_like, shape (M, M)
        The base judge (``h = 0``); :math:`\\Delta` is computed from it, not from ``Theta_h``.
    gamma1, gamma2 : array_like, shape (M,)
        The two candidates' observed distributions.
    h : float
        Slider position.
    values : array_like, shape (M,), optional
        True level values (default ``1..M``).
    a : array_like, shape (M,), optional
        Direction passed to :func:`nonidentifiability_direction`.
    Delta : array_like, shape (M, M), optional
        Use this perturbation instead (rows must sum to 0).

    Returns
    -------
    FlipConfiguration
    """
    T = _square(Theta)
    v = _values_for(T.shape[0], values)
    D = _delta_for(T, v, a, Delta)
    Th = T + float(h) * D
    gammas = np.stack([float_array(gamma1, "gamma1"), float_array(gamma2, "gamma2")])
    if gammas.shape[1] != T.shape[1]:
        raise ValueError(f"gamma1 and gamma2 must have {T.shape[1]} entries; got shape {gammas.shape}.")
    if np.linalg.matrix_rank(Th) < Th.shape[0]:
        pi = np.full(gammas.shape, np.nan)
    else:
        pi = np.linalg.solve(Th.T, gammas.T).T
    scores = pi @ v
    gap = scores[0] - scores[1]
    order = 0 if not np.isfinite(gap) or abs(gap) <= 1e-12 else int(np.sign(gap))
    return FlipConfiguration(
        h=float(h), Theta_h=Th, Delta=D, pi=pi, expected_scores=scores,
        judge_valid=bool(np.all(Th >= -DEFAULT_ATOL)),
        candidates_inside=bool(np.all(np.isfinite(pi)) and np.all(pi >= -DEFAULT_ATOL)),
        order=order,
    )


def _quadratic_area_coefficients(p: NDArray[np.float64], q: NDArray[np.float64],
                                 r: NDArray[np.float64], s: NDArray[np.float64]) -> NDArray[np.float64]:
    """Coefficients (c0, c1, c2) of cross(p + h q, r + h s) = c0 + c1 h + c2 h^2."""
    return np.array([cross_2d(p, r), cross_2d(p, s) + cross_2d(q, r), cross_2d(q, s)])


def _moving_triangle(Theta: ArrayLike, values: ArrayLike | None, a: ArrayLike | None, Delta: ArrayLike | None,
                     caller: str) -> tuple[NDArray[np.float64], ...]:
    """The 3-level judge ``T``, level values ``v``, direction ``D`` and the triangle's Cartesian vertices
    ``P`` and their velocities ``Q`` (vertex m at ``P[m] + h Q[m]``); ``caller`` names the refusal."""
    T = _square(Theta)
    if T.shape != (3, 3):
        raise ValueError(f"{caller} is for 3 levels; got Theta of shape {T.shape}.")
    v = _values_for(3, values)
    D = _delta_for(T, v, a, Delta)
    return T, v, D, T @ TERNARY_VERTICES, D @ TERNARY_VERTICES


def _triangle_area_coefficients(P: NDArray[np.float64], Q: NDArray[np.float64]) -> NDArray[np.float64]:
    """The moving triangle's (twice signed) area as a quadratic in ``h``."""
    return _quadratic_area_coefficients(P[1] - P[0], Q[1] - Q[0], P[2] - P[0], Q[2] - Q[0])


def _sub_triangle_area_coefficients(P: NDArray[np.float64], Q: NDArray[np.float64],
                                    x: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """For each vertex m, the area of the triangle (x, the two other vertices) as a quadratic in ``h``."""
    polys = []
    for m in range(3):
        b, c = [i for i in range(3) if i != m]
        polys.append(_quadratic_area_coefficients(P[b] - x, Q[b], P[c] - x, Q[c]))
    return polys


def _nearest_roots(coeffs: NDArray[np.float64]) -> tuple[float, float]:
    """Largest negative and smallest positive real root of c0 + c1 h + c2 h^2 (±inf if none)."""
    c0, c1, c2 = coeffs
    scale = max(abs(c0), abs(c1), abs(c2), 1e-300)
    poly = [c2, c1, c0] if abs(c2) > 1e-14 * scale else ([c1, c0] if abs(c1) > 1e-14 * scale else [c0])
    roots = np.roots(poly) if len(poly) > 1 else np.array([])
    real = roots[np.abs(roots.imag) <= 1e-12 * np.maximum(1.0, np.abs(roots.real))].real
    neg = real[real < 0]
    pos = real[real > 0]
    return (float(neg.max()) if neg.size else -np.inf, float(pos.min()) if pos.size else np.inf)


def flip_h_range(Theta: ArrayLike, gamma1: ArrayLike, gamma2: ArrayLike, values: ArrayLike | None = None,
                 a: ArrayLike | None = None, Delta: ArrayLike | None = None) -> tuple[float, float]:
    """The largest interval of ``h`` around 0 where the flip construction stays valid (3 levels).

    Valid means: every entry of :math:`\\Theta + h\\Delta` is >= 0 (the vertices are distributions)
    and both candidates are inside the moved triangle (all :math:`\\pi_k(h) \\ge 0`). Entries are
    linear in ``h``; each sub-triangle area and the triangle's area are quadratic in ``h`` (the
    vertices move linearly), so the interval ends at the nearest root of one of these, computed
    exactly.

    Parameters
    ----------
    Theta : array_like, shape (3, 3)
    gamma1, gamma2 : array_like, shape (3,)
    values, a, Delta
        As in :func:`flip_configuration`.

    Returns
    -------
    (h_min, h_max) : tuple of float
        ``h_min <= 0 <= h_max``; the slider range for the Geometry lab.

    Raises
    ------
    ValueError
        If at ``h = 0`` a candidate is not strictly inside the triangle or a vertex is on the
        simplex's edge (the construction needs interior points, as in the proof).
    """
    T, _, D, P, Q = _moving_triangle(Theta, values, a, Delta, "flip_h_range")
    lo, hi = -np.inf, np.inf
    if np.any(T <= 0):
        raise ValueError(f"every entry of Theta must be > 0 (vertices strictly inside the simplex); got {T.tolist()}.")
    with np.errstate(divide="ignore"):
        ratio = -T / D  # the h at which each entry reaches 0
    lo = max(lo, float(np.max(ratio[D > 0], initial=-np.inf)))
    hi = min(hi, float(np.min(ratio[D < 0], initial=np.inf)))
    polys = [_triangle_area_coefficients(P, Q)]
    for k, g in enumerate((gamma1, gamma2), start=1):
        pi0 = barycentric_coordinates(float_array(g, f"gamma{k}"), T)
        if np.any(pi0 <= 1e-12):
            raise ValueError(
                f"candidate {k} must be strictly inside the judge triangle at h = 0; its coordinates are {pi0.round(6).tolist()}."
            )
        polys.extend(_sub_triangle_area_coefficients(P, Q, float_array(g, f"gamma{k}") @ TERNARY_VERTICES))
    for coeffs in polys:
        neg, pos = _nearest_roots(coeffs)
        lo, hi = max(lo, neg), min(hi, pos)
    return float(lo), float(hi)


def expected_score_tie_h(Theta: ArrayLike, gamma1: ArrayLike, gamma2: ArrayLike, values: ArrayLike | None = None,
                         a: ArrayLike | None = None, Delta: ArrayLike | None = None) -> NDArray[np.float64]:
    """The slider positions ``h`` where the two candidates' expected scores tie (3 levels).

    :math:`E_1(h) - E_2(h) = \\sum_m v_m (A_{1m}(h) - A_{2m}(h)) / A(h)`, a ratio of quadratics in
    ``h`` (sub-triangle areas over the triangle's area), so the ties are the real roots of the
    numerator where the triangle is not degenerate.

    Parameters as in :func:`flip_h_range`.

    Returns
    -------
    ndarray
        Sorted real roots (empty when the order never changes; the canonical example ties at 0).
    """
    _, v, _, P, Q = _moving_triangle(Theta, values, a, Delta, "expected_score_tie_h")
    num = np.zeros(3)
    for sign, g in ((1.0, gamma1), (-1.0, gamma2)):
        x = float_array(g, "gamma") @ TERNARY_VERTICES
        for m, coeffs in enumerate(_sub_triangle_area_coefficients(P, Q, x)):
            # orientation of (x, the other two vertices in order) matches (P[0], P[1], P[2]) for m=0,2
            # and is reversed for m=1
            num += sign * v[m] * coeffs * (-1.0 if m == 1 else 1.0)
    scale = np.max(np.abs(num))
    if scale == 0:
        return np.array([])
    poly = num[::-1]
    while len(poly) > 1 and abs(poly[0]) <= 1e-14 * scale:
        poly = poly[1:]
    roots = np.roots(poly) if len(poly) > 1 else np.array([])
    real = roots[np.abs(roots.imag) <= 1e-9 * np.maximum(1.0, np.abs(roots.real))].real
    total = _triangle_area_coefficients(P, Q)
    keep = [r for r in real if abs(total[0] + total[1] * r + total[2] * r * r) > 1e-12]
    return np.sort(np.array(keep, dtype=float))


@dataclass(frozen=True)
class FlipExample:
    """Theorem 2's canonical example (appendix F).

    Attributes
    ----------
    Theta : ndarray, shape (3, 3)
        The base judge (rows = vertices, strictly inside the simplex).
    values : ndarray, shape (3,)
    a : ndarray, shape (3,)
        The tie direction (``(1, -2, 1)`` for equally spaced values).
    epsilon : float
    pi1, pi2 : ndarray, shape (3,)
        :math:`\\bar\\pi \\pm \\epsilon a/2`, equal expected scores.
    gamma1, gamma2 : ndarray, shape (3,)
        :math:`\\Theta^T\\pi_k`, what the judge shows.
    Delta : ndarray, shape (3, 3)
        :func:`nonidentifiability_direction` of ``Theta``.
    """

    Theta: NDArray[np.float64]
    values: NDArray[np.float64]
    a: NDArray[np.float64]
    epsilon: float
    pi1: NDArray[np.float64]
    pi2: NDArray[np.float64]
    gamma1: NDArray[np.float64]
    gamma2: NDArray[np.float64]
    Delta: NDArray[np.float64]


#: A moderately good judge, strictly inside the simplex (rows: true low, middle, high).
DEFAULT_FLIP_THETA = np.array([[0.70, 0.20, 0.10], [0.20, 0.60, 0.20], [0.10, 0.25, 0.65]])
DEFAULT_FLIP_THETA.setflags(write=False)


def canonical_flip_example(Theta: ArrayLike | None = None, values: ArrayLike | None = None,
                           epsilon: float = 0.1) -> FlipExample:
    """Build the proof's example: :math:`\\pi_{1,2} = \\bar\\pi \\pm \\epsilon a/2`, :math:`\\gamma_k = \\Theta^T\\pi_k`.

    :math:`\\bar\\pi = (1/3, 1/3, 1/3)` and ``a`` is :func:`tie_direction` (``(1, -2, 1)`` for
    equally spaced values), so :math:`a^T\\mathbf 1 = 0` and :math:`a^T v = 0`: both candidates
    have the same expected score at ``h = 0`` and :math:`\\pi_1 - \\pi_2 = \\epsilon a`.

    Parameters
    ----------
    Theta : array_like, shape (3, 3), optional
        Base judge (default :data:`DEFAULT_FLIP_THETA`).
    values : array_like, shape (3,), optional
        True level values (default ``(1, 2, 3)``).
    epsilon : float
        Separation; must keep both :math:`\\pi_k` strictly positive.

    Returns
    -------
    FlipExample
    """
    T = _square(DEFAULT_FLIP_THETA if Theta is None else Theta)
    if T.shape != (3, 3):
        raise ValueError(f"the canonical example is for 3 levels; got Theta of shape {T.shape}.")
    v = _values_for(3, values)
    a = tie_direction(v)
    pibar = np.full(3, 1.0 / 3.0)
    pi1, pi2 = pibar + epsilon * a / 2.0, pibar - epsilon * a / 2.0
    if epsilon <= 0 or np.any(pi1 <= 0) or np.any(pi2 <= 0):
        raise ValueError(
            f"epsilon = {epsilon} must be > 0 and small enough that both pi stay strictly positive: "
            f"pi1 = {pi1.round(4).tolist()}, pi2 = {pi2.round(4).tolist()}."
        )
    return FlipExample(Theta=T.copy(), values=v, a=a, epsilon=float(epsilon), pi1=pi1, pi2=pi2,
                       gamma1=T.T @ pi1, gamma2=T.T @ pi2, Delta=nonidentifiability_direction(T, v, a))


# -- theorem 1: two levels, order along the segment -------------------------------------------------

def segment_prevalence(gamma: ArrayLike, theta1: float, theta2: float) -> NDArray[np.float64] | float:
    """Prevalence of the top true level from the position on the segment (theorem 1).

    With vertices :math:`\\theta_1 = P(\\hat S = \\text{top} \\mid S^* = \\text{low})` and
    :math:`\\theta_2 = P(\\hat S = \\text{top} \\mid S^* = \\text{top})`, a candidate at
    :math:`\\gamma = (1-\\pi)\\theta_1 + \\pi\\theta_2` has

    .. math:: \\pi = \\frac{\\gamma - \\theta_1}{\\theta_2 - \\theta_1}.

    Parameters
    ----------
    gamma : float or array_like
        Candidates' probability of being given the top level.
    theta1, theta2 : float
        The judge's two vertices on ``[0, 1]``.

    Returns
    -------
    float or ndarray
        In ``[0, 1]`` exactly when the candidate lies between the vertices.
    """
    g = float_array(gamma, "gamma")
    if theta1 == theta2:
        raise ValueError(
            f"theta1 == theta2 == {theta1}: the judge gives the top level equally often whatever the truth, "
            "so its scores carry no information about the candidates."
        )
    out = (g - theta1) / (theta2 - theta1)
    return float(out) if np.ndim(out) == 0 else out


def segment_ranks(gammas: ArrayLike, theta1: float, theta2: float) -> NDArray[np.int64]:
    """Ranks (1 = best) of candidates by the top level's prevalence :math:`\\pi_k` (theorem 1).

    For a judge that is not label-flipping (:math:`\\theta_2 > \\theta_1`) :math:`\\pi` is an
    increasing function of :math:`\\gamma`, so these are the ranks of the positions along the
    segment wherever the vertices sit; a flipped judge (:math:`\\theta_2 < \\theta_1`) reverses them.
    Tied candidates share the best of their ranks.

    Parameters
    ----------
    gammas : array_like, shape (K,)
    theta1, theta2 : float

    Returns
    -------
    ndarray of int, shape (K,)
    """
    pi = np.atleast_1d(segment_prevalence(gammas, theta1, theta2))
    return 1 + (pi[None, :] > pi[:, None]).sum(axis=1)


def is_label_flipping(theta1: float, theta2: float) -> bool:
    """Whether a 2-level judge violates assumption 3: it gives the top level *less* often to top answers.

    Assumption 3 asks :math:`P(\\hat S = \\text{low} \\mid S^* = m)` to decrease in :math:`m`, i.e.
    :math:`\\theta_2 > \\theta_1` on the segment's top-level axis.

    Parameters
    ----------
    theta1, theta2 : float

    Returns
    -------
    bool
    """
    return bool(theta2 < theta1)
