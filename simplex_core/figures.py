"""Plotly figure builders for the app and the reports.

Every builder takes precomputed arrays or tidy tables (from :mod:`simplex_core.summaries`,
:mod:`simplex_core.baselines`, :mod:`simplex_core.sensitivity`, :mod:`simplex_core.data` or
:mod:`simplex_core.geometry`) and returns a :class:`plotly.graph_objects.Figure`; none fits,
samples or reads files. Colours come from one colour-blind-safe palette (Okabe & Ito 2008,
:data:`OKABE_ITO`; ordered levels use Viridis). Ternary drawings place the levels as
:mod:`simplex_core.geometry` does: lowest level bottom-left (ternary axis ``b``), middle level
bottom-right (``c``), highest level at the top (``a``).

Traces carry ``meta = {"role": ...}`` (plus e.g. ``"draw"`` or ``"judge"``) so pages and tests can
find them without relying on trace order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray
from plotly.colors import sample_colorscale
from plotly.subplots import make_subplots

from simplex_core import geometry

__all__ = [
    "OKABE_ITO",
    "SERIES_COLORS",
    "series_colors",
    "level_colors",
    "JudgeSimplex",
    "judge_observed_table",
    "ternary_judge_figure",
    "ternary_judges_overlay_figure",
    "ternary_judge_figures",
    "segment_judge_figure",
    "rank_boxplot_figure",
    "pairwise_heatmap_figure",
    "sensitivity_curve_figure",
    "rank_interval_shift_figure",
    "ppc_figure",
    "score_distribution_figure",
    "barycentric_area_figure",
    "segment_order_figure",
    "flip_figure",
    "flip_score_curve_figure",
    "augmented_simplex_figure",
]

# -- palette ---------------------------------------------------------------------------------------

#: The Okabe-Ito colour-blind-safe palette.
OKABE_ITO: Mapping[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}

#: Order in which series (judges, methods, settings) take colours; black and yellow are kept for
#: reference marks and as a last resort (yellow is faint on white).
SERIES_COLORS: tuple[str, ...] = tuple(
    OKABE_ITO[k] for k in ("blue", "vermillion", "bluish_green", "orange", "reddish_purple", "sky_blue")
)

JUDGE_COLOR = OKABE_ITO["blue"]          # the paper draws judge triangles in blue
CANDIDATE_COLOR = OKABE_ITO["vermillion"]
POSTERIOR_POINT_COLOR = OKABE_ITO["orange"]
REFERENCE_COLOR = OKABE_ITO["black"]
GRID_GREY = "#999999"
MARKER_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon")


def series_colors(n: int) -> list[str]:
    """``n`` distinguishable colour-blind-safe colours: Okabe-Ito, or Viridis samples beyond 6.

    Parameters
    ----------
    n : int

    Returns
    -------
    list of str
    """
    if n <= len(SERIES_COLORS):
        return list(SERIES_COLORS[:n])
    return sample_colorscale("Viridis", list(np.linspace(0.0, 0.92, n)))


def level_colors(n: int) -> list[str]:
    """Colours for ``n`` ordered levels, lowest to highest (Viridis, perceptually ordered)."""
    if n == 1:
        return sample_colorscale("Viridis", [0.5])
    return sample_colorscale("Viridis", list(np.linspace(0.0, 0.9, n)))


def _rgba(color: str, alpha: float) -> str:
    """Hex ``#RRGGBB`` or ``rgb(r, g, b)`` with an alpha channel."""
    if color.startswith("#"):
        r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    elif color.startswith("rgb"):
        r, g, b = (int(float(x)) for x in color[color.index("(") + 1:color.index(")")].split(",")[:3])
    else:
        raise ValueError(f"unsupported colour {color!r}: use '#RRGGBB' or 'rgb(r, g, b)'.")
    return f"rgba({r}, {g}, {b}, {alpha})"


def _fmt(x: float) -> str:
    return f"{x:g}"


# -- input checks ----------------------------------------------------------------------------------

def _require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{what} is missing column(s) {', '.join(repr(c) for c in missing)}; "
            f"found {', '.join(repr(str(c)) for c in frame.columns)}."
        )


def _check_distributions(observed: pd.DataFrame, n_levels: int, what: str) -> NDArray[np.float64]:
    if not isinstance(observed, pd.DataFrame):
        raise TypeError(f"{what} must be a DataFrame (one row per candidate, one column per level).")
    if observed.shape[1] != n_levels:
        raise ValueError(f"{what} must have {n_levels} level columns; got {observed.shape[1]}: {list(observed.columns)}.")
    arr = observed.to_numpy(dtype=float)
    bad = [str(k) for k, ok in zip(observed.index, geometry.is_on_simplex(arr, atol=1e-6)) if not ok]
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


def _abc(p: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Ternary a/b/c arrays from distributions over (lowest, middle, highest) level."""
    return {axis: p[..., i] for i, axis in enumerate(geometry.TERNARY_AXIS_OF_LEVEL)}


def _ternary_layout(level_labels: Sequence[str]) -> dict:
    axes = {}
    for i, axis in enumerate(geometry.TERNARY_AXIS_OF_LEVEL):
        axes[f"{axis}axis"] = dict(
            title=dict(text=f"<b>{level_labels[i]}</b>"), min=0, tickformat=".0%", dtick=0.2,
            linecolor="#444", gridcolor="#e5e5e5", ticks="outside",
        )
    return dict(sum=1, bgcolor="white", **axes)


def _default_true_labels(level_labels: Sequence[str], n_true: int) -> list[str]:
    if n_true == len(level_labels):
        return list(level_labels)
    if n_true == 2:
        return [level_labels[0], level_labels[-1]]
    return [f"true level {m + 1}" for m in range(n_true)]


def _distribution_hover(level_labels: Sequence[str], offset: int = 0) -> str:
    return "<br>".join(f"{lab}: %{{customdata[{offset + i}]:.1%}}" for i, lab in enumerate(level_labels))


# -- the judge on the simplex ----------------------------------------------------------------------

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
    theta_draws: NDArray[np.float64] | None = None
    theta_mean: NDArray[np.float64] | None = None
    candidate_posterior: NDArray[np.float64] | None = None


def judge_observed_table(distribution: pd.DataFrame, judge: str,
                         candidates: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Shares and counts for one judge from the long per-judge per-candidate table.

    Parameters
    ----------
    distribution : DataFrame
        :func:`simplex_core.data.score_distribution` output: columns ``judge, candidate, level,
        count`` (``label`` optional, used as column names).
    judge : str
    candidates : sequence of str, optional
        Row order (default: order of appearance). Candidates the judge never scored are dropped.

    Returns
    -------
    (observed, counts) : tuple of DataFrame
        Candidate x level, columns in ascending level order (named by label when present).
    """
    _require_columns(distribution, ["judge", "candidate", "level", "count"], "the score-distribution table")
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
    lines = ["<b>%{text}</b>" + (f" (judge {judge})" if judge else "")]
    for i, lab in enumerate(level_labels):
        if with_counts:
            lines.append(f"{lab}: %{{customdata[{i}]:.1%}} (%{{customdata[{k + i}]:.0f}})")
        else:
            lines.append(f"{lab}: %{{customdata[{i}]:.1%}}")
    if with_counts:
        lines.append(f"n = %{{customdata[{2 * k}]:.0f}}")
    return "<br>".join(lines) + "<extra></extra>"


def _add_judge_ternary_traces(fig: go.Figure, data: JudgeSimplex, level_labels: Sequence[str],
                              true_labels: Sequence[str] | None, *, judge: str | None, color: str,
                              point_color: str, posterior_color: str, symbol: str, max_draws: int,
                              draw_indices: Sequence[int] | None, max_candidate_draws: int,
                              show_names: bool | None) -> None:
    observed = _check_distributions(data.observed, 3, "observed distributions")
    draws = _check_draws(data.theta_draws, 3, "theta_draws", 3)
    mean = _check_draws(data.theta_mean, 3, "theta_mean", 2)
    post = _check_draws(data.candidate_posterior, 3, "candidate_posterior", 3)
    n_true = (draws.shape[1] if draws is not None else mean.shape[0] if mean is not None else 3)
    if draws is not None and mean is not None and mean.shape[0] != draws.shape[1]:
        raise ValueError(f"theta_mean has {mean.shape[0]} true levels but theta_draws has {draws.shape[1]}.")
    if n_true not in (2, 3):
        raise ValueError(f"a ternary judge view needs 2 or 3 true levels; got {n_true}.")
    t_labels = list(true_labels) if true_labels is not None else _default_true_labels(level_labels, n_true)
    prefix = f"{judge}: " if judge else ""
    group = judge or "judge"
    shape_word = "triangle" if n_true == 3 else "segment"

    if draws is not None:
        for i, s in enumerate(_select_draws(draws.shape[0], max_draws, draw_indices)):
            verts = draws[s]
            closed = np.vstack([verts, verts[:1]]) if n_true == 3 else verts
            fig.add_trace(go.Scatterternary(
                **_abc(closed), mode="lines" if n_true == 3 else "lines+markers",
                fill="toself" if n_true == 3 else "none",
                fillcolor=_rgba(color, 0.05), line=dict(color=_rgba(color, 0.35), width=1),
                marker=dict(size=3, color=_rgba(color, 0.5)),
                name=f"{prefix}posterior draws of the judge {shape_word}", legendgroup=f"{group}-draws",
                showlegend=(i == 0), hoverinfo="skip",
                meta={"role": "theta_draw", "draw": int(s), "judge": judge},
            ))
    if post is not None:
        if post.shape[1] != observed.shape[0]:
            raise ValueError(f"candidate_posterior has {post.shape[1]} candidates but observed has {observed.shape[0]}.")
        idx = _select_draws(post.shape[0], max_candidate_draws, None)
        pts = post[idx].reshape(-1, 3)
        names = np.tile(np.asarray(data.observed.index, dtype=str), len(idx))
        fig.add_trace(go.Scatterternary(
            **_abc(pts), mode="markers", text=names, customdata=pts,
            marker=dict(size=3, color=_rgba(posterior_color, 0.3)),
            name=f"{prefix}posterior positions of candidates", legendgroup=f"{group}-post",
            hovertemplate="<b>%{text}</b> (posterior draw)<br>" + _distribution_hover(level_labels) + "<extra></extra>",
            meta={"role": "candidate_posterior", "judge": judge},
        ))
    if mean is not None:
        closed = np.vstack([mean, mean[:1]]) if n_true == 3 else mean
        labels = [f"θ: {t}" for t in t_labels] + ([""] if n_true == 3 else [])
        custom = closed
        fig.add_trace(go.Scatterternary(
            **_abc(closed), mode="lines+markers+text", text=labels, textposition="top center", cliponaxis=False,
            textfont=dict(color=color, size=12), customdata=custom,
            line=dict(color=color, width=3.5), marker=dict(size=8, color=color, symbol="circle"),
            name=f"{prefix}posterior mean {shape_word}", legendgroup=f"{group}-mean",
            hovertemplate="<b>%{text}</b> (posterior mean vertex)<br>" + _distribution_hover(level_labels) + "<extra></extra>",
            meta={"role": "theta_mean", "judge": judge},
        ))
    customdata = _candidate_customdata(data.observed, data.counts)
    names = [str(k) for k in data.observed.index]
    if show_names is None:
        show_names = len(names) <= 10
    fig.add_trace(go.Scatterternary(
        **_abc(observed), mode="markers+text" if show_names else "markers", text=names, cliponaxis=False,
        textposition="bottom center", textfont=dict(size=10), customdata=customdata,
        marker=dict(size=9, color=point_color, symbol=symbol, line=dict(color="white", width=1)),
        name=f"{prefix}candidates (observed scores)", legendgroup=f"{group}-cand",
        hovertemplate=_candidate_hover(level_labels, data.counts is not None, judge),
        meta={"role": "candidates", "judge": judge},
    ))


def _check_levels(level_labels: Sequence[str], n: int) -> list[str]:
    labels = [str(x) for x in level_labels]
    if len(labels) != n:
        raise ValueError(f"level_labels must name the {n} observed levels (lowest first); got {labels}.")
    return labels


def ternary_judge_figure(observed_distributions: pd.DataFrame, level_labels: Sequence[str],
                         theta_draws: ArrayLike | None = None, theta_mean: ArrayLike | None = None,
                         candidate_posterior: ArrayLike | None = None, title: str | None = None, *,
                         counts: pd.DataFrame | None = None, true_labels: Sequence[str] | None = None,
                         judge: str | None = None, max_draws: int = 40,
                         draw_indices: Sequence[int] | None = None, max_candidate_draws: int = 40,
                         show_names: bool | None = None) -> go.Figure:
    """One judge on the 3-level simplex: candidates, posterior judge triangles and their mean.

    Candidate points are the observed score distributions (hover: name, shares, counts, n). Over
    them, ``max_draws`` evenly spaced posterior draws of the judge's matrix are drawn as
    translucent closed triangles whose vertices are exactly the draws' rows (vertex ``m`` = the
    distribution of assigned scores when the true level is ``m``), the posterior mean triangle in
    bold, and the candidates' posterior positions as faint points. With 2 true levels (binary truth
    with an abstain level) each draw is a segment between the judge's two vertices (appendix E).

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
        Print candidate names next to the points (default: when there are at most 10).

    Returns
    -------
    go.Figure
        Traces (``meta["role"]``): ``theta_draw`` (one per drawn draw, ``meta["draw"]`` its index),
        ``candidate_posterior``, ``theta_mean``, ``candidates``.
    """
    labels = _check_levels(level_labels, 3)
    data = JudgeSimplex(observed_distributions, counts, theta_draws, theta_mean, candidate_posterior)
    fig = go.Figure()
    _add_judge_ternary_traces(fig, data, labels, true_labels, judge=judge, color=JUDGE_COLOR,
                              point_color=CANDIDATE_COLOR, posterior_color=POSTERIOR_POINT_COLOR, symbol="circle", max_draws=max_draws,
                              draw_indices=draw_indices, max_candidate_draws=max_candidate_draws,
                              show_names=show_names)
    fig.update_layout(
        ternary=_ternary_layout(labels),
        title=dict(text=title if title is not None else (f"Judge {judge} on the simplex" if judge else "Candidates on the simplex")),
        legend=dict(orientation="h", yanchor="top", y=-0.08, x=0.0),
        margin=dict(l=60, r=60, t=80, b=60), template="plotly_white",
    )
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
    labels = _check_levels(level_labels, 3)
    if not judges:
        raise ValueError("no judges to draw: pass at least one judge.")
    fig = go.Figure()
    for (name, data), color, symbol in zip(judges.items(), series_colors(len(judges)), _cycle(MARKER_SYMBOLS, len(judges))):
        if max_candidate_draws == 0:
            data = JudgeSimplex(data.observed, data.counts, data.theta_draws, data.theta_mean, None)
        _add_judge_ternary_traces(fig, data, labels, true_labels, judge=str(name), color=color, point_color=color, posterior_color=color,
                                  symbol=symbol, max_draws=max_draws, draw_indices=None,
                                  max_candidate_draws=max_candidate_draws, show_names=show_names)
    fig.update_layout(
        ternary=_ternary_layout(labels), title=dict(text=title or "Judges overlaid on the simplex"),
        legend=dict(orientation="h", yanchor="top", y=-0.08, x=0.0),
        margin=dict(l=60, r=60, t=80, b=60), template="plotly_white",
    )
    return fig


def _cycle(items: Sequence[str], n: int) -> list[str]:
    return [items[i % len(items)] for i in range(n)]


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
        Roles: ``theta_draw`` (one per drawn draw: x = the two vertices' top-level probabilities),
        ``theta_mean``, ``candidate_posterior``, ``candidates``.
    """
    labels = _check_levels(level_labels, 2)
    observed = _check_distributions(observed_distributions, 2, "observed distributions")
    draws = _check_draws(theta_draws, 2, "theta_draws", 3)
    mean = _check_draws(theta_mean, 2, "theta_mean", 2)
    post = _check_draws(candidate_posterior, 2, "candidate_posterior", 3)
    t_labels = list(true_labels) if true_labels is not None else list(labels)
    names = [str(k) for k in observed_distributions.index]
    K = len(names)
    order = np.argsort(observed[:, 1], kind="stable")  # lowest at the bottom row
    row_of = np.empty(K, dtype=float)
    row_of[order] = np.arange(K)
    judge_row = K + 1.0
    fig = go.Figure()
    if draws is not None:
        idx = _select_draws(draws.shape[0], max_draws, draw_indices)
        offsets = np.linspace(-0.45, 0.45, len(idx)) if len(idx) > 1 else np.zeros(1)
        for i, (s, off) in enumerate(zip(idx, offsets)):
            x = draws[s, :, 1]
            fig.add_trace(go.Scatter(
                x=x, y=[judge_row + off] * 2, mode="lines+markers",
                line=dict(color=_rgba(JUDGE_COLOR, 0.35), width=1),
                marker=dict(size=4, color=_rgba(JUDGE_COLOR, 0.5), symbol=["circle-open", "circle"]),
                name="posterior draws of the judge segment", legendgroup="draws", showlegend=(i == 0),
                hoverinfo="skip", meta={"role": "theta_draw", "draw": int(s), "judge": judge},
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
            marker=dict(size=4, color=_rgba(POSTERIOR_POINT_COLOR, 0.3)),
            name="posterior positions of candidates",
            hovertemplate="<b>%{text}</b> (posterior draw)<br>" + f"P({labels[1]})" + " = %{x:.1%}<extra></extra>",
            meta={"role": "candidate_posterior", "judge": judge},
        ))
    if mean is not None:
        fig.add_trace(go.Scatter(
            x=mean[:, 1], y=[judge_row, judge_row], mode="lines+markers+text",
            text=[f"θ: {t_labels[0]}", f"θ: {t_labels[1]}"], textposition="top center",
            line=dict(color=JUDGE_COLOR, width=4), marker=dict(size=10, color=JUDGE_COLOR),
            name="posterior mean segment",
            hovertemplate="<b>%{text}</b> (posterior mean vertex)<br>" + f"P({labels[1]})" + " = %{x:.1%}<extra></extra>",
            meta={"role": "theta_mean", "judge": judge},
        ))
        for x in mean[:, 1]:
            fig.add_vline(x=float(x), line=dict(color=_rgba(JUDGE_COLOR, 0.6), dash="dot", width=1))
    customdata = _candidate_customdata(observed_distributions, counts)
    fig.add_trace(go.Scatter(
        x=observed[:, 1], y=row_of, mode="markers", text=names, customdata=customdata,
        marker=dict(size=11, color=CANDIDATE_COLOR, line=dict(color="white", width=1)),
        name="candidates (observed scores)", hovertemplate=_candidate_hover(labels, counts is not None, judge),
        meta={"role": "candidates", "judge": judge},
    ))
    tickvals = list(row_of[order]) + ([judge_row] if (draws is not None or mean is not None) else [])
    ticktext = [names[k] for k in order] + (["judge vertices"] if (draws is not None or mean is not None) else [])
    fig.update_layout(
        title=dict(text=title if title is not None else (f"Judge {judge} on the segment" if judge else "Candidates on the segment")),
        xaxis=dict(title=f"P({labels[1]}): probability of the top level", range=[-0.02, 1.02], tickformat=".0%"),
        yaxis=dict(tickvals=tickvals, ticktext=ticktext, range=[-0.8, judge_row + 0.9], showgrid=False),
        legend=dict(orientation="h", yanchor="top", y=-0.15, x=0.0),
        template="plotly_white", height=max(320, 26 * (K + 2) + 160),
    )
    return fig


# -- rankings ---------------------------------------------------------------------------------------

def rank_boxplot_figure(rank_draws: pd.DataFrame, candidate_order: Sequence[str],
                        true_ranks: pd.Series | None = None, uses_labels: Mapping[str, bool] | None = None, *,
                        method_order: Sequence[str] | None = None, interval: float = 0.95,
                        title: str | None = None) -> go.Figure:
    """Rank distributions per candidate and method, as horizontal grouped box plots (paper fig. 5).

    A method with more than one row for some candidate (posterior draws, bootstrap or
    Bradley-Terry replicates) gets one box trace: the box spans the 25-75% quantiles with the
    median line, the whiskers span the central ``interval`` (default 95%, the rank interval of the
    tables). A method with one row per candidate (simple average, single judge) is drawn as
    markers. Methods that use ground-truth labels (PPI) are hollow and their names end with
    " (uses labels)". True ranks, when given, are black stars.

    Parameters
    ----------
    rank_draws : DataFrame
        Long table with columns ``method, candidate, rank`` (rank 1 = best).
    candidate_order : sequence of str
        Candidates top to bottom (best first: by true rank when known, else posterior median).
    true_ranks : Series, optional
        Candidate -> true rank.
    uses_labels : mapping of method to bool, optional
    method_order : sequence of str, optional
        Legend/colour order of methods (default: order of appearance).
    interval : float
        Whisker coverage.
    title : str, optional

    Returns
    -------
    go.Figure
        ``go.Box`` traces (``meta["role"] == "rank_box"``, one per interval method),
        ``go.Scatter`` traces for point methods (``"rank_point"``) and true ranks (``"true_rank"``).
    """
    _require_columns(rank_draws, ["method", "candidate", "rank"], "rank_draws")
    if not 0 < interval < 1:
        raise ValueError(f"interval must be in (0, 1); got {interval}.")
    order = [str(c) for c in candidate_order]
    frame = rank_draws.assign(candidate=rank_draws["candidate"].astype(str))
    unknown = sorted(set(frame["candidate"]) - set(order))
    if unknown:
        raise ValueError(f"rank_draws has candidates missing from candidate_order: {unknown}.")
    methods = list(method_order) if method_order is not None else list(dict.fromkeys(frame["method"]))
    missing = [m for m in methods if m not in set(frame["method"])]
    if missing:
        raise ValueError(f"method_order names methods with no rows: {missing}.")
    uses_labels = dict(uses_labels or {})
    colors = dict(zip(methods, series_colors(len(methods))))
    lo_q, hi_q = (1 - interval) / 2, 1 - (1 - interval) / 2
    fig = go.Figure()
    n_boxes = 0
    point_symbols = iter(_cycle(("diamond", "square", "triangle-up", "cross", "x", "hexagon"), len(methods)))
    for method in methods:
        sub = frame[frame["method"] == method]
        labelled = bool(uses_labels.get(method, False))
        name = f"{method} (uses labels)" if labelled else str(method)
        color = colors[method]
        per = sub.groupby("candidate", sort=False)["rank"]
        if per.size().max() > 1:
            cands = [c for c in order if c in per.groups]
            stats = {c: np.quantile(per.get_group(c).to_numpy(dtype=float), [lo_q, 0.25, 0.5, 0.75, hi_q]) for c in cands}
            q = np.array([stats[c] for c in cands])
            fig.add_trace(go.Box(
                y=cands, lowerfence=q[:, 0], q1=q[:, 1], median=q[:, 2], q3=q[:, 3], upperfence=q[:, 4],
                orientation="h", name=name, legendgroup=name, offsetgroup=name,
                line=dict(color=color, width=2 if labelled else 1.5),
                fillcolor="rgba(255, 255, 255, 0)" if labelled else _rgba(color, 0.35),
                hovertemplate=(f"<b>%{{y}}</b> · {name}<br>median rank %{{median:.1f}}<br>"
                               "50%: %{q1:.1f}–%{q3:.1f}<br>"
                               f"{interval:.0%}: %{{lowerfence:.1f}}–%{{upperfence:.1f}}<extra></extra>"),
                meta={"role": "rank_box", "method": method, "uses_labels": labelled},
            ))
            n_boxes += 1
        else:
            sub = sub.set_index("candidate").reindex([c for c in order if c in set(sub["candidate"])])
            symbol = next(point_symbols)
            fig.add_trace(go.Scatter(
                x=sub["rank"].to_numpy(dtype=float), y=list(sub.index), mode="markers", name=name,
                marker=dict(color=color, size=10, symbol=f"{symbol}-open" if labelled else symbol,
                            line=dict(color=color, width=2)),
                hovertemplate=f"<b>%{{y}}</b> · {name}<br>rank %{{x}}<extra></extra>",
                meta={"role": "rank_point", "method": method, "uses_labels": labelled},
            ))
    if true_ranks is not None:
        tr = pd.Series(true_ranks)
        tr.index = tr.index.astype(str)
        tr = tr.reindex([c for c in order if c in tr.index]).dropna()
        fig.add_trace(go.Scatter(
            x=tr.to_numpy(dtype=float), y=list(tr.index), mode="markers", name="true rank",
            marker=dict(symbol="star", size=13, color=REFERENCE_COLOR, line=dict(color="white", width=1)),
            hovertemplate="<b>%{y}</b><br>true rank %{x}<extra></extra>", meta={"role": "true_rank"},
        ))
    K = len(order)
    fig.update_layout(
        boxmode="group", boxgroupgap=0.25, boxgap=0.1,
        # the title sits at the top edge in pixels (a fraction of a tall figure's height would put it
        # inside the legend, which grows to two or three rows when every single judge is shown)
        title=dict(text=title or "Rank distributions by method", y=1.0, yref="container", yanchor="top",
                   pad=dict(t=12)),
        xaxis=dict(title="rank (1 = best)", range=[0.4, K + 0.6], dtick=1 if K <= 25 else 5, zeroline=False),
        yaxis=dict(title="", categoryorder="array", categoryarray=order, autorange="reversed"),
        legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0.0, xanchor="left"),
        margin=dict(t=130), template="plotly_white",
        height=max(420, int(K * (18 + 8 * max(n_boxes, 1))) + 200),
    )
    return fig


def pairwise_heatmap_figure(pairwise: pd.DataFrame, title: str | None = None, *,
                            order: Sequence[str] | None = None, show_values: bool | None = None) -> go.Figure:
    """Heatmap of :math:`P(E_{row} > E_{col})`.

    Parameters
    ----------
    pairwise : DataFrame
        Candidate x candidate probabilities (the summaries' pairwise table); the diagonal is blanked.
    title : str, optional
    order : sequence of str, optional
        Row/column order, first at the top (default: the table's order).
    show_values : bool, optional
        Print the probabilities in the cells (default: at most 15 candidates).

    Returns
    -------
    go.Figure
        One ``go.Heatmap`` (``meta["role"] == "pairwise"``).
    """
    if pairwise.shape[0] != pairwise.shape[1]:
        raise ValueError(f"pairwise must be square (candidate x candidate); got shape {pairwise.shape}.")
    table = pairwise.copy()
    table.index, table.columns = table.index.astype(str), table.columns.astype(str)
    if order is not None:
        order = [str(c) for c in order]
        missing = [c for c in order if c not in table.index or c not in table.columns]
        if missing:
            raise ValueError(f"order names candidates that are not in the pairwise table: {missing}.")
        table = table.loc[order, order]
    z = table.to_numpy(dtype=float).copy()
    np.fill_diagonal(z, np.nan)
    if show_values is None:
        show_values = len(table) <= 15
    fig = go.Figure(go.Heatmap(
        z=z, x=list(table.columns), y=list(table.index), zmin=0.0, zmax=1.0, zmid=0.5,
        colorscale="PuOr_r", colorbar=dict(title=dict(text="P(row beats column)"), tickformat=".0%"),
        texttemplate="%{z:.2f}" if show_values else None,
        hovertemplate="P(<b>%{y}</b> beats <b>%{x}</b>) = %{z:.3f}<extra></extra>",
        xgap=1, ygap=1, meta={"role": "pairwise"},
    ))
    fig.update_layout(
        title=dict(text=title or "Pairwise: probability that the row candidate scores higher"),
        xaxis=dict(title="column candidate", tickangle=-45, side="bottom"),
        yaxis=dict(title="row candidate", autorange="reversed"),
        template="plotly_white", height=max(400, 28 * len(table) + 200),
    )
    return fig


# -- sensitivity ------------------------------------------------------------------------------------

def sensitivity_curve_figure(sweep: pd.DataFrame, title: str | None = None, *, base_omega: float = 0.0,
                             base_beta_max: float = 5.0, group: str | None = None) -> go.Figure:
    """The paper's sensitivity figure: Spearman with the base ranking along each sweep (two panels).

    Left: as ω goes over its grid (β_max at the base value); right: as β_max goes over its grid
    (ω at the base value). Each row is one fitted setting.

    Parameters
    ----------
    sweep : DataFrame
        Columns ``omega, beta_max, spearman_vs_base``; optionally ``sweep`` (``"omega"`` or
        ``"beta_max"``: which sweep the row belongs to; without it a row belongs to the ω sweep
        when its β_max is the base value and to the β_max sweep when its ω is the base value, so
        the base setting is in both), ``spearman_lo``/``spearman_hi`` (error bars) and the
        ``group`` column.
    title : str, optional
    base_omega, base_beta_max : float
        The base setting (paper: ω = 0, β_max = 5).
    group : str, optional
        Column naming one curve per value (e.g. dataset).

    Returns
    -------
    go.Figure
        Two subplots; scatter traces with ``meta = {"role": "sensitivity", "sweep": ..., "group": ...}``.
    """
    _require_columns(sweep, ["omega", "beta_max", "spearman_vs_base"], "the sensitivity sweep table")
    if group is not None:
        _require_columns(sweep, [group], "the sensitivity sweep table")
    frame = sweep.copy()
    if "sweep" in frame.columns:
        bad = sorted(set(frame["sweep"].astype(str)) - {"omega", "beta_max"})
        if bad:
            raise ValueError(f"column 'sweep' must hold 'omega' or 'beta_max'; got {bad}.")
        parts = {s: frame[frame["sweep"].astype(str) == s] for s in ("omega", "beta_max")}
    else:
        parts = {"omega": frame[np.isclose(frame["beta_max"].astype(float), base_beta_max)],
                 "beta_max": frame[np.isclose(frame["omega"].astype(float), base_omega)]}
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06, subplot_titles=(
        f"relaxing constancy: ω (β_max = {_fmt(base_beta_max)})",
        f"judge-quality prior: β_max (ω = {_fmt(base_omega)})",
    ))
    groups = list(dict.fromkeys(frame[group])) if group is not None else [None]
    colors = dict(zip(groups, series_colors(len(groups))))
    for col, (which, x_col) in enumerate((("omega", "omega"), ("beta_max", "beta_max")), start=1):
        part = parts[which]
        for g in groups:
            sub = part if g is None else part[part[group] == g]
            sub = sub.sort_values(x_col)
            if sub.empty:
                continue
            err = None
            if {"spearman_lo", "spearman_hi"} <= set(sub.columns):
                y = sub["spearman_vs_base"].to_numpy(dtype=float)
                err = dict(type="data", symmetric=False, array=sub["spearman_hi"].to_numpy(dtype=float) - y,
                           arrayminus=y - sub["spearman_lo"].to_numpy(dtype=float), thickness=1)
            fig.add_trace(go.Scatter(
                x=sub[x_col].to_numpy(dtype=float), y=sub["spearman_vs_base"].to_numpy(dtype=float),
                mode="lines+markers", error_y=err, name=str(g) if g is not None else "Spearman vs base",
                legendgroup=str(g), showlegend=(col == 1),
                line=dict(color=colors[g], width=2), marker=dict(size=8, color=colors[g]),
                hovertemplate=("%{fullData.name}<br>" if g is not None else "") + ("ω" if which == "omega" else "β_max")
                + " = %{x}<br>Spearman with base = %{y:.3f}<extra></extra>",
                meta={"role": "sensitivity", "sweep": which, "group": g},
            ), row=1, col=col)
        base = base_omega if which == "omega" else base_beta_max
        fig.add_vline(x=base, line=dict(color=GRID_GREY, dash="dot", width=1), row=1, col=col)
    ys = frame["spearman_vs_base"].to_numpy(dtype=float)
    ymin = float(np.nanmin(ys)) if ys.size and np.isfinite(ys).any() else 0.0
    fig.update_yaxes(title_text="Spearman with the base ranking", row=1, col=1)
    fig.update_yaxes(range=[max(-1.02, min(ymin - 0.05, 0.9)), 1.02])
    fig.update_xaxes(title_text="ω (random-effects weight)", row=1, col=1)
    fig.update_xaxes(title_text="β_max (judge discrimination)", row=1, col=2)
    fig.update_layout(title=dict(text=title or "How much the ranking moves as the priors change"),
                      template="plotly_white", showlegend=group is not None,
                      legend=dict(orientation="h", yanchor="top", y=-0.2, x=0.0))
    return fig


def rank_interval_shift_figure(tables: Mapping[str, pd.DataFrame] | pd.DataFrame, title: str | None = None, *,
                               candidate_order: Sequence[str] | None = None,
                               setting_order: Sequence[str] | None = None) -> go.Figure:
    """How each candidate's rank interval moves across settings (one colour per setting, dodged).

    Parameters
    ----------
    tables : mapping of setting label to candidate summary, or DataFrame
        Candidate summaries (columns ``candidate, rank_median, rank_lo, rank_hi``), one per setting;
        or one long DataFrame with those columns plus ``setting``.
    title : str, optional
    candidate_order : sequence of str, optional
        Top to bottom (default: by median rank in the first setting).
    setting_order : sequence of str, optional
        Legend/dodge order (default: the mapping's order or order of appearance).

    Returns
    -------
    go.Figure
        One scatter per setting (``meta = {"role": "rank_interval", "setting": ...}``): x = median
        rank with asymmetric error bars to ``rank_lo``/``rank_hi``; y = candidate position + dodge.
    """
    if isinstance(tables, pd.DataFrame):
        _require_columns(tables, ["setting"], "the rank-interval table")
        long = tables.copy()
    else:
        if not tables:
            raise ValueError("no settings to compare: pass at least one candidate summary.")
        long = pd.concat([t.assign(setting=str(s)) for s, t in tables.items()], ignore_index=True)
    _require_columns(long, ["candidate", "rank_median", "rank_lo", "rank_hi"], "the rank-interval table")
    long["setting"] = long["setting"].astype(str)
    long["candidate"] = long["candidate"].astype(str)
    settings = [str(s) for s in setting_order] if setting_order is not None else list(dict.fromkeys(long["setting"]))
    if candidate_order is None:
        first = long[long["setting"] == settings[0]].sort_values("rank_median", kind="stable")
        candidate_order = list(dict.fromkeys(list(first["candidate"]) + list(long["candidate"])))
    order = [str(c) for c in candidate_order]
    pos = {c: i for i, c in enumerate(order)}
    n = len(settings)
    offsets = np.linspace(-0.3, 0.3, n) if n > 1 else np.zeros(1)
    fig = go.Figure()
    for s, off, color in zip(settings, offsets, series_colors(n)):
        sub = long[(long["setting"] == s) & long["candidate"].isin(pos)]
        sub = sub.assign(_pos=sub["candidate"].map(pos)).sort_values("_pos")
        med = sub["rank_median"].to_numpy(dtype=float)
        fig.add_trace(go.Scatter(
            x=med, y=sub["_pos"].to_numpy(dtype=float) + off, mode="markers", name=s,
            error_x=dict(type="data", symmetric=False, array=sub["rank_hi"].to_numpy(dtype=float) - med,
                         arrayminus=med - sub["rank_lo"].to_numpy(dtype=float), thickness=2, width=0, color=color),
            marker=dict(color=color, size=8), text=list(sub["candidate"]),
            customdata=np.column_stack([sub["rank_lo"].to_numpy(dtype=float), sub["rank_hi"].to_numpy(dtype=float)]),
            hovertemplate=f"<b>%{{text}}</b> · {s}<br>median rank %{{x:.1f}}<br>interval %{{customdata[0]:.0f}}–%{{customdata[1]:.0f}}<extra></extra>",
            meta={"role": "rank_interval", "setting": s},
        ))
    K = len(order)
    x_hi = max(float(K), float(np.nanmax(long[["rank_median", "rank_hi"]].to_numpy(dtype=float))))
    fig.update_layout(
        title=dict(text=title or "Rank intervals across settings"),
        xaxis=dict(title="rank (1 = best)", range=[0.4, x_hi + 0.6], dtick=1 if K <= 25 else 5),
        yaxis=dict(tickvals=list(range(K)), ticktext=order, autorange="reversed", showgrid=False, zeroline=False),
        legend=dict(title=dict(text="setting"), orientation="h", yanchor="bottom", y=1.01, x=0.0),
        template="plotly_white", height=max(380, 30 * K + 160),
    )
    return fig


# -- posterior predictive check and data ------------------------------------------------------------

def ppc_figure(ppc: pd.DataFrame, title: str | None = None, *, judge: str | None = None,
               candidate: str | None = None, level_labels: Sequence[str] | None = None) -> go.Figure:
    """Observed vs fitted score distributions (posterior predictive check).

    With ``judge`` and ``candidate`` (or a table holding a single pair): grouped bars per level,
    observed share beside the fitted mean with its interval. Otherwise one point per
    (judge, candidate, level): observed share on x, fitted share on y with its interval, on the
    identity line when the model fits; cells flagged in an optional ``misfit`` column are crosses.

    Parameters
    ----------
    ppc : DataFrame
        Columns ``judge, candidate, level, observed, fitted_mean``; optional ``fitted_lo``,
        ``fitted_hi``, ``label`` (level label) and ``misfit`` (bool).
    title : str, optional
    judge, candidate : str, optional
    level_labels : sequence of str, optional
        Labels in level order (default: the ``label`` column, else the level values).

    Returns
    -------
    go.Figure
        Roles: ``ppc_observed`` and ``ppc_fitted`` (bars view) or ``ppc_scatter`` per level.
    """
    _require_columns(ppc, ["judge", "candidate", "level", "observed", "fitted_mean"], "the posterior predictive table")
    frame = ppc.copy()
    if judge is not None:
        frame = frame[frame["judge"].astype(str) == str(judge)]
    if candidate is not None:
        frame = frame[frame["candidate"].astype(str) == str(candidate)]
    if frame.empty:
        raise ValueError(f"no rows for judge {judge!r} and candidate {candidate!r} in the posterior predictive table.")
    levels = sorted(frame["level"].unique())
    if level_labels is not None:
        if len(level_labels) != len(levels):
            raise ValueError(f"level_labels has {len(level_labels)} labels for {len(levels)} levels {levels}.")
        label_of = dict(zip(levels, [str(x) for x in level_labels]))
    elif "label" in frame.columns:
        label_of = dict(frame.drop_duplicates("level")[["level", "label"]].itertuples(index=False, name=None))
    else:
        label_of = {v: _fmt(float(v)) if isinstance(v, (int, float, np.number)) else str(v) for v in levels}
    has_int = {"fitted_lo", "fitted_hi"} <= set(frame.columns)
    unit = "share" if float(frame[["observed", "fitted_mean"]].to_numpy(dtype=float).max()) <= 1.0 + 1e-9 else "count"
    pairs = frame[["judge", "candidate"]].drop_duplicates()
    fig = go.Figure()
    if len(pairs) == 1:
        j, k = pairs.iloc[0]
        frame = frame.set_index("level").loc[levels]
        x = [label_of[v] for v in levels]
        fitted = frame["fitted_mean"].to_numpy(dtype=float)
        fig.add_trace(go.Bar(x=x, y=frame["observed"].to_numpy(dtype=float), name="observed",
                             marker=dict(color=_rgba(GRID_GREY, 0.8)), meta={"role": "ppc_observed"},
                             hovertemplate="%{x}: observed %{y:.3f}<extra></extra>"))
        err = None
        if has_int:
            err = dict(type="data", symmetric=False, array=frame["fitted_hi"].to_numpy(dtype=float) - fitted,
                       arrayminus=fitted - frame["fitted_lo"].to_numpy(dtype=float), color=JUDGE_COLOR, thickness=2)
        fig.add_trace(go.Scatter(x=x, y=fitted, mode="markers", name="fitted (posterior predictive)",
                                 error_y=err, marker=dict(color=JUDGE_COLOR, size=11, symbol="diamond"),
                                 meta={"role": "ppc_fitted"},
                                 hovertemplate="%{x}: fitted %{y:.3f}<extra></extra>"))
        fig.update_layout(title=dict(text=title or f"Posterior predictive check: judge {j}, candidate {k}"),
                          xaxis=dict(title="score level"), yaxis=dict(title=unit, rangemode="tozero"))
    else:
        top = float(frame[["observed", "fitted_mean"] + (["fitted_hi"] if has_int else [])].to_numpy(dtype=float).max())
        top = 1.0 if unit == "share" else top * 1.05
        fig.add_trace(go.Scatter(x=[0, top], y=[0, top], mode="lines", name="perfect fit",
                                 line=dict(color=GRID_GREY, dash="dash"), hoverinfo="skip", meta={"role": "identity"}))
        for v, color in zip(levels, level_colors(len(levels))):
            sub = frame[frame["level"] == v]
            fitted = sub["fitted_mean"].to_numpy(dtype=float)
            err = None
            if has_int:
                err = dict(type="data", symmetric=False, array=sub["fitted_hi"].to_numpy(dtype=float) - fitted,
                           arrayminus=fitted - sub["fitted_lo"].to_numpy(dtype=float), thickness=1, width=0)
            symbols = (np.where(sub["misfit"].astype(bool), "x", "circle").tolist() if "misfit" in sub.columns else "circle")
            fig.add_trace(go.Scatter(
                x=sub["observed"].to_numpy(dtype=float), y=fitted, mode="markers", error_y=err,
                name=f"level {label_of[v]}", marker=dict(color=color, size=8, symbol=symbols),
                customdata=np.column_stack([sub["judge"].astype(str), sub["candidate"].astype(str)]),
                hovertemplate=("judge %{customdata[0]} · <b>%{customdata[1]}</b><br>"
                               f"level {label_of[v]}: observed %{{x:.3f}}, fitted %{{y:.3f}}<extra></extra>"),
                meta={"role": "ppc_scatter", "level": v},
            ))
        fig.update_layout(title=dict(text=title or "Posterior predictive check: observed vs fitted"),
                          xaxis=dict(title=f"observed {unit}", range=[0, top], constrain="domain"),
                          yaxis=dict(title=f"fitted {unit} (posterior predictive)", range=[0, top],
                                     scaleanchor="x", scaleratio=1, constrain="domain"))
    fig.update_layout(template="plotly_white", legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0.0))
    return fig


def score_distribution_figure(distribution: pd.DataFrame, title: str | None = None, *,
                              judges: Sequence[str] | None = None, candidates: Sequence[str] | None = None,
                              max_cols: int = 3) -> go.Figure:
    """Per-judge per-candidate score distributions: stacked bars per candidate, one panel per judge.

    Parameters
    ----------
    distribution : DataFrame
        :func:`simplex_core.data.score_distribution` output: ``judge, candidate, level, count``;
        optional ``label`` (legend), ``n``, ``share`` (computed from counts when absent) and
        ``self_family`` (those bars are hatched: excluded from the fit by default).
    title : str, optional
    judges, candidates : sequence of str, optional
        Panel order and bar order (top first); default order of appearance.
    max_cols : int
        Panels per row.

    Returns
    -------
    go.Figure
        One ``go.Bar`` per (judge, level) (``meta = {"role": "score_share", "judge", "level"}``),
        ``barmode="stack"``.
    """
    _require_columns(distribution, ["judge", "candidate", "level", "count"], "the score-distribution table")
    frame = distribution.copy()
    frame["judge"] = frame["judge"].astype(str)
    frame["candidate"] = frame["candidate"].astype(str)
    if "n" not in frame.columns:
        frame["n"] = frame.groupby(["judge", "candidate"])["count"].transform("sum")
    if "share" not in frame.columns:
        frame["share"] = frame["count"] / frame["n"].where(frame["n"] > 0)
    judge_list = [str(j) for j in judges] if judges is not None else list(dict.fromkeys(frame["judge"]))
    cand_list = [str(c) for c in candidates] if candidates is not None else list(dict.fromkeys(frame["candidate"]))
    levels = sorted(frame["level"].unique())
    labels = (dict(frame.drop_duplicates("level")[["level", "label"]].itertuples(index=False, name=None))
              if "label" in frame.columns else {v: _fmt(float(v)) for v in levels})
    n_cols = max(1, min(max_cols, len(judge_list)))
    n_rows = int(np.ceil(len(judge_list) / n_cols))
    fig = make_subplots(rows=n_rows, cols=n_cols, shared_yaxes=True, subplot_titles=[f"judge {j}" for j in judge_list],
                        horizontal_spacing=0.04, vertical_spacing=min(0.25, 0.5 / n_rows) if n_rows > 1 else 0.0)
    colors = dict(zip(levels, level_colors(len(levels))))
    for p, j in enumerate(judge_list):
        r, c = divmod(p, n_cols)
        sub = frame[frame["judge"] == j]
        for v in levels:
            cell = sub[sub["level"] == v].set_index("candidate").reindex(cand_list)
            hatch = (["/" if bool(x) else "" for x in cell["self_family"].fillna(False)]
                     if "self_family" in cell.columns else None)
            fig.add_trace(go.Bar(
                y=cand_list, x=cell["share"].to_numpy(dtype=float), orientation="h", name=str(labels[v]),
                legendgroup=str(v), showlegend=False,
                marker=dict(color=colors[v], pattern=dict(shape=hatch) if hatch is not None else None,
                            line=dict(color="white", width=0.5)),
                customdata=np.column_stack([cell["count"].fillna(0).to_numpy(dtype=float),
                                            cell["n"].fillna(0).to_numpy(dtype=float)]),
                hovertemplate=(f"judge {j} · <b>%{{y}}</b><br>{labels[v]}: %{{x:.1%}} "
                               "(%{customdata[0]:.0f} of %{customdata[1]:.0f})<extra></extra>"),
                meta={"role": "score_share", "judge": j, "level": v},
            ), row=r + 1, col=c + 1)
    # legend-only entries: a plain swatch per level (bars of self-family pairs are hatched)
    for v in levels:
        fig.add_trace(go.Bar(x=[None], y=[None], orientation="h", name=str(labels[v]), legendgroup=str(v),
                             marker=dict(color=colors[v]), hoverinfo="skip", meta={"role": "legend"}), row=1, col=1)
    if "self_family" in frame.columns and frame["self_family"].astype(bool).any():
        fig.add_trace(go.Bar(x=[None], y=[None], orientation="h", name="self-family pair (excluded from the fit)",
                             marker=dict(color="white", pattern=dict(shape="/", fgcolor="#555"), line=dict(color="#555", width=1)),
                             hoverinfo="skip", meta={"role": "legend"}), row=1, col=1)
    fig.update_xaxes(range=[0, 1], tickformat=".0%")
    for p in range(len(judge_list)):
        if p + n_cols >= len(judge_list):  # no panel below: this one carries the axis title
            r, c = divmod(p, n_cols)
            fig.update_xaxes(title_text="share of scores", row=r + 1, col=c + 1)
    fig.update_yaxes(categoryorder="array", categoryarray=cand_list, autorange="reversed")
    if title is None:
        title = "Score distributions per judge" + (" (hatched: self-family pairs)" if "self_family" in frame.columns else "")
    fig.update_layout(
        barmode="stack", title=dict(text=title),
        legend=dict(title=dict(text="score"), orientation="h", yanchor="bottom", y=1.04, x=0.0, traceorder="normal"),
        template="plotly_white", height=max(360, n_rows * (22 * len(cand_list) + 80) + 120),
    )
    return fig


# -- the Geometry lab -------------------------------------------------------------------------------

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
    labels = _check_levels(level_labels, 3)
    t_labels = list(true_labels) if true_labels is not None else labels
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
            **_abc(poly), mode="lines", fill="toself", fillcolor=_rgba(VERTEX_COLORS[m], 0.35),
            line=dict(color=_rgba(VERTEX_COLORS[m], 0.9), width=1),
            name=f"π({t_labels[m]}) = area opposite θ({t_labels[m]}) / total = {pi[m]:.3f}",
            hovertemplate=f"sub-triangle opposite θ({t_labels[m]})<br>area share π = {pi[m]:.3f}<extra></extra>",
            meta={"role": "subtriangle", "level": m, "pi": float(pi[m])},
        ))
    closed = np.vstack([V, V[:1]])
    fig.add_trace(go.Scatterternary(**_abc(closed), mode="lines", line=dict(color=REFERENCE_COLOR, width=2),
                                    name="judge triangle", hoverinfo="skip", meta={"role": "judge_triangle"}))
    fig.add_trace(go.Scatterternary(
        **_abc(V), mode="markers+text", text=[f"θ({t})" for t in t_labels], textposition="top center", cliponaxis=False,
        marker=dict(size=11, color=list(VERTEX_COLORS), line=dict(color="white", width=1)), customdata=V,
        name="judge vertices", hovertemplate="<b>%{text}</b><br>" + _distribution_hover(labels) + "<extra></extra>",
        meta={"role": "vertices"},
    ))
    fig.add_trace(go.Scatterternary(
        **_abc(g[None, :]), mode="markers+text", text=["γ"], textposition="bottom center",
        marker=dict(size=12, color=REFERENCE_COLOR, symbol="x"), customdata=g[None, :],
        name="candidate γ", hovertemplate="<b>candidate γ</b><br>" + _distribution_hover(labels)
        + "<br>π = (" + ", ".join(f"{x:.3f}" for x in pi) + ")<extra></extra>",
        meta={"role": "point", "pi": pi.tolist()},
    ))
    default = "π = (" + ", ".join(f"{x:.2f}" for x in pi) + "): each π is an area share"
    if not inside:
        default += "<br><sup>γ is outside the triangle: a sub-triangle's area counts as negative</sup>"
    fig.update_layout(ternary=_ternary_layout(labels), title=dict(text=title or default),
                      legend=dict(orientation="h", yanchor="top", y=-0.08, x=0.0),
                      template="plotly_white", margin=dict(l=60, r=60, t=90, b=60))
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
    labels = list(level_labels) if level_labels is not None else ["low", "top"]
    g = np.atleast_1d(np.asarray(gammas, dtype=float))
    names = [str(n) for n in names]
    if len(names) != g.size:
        raise ValueError(f"{len(names)} names for {g.size} candidates.")
    pi = np.atleast_1d(geometry.segment_prevalence(g, theta1, theta2))
    ranks = geometry.segment_ranks(g, theta1, theta2)
    flipped = geometry.is_label_flipping(theta1, theta2)
    colors = series_colors(len(names))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 1], mode="lines", line=dict(color="#dddddd", width=8),
                             hoverinfo="skip", showlegend=False, meta={"role": "simplex"}))
    fig.add_trace(go.Scatter(x=[theta1, theta2], y=[1, 1], mode="lines", line=dict(color=JUDGE_COLOR, width=4),
                             name="judge segment", hoverinfo="skip", meta={"role": "segment"}))
    fig.add_trace(go.Scatter(
        x=[theta1, theta2], y=[1, 1], mode="markers+text", text=[f"θ₁ (true {labels[0]})", f"θ₂ (true {labels[1]})"],
        textposition="top center", marker=dict(size=13, color=JUDGE_COLOR, symbol=["circle-open", "circle"],
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
    fig.add_trace(go.Scatter(
        x=pi, y=np.zeros_like(pi), mode="markers+text", text=[f"{n} (#{r})" for n, r in zip(names, ranks)],
        textposition="bottom center", marker=dict(size=12, color=colors, symbol="diamond", line=dict(color="white", width=1)),
        name="candidates: true prevalence π", customdata=ranks,
        hovertemplate="%{text}<br>π = %{x:.3f}<extra></extra>",
        meta={"role": "candidates_true", "ranks": ranks.tolist()},
    ))
    default = ("Label-flipping judge (θ₂ < θ₁): the ranking is the reverse of the order along the segment"
               if flipped else "θ₂ > θ₁: the ranking is the order along the segment, wherever the vertices sit")
    lo = float(min(0.0, np.min(pi), theta1, theta2)) - 0.05
    hi = float(max(1.0, np.max(pi), theta1, theta2)) + 0.05
    fig.update_layout(
        title=dict(text=title or default),
        xaxis=dict(title=f"probability (top level: {labels[1]})", range=[lo, hi], zeroline=False),
        yaxis=dict(tickvals=[0, 1], ticktext=[f"true prevalence π of {labels[1]}", f"judge-assigned P({labels[1]})"],
                   range=[-0.6, 1.6], showgrid=False, zeroline=False),
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0.0), template="plotly_white", height=380,
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
        The moved judge (rows = vertices), e.g. :attr:`geometry.FlipConfiguration.Theta_h`.
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
    labels = _check_levels(level_labels, 3)
    t_labels = list(true_labels) if true_labels is not None else labels
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
        fig.add_trace(go.Scatterternary(**_abc(np.vstack([B, B[:1]])), mode="lines",
                                        line=dict(color=GRID_GREY, width=2, dash="dash"), name="judge at h = 0",
                                        hoverinfo="skip", meta={"role": "theta_base"}))
    fig.add_trace(go.Scatterternary(
        **_abc(np.vstack([T, T[:1]])), mode="lines+markers+text", fill="toself", fillcolor=_rgba(JUDGE_COLOR, 0.12),
        line=dict(color=JUDGE_COLOR, width=3), marker=dict(size=8, color=JUDGE_COLOR),
        text=[f"θ({t})" for t in t_labels] + [""], textposition="top center", textfont=dict(color=JUDGE_COLOR),
        cliponaxis=False,
        customdata=np.vstack([T, T[:1]]), name="judge Θ + hΔ",
        hovertemplate="<b>%{text}</b><br>" + _distribution_hover(labels) + "<extra></extra>", meta={"role": "theta_h"},
    ))
    cand_colors = [OKABE_ITO["vermillion"], OKABE_ITO["bluish_green"]]
    fig.add_trace(go.Scatterternary(
        **_abc(G), mode="markers+text", text=[str(n) for n in names], textposition="bottom center", cliponaxis=False,
        marker=dict(size=12, color=cand_colors, symbol=["circle", "diamond"], line=dict(color="white", width=1)),
        customdata=np.column_stack([G, pi, E]), name="candidates",
        hovertemplate=("<b>%{text}</b><br>" + _distribution_hover(labels) + "<br>π = (%{customdata[3]:.3f}, "
                       "%{customdata[4]:.3f}, %{customdata[5]:.3f})<br>expected score %{customdata[6]:.3f}<extra></extra>"),
        meta={"role": "candidates", "pi": pi.tolist(), "expected_scores": E.tolist()},
    ))
    if title is None:
        head = f"h = {h:+.3f}: " if h is not None else ""
        gap = E[0] - E[1]
        verdict = (f"{names[0]} ranks higher" if gap > 1e-12 else f"{names[1]} ranks higher" if gap < -1e-12 else "a tie")
        title = f"{head}E[{names[0]}] = {E[0]:.3f}, E[{names[1]}] = {E[1]:.3f} → {verdict}"
        if not (inside and valid):
            title += "<br><sup>" + ("a candidate is outside the triangle; " if not inside else "") + \
                     ("a vertex left the simplex; " if not valid else "") + "this judge cannot explain the data</sup>"
    fig.update_layout(ternary=_ternary_layout(labels), title=dict(text=title),
                      legend=dict(orientation="h", yanchor="top", y=-0.08, x=0.0),
                      template="plotly_white", margin=dict(l=60, r=60, t=90, b=60))
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
                      xaxis=dict(title="h"), yaxis=dict(title="expected score"), template="plotly_white",
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
    labels = _check_levels(level_labels, 3)
    T = np.asarray(Theta, dtype=float)
    v = np.asarray(values, dtype=float)
    P = np.atleast_2d(np.asarray(pis, dtype=float))
    names = [str(n) for n in names]
    if T.ndim != 2 or T.shape[1] != 3 or T.shape[0] not in (2, 3):
        raise ValueError(f"Theta must have shape (3, 3) or (2, 3); got {T.shape}.")
    if P.shape != (len(names), T.shape[0]):
        raise ValueError(f"pis must have shape ({len(names)}, {T.shape[0]}) (one row per name); got {P.shape}.")
    t_labels = list(true_labels) if true_labels is not None else _default_true_labels(labels, T.shape[0])
    lifted = geometry.augmented_vertices(T, v)
    cand = geometry.lift_points(P, T, v)
    step = (v.max() - v.min()) / max(len(v) - 1, 1)
    z_base = float(v.min() - step)
    fig = go.Figure()
    ref = np.vstack([geometry.TERNARY_VERTICES, geometry.TERNARY_VERTICES[:1]])
    fig.add_trace(go.Scatter3d(x=ref[:, 0], y=ref[:, 1], z=[z_base] * 4, mode="lines+text",
                               text=[f"{lab}" for lab in labels] + [""], textposition="bottom center",
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
    fig.add_trace(go.Scatter3d(x=xs, y=ys, z=zs, mode="lines", line=dict(color=_rgba(JUDGE_COLOR, 0.6), width=2, dash="dot"),
                               hoverinfo="skip", showlegend=False, meta={"role": "vertex_lifts"}))
    fig.add_trace(go.Scatter3d(
        x=lifted[:, 0], y=lifted[:, 1], z=lifted[:, 2], mode="markers+text",
        text=[f"θ({t}) at {_fmt(z)}" for t, z in zip(t_labels, v)], textposition="top center",
        marker=dict(size=5, color=JUDGE_COLOR), name="lifted vertices",
        hovertemplate="%{text}<extra></extra>", meta={"role": "lifted_vertices"},
    ))
    xs, ys, zs = [], [], []
    for x, y, z in cand:
        xs += [x, x, None]
        ys += [y, y, None]
        zs += [z_base, z, None]
    fig.add_trace(go.Scatter3d(x=xs, y=ys, z=zs, mode="lines", line=dict(color=_rgba(CANDIDATE_COLOR, 0.6), width=2),
                               hoverinfo="skip", showlegend=False, meta={"role": "candidate_drops"}))
    colors = series_colors(len(names) + 1)[1:]  # blue is the judge's
    fig.add_trace(go.Scatter3d(x=cand[:, 0], y=cand[:, 1], z=[z_base] * len(names), mode="markers", text=names,
                               marker=dict(size=4, color=colors, symbol="circle-open"), name="candidates on the simplex (γ)",
                               hovertemplate="<b>%{text}</b> (observed position)<extra></extra>",
                               meta={"role": "candidates_base"}))
    fig.add_trace(go.Scatter3d(
        x=cand[:, 0], y=cand[:, 1], z=cand[:, 2], mode="markers+text", text=names, textposition="middle right",
        marker=dict(size=6, color=colors), customdata=np.column_stack([cand[:, 2], P]),
        name="candidates at their expected score",
        hovertemplate="<b>%{text}</b><br>expected score = height = %{customdata[0]:.3f}<br>π = ("
        + ", ".join(f"%{{customdata[{i + 1}]:.3f}}" for i in range(P.shape[1])) + ")<extra></extra>",
        meta={"role": "candidates_lifted"},
    ))
    axis = dict(showticklabels=False, title=dict(text=""), showgrid=False, zeroline=False, showbackground=False)
    fig.update_layout(
        title=dict(text=title or "Augmented simplex: a candidate's height is its expected score"),
        scene=dict(xaxis=axis, yaxis=axis, zaxis=dict(title=dict(text="score"), range=[z_base, float(v.max()) + 0.1 * step]),
                   aspectmode="manual", aspectratio=dict(x=1, y=0.87, z=0.9),
                   camera=dict(eye=dict(x=0.3, y=-2.0, z=1.0), center=dict(x=0, y=0, z=-0.1))),
        legend=dict(orientation="h", yanchor="top", y=0.0, x=0.0), template="plotly_white",
        margin=dict(l=0, r=0, t=60, b=0), height=560,
    )
    return fig
