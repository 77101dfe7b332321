"""Figures for slides and papers: a fixed page size (16:9 or a paper figure), a title and a caption
naming dataset, setting and likelihood, all judges in one grid, and the static files (PNG, SVG)
through Plotly's exporter (the optional ``kaleido`` package driving a local Chromium)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from simplex_core.figures.simplex import JudgeSimplex, segment_judge_figure, ternary_judge_figure
from simplex_core.figures.style import safe_text, ternary_layout

#: Page sizes in CSS pixels (PNG files are written at twice this): a 16:9 slide and a paper figure
#: (about 6.5 x 4.2 inches at 100 px per inch, one text width).
PAGE_SIZES: Mapping[str, tuple[int, int]] = {"16:9": (1280, 720), "paper": (650, 420)}
STATIC_FORMATS = ("png", "svg")


def settings_caption(settings: Any) -> str:
    """One line naming the model setting of a fit (a :class:`simplex_core.model.FitSettings`).

    Examples
    --------
    ``"ω = 0, β_max = 5 · likelihood: per-judge · prior: weight-propagation"``
    """
    if getattr(settings, "integrated", False):
        head = "ω and β_max integrated (hyperpriors)"
    else:
        head = f"ω = {settings.omega:g}, β_max = {settings.beta_max:g}"
    parts = [head, f"likelihood: {getattr(settings, 'likelihood', 'per-judge')}", f"prior: {settings.prior}"]
    if not getattr(settings, "self_exclusion", True):
        parts.append("self-family pairs kept")
    return " · ".join(parts)


def figure_caption(dataset: str, settings: Any | None = None, note: str | None = None) -> str:
    """The caption of an exported figure: dataset, then the setting and likelihood (when a fit is
    drawn), then ``note``; user text is escaped."""
    parts = [safe_text(dataset)]
    if settings is not None:
        parts.append(settings_caption(settings))
    if note:
        parts.append(safe_text(note))
    return " · ".join(parts)


def for_slides(fig: go.Figure, title: str, caption: str, size: str = "16:9") -> go.Figure:
    """A copy of ``fig`` at a fixed page size with a title and a caption line under it.

    Parameters
    ----------
    fig : go.Figure
    title : str
        Already safe text (e.g. built with :func:`~simplex_core.figures.style.safe_text`).
    caption : str
        E.g. :func:`figure_caption`.
    size : {"16:9", "paper"}

    Returns
    -------
    go.Figure
        Width and height of the page (a judges grid on a paper page keeps two columns and grows
        taller), fonts scaled to it, the title top left and the caption as
        its subtitle (``layout.title.subtitle``), the top margin grown to hold both.
    """
    if size not in PAGE_SIZES:
        raise ValueError(f"size must be one of {', '.join(PAGE_SIZES)}; got {size!r}.")
    width, height = PAGE_SIZES[size]
    out = go.Figure(fig)
    grid = (out.layout.meta or {}).get("judges_grid") if isinstance(out.layout.meta, dict) else None
    if grid and size == "paper" and int(grid["n"]) > PAPER_GRID_COLS:
        # a paper page is narrow: many judges side by side would be unreadable, so the grid keeps
        # two columns and the page grows downwards (a full-page figure)
        rows = _regrid(out, PAPER_GRID_COLS)
        height = max(height, rows * PAPER_PANEL_HEIGHT + 200)
    base = 15 if size == "16:9" else 11
    # the caption in lines that fit the page (a paper figure cut a long caption at its right edge)
    caption = wrap_caption(caption, int((width - 120) / (0.5 * (base - 1))))
    extra = caption.count("<br>") * (base + 3)
    margin = out.layout.margin
    out.update_layout(
        width=width, height=height, font=dict(size=base),
        title=dict(text=f"<b>{title}</b>", x=0.01, xanchor="left", y=0.98, yanchor="top", yref="container",
                   font=dict(size=base + 5), subtitle=dict(text=caption, font=dict(size=base - 1, color="#444444"))),
        # title, caption and the top axis title of a ternary (drawn above its domain) one under another
        margin=dict(t=max(int(margin.t or 0), 4 * base + 70) + extra, l=margin.l, r=margin.r, b=margin.b),
    )
    return out


def wrap_caption(caption: str, max_chars: int) -> str:
    """``caption`` in lines of at most about ``max_chars`` characters (``<br>`` between them), broken
    at its `` · `` separators, else at spaces."""
    parts = caption.split(" · ")
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 3 + len(part) <= max_chars:
            lines[-1] += " · " + part
            continue
        words, line = part.split(" "), ""
        for w in words:  # a part longer than a line breaks at spaces
            if line and len(line) + 1 + len(w) > max_chars:
                lines.append(line)
                line = w
            else:
                line = f"{line} {w}" if line else w
        lines.append(line)
    return "<br>".join(lines)


def ternary_judges_grid_figure(judges: Mapping[str, JudgeSimplex], level_labels: Sequence[str], *,
                               true_labels: Sequence[str] | None = None, max_draws: int = 40,
                               max_candidate_draws: int = 20, cols: int | None = None,
                               aspect: float = 2.2) -> go.Figure:
    """Every judge's simplex view in one figure (the paper's figure 3 style), one panel per judge.

    Each panel is :func:`~simplex_core.figures.ternary_judge_figure` for that judge (same traces
    and ``meta``, plus ``meta["panel"]``); the legend (draws, mean, candidates) is given once.
    With 2 observed levels each panel is :func:`~simplex_core.figures.segment_judge_figure`.
    ``cols`` defaults to the count that makes panels about as wide as tall on a page of width /
    height ``aspect`` (a 16:9 slide's plot area is about 2.2).

    Returns
    -------
    go.Figure
    """
    if not judges:
        raise ValueError("no judges to draw: pass at least one judge.")
    names = list(judges)
    n = len(names)
    if cols is None:  # panels about as wide as a triangle with its axis titles on a wide page
        cols = min(range(1, n + 1), key=lambda c: abs(np.log(aspect * np.ceil(n / c) / c / 1.15)))
    rows = int(np.ceil(n / cols))
    two_levels = len(level_labels) == 2
    grid = go.Figure()
    for i, name in enumerate(names):
        d = judges[name]
        domain = _panel_domain(i, n, cols)
        x0, y1 = domain["x"][0], domain["y"][1]
        if two_levels:
            one = segment_judge_figure(d.observed, level_labels, d.theta_draws, d.theta_mean, d.candidate_posterior,
                                       counts=d.counts, true_labels=true_labels, judge=str(name), max_draws=max_draws,
                                       max_candidate_draws=max_candidate_draws)
            _copy_xy_panel(grid, one, i + 1, domain)
        else:
            one = ternary_judge_figure(d.observed, level_labels, d.theta_draws, d.theta_mean, d.candidate_posterior,
                                       counts=d.counts, true_labels=true_labels, judge=str(name), max_draws=max_draws,
                                       max_candidate_draws=max_candidate_draws)
            sub = "ternary" if i == 0 else f"ternary{i + 1}"
            for t in one.data:
                t = copy.deepcopy(t)
                t.subplot = sub
                t.showlegend = bool(t.showlegend is not False) and i == 0
                t.meta = {**(t.meta or {}), "panel": i}
                grid.add_trace(t)
            grid.update_layout({sub: {**ternary_layout(level_labels), "domain": domain}})
        # the panel's name in its top-left corner, beside the triangle's apex and its axis title
        grid.add_annotation(text=f"<b>{safe_text(name)}</b>", x=x0, y=y1, xref="paper", yref="paper",
                            xanchor="left", yanchor="top", showarrow=False, font=dict(size=13), name=f"panel-title-{i}")
    grid.update_layout(
        meta={"judges_grid": {"n": n, "two_levels": two_levels}},
        template="plotly_white", font=dict(size=11), showlegend=True,
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0.0, x=0.0, font=dict(size=11)),
        margin=dict(l=50, r=50, t=90, b=110), height=460 * rows + 200, width=None,
    )
    return grid


def _panel_domain(i: int, n: int, cols: int) -> dict:
    """Paper-coordinate domain of panel ``i`` of ``n`` laid out in ``cols`` columns."""
    rows = int(np.ceil(n / cols))
    gap_x, gap_y = 0.08, 0.14 if rows > 1 else 0.0
    w = (1 - gap_x * (cols - 1)) / cols
    h = (1 - gap_y * (rows - 1)) / rows
    r, c = divmod(i, cols)
    x0, y1 = c * (w + gap_x), 1 - r * (h + gap_y)
    return dict(x=[max(x0, 0.0), min(x0 + w, 1.0)], y=[max(y1 - h, 0.0), min(y1, 1.0)])


#: A judges grid on a paper page: at most this many columns, each panel this tall (pixels).
PAPER_GRID_COLS, PAPER_PANEL_HEIGHT = 2, 290


def _regrid(fig: go.Figure, cols: int) -> int:
    """Lay a judges grid (built by :func:`ternary_judges_grid_figure`) out again in ``cols`` columns,
    in place; returns the number of rows. Only domains and panel titles move; traces stay."""
    n = int(fig.layout.meta["judges_grid"]["n"])
    two_levels = bool(fig.layout.meta["judges_grid"]["two_levels"])
    for i in range(n):
        domain = _panel_domain(i, n, cols)
        if two_levels:
            k = "" if i == 0 else str(i + 1)
            fig.layout[f"xaxis{k}"].domain = domain["x"]
            fig.layout[f"yaxis{k}"].domain = domain["y"]
        else:
            fig.layout["ternary" if i == 0 else f"ternary{i + 1}"].domain = domain
        for a in fig.layout.annotations:
            if a.name == f"panel-title-{i}":
                a.x, a.y = domain["x"][0], domain["y"][1]
    return int(np.ceil(n / cols))


def _copy_xy_panel(grid: go.Figure, one: go.Figure, k: int, domain: dict) -> None:
    """Move a one-panel x/y figure into panel ``k`` of ``grid`` (traces, axes, labels, lines)."""
    xa, ya = ("x", "y") if k == 1 else (f"x{k}", f"y{k}")
    for t in one.data:
        t = copy.deepcopy(t)
        t.update(xaxis=xa, yaxis=ya, showlegend=bool(t.showlegend is not False) and k == 1)
        t.meta = {**(t.meta or {}), "panel": k - 1}
        grid.add_trace(t)
    x_layout = one.layout.xaxis.to_plotly_json()
    y_layout = one.layout.yaxis.to_plotly_json()
    grid.update_layout({("xaxis" if k == 1 else f"xaxis{k}"): {**x_layout, "domain": domain["x"], "anchor": ya},
                        ("yaxis" if k == 1 else f"yaxis{k}"): {**y_layout, "domain": domain["y"], "anchor": xa}})
    for a in one.layout.annotations:
        grid.add_annotation(a.update(xref=xa, yref=ya))
    for s in one.layout.shapes:  # the dotted vertical lines at the mean vertices
        grid.add_shape(s.update(xref=xa, yref=f"{ya} domain"))


def write_static(fig: go.Figure, path: str | Path, fmt: str | None = None) -> Path:
    """Write ``fig`` as PNG (at twice its size) or SVG; the format comes from the suffix by default.

    Raises
    ------
    ValueError
        For a format other than png or svg.
    RuntimeError
        When the optional exporter (``kaleido`` + Chromium) is missing, saying how to install it.
    """
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in STATIC_FORMATS:
        raise ValueError(f"format must be png or svg; got {fmt!r} (from {path.name}).")
    try:
        data = fig.to_image(format=fmt, scale=2 if fmt == "png" else 1)
    except (ImportError, ValueError, RuntimeError) as exc:
        raise RuntimeError(
            "static export needs the optional kaleido package and a Chromium "
            f"(pip install -r requirements-export.txt; apt-get install chromium): {exc}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
