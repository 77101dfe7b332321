"""Geometry-lab figures: barycentric coordinates as areas, theorem 1's segment order, theorem 2's
flip and the augmented simplex. They take plain arrays (no data, no fit)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from simplex_core.model import geometry
from simplex_core.model import identifiability
from simplex_core.figures.style import (
    CANDIDATE_COLOR, CANDIDATE_COLORS, GRID_GREY, JUDGE_COLOR, LABEL_HALO, NARROW_FIGURE_PX, OKABE_ITO, REFERENCE_COLOR,
    TEMPLATE, TERNARY_LABEL_BOX, check_levels, cycle, default_true_labels, distribution_hover, fmt_number, label_rows,
    outward_positions, place_labels, rgba, safe_texts, series_colors, ternary_abc, ternary_layout, ternary_xy,
)


VERTEX_COLORS = (OKABE_ITO["blue"], OKABE_ITO["vermillion"], OKABE_ITO["bluish_green"])


def barycentric_area_figure(vertices: ArrayLike, point: ArrayLike, level_labels: Sequence[str],
                            true_labels: Sequence[str] | None = None, title: str | None = None) -> go.Figure:
    """Barycentric coordinates as area ratios (paper eq. 1): the three shaded sub-triangles.

    Sub-triangle ``m`` (point + the two vertices other than :math:`\\theta_m`) is shaded in vertex
    ``m``'s colour; its share of the triangle's area is :math:`\\pi_m`, given in the legend.

    Parameters
    ----------
    vertices : array_like, shape (3, 3)
        Judge vertices (row m = distribution of assigned scores for true level m).
    point : array_like, shape (3,)
        Candidate's observed distribution :math:`\\gamma`.
    level_labels : sequence of 3 str
        Observed level labels (axis titles).
    true_labels : sequence of 3 str, optional
        True level labels (vertex names; default the observed labels).
    title : str, optional

    Returns
    -------
    go.Figure
        Roles: ``subtriangle`` (three, ``meta["level"]`` = m, ``meta["pi"]`` = area share),
        ``judge_triangle``, ``vertices``, ``point``.
    """
    labels = check_levels(level_labels, 3)
    t_labels = safe_texts(true_labels if true_labels is not None else labels)  # printed: text, not markup
    V = np.asarray(vertices, dtype=float)
    g = np.asarray(point, dtype=float)
    if V.shape != (3, 3) or g.shape != (3,):
        raise ValueError(f"vertices must be 3x3 and point length 3; got {V.shape} and {g.shape}.")
    areas = geometry.subtriangle_areas(g, V)
    pi = areas / areas.sum()
    inside = bool(np.all(pi >= -1e-12))
    fig = go.Figure()
    for m in range(3):
        b, c = [i for i in range(3) if i != m]
        poly = np.vstack([g, V[b], V[c], g])
        fig.add_trace(go.Scatterternary(
            **ternary_abc(poly), mode="lines", fill="toself", fillcolor=rgba(VERTEX_COLORS[m], 0.35),
            line=dict(color=rgba(VERTEX_COLORS[m], 0.9), width=1),
            name=f"π({t_labels[m]}) = area opposite θ({t_labels[m]}) / total = {pi[m]:.3f}",
            hovertemplate=f"sub-triangle opposite θ({t_labels[m]})<br>area share π = {pi[m]:.3f}<extra></extra>",
            meta={"role": "subtriangle", "level": m, "pi": float(pi[m])},
        ))
    closed = np.vstack([V, V[:1]])
    fig.add_trace(go.Scatterternary(**ternary_abc(closed), mode="lines", line=dict(color=REFERENCE_COLOR, width=2),
                                    name="judge triangle", hoverinfo="skip", meta={"role": "judge_triangle"}))
    fig.add_trace(go.Scatterternary(
        **ternary_abc(V), mode="markers+text", text=[f"θ({t})" for t in t_labels], cliponaxis=False,
        textposition=outward_positions(ternary_xy(V)),  # outside the triangle: no edge through a label
        marker=dict(size=11, color=list(VERTEX_COLORS), line=dict(color="white", width=1)), customdata=V,
        name="judge vertices", hovertemplate="<b>%{text}</b><br>" + distribution_hover(labels) + "<extra></extra>",
        meta={"role": "vertices"},
    ))
    fig.add_trace(go.Scatterternary(
        **ternary_abc(g[None, :]), mode="markers+text", text=["γ"], textposition="middle right",
        textfont=dict(size=14),
        marker=dict(size=12, color=REFERENCE_COLOR, symbol="x"), customdata=g[None, :],
        name="candidate γ", hovertemplate="<b>candidate γ</b><br>" + distribution_hover(labels)
        + "<br>π = (" + ", ".join(f"{x:.3f}" for x in pi) + ")<extra></extra>",
        meta={"role": "point", "pi": pi.tolist()},
    ))
    default = "π = (" + ", ".join(f"{x:.2f}" for x in pi) + "): each π is an area share"
    if not inside:
        default += "<br><sup>γ is outside the triangle: a sub-triangle's area counts as negative</sup>"
    fig.update_layout(ternary=ternary_layout(labels), title=dict(text=title or default),
                      legend=dict(orientation="h", yanchor="top", y=-0.08, x=0.0),
                      template=TEMPLATE, margin=dict(l=60, r=60, t=90, b=60))
    return fig


def segment_order_figure(theta1: float, theta2: float, gammas: ArrayLike, names: Sequence[str],
                         level_labels: Sequence[str] | None = None, title: str | None = None) -> go.Figure:
    """Theorem 1 on two levels: the ranking is the order along the segment (reversed for a flipped judge).

    Top row: the judge's segment on the axis ``P(top level)`` with vertices :math:`\\theta_1` (true
    low) and :math:`\\theta_2` (true top) and the candidates at :math:`\\gamma_k`. Bottom row: each
    candidate's true prevalence :math:`\\pi_k = (\\gamma_k - \\theta_1)/(\\theta_2 - \\theta_1)`.
    Lines join the two positions of each candidate; they cross when the judge is label-flipping.

    Parameters
    ----------
    theta1, theta2 : float
    gammas : array_like, shape (K,)
    names : sequence of str
    level_labels : sequence of 2 str, optional
        Low and top level labels (default ``("low", "top")``).
    title : str, optional

    Returns
    -------
    go.Figure
        Roles: ``segment``, ``vertices``, ``candidates_observed`` (x = γ), ``candidates_true``
        (x = π, ``meta["ranks"]``), ``links``.
    """
    labels = safe_texts(level_labels if level_labels is not None else ["low", "top"])  # printed: text, not markup
    g = np.atleast_1d(np.asarray(gammas, dtype=float))
    names = safe_texts(names)
    if len(names) != g.size:
        raise ValueError(f"{len(names)} names for {g.size} candidates.")
    pi = np.atleast_1d(identifiability.segment_prevalence(g, theta1, theta2))
    ranks = identifiability.segment_ranks(g, theta1, theta2)
    flipped = identifiability.is_label_flipping(theta1, theta2)
    colors = cycle(CANDIDATE_COLORS, len(names))  # never the judge's blue
    close = abs(theta2 - theta1) < 0.3  # the two vertex labels would meet: each turns away from the other
    vertex_pos = (["top left", "top right"] if theta1 <= theta2 else ["top right", "top left"]) if close else "top center"
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 1], mode="lines", line=dict(color="#dddddd", width=8),
                             hoverinfo="skip", showlegend=False, meta={"role": "simplex"}))
    fig.add_trace(go.Scatter(x=[theta1, theta2], y=[1, 1], mode="lines", line=dict(color=JUDGE_COLOR, width=4),
                             name="judge segment", hoverinfo="skip", meta={"role": "segment"}))
    fig.add_trace(go.Scatter(
        x=[theta1, theta2], y=[1, 1], mode="markers+text", text=[f"θ₁ (true {labels[0]})", f"θ₂ (true {labels[1]})"],
        textposition=vertex_pos, marker=dict(size=13, color=JUDGE_COLOR, symbol=["circle-open", "circle"],
                                               line=dict(width=2, color=JUDGE_COLOR)),
        name="judge vertices", hovertemplate="%{text}: P(" + labels[1] + ") = %{x:.3f}<extra></extra>",
        meta={"role": "vertices"},
    ))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 0], mode="lines", line=dict(color="#dddddd", width=8),
                             hoverinfo="skip", showlegend=False, meta={"role": "pi_axis"}))
    xs, ys = [], []
    for a, b in zip(g, pi):
        xs += [a, b, None]
        ys += [1, 0, None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=GRID_GREY, width=1, dash="dot"),
                             hoverinfo="skip", showlegend=False, meta={"role": "links"}))
    fig.add_trace(go.Scatter(
        x=g, y=np.ones_like(g), mode="markers", text=names, marker=dict(size=12, color=colors, line=dict(color="white", width=1)),
        name="candidates: observed γ", customdata=np.column_stack([pi, ranks]),
        hovertemplate="<b>%{text}</b><br>γ = P(" + labels[1] + ") = %{x:.3f}<br>π = %{customdata[0]:.3f}, rank %{customdata[1]}<extra></extra>",
        meta={"role": "candidates_observed"},
    ))
    texts = [f"{n} (#{r})" for n, r in zip(names, ranks)]
    lo = float(min(0.0, np.min(pi), theta1, theta2)) - 0.05
    hi = float(max(1.0, np.max(pi), theta1, theta2)) + 0.05
    # the names under the π axis, in as many rows as needed for none to overlap on a narrow page
    char_w = 6.5 * (hi - lo) / (NARROW_FIGURE_PX - 230)
    rows = label_rows(pi, texts, char_w, gap=char_w)
    fig.add_trace(go.Scatter(
        x=pi, y=np.zeros_like(pi), mode="markers", text=texts,
        marker=dict(size=12, color=colors, symbol="diamond", line=dict(color="white", width=1)),
        name="candidates: true prevalence π", customdata=ranks,
        hovertemplate="%{text}<br>π = %{x:.3f}<extra></extra>",
        meta={"role": "candidates_true", "ranks": ranks.tolist(), "label_rows": rows},
    ))
    for x, text, row, color in zip(pi, texts, rows, colors):
        fig.add_annotation(x=float(x), y=0, xref="x", yref="y", text=text, showarrow=False, yanchor="top",
                           yshift=-10 - 16 * row, font=dict(size=12, color=color), name="candidate_label")
    # short enough for a 1024-px window
    default = ("Label-flipping judge (θ₂ < θ₁): ranking = reverse order on the segment"
               if flipped else "θ₂ > θ₁: ranking = order along the segment")
    fig.update_layout(
        title=dict(text=title or default),
        xaxis=dict(title=f"probability (top level: {labels[1]})", range=[lo, hi], zeroline=False),
        yaxis=dict(tickvals=[0, 1], ticktext=[f"true prevalence π of {labels[1]}", f"judge-assigned P({labels[1]})"],
                   range=[-0.6 - 0.2 * max(rows, default=0), 1.6], showgrid=False, zeroline=False),
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0.0), template=TEMPLATE,
        height=380 + 16 * max(rows, default=0),
    )
    return fig


def flip_figure(Theta_h: ArrayLike, gamma1: ArrayLike, gamma2: ArrayLike, title: str | None = None, *,
                Theta_base: ArrayLike | None = None, values: ArrayLike | None = None,
                names: Sequence[str] = ("candidate 1", "candidate 2"), level_labels: Sequence[str] = ("1", "2", "3"),
                true_labels: Sequence[str] | None = None, h: float | None = None) -> go.Figure:
    """Theorem 2's flip: the same two candidates inside a moved judge triangle :math:`\\Theta + h\\Delta`.

    Parameters
    ----------
    Theta_h : array_like, shape (3, 3)
        The moved judge (rows = vertices), e.g. :attr:`identifiability.FlipConfiguration.Theta_h`.
    gamma1, gamma2 : array_like, shape (3,)
        The candidates' (fixed) observed distributions.
    title : str, optional
    Theta_base : array_like, shape (3, 3), optional
        The judge at ``h = 0`` (dashed outline, for reference).
    values : array_like, shape (3,), optional
        True level values (default ``1, 2, 3``) for the expected scores.
    names : two str
    level_labels : sequence of 3 str
    true_labels : sequence of 3 str, optional
    h : float, optional
        Slider value, shown in the title.

    Returns
    -------
    go.Figure
        Roles: ``theta_base`` (if given), ``theta_h``, ``candidates`` (``meta["pi"]``,
        ``meta["expected_scores"]``).
    """
    labels = check_levels(level_labels, 3)
    t_labels = safe_texts(true_labels if true_labels is not None else labels)  # printed: text, not markup
    names = safe_texts(names)
    T = np.asarray(Theta_h, dtype=float)
    G = np.stack([np.asarray(gamma1, dtype=float), np.asarray(gamma2, dtype=float)])
    v = np.arange(1.0, 4.0) if values is None else np.asarray(values, dtype=float)
    pi = geometry.barycentric_coordinates(G, T)
    E = pi @ v
    inside = bool(np.all(pi >= -1e-9))
    valid = bool(np.all(T >= -1e-9))
    fig = go.Figure()
    if Theta_base is not None:
        B = np.asarray(Theta_base, dtype=float)
        fig.add_trace(go.Scatterternary(**ternary_abc(np.vstack([B, B[:1]])), mode="lines",
                                        line=dict(color=GRID_GREY, width=2, dash="dash"), name="judge at h = 0",
                                        hoverinfo="skip", meta={"role": "theta_base"}))
    fig.add_trace(go.Scatterternary(
        **ternary_abc(np.vstack([T, T[:1]])), mode="lines+markers+text", fill="toself", fillcolor=rgba(JUDGE_COLOR, 0.12),
        line=dict(color=JUDGE_COLOR, width=3), marker=dict(size=8, color=JUDGE_COLOR),
        text=[f"θ({t})" for t in t_labels] + [""], textfont=dict(color=JUDGE_COLOR),
        textposition=outward_positions(ternary_xy(T)) + ["top center"],  # outside the triangle
        cliponaxis=False,
        customdata=np.vstack([T, T[:1]]), name="judge Θ + hΔ",
        hovertemplate="<b>%{text}</b><br>" + distribution_hover(labels) + "<extra></extra>", meta={"role": "theta_h"},
    ))
    cand_colors = [OKABE_ITO["vermillion"], OKABE_ITO["bluish_green"]]
    # the two candidates sit close together: their names placed so that they neither overlap each
    # other nor cover a marker (the vertices' labels are outside the triangle)
    xy = ternary_xy(G)
    positions = place_labels(xy, names, lambda b: True, **TERNARY_LABEL_BOX, preferred=["bottom center", "top center"],
                             avoid=np.vstack([xy, ternary_xy(T)]), required=True)
    fig.add_trace(go.Scatterternary(
        **ternary_abc(G), mode="markers+text", text=names, textposition=positions, cliponaxis=False,
        textfont=dict(shadow=LABEL_HALO),
        marker=dict(size=12, color=cand_colors, symbol=["circle", "diamond"], line=dict(color="white", width=1)),
        customdata=np.column_stack([G, pi, E]), name="candidates",
        hovertemplate=("<b>%{text}</b><br>" + distribution_hover(labels) + "<br>π = (%{customdata[3]:.3f}, "
                       "%{customdata[4]:.3f}, %{customdata[5]:.3f})<br>expected score %{customdata[6]:.3f}<extra></extra>"),
        meta={"role": "candidates", "pi": pi.tolist(), "expected_scores": E.tolist(), "label_xy": xy.tolist(),
              "label_positions": positions},
    ))
    subtitle = None
    if title is None:  # the verdict as the title, the numbers (and any warning) under it: short lines
        head = f"h = {h:+.3f}: " if h is not None else ""
        gap = E[0] - E[1]
        verdict = (f"{names[0]} ranks higher" if gap > 1e-12 else f"{names[1]} ranks higher" if gap < -1e-12 else "a tie")
        title = f"{head}{verdict}"
        subtitle = f"E[{names[0]}] = {E[0]:.3f}, E[{names[1]}] = {E[1]:.3f}"
        if not (inside and valid):
            subtitle += "<br>" + ("a candidate is outside the triangle; " if not inside else "") + \
                        ("a vertex left the simplex; " if not valid else "") + "this judge cannot explain the data"
    fig.update_layout(ternary=ternary_layout(labels),
                      title=dict(text=title, subtitle=dict(text=subtitle or "", font=dict(size=12, color="#555555"))),
                      legend=dict(orientation="h", yanchor="top", y=-0.08, x=0.0),
                      template=TEMPLATE, margin=dict(l=60, r=60, t=120, b=60))
    return fig


def flip_score_curve_figure(h_grid: ArrayLike, expected_scores: ArrayLike, names: Sequence[str] = ("candidate 1", "candidate 2"),
                            title: str | None = None, *, h_current: float | None = None) -> go.Figure:
    """Both candidates' expected scores as the slider ``h`` moves (the order flips where they cross).

    Parameters
    ----------
    h_grid : array_like, shape (H,)
    expected_scores : array_like, shape (H, 2)
        E.g. ``[flip_configuration(..., h).expected_scores for h in h_grid]``.
    names : two str
    title : str, optional
    h_current : float, optional
        Slider position (vertical line).

    Returns
    -------
    go.Figure
        Roles: ``expected_score`` (two traces).
    """
    h = np.asarray(h_grid, dtype=float)
    E = np.asarray(expected_scores, dtype=float)
    names = safe_texts(names)
    if E.shape != (h.size, 2):
        raise ValueError(f"expected_scores must have shape ({h.size}, 2); got {E.shape}.")
    fig = go.Figure()
    for i, (name, color) in enumerate(zip(names, [OKABE_ITO["vermillion"], OKABE_ITO["bluish_green"]])):
        fig.add_trace(go.Scatter(x=h, y=E[:, i], mode="lines", name=str(name), line=dict(color=color, width=3, dash="solid" if i == 0 else "dash"),
                                 hovertemplate=f"{name}<br>h = %{{x:.3f}}<br>expected score %{{y:.3f}}<extra></extra>",
                                 meta={"role": "expected_score", "candidate": i}))
    if h_current is not None:
        fig.add_vline(x=float(h_current), line=dict(color=REFERENCE_COLOR, dash="dot", width=1))
    fig.update_layout(title=dict(text=title or "Expected scores as the judge moves along Θ + hΔ"),
                      xaxis=dict(title="h"), yaxis=dict(title="expected score"), template=TEMPLATE,
                      legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0.0), height=320)
    return fig


def augmented_simplex_figure(Theta: ArrayLike, values: ArrayLike, pis: ArrayLike, names: Sequence[str],
                             level_labels: Sequence[str] = ("1", "2", "3"), true_labels: Sequence[str] | None = None,
                             title: str | None = None) -> go.Figure:
    """The augmented simplex (appendix A): judge vertices lifted to their scores, candidates at their heights.

    The probability simplex lies flat at height ``z_base`` (one level step below the lowest value);
    vertex :math:`\\theta_m` is lifted to height :math:`v_m`; candidate ``k``, placed with its
    barycentric coordinates :math:`\\pi_k`, sits above its observed position
    :math:`\\gamma_k = \\Theta^T\\pi_k` at height :math:`E_k = v^T\\pi_k`, its expected score.

    Parameters
    ----------
    Theta : array_like, shape (M_true, 3)
        Judge (rows = vertices); ``M_true`` is 3 (a lifted triangle) or 2 (a lifted segment).
    values : array_like, shape (M_true,)
    pis : array_like, shape (K, M_true)
        Candidates' true-level distributions.
    names : sequence of str
    level_labels : sequence of 3 str
    true_labels : sequence of str, optional
    title : str, optional

    Returns
    -------
    go.Figure
        Roles: ``simplex_base``, ``judge_base``, ``lifted_judge`` (``go.Mesh3d`` or a line),
        ``vertex_lifts``, ``lifted_vertices``, ``candidate_drops``, ``candidates_base``,
        ``candidates_lifted`` (z = expected scores).
    """
    labels = safe_texts(check_levels(level_labels, 3))  # printed: text, not markup
    T = np.asarray(Theta, dtype=float)
    v = np.asarray(values, dtype=float)
    P = np.atleast_2d(np.asarray(pis, dtype=float))
    names = safe_texts(names)
    if T.ndim != 2 or T.shape[1] != 3 or T.shape[0] not in (2, 3):
        raise ValueError(f"Theta must have shape (3, 3) or (2, 3); got {T.shape}.")
    if P.shape != (len(names), T.shape[0]):
        raise ValueError(f"pis must have shape ({len(names)}, {T.shape[0]}) (one row per name); got {P.shape}.")
    t_labels = safe_texts(true_labels) if true_labels is not None else default_true_labels(labels, T.shape[0])
    lifted = geometry.augmented_vertices(T, v)
    cand = geometry.lift_points(P, T, v)
    step = (v.max() - v.min()) / max(len(v) - 1, 1)
    z_base = float(v.min() - step)
    fig = go.Figure()
    ref = np.vstack([geometry.TERNARY_VERTICES, geometry.TERNARY_VERTICES[:1]])
    # the view looks along +y from slightly above: screen x is x, screen up is mostly z (then y)
    base_pos = outward_positions(geometry.TERNARY_VERTICES) + ["top center"]
    fig.add_trace(go.Scatter3d(x=ref[:, 0], y=ref[:, 1], z=[z_base] * 4, mode="lines+text",
                               text=[f"{lab}" for lab in labels] + [""], textposition=base_pos,
                               line=dict(color="#bbbbbb", width=3), name="probability simplex", hoverinfo="skip",
                               meta={"role": "simplex_base"}))
    base_closed = np.vstack([lifted, lifted[:1]]) if T.shape[0] == 3 else lifted
    fig.add_trace(go.Scatter3d(x=base_closed[:, 0], y=base_closed[:, 1], z=[z_base] * len(base_closed), mode="lines",
                               line=dict(color=JUDGE_COLOR, width=3, dash="dash"), name="judge on the simplex",
                               hoverinfo="skip", meta={"role": "judge_base"}))
    if T.shape[0] == 3:
        fig.add_trace(go.Mesh3d(x=lifted[:, 0], y=lifted[:, 1], z=lifted[:, 2], i=[0], j=[1], k=[2],
                                color=JUDGE_COLOR, opacity=0.3, name="lifted judge", showlegend=True,
                                hoverinfo="skip", meta={"role": "lifted_judge"}))
    else:
        fig.add_trace(go.Scatter3d(x=lifted[:, 0], y=lifted[:, 1], z=lifted[:, 2], mode="lines",
                                   line=dict(color=JUDGE_COLOR, width=6), name="lifted judge",
                                   hoverinfo="skip", meta={"role": "lifted_judge"}))
    xs, ys, zs = [], [], []
    for x, y, z in lifted:
        xs += [x, x, None]
        ys += [y, y, None]
        zs += [z_base, z, None]
    fig.add_trace(go.Scatter3d(x=xs, y=ys, z=zs, mode="lines", line=dict(color=rgba(JUDGE_COLOR, 0.6), width=2, dash="dot"),
                               hoverinfo="skip", showlegend=False, meta={"role": "vertex_lifts"}))
    fig.add_trace(go.Scatter3d(
        x=lifted[:, 0], y=lifted[:, 1], z=lifted[:, 2], mode="markers+text",
        text=[f"θ({t}) at {fmt_number(z)}" for t, z in zip(t_labels, v)],
        textposition=outward_positions(lifted[:, [0, 2]] * [1.0, 1.0 / max(step, 1e-9)]),  # away from the plane's centre
        marker=dict(size=5, color=JUDGE_COLOR), name="lifted vertices",
        hovertemplate="%{text}<extra></extra>", meta={"role": "lifted_vertices"},
    ))
    xs, ys, zs = [], [], []
    for x, y, z in cand:
        xs += [x, x, None]
        ys += [y, y, None]
        zs += [z_base, z, None]
    fig.add_trace(go.Scatter3d(x=xs, y=ys, z=zs, mode="lines", line=dict(color=rgba(CANDIDATE_COLOR, 0.6), width=2),
                               hoverinfo="skip", showlegend=False, meta={"role": "candidate_drops"}))
    colors = series_colors(len(names) + 1)[1:]  # blue is the judge's
    fig.add_trace(go.Scatter3d(x=cand[:, 0], y=cand[:, 1], z=[z_base] * len(names), mode="markers", text=names,
                               marker=dict(size=4, color=colors, symbol="circle-open"), name="candidates on the simplex (γ)",
                               hovertemplate="<b>%{text}</b> (observed position)<extra></extra>",
                               meta={"role": "candidates_base"}))
    fig.add_trace(go.Scatter3d(
        x=cand[:, 0], y=cand[:, 1], z=cand[:, 2], mode="markers", text=names,
        marker=dict(size=6, color=colors), customdata=np.column_stack([cand[:, 2], P]),
        name="candidates at their expected score",
        hovertemplate="<b>%{text}</b><br>expected score = height = %{customdata[0]:.3f}<br>π = ("
        + ", ".join(f"%{{customdata[{i + 1}]:.3f}}" for i in range(P.shape[1])) + ")<extra></extra>",
        meta={"role": "candidates_lifted"},
    ))
    # names on the view, one text trace each: the WebGL scene drew a per-point position list wrongly
    for (x, y, z), name, pos, color in zip(cand, names, _spread(cand[:, 2]), colors):
        fig.add_trace(go.Scatter3d(x=[x], y=[y], z=[z], mode="text", text=[name], textposition=pos,
                                   textfont=dict(color=color), hoverinfo="skip", showlegend=False,
                                   meta={"role": "candidate_label", "position": pos}))
    axis = dict(showticklabels=False, title=dict(text=""), showgrid=False, zeroline=False, showbackground=False)
    fig.update_layout(
        title=dict(text=title or "Augmented simplex: a candidate's height is its expected score"),
        scene=dict(xaxis=axis, yaxis=axis, zaxis=dict(title=dict(text="score"), range=[z_base, float(v.max()) + 0.1 * step],
                                                                 # the score values only: a "0" tick ran into the base corner's name
                                                                 tickmode="array", tickvals=[float(x) for x in v]),
                   aspectmode="manual", aspectratio=dict(x=1, y=0.87, z=0.9),
                   camera=dict(eye=dict(x=0.3, y=-2.0, z=1.0), center=dict(x=0, y=0, z=-0.1))),
        legend=dict(orientation="h", yanchor="top", y=0.0, x=0.0), template=TEMPLATE,
        margin=dict(l=0, r=0, t=60, b=0), height=560,
    )
    return fig

def _spread(z: NDArray[np.float64]) -> list[str]:
    """Text positions that keep close points' names apart on the 3-D view: the highest point's name
    above it, the lowest's below, the ones between alternately left and right."""
    order = np.argsort(-np.asarray(z, dtype=float), kind="stable")
    out = [""] * len(order)
    for rank, i in enumerate(order):
        out[i] = ("top center" if rank == 0 else "bottom center" if rank == len(order) - 1
                  else ("middle left" if rank % 2 else "middle right"))
    return out
