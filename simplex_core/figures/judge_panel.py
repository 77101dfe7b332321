"""The leave-one-judge-out figure: per judge, how the ranking changes without it
(the table of :func:`simplex_core.studies.leave_one_judge_out.leave_one_judge_out`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from simplex_core.figures.style import JUDGE_COLOR, REFERENCE_COLOR, TEMPLATE, require_columns, safe_text, safe_texts


def leave_one_judge_out_figure(table: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Two dot plots, one row per judge: left the Spearman of the ranking without the judge against the
    full ranking (reference line at 1), right the mean 95% rank-interval width without it (reference
    line at the full fit's width). Judges not refitted (NaN) are left out of the dots.

    Traces: ``meta = {"role": "spearman"}``, ``{"role": "width"}``, ``{"role": "full_width"}``; hollow
    dots mark fits that did not converge.
    """
    require_columns(table, ["judge", "spearman_vs_full", "mean_rank_width", "full_mean_rank_width", "converged"],
                    "the leave-one-judge-out table")
    t = table.dropna(subset=["spearman_vs_full"])
    judges = safe_texts(t["judge"])
    symbols = ["circle" if ok else "circle-open" for ok in t["converged"]]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06)
    fig.add_trace(go.Scatter(x=t["spearman_vs_full"], y=judges, mode="markers", name="Spearman vs all judges",
                             marker=dict(color=JUDGE_COLOR, size=10, symbol=symbols), meta={"role": "spearman"},
                             hovertemplate="without %{y}: Spearman %{x:.3f}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=t["mean_rank_width"], y=judges, mode="markers", name="mean rank-interval width",
                             marker=dict(color=JUDGE_COLOR, size=10, symbol=symbols), meta={"role": "width"},
                             hovertemplate="without %{y}: mean width %{x:.2f}<extra></extra>"), row=1, col=2)
    full = float(np.nanmean(table["full_mean_rank_width"])) if len(t) else float("nan")
    fig.add_trace(go.Scatter(x=[full, full], y=[judges[0], judges[-1]] if judges else [], mode="lines",
                             name="all judges", line=dict(color=REFERENCE_COLOR, dash="dash"),
                             meta={"role": "full_width"}, hoverinfo="skip"), row=1, col=2)
    fig.add_vline(x=1.0, line=dict(color=REFERENCE_COLOR, dash="dash"), row=1, col=1)
    fig.update_xaxes(title_text="Spearman with the ranking by all judges", range=[-1.05, 1.05], row=1, col=1)
    fig.update_xaxes(title_text="mean 95% rank-interval width (ranks)", row=1, col=2)
    fig.update_yaxes(title_text="judge left out", autorange="reversed", row=1, col=1)
    fig.update_layout(template=TEMPLATE, title=safe_text(title) if title else None, showlegend=False,
                      height=max(300, 120 + 32 * len(t)))
    return fig
