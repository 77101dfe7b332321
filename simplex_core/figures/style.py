"""The figures' shared style: one colour-blind-safe palette, small layout helpers, input checks, and
the one place that makes user text safe to print in a Plotly figure.

Colours come from the Okabe & Ito (2008) palette (:data:`OKABE_ITO`); ordered levels use Viridis.
Ternary drawings place the levels as :mod:`simplex_core.geometry` does: lowest level bottom-left
(ternary axis ``b``), middle level bottom-right (``c``), highest level at the top (``a``).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from plotly.colors import sample_colorscale

from simplex_core import geometry

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
            title=dict(text=f"<b>{level_labels[i]}</b>"), min=0, tickformat=".0%", dtick=0.2,
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
    return "<br>".join(f"{lab}: %{{customdata[{offset + i}]:.1%}}" for i, lab in enumerate(level_labels))



def check_levels(level_labels: Sequence[str], n: int) -> list[str]:
    labels = [str(x) for x in level_labels]
    if len(labels) != n:
        raise ValueError(f"level_labels must name the {n} observed levels (lowest first); got {labels}.")
    return labels

def cycle(items: Sequence[str], n: int) -> list[str]:
    return [items[i % len(items)] for i in range(n)]
