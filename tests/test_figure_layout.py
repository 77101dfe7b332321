"""Figures read at a glance: drawing order, opacity, labels that neither collide nor
leave the plot, user names printed as text (never markup), and the slide/paper pages."""

from __future__ import annotations

import io

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from simplex_core import figures as F
from simplex_core.figures import slides as S
from simplex_core.figures.style import inside_triangle, label_box, safe_text

LEVELS = ["low", "mid", "high"]
LINK = "<a href='x'>z</a>"


def _roles(fig: go.Figure) -> list[str]:
    return [t.meta.get("role") if isinstance(t.meta, dict) else None for t in fig.data]


def _data(names, seed=5, crowded=False):
    rng = np.random.default_rng(seed)
    if crowded:  # every candidate near one corner: labels must give way rather than pile up
        shares = np.array([[0.9 - 0.01 * i, 0.05 + 0.01 * i, 0.05] for i in range(len(names))])
    else:
        shares = rng.dirichlet([2, 2, 2], size=len(names))
    observed = pd.DataFrame(shares, index=names, columns=LEVELS)
    base = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]])
    draws = np.stack([[rng.dirichlet(40 * row) for row in base] for _ in range(40)])
    post = np.stack([[rng.dirichlet(100 * g + 1) for g in shares] for _ in range(20)])
    return observed, draws, post


def _label_boxes(trace, char_w=0.02):
    return [label_box(np.asarray(xy), t, p, char_w=char_w, line_h=0.045, gap=0.026)
            for xy, t, p in zip(trace.meta["xy"], trace.text, trace.meta["positions"])]


@pytest.mark.parametrize("crowded", [False, True])
def test_candidates_are_drawn_above_faint_triangle_outlines(crowded):
    names = [f"model-{i}" for i in range(11)]
    observed, draws, post = _data(names, crowded=crowded)
    fig = F.ternary_judge_figure(observed, LEVELS, draws, draws.mean(axis=0), post, judge="J")
    roles = _roles(fig)
    last_draw = roles.index("theta_draws")
    # bottom to top: outlines, bold mean, candidates' posterior dots, observed points, labels
    assert last_draw < roles.index("theta_mean") < roles.index("candidate_posterior") < roles.index("candidates")
    assert roles.index("candidates") < roles.index("vertex_labels")
    for t in fig.data:
        if isinstance(t.meta, dict) and t.meta.get("role") == "theta_draws":
            assert t.fill in (None, "none")
            assert float(t.line.color.rsplit(",", 1)[1].rstrip(")")) <= 0.3
    # every candidate is named on the figure: a legend key each, with its own (colour, shape)
    keys = [t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("role") == "candidate_key"]
    assert [k.name for k in keys] == names
    assert len({(k.marker.color, k.marker.symbol) for k in keys}) == len(names)
    assert "#0072B2" not in {k.marker.color for k in keys}  # the judge's blue is not a candidate's


@pytest.mark.parametrize("crowded", [False, True])
def test_labels_stay_inside_the_triangle_and_never_overlap(crowded):
    names = [f"candidate-{i}" for i in range(9)]
    observed, draws, _ = _data(names, seed=11, crowded=crowded)
    fig = F.ternary_judge_figure(observed, LEVELS, draws, draws.mean(axis=0))
    boxes = []
    for t in fig.data:
        if isinstance(t.meta, dict) and t.meta.get("role") in ("vertex_labels", "candidate_labels"):
            boxes += _label_boxes(t)
            if t.meta["role"] == "candidate_labels":
                assert all(inside_triangle(b, 0.02) for b in _label_boxes(t))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1]), (a, b)
    if crowded:  # eleven names cannot all fit at one corner: some are left to the legend
        (labels,) = [t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("role") == "candidate_labels"]
        assert 0 < len(labels.text) < len(names)


def test_vertex_labels_of_close_vertices_merge_into_one():
    observed, _, _ = _data(["a", "b"])
    mean = np.array([[0.8, 0.1, 0.1], [0.2, 0.2, 0.6], [0.21, 0.2, 0.59]])  # mid and high nearly equal
    fig = F.ternary_judge_figure(observed, LEVELS, theta_mean=mean)
    (labels,) = [t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("role") == "vertex_labels"]
    assert list(labels.text) == ["θ: low", "θ: mid = high"]
    xy = np.asarray(labels.meta["xy"])
    assert np.hypot(*(xy[0] - xy[1])) > 0.07  # no two vertex labels within a few pixels


@pytest.mark.parametrize("x", [(0.62, 0.66), (0.05, 0.1), (0.9, 0.97), (0.1, 0.9), (0.4, 0.45)])
def test_segment_vertex_labels_never_collide_nor_leave_the_axis(x):
    anns = F.simplex.segment_vertex_annotations(np.array(x), ["θ: incorrect", "θ: correct"], 10.0)
    for a in anns:  # a label extends towards the middle near an axis end
        assert (a["xanchor"] == "left") if a["x"] < 0.3 else True
        assert (a["xanchor"] == "right") if a["x"] > 0.7 else True
    left, right = sorted(anns, key=lambda a: a["x"])
    apart = left["xanchor"] == "right" and right["xanchor"] == "left"
    assert apart or left["ay"] != right["ay"]  # otherwise on two lines


def test_user_names_are_text_not_markup():
    assert safe_text(LINK) == "&lt;a href='x'&gt;z&lt;/a&gt;"
    assert safe_text("%{x} & co") == "%&#123;x} &amp; co"
    observed, draws, post = _data(["plain", LINK])
    fig = F.ternary_judge_figure(observed, LEVELS, draws, draws.mean(axis=0), post, judge=LINK)
    ranks = F.rank_boxplot_figure(pd.DataFrame({"method": ["m"] * 4, "candidate": ["plain", LINK] * 2, "rank": [1, 2, 2, 1]}),
                                  ["plain", LINK])
    seg = F.segment_judge_figure(pd.DataFrame({"no": [0.3, 0.6], "yes": [0.7, 0.4]}, index=["plain", LINK]), ["no", "yes"])
    for f in (fig, ranks, seg):
        # what Plotly renders (meta and legend-group ids are never drawn)
        shown = f.to_dict()
        for t in shown["data"]:
            t.pop("meta", None)
            t.pop("legendgroup", None)
        text = json.dumps(shown, default=str)
        assert "<a href" not in text and "&lt;a href='x'&gt;z&lt;/a&gt;" in text


def _rendered(fig: go.Figure) -> str:
    """What Plotly renders of a figure as JSON text (meta and legend-group ids are never drawn)."""
    shown = fig.to_dict()
    shown["layout"].pop("meta", None)
    for t in shown["data"]:
        t.pop("meta", None)
        t.pop("legendgroup", None)
    return json.dumps(shown, default=str)


def _geometry_figures(levels: list[str]) -> dict[str, go.Figure]:
    """One figure of each simplex and Geometry-lab family, with ``levels`` and a name that is a link."""
    from simplex_core.model import identifiability

    observed, draws, post = _data(["plain", "other"])
    observed.columns = levels
    ex = identifiability.canonical_flip_example()
    conf = identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, 0.05)
    return {
        "ternary": F.ternary_judge_figure(observed, levels, draws, draws.mean(axis=0), post),
        "grid": S.ternary_judges_grid_figure({"j": F.JudgeSimplex(observed, None, draws, draws.mean(axis=0), post)}, levels),
        "areas": F.barycentric_area_figure(ex.Theta, ex.gamma1, levels),
        "segment order": F.segment_order_figure(0.2, 0.8, [0.3, 0.5], ["plain", LINK], level_labels=("low", LINK)),
        "flip": F.flip_figure(conf.Theta_h, ex.gamma1, ex.gamma2, names=("plain", LINK), level_labels=levels, h=0.05),
        "flip curve": F.flip_score_curve_figure(np.linspace(-0.1, 0.1, 5), np.ones((5, 2)), names=("plain", LINK)),
        "augmented": F.augmented_simplex_figure(conf.Theta_h, ex.values, conf.pi, ["plain", LINK], level_labels=levels),
    }


def test_user_level_labels_and_names_are_text_in_every_figure_family():
    """Level labels (a user's --levels) and names reach axis titles, vertex labels and hovers of the
    simplex and the Geometry lab's figures as text, never as a link."""
    escaped = safe_text(LINK)
    for name, fig in _geometry_figures(["low", LINK, "high"]).items():
        text = _rendered(fig)
        assert "<a href" not in text, name
        assert escaped in text, name  # the label is still there, as text


def test_figures_look_as_with_plotly_white_for_every_trace_type_they_draw():
    """The slim template keeps plotly_white's layout and its defaults for each trace type drawn."""
    import plotly.io as pio

    white = pio.templates["plotly_white"]
    rows = [(m, f"c{k}", r) for m in ("bayesian", "bootstrap") for k in range(4) for r in (k + 1, k + 2)]
    figs = {**_geometry_figures(LEVELS),
            "ranks": F.rank_boxplot_figure(pd.DataFrame(rows, columns=["method", "candidate", "rank"]),
                                           [f"c{k}" for k in range(4)])}
    kinds = set()
    for name, fig in figs.items():
        template = fig.layout.template
        assert template.layout == white.layout, name
        for trace in fig.data:
            kinds.add(trace.type)
            assert getattr(template.data, trace.type) == getattr(white.data, trace.type), (name, trace.type)
    assert {"scatter", "scatterternary", "scatter3d", "box"} <= kinds  # the families above drew these


def test_rank_figure_is_compact_enough_for_a_slide():
    rows = [(m, f"c{k}", r) for m in ("bayesian", "bootstrap", "bt", "ppi") for k in range(9) for r in (k + 1, k + 2)]
    fig = F.rank_boxplot_figure(pd.DataFrame(rows, columns=["method", "candidate", "rank"]), [f"c{k}" for k in range(9)])
    assert fig.layout.height <= 720
    assert fig.layout.legend.orientation == "v" and fig.layout.legend.x >= 1.0  # one column beside the plot


def test_slide_pages_carry_size_title_and_caption():
    observed, draws, post = _data(["a", "b", "c"])
    judges = {j: F.JudgeSimplex(observed, None, draws, draws.mean(axis=0), post) for j in ("j1", "j2", LINK)}
    grid = S.ternary_judges_grid_figure(judges, LEVELS)
    assert {t.meta["panel"] for t in grid.data} == {0, 1, 2}
    assert sum(bool(t.showlegend) for t in grid.data) == sum(bool(t.showlegend) for t in grid.data if t.meta["panel"] == 0)
    from simplex_core.model.settings import FitSettings

    caption = S.figure_caption("hanna · coherence", FitSettings(omega=2.0, beta_max=5.0, likelihood="shared-truth"))
    assert "hanna · coherence" in caption and "ω = 2, β_max = 5" in caption and "likelihood: shared-truth" in caption
    for size, (w, h) in S.PAGE_SIZES.items():
        page = S.for_slides(grid, "Judges", caption, size=size)
        assert page.layout.title.subtitle.text == caption and "Judges" in page.layout.title.text
        assert page.layout.width == w and page.layout.height >= h
        if size == "paper":  # three judges on a narrow page: two columns, the page grows downwards
            assert page.layout.height > h
            domains = [page.layout[f"ternary{'' if i == 0 else i + 1}"].domain for i in range(3)]
            assert domains[0].x[1] < domains[1].x[0] and domains[0].y == domains[1].y
            assert domains[2].y[1] < domains[0].y[0]  # the third panel in a row of its own
        else:
            assert page.layout.height == h
    assert grid.layout.width == 1280  # the original is untouched (laid out for a slide)
    with pytest.raises(ValueError, match="size must be one of 16:9, paper"):
        S.for_slides(grid, "x", "y", size="4:3")


# -- the judges grid for slides: nothing overlaps, nothing leaves the page ---------------------------

def _grid_judges(J, levels, K=7, prefix="gpt-3.5-turbo-0613/"):
    rng = np.random.default_rng(J)
    names = ["Original Ground Truth", "Argmax Decoding", "Nucleus Decoding (p = 0.3)", "Nucleus Decoding (p = 0.5)",
             "Nucleus Decoding (p = 0.7)", "New Human Generated", "Other"][:K]
    L = len(levels)
    out = {}
    for j in range(J):
        shares = rng.dirichlet([2] * L, size=K)
        base = np.eye(L) * 0.6 + 0.4 / L
        if j % 3 == 1:  # two vertices close together at a corner (HANNA's ChatGPT)
            base = np.array([[0.9, 0.07, 0.03], [0.82, 0.15, 0.03], [0.1, 0.2, 0.7]])[:L, :L] if L == 3 else base
        draws = np.stack([[rng.dirichlet(40 * row) for row in base] for _ in range(6)])
        out[f"{prefix}prompt_{j}_{'x' * (j % 4 * 6)}"] = F.JudgeSimplex(
            pd.DataFrame(shares, index=names, columns=levels), None, draws, draws.mean(axis=0), None)
    return out


def _plot_box(page):
    m = page.layout.margin
    return float(m.l), float(m.t), page.layout.width - float(m.l) - float(m.r), page.layout.height - float(m.t) - float(m.b)


def _px(page, x, y):
    """Paper coordinates to page pixels (y down)."""
    l, t, w, h = _plot_box(page)
    return l + x * w, t + (1 - y) * h


def _text_box(cx, cy_top, text, font, bold=False):
    w = len(text) * font * (S.BOLD_CHAR_W if bold else S.CHAR_W)
    return (cx - w / 2, cy_top, cx + w / 2, cy_top + 1.2 * font)


def _grid_text_boxes(page):
    """Per panel, the page-pixel boxes of what Plotly draws as text around and in a ternary panel:
    the panel title, the three corners' level names (Plotly's placement: the top level above the apex,
    the others centred beside the bottom corners), and the θ and name labels inside the triangle."""
    meta = page.layout.meta["judges_grid"]
    f = S.GRID_FONTS[meta["size"]]
    titles = {a.name: a for a in page.layout.annotations if (a.name or "").startswith("panel-title-")}
    panels = []
    for i in range(meta["n"]):
        t = page.layout["ternary" if i == 0 else f"ternary{i + 1}"]
        x0, y1 = _px(page, t.domain.x[0], t.domain.y[0])
        x1, y0 = _px(page, t.domain.x[1], t.domain.y[1])
        side = x1 - x0
        assert abs((y1 - y0) - side * np.sqrt(3) / 2) < 1.0  # the domain is the triangle: Plotly fills it
        A = f["axis"]
        assert not t.aaxis.showticklabels and not t.baxis.showticklabels and not t.caxis.showticklabels
        bpad = S.TICKLEN + 3  # Plotly's, without tick labels
        apad = 0.87 * S.TICKLEN
        levels = meta["levels"]
        boxes = {
            "a-title": _text_box((x0 + x1) / 2, y0 - A / 3 - apad - 0.9 * A, levels[2], A, True),
            "b-title": _text_box(x0 - bpad, y1 + 0.83 * A + bpad - 0.9 * A, levels[0], A, True),
            "c-title": _text_box(x1 + bpad, y1 + 0.83 * A + bpad - 0.9 * A, levels[1], A, True),
        }
        a = titles[f"panel-title-{i}"]
        tx, ty = _px(page, a.x, a.y)
        boxes["title"] = _text_box(tx, ty, a.text.replace("<b>", "").replace("</b>", ""), f["panel"], True)
        inner = []
        for tr in page.data:
            if isinstance(tr.meta, dict) and tr.meta.get("panel") == i and tr.meta.get("role") in ("vertex_labels", "candidate_labels"):
                for xy, text, pos in zip(tr.meta["xy"], tr.text, tr.meta["positions"]):
                    bx = label_box(np.asarray(xy), text, pos, **tr.meta["box"])  # side units, y up
                    inner.append((tr.meta["role"], (x0 + bx[0] * side, y1 - bx[3] * side, x0 + bx[2] * side, y1 - bx[1] * side)))
        panels.append(dict(domain=(x0, y0, x1, y1), boxes=boxes, inner=inner))
    return panels


def _apart(a, b, px=2.0):
    return a[2] + px <= b[0] or b[2] + px <= a[0] or a[3] + px <= b[1] or b[3] + px <= a[1]


@pytest.mark.parametrize("size", ["16:9", "paper"])
@pytest.mark.parametrize("J", [1, 2, 3, 5, 7, 9, 12, 20])
def test_judges_grid_text_neither_overlaps_nor_leaves_the_page(J, size):
    levels = ["no", "somewhat", "yes"]
    grid = S.ternary_judges_grid_figure(_grid_judges(J, levels), levels, size=size)
    page = S.for_slides(grid, "Judges on the simplex", "topical-chat · coherence-by-prompt · ω = 0, β_max = 5", size=size)
    W, H = page.layout.width, page.layout.height
    assert W == S.PAGE_SIZES[size][0]
    if size == "16:9":
        assert H == S.PAGE_SIZES[size][1]
    panels = _grid_text_boxes(page)
    outer = []
    for i, p in enumerate(panels):
        x0, y0, x1, y1 = p["domain"]
        assert x1 - x0 > 90  # a triangle still worth reading
        for name, b in p["boxes"].items():  # inside the page, and above the legend's room
            assert b[0] >= 0 and b[2] <= W and b[1] >= 0 and b[3] <= H - page.layout.margin.b + 4, (i, name, b)
            outer.append((i, name, b))
        # the panel title sits above the top level's name, which sits above the triangle and its θ labels
        assert p["boxes"]["title"][3] <= p["boxes"]["a-title"][1] + 1
        assert all(p["boxes"]["title"][3] <= b[1] for _, b in p["inner"])
        for _, a in p["inner"]:  # θ and name labels: off the panel's own title and level names
            assert all(_apart(a, b, 0.0) for b in p["boxes"].values()), (i, a)
        for k, (_, a) in enumerate(p["inner"]):  # θ and name labels: apart from each other
            for _, b in p["inner"][k + 1:]:
                assert _apart(a, b, 0.0), (i, a, b)
        assert any(r == "vertex_labels" for r, _ in p["inner"])
        for q in panels[i + 1:]:  # panels' triangles do not overlap
            assert _apart(p["domain"], q["domain"], 10.0)
    for k, (i, n1, a) in enumerate(outer):  # no two texts around the panels within 2 px
        for j, n2, b in outer[k + 1:]:
            assert _apart(a, b), (i, n1, a, j, n2, b)
    for k, p in enumerate(panels):  # nor a panel's text over another panel's triangle or labels
        for i, name, b in outer:
            if name == "title":
                assert _apart(b, p["domain"], 0.0)
            assert all(_apart(b, box, 0.0) for _, box in p["inner"]), (k, i, name)
    short = [t for t in page.data if isinstance(t.meta, dict) and t.meta.get("role") == "vertex_labels"
             and any(x.startswith("θ₁") or x.startswith("θ₂") for x in t.text)]
    if short:  # small triangles: θ₁, θ₂, θ₃ on the plot, the caption says which is which
        assert "θ₁: no, θ₂: somewhat, θ₃: yes" in page.layout.title.subtitle.text.replace("<br>", " ")
    if J == 1:
        return
    # the judges' shared model is said once, in the caption; the panels are titled by the rest
    assert "panels: judges gpt-3.5-turbo-0613/" in page.layout.title.subtitle.text.replace("<br>", " ")
    assert all("gpt-3.5" not in a.text for a in page.layout.annotations if (a.name or "").startswith("panel-title-"))


@pytest.mark.parametrize("J", [1, 3, 9, 12])
def test_segment_grid_panels_and_names_stay_apart(J):
    levels = ["incorrect", "correct"]
    grid = S.ternary_judges_grid_figure(_grid_judges(J, levels), levels)
    page = S.for_slides(grid, "Judges on the segment", "triviaqa-v1 · correctness", size="16:9")
    boxes = []
    for i in range(J):
        k = "" if i == 0 else str(i + 1)
        x0, y1 = _px(page, page.layout[f"xaxis{k}"].domain[0], page.layout[f"yaxis{k}"].domain[0])
        x1, y0 = _px(page, page.layout[f"xaxis{k}"].domain[1], page.layout[f"yaxis{k}"].domain[1])
        names = list(page.layout[f"yaxis{k}"].ticktext)
        assert len(set(names)) == len(names)  # names cut in the middle stay apart ("Nucleus…(p = 0.3)")
        left = max(len(t) for t in names) * S.GRID_FONTS["16:9"]["tick"] * S.CHAR_W
        boxes.append((x0 - left - 6, y0 - 50, x1, y1))  # the names left, the vertex labels above
        assert (y1 - y0) / (len(names) + 1.2) >= S.GRID_FONTS["16:9"]["tick"]  # a row per name, legible
        assert x0 - left - 6 >= 0 and x1 <= page.layout.width
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert _apart(a, b, 0.0), (a, b)


def test_geometry_lab_vertex_labels_sit_outside_the_judge_triangle():
    """A vertex's label points away from the triangle's centre, so no edge runs through it; the
    axes carry no corner tick labels (they ran into the corners' level names)."""
    from simplex_core.model import identifiability
    from simplex_core.figures.style import TEXT_POSITIONS, ternary_xy

    ex = identifiability.canonical_flip_example()
    conf = identifiability.flip_configuration(ex.Theta, ex.gamma1, ex.gamma2, 0.05)
    V = np.asarray(identifiability.DEFAULT_FLIP_THETA)
    for fig, role, verts in ((F.barycentric_area_figure(V, [0.2, 0.4, 0.4], LEVELS), "vertices", V),
                             (F.flip_figure(conf.Theta_h, ex.gamma1, ex.gamma2, level_labels=LEVELS), "theta_h", conf.Theta_h)):
        (t,) = [t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("role") == role]
        xy = ternary_xy(np.asarray(verts))
        away = xy - xy.mean(axis=0)
        for pos, d in zip(t.textposition, away):
            assert np.dot(TEXT_POSITIONS[pos], d) > 0, (pos, d)
        assert list(fig.layout.ternary.aaxis.tickvals) == [0.2, 0.4, 0.6, 0.8]


@pytest.mark.parametrize("gammas", [(0.35, 0.50, 0.62), (0.40, 0.41, 0.42), (0.1, 0.5, 0.9)])
def test_segment_order_names_never_overlap_and_avoid_the_judges_blue(gammas):
    names = ["candidate A", "candidate B", "candidate C"]
    fig = F.segment_order_figure(0.2, 0.85, list(gammas), names)
    (true,) = [t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("role") == "candidates_true"]
    labels = [a for a in fig.layout.annotations if a.name == "candidate_label"]
    assert [a.text for a in labels] == list(true.text)
    lo, hi = fig.layout.xaxis.range
    char_w = 6.5 * (hi - lo) / (560 - 230)  # the figure's narrow-page character width
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if a.yshift == b.yshift:  # same row: apart by the half widths of both names
                assert abs(a.x - b.x) >= char_w * (len(a.text) + len(b.text)) / 2
    if max(gammas) - min(gammas) < 0.1:
        assert len({a.yshift for a in labels}) == 3  # crowded: one row each
    assert "#0072B2" not in set(true.marker.color)


def test_a_long_caption_wraps_to_the_page():
    caption = " · ".join(["triviaqa-v1 · correctness", "ω = 0, β_max = 5", "likelihood: shared-truth",
                          "prior: weight-propagation", "base setting above; ω swept at β_max = 5 and β_max at ω = 0"])
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    wide, paper = S.for_slides(fig, "T", caption, size="16:9"), S.for_slides(fig, "T", caption, size="paper")
    lines = paper.layout.title.subtitle.text.split("<br>")
    assert len(lines) >= 2 and all(len(l) <= 110 for l in lines)  # about 5.5 px a character on 530 px
    assert " · ".join(lines) == caption  # broken at the separators, nothing lost
    assert "<br>" not in wide.layout.title.subtitle.text  # a slide holds it on one line
    assert paper.layout.margin.t > S.for_slides(fig, "T", "short", size="paper").layout.margin.t


def test_a_long_figure_title_wraps_to_a_narrow_window():
    from simplex_core.figures.style import NARROW_FIGURE_PX, wrap_title

    title = "TriviaQA 'Judging the Judges' V1 · correctness: leaderboard (ω = 0, β_max = 5, shared-truth likelihood)"
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]), layout=dict(title_text=title, margin_t=60, font_size=12))
    wrap_title(fig)
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) >= 2 and " ".join(lines) == title  # nothing lost
    assert all(len(l) * 0.55 * 1.4 * 12 <= NARROW_FIGURE_PX for l in lines)
    assert fig.layout.margin.t > 60  # room for the added lines
    short = go.Figure(layout=dict(title_text="Short", margin_t=60))
    wrap_title(short)
    assert short.layout.title.text == "Short" and short.layout.margin.t == 60


def test_a_wrapped_title_anchored_at_the_top_stays_inside_the_figure():
    """Plotly lifts a several-line title anchored at its top by part of a line per added line: the
    first line of a wrapped ranking title was cut at the figure's top edge. Measured in pixels on
    the exported image."""
    pytest.importorskip("kaleido")
    from PIL import Image

    from simplex_core.figures.style import wrap_title

    title = "TriviaQA 'Judging the Judges' V1 · correctness: rank distributions (ω = 0, β_max = 5, shared-truth likelihood)"
    fig = go.Figure(go.Scatter(x=[1, 2], y=[1, 2]))
    fig.update_layout(title=dict(text=title, x=0.0, xanchor="left", y=1.0, yref="container", yanchor="top",
                                 pad=dict(t=10)), width=700, height=400, margin=dict(t=60))
    wrap_title(fig, 700)
    assert len(fig.layout.title.text.split("<br>")) == 2
    image = np.asarray(Image.open(io.BytesIO(fig.to_image(format="png"))).convert("L"))
    first_ink = int(np.where((image < 200).any(axis=1))[0][0])
    assert first_ink >= 5, f"the title starts {first_ink} px below the top edge"


@pytest.mark.parametrize("high", [[0.02, 0.18, 0.80], [0.3, 0.02, 0.68], [0.05, 0.05, 0.9], [0.01, 0.6, 0.39]])
def test_theta_labels_keep_off_the_tick_labels(high):
    """A vertex near a side puts its θ label inside, or beside the side between the tick labels,
    never over a tick label ("θ: high (4-5)" was printed over "20%")."""
    from simplex_core.figures.style import TERNARY_LABEL_BOX, ternary_tick_label_boxes

    levels = ["low (1-2)", "mid (3)", "high (4-5)"]
    observed, _, _ = _data(["Human", "GPT-2"])
    observed.columns = levels
    mean = np.array([[0.9, 0.08, 0.02], [0.3, 0.6, 0.1], high])
    fig = F.ternary_judge_figure(observed, levels, theta_mean=mean)
    (labels,) = [t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("role") == "vertex_labels"]
    ticks = ternary_tick_label_boxes(**TERNARY_LABEL_BOX)
    for box in _label_boxes(labels):
        assert all(_apart(box, t, 0.0) for t in ticks), box


def test_subplot_titles_wrap_so_that_neighbours_never_meet():
    from plotly.subplots import make_subplots

    from simplex_core.figures.style import NARROW_FIGURE_PX, wrap_subplot_titles

    titles = ("relaxing constancy: ω (β_max = 5)", "judge-quality prior: β_max (ω = 0)")
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles)
    fig.update_layout(margin_t=60)
    wrap_subplot_titles(fig)
    left, right = fig.layout.annotations
    half = lambda a: max(len(l) for l in a.text.split("<br>")) * 0.55 * 1.1 * 12 / 2  # noqa: E731
    assert (right.x - left.x) * NARROW_FIGURE_PX >= half(left) + half(right)  # apart on a 560-px figure
    assert [a.text.replace("<br>", " ") for a in (left, right)] == list(titles)
    assert fig.layout.margin.t > 60
