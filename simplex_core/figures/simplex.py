"""Judges on the simplex: one judge's triangle (3 levels) or segment (2 levels) with the candidates
inside it, the posterior's judge triangles as a cloud of outlines and the posterior mean in bold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from simplex_core import geometry
from simplex_core.figures.style import (
    CANDIDATE_COLOR, JUDGE_COLOR, MARKER_SYMBOLS, POSTERIOR_POINT_COLOR, check_levels, cycle,
    default_true_labels, distribution_hover, require_columns, rgba, series_colors, ternary_abc, ternary_layout,
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
    t_labels = list(true_labels) if true_labels is not None else default_true_labels(level_labels, n_true)
    prefix = f"{judge}: " if judge else ""
    group = judge or "judge"
    shape_word = "triangle" if n_true == 3 else "segment"

    if draws is not None:
        for i, s in enumerate(_select_draws(draws.shape[0], max_draws, draw_indices)):
            verts = draws[s]
            closed = np.vstack([verts, verts[:1]]) if n_true == 3 else verts
            fig.add_trace(go.Scatterternary(
                **ternary_abc(closed), mode="lines" if n_true == 3 else "lines+markers",
                fill="toself" if n_true == 3 else "none",
                fillcolor=rgba(color, 0.05), line=dict(color=rgba(color, 0.35), width=1),
                marker=dict(size=3, color=rgba(color, 0.5)),
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
            **ternary_abc(pts), mode="markers", text=names, customdata=pts,
            marker=dict(size=3, color=rgba(posterior_color, 0.3)),
            name=f"{prefix}posterior positions of candidates", legendgroup=f"{group}-post",
            hovertemplate="<b>%{text}</b> (posterior draw)<br>" + distribution_hover(level_labels) + "<extra></extra>",
            meta={"role": "candidate_posterior", "judge": judge},
        ))
    if mean is not None:
        closed = np.vstack([mean, mean[:1]]) if n_true == 3 else mean
        labels = [f"θ: {t}" for t in t_labels] + ([""] if n_true == 3 else [])
        custom = closed
        fig.add_trace(go.Scatterternary(
            **ternary_abc(closed), mode="lines+markers+text", text=labels, textposition="top center", cliponaxis=False,
            textfont=dict(color=color, size=12), customdata=custom,
            line=dict(color=color, width=3.5), marker=dict(size=8, color=color, symbol="circle"),
            name=f"{prefix}posterior mean {shape_word}", legendgroup=f"{group}-mean",
            hovertemplate="<b>%{text}</b> (posterior mean vertex)<br>" + distribution_hover(level_labels) + "<extra></extra>",
            meta={"role": "theta_mean", "judge": judge},
        ))
    customdata = _candidate_customdata(data.observed, data.counts)
    names = [str(k) for k in data.observed.index]
    if show_names is None:
        show_names = len(names) <= 10
    fig.add_trace(go.Scatterternary(
        **ternary_abc(observed), mode="markers+text" if show_names else "markers", text=names, cliponaxis=False,
        textposition="bottom center", textfont=dict(size=10), customdata=customdata,
        marker=dict(size=9, color=point_color, symbol=symbol, line=dict(color="white", width=1)),
        name=f"{prefix}candidates (observed scores)", legendgroup=f"{group}-cand",
        hovertemplate=_candidate_hover(level_labels, data.counts is not None, judge),
        meta={"role": "candidates", "judge": judge},
    ))




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
    labels = check_levels(level_labels, 3)
    data = JudgeSimplex(observed_distributions, counts, theta_draws, theta_mean, candidate_posterior)
    fig = go.Figure()
    _add_judge_ternary_traces(fig, data, labels, true_labels, judge=judge, color=JUDGE_COLOR,
                              point_color=CANDIDATE_COLOR, posterior_color=POSTERIOR_POINT_COLOR, symbol="circle", max_draws=max_draws,
                              draw_indices=draw_indices, max_candidate_draws=max_candidate_draws,
                              show_names=show_names)
    fig.update_layout(
        ternary=ternary_layout(labels),
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
    labels = check_levels(level_labels, 3)
    if not judges:
        raise ValueError("no judges to draw: pass at least one judge.")
    fig = go.Figure()
    for (name, data), color, symbol in zip(judges.items(), series_colors(len(judges)), cycle(MARKER_SYMBOLS, len(judges))):
        if max_candidate_draws == 0:
            data = JudgeSimplex(data.observed, data.counts, data.theta_draws, data.theta_mean, None)
        _add_judge_ternary_traces(fig, data, labels, true_labels, judge=str(name), color=color, point_color=color, posterior_color=color,
                                  symbol=symbol, max_draws=max_draws, draw_indices=None,
                                  max_candidate_draws=max_candidate_draws, show_names=show_names)
    fig.update_layout(
        ternary=ternary_layout(labels), title=dict(text=title or "Judges overlaid on the simplex"),
        legend=dict(orientation="h", yanchor="top", y=-0.08, x=0.0),
        margin=dict(l=60, r=60, t=80, b=60), template="plotly_white",
    )
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
    labels = check_levels(level_labels, 2)
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
                line=dict(color=rgba(JUDGE_COLOR, 0.35), width=1),
                marker=dict(size=4, color=rgba(JUDGE_COLOR, 0.5), symbol=["circle-open", "circle"]),
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
            marker=dict(size=4, color=rgba(POSTERIOR_POINT_COLOR, 0.3)),
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
            fig.add_vline(x=float(x), line=dict(color=rgba(JUDGE_COLOR, 0.6), dash="dot", width=1))
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

