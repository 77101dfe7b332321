"""The figure of simulation-based calibration: one rank histogram per parameter (Plotly).

Takes the long rank table of :class:`simplex_core.studies.calibration.CalibrationResult` and never fits.
Each panel shows the counts per bin and the band where 99% of bin counts fall under uniform ranks
(binomial quantiles, Talts et al. 2018, figure 3), so a bin outside the band stands out.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["rank_histogram_figure"]


def rank_histogram_figure(ranks: pd.DataFrame, n_ranks: int, bins: int, *, title: str | None = None,
                          p_values: dict[str, float] | None = None, columns: int = 6):
    """Rank histograms, one panel per parameter (in table order).

    Parameters
    ----------
    ranks
        Columns ``parameter`` and ``rank`` (0..n_ranks-1), one row per replicate and parameter.
    n_ranks, bins
        Rank values (L + 1) and histogram bins (consecutive groups of rank values, as in
        :func:`simplex_core.studies.calibration.uniformity_test`).
    p_values
        Optional parameter -> uniformity p-value, shown in the panel titles.

    Returns
    -------
    plotly.graph_objects.Figure
        Bar traces ``meta={"role": "sbc_histogram", "parameter": name}`` and band traces
        ``meta={"role": "sbc_uniform_band"}``.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    from scipy import stats

    from simplex_core.figures.style import TEMPLATE

    names = list(dict.fromkeys(ranks["parameter"]))
    if not names:
        raise ValueError("no ranks to draw.")
    cols = min(columns, len(names))
    rows = math.ceil(len(names) / cols)
    groups = np.array_split(np.arange(n_ranks), bins)
    edges = np.array([g[0] for g in groups])
    share = np.array([len(g) for g in groups]) / n_ranks
    labels = [f"{g[0]}–{g[-1]}" if len(g) > 1 else f"{g[0]}" for g in groups]

    def panel_title(name: str) -> str:
        if p_values and name in p_values and p_values[name] is not None:
            return f"{name}<br><sup>p = {p_values[name]:.3f}</sup>"
        return name

    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[panel_title(n) for n in names],
                        horizontal_spacing=0.03, vertical_spacing=0.12 if rows > 1 else 0.2)
    for i, name in enumerate(names):
        r, c = divmod(i, cols)
        values = ranks.loc[ranks["parameter"] == name, "rank"].to_numpy(dtype=int)
        counts = np.bincount(np.searchsorted(edges, values, side="right") - 1, minlength=bins)
        n = len(values)
        lo = stats.binom.ppf(0.005, n, share)
        hi = stats.binom.ppf(0.995, n, share)
        x = np.arange(bins)
        steps = np.repeat(x, 2) + np.tile([-0.5, 0.5], bins)  # the band is flat across each bin
        fig.add_trace(go.Scatter(
            x=np.concatenate([steps, steps[::-1]]).tolist(),
            y=np.concatenate([np.repeat(lo, 2), np.repeat(hi, 2)[::-1]]).tolist(),
            fill="toself", mode="lines", line={"width": 0}, fillcolor="rgba(120,120,120,0.25)",
            hoverinfo="skip", showlegend=i == 0, name="99% band if uniform", meta={"role": "sbc_uniform_band"},
        ), row=r + 1, col=c + 1)
        fig.add_trace(go.Bar(
            x=x.tolist(), y=counts.tolist(), marker_color="#4063a8", showlegend=False, name=name,
            customdata=labels, hovertemplate="ranks %{customdata}: %{y}<extra>" + name + "</extra>",
            meta={"role": "sbc_histogram", "parameter": name},
        ), row=r + 1, col=c + 1)
    fig.update_xaxes(showticklabels=False)
    fig.update_layout(
        title=title or "Simulation-based calibration: rank of the true value among posterior draws",
        bargap=0.05, height=max(320, 220 * rows), template=TEMPLATE,
        legend={"orientation": "h", "y": -0.05},
    )
    return fig
