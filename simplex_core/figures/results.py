"""Result charts: rank distributions by method, pairwise probabilities, sensitivity curves, rank
intervals across settings, the posterior predictive check and the per-judge score distributions."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from simplex_core.model.ranks import rank_interval

from simplex_core.figures.style import (
    GRID_GREY, JUDGE_COLOR, NARROW_FIGURE_PX, REFERENCE_COLOR, TEMPLATE, cycle, fmt_number, level_colors, require_columns,
    rgba, safe_text, safe_texts, series_colors, short_label, shorten,
)


def rank_boxplot_figure(rank_draws: pd.DataFrame, candidate_order: Sequence[str],
                        true_ranks: pd.Series | None = None, uses_labels: Mapping[str, bool] | None = None, *,
                        method_order: Sequence[str] | None = None, interval: float = 0.95,
                        title: str | None = None) -> go.Figure:
    """Rank distributions per candidate and method, as horizontal grouped box plots (paper fig. 5).

    A method with more than one row for some candidate (posterior draws, bootstrap or
    Bradley-Terry replicates) gets one box trace: the box spans the 25-75% quantiles with the
    median line, the whiskers span the central ``interval`` (default 95%): the rank interval of the
    tables, by its rule (:func:`simplex_core.methods.baselines.rank_interval`). A method with one row per
    candidate (simple average, single judge) is drawn as markers. Methods that use ground-truth
    labels (PPI) are hollow and their names end with " (uses labels)". True ranks, when given, are
    black stars.

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
    require_columns(rank_draws, ["method", "candidate", "rank"], "rank_draws")
    if not 0 < interval < 1:
        raise ValueError(f"interval must be in (0, 1); got {interval}.")
    order = [str(c) for c in candidate_order]
    frame = rank_draws.assign(candidate=rank_draws["candidate"].astype(str))
    unknown = sorted(set(frame["candidate"].unique()) - set(order))
    shown = {c: safe_text(c) for c in order}  # names are data, never markup
    if unknown:
        raise ValueError(f"rank_draws has candidates missing from candidate_order: {unknown}.")
    present = list(frame["method"].unique())  # order of appearance
    methods = list(method_order) if method_order is not None else present
    missing = [m for m in methods if m not in set(present)]
    if missing:
        raise ValueError(f"method_order names methods with no rows: {missing}.")
    uses_labels = dict(uses_labels or {})
    colors = dict(zip(methods, series_colors(len(methods))))
    fig = go.Figure()
    n_boxes = 0
    point_symbols = iter(cycle(("diamond", "square", "triangle-up", "cross", "x", "hexagon"), len(methods)))
    for method in methods:
        sub = frame[frame["method"] == method]
        labelled = bool(uses_labels.get(method, False))
        name = safe_text(f"{method} (uses labels)" if labelled else method)
        color = colors[method]
        per = sub.groupby("candidate", sort=False)["rank"]
        if per.size().max() > 1:
            cands = [c for c in order if c in per.groups]
            # the box: interpolated quartiles; the whiskers: the tables' rank interval by the tables' own rule
            # (ranks that occurred, rounded outward): an interpolated quantile drew 1–2 beside a stated 1–3
            rows = []
            for c in cands:
                r = per.get_group(c).to_numpy(dtype=float)
                (lo,), (hi,) = rank_interval(r[:, None], interval)
                rows.append([lo, *np.quantile(r, [0.25, 0.5, 0.75]), hi])
            q = np.array(rows)
            fig.add_trace(go.Box(
                y=[shown[c] for c in cands], lowerfence=q[:, 0], q1=q[:, 1], median=q[:, 2], q3=q[:, 3], upperfence=q[:, 4],
                orientation="h", name=name, legendgroup=name, offsetgroup=name,
                line=dict(color=color, width=2 if labelled else 1.5),
                fillcolor="rgba(255, 255, 255, 0)" if labelled else rgba(color, 0.35),
                hovertemplate=(f"<b>%{{y}}</b> · {name}<br>median rank %{{median:.1f}}<br>"
                               "50%: %{q1:.1f}–%{q3:.1f}<br>"
                               f"{interval:.0%}: %{{lowerfence:.1f}}–%{{upperfence:.1f}}<extra></extra>"),
                meta={"role": "rank_box", "method": method, "uses_labels": labelled},
            ))
            n_boxes += 1
        else:
            have = set(sub["candidate"].unique())
            sub = sub.set_index("candidate").reindex([c for c in order if c in have])
            symbol = next(point_symbols)
            fig.add_trace(go.Scatter(
                x=sub["rank"].to_numpy(dtype=float), y=[shown[c] for c in sub.index], mode="markers", name=name,
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
            x=tr.to_numpy(dtype=float), y=[shown[c] for c in tr.index], mode="markers", name="true rank",
            marker=dict(symbol="star", size=13, color=REFERENCE_COLOR, line=dict(color="white", width=1)),
            hovertemplate="<b>%{y}</b><br>true rank %{x}<extra></extra>", meta={"role": "true_rank"},
        ))
    K = len(order)
    # every other candidate's row shaded: with several methods a row's top box sits nearer the row
    # above's label than its own, and a reader gave intervals to the wrong candidate
    for i in range(1, K, 2):
        fig.add_shape(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=i - 0.5, y1=i + 0.5, layer="below",
                      line=dict(width=0), fillcolor="rgba(120, 120, 140, 0.08)")
    fig.update_layout(
        boxmode="group", boxgroupgap=0.3, boxgap=0.05,
        title=dict(text=title or "Rank distributions by method", x=0.0, xanchor="left", y=1.0, yref="container",
                   yanchor="top", pad=dict(t=10, l=12)),  # l: off the image's left edge in a saved PNG
        xaxis=dict(title="rank (1 = best)", range=[0.4, K + 0.6], dtick=1 if K <= 25 else 5, zeroline=False),
        yaxis=dict(title="", categoryorder="array", categoryarray=[shown[c] for c in order], autorange="reversed",
                   tickmode="array", tickvals=[shown[c] for c in order], ticktext=[short_label(c) for c in order]),
        # the legend in one column at the right: it never wraps over the plot, however many methods
        legend=dict(orientation="v", yanchor="top", y=1.0, x=1.01, xanchor="left", font=dict(size=11),
                    title=dict(text="method")),
        margin=dict(t=50, b=50, r=10), template=TEMPLATE, font=dict(size=12),
        # compact: 9 candidates x 4 interval methods fit a 16:9 slide (about 500 px)
        # tall enough for the whole legend too: a saved PNG cuts what the page's legend scrolls to
        height=max(rank_boxplot_height(K, n_boxes), LEGEND_TOP + LEGEND_ROW * (len(methods) + (true_ranks is not None))),
    )
    return fig


#: Pixels around a one-column legend (its title, the margins) and per entry at font size 11 (box symbols: 29 px,
#: measured; 120 around cut the last of ten entries in a saved PNG).
LEGEND_TOP, LEGEND_ROW = 150, 30


def rank_boxplot_height(n_candidates: int, n_boxes: int) -> int:
    """Height (px) of :func:`rank_boxplot_figure`: a few pixels per box, 380 at least."""
    return int(max(380, n_candidates * (12 + 7 * max(n_boxes, 1)) + 110))


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
        z=z, x=safe_texts(table.columns), y=safe_texts(table.index), zmin=0.0, zmax=1.0, zmid=0.5,
        colorscale="PuOr_r", colorbar=dict(title=dict(text="P(row beats column)"), tickformat=".0%"),
        texttemplate="%{z:.2f}" if show_values else None,
        hovertemplate="P(<b>%{y}</b> beats <b>%{x}</b>) = %{z:.3f}<extra></extra>",
        xgap=1, ygap=1, meta={"role": "pairwise"},
    ))
    # The cells stay keyed by the whole name (hover shows it); the ticks show at most LABEL_CHARS.
    ticks = dict(tickmode="array", tickvals=safe_texts(table.index), ticktext=[short_label(c) for c in table.index])
    fig.update_layout(
        title=dict(text=title or "Pairwise: probability that the row candidate scores higher"),
        xaxis=dict(title="column candidate", tickangle=-45, side="bottom", **ticks),
        yaxis=dict(title="row candidate", autorange="reversed", **ticks),
        template=TEMPLATE, height=max(400, 28 * len(table) + 200),
    )
    return fig


# -- sensitivity ------------------------------------------------------------------------------------

def sensitivity_curve_figure(sweep: pd.DataFrame, title: str | None = None, *, base_omega: float = 0.0,
                             base_beta_max: float = 5.0, group: str | None = None,
                             subtitle: str | None = None) -> go.Figure:
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
    subtitle : str, optional
        A smaller line under the title (e.g. the dataset; safe text).

    Returns
    -------
    go.Figure
        Two panels, each named by its x-axis title (no subplot titles: on a narrow page they
        collided with each other and with the top tick label); scatter traces with ``meta = {"role": "sensitivity", "sweep": ..., "group": ...}``.
    """
    require_columns(sweep, ["omega", "beta_max", "spearman_vs_base"], "the sensitivity sweep table")
    if group is not None:
        require_columns(sweep, [group], "the sensitivity sweep table")
    frame = sweep.copy()
    # a setting whose fit did not converge: a hollow point, said in its hover and above the panels
    frame["_ok"] = frame["converged"].fillna(True).astype(bool) if "converged" in frame.columns else True
    if "sweep" in frame.columns:
        bad = sorted(set(frame["sweep"].astype(str)) - {"omega", "beta_max"})
        if bad:
            raise ValueError(f"column 'sweep' must hold 'omega' or 'beta_max'; got {bad}.")
        parts = {s: frame[frame["sweep"].astype(str) == s] for s in ("omega", "beta_max")}
    else:
        parts = {"omega": frame[np.isclose(frame["beta_max"].astype(float), base_beta_max)],
                 "beta_max": frame[np.isclose(frame["omega"].astype(float), base_omega)]}
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.08)
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
            ok = sub["_ok"].to_numpy(dtype=bool)
            fig.add_trace(go.Scatter(
                x=sub[x_col].to_numpy(dtype=float), y=sub["spearman_vs_base"].to_numpy(dtype=float),
                mode="lines+markers", error_y=err, name=safe_text(g) if g is not None else "Spearman vs base",
                legendgroup=str(g), showlegend=(col == 1),
                line=dict(color=colors[g], width=2),
                marker=dict(size=np.where(ok, 8, 11).tolist(), color=colors[g],
                            symbol=np.where(ok, "circle", "circle-open").tolist(), line=dict(width=2, color=colors[g])),
                customdata=np.where(ok, "", "<br>fit NOT converged").tolist(),
                hovertemplate=("%{fullData.name}<br>" if g is not None else "") + ("ω" if which == "omega" else "β_max")
                + " = %{x}<br>Spearman with base = %{y:.3f}%{customdata}<extra></extra>",
                meta={"role": "sensitivity", "sweep": which, "group": g, "unconverged": int((~ok).sum())},
            ), row=1, col=col)
        base = base_omega if which == "omega" else base_beta_max
        fig.add_vline(x=base, line=dict(color=GRID_GREY, dash="dot", width=1), row=1, col=col)
    ys = frame["spearman_vs_base"].to_numpy(dtype=float)
    ymin = float(np.nanmin(ys)) if ys.size and np.isfinite(ys).any() else 0.0
    fig.update_yaxes(title_text="Spearman with the base ranking", row=1, col=1)
    fig.update_yaxes(range=[max(-1.02, min(ymin - 0.05, 0.9)), 1.02])
    # two short lines per panel: narrow enough for half of a 1024-px window
    fig.update_xaxes(title_text=f"ω: relaxing constancy<br>(β_max = {fmt_number(base_beta_max)})", row=1, col=1)
    fig.update_xaxes(title_text=f"β_max: judge-quality prior<br>(ω = {fmt_number(base_omega)})", row=1, col=2)
    head = dict(text=title or "How much the ranking moves as the priors change", x=0.0, xanchor="left", xref="paper")
    if subtitle:
        head["subtitle"] = dict(text=subtitle, font=dict(size=12, color="#555555"))
    n_bad = int((~frame["_ok"]).sum())
    if n_bad:
        fig.add_annotation(text=f"hollow points: {n_bad} fit{'s' if n_bad != 1 else ''} NOT converged (not to be trusted)",
                           xref="paper", yref="paper", x=1.0, xanchor="right", y=1.0, yanchor="bottom", showarrow=False,
                           font=dict(size=11, color="#b00020"))
    fig.update_layout(title=head, template=TEMPLATE, showlegend=group is not None,
                      legend=dict(orientation="h", yref="container", yanchor="bottom", y=0.0, x=0.0),
                      margin=dict(t=90 if subtitle else 70, b=100 if group is not None else 70))
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
        require_columns(tables, ["setting"], "the rank-interval table")
        long = tables.copy()
    else:
        if not tables:
            raise ValueError("no settings to compare: pass at least one candidate summary.")
        long = pd.concat([t.assign(setting=str(s)) for s, t in tables.items()], ignore_index=True)
    require_columns(long, ["candidate", "rank_median", "rank_lo", "rank_hi"], "the rank-interval table")
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
            x=med, y=sub["_pos"].to_numpy(dtype=float) + off, mode="markers", name=safe_text(s),
            error_x=dict(type="data", symmetric=False, array=sub["rank_hi"].to_numpy(dtype=float) - med,
                         arrayminus=med - sub["rank_lo"].to_numpy(dtype=float), thickness=2, width=0, color=color),
            marker=dict(color=color, size=8), text=safe_texts(sub["candidate"]),
            customdata=np.column_stack([sub["rank_lo"].to_numpy(dtype=float), sub["rank_hi"].to_numpy(dtype=float)]),
            hovertemplate=f"<b>%{{text}}</b> · {safe_text(s)}<br>median rank %{{x:.1f}}<br>interval %{{customdata[0]:.0f}}–%{{customdata[1]:.0f}}<extra></extra>",
            meta={"role": "rank_interval", "setting": s},
        ))
    K = len(order)
    x_hi = max(float(K), float(np.nanmax(long[["rank_median", "rank_hi"]].to_numpy(dtype=float))))
    n_settings = sum(1 for t in fig.data if t.showlegend is not False)
    legend_h = 22 * int(np.ceil((n_settings + 1) / 3))  # rows of about three settings in a narrow window
    fig.update_layout(
        title=dict(text=title or "Rank intervals across settings"),
        xaxis=dict(title="rank (1 = best)", range=[0.4, x_hi + 0.6], dtick=1 if K <= 25 else 5),
        yaxis=dict(tickvals=list(range(K)), ticktext=[short_label(c) for c in order], autorange="reversed", showgrid=False,
                   zeroline=False),
        # the legend under the axis title: above the plot its rows ran into the figure's title
        legend=dict(title=dict(text="setting"), orientation="h", yref="container", yanchor="bottom", y=0.0, x=0.0),
        margin=dict(t=70, b=60 + legend_h), template=TEMPLATE, height=max(380, 30 * K + 160) + legend_h,
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
    require_columns(ppc, ["judge", "candidate", "level", "observed", "fitted_mean"], "the posterior predictive table")
    frame = ppc.copy()
    if judge is not None:
        frame = frame[frame["judge"].astype(str) == str(judge)]
    if candidate is not None:
        frame = frame[frame["candidate"].astype(str) == str(candidate)]
    if frame.empty:
        raise ValueError(f"no rows for judge {judge!r} and candidate {candidate!r} in the posterior predictive table.")
    # numbers in their order; labels ("incorrect", "correct") in the table's, which is the scale's:
    # sorted by name they would swap colours with every other figure of the levels
    levels = (sorted(frame["level"].unique()) if pd.api.types.is_numeric_dtype(frame["level"])
              else list(pd.unique(frame["level"])))
    if level_labels is not None:
        if len(level_labels) != len(levels):
            raise ValueError(f"level_labels has {len(level_labels)} labels for {len(levels)} levels {levels}.")
        label_of = dict(zip(levels, [str(x) for x in level_labels]))
    elif "label" in frame.columns:
        label_of = dict(frame.drop_duplicates("level")[["level", "label"]].itertuples(index=False, name=None))
    else:
        label_of = {v: fmt_number(float(v)) if isinstance(v, (int, float, np.number)) else str(v) for v in levels}
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
                             marker=dict(color=rgba(GRID_GREY, 0.8)), meta={"role": "ppc_observed"},
                             hovertemplate="%{x}: observed %{y:.3f}<extra></extra>"))
        err = None
        if has_int:
            err = dict(type="data", symmetric=False, array=frame["fitted_hi"].to_numpy(dtype=float) - fitted,
                       arrayminus=fitted - frame["fitted_lo"].to_numpy(dtype=float), color=JUDGE_COLOR, thickness=2)
        fig.add_trace(go.Scatter(x=x, y=fitted, mode="markers", name="fitted (posterior predictive)",
                                 error_y=err, marker=dict(color=JUDGE_COLOR, size=11, symbol="diamond"),
                                 meta={"role": "ppc_fitted"},
                                 hovertemplate="%{x}: fitted %{y:.3f}<extra></extra>"))
        fig.update_layout(title=dict(text=title or f"Posterior predictive check: judge {safe_text(j)}, candidate {safe_text(k)}"),
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
            name = f"level {safe_text(label_of[v])}"
            # the legend shows a plain circle per level (Plotly would show the first point's symbol, maybe a cross)
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, legendgroup=f"level-{v}",
                                     marker=dict(color=color, size=8, symbol="circle"), hoverinfo="skip",
                                     meta={"role": "ppc_level_key", "level": v}))
            fig.add_trace(go.Scatter(
                x=sub["observed"].to_numpy(dtype=float), y=fitted, mode="markers", error_y=err, showlegend=False,
                name=name, legendgroup=f"level-{v}", marker=dict(color=color, size=8, symbol=symbols),
                customdata=np.column_stack([safe_texts(sub["judge"]), safe_texts(sub["candidate"])]),
                hovertemplate=("judge %{customdata[0]} · <b>%{customdata[1]}</b><br>"
                               f"level {safe_text(label_of[v])}: observed %{{x:.3f}}, fitted %{{y:.3f}}<extra></extra>"),
                meta={"role": "ppc_scatter", "level": v},
            ))
        if "misfit" in frame.columns and frame["misfit"].astype(bool).any():  # say what a cross means (the key draws it)
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="observed outside the 95% predictive range",
                                     marker=dict(color=GRID_GREY, size=8, symbol="x"), hoverinfo="skip",
                                     meta={"role": "ppc_misfit_key"}))
        pad = 0.03 * top  # markers at 0 and at the top drawn whole, not cut by the axes
        fig.update_layout(title=dict(text=title or "Posterior predictive check: observed vs fitted"),
                          xaxis=dict(title=f"observed {unit}", range=[-pad, top + pad], constrain="domain"),
                          yaxis=dict(title=f"fitted {unit} (posterior predictive)", range=[-pad, top + pad],
                                     scaleanchor="x", scaleratio=1, constrain="domain"))
    fig.update_layout(template=TEMPLATE, legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0.0))
    return fig


def score_distribution_figure(distribution: pd.DataFrame, title: str | None = None, *,
                              judges: Sequence[str] | None = None, candidates: Sequence[str] | None = None,
                              max_cols: int = 3, subtitle: str | None = None) -> go.Figure:
    """Per-judge per-candidate score distributions: stacked bars per candidate, one panel per judge.

    Parameters
    ----------
    distribution : DataFrame
        :func:`simplex_core.data.views.score_distribution` output: ``judge, candidate, level, count``;
        optional ``label`` (legend), ``n``, ``share`` (computed from counts when absent) and
        ``self_family`` (those bars are hatched: excluded from the fit by default).
    title : str, optional
    judges, candidates : sequence of str, optional
        Panel order and bar order (top first); default order of appearance.
    max_cols : int
        Panels per row.
    subtitle : str, optional
        A smaller line under the title (e.g. the dataset; safe text).

    Returns
    -------
    go.Figure
        One ``go.Bar`` per (judge, level) (``meta = {"role": "score_share", "judge", "level"}``),
        ``barmode="stack"``. Title, legend and the first row's panel names are stacked in the top
        margin at fixed pixel offsets computed for the figure's own ``layout.height``: keep that
        height (the legend's rows are reserved for a plot about 400 px wide, a 1024-px window's main column,
        and wraps into the rows reserved for it).
    """
    require_columns(distribution, ["judge", "candidate", "level", "count"], "the score-distribution table")
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
              if "label" in frame.columns else {v: fmt_number(float(v)) for v in levels})
    # Columns and panel names sized for a narrow page (a 1024-px window's main column, ~560 px): the
    # candidates' names take the left, each panel keeps at least 120 px, a name at most its width.
    free = NARROW_FIGURE_PX - 50 - 6.5 * max(len(c) for c in cand_list)
    n_cols = max(1, min(max_cols, len(judge_list), int(free // 130)))
    n_rows = int(np.ceil(len(judge_list) / n_cols))
    name_chars = max(10, int((free / n_cols - 10) // 6.5))
    # sizes in pixels: a bar per candidate, between rows of panels their tick labels and the next names
    panel_px, gap_px = 22 * len(cand_list) + 10, 75
    plot_px = n_rows * panel_px + (n_rows - 1) * gap_px
    fig = make_subplots(rows=n_rows, cols=n_cols, shared_yaxes=True,
                        subplot_titles=[safe_text(shorten(j, name_chars, middle=True)) for j in judge_list],  # the judge's name
                        horizontal_spacing=0.05, vertical_spacing=gap_px / plot_px if n_rows > 1 else 0.0)
    fig.update_annotations(font=dict(size=12))  # panel names: narrow panels at a 1024-px window
    colors = dict(zip(levels, level_colors(len(levels))))
    bars, rows_of, cols_of = [], [], []  # added at once: Plotly validates every trace again on each add_trace
    for p, j in enumerate(judge_list):
        r, c = divmod(p, n_cols)
        sub = frame[frame["judge"] == j]
        for v in levels:
            cell = sub[sub["level"] == v].set_index("candidate").reindex(cand_list)
            hatch = (["/" if bool(x) else "" for x in cell["self_family"].fillna(False)]
                     if "self_family" in cell.columns else None)
            rows_of.append(r + 1)
            cols_of.append(c + 1)
            bars.append(go.Bar(
                y=safe_texts(cand_list), x=cell["share"].to_numpy(dtype=float), orientation="h", name=safe_text(labels[v]),
                legendgroup=str(v), showlegend=False,
                marker=dict(color=colors[v], pattern=dict(shape=hatch) if hatch is not None else None,
                            line=dict(color="white", width=0.5)),
                customdata=np.column_stack([cell["count"].fillna(0).to_numpy(dtype=float),
                                            cell["n"].fillna(0).to_numpy(dtype=float)]),
                hovertemplate=(f"judge {safe_text(j)} · <b>%{{y}}</b><br>{safe_text(labels[v])}: %{{x:.1%}} "
                               "(%{customdata[0]:.0f} of %{customdata[1]:.0f})<extra></extra>"),
                meta={"role": "score_share", "judge": j, "level": v},
            ))
    fig.add_traces(bars, rows=rows_of, cols=cols_of)
    # legend-only entries: a plain swatch per level (bars of self-family pairs are hatched)
    for v in levels:
        fig.add_trace(go.Bar(x=[None], y=[None], orientation="h", name=safe_text(labels[v]), legendgroup=str(v),
                             marker=dict(color=colors[v]), hoverinfo="skip", meta={"role": "legend"}), row=1, col=1)
    keys = [safe_text(labels[v]) for v in levels]
    if "self_family" in frame.columns and frame["self_family"].astype(bool).any():
        # said in the subtitle, not as a legend entry: one long entry made Plotly put every level on its own row
        subtitle = "<br>".join(x for x in (subtitle, "hatched bars: self-family pairs (self-exclusion leaves them out of the fit)") if x)
    # no tick label at a panel's edges, where "100%" of one panel ran into "0%" of the next
    fig.update_xaxes(range=[0, 1], tickvals=[0.25, 0.5, 0.75], tickformat=".0%")
    for p in range(len(judge_list)):
        if p + n_cols >= len(judge_list):  # no panel below: this one carries the axis title
            r, c = divmod(p, n_cols)
            fig.update_xaxes(title_text="share of scores", row=r + 1, col=c + 1)
    fig.update_yaxes(categoryorder="array", categoryarray=safe_texts(cand_list), autorange="reversed",
                     tickmode="array", tickvals=safe_texts(cand_list), ticktext=[short_label(c) for c in cand_list])
    if title is None:
        title = "Score distributions per judge"
    # top margin, in pixels: the title, the legend's rows (as it wraps in a 520-px plot), the panel names
    legend_rows = _legend_rows(keys, width=400)
    head = 40 + (18 * (subtitle.count("<br>") + 1) + 4 if subtitle else 0)
    top = head + 22 * legend_rows + 30
    height = max(360, plot_px + top + 60)
    fig.update_layout(
        barmode="stack", title=dict(text=title, x=0.0, xanchor="left", yref="container", y=1.0, yanchor="top",
                                    pad=dict(t=10), subtitle=dict(text=subtitle or "", font=dict(size=12, color="#555555"))),
        legend=dict(title=dict(text="score"), orientation="h", yref="container", yanchor="top", y=1.0 - head / height,
                    x=0.0, traceorder="normal", font=dict(size=12)),
        template=TEMPLATE, height=height, margin=dict(t=top, b=60),
    )
    return fig



def leaderboard_figure(leaderboard: pd.DataFrame, title: str | None = None, *, note: str | None = None) -> go.Figure:
    """The presenting leaderboard: one row per candidate, best at the top, its 95% rank interval as a
    bar with the median rank as a dot, tiers as shaded bands labelled on the left, and P(best) and
    P(top 3) written on the right (readable on a slide; export with
    :func:`~simplex_core.figures.slides.write_static`).

    Parameters
    ----------
    leaderboard : DataFrame
        :func:`simplex_core.summaries.leaderboard.leaderboard`'s table (columns ``tier, candidate, rank_lo,
        rank_hi, rank_median, p_best, p_top3``), best first.
    title : str, optional
    note : str, optional
        A small line under the title (e.g. "approximate: reweighted, k̂ = 0.4"); escaped here.

    Returns
    -------
    go.Figure
        Traces ``meta["role"]``: ``"rank_interval"`` (one trace, all bars), ``"rank_median"``;
        tier bands are layout shapes, tier names and probabilities annotations.
    """
    require_columns(leaderboard, ["tier", "candidate", "rank_lo", "rank_hi", "rank_median", "p_best", "p_top3"],
                    "the leaderboard table")
    frame = leaderboard.reset_index(drop=True)
    K = len(frame)
    names = safe_texts(frame["candidate"].astype(str))
    labels = [short_label(c) for c in frame["candidate"].astype(str)]  # the axis; hover keeps the whole name
    y = np.arange(K)  # row i at y = i, axis reversed so the best is on top
    tiers = frame["tier"].astype(int).to_numpy()
    fig = go.Figure()
    xs, ys = [], []
    for i, row in frame.iterrows():
        xs += [float(row["rank_lo"]) - 0.3, float(row["rank_hi"]) + 0.3, None]
        ys += [i, i, None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=JUDGE_COLOR, width=14), opacity=0.45,
                             hoverinfo="skip", showlegend=True, name="95% rank interval",
                             meta={"role": "rank_interval"}))
    fig.add_trace(go.Scatter(
        x=frame["rank_median"].astype(float), y=y, mode="markers", name="median rank",
        marker=dict(color=REFERENCE_COLOR, size=11), customdata=np.column_stack([
            names, frame["rank_lo"], frame["rank_hi"], frame["p_best"], frame["p_top3"], tiers]),
        hovertemplate=("%{customdata[0]} (tier %{customdata[5]})<br>median rank %{x}, 95%: %{customdata[1]}–"
                       "%{customdata[2]}<br>P(best) %{customdata[3]:.2f} · P(top 3) %{customdata[4]:.2f}<extra></extra>"),
        meta={"role": "rank_median"}))
    # shapes and annotations set once: Plotly validates the whole list again on every add_shape /
    # add_annotation (quadratic: 0.2 s of a page run for 9 candidates)
    shapes, notes = [], []
    for t in sorted(set(tiers)):
        rows = np.nonzero(tiers == t)[0]
        shapes.append(dict(type="rect", xref="paper", yref="y", x0=0, x1=1, y0=rows.min() - 0.5, y1=rows.max() + 0.5,
                           fillcolor=rgba(GRID_GREY, 0.16 if t % 2 else 0.04), line=dict(width=0), layer="below"))
        notes.append(dict(xref="paper", yref="y", x=-0.005, y=(rows.min() + rows.max()) / 2, xanchor="right",
                          text=f"<b>Tier {t}</b>", showarrow=False, font=dict(color="#333333"),
                          xshift=-max(len(n) for n in labels) * 7 - 14))
    p_best, p_top3 = frame["p_best"].to_numpy(dtype=float), frame["p_top3"].to_numpy(dtype=float)
    for i in range(K):
        notes.append(dict(xref="paper", yref="y", x=1.01, y=i, xanchor="left", showarrow=False,
                          text=f"P(best) {p_best[i]:.0%} · P(top 3) {p_top3[i]:.0%}"))
    fig.update_layout(shapes=shapes, annotations=notes)
    fig.update_yaxes(tickmode="array", tickvals=y, ticktext=labels, range=[K - 0.5, -0.5], showgrid=False,
                     title_text=None)
    fig.update_xaxes(range=[0.4, K + 0.6], dtick=1, title_text="rank (1 = best)", zeroline=False,
                     gridcolor=rgba(GRID_GREY, 0.35))
    longest = max(len(n) for n in names)
    fig.update_layout(
        title=dict(text=(title or "Leaderboard: tiers the data can tell apart at 95%")
                   + (f"<br><sup>{safe_text(note)}</sup>" if note else "")),
        template=TEMPLATE, height=max(320, 44 * K + 170),
        margin=dict(l=min(420, 7 * longest + 90), r=210, t=70, b=90),
        legend=dict(orientation="h", yanchor="top", y=-0.16 if K > 4 else -0.3, x=0.0),
    )
    return fig


def reweighted_sensitivity_figure(fine: pd.DataFrame, fitted: pd.DataFrame | None = None, title: str | None = None, *,
                                  base_omega: float = 0.0, base_beta_max: float = 5.0,
                                  khat_ok: float = 0.7) -> go.Figure:
    """The sensitivity curves on a fine grid by reweighting, with the settings really fitted marked
    and a shaded band where the reweighting cannot be trusted (PSIS k̂ > ``khat_ok``).

    Parameters
    ----------
    fine : DataFrame
        :func:`simplex_core.studies.sensitivity.reweighted_sweep`'s table (``sweep, omega, beta_max,
        spearman_vs_base, khat``).
    fitted : DataFrame, optional
        The sweep of real fits (``omega, beta_max, spearman_vs_base`` and ``sweep``), drawn as markers.

    Returns
    -------
    go.Figure
        Two panels; traces ``meta["role"]``: ``"reweighted"`` (lines), ``"fitted"`` (markers),
        ``"untrusted"`` (the k̂ band, one filled trace per panel).
    """
    require_columns(fine, ["sweep", "omega", "beta_max", "spearman_vs_base", "khat"], "the reweighted sweep table")
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06, subplot_titles=(
        f"relaxing constancy: ω (β_max = {fmt_number(base_beta_max)})",
        f"judge-quality prior: β_max (ω = {fmt_number(base_omega)})",
    ))
    ys = [fine["spearman_vs_base"].to_numpy(dtype=float)]
    if fitted is not None and len(fitted):
        ys.append(fitted["spearman_vs_base"].to_numpy(dtype=float))
    allv = np.concatenate(ys)
    ymin = float(np.nanmin(allv)) if np.isfinite(allv).any() else 0.0
    lo = max(-1.02, min(ymin - 0.05, 0.9))
    color = series_colors(1)[0]
    for col, which in enumerate(("omega", "beta_max"), start=1):
        part = fine[fine["sweep"] == which].sort_values(which)
        x = part[which].to_numpy(dtype=float)
        khat = part["khat"].to_numpy(dtype=float)
        bad = ~(khat <= khat_ok)  # NaN (no source) counts as untrusted
        if bad.any():
            # a filled step band over the untrusted x, half a grid step either side of each point
            step = float(np.median(np.diff(x))) if x.size > 1 else 1.0
            bx, by = [], []
            for xi, b in zip(x, bad):
                if b:
                    bx += [xi - step / 2, xi - step / 2, xi + step / 2, xi + step / 2, None]
                    by += [lo, 1.02, 1.02, lo, None]
            fig.add_trace(go.Scatter(x=bx, y=by, fill="toself", mode="lines", line=dict(width=0),
                                     fillcolor=rgba(GRID_GREY, 0.25), name=f"k̂ > {khat_ok}: reweighting not trustworthy",
                                     hoverinfo="skip", showlegend=col == 1 or not (fine["sweep"] == "omega").any(),
                                     legendgroup="untrusted", meta={"role": "untrusted", "sweep": which}),
                          row=1, col=col)
        fig.add_trace(go.Scatter(
            x=x, y=part["spearman_vs_base"].to_numpy(dtype=float), mode="lines", name="reweighted (approximate)",
            line=dict(color=color, width=2, dash="dot"), showlegend=col == 1, legendgroup="reweighted",
            customdata=np.column_stack([khat, part.get("ess", pd.Series(np.nan, index=part.index)).to_numpy(dtype=float)]),
            hovertemplate=("ω" if which == "omega" else "β_max") + " = %{x}<br>Spearman with base ≈ %{y:.3f}"
                          "<br>k̂ = %{customdata[0]:.2f}, ESS %{customdata[1]:.0f}<extra>reweighted</extra>",
            meta={"role": "reweighted", "sweep": which}), row=1, col=col)
        if fitted is not None and len(fitted):
            fpart = (fitted[fitted["sweep"] == which] if "sweep" in fitted.columns else
                     fitted[np.isclose(fitted["beta_max" if which == "omega" else "omega"].astype(float),
                                       base_beta_max if which == "omega" else base_omega)]).sort_values(which)
            fig.add_trace(go.Scatter(
                x=fpart[which].to_numpy(dtype=float), y=fpart["spearman_vs_base"].to_numpy(dtype=float),
                mode="markers", name="fitted", marker=dict(size=10, color=REFERENCE_COLOR, symbol="circle"),
                showlegend=col == 1, legendgroup="fitted",
                hovertemplate=("ω" if which == "omega" else "β_max") + " = %{x}<br>Spearman with base = %{y:.3f}"
                              "<extra>fitted</extra>", meta={"role": "fitted", "sweep": which}), row=1, col=col)
        fig.add_vline(x=base_omega if which == "omega" else base_beta_max, line=dict(color=GRID_GREY, dash="dot", width=1),
                      row=1, col=col)
    fig.update_yaxes(title_text="Spearman with the base ranking", row=1, col=1)
    fig.update_yaxes(range=[lo, 1.02])
    fig.update_xaxes(title_text="ω (random-effects weight)", row=1, col=1)
    fig.update_xaxes(title_text="β_max (judge discrimination)", row=1, col=2)
    # the title at the figure's top edge: centred in a top margin that also holds the panels' titles
    # (Plotly's default), it left about 70 px blank above it in the app
    fig.update_layout(title=dict(text=title or "How much the ranking moves as the priors change", yref="container",
                                 y=1.0, yanchor="top", pad=dict(t=14)), template=TEMPLATE,
                      # the legend at the figure's bottom edge, in pixels below the axis titles (a
                      # legend placed by plot fraction ran into them in a short figure)
                      legend=dict(orientation="h", yref="container", yanchor="bottom", y=0.0, x=0.0),
                      # room for a title line above the panels' own titles
                      margin=dict(b=110, t=64))
    return fig


def _legend_rows(entries: Sequence[str], width: float, char_px: float = 7.0, item_px: float = 45.0,
                 title_px: float = 60.0) -> int:
    """Rows a horizontal legend of ``entries`` (after a title) takes in ``width`` pixels: once it
    wraps, Plotly lays the entries on a grid as wide as the widest entry."""
    total = title_px + sum(item_px + char_px * len(e) for e in entries)
    if total <= width:
        return 1
    per_row = max(1, int((width - title_px) // (item_px + char_px * max(len(e) for e in entries))))
    return int(np.ceil(len(entries) / per_row))

