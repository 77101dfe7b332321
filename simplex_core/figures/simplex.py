"""Judges on the simplex: one judge's triangle (3 levels) or segment (2 levels) with the candidates
inside it, the posterior's judge triangles as a cloud of outlines and the posterior mean in bold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from simplex_core.model import geometry
from simplex_core.figures.style import (
    CANDIDATE_COLOR, CANDIDATE_COLORS, JUDGE_COLOR, LABEL_HALO, MARKER_SYMBOLS, POSTERIOR_POINT_COLOR, TEMPLATE,
    TERNARY_LABEL_BOX, LabelBox, check_levels, cycle, default_true_labels, distribution_hover, inside_triangle, outward_position,
    place_labels, require_columns, rgba, safe_text, safe_texts, series_colors, short_label, ternary_abc, ternary_layout,
    ternary_tick_label_boxes, ternary_xy,
)

def _check_distributions(observed: pd.DataFrame, n_levels: int, what: str) -> NDArray[np.float64]:
    if not isinstance(observed, pd.DataFrame):
        raise TypeError(f"{what} must be a DataFrame (one row per candidate, one column per level).")
    if observed.shape[1] != n_levels:
        raise ValueError(f"{what} must have {n_levels} level columns; got {observed.shape[1]}: {list(observed.columns)}.")
    arr = observed.to_numpy(dtype=float)
    bad = [str(k) for k, ok in zip(observed.index, np.atleast_1d(geometry.is_on_simplex(arr, atol=1e-6))) if not ok]
    if bad:
        raise ValueError(
            f"{what}: the rows for {', '.join(bad)} are not distributions (non-negative, summing to 1); "
            "pass shares, not counts (counts go in `counts`)."
        )
    return arr


def _check_draws(theta: ArrayLike | None, n_obs: int, what: str, ndim: int) -> NDArray[np.float64] | None:
    if theta is None:
        return None
    arr = np.asarray(theta, dtype=float)
    if arr.ndim != ndim or arr.shape[-1] != n_obs:
        raise ValueError(f"{what} must have {ndim} dimensions with {n_obs} observed levels last; got shape {arr.shape}.")
    return arr


def _select_draws(n_draws: int, max_draws: int, draw_indices: Sequence[int] | None) -> NDArray[np.int64]:
    """Evenly spaced draw indices (deterministic: the figure never samples)."""
    if draw_indices is not None:
        idx = np.asarray(draw_indices, dtype=int)
        if idx.size and (idx.min() < 0 or idx.max() >= n_draws):
            raise ValueError(f"draw_indices must lie in 0..{n_draws - 1}; got {idx.tolist()}.")
        return idx
    if n_draws <= max_draws:
        return np.arange(n_draws)
    return np.unique(np.linspace(0, n_draws - 1, max_draws).round().astype(int))


def _gapped(shapes: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
    """Polylines [n_i, d] stacked into one array with a NaN row after each: one Plotly trace draws
    them all, unconnected (a trace per posterior draw made a first visit's Simplex page draw its four
    figures 0.3 s slower: Plotly's cost grows with the number of traces)."""
    d = shapes[0].shape[1]
    return np.concatenate([np.vstack([np.asarray(v, dtype=float), np.full((1, d), np.nan)]) for v in shapes])


@dataclass(frozen=True)
class JudgeSimplex:
    """What one judge's simplex view needs (all precomputed).

    Attributes
    ----------
    observed : DataFrame
        Candidate x observed level (columns in level order), rows are shares summing to 1.
    counts : DataFrame, optional
        Same shape, integer counts (for hover: counts and n).
    theta_draws : array, shape [S, M_true, M_obs], optional
        Posterior draws of the judge's matrix (row m = vertex for true level m).
    theta_mean : array, shape [M_true, M_obs], optional
        Posterior mean of the judge's matrix.
    candidate_posterior : array, shape [S, K, M_obs], optional
        Posterior draws of the candidates' positions :math:`\\gamma_k` under this judge.
    """

    observed: pd.DataFrame
    counts: pd.DataFrame | None = None
    theta_draws: ArrayLike | None = None  # arrays, or anything np.asarray reads (checked when drawn)
    theta_mean: ArrayLike | None = None
    candidate_posterior: ArrayLike | None = None


def judge_observed_table(distribution: pd.DataFrame, judge: str,
                         candidates: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Shares and counts for one judge from the long per-judge per-candidate table.

    Parameters
    ----------
    distribution : DataFrame
        :func:`simplex_core.data.views.score_distribution` output: columns ``judge, candidate, level,
        count`` (``label`` optional, used as column names).
    judge : str
    candidates : sequence of str, optional
        Row order (default: order of appearance). Candidates the judge never scored are dropped.

    Returns
    -------
    (observed, counts) : tuple of DataFrame
        Candidate x level, columns in ascending level order (named by label when present).
    """
    require_columns(distribution, ["judge", "candidate", "level", "count"], "the score-distribution table")
    sub = distribution[distribution["judge"] == judge]
    if sub.empty:
        raise ValueError(f"judge {judge!r} is not in the table; judges: {sorted(distribution['judge'].unique())}.")
    counts = sub.pivot_table(index="candidate", columns="level", values="count", aggfunc="sum", sort=True).fillna(0)
    if "label" in sub.columns:
        labels = sub.drop_duplicates("level").set_index("level")["label"]
        counts.columns = [labels[c] for c in counts.columns]
    order = list(dict.fromkeys(sub["candidate"])) if candidates is None else [c for c in candidates if c in counts.index]
    counts = counts.loc[order]
    counts = counts[counts.sum(axis=1) > 0].astype(int)
    counts.columns.name = None
    counts.index.name = "candidate"
    observed = counts.div(counts.sum(axis=1), axis=0)
    return observed, counts


def _candidate_customdata(observed: pd.DataFrame, counts: pd.DataFrame | None) -> NDArray[np.float64]:
    """Hover data per candidate: shares, then counts and n when counts are given."""
    shares = observed.to_numpy(dtype=float)
    if counts is None:
        return shares
    if counts.shape != observed.shape:
        raise ValueError(f"counts must have the same shape as the observed shares {observed.shape}; got {counts.shape}.")
    c = counts.reindex(observed.index).to_numpy(dtype=float)
    if np.isnan(c).any():
        raise ValueError("counts must have a row for every candidate in the observed shares.")
    n = c.sum(axis=1, keepdims=True)
    return np.column_stack([shares, c, n])


def _candidate_hover(level_labels: Sequence[str], with_counts: bool, judge: str | None) -> str:
    k = len(level_labels)
    lines = ["<b>%{text}</b>" + (f" (judge {safe_text(judge)})" if judge else "")]
    for i, lab in enumerate(level_labels):
        if with_counts:
            lines.append(f"{safe_text(lab)}: %{{customdata[{i}]:.1%}} (%{{customdata[{k + i}]:.0f}})")
        else:
            lines.append(f"{safe_text(lab)}: %{{customdata[{i}]:.1%}}")
    if with_counts:
        lines.append(f"n = %{{customdata[{2 * k}]:.0f}}")
    return "<br>".join(lines) + "<extra></extra>"


DRAW_LINE_ALPHA = 0.22   # one posterior draw's outline: many overlap into a visible cloud
MEAN_LINE_WIDTH = 3.5
DRAW_LINE_WIDTH = 1.0


SUBSCRIPTS = "₁₂₃₄₅₆₇₈₉"


def _vertex_labels(mean: NDArray[np.float64], t_labels: Sequence[str], merge_within: float = 0.07,
                   short: bool = False) -> tuple[NDArray[np.float64], list[str]]:
    """One label per posterior-mean vertex; vertices closer than ``merge_within`` (side units)
    share one label ("θ: a = b"), so two labels never sit on top of each other. ``short``: "θ₁"
    (the vertex of the first true level; "θ₁,₂" shared) for triangles too small for level names."""
    xy = ternary_xy(mean)
    groups: list[list[int]] = []
    for i in range(len(xy)):
        for g in groups:
            if np.hypot(*(xy[g[0]] - xy[i])) < merge_within:
                g.append(i)
                break
        else:
            groups.append([i])
    anchors = np.array([xy[g].mean(axis=0) for g in groups])
    if short:
        texts = ["θ" + ",".join(SUBSCRIPTS[i] for i in g) for g in groups]
    else:
        texts = ["θ: " + " = ".join(safe_text(t_labels[i]) for i in g) for g in groups]
    return anchors, texts


def _add_judge_ternary_traces(fig: go.Figure, data: JudgeSimplex, level_labels: Sequence[str],
                              true_labels: Sequence[str] | None, *, judge: str | None, color: str,
                              point_colors: Sequence[str], symbols: Sequence[str], max_draws: int,
                              draw_indices: Sequence[int] | None, max_candidate_draws: int,
                              show_names: bool | None, candidate_keys: bool, taken: list,
                              box_metrics: LabelBox | None = None) -> None:
    """Add one judge's traces, bottom to top: draw outlines, the bold mean, the candidates' posterior
    positions, the candidates' observed points, then the text labels (placed so that none overlaps
    another or leaves the triangle; ``taken`` collects the label boxes used so far)."""
    observed = _check_distributions(data.observed, 3, "observed distributions")
    draws = _check_draws(data.theta_draws, 3, "theta_draws", 3)
    mean = _check_draws(data.theta_mean, 3, "theta_mean", 2)
    post = _check_draws(data.candidate_posterior, 3, "candidate_posterior", 3)
    n_true = (draws.shape[1] if draws is not None else mean.shape[0] if mean is not None else 3)
    if draws is not None and mean is not None and mean.shape[0] != draws.shape[1]:
        raise ValueError(f"theta_mean has {mean.shape[0]} true levels but theta_draws has {draws.shape[1]}.")
    if n_true not in (2, 3):
        raise ValueError(f"a ternary judge view needs 2 or 3 true levels; got {n_true}.")
    t_labels = list(true_labels) if true_labels is not None else default_true_labels(level_labels, n_true)
    prefix = f"{safe_text(judge)}: " if (judge and not candidate_keys) else ""  # the overlay tells judges apart
    group = judge or "judge"
    shape_word = "triangle" if n_true == 3 else "segment"
    names = [str(k) for k in data.observed.index]
    shown = safe_texts(names)
    K = len(names)

    if draws is not None:
        idx = _select_draws(draws.shape[0], max_draws, draw_indices)
        if idx.size:
            # outlines only: a fill would stack into an opaque block over the candidates
            outlines = _gapped([np.vstack([draws[s], draws[s][:1]]) if n_true == 3 else draws[s] for s in idx])
            fig.add_trace(go.Scatterternary(
                **ternary_abc(outlines), mode="lines", fill="none",
                line=dict(color=rgba(color, DRAW_LINE_ALPHA), width=DRAW_LINE_WIDTH),
                name=f"{prefix}posterior draws", legendgroup=f"{group}-draws", hoverinfo="skip",
                meta={"role": "theta_draws", "draws": [int(s) for s in idx], "judge": judge},
            ))
    if mean is not None:
        closed = np.vstack([mean, mean[:1]]) if n_true == 3 else mean
        labels = [f"θ: {safe_text(t)}" for t in t_labels] + ([""] if n_true == 3 else [])
        fig.add_trace(go.Scatterternary(
            **ternary_abc(closed), mode="lines+markers", text=labels, customdata=closed, cliponaxis=False,
            line=dict(color=color, width=MEAN_LINE_WIDTH), marker=dict(size=8, color=color, symbol="circle"),
            name=f"{prefix}posterior mean {shape_word}", legendgroup=f"{group}-mean",
            hovertemplate="<b>%{text}</b> (posterior mean vertex)<br>" + distribution_hover(level_labels) + "<extra></extra>",
            meta={"role": "theta_mean", "judge": judge, "true_labels": [str(t) for t in t_labels[:n_true]]},
        ))
    if post is not None:
        if post.shape[1] != K:
            raise ValueError(f"candidate_posterior has {post.shape[1]} candidates but observed has {K}.")
        idx = _select_draws(post.shape[0], max_candidate_draws, None)
        pts = post[idx].reshape(-1, 3)
        fig.add_trace(go.Scatterternary(
            **ternary_abc(pts), mode="markers", text=np.tile(np.asarray(shown, dtype=object), len(idx)), customdata=pts,
            marker=dict(size=4, color=[rgba(c, 0.35) for c in point_colors] * len(idx)),
            name=f"{prefix}posterior positions (dots)", legendgroup=f"{group}-post",
            hovertemplate="<b>%{text}</b> (posterior draw)<br>" + distribution_hover(level_labels) + "<extra></extra>",
            meta={"role": "candidate_posterior", "judge": judge},
        ))
    fig.add_trace(go.Scatterternary(
        **ternary_abc(observed), mode="markers", text=shown, cliponaxis=False,
        customdata=_candidate_customdata(data.observed, data.counts),
        marker=dict(size=10, color=list(point_colors), symbol=list(symbols), line=dict(color="white", width=1)),
        name=f"{prefix}candidates (observed scores)", legendgroup=f"{group}-cand", showlegend=not candidate_keys,
        hovertemplate=_candidate_hover(level_labels, data.counts is not None, judge),
        meta={"role": "candidates", "judge": judge, "names": names},
    ))
    if candidate_keys:  # one legend key per candidate: the name is on the figure even when its label is not
        fig.add_traces([go.Scatterternary(
            a=[None], b=[None], c=[None], mode="markers", name=short_label(raw),
            marker=dict(size=10, color=c, symbol=s, line=dict(color="white", width=1)),
            hoverinfo="skip", meta={"role": "candidate_key", "candidate": name},
        ) for raw, name, c, s in zip(names, shown, point_colors, symbols)])
    # labels last, above every mark
    add_ternary_labels(fig, observed, shown, names, mean, t_labels, judge=judge, color=color,
                       show_names=show_names is None or show_names, box=box_metrics or TERNARY_LABEL_BOX, taken=taken)


def _beside_a_side(box: tuple[float, float, float, float], room: float) -> bool:
    """Whether a label box lies within ``room`` of the triangle beside its slanted sides, neither
    below the base (the corners' level names are there) nor above the apex (the top one's)."""
    return inside_triangle(box, 0.02 + room) and box[1] >= -0.02 and box[3] <= np.sqrt(3.0) / 2 + 0.02


def add_ternary_labels(fig: go.Figure, observed: NDArray[np.float64], shown: Sequence[str], names: Sequence[str],
                       mean: NDArray[np.float64] | None, t_labels: Sequence[str], *, judge: str | None, color: str,
                       show_names: bool, box: LabelBox, taken: list, subplot: str | None = None,
                       meta: Mapping | None = None, font_sizes: tuple[int, int] = (12, 11),
                       short_vertex_labels: bool = False) -> None:
    """Add the text traces of one judge's simplex: the posterior-mean vertices ("θ: level", never
    left out) and the candidates' names where they fit, placed with the label metrics ``box`` (in
    side units of the triangle, e.g. :data:`~simplex_core.figures.style.TERNARY_LABEL_BOX`) so that
    none overlaps another or leaves the triangle; ``taken`` collects the boxes used."""
    markers = ternary_xy(observed)
    extra = {"subplot": subplot} if subplot else {}
    if mean is not None:
        # vertices closer than about two labels' height share one label (at least 0.07 of the side):
        # two labels at one corner had no room but outside the triangle, over the corner's level name
        anchors, texts = _vertex_labels(mean, t_labels, merge_within=max(0.07, 2.5 * box["line_h"]),
                                        short=short_vertex_labels)
        centre = ternary_xy(mean).mean(axis=0)
        # a vertex label is never left out: rather just outside the triangle than over another label
        pos = place_labels(anchors, texts, lambda b: inside_triangle(b, 0.02), **box,
                           preferred=[outward_position(a, centre) for a in anchors], avoid=markers, taken=taken,
                           required=True, loose=lambda b: _beside_a_side(b, box["line_h"]), overlap_cost=2000)
        fig.add_trace(go.Scatterternary(
            **ternary_abc(geometry.cartesian_to_simplex(anchors)), mode="text", text=texts, textposition=pos,
            cliponaxis=False, textfont=dict(color=color, size=font_sizes[0], shadow=LABEL_HALO), hoverinfo="skip",
            showlegend=False, **extra,
            meta={**(meta or {}), "role": "vertex_labels", "judge": judge, "xy": anchors.tolist(), "positions": pos,
                  "box": dict(box)},
        ))
    if show_names:
        avoid = markers if mean is None else np.vstack([markers, ternary_xy(mean)])
        pos = place_labels(markers, shown, lambda b: inside_triangle(b, 0.02), **box, preferred=["top center"] * len(shown),
                           avoid=avoid, taken=taken)
        keep = [i for i, p in enumerate(pos) if p is not None]
        if keep:
            fig.add_trace(go.Scatterternary(
                **ternary_abc(observed[keep]), mode="text", text=[shown[i] for i in keep],
                textposition=[pos[i] for i in keep], cliponaxis=False,
                textfont=dict(size=font_sizes[1], color="#222222", shadow=LABEL_HALO),
                hoverinfo="skip", showlegend=False, **extra,
                meta={**(meta or {}), "role": "candidate_labels", "judge": judge, "candidates": [names[i] for i in keep],
                      "xy": markers[keep].tolist(), "positions": [pos[i] for i in keep], "box": dict(box)},
            ))


def candidate_style(n: int) -> tuple[list[str], list[str]]:
    """Colour and marker symbol for ``n`` candidates: six colour-blind-safe colours (the judge's
    blue left out) times marker shapes, so every (colour, shape) pair is distinct."""
    colors = [CANDIDATE_COLORS[k % len(CANDIDATE_COLORS)] for k in range(n)]
    symbols = [MARKER_SYMBOLS[(k // len(CANDIDATE_COLORS)) % len(MARKER_SYMBOLS)] for k in range(n)]
    return colors, symbols


def _simplex_layout(fig: go.Figure, labels: Sequence[str], title: str, n_legend: int) -> None:
    fig.update_layout(
        ternary=ternary_layout(labels), title=dict(text=title, x=0.0, xanchor="left", y=0.98, yanchor="top"),
        # the legend below the axis titles of the bottom corners, in rows of about three entries
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0.0, x=0.0, font=dict(size=11),
                    tracegroupgap=2),
        # side margins for the bottom corners' bold level names, centred on the corners: "low (1–3)" lost its
        # first letter at 50 px in a half-width column
        margin=dict(l=(side := max(50, 30 + 4 * max((len(str(x)) for x in labels), default=0))), r=side, t=70,
                    b=60 + 20 * int(np.ceil(n_legend / 3))), template=TEMPLATE,
        font=dict(size=12), height=520 + 20 * int(np.ceil(n_legend / 3)),
    )


def ternary_judge_figure(observed_distributions: pd.DataFrame, level_labels: Sequence[str],
                         theta_draws: ArrayLike | None = None, theta_mean: ArrayLike | None = None,
                         candidate_posterior: ArrayLike | None = None, title: str | None = None, *,
                         counts: pd.DataFrame | None = None, true_labels: Sequence[str] | None = None,
                         judge: str | None = None, max_draws: int = 40,
                         draw_indices: Sequence[int] | None = None, max_candidate_draws: int = 40,
                         show_names: bool | None = None, label_box: LabelBox | None = None) -> go.Figure:
    """One judge on the 3-level simplex: candidates, posterior judge triangles and their mean.

    Bottom to top: ``max_draws`` evenly spaced posterior draws of the judge's matrix as thin
    translucent outlines (no fill, so that many draws read as a cloud and hide nothing), whose
    vertices are exactly the draws' rows (vertex ``m`` = the distribution of assigned scores when
    the true level is ``m``); the posterior mean triangle in bold; the candidates' posterior
    positions as small dots in each candidate's colour; the candidates' observed score
    distributions as large markers (hover: name, shares, counts, n); then the labels: the mean
    vertices ("θ: level"; vertices closer than a label's height share one label) and the
    candidates' names where they fit without overlapping (each candidate also has a legend key).
    With 2 true levels (binary truth with an abstain level) each draw is a segment (appendix E).

    Parameters
    ----------
    observed_distributions : DataFrame
        Candidate x 3 observed levels (lowest first), rows summing to 1.
    level_labels : sequence of 3 str
        Observed level labels, lowest first (vertex/axis titles).
    theta_draws : array, shape [S, M_true, 3], optional
        ``M_true`` is 3 (triangles) or 2 (segments).
    theta_mean : array, shape [M_true, 3], optional
    candidate_posterior : array, shape [S, K, 3], optional
    title : str, optional
    counts : DataFrame, optional
        Counts with the same shape as ``observed_distributions`` (hover shows counts and n).
    true_labels : sequence of str, optional
        Labels of the true levels for the vertices (default: the observed labels; for 2 true levels
        the lowest and highest observed labels).
    judge : str, optional
        Judge name (legend and hover).
    max_draws : int
        How many posterior draws to draw (evenly spaced over the draws given).
    draw_indices : sequence of int, optional
        Exactly which draws to draw (overrides ``max_draws``).
    max_candidate_draws : int
        Posterior positions drawn per candidate.
    show_names : bool, optional
        Print candidate names next to the points where they fit (default: yes).
    label_box : mapping, optional
        Label metrics in side units of the triangle (``char_w``, ``line_h``, ``gap``); default
        :data:`~simplex_core.figures.style.TERNARY_LABEL_BOX` (a triangle about 330 px wide).

    Returns
    -------
    go.Figure
        Traces in drawing order (``meta["role"]``): ``theta_draws`` (every drawn draw's outline in
        one trace, separated by NaN points; ``meta["draws"]`` their indices), ``theta_mean``,
        ``candidate_posterior``, ``candidates``, ``candidate_key`` (legend only, one per
        candidate), ``vertex_labels``, ``candidate_labels``
        (text traces; ``meta["xy"]`` the anchors on a side-1 simplex, ``meta["positions"]``).
    """
    labels = check_levels(level_labels, 3)
    data = JudgeSimplex(observed_distributions, counts, theta_draws, theta_mean, candidate_posterior)
    colors, symbols = candidate_style(len(observed_distributions))
    fig = go.Figure()
    _add_judge_ternary_traces(fig, data, labels, true_labels, judge=judge, color=JUDGE_COLOR,
                              point_colors=colors, symbols=symbols, max_draws=max_draws,
                              draw_indices=draw_indices, max_candidate_draws=max_candidate_draws,
                              show_names=show_names, candidate_keys=True,
                              taken=ternary_tick_label_boxes(**(label_box or TERNARY_LABEL_BOX)), box_metrics=label_box)
    default = f"Judge {safe_text(judge)} on the simplex" if judge else "Candidates on the simplex"
    _simplex_layout(fig, labels, title if title is not None else default, len(observed_distributions) + 3)
    return fig


def ternary_judges_overlay_figure(judges: Mapping[str, JudgeSimplex], level_labels: Sequence[str],
                                  title: str | None = None, *, true_labels: Sequence[str] | None = None,
                                  max_draws: int = 20, max_candidate_draws: int = 0,
                                  show_names: bool | None = False) -> go.Figure:
    """Several judges on one simplex, one colour (and candidate-marker symbol) per judge.

    Parameters
    ----------
    judges : mapping of judge name to :class:`JudgeSimplex`
    level_labels : sequence of 3 str
    title : str, optional
    true_labels : sequence of str, optional
    max_draws : int
        Posterior draws drawn per judge.
    max_candidate_draws : int
        Posterior positions per candidate and judge (0 = none, the default, to keep it readable).
    show_names : bool, optional

    Returns
    -------
    go.Figure
        As :func:`ternary_judge_figure`, each trace's ``meta["judge"]`` naming its judge.
    """
    labels = check_levels(level_labels, 3)
    if not judges:
        raise ValueError("no judges to draw: pass at least one judge.")
    fig = go.Figure()
    taken: list = ternary_tick_label_boxes(**TERNARY_LABEL_BOX)  # labels keep off the tick labels
    for (name, data), color, symbol in zip(judges.items(), series_colors(len(judges)), cycle(MARKER_SYMBOLS, len(judges))):
        if max_candidate_draws == 0:
            data = JudgeSimplex(data.observed, data.counts, data.theta_draws, data.theta_mean, None)
        k = len(data.observed)
        _add_judge_ternary_traces(fig, data, labels, true_labels, judge=str(name), color=color, point_colors=[color] * k,
                                  symbols=[symbol] * k, max_draws=max_draws, draw_indices=None,
                                  max_candidate_draws=max_candidate_draws, show_names=show_names, candidate_keys=False,
                                  taken=taken)
    _simplex_layout(fig, labels, title or "Judges overlaid on the simplex", 4 * len(judges))
    return fig


def ternary_judge_figures(judges: Mapping[str, JudgeSimplex], level_labels: Sequence[str], **kwargs) -> dict[str, go.Figure]:
    """One :func:`ternary_judge_figure` per judge, for side-by-side layout by the page.

    Parameters
    ----------
    judges : mapping of judge name to :class:`JudgeSimplex`
    level_labels : sequence of 3 str
    **kwargs
        Passed to :func:`ternary_judge_figure` (``title`` defaults to the judge's name).

    Returns
    -------
    dict of str to go.Figure
        In the judges' order.
    """
    out = {}
    for name, data in judges.items():
        kw = dict(kwargs)
        kw.setdefault("title", f"Judge {name}")
        out[str(name)] = ternary_judge_figure(data.observed, level_labels, data.theta_draws, data.theta_mean,
                                              data.candidate_posterior, counts=data.counts, judge=str(name), **kw)
    return out


def segment_vertex_annotations(x: ArrayLike, texts: Sequence[str], y: float, edge: float = 0.3) -> list[dict]:
    """Plotly annotations naming a segment's two vertices at ``x`` (fractions 0..1) on row ``y``.

    Each label points down to its vertex and extends away from the other vertex, unless it lies
    within ``edge`` of the axis end (where it would leave the plot): then it turns inward and the
    second label moves one line up, so two labels never overlap and none is clipped.
    """
    xs = [float(v) for v in np.asarray(x, dtype=float)]
    left, right = (0, 1) if xs[0] <= xs[1] else (1, 0)
    anchor = {left: "right" if xs[left] >= edge else "left", right: "left" if xs[right] <= 1 - edge else "right"}
    apart = anchor[left] == "right" and anchor[right] == "left"
    out = []
    for i, (v, text) in enumerate(zip(xs, texts)):
        tier = 0 if apart else (0 if i == left else 1)
        out.append(dict(
            x=v, y=y, xref="x", yref="y", text=text, showarrow=True, arrowhead=0, arrowwidth=1,
            arrowcolor=rgba(JUDGE_COLOR, 0.8), ax=0, ay=-(16 + 18 * tier), xanchor=anchor[i],
            yanchor="bottom", font=dict(color=JUDGE_COLOR, size=12), bgcolor="rgba(255, 255, 255, 0.85)",
            name=f"vertex_label_{i}",
        ))
    return out


def segment_judge_figure(observed_distributions: pd.DataFrame, level_labels: Sequence[str],
                         theta_draws: ArrayLike | None = None, theta_mean: ArrayLike | None = None,
                         candidate_posterior: ArrayLike | None = None, title: str | None = None, *,
                         counts: pd.DataFrame | None = None, true_labels: Sequence[str] | None = None,
                         judge: str | None = None, max_draws: int = 40,
                         draw_indices: Sequence[int] | None = None, max_candidate_draws: int = 40) -> go.Figure:
    """One judge on the 1-simplex (2 observed levels): the segment ``P(top level)`` from 0 to 1.

    The x axis is the probability of the top level. Each candidate has its own row (best observed
    at the top) with its observed position as a large marker and its posterior positions as faint
    points; the top row shows the judge: each posterior draw is a thin segment from vertex
    :math:`\\theta_1` (true low) to :math:`\\theta_2` (true top), the posterior mean in bold, and
    dotted vertical lines mark the mean vertices across all rows. A candidate's true prevalence
    of the top level is its relative position between the vertices (theorem 1).

    Parameters
    ----------
    observed_distributions : DataFrame
        Candidate x 2 levels (low, top), rows summing to 1.
    level_labels : sequence of 2 str
    theta_draws : array, shape [S, 2, 2], optional
    theta_mean : array, shape [2, 2], optional
    candidate_posterior : array, shape [S, K, 2], optional
    title : str, optional
    counts : DataFrame, optional
    true_labels : sequence of 2 str, optional
    judge : str, optional
    max_draws, draw_indices, max_candidate_draws
        As in :func:`ternary_judge_figure`.

    Returns
    -------
    go.Figure
        Roles: ``theta_draws`` (one trace; per drawn draw, x = the two vertices' top-level
        probabilities, then a NaN point),
        ``theta_mean``, ``candidate_posterior``, ``candidates``.
    """
    labels = check_levels(level_labels, 2)
    observed = _check_distributions(observed_distributions, 2, "observed distributions")
    draws = _check_draws(theta_draws, 2, "theta_draws", 3)
    mean = _check_draws(theta_mean, 2, "theta_mean", 2)
    post = _check_draws(candidate_posterior, 2, "candidate_posterior", 3)
    t_labels = list(true_labels) if true_labels is not None else list(labels)
    names = safe_texts(observed_distributions.index)
    K = len(names)
    order = np.argsort(observed[:, 1], kind="stable")  # lowest at the bottom row
    row_of = np.empty(K, dtype=float)
    row_of[order] = np.arange(K)
    judge_row = K + 1.0
    fig = go.Figure()
    if draws is not None:
        idx = _select_draws(draws.shape[0], max_draws, draw_indices)
        if idx.size:
            offsets = np.linspace(-0.45, 0.45, len(idx)) if len(idx) > 1 else np.zeros(1)
            xy = _gapped([np.column_stack([draws[s, :, 1], [judge_row + off] * 2]) for s, off in zip(idx, offsets)])
            fig.add_trace(go.Scatter(
                x=xy[:, 0], y=xy[:, 1], mode="lines+markers",
                line=dict(color=rgba(JUDGE_COLOR, 0.35), width=1),
                marker=dict(size=4, color=rgba(JUDGE_COLOR, 0.5), symbol=["circle-open", "circle", "circle"] * len(idx)),
                name="posterior draws (judge)", legendgroup="draws",
                hoverinfo="skip", meta={"role": "theta_draws", "draws": [int(s) for s in idx], "judge": judge},
            ))
    if post is not None:
        if post.shape[1] != K:
            raise ValueError(f"candidate_posterior has {post.shape[1]} candidates but observed has {K}.")
        sel = _select_draws(post.shape[0], max_candidate_draws, None)
        xs = post[sel, :, 1]  # [n, K]
        jitter = np.linspace(-0.2, 0.2, len(sel))[:, None] if len(sel) > 1 else np.zeros((1, 1))
        ys = row_of[None, :] + jitter + 0 * xs
        fig.add_trace(go.Scatter(
            x=xs.ravel(), y=ys.ravel(), mode="markers", text=np.tile(names, len(sel)),
            marker=dict(size=4, color=rgba(POSTERIOR_POINT_COLOR, 0.3)),
            name="posterior positions",
            hovertemplate="<b>%{text}</b> (posterior draw)<br>" + f"P({safe_text(labels[1])})" + " = %{x:.1%}<extra></extra>",
            meta={"role": "candidate_posterior", "judge": judge},
        ))
    if mean is not None:
        fig.add_trace(go.Scatter(
            x=mean[:, 1], y=[judge_row, judge_row], mode="lines+markers",
            text=[f"θ: {safe_text(t_labels[0])}", f"θ: {safe_text(t_labels[1])}"],
            line=dict(color=JUDGE_COLOR, width=4), marker=dict(size=10, color=JUDGE_COLOR, symbol=["circle-open", "circle"],
                                                               line=dict(width=2, color=JUDGE_COLOR)),
            name="posterior mean (judge)",
            hovertemplate="<b>%{text}</b> (posterior mean vertex)<br>" + f"P({safe_text(labels[1])})" + " = %{x:.1%}<extra></extra>",
            meta={"role": "theta_mean", "judge": judge},
        ))
        for x in mean[:, 1]:
            fig.add_vline(x=float(x), line=dict(color=rgba(JUDGE_COLOR, 0.6), dash="dot", width=1))
        for ann in segment_vertex_annotations(mean[:, 1], [f"θ: {safe_text(t)}" for t in t_labels[:2]], judge_row):
            fig.add_annotation(**ann)
    customdata = _candidate_customdata(observed_distributions, counts)
    fig.add_trace(go.Scatter(
        x=observed[:, 1], y=row_of, mode="markers", text=names, customdata=customdata,
        marker=dict(size=11, color=CANDIDATE_COLOR, line=dict(color="white", width=1)),
        name="candidates (observed)", hovertemplate=_candidate_hover(labels, counts is not None, judge),
        meta={"role": "candidates", "judge": judge},
    ))
    tickvals = list(row_of[order]) + ([judge_row] if (draws is not None or mean is not None) else [])
    ticktext = ([short_label(observed_distributions.index[k]) for k in order]
                + (["judge vertices"] if (draws is not None or mean is not None) else []))
    n_legend = 1 + (draws is not None) + (mean is not None) + (post is not None)
    default = f"Judge {safe_text(judge)} on the segment" if judge else "Candidates on the segment"
    fig.update_layout(
        title=dict(text=title if title is not None else default, x=0.0, xanchor="left"),
        xaxis=dict(title=f"P({safe_text(labels[1])}): probability of the top level", range=[-0.02, 1.02], tickformat=".0%"),
        # room above the judge row for the two tiers of vertex labels
        yaxis=dict(tickvals=tickvals, ticktext=ticktext, range=[-0.8, judge_row + 2.4], showgrid=False),
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0.0, x=0.0, font=dict(size=11)),
        margin=dict(t=60, b=70 + 22 * int(np.ceil(n_legend / 2))), font=dict(size=12),
        template=TEMPLATE, height=max(320, 26 * (K + 3) + 200),
    )
    return fig

