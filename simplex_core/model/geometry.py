"""The paper's geometry in plain numpy: simplices, barycentric (areal) coordinates, the augmented
simplex and projections. The identifiability constructions built on them (theorem 1 on a segment,
theorem 2's flip), which only the Geometry lab draws, are in :mod:`simplex_core.model.identifiability`.

Conventions
-----------
* A point of the probability simplex over ``M`` observed levels is a vector ``p`` of length ``M``
  with ``p >= 0`` and ``sum(p) == 1``; levels are ordered from lowest to highest score.
* A judge is a matrix ``Theta`` of shape ``[M_true, M_obs]`` whose row ``Theta[m]`` is the
  distribution of assigned scores when the true level is ``m`` -- the paper's *column*
  :math:`\\theta_m` (the paper's confusion matrix is ``Theta.T``). A candidate with true-level
  distribution :math:`\\pi` is seen by the judge at :math:`\\gamma = \\Theta_{\\text{paper}}\\pi
  = \\texttt{Theta.T} @ \\pi`; in the square case :math:`\\pi = \\texttt{Theta}^{-T}\\gamma`
  (section 3, "true score distributions correspond to barycentric coordinates").
* Drawing the 2-simplex: the equilateral triangle with unit sides whose vertices are
  ``TERNARY_VERTICES``: the lowest level at the bottom-left ``(0, 0)``, the middle level at the
  bottom-right ``(1, 0)``, the highest level at the top ``(1/2, sqrt(3)/2)``. Plotly's ternary axes
  put ``a`` at the top, ``b`` bottom-left and ``c`` bottom-right, so level ``i`` is ternary axis
  ``TERNARY_AXIS_OF_LEVEL[i]`` (``("b", "c", "a")``), and every ternary drawing in
  :mod:`simplex_core.figures` uses this same embedding. Areas are measured in this embedding (the
  whole simplex has area :math:`\\sqrt 3/4`); area *ratios*, the only thing the paper uses, do not
  depend on the embedding.
* Drawing the 1-simplex (2 observed levels): the unit segment, coordinate ``x = p[1]``, the
  probability of the top level.

This module owns geometry only: no sampling, no fitting, no plotting.
"""

from __future__ import annotations


import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "TERNARY_VERTICES",
    "TERNARY_AXIS_OF_LEVEL",
    "simplex_to_cartesian",
    "cartesian_to_simplex",
    "segment_to_cartesian",
    "cartesian_to_segment",
    "barycentric_coordinates",
    "signed_triangle_area",
    "triangle_area",
    "subtriangle_areas",
    "areal_coordinates",
    "is_inside",
    "expected_score_height",
    "augmented_vertices",
    "lift_points",
    "project_to_simplex",
    "is_on_simplex",
]

SQRT3 = float(np.sqrt(3.0))

#: Cartesian coordinates of the 2-simplex's vertices, one row per level (lowest, middle, highest).
TERNARY_VERTICES: NDArray[np.float64] = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, SQRT3 / 2.0]])
TERNARY_VERTICES.setflags(write=False)

#: Plotly ternary axis that carries each level's probability (lowest, middle, highest).
TERNARY_AXIS_OF_LEVEL: tuple[str, str, str] = ("b", "c", "a")

#: Tolerance used to decide "on the simplex" / "inside" unless a caller gives one.
DEFAULT_ATOL = 1e-9


# -- embeddings ----------------------------------------------------------------------------------

def float_array(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """``x`` as a float array; non-finite values refused, naming ``name``."""
    arr = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains non-finite values (NaN or inf): {arr!r}.")
    return arr


def simplex_to_cartesian(p: ArrayLike) -> NDArray[np.float64]:
    """Map points of the 2-simplex to the plane.

    .. math:: (x, y) = \\sum_{i=1}^{3} p_i\\, V_i, \\qquad V = \\texttt{TERNARY\\_VERTICES}

    Parameters
    ----------
    p : array_like, shape (..., 3)
        Barycentric coordinates with respect to the reference simplex (probabilities of the
        lowest, middle and highest level). They need not be non-negative; they should sum to 1.

    Returns
    -------
    ndarray, shape (..., 2)
        Cartesian coordinates in the equilateral embedding.
    """
    arr = float_array(p, "p")
    if arr.shape[-1] != 3:
        raise ValueError(f"p must have 3 coordinates on its last axis (one per level); got shape {arr.shape}.")
    return arr @ TERNARY_VERTICES


def cartesian_to_simplex(xy: ArrayLike) -> NDArray[np.float64]:
    """Inverse of :func:`simplex_to_cartesian`.

    Solves :math:`x = p_2 + p_3/2,\\; y = p_3\\sqrt3/2,\\; p_1 + p_2 + p_3 = 1` for ``p``.

    Parameters
    ----------
    xy : array_like, shape (..., 2)

    Returns
    -------
    ndarray, shape (..., 3)
        Barycentric coordinates (negative outside the simplex), summing to 1.
    """
    arr = float_array(xy, "xy")
    if arr.shape[-1] != 2:
        raise ValueError(f"xy must have 2 coordinates on its last axis; got shape {arr.shape}.")
    p3 = arr[..., 1] * 2.0 / SQRT3
    p2 = arr[..., 0] - p3 / 2.0
    p1 = 1.0 - p2 - p3
    return np.stack([p1, p2, p3], axis=-1)


def segment_to_cartesian(p: ArrayLike) -> NDArray[np.float64]:
    """Map points of the 1-simplex (2 levels) to the unit segment: ``x = p[..., 1]``.

    Parameters
    ----------
    p : array_like, shape (..., 2)
        Probabilities of the low and the top level.

    Returns
    -------
    ndarray, shape (...)
        The probability of the top level, the coordinate along the segment.
    """
    arr = float_array(p, "p")
    if arr.shape[-1] != 2:
        raise ValueError(f"p must have 2 coordinates on its last axis (low, top); got shape {arr.shape}.")
    return arr[..., 1].copy()


def cartesian_to_segment(x: ArrayLike) -> NDArray[np.float64]:
    """Inverse of :func:`segment_to_cartesian`: ``x -> (1 - x, x)``.

    Parameters
    ----------
    x : array_like, shape (...)

    Returns
    -------
    ndarray, shape (..., 2)
    """
    arr = float_array(x, "x")
    return np.stack([1.0 - arr, arr], axis=-1)


# -- barycentric and areal coordinates ------------------------------------------------------------

def barycentric_coordinates(point: ArrayLike, vertices: ArrayLike) -> NDArray[np.float64]:
    """Barycentric coordinates of ``point`` with respect to ``vertices``.

    Finds :math:`\\lambda` with :math:`\\sum_m \\lambda_m = 1` and
    :math:`\\sum_m \\lambda_m v_m = \\text{point}`. For a judge triangle (``vertices = Theta``,
    3 rows, each a distribution over 3 observed levels) and a candidate at :math:`\\gamma` this is
    the true-level distribution :math:`\\pi = \\Theta^{-T}\\gamma` (section 3). When the point is
    not in the affine hull of the vertices (e.g. a 3-level point against the 2 vertices of a
    binary-truth judge) the coordinates are those of its orthogonal projection onto that hull.

    Parameters
    ----------
    point : array_like, shape (..., d)
        One or many points (distributions over ``d`` levels, or Cartesian points).
    vertices : array_like, shape (n, d)
        ``n`` affinely independent vertices, ``n <= d + 1``.

    Returns
    -------
    ndarray, shape (..., n)
        Coordinates, summing to 1; all non-negative exactly when the point is inside.

    Raises
    ------
    ValueError
        If the shapes disagree or the vertices are affinely dependent (a degenerate triangle:
        the judge cannot tell the true levels apart and no coordinates exist).
    """
    pts = float_array(point, "point")
    verts = float_array(vertices, "vertices")
    if verts.ndim != 2:
        raise ValueError(f"vertices must be a 2-D array (one row per vertex); got shape {verts.shape}.")
    n, d = verts.shape
    if pts.shape[-1] != d:
        raise ValueError(
            f"point has {pts.shape[-1]} coordinates but the vertices have {d}: give both in the same space."
        )
    if n < 2:
        raise ValueError(f"need at least 2 vertices; got {n}.")
    edges = (verts[1:] - verts[0]).T  # d x (n-1)
    sv = np.linalg.svd(edges, compute_uv=False)
    if sv[-1] <= 1e-12 * max(1.0, sv[0]):
        raise ValueError(
            "The vertices are affinely dependent (a degenerate triangle or a segment of length 0), "
            f"so barycentric coordinates are not defined: vertices = {verts.tolist()}."
        )
    rest = (pts - verts[0]) @ np.linalg.pinv(edges).T  # (..., n-1)
    first = 1.0 - rest.sum(axis=-1, keepdims=True)
    return np.concatenate([first, rest], axis=-1)


def _planar(vertices: NDArray[np.float64], name: str) -> NDArray[np.float64]:
    """Points in the plane: 2-D coordinates as given, 3-level distributions via the embedding."""
    if vertices.shape[-1] == 2:
        return vertices
    if vertices.shape[-1] == 3:
        return vertices @ TERNARY_VERTICES
    raise ValueError(
        f"{name} must have 2 (Cartesian) or 3 (distribution over 3 levels) coordinates; got shape {vertices.shape}."
    )


def cross_2d(u: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
    """The z component of the cross product of planar vectors (last axis of length 2)."""
    return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]


def signed_triangle_area(vertices: ArrayLike) -> NDArray[np.float64] | float:
    """Signed area of a triangle (positive when the vertices run anticlockwise).

    .. math:: A = \\tfrac12\\,(v_2 - v_1) \\times (v_3 - v_1)

    Parameters
    ----------
    vertices : array_like, shape (..., 3, 2) or (..., 3, 3)
        Cartesian vertices, or distributions over 3 levels (drawn with ``TERNARY_VERTICES``).

    Returns
    -------
    float or ndarray, shape (...)
    """
    verts = _planar(float_array(vertices, "vertices"), "vertices")
    if verts.shape[-2] != 3:
        raise ValueError(f"a triangle has 3 vertices; got shape {verts.shape}.")
    area = 0.5 * cross_2d(verts[..., 1, :] - verts[..., 0, :], verts[..., 2, :] - verts[..., 0, :])
    return float(area) if np.ndim(area) == 0 else area


def triangle_area(vertices: ArrayLike) -> NDArray[np.float64] | float:
    """Area of a triangle, :math:`|A|` (see :func:`signed_triangle_area`).

    Parameters
    ----------
    vertices : array_like, shape (..., 3, 2) or (..., 3, 3)

    Returns
    -------
    float or ndarray, shape (...)
        Area in the equilateral embedding (the full simplex has area :math:`\\sqrt3/4`).
    """
    return np.abs(signed_triangle_area(vertices))


def subtriangle_areas(point: ArrayLike, vertices: ArrayLike) -> NDArray[np.float64]:
    """Areas of the three sub-triangles cut by ``point``, one opposite each vertex (paper eq. 1).

    Sub-triangle ``m`` joins the point to the two vertices other than ``m``:
    :math:`A_m = \\text{Area}(\\triangle(\\gamma, \\theta_{m'}, \\theta_{m''}))`. The areas carry a
    sign, oriented like the whole triangle, so they are all non-negative exactly when the point is
    inside, and they always sum to the triangle's area.

    Parameters
    ----------
    point : array_like, shape (..., 2) or (..., 3)
    vertices : array_like, shape (3, 2) or (3, 3)

    Returns
    -------
    ndarray, shape (..., 3)
        ``A_m`` for ``m = 0, 1, 2``; :math:`A_m / \\sum A = \\pi_m` (:func:`areal_coordinates`).
    """
    verts = _planar(float_array(vertices, "vertices"), "vertices")
    pts = _planar(float_array(point, "point"), "point")
    if verts.shape != (3, 2):
        raise ValueError(f"vertices must be 3 vertices of one triangle; got shape {verts.shape}.")
    total = float(signed_triangle_area(verts))  # one triangle: a scalar
    if abs(total) <= 1e-15:
        raise ValueError(f"The triangle is degenerate (area 0): vertices = {verts.tolist()}.")
    orientation = np.sign(total)
    out = []
    for m in range(3):
        b, c = [i for i in range(3) if i != m]
        # vertex m replaced by the point keeps the vertex order, hence the orientation
        tri = [verts[b] - pts, verts[c] - pts]
        if m == 1:
            tri = tri[::-1]
        out.append(0.5 * cross_2d(tri[0], tri[1]) * orientation)
    return np.stack(out, axis=-1)


def areal_coordinates(point: ArrayLike, vertices: ArrayLike) -> NDArray[np.float64]:
    """Barycentric coordinates as area ratios: :math:`\\pi_m = A_m / A` (paper eq. 1).

    Parameters
    ----------
    point : array_like, shape (..., 2) or (..., 3)
    vertices : array_like, shape (3, 2) or (3, 3)

    Returns
    -------
    ndarray, shape (..., 3)
        Equal to :func:`barycentric_coordinates` for a triangle.
    """
    areas = subtriangle_areas(point, vertices)
    return areas / areas.sum(axis=-1, keepdims=True)


def is_inside(point: ArrayLike, vertices: ArrayLike, atol: float = DEFAULT_ATOL) -> NDArray[np.bool_] | bool:
    """Whether ``point`` lies in the convex hull of ``vertices`` (all barycentric coordinates >= -atol).

    For fewer vertices than dimensions + 1 (a segment in the 3-level simplex) the point must also
    lie on the hull's affine span (within ``atol``).

    Parameters
    ----------
    point : array_like, shape (..., d)
    vertices : array_like, shape (n, d)
    atol : float

    Returns
    -------
    bool or ndarray of bool, shape (...)
    """
    pts = float_array(point, "point")
    verts = float_array(vertices, "vertices")
    lam = barycentric_coordinates(pts, verts)
    ok = np.all(lam >= -atol, axis=-1)
    residual = np.linalg.norm(lam @ verts - pts, axis=-1)
    ok = ok & (residual <= max(atol, 1e-12) * 10)
    return bool(ok) if np.ndim(ok) == 0 else ok


# -- the augmented simplex (appendix A) ------------------------------------------------------------

def expected_score_height(pi: ArrayLike, values: ArrayLike) -> NDArray[np.float64] | float:
    """Expected score, i.e. the height in the augmented simplex (appendix A, theorem "Height Correspondence").

    .. math:: E = \\sum_m \\pi_m v_m

    Parameters
    ----------
    pi : array_like, shape (..., M_true)
        True-level distributions.
    values : array_like, shape (M_true,)
        True level values (the paper uses ``1..M``).

    Returns
    -------
    float or ndarray, shape (...)
    """
    p = float_array(pi, "pi")
    v = float_array(values, "values")
    if p.shape[-1] != v.shape[-1]:
        raise ValueError(f"pi has {p.shape[-1]} true levels but values has {v.shape[-1]}.")
    out = p @ v
    return float(out) if np.ndim(out) == 0 else out


def _embed(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Drawing coordinates of distributions over 3 (plane) or 2 (segment, y = 0) observed levels."""
    if p.shape[-1] == 3:
        return p @ TERNARY_VERTICES
    if p.shape[-1] == 2:
        return np.stack([p[..., 1], np.zeros_like(p[..., 1])], axis=-1)
    raise ValueError(f"only 2 or 3 observed levels can be drawn; got {p.shape[-1]}.")


def augmented_vertices(Theta: ArrayLike, values: ArrayLike) -> NDArray[np.float64]:
    """Judge vertices lifted to their scores: vertex ``m`` goes to :math:`(\\theta_m, v_m)`.

    Parameters
    ----------
    Theta : array_like, shape (M_true, M_obs)
        Rows are the judge's vertices (``M_obs`` is 3, or 2 drawn on the segment with ``y = 0``).
    values : array_like, shape (M_true,)
        Height of each vertex (true level values).

    Returns
    -------
    ndarray, shape (M_true, 3)
        Columns ``x, y`` (drawing coordinates, :data:`TERNARY_VERTICES` embedding) and ``z = v_m``.
    """
    T = float_array(Theta, "Theta")
    v = float_array(values, "values")
    if T.ndim != 2 or T.shape[0] != v.shape[0]:
        raise ValueError(f"Theta has shape {T.shape} but there are {v.shape[0]} values: one value per row.")
    return np.column_stack([_embed(T), v])


def lift_points(pi: ArrayLike, Theta: ArrayLike, values: ArrayLike) -> NDArray[np.float64]:
    """Candidates placed in the augmented simplex with their barycentric coordinates.

    .. math:: \\sum_m \\pi_m (\\theta_m, v_m) = (\\gamma, E)

    so the first two columns are the candidate's drawing position :math:`\\gamma` and the third
    its expected score (appendix A).

    Parameters
    ----------
    pi : array_like, shape (..., M_true)
    Theta : array_like, shape (M_true, M_obs)
    values : array_like, shape (M_true,)

    Returns
    -------
    ndarray, shape (..., 3)
    """
    return float_array(pi, "pi") @ augmented_vertices(Theta, values)


# -- projections -----------------------------------------------------------------------------------

def project_to_simplex(v: ArrayLike) -> NDArray[np.float64]:
    """Euclidean projection onto the probability simplex along the last axis.

    Solves :math:`\\min_p \\lVert p - v\\rVert_2` s.t. :math:`p \\ge 0, \\sum p = 1` by the
    sort-and-threshold rule :math:`p = \\max(v - \\tau, 0)` (Held et al. 1974; Duchi et al. 2008).

    Parameters
    ----------
    v : array_like, shape (..., M)

    Returns
    -------
    ndarray, shape (..., M)
        On the simplex; ``v`` itself when it already is.
    """
    arr = float_array(v, "v")
    if arr.shape[-1] < 1:
        raise ValueError("cannot project an empty vector.")
    u = -np.sort(-arr, axis=-1)
    css = np.cumsum(u, axis=-1) - 1.0
    k = np.arange(1, arr.shape[-1] + 1)
    cond = u - css / k > 0
    rho = arr.shape[-1] - 1 - np.argmax(cond[..., ::-1], axis=-1)  # last index where cond holds
    tau = np.take_along_axis(css, rho[..., None], axis=-1) / (rho[..., None] + 1.0)
    return np.maximum(arr - tau, 0.0)


def is_on_simplex(p: ArrayLike, atol: float = DEFAULT_ATOL) -> NDArray[np.bool_] | bool:
    """Whether each vector along the last axis is a distribution: entries >= -atol, sum within atol of 1.

    Parameters
    ----------
    p : array_like, shape (..., M)
    atol : float

    Returns
    -------
    bool or ndarray of bool, shape (...)
    """
    arr = np.asarray(p, dtype=float)
    ok = np.all(np.isfinite(arr), axis=-1) & np.all(arr >= -atol, axis=-1) & (np.abs(arr.sum(axis=-1) - 1.0) <= atol)
    return bool(ok) if np.ndim(ok) == 0 else ok
