"""Figures for slides and papers: a fixed page size (16:9 or a paper figure), a title and a caption
naming dataset, setting and likelihood, all judges in one grid, and the static files (PNG, SVG)
through Plotly's exporter (the optional ``kaleido`` package driving a local Chromium)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from simplex_core.figures.simplex import SUBSCRIPTS, JudgeSimplex, segment_judge_figure, ternary_judge_figure
from simplex_core.figures.style import TEMPLATE, LabelBox, safe_text, shorten, ternary_layout, wrap_words

#: Page sizes in CSS pixels (PNG files are written at twice this): a 16:9 slide and a paper figure
#: (about 6.5 x 4.2 inches at 100 px per inch, one text width).
PAGE_SIZES: Mapping[str, tuple[int, int]] = {"16:9": (1280, 720), "paper": (650, 420)}
STATIC_FORMATS = ("png", "svg")


def settings_caption(settings: Any) -> str:
    """One line naming the model setting of a fit (a :class:`simplex_core.model.settings.FitSettings`).

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
        Width and height of the page (a judges grid is laid out again for it by
        :func:`layout_judges_grid`; on a paper page it keeps two columns and grows taller), fonts scaled to it, the title top left and the caption as
        its subtitle (``layout.title.subtitle``), the top margin grown to hold both.
    """
    if size not in PAGE_SIZES:
        raise ValueError(f"size must be one of {', '.join(PAGE_SIZES)}; got {size!r}.")
    width, height = PAGE_SIZES[size]
    out = go.Figure(fig)
    original_caption = caption
    grid = (out.layout.meta or {}).get("judges_grid") if isinstance(out.layout.meta, dict) else None
    base = 15 if size == "16:9" else 11
    if grid and grid.get("prefix"):  # the judges' shared name, cut from the panel titles
        caption = f"{caption} · panels: judges {safe_text(grid['prefix'])}…"
    # the caption in lines that fit the page (a paper figure cut a long caption at its right edge)
    caption = wrap_caption(caption, int((width - 120) / (0.5 * (base - 1))))
    extra = caption.count("<br>") * (base + 3)
    margin = out.layout.margin
    # a grid's panels hold their own top axis titles: only the title and the caption above them
    top = (int(2.6 * base) + 40 if grid else max(int(margin.t or 0), 4 * base + 70)) + extra
    out.update_layout(
        width=width, height=height, font=dict(size=base),
        title=dict(text=f"<b>{title}</b>", x=0.01, xanchor="left", xref="container", y=0.98, yanchor="top", yref="container",
                   font=dict(size=base + 5), subtitle=dict(text=caption, font=dict(size=base - 1, color="#444444"))),
        # title, caption and the top axis title of a ternary (drawn above its domain) one under another
        margin=dict(t=top, l=margin.l, r=margin.r, b=margin.b),
    )
    if grid:  # the panels laid out again for this page under its title
        layout_judges_grid(out, size)
        key = out.layout.meta["judges_grid"].get("vertex_key")
        if key and key not in original_caption:  # small triangles name their vertices θ₁, θ₂, θ₃: the caption says which is which
            return for_slides(fig, title, f"{original_caption} · {key}", size)
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
        lines += wrap_words(part, max_chars)  # a part longer than a line breaks at spaces
    return "<br>".join(lines)


#: Fonts (px) of a judges grid per page: tick labels, the corners' level names, panel titles, the
#: legend, and the labels inside a panel (θ vertices, candidate names).
GRID_FONTS: Mapping[str, Mapping[str, int]] = {
    "16:9": dict(tick=11, axis=13, panel=13, legend=12, vertex=12, name=11),
    "paper": dict(tick=9, axis=10, panel=10, legend=9, vertex=10, name=9),
}
CHAR_W, BOLD_CHAR_W = 0.6, 0.68   # a character's width per px of font size (Arial-like), plain and bold
TICKLEN = 5                        # Plotly's default tick length
PANEL_GAP = 14                     # px between the boxes two neighbouring panels reserve
MAX_LEVEL_CHARS, MAX_NAME_CHARS = 14, 18  # longer level or candidate names are cut with "…"
#: A judges grid on a paper page: at most this many columns (the page grows downwards).
PAPER_GRID_COLS = 2
SQRT3_2 = float(np.sqrt(3.0) / 2.0)


def common_prefix(names: Sequence[str], seps: str = "/:") -> str:
    """The longest prefix shared by all ``names`` that ends at one of ``seps`` (e.g. the model in
    ``"gpt-3.5/geval"``, ``"gpt-3.5/rate"``), or ``""``; never a whole name."""
    if len(names) < 2:
        return ""
    first = min(names, key=len)
    i = 0
    while i < len(first) and all(n[i] == first[i] for n in names):
        i += 1
    cut = max((first.rfind(c, 0, i) for c in seps), default=-1)
    return first[: cut + 1] if 0 <= cut < min(len(n) for n in names) - 1 else ""


def ternary_judges_grid_figure(judges: Mapping[str, JudgeSimplex], level_labels: Sequence[str], *,
                               true_labels: Sequence[str] | None = None, max_draws: int = 40,
                               max_candidate_draws: int = 20, cols: int | None = None,
                               size: str = "16:9") -> go.Figure:
    """Every judge's simplex view in one figure (the paper's figure 3 style), one panel per judge,
    laid out for a page (:data:`PAGE_SIZES`) so that no text overlaps other text or leaves the page.

    Each panel is :func:`~simplex_core.figures.ternary_judge_figure` for that judge (same traces
    and ``meta``, plus ``meta["panel"]``); the legend (draws, mean, candidates) is given once.
    With 2 observed levels each panel is :func:`~simplex_core.figures.segment_judge_figure`.
    A prefix shared by all judge names (e.g. the model of judges that are its prompts) is printed
    once, as the legend's title, and the panels are titled by the rest.
    The grid (columns, panel boxes, label placement) is computed by :func:`layout_judges_grid`
    for ``size``; :func:`for_slides` lays it out again for its page.

    Returns
    -------
    go.Figure
    """
    if not judges:
        raise ValueError("no judges to draw: pass at least one judge.")
    if size not in PAGE_SIZES:
        raise ValueError(f"size must be one of {', '.join(PAGE_SIZES)}; got {size!r}.")
    names = [str(k) for k in judges]
    n = len(names)
    prefix = common_prefix(names)
    two_levels = len(level_labels) == 2
    shown_levels = [shorten(x, MAX_LEVEL_CHARS) for x in level_labels]
    grid = go.Figure()
    for i, name in enumerate(names):
        d = judges[list(judges)[i]]
        if two_levels:
            observed = d.observed.rename(index=lambda k: shorten(k, MAX_NAME_CHARS, middle=True))
            one = segment_judge_figure(observed, level_labels, d.theta_draws, d.theta_mean, d.candidate_posterior,
                                       counts=None if d.counts is None else d.counts.rename(index=lambda k: shorten(k, MAX_NAME_CHARS, middle=True)),
                                       true_labels=true_labels, judge=name, max_draws=max_draws,
                                       max_candidate_draws=max_candidate_draws)
            _copy_xy_panel(grid, one, i + 1, shown_levels)
        else:
            one = ternary_judge_figure(d.observed, level_labels, d.theta_draws, d.theta_mean, d.candidate_posterior,
                                       counts=d.counts, true_labels=true_labels, judge=name, max_draws=max_draws,
                                       max_candidate_draws=max_candidate_draws)
            sub = "ternary" if i == 0 else f"ternary{i + 1}"
            for t in one.data:
                t = copy.deepcopy(t)
                t.subplot = sub
                t.showlegend = bool(t.showlegend is not False) and i == 0
                t.meta = {**(t.meta or {}), "panel": i}
                grid.add_trace(t)
            grid.update_layout({sub: ternary_layout(shown_levels)})
        title = name[len(prefix):]
        grid.add_annotation(text=f"<b>{safe_text(title)}</b>", hovertext=safe_text(name), x=0, y=1, xref="paper",
                            yref="paper", xanchor="center", yanchor="top", showarrow=False, name=f"panel-title-{i}")
    grid.update_layout(
        meta={"judges_grid": {"n": n, "two_levels": two_levels, "cols": cols, "levels": shown_levels, "prefix": prefix,
                              "titles": [x[len(prefix):] for x in names]}},
        template=TEMPLATE, showlegend=True,
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0.0, x=0.0),
        # the shared prefix is said once (for_slides appends it to the caption)
        title=dict(text=f"panels: judges {safe_text(prefix)}…" if prefix else None, font=dict(size=12)),
    )
    width, height = PAGE_SIZES[size]
    grid.update_layout(width=width, height=height, margin=dict(l=20, r=20, t=int(2.6 * 15) + 40, b=60))
    layout_judges_grid(grid, size)
    return grid


def _text_w(text: str, font: float, bold: bool = False) -> float:
    return len(text) * font * (BOLD_CHAR_W if bold else CHAR_W)


def _ternary_pads(levels: Sequence[str], f: Mapping[str, int]) -> tuple[float, float, float, float]:
    """Room (left, right, top, bottom, px) a ternary panel needs around its triangle, from
    Plotly's placement of the axis titles (the lowest level's centred ``bpad`` left of the
    bottom-left corner, the middle level's right of the bottom-right one, the top level above the
    apex; the panels have no tick labels, see :func:`layout_judges_grid`), plus room beside the
    sides for a θ label that does not fit inside a narrow corner; the panel title sits above the
    top level's name."""
    bpad = TICKLEN + 3
    side_room = 1.35 * f["vertex"]  # a θ label may stand out of a side by about its height
    b_w, c_w = (_text_w(x, f["axis"], bold=True) for x in levels[:2])
    left = max(bpad + b_w / 2, side_room) + 2
    right = max(bpad + c_w / 2, side_room) + 2
    apad = 0.87 * TICKLEN
    top = f["axis"] / 3 + apad + 0.9 * f["axis"] + 1.3 * f["panel"] + 4
    bottom = 0.83 * f["axis"] + bpad + 0.3 * f["axis"] + 2
    return left, right, top, bottom


def _segment_pads(tick_names: Sequence[str], f: Mapping[str, int]) -> tuple[float, float, float, float]:
    """Room around a segment panel's plot area: the candidates' names left, the two tiers of vertex
    labels and the panel title above, the tick labels and the axis title below."""
    left = max(_text_w(t, f["tick"]) for t in tick_names) + TICKLEN + 6
    right = _text_w("100%", f["tick"]) / 2 + 4
    top = 34 + 1.4 * f["vertex"] + 1.3 * f["panel"] + 4
    bottom = f["tick"] * 1.3 + TICKLEN + 1.3 * f["axis"] + 6
    return left, right, top, bottom


def _legend_height(fig: go.Figure, width: float, font: int) -> float:
    """Height (px) of the horizontal legend at the page's bottom: its entries wrap to ``width``."""
    names = [str(t.name) for t in fig.data if t.showlegend is not False and t.name]
    rows, x = 1, 0.0
    for name in names:
        w = 40 + _text_w(name, font) + 10
        if x + w > width and x > 0:
            rows, x = rows + 1, 0.0
        x += w
    return rows * (1.5 * font + 6) + 8


def _choose_cols(n: int, plot_w: float, plot_h: float | None, pads, fit) -> tuple[int, float]:
    """The column count whose panels are largest (``fit(cell_w, cell_h)`` gives the size of a
    panel's drawing in a cell), and that size; ``plot_h`` None: the page grows downwards."""
    best = (1, -np.inf)
    for c in range(1, n + 1):
        rows = int(np.ceil(n / c))
        cell_w = plot_w / c
        cell_h = None if plot_h is None else plot_h / rows
        size = fit(cell_w, cell_h)
        if size > best[1] + 1e-9:
            best = (c, size)
    return best


def layout_judges_grid(fig: go.Figure, size: str) -> None:
    """Lay a judges grid (:func:`ternary_judges_grid_figure`) out on its page, in place: the
    fonts of ``size``, the column count that makes the panels largest (a paper page keeps at most
    :data:`PAPER_GRID_COLS` columns and grows downwards), every panel's box with room for its axis
    titles, tick labels and title, the legend's room at the bottom, and the labels inside each
    triangle placed again for its size in pixels. Uses the figure's width, height and margins."""
    meta = fig.layout.meta["judges_grid"]
    n, two_levels, levels = int(meta["n"]), bool(meta["two_levels"]), list(meta["levels"])
    f = GRID_FONTS[size]
    width = float(fig.layout.width)
    margin = fig.layout.margin
    ml, mr, mt = float(margin.l or 0), float(margin.r or 0), float(margin.t or 0)
    fig.update_layout(font=dict(size=f["tick"]), legend=dict(font=dict(size=f["legend"])))
    mb = _legend_height(fig, width - ml, f["legend"]) + 6
    plot_w = width - ml - mr
    grow = size == "paper"
    height = float(fig.layout.height)
    plot_h = height - mt - mb
    if two_levels:
        ticks = [list(fig.layout["yaxis" if i == 0 else f"yaxis{i + 1}"].ticktext or ["x"]) for i in range(n)]
        rows_k = max(len(t) for t in ticks) + 1.2
        pads = _segment_pads([t for ts in ticks for t in ts], f)
        row_px = 1.35 * f["tick"]

        def fit(cw, ch):  # a segment panel: its plot area's width, while its rows have room
            w = cw - pads[0] - pads[1] - PANEL_GAP
            if ch is None:
                return min(w, 420)
            h = ch - pads[2] - pads[3] - PANEL_GAP
            return min(w, 420) if h >= rows_k * row_px else h - rows_k * row_px  # too short: the least short
    else:
        pads = _ternary_pads(levels, f)

        def fit(cw, ch):  # a ternary panel: its triangle's side
            s = cw - pads[0] - pads[1] - PANEL_GAP
            if ch is not None:
                s = min(s, (ch - pads[2] - pads[3] - PANEL_GAP) / SQRT3_2)
            return min(s, 420 if not grow else 300)
    if meta.get("cols"):
        cols = min(int(meta["cols"]), n)
        side = fit(plot_w / cols, None if grow else plot_h / int(np.ceil(n / cols)))
    elif grow:
        cols = min(n, PAPER_GRID_COLS)
        side = fit(plot_w / cols, None)
    else:
        cols, side = _choose_cols(n, plot_w, plot_h, pads, fit)
    rows = int(np.ceil(n / cols))
    if two_levels:
        draw_w = side if side > 0 else plot_w / cols - pads[0] - pads[1] - PANEL_GAP
        draw_h = max(rows_k * row_px, (plot_h / rows - pads[2] - pads[3] - PANEL_GAP) if not grow else 0)
    else:
        draw_w = side
        draw_h = side * SQRT3_2
    cell_w = draw_w + pads[0] + pads[1] + PANEL_GAP
    cell_h = draw_h + pads[2] + pads[3] + PANEL_GAP
    if grow:  # the page holds its rows
        height = max(height, mt + mb + rows * cell_h)
        plot_h = height - mt - mb
    fig.update_layout(height=int(np.ceil(height)), margin=dict(b=int(np.ceil(mb))))
    # centre the grid in the plot area; domains in paper units
    x_off = (plot_w - cols * cell_w) / 2
    y_off = (plot_h - rows * cell_h) / 2
    panel_titles = {a.name: a for a in fig.layout.annotations if (a.name or "").startswith("panel-title-")}
    short = False
    for i in range(n):
        r, c = divmod(i, cols)
        in_row = min(cols, n - r * cols)  # a last, shorter row is centred too
        row_off = (cols - in_row) * cell_w / 2
        cx0 = x_off + row_off + c * cell_w          # cell's left (px from plot left)
        cy0 = y_off + r * cell_h                    # cell's top (px from plot top)
        dx0 = cx0 + PANEL_GAP / 2 + pads[0]
        dy0 = cy0 + PANEL_GAP / 2 + pads[2]
        domain = dict(x=[dx0 / plot_w, (dx0 + draw_w) / plot_w],
                      y=[1 - (dy0 + draw_h) / plot_h, 1 - dy0 / plot_h])
        domain = {k: [min(max(v, 0.0), 1.0) for v in vs] for k, vs in domain.items()}
        k = "" if i == 0 else str(i + 1)
        if two_levels:
            fig.layout[f"xaxis{k}"].domain = domain["x"]
            fig.layout[f"yaxis{k}"].domain = domain["y"]
            fig.layout[f"xaxis{k}"].update(tickfont=dict(size=f["tick"]), title=dict(font=dict(size=f["axis"]), standoff=4))
            fig.layout[f"yaxis{k}"].update(tickfont=dict(size=f["tick"]))
            _place_segment_labels(fig, i, draw_w, f)
        else:
            t = fig.layout[f"ternary{k}"]
            t.domain = domain
            # small multiples: grid lines every 20% and no tick labels (they ran into the θ labels that
            # stand out of a narrow corner, and into each other in small triangles; hover gives values)
            for ax in ("aaxis", "baxis", "caxis"):
                t[ax].update(title=dict(font=dict(size=f["axis"])), ticklen=TICKLEN, showticklabels=False)
            short = _place_ternary_labels(fig, i, side, f) or short
        a = panel_titles.get(f"panel-title-{i}")
        if a is not None:  # centred at the cell's top, cut to its width
            full = str(meta["titles"][i])
            a.text = f"<b>{safe_text(shorten(full, int((cell_w - PANEL_GAP) / (BOLD_CHAR_W * f['panel']))))}</b>"
            a.font = dict(size=f["panel"])
            a.x = (cx0 + cell_w / 2) / plot_w
            a.y = 1 - (cy0 + PANEL_GAP / 2) / plot_h
    key = None
    if short:  # which θ is which, said once
        mean_t = next(t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("role") == "theta_mean")
        names = list(mean_t.meta.get("true_labels") or [])
        key = ", ".join(f"θ{SUBSCRIPTS[k]}: {safe_text(x)}" for k, x in enumerate(names)) + " (a judge's vertex per true level)"
    fig.layout.meta = {"judges_grid": {**meta, "size": size, "layout_cols": cols, "panel_px": [draw_w, draw_h],
                                       "pads": list(pads), "cell_px": [cell_w, cell_h], "vertex_key": key}}


#: Triangles narrower than this (px) name their vertices θ₁, θ₂, θ₃ (the caption says which is which):
#: "θ: high (4-5)" took most of their width and stood out over their neighbours.
SHORT_LABELS_BELOW_PX = 140


def _place_ternary_labels(fig: go.Figure, panel: int, side_px: float, f: Mapping[str, int]) -> bool:
    """Place panel ``panel``'s θ and name labels again for a triangle ``side_px`` wide (the label
    metrics in side units shrink as the triangle grows); names that do not fit are left to the legend."""
    from simplex_core.figures.simplex import add_ternary_labels
    from simplex_core.model import geometry

    mine = [t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("panel") == panel]
    cand = next((t for t in mine if t.meta.get("role") == "candidates"), None)
    mean_t = next((t for t in mine if t.meta.get("role") == "theta_mean"), None)
    if cand is None:
        return False
    fig.data = tuple(t for t in fig.data if not (isinstance(t.meta, dict) and t.meta.get("panel") == panel
                                                and t.meta.get("role") in ("vertex_labels", "candidate_labels")))

    def levels_of(t):  # a, b, c back to (lowest, middle, highest)
        return np.column_stack([np.asarray(t[ax], dtype=float) for ax in geometry.TERNARY_AXIS_OF_LEVEL])

    observed = levels_of(cand)
    mean, t_labels = None, []
    if mean_t is not None:
        t_labels = list(mean_t.meta.get("true_labels") or [])
        mean = levels_of(mean_t)[: len(t_labels)]
    px = max(side_px, 40.0)
    # a small triangle gets smaller labels (down to 9 px), so that its three θ labels still fit in it
    vertex, name = (int(min(size, max(9, round(px / 15)))) for size in (f["vertex"], f["name"]))
    box = LabelBox(char_w=CHAR_W * vertex / px, line_h=1.35 * vertex / px, gap=8.0 / px)
    add_ternary_labels(fig, observed, list(cand.text), list(cand.meta.get("names") or cand.text), mean, t_labels,
                       judge=cand.meta.get("judge"), color=mean_t.line.color if mean_t is not None else "#0072B2",
                       show_names=True, box=box, taken=[], subplot=cand.subplot, meta={"panel": panel},
                       font_sizes=(vertex, name), short_vertex_labels=px < SHORT_LABELS_BELOW_PX)
    return px < SHORT_LABELS_BELOW_PX


def _place_segment_labels(fig: go.Figure, panel: int, width_px: float, f: Mapping[str, int]) -> None:
    """Turn panel ``panel``'s two vertex labels inward early enough that they stay over its plot
    area (the label's width as a share of the panel's)."""
    from simplex_core.figures.simplex import segment_vertex_annotations

    anns = [a for a in fig.layout.annotations if (a.name or "").startswith(f"p{panel}-vertex_label_")]
    if len(anns) != 2:
        return
    texts = [str(a.text) for a in anns]
    edge = min(0.5, (max(_text_w(t, f["vertex"]) for t in texts) + 6) / max(width_px, 1.0))
    new = segment_vertex_annotations([a.x for a in anns], texts, anns[0].y, edge=edge)
    for a, d in zip(anns, new):
        a.update(xanchor=d["xanchor"], ay=d["ay"], font=dict(size=f["vertex"]))


def _copy_xy_panel(grid: go.Figure, one: go.Figure, k: int, levels: Sequence[str]) -> None:
    """Move a one-panel x/y figure into panel ``k`` of ``grid`` (traces, axes, labels, lines)."""
    xa, ya = ("x", "y") if k == 1 else (f"x{k}", f"y{k}")
    for t in one.data:
        t = copy.deepcopy(t)
        t.update(xaxis=xa, yaxis=ya, showlegend=bool(t.showlegend is not False) and k == 1)
        if t.type == "scatter":  # a point at 0% or 100% drawn whole: the axis pad is narrower than a marker in a small panel
            t.update(cliponaxis=False)
        t.meta = {**(t.meta or {}), "panel": k - 1}
        grid.add_trace(t)
    x_layout = one.layout.xaxis.to_plotly_json()
    y_layout = one.layout.yaxis.to_plotly_json()
    x_layout["title"] = dict(text=f"P({safe_text(levels[1])})")  # the long axis title once per panel is too long
    lo, _ = y_layout.get("range", [-0.8, 0])
    judge_row = max(y_layout.get("tickvals") or [0])
    y_layout["range"] = [lo, judge_row + 0.7]  # the vertex labels sit in the room reserved above
    grid.update_layout({("xaxis" if k == 1 else f"xaxis{k}"): {**x_layout, "anchor": ya},
                        ("yaxis" if k == 1 else f"yaxis{k}"): {**y_layout, "anchor": xa}})
    for a in one.layout.annotations:
        grid.add_annotation(a.update(xref=xa, yref=ya, name=f"p{k - 1}-{a.name}"))
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
