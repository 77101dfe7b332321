"""Plotly figure builders for the app, the reports and the paper's figures.

Every builder takes precomputed arrays or tidy tables (from :mod:`simplex_core.summaries.posterior_tables`,
:mod:`simplex_core.methods.baselines`, :mod:`simplex_core.studies.sensitivity`, :mod:`simplex_core.data.table` or
:mod:`simplex_core.model.geometry`) and returns a :class:`plotly.graph_objects.Figure`; none fits,
samples or reads files. Traces carry ``meta = {"role": ...}`` (plus e.g. ``"draw"`` or
``"judge"``) so pages and tests can find them without relying on trace order.

The package is split by idea; every name is re-exported here:

- :mod:`~simplex_core.figures.style`: palette, layout helpers, input checks, safe text;
- :mod:`~simplex_core.figures.simplex`: judges on the simplex (triangles and segments);
- :mod:`~simplex_core.figures.results`: rankings, leaderboard, pairwise, sensitivity, PPC, score distributions;
- :mod:`~simplex_core.figures.judge_panel`: leave-one-judge-out;
- :mod:`~simplex_core.figures.geometry_lab`: the Geometry lab's teaching figures.
"""

from simplex_core.figures.geometry_lab import (
    VERTEX_COLORS, augmented_simplex_figure, barycentric_area_figure, flip_figure, flip_score_curve_figure,
    segment_order_figure,
)
from simplex_core.figures.judge_panel import leave_one_judge_out_figure
from simplex_core.figures.results import (
    leaderboard_figure, pairwise_heatmap_figure, ppc_figure, rank_boxplot_figure, rank_interval_shift_figure,
    reweighted_sensitivity_figure, score_distribution_figure,
    sensitivity_curve_figure,
)
from simplex_core.figures.simplex import (
    JudgeSimplex, judge_observed_table, segment_judge_figure, ternary_judge_figure, ternary_judge_figures,
    ternary_judges_overlay_figure,
)
from simplex_core.figures.style import (
    CANDIDATE_COLOR, GRID_GREY, JUDGE_COLOR, MARKER_SYMBOLS, OKABE_ITO, POSTERIOR_POINT_COLOR, REFERENCE_COLOR,
    SERIES_COLORS, level_colors, series_colors,
)

__all__ = [
    "OKABE_ITO",
    "SERIES_COLORS",
    "JUDGE_COLOR",
    "CANDIDATE_COLOR",
    "POSTERIOR_POINT_COLOR",
    "REFERENCE_COLOR",
    "GRID_GREY",
    "MARKER_SYMBOLS",
    "VERTEX_COLORS",
    "series_colors",
    "level_colors",
    "JudgeSimplex",
    "judge_observed_table",
    "ternary_judge_figure",
    "ternary_judges_overlay_figure",
    "ternary_judge_figures",
    "segment_judge_figure",
    "rank_boxplot_figure",
    "leaderboard_figure",
    "pairwise_heatmap_figure",
    "sensitivity_curve_figure",
    "reweighted_sensitivity_figure",
    "rank_interval_shift_figure",
    "ppc_figure",
    "score_distribution_figure",
    "leave_one_judge_out_figure",
    "barycentric_area_figure",
    "segment_order_figure",
    "flip_figure",
    "flip_score_curve_figure",
    "augmented_simplex_figure",
]
