"""Figure builders: trace types and counts, and that what is drawn is exactly the data given."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from simplex_core import figures as F
from simplex_core.model import geometry as G
from simplex_core.model import identifiability

LEVELS = ["incorrect", "partial", "correct"]
NAMES = ["alpha", "beta", "gamma", "delta"]


def _by_role(fig: go.Figure, role: str) -> list:
    return [t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("role") == role]


def _levels_from_ternary(trace) -> np.ndarray:
    """Distributions over (lowest, middle, highest) level from a trace's a/b/c arrays."""
    cols = {axis: np.asarray(getattr(trace, axis), dtype=float) for axis in "abc"}
    return np.column_stack([cols[axis] for axis in G.TERNARY_AXIS_OF_LEVEL])


def _draw_shapes(points: np.ndarray) -> list[np.ndarray]:
    """The polylines of a ``theta_draws`` trace: its points split at the NaN rows that end each."""
    points = np.asarray(points, dtype=float).reshape(len(points), -1)
    ends = np.flatnonzero(np.isnan(points).all(axis=1))
    assert ends.size and ends[-1] == len(points) - 1
    return [points[a + 1:b] for a, b in zip(np.r_[-1, ends[:-1]], ends)]


@pytest.fixture
def judge_data():
    rng = np.random.default_rng(7)
    counts = pd.DataFrame([[20, 10, 70], [50, 30, 20], [33, 33, 34], [10, 60, 30]], index=NAMES, columns=LEVELS)
    observed = counts.div(counts.sum(axis=1), axis=0)
    base = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]])
    draws = np.stack([[rng.dirichlet(50 * row) for row in base] for _ in range(30)])
    post = np.stack([[rng.dirichlet(200 * g + 1) for g in observed.to_numpy()] for _ in range(30)])
    return observed, counts, draws, post


# -- the judge on the simplex ----------------------------------------------------------------------

def test_posterior_triangles_are_exactly_the_theta_draws(judge_data):
    observed, counts, draws, post = judge_data
    fig = F.ternary_judge_figure(observed, LEVELS, draws, draws.mean(axis=0), post, counts=counts, max_draws=12)
    (tri,) = _by_role(fig, "theta_draws")  # one trace for all draws: one legend entry
    assert len(tri.meta["draws"]) == len(set(tri.meta["draws"])) == 12
    # outlines only, faint: forty of them must not stack into an opaque block
    assert isinstance(tri, go.Scatterternary) and tri.fill in (None, "none") and tri.mode == "lines"
    assert float(tri.line.color.split(",")[-1].rstrip(")")) <= 0.3
    shapes = _draw_shapes(_levels_from_ternary(tri))
    assert len(shapes) == 12
    for s, outline in zip(tri.meta["draws"], shapes):
        np.testing.assert_allclose(outline, np.vstack([draws[s], draws[s][:1]]))


def test_draw_indices_choose_the_draws(judge_data):
    observed, counts, draws, _ = judge_data
    fig = F.ternary_judge_figure(observed, LEVELS, draws, draw_indices=[3, 17, 29])
    (tri,) = _by_role(fig, "theta_draws")
    assert tri.meta["draws"] == [3, 17, 29]
    np.testing.assert_allclose(_draw_shapes(_levels_from_ternary(tri))[1][:3], draws[17])
    with pytest.raises(ValueError, match=r"draw_indices must lie in 0\.\.29; got \[30\]"):
        F.ternary_judge_figure(observed, LEVELS, draws, draw_indices=[30])


def test_candidate_points_lie_on_the_simplex_with_counts_on_hover(judge_data):
    observed, counts, draws, post = judge_data
    fig = F.ternary_judge_figure(observed, LEVELS, draws, draws.mean(axis=0), post, counts=counts)
    (cand,) = _by_role(fig, "candidates")
    pts = _levels_from_ternary(cand)
    np.testing.assert_allclose(pts.sum(axis=1), 1.0)
    np.testing.assert_allclose(pts, observed.to_numpy())
    assert list(cand.text) == NAMES
    custom = np.asarray(cand.customdata, dtype=float)
    np.testing.assert_allclose(custom[:, 3:6], counts.to_numpy())  # counts per level
    np.testing.assert_allclose(custom[:, 6], 100)  # n
    assert "%{text}" in cand.hovertemplate and "n = " in cand.hovertemplate
    (posterior,) = _by_role(fig, "candidate_posterior")
    ppts = _levels_from_ternary(posterior)
    assert ppts.shape == (30 * len(NAMES), 3)
    np.testing.assert_allclose(ppts.sum(axis=1), 1.0)


def test_mean_triangle_is_bold_and_axes_carry_level_labels(judge_data):
    observed, _, draws, _ = judge_data
    mean = draws.mean(axis=0)
    fig = F.ternary_judge_figure(observed, LEVELS, draws, mean)
    (mean_trace,) = _by_role(fig, "theta_mean")
    np.testing.assert_allclose(_levels_from_ternary(mean_trace), np.vstack([mean, mean[:1]]))
    assert mean_trace.line.width > _by_role(fig, "theta_draws")[0].line.width
    tern = fig.layout.ternary
    assert LEVELS[2] in tern.aaxis.title.text and LEVELS[0] in tern.baxis.title.text and LEVELS[1] in tern.caxis.title.text


def test_binary_truth_draws_segments():
    labels = ["incorrect", "abstain", "correct"]
    observed = pd.DataFrame([[0.3, 0.1, 0.6], [0.5, 0.2, 0.3]], index=["a", "b"], columns=labels)
    rng = np.random.default_rng(1)
    draws = np.stack([[rng.dirichlet([30, 3, 3]), rng.dirichlet([3, 3, 30])] for _ in range(10)])
    fig = F.ternary_judge_figure(observed, labels, draws, draws.mean(axis=0))
    (segs,) = _by_role(fig, "theta_draws")
    assert segs.fill == "none" and "lines" in segs.mode and len(segs.meta["draws"]) == 10
    shapes = _draw_shapes(_levels_from_ternary(segs))
    assert [len(v) for v in shapes] == [2] * 10
    for s, segment in zip(segs.meta["draws"], shapes):
        np.testing.assert_allclose(segment, draws[s])
    (mean_trace,) = _by_role(fig, "theta_mean")
    assert len(mean_trace.a) == 2
    assert list(mean_trace.text) == ["θ: incorrect", "θ: correct"]


def test_rows_that_are_not_distributions_are_refused(judge_data):
    _, counts, _, _ = judge_data
    with pytest.raises(ValueError, match=r"the rows for alpha, beta, gamma, delta are not distributions"):
        F.ternary_judge_figure(counts, LEVELS)
    with pytest.raises(ValueError, match=r"level_labels must name the 3 observed levels"):
        F.ternary_judge_figure(counts / 100, LEVELS[:2])


def test_overlay_gives_one_colour_per_judge_and_side_by_side_one_figure_each(judge_data):
    observed, counts, draws, _ = judge_data
    judges = {"j1": F.JudgeSimplex(observed, counts, draws, draws.mean(axis=0)),
              "j2": F.JudgeSimplex(observed, counts, draws[:, ::-1], draws[:, ::-1].mean(axis=0))}
    fig = F.ternary_judges_overlay_figure(judges, LEVELS, max_draws=5)
    means = _by_role(fig, "theta_mean")
    assert [t.meta["judge"] for t in means] == ["j1", "j2"]
    assert means[0].line.color != means[1].line.color
    assert [len(t.meta["draws"]) for t in _by_role(fig, "theta_draws")] == [5, 5]
    assert {t.meta["judge"] for t in _by_role(fig, "candidates")} == {"j1", "j2"}
    figs = F.ternary_judge_figures(judges, LEVELS, max_draws=4)
    assert list(figs) == ["j1", "j2"]
    assert all([len(t.meta["draws"]) for t in _by_role(f, "theta_draws")] == [4] for f in figs.values())


def test_judge_observed_table_pivots_the_score_distribution():
    dist = pd.DataFrame({
        "judge": ["j"] * 6, "candidate": ["a"] * 3 + ["b"] * 3, "level": [0, 1, 2] * 2,
        "label": ["lo", "mid", "hi"] * 2, "count": [1, 1, 2, 0, 3, 1],
    })
    observed, counts = F.judge_observed_table(dist, "j")
    assert list(observed.columns) == ["lo", "mid", "hi"] and list(observed.index) == ["a", "b"]
    np.testing.assert_allclose(observed.to_numpy(), [[0.25, 0.25, 0.5], [0, 0.75, 0.25]])
    np.testing.assert_array_equal(counts.to_numpy(), [[1, 1, 2], [0, 3, 1]])
    with pytest.raises(ValueError, match=r"judge 'x' is not in the table"):
        F.judge_observed_table(dist, "x")


def test_segment_figure_for_two_levels():
    observed = pd.DataFrame({"wrong": [0.7, 0.4, 0.2], "right": [0.3, 0.6, 0.8]}, index=["a", "b", "c"])
    draws = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.8, 0.2], [0.1, 0.9]], [[0.85, 0.15], [0.3, 0.7]]])
    fig = F.segment_judge_figure(observed, ["wrong", "right"], draws, draws.mean(axis=0))
    (segs,) = _by_role(fig, "theta_draws")
    shapes = _draw_shapes(np.column_stack([segs.x, segs.y]))
    assert segs.meta["draws"] == [0, 1, 2] and len(shapes) == 3
    for s, segment in zip(segs.meta["draws"], shapes):
        np.testing.assert_allclose(segment[:, 0], draws[s, :, 1])  # P(top level) of each vertex
        assert segment[0, 1] == segment[1, 1]  # a horizontal segment in the judge's row
    assert list(segs.marker.symbol) == ["circle-open", "circle", "circle"] * 3
    (cand,) = _by_role(fig, "candidates")
    np.testing.assert_allclose(cand.x, [0.3, 0.6, 0.8])
    assert np.all((np.asarray(cand.x) >= 0) & (np.asarray(cand.x) <= 1))
    assert "right" in fig.layout.xaxis.title.text


# -- rankings ----------------------------------------------------------------------------------------

@pytest.fixture
def rank_table():
    rows = []
    # Bayesian draws for 'a' are 1, 1, 2, 3 (hand-checked quantiles below)
    for c, ranks in {"a": [1, 1, 2, 3], "b": [2, 2, 1, 1], "c": [3, 3, 3, 2]}.items():
        rows += [("Bayesian", c, r) for r in ranks]
        rows += [("bootstrap", c, r) for r in sorted(ranks)[:3]]
        rows += [("Bradley-Terry", c, r) for r in ranks[::-1]]
        rows += [("PPI", c, r) for r in ranks]
    rows += [("simple average", c, r) for c, r in zip("abc", [1, 2, 3])]
    rows += [("single judge", c, r) for c, r in zip("abc", [2, 1, 3])]
    return pd.DataFrame(rows, columns=["method", "candidate", "rank"])


def test_rank_boxplot_has_one_box_per_interval_method(rank_table):
    fig = F.rank_boxplot_figure(rank_table, ["a", "b", "c"], pd.Series({"a": 1, "b": 2, "c": 3}), {"PPI": True})
    boxes = [t for t in fig.data if isinstance(t, go.Box)]
    assert [b.meta["method"] for b in boxes] == ["Bayesian", "bootstrap", "Bradley-Terry", "PPI"]
    assert all(b.orientation == "h" for b in boxes)
    assert fig.layout.boxmode == "group"
    points = _by_role(fig, "rank_point")
    assert [p.meta["method"] for p in points] == ["simple average", "single judge"]
    np.testing.assert_allclose(points[1].x, [2, 1, 3])
    (true,) = _by_role(fig, "true_rank")
    np.testing.assert_allclose(true.x, [1, 2, 3])
    assert list(true.y) == ["a", "b", "c"]
    bayes = boxes[0]
    i = list(bayes.y).index("a")
    # ranks 1, 1, 2, 3: median 1.5, quartiles 1 and 2.25; 95% whiskers 1 and 3, the tables' rank
    # interval (ranks that occurred), not the interpolated 2.925
    assert (bayes.median[i], bayes.q1[i], bayes.q3[i]) == pytest.approx((1.5, 1.0, 2.25))
    assert (bayes.lowerfence[i], bayes.upperfence[i]) == pytest.approx((1.0, 3.0))


def test_rank_box_whiskers_are_the_stated_rank_intervals():
    from simplex_core.model.ranks import rank_interval

    rng = np.random.default_rng(5)
    draws = np.argsort(np.argsort(-(rng.normal(size=(4000, 6)) + np.linspace(0, 2.5, 6)), axis=1), axis=1) + 1.0
    names = [f"c{k}" for k in range(6)]
    long = pd.DataFrame(draws, columns=names).melt(var_name="candidate", value_name="rank").assign(method="Bayesian")
    (box,) = [t for t in F.rank_boxplot_figure(long, names[::-1]).data if isinstance(t, go.Box)]
    lo, hi = rank_interval(draws)
    at = {c: list(box.y).index(c) for c in names}
    np.testing.assert_array_equal([box.lowerfence[at[c]] for c in names], lo)
    np.testing.assert_array_equal([box.upperfence[at[c]] for c in names], hi)


def test_ppi_is_styled_apart_and_candidates_keep_the_given_order(rank_table):
    fig = F.rank_boxplot_figure(rank_table, ["c", "a", "b"], uses_labels={"PPI": True})
    ppi = [t for t in fig.data if isinstance(t, go.Box) and t.meta["method"] == "PPI"][0]
    other = [t for t in fig.data if isinstance(t, go.Box) and t.meta["method"] == "Bayesian"][0]
    assert ppi.name == "PPI (uses labels)" and ppi.meta["uses_labels"]
    assert ppi.fillcolor != other.fillcolor
    assert list(fig.layout.yaxis.categoryarray) == ["c", "a", "b"]
    assert fig.layout.yaxis.autorange == "reversed"  # first candidate at the top
    assert not _by_role(fig, "true_rank")


def test_a_long_name_is_drawn_short_with_its_start_and_end_and_hover_keeps_it_whole(rank_table):
    from simplex_core.figures.style import LABEL_CHARS, short_label

    assert short_label("GPT-4o mini") == "GPT-4o mini"
    assert short_label("x" * LABEL_CHARS) == "x" * LABEL_CHARS
    long = "meta-llama/" + "x" * 180 + "-70B-Instruct"
    short = short_label(long)
    assert len(short) == LABEL_CHARS and short.startswith("meta-llama/x") and short.endswith("-70B-Instruct")
    assert "…" in short
    assert short_label("<b>" + "y" * 60).startswith("&lt;b&gt;")  # shortened first, then made safe
    table = rank_table.replace({"candidate": {"a": long}})
    fig = F.rank_boxplot_figure(table, [long, "b", "c"])
    assert list(fig.layout.yaxis.tickvals) == list(fig.layout.yaxis.categoryarray) == [long, "b", "c"]
    assert list(fig.layout.yaxis.ticktext) == [short, "b", "c"]
    assert long in [y for t in fig.data for y in (t.y or ())]  # the data (and so the hover) keep the whole name



def test_the_pairwise_and_score_share_figures_draw_long_names_short_too():
    from simplex_core.figures.style import short_label

    long = "judge-me/" + "L" * 150
    pw = pd.DataFrame([[0.5, 0.9], [0.1, 0.5]], index=[long, "b"], columns=[long, "b"])
    fig = F.pairwise_heatmap_figure(pw)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert list(axis.tickvals) == [long, "b"] and list(axis.ticktext) == [short_label(long), "b"]
    assert list(fig.data[0].y) == [long, "b"]  # cells and hover keep the whole name
    dist = pd.DataFrame([(j, c, v, 0.5, 1, 2) for j in ("j1",) for c in (long, "b") for v in (1.0, 2.0)],
                        columns=["judge", "candidate", "level", "share", "count", "n"])
    fig = F.score_distribution_figure(dist)
    assert list(fig.layout.yaxis.ticktext) == [short_label(long), "b"]
    assert long in [y for t in fig.data for y in (t.y or ()) if y is not None]

def test_rank_boxplot_errors(rank_table):
    with pytest.raises(ValueError, match=r"missing from candidate_order: \['c'\]"):
        F.rank_boxplot_figure(rank_table, ["a", "b"])
    with pytest.raises(ValueError, match=r"rank_draws is missing column\(s\) 'rank'"):
        F.rank_boxplot_figure(rank_table.drop(columns="rank"), ["a", "b", "c"])


def test_pairwise_heatmap_blanks_the_diagonal():
    pw = pd.DataFrame([[0.5, 0.9, 0.8], [0.1, 0.5, 0.3], [0.2, 0.7, 0.5]], index=list("abc"), columns=list("abc"))
    fig = F.pairwise_heatmap_figure(pw, order=["b", "a", "c"])
    (hm,) = fig.data
    z = np.array(hm.z, dtype=float)
    assert np.isnan(np.diag(z)).all()
    assert list(hm.y) == ["b", "a", "c"]
    assert z[0, 1] == pytest.approx(0.1)  # P(b beats a)
    assert (hm.zmin, hm.zmax) == (0.0, 1.0)


# -- sensitivity ------------------------------------------------------------------------------------

def _sweep():
    rows = [(o, 5.0, 1 - 0.01 * o) for o in (0, 1, 2, 4, 8)] + [(0.0, b, 1 - 0.001 * abs(b - 5)) for b in (0, 1, 10, 20)]
    return pd.DataFrame(rows, columns=["omega", "beta_max", "spearman_vs_base"])


def test_sensitivity_curves_in_two_panels():
    fig = F.sensitivity_curve_figure(_sweep())
    traces = _by_role(fig, "sensitivity")
    (om,) = [t for t in traces if t.meta["sweep"] == "omega"]
    (bm,) = [t for t in traces if t.meta["sweep"] == "beta_max"]
    np.testing.assert_allclose(om.x, [0, 1, 2, 4, 8])
    np.testing.assert_allclose(om.y, [1, 0.99, 0.98, 0.96, 0.92])
    np.testing.assert_allclose(bm.x, [0, 1, 5, 10, 20])  # the base setting belongs to both sweeps
    assert om.xaxis == "x" and bm.xaxis == "x2"


def test_sensitivity_curves_mark_settings_whose_fit_did_not_converge():
    sweep = _sweep().assign(converged=True)
    assert not F.sensitivity_curve_figure(sweep).layout.annotations  # nothing to say when every fit converged
    sweep.loc[(sweep["omega"] == 4) & (sweep["beta_max"] == 5), "converged"] = False
    fig = F.sensitivity_curve_figure(sweep)
    (om,) = [t for t in _by_role(fig, "sensitivity") if t.meta["sweep"] == "omega"]
    assert list(om.marker.symbol) == ["circle", "circle", "circle", "circle-open", "circle"]
    assert "NOT converged" in om.customdata[3] and om.customdata[0] == "" and om.meta["unconverged"] == 1
    assert any("1 fit NOT converged" in a.text for a in fig.layout.annotations)


def test_sensitivity_with_sweep_column_and_groups():
    a = _sweep().assign(dataset="A", sweep=lambda d: np.where(d["beta_max"] == 5.0, "omega", "beta_max"))
    b = a.assign(dataset="B")
    fig = F.sensitivity_curve_figure(pd.concat([a, b]), group="dataset")
    assert len(_by_role(fig, "sensitivity")) == 4
    with pytest.raises(ValueError, match=r"missing column\(s\) 'spearman_vs_base'"):
        F.sensitivity_curve_figure(_sweep().drop(columns="spearman_vs_base"))


def test_rank_interval_shift_has_one_trace_per_setting():
    base = pd.DataFrame({"candidate": list("abc"), "rank_median": [1.0, 2.0, 3.0],
                         "rank_lo": [1, 1, 2], "rank_hi": [2, 3, 3]})
    wide = base.assign(rank_lo=[1, 1, 1], rank_hi=[3, 3, 3])
    fig = F.rank_interval_shift_figure({"ω=0": base, "ω=8": wide})
    traces = _by_role(fig, "rank_interval")
    assert [t.meta["setting"] for t in traces] == ["ω=0", "ω=8"]
    np.testing.assert_allclose(traces[1].error_x.array, [2, 1, 0])
    np.testing.assert_allclose(traces[1].error_x.arrayminus, [0, 1, 2])
    assert list(fig.layout.yaxis.ticktext) == ["a", "b", "c"]


# -- PPC and data -----------------------------------------------------------------------------------

def _ppc():
    rows = []
    for j in ("j1", "j2"):
        for k in ("a", "b"):
            for lvl, lab, obs in zip((0, 1, 2), LEVELS, (0.2, 0.3, 0.5)):
                rows.append((j, k, lvl, lab, obs, obs + 0.01, obs - 0.05, obs + 0.05))
    return pd.DataFrame(rows, columns=["judge", "candidate", "level", "label", "observed", "fitted_mean", "fitted_lo", "fitted_hi"])


def test_ppc_single_pair_and_grid():
    one = F.ppc_figure(_ppc(), judge="j1", candidate="b")
    (obs,) = _by_role(one, "ppc_observed")
    (fit,) = _by_role(one, "ppc_fitted")
    assert list(obs.x) == LEVELS
    np.testing.assert_allclose(obs.y, [0.2, 0.3, 0.5])
    np.testing.assert_allclose(fit.error_y.array, [0.04, 0.04, 0.04])
    grid = F.ppc_figure(_ppc())
    scat = _by_role(grid, "ppc_scatter")
    assert len(scat) == 3 and all(len(t.x) == 4 for t in scat)  # one point per (judge, candidate)
    # the legend names each level with a plain circle and says what a cross means
    keys = _by_role(grid, "ppc_level_key")
    assert [k.marker.symbol for k in keys] == ["circle"] * 3 and not any(t.showlegend for t in scat)
    flagged = F.ppc_figure(_ppc().assign(misfit=lambda d: d.index % 5 == 0))
    (cross,) = _by_role(flagged, "ppc_misfit_key")
    assert cross.marker.symbol == "x" and "outside the 95% predictive range" in cross.name
    assert not _by_role(grid, "ppc_misfit_key")  # no cross drawn, none explained
    lo, hi = grid.layout.xaxis.range
    assert lo < 0 and hi > 1  # points at 0 and 1 are drawn whole
    with pytest.raises(ValueError, match=r"no rows for judge 'zz'"):
        F.ppc_figure(_ppc(), judge="zz")


def test_ppc_levels_named_by_label_keep_the_scale_order_and_its_colours():
    # the app's check names levels by label; sorted by name, "correct" took "incorrect"'s colour
    ppc = _ppc().query("level < 2").assign(level=lambda d: d["level"].map({0: "incorrect", 1: "correct"}),
                                           label=lambda d: d["level"])
    keys = _by_role(F.ppc_figure(ppc), "ppc_level_key")
    assert [k.name for k in keys] == ["level incorrect", "level correct"]
    assert [k.marker.color for k in keys] == F.level_colors(2)


def test_score_distribution_stacks_shares_per_judge():
    rows = []
    for j in ("j1", "j2", "j3", "j4"):
        for k, cnt in zip(("a", "b"), ([1, 1, 2], [0, 3, 1])):
            for lvl, lab, c in zip((0, 1, 2), ("lo", "mid", "hi"), cnt):
                rows.append((j, k, lvl, lab, c, j == "j1" and k == "a"))
    dist = pd.DataFrame(rows, columns=["judge", "candidate", "level", "label", "count", "self_family"])
    fig = F.score_distribution_figure(dist)
    bars = _by_role(fig, "score_share")
    assert len(bars) == 4 * 3 and fig.layout.barmode == "stack"
    j1 = [b for b in bars if b.meta["judge"] == "j1"]
    total = np.sum([np.asarray(b.x, dtype=float) for b in j1], axis=0)
    np.testing.assert_allclose(total, [1.0, 1.0])
    np.testing.assert_allclose(j1[1].x, [0.25, 0.75])  # the 'mid' level
    assert list(j1[0].marker.pattern.shape) == ["/", ""]  # the self-family pair is hatched
    assert [t.name for t in _by_role(fig, "legend")] == ["lo", "mid", "hi"]
    assert "hatched bars: self-family pairs" in fig.layout.title.subtitle.text  # the hatching explained
    # layout in pixels: title, legend and the first row's panel names in the top margin, in that order
    assert fig.layout.margin.t >= 40 + 22 + 30 and fig.layout.legend.yref == "container"
    assert (1 - fig.layout.legend.y) * fig.layout.height >= 40  # the legend starts below the title
    assert list(fig.layout.xaxis.tickvals) == [0.25, 0.5, 0.75]  # no "100%" running into the next "0%"


def test_score_distribution_panels_fit_a_narrow_page():
    """Long candidate names leave less room: fewer columns, and a long judge name is shortened in the
    middle (where names of one family differ) to the width of its panel."""
    judges = [f"gpt-3.5-turbo-0613/prompt_variant_{i}" for i in range(4)]
    rows = [(j, k, lvl, c) for j in judges for k in ("Nucleus Decoding (p = 0.3)", "b") for lvl, c in ((0, 1), (1, 2))]
    fig = F.score_distribution_figure(pd.DataFrame(rows, columns=["judge", "candidate", "level", "count"]))
    names = [a.text for a in fig.layout.annotations]
    assert len(names) == 4 and len(set(names)) == 4  # still told apart
    assert all(len(n) <= 30 and n.endswith(f"variant_{i}") and "…" in n for i, n in enumerate(names))
    assert max(fig.layout[k].domain[1] for k in fig.layout if k.startswith("xaxis")) > 0.9
    assert len({round(fig.layout[k].domain[0], 3) for k in fig.layout if k.startswith("xaxis")}) == 2  # two columns


# -- the Geometry lab -------------------------------------------------------------------------------

def test_barycentric_area_figure_shades_the_three_subtriangles():
    fig = F.barycentric_area_figure(np.eye(3), [0.2, 0.3, 0.5], LEVELS)
    subs = _by_role(fig, "subtriangle")
    assert [s.meta["level"] for s in subs] == [0, 1, 2]
    np.testing.assert_allclose([s.meta["pi"] for s in subs], [0.2, 0.3, 0.5])  # identity judge: pi = gamma
    for s in subs:
        m = s.meta["level"]
        b, c = [i for i in range(3) if i != m]
        np.testing.assert_allclose(_levels_from_ternary(s), [[0.2, 0.3, 0.5], np.eye(3)[b], np.eye(3)[c], [0.2, 0.3, 0.5]])
        assert f"{s.meta['pi']:.3f}" in s.name


def test_barycentric_area_figure_matches_barycentric_coordinates():
    V = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]])
    g = np.array([0.3, 0.35, 0.35])
    fig = F.barycentric_area_figure(V, g, LEVELS)
    shares = [s.meta["pi"] for s in _by_role(fig, "subtriangle")]
    np.testing.assert_allclose(shares, G.barycentric_coordinates(g, V))
    assert sum(shares) == pytest.approx(1.0)


def test_segment_order_figure_reverses_for_a_flipped_judge():
    gam = [0.3, 0.5, 0.65]
    kept = F.segment_order_figure(0.2, 0.8, gam, ["a", "b", "c"])
    flipped = F.segment_order_figure(0.8, 0.2, gam, ["a", "b", "c"])
    assert _by_role(kept, "candidates_true")[0].meta["ranks"] == [3, 2, 1]
    assert _by_role(flipped, "candidates_true")[0].meta["ranks"] == [1, 2, 3]
    np.testing.assert_allclose(_by_role(flipped, "candidates_true")[0].x, [5 / 6, 0.5, 0.25])
    assert "Label-flipping" in flipped.layout.title.text


def test_flip_figure_shows_the_moved_judge_and_scores():
    ex = identifiability.canonical_flip_example()
    cfg = identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, 0.03)
    fig = F.flip_figure(cfg.Theta_h, ex.gamma1, ex.gamma2, Theta_base=ex.Theta, h=0.03, level_labels=LEVELS)
    (moved,) = _by_role(fig, "theta_h")
    np.testing.assert_allclose(_levels_from_ternary(moved), np.vstack([cfg.Theta_h, cfg.Theta_h[:1]]))
    (cands,) = _by_role(fig, "candidates")
    np.testing.assert_allclose(cands.meta["expected_scores"], cfg.expected_scores)
    np.testing.assert_allclose(_levels_from_ternary(cands), [ex.gamma1, ex.gamma2])
    assert len(_by_role(fig, "theta_base")) == 1
    curve = F.flip_score_curve_figure([-0.03, 0.0, 0.03], [[2.1, 1.9], [2.0, 2.0], [1.9, 2.1]], h_current=0.03)
    assert len(_by_role(curve, "expected_score")) == 2


def test_augmented_simplex_heights_are_expected_scores():
    Theta = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]])
    pis = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    fig = F.augmented_simplex_figure(Theta, [1, 2, 3], pis, ["a", "b"], LEVELS)
    (mesh,) = _by_role(fig, "lifted_judge")
    assert isinstance(mesh, go.Mesh3d)
    np.testing.assert_allclose(mesh.z, [1, 2, 3])
    (lifted,) = _by_role(fig, "candidates_lifted")
    np.testing.assert_allclose(lifted.z, [2.3, 1.5])  # 0.2 + 0.6 + 1.5 and 0.6 + 0.6 + 0.3
    xy = G.simplex_to_cartesian(pis @ Theta)
    np.testing.assert_allclose(np.column_stack([lifted.x, lifted.y]), xy)
    binary = F.augmented_simplex_figure(Theta[[0, 2]], [0, 1], [[0.4, 0.6]], ["a"], LEVELS)
    (seg,) = _by_role(binary, "lifted_judge")
    assert isinstance(seg, go.Scatter3d) and len(seg.z) == 2
