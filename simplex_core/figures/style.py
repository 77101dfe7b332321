"""The figures' shared style: one colour-blind-safe palette, small layout helpers, input checks, and
the one place that makes user text safe to print in a Plotly figure.

Colours come from the Okabe & Ito (2008) palette (:data:`OKABE_ITO`); ordered levels use Viridis.
Ternary drawings place the levels as :mod:`simplex_core.model.geometry` does: lowest level bottom-left
(ternary axis ``b``), middle level bottom-right (``c``), highest level at the top (``a``).
"""

from __future__ import annotations

import textwrap

from typing import Mapping, Sequence, TypedDict

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from numpy.typing import NDArray
from plotly.colors import sample_colorscale

from simplex_core.model import geometry
from simplex_core.data.text import shorten  # noqa: F401 — the figures' callers import it from here

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

#: Candidates' colours on a judge's simplex: Okabe-Ito without the judge's blue and the faint yellow.
CANDIDATE_COLORS: tuple[str, ...] = tuple(
    OKABE_ITO[k] for k in ("vermillion", "bluish_green", "reddish_purple", "orange", "sky_blue", "black")
)

JUDGE_COLOR = OKABE_ITO["blue"]          # the paper draws judge triangles in blue
CANDIDATE_COLOR = OKABE_ITO["vermillion"]
POSTERIOR_POINT_COLOR = OKABE_ITO["orange"]
REFERENCE_COLOR = OKABE_ITO["black"]
GRID_GREY = "#999999"
#: Width (px) the figures' text is laid out for at the least: a 1024-px window's main column.
NARROW_FIGURE_PX = 560
MARKER_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon")


def series_colors(n: int) -> list[str]:
    """``n`` distinguishable colour-blind-safe colours: Okabe-Ito for the first 6, Viridis samples for
    the rest (the series named first, e.g. the Bayesian method and the bootstrap, keep colours far apart:
    Viridis for all of 9 methods drew those two in near-identical purples).

    Parameters
    ----------
    n : int

    Returns
    -------
    list of str
    """
    if n <= len(SERIES_COLORS):
        return list(SERIES_COLORS[:n])
    rest = n - len(SERIES_COLORS)
    return list(SERIES_COLORS) + sample_colorscale("Viridis", list(np.linspace(0.0, 0.92, rest)) if rest > 1 else [0.5])


def level_colors(n: int) -> list[str]:
    """Colours for ``n`` ordered levels, lowest to highest (Viridis, perceptually ordered)."""
    if n == 1:
        return sample_colorscale("Viridis", [0.5])
    return sample_colorscale("Viridis", list(np.linspace(0.0, 0.9, n)))


def rgba(color: str, alpha: float) -> str:
    """Hex ``#RRGGBB`` or ``rgb(r, g, b)`` with an alpha channel."""
    if color.startswith("#"):
        r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    elif color.startswith("rgb"):
        r, g, b = (int(float(x)) for x in color[color.index("(") + 1:color.index(")")].split(",")[:3])
    else:
        raise ValueError(f"unsupported colour {color!r}: use '#RRGGBB' or 'rgb(r, g, b)'.")
    return f"rgba({r}, {g}, {b}, {alpha})"


def fmt_number(x: float) -> str:
    return f"{x:g}"


# -- template --------------------------------------------------------------------------------------

#: The figures' Plotly template: plotly_white's layout, and its defaults for the trace types these
#: figures draw. Why not plotly_white itself: Plotly deep-copies a figure's template when it is set,
#: and plotly_white's defaults for 24 trace types made that 10-18 ms of every figure (py-spy: a sixth
#: of a Rankings page run after a slider move), and 7 kB of every figure sent to the browser.
TEMPLATE = "simplex_white"
_TEMPLATE_TRACES = ("bar", "box", "heatmap", "histogram", "mesh3d", "scatter", "scatter3d", "scatterternary")


def _register_template() -> None:
    white = pio.templates["plotly_white"]
    data = {kind: getattr(white.data, kind) for kind in _TEMPLATE_TRACES if getattr(white.data, kind, None)}
    pio.templates[TEMPLATE] = go.layout.Template(layout=white.layout, data=data)


_register_template()


# -- input checks ----------------------------------------------------------------------------------

def require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{what} is missing column(s) {', '.join(repr(c) for c in missing)}; "
            f"found {', '.join(repr(str(c)) for c in frame.columns)}."
        )




def ternary_abc(p: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Ternary a/b/c arrays from distributions over (lowest, middle, highest) level."""
    return {axis: p[..., i] for i, axis in enumerate(geometry.TERNARY_AXIS_OF_LEVEL)}


def ternary_layout(level_labels: Sequence[str]) -> dict:
    axes = {}
    for i, axis in enumerate(geometry.TERNARY_AXIS_OF_LEVEL):
        axes[f"{axis}axis"] = dict(
            # no tick label at the corners, where "0%" and "100%" ran into the corner's level name
            title=dict(text=f"<b>{safe_text(level_labels[i])}</b>"), min=0, tickformat=".0%",
            tickmode="array", tickvals=[0.2, 0.4, 0.6, 0.8],
            linecolor="#444", gridcolor="#e5e5e5", ticks="outside",
        )
    return dict(sum=1, bgcolor="white", **axes)


def default_true_labels(level_labels: Sequence[str], n_true: int) -> list[str]:
    if n_true == len(level_labels):
        return list(level_labels)
    if n_true == 2:
        return [level_labels[0], level_labels[-1]]
    return [f"true level {m + 1}" for m in range(n_true)]


def distribution_hover(level_labels: Sequence[str], offset: int = 0) -> str:
    return "<br>".join(f"{safe_text(lab)}: %{{customdata[{offset + i}]:.1%}}" for i, lab in enumerate(level_labels))



def check_levels(level_labels: Sequence[str], n: int) -> list[str]:
    labels = [str(x) for x in level_labels]
    if len(labels) != n:
        raise ValueError(f"level_labels must name the {n} observed levels (lowest first); got {labels}.")
    return labels

def cycle(items: Sequence[str], n: int) -> list[str]:
    return [items[i % len(items)] for i in range(n)]


# -- user text -------------------------------------------------------------------------------------

def safe_text(text: object) -> str:
    """``text`` made safe to print in a Plotly figure (labels, legend, hover, titles, ticks).

    Plotly renders a subset of HTML in every text (``<a href>``, ``<b>``, ``<br>``), and reads
    ``%{...}`` in hover templates as a placeholder; a candidate or judge name is data, never markup.
    ``<``, ``>`` and ``&`` become entities (drawn as the characters themselves) and ``%{`` is
    broken with an entity brace.

    Parameters
    ----------
    text : object
        Any value; converted with ``str``.

    Returns
    -------
    str
    """
    s = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace("%{", "%&#123;")


def safe_texts(items) -> list[str]:
    """:func:`safe_text` of every item."""
    return [safe_text(x) for x in items]


#: Most characters of a name drawn as an axis label or a legend key (hover shows the whole name).
LABEL_CHARS = 40


def short_label(text: object, limit: int = LABEL_CHARS) -> str:
    """``text`` as a :func:`safe_text` label of at most ``limit`` characters, cut in the middle
    (:func:`shorten`): a tick label or legend key; the hover keeps the whole name.

    Why: a 200-character candidate name took 85% of a slide's width as a tick label and pushed a
    legend past the page's edge."""
    return safe_text(shorten(text, limit, middle=True))


# -- labels that neither collide nor leave the plot ------------------------------------------------

#: Plotly text positions with the direction (dx, dy) in which each moves its text from the point.
TEXT_POSITIONS: dict[str, tuple[float, float]] = {
    "top center": (0.0, 1.0), "bottom center": (0.0, -1.0), "middle right": (1.0, 0.0), "middle left": (-1.0, 0.0),
    "top right": (0.75, 0.75), "top left": (-0.75, 0.75), "bottom right": (0.75, -0.75), "bottom left": (-0.75, -0.75),
}


def label_box(xy: NDArray[np.float64], text: str, position: str, *, char_w: float, line_h: float,
              gap: float) -> tuple[float, float, float, float]:
    """The box ``(x0, y0, x1, y1)`` a text of ``len(text)`` characters occupies at ``position``
    from the point ``xy`` (units of the plot; ``char_w``, ``line_h`` and ``gap`` in those units)."""
    dx, dy = TEXT_POSITIONS[position]
    w, h = char_w * max(len(text), 1), line_h
    cx = xy[0] + dx * (gap + w / 2) if dx else xy[0]
    cy = xy[1] + dy * (gap + h / 2) if dy else xy[1]
    if dx and dy:  # a corner position: the text's nearest corner sits just off the point
        cx, cy = xy[0] + np.sign(dx) * (gap * 0.7 + w / 2), xy[1] + np.sign(dy) * (gap * 0.7 + h / 2)
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(w, 0.0) * max(h, 0.0)


def place_labels(points: NDArray[np.float64], texts: Sequence[str], inside, *, char_w: float, line_h: float,
                 gap: float, preferred: Sequence[str] | None = None, avoid: NDArray[np.float64] | None = None,
                 taken: list | None = None, required: bool = False, loose=None,
                 overlap_cost: float = 10.0) -> list[str | None]:
    """Greedy label placement: for each point, the text position whose box stays ``inside`` the
    plot, overlaps no label placed before (nor the ``taken`` boxes) and covers no point of ``avoid``.

    Parameters
    ----------
    points : array, shape (n, 2)
        Label anchors in plot units.
    texts : sequence of str
    inside : callable (x0, y0, x1, y1) -> bool
        Whether a box lies in the plot area.
    char_w, line_h, gap : float
        Character width, line height and the marker gap, in plot units.
    preferred : sequence of str, optional
        Each point's first choice (tried first; default "top center").
    avoid : array, shape (m, 2), optional
        Marker centres that no label may cover.
    taken : list of boxes, optional
        Boxes already used (e.g. by other labels); the chosen boxes are appended to it.
    required : bool
        Always choose a position (the least bad: inside the plot first, then fewest overlaps);
        otherwise a label that fits nowhere gets ``None``.
    loose : callable, optional
        A wider area than ``inside`` that a required label may use rather than overlap another
        (with ``overlap_cost`` above its cost).
    overlap_cost : float
        Cost of each overlap with a label placed before (leaving ``inside`` costs 1000, ``loose``
        100 less).

    Returns
    -------
    list of (str or None)
        The chosen position per point, ``None`` where none fits (the caller leaves that label off
        the plot: the legend and the hover still name it).
    """
    placed = taken if taken is not None else []
    out: list[str | None] = []
    marks = np.zeros((0, 2)) if avoid is None else np.asarray(avoid, dtype=float).reshape(-1, 2)
    r = gap * 0.6  # a marker's half size
    for i, (xy, text) in enumerate(zip(np.asarray(points, dtype=float), texts)):
        first = preferred[i] if preferred is not None else "top center"
        best, best_cost, best_box = None, None, None
        for pos in [first] + [p for p in TEXT_POSITIONS if p != first]:
            box = label_box(xy, text, pos, char_w=char_w, line_h=line_h, gap=gap)
            covered = ((marks[:, 0] > box[0] - r) & (marks[:, 0] < box[2] + r)
                       & (marks[:, 1] > box[1] - r) & (marks[:, 1] < box[3] + r))
            out_cost = 0 if inside(box) else (900 if loose is not None and loose(box) else 1000)
            cost = out_cost + overlap_cost * sum(_overlap(box, b) > 0 for b in placed) + int(covered.sum())
            if best_cost is None or cost < best_cost:
                best, best_cost, best_box = pos, cost, box
            if cost == 0:
                break
        if best_cost == 0 or (required and best is not None):
            placed.append(best_box)
            out.append(best)
        else:
            out.append(None)
    return out


class LabelBox(TypedDict):
    """Label metrics in the plot's units: a character's width, a line's height, the gap to the point
    (the keywords of :func:`place_labels` and :func:`ternary_tick_label_boxes`)."""

    char_w: float
    line_h: float
    gap: float


#: Label metrics on a simplex of side 1, for a triangle about 330 px wide (a half-width column at a
#: 1024-px window; wider plots only give more room): 11-px text, 10-px markers.
TERNARY_LABEL_BOX: LabelBox = {"char_w": 0.02, "line_h": 0.045, "gap": 0.026}
LABEL_HALO = "0px 0px 3px white"  # labels stay legible over lines and dots


def outward_position(xy: NDArray[np.float64], centre: NDArray[np.float64]) -> str:
    """The text position pointing away from ``centre`` (the nearest of the eight)."""
    d = np.asarray(xy, dtype=float) - np.asarray(centre, dtype=float)
    if np.hypot(*d) < 1e-9:
        return "top center"
    angle = np.degrees(np.arctan2(d[1], d[0])) % 360
    names = ["middle right", "top right", "top center", "top left", "middle left", "bottom left", "bottom center", "bottom right"]
    return names[int(((angle + 22.5) % 360) // 45)]


def outward_positions(points: NDArray[np.float64]) -> list[str]:
    """For the corners of a polygon (plot units, shape (n, 2)), the text position that puts each
    corner's label outside the polygon: away from its centroid, so no edge runs through a label."""
    xy = np.asarray(points, dtype=float)
    return [outward_position(p, xy.mean(axis=0)) for p in xy]


def label_rows(x: Sequence[float] | NDArray[np.float64], texts: Sequence[str], char_w: float, gap: float = 0.0) -> list[int]:
    """Rows (0 = nearest the points) for labels centred at ``x`` on one line, so that no two labels
    in a row overlap: each label takes the lowest row whose labels end before it starts (``char_w``
    and ``gap`` in the units of ``x``)."""
    ends: list[float] = []  # per row, where its last label ends
    rows = [0] * len(texts)
    for i in np.argsort(np.asarray(x, dtype=float), kind="stable"):
        half = char_w * max(len(texts[i]), 1) / 2
        start = float(x[i]) - half
        row = next((r for r, e in enumerate(ends) if e + gap <= start), len(ends))
        if row == len(ends):
            ends.append(0.0)
        ends[row] = float(x[i]) + half
        rows[i] = row
    return rows


def ternary_xy(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Plot position (side 1, lowest level bottom-left, highest on top) of distributions over
    (lowest, middle, highest) level."""
    return geometry.simplex_to_cartesian(np.asarray(p, dtype=float))


def inside_triangle(box: tuple[float, float, float, float], tol: float = 0.0) -> bool:
    """Whether a box lies inside the unit-side simplex triangle (grown by ``tol``)."""
    h = np.sqrt(3.0) / 2.0
    for x, y in ((box[0], box[1]), (box[2], box[1]), (box[0], box[3]), (box[2], box[3])):
        if y < -tol or y > h + tol:
            return False
        # left edge y = √3 x, right edge y = √3 (1 - x); grow both by tol (perpendicular ≈ tol)
        if y > np.sqrt(3.0) * x + 2 * tol or y > np.sqrt(3.0) * (1.0 - x) + 2 * tol:
            return False
    return True


def wrap_words(text: str, max_chars: int) -> list[str]:
    """``text`` broken at spaces into lines of at most ``max_chars`` characters (a longer word keeps
    its own line)."""
    return textwrap.wrap(text, max_chars, break_long_words=False, break_on_hyphens=False) or [text]


def wrap_title(fig, width_px: float = NARROW_FIGURE_PX) -> None:
    """Break a figure's long one-line title into lines that fit ``width_px`` (by default the main
    column of a 1024-px window, where long titles were cut at the figure's right edge), growing
    the top margin by the added lines; in place. A title already broken with ``<br>`` is kept."""
    text = fig.layout.title.text
    if not text or "<br>" in text:
        return
    size = float(fig.layout.title.font.size or 1.4 * float(fig.layout.font.size or 12))
    max_chars = max(int(width_px / (0.55 * size)), 20)
    if len(text) <= max_chars:
        return
    lines = wrap_words(text, max_chars)
    fig.update_layout(title_text="<br>".join(lines),
                      margin_t=int((fig.layout.margin.t or 80) + (len(lines) - 1) * 1.3 * size + 8))
    if fig.layout.title.yanchor == "top":
        # Plotly places a several-line title anchored at the top about 0.7 of a line per added line
        # too high (measured: the first line of a two-line title cut at the figure's top edge)
        pad = fig.layout.title.pad.t or 0
        fig.update_layout(title_pad_t=int(pad + (len(lines) - 1) * 0.75 * size + 2))


def ternary_tick_label_boxes(char_w: float, line_h: float, gap: float,
                             ticks: Sequence[float] = (0.2, 0.4, 0.6, 0.8)) -> list[tuple[float, float, float, float]]:
    """Boxes (side units) of a ternary's tick labels ("80%") outside its three sides, as
    :func:`ternary_layout` draws them: the top level's along the left side, the middle level's along
    the right side, the lowest level's under the base. A label placed with these in ``taken`` keeps
    off them."""
    h = np.sqrt(3.0) / 2.0
    w, off = 3.2 * char_w, 0.6 * gap + 0.012  # "80%", and the tick's length plus a margin
    boxes = []
    for v in ticks:
        y = v * h  # left side: top level v
        boxes.append((0.5 * v - off - w, y - line_h / 2, 0.5 * v - off, y + line_h / 2))
        x, y = 0.5 + 0.5 * v, (1 - v) * h  # right side: middle level v
        boxes.append((x + off, y - line_h / 2, x + off + w, y + line_h / 2))
        boxes.append((1 - v - w / 2, -off - line_h, 1 - v + w / 2, -off))  # base: lowest level v
    return boxes


def wrap_subplot_titles(fig, width_px: float = NARROW_FIGURE_PX) -> None:
    """Break subplot titles (``make_subplots``' centred annotations above the panels) into lines
    that fit their panel's share of ``width_px``, so that titles of neighbouring panels never run
    into each other in a narrow window; the top margin grows by the added lines. In place."""
    anns = [a for a in fig.layout.annotations
            if a.xref == "paper" and a.yref == "paper" and a.yanchor == "bottom" and a.xanchor == "center"
            and not a.showarrow and a.text and "<br>" not in a.text]
    added = 0
    for a in anns:
        row = sorted(float(b.x) for b in anns if abs(float(b.y) - float(a.y)) < 1e-6)
        gaps = [abs(x - float(a.x)) for x in row if abs(x - float(a.x)) > 1e-6]
        share = min(gaps) if gaps else 1.0  # the distance to the next title's centre
        size = float(a.font.size or fig.layout.font.size or 12) * 1.1
        max_chars = max(int(0.85 * share * width_px / (0.55 * size)), 10)
        if len(a.text) <= max_chars:
            continue
        lines = wrap_words(a.text, max_chars)
        a.text = "<br>".join(lines)
        added = max(added, int((len(lines) - 1) * 1.3 * size + 8))
    if added:
        fig.update_layout(margin_t=int((fig.layout.margin.t or 80) + added))
