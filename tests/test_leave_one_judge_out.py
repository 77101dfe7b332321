"""Leave-one-judge-out: refits without each judge, compared with the full ranking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simplex_core.data.scale import Scale
from simplex_core.data.table import load_table
from simplex_core.model.settings import FitSettings
from simplex_core.model.simulate import simulate
from simplex_core.studies.leave_one_judge_out import COLUMNS, leave_one_judge_out

SCALE = Scale((0.0, 1.0, 2.0), ("0", "1", "2"))
SMALL = FitSettings(chains=2, draws=500, tune=500, seed=3)


def _confusion(accuracy: float) -> np.ndarray:
    return np.full((3, 3), (1 - accuracy) / 2) + np.eye(3) * (accuracy - (1 - accuracy) / 2)


@pytest.fixture(scope="module")
def panel_table():
    theta = np.stack([_confusion(0.9), _confusion(0.85), _confusion(0.8), np.full((3, 3), 1 / 3)])
    pi = np.array([[0.1, 0.3, 0.6], [0.2, 0.4, 0.4], [0.4, 0.4, 0.2], [0.6, 0.3, 0.1], [0.3, 0.3, 0.4]])
    sim = simulate(scale=SCALE, n_items=60, candidates=5, judges=["good", "fair", "ok", "noise"], theta=theta,
                   pi=pi, rng=4)
    return load_table(sim.frame, scale=sim.scale)


def test_one_row_per_judge_and_the_noise_judge_changes_least(panel_table):
    messages = []
    result = leave_one_judge_out(panel_table, SMALL, progress_callback=lambda m, f: messages.append((m, f)))
    assert list(result.columns) == list(COLUMNS)
    assert list(result["judge"]) == list(panel_table.judges)
    assert result["converged"].all()
    assert len(messages) == 5 and messages[-1][1] == 1.0  # the full fit and four without one judge
    assert result["spearman_vs_full"].between(-1, 1).all()
    by = result.set_index("judge")
    assert by.loc["noise", "spearman_vs_full"] >= 0.9  # noise carries nothing the ranking rests on
    # without the best judge the ranking is less sure than without the noise
    assert by.loc["good", "width_change"] > by.loc["noise", "width_change"]
    np.testing.assert_allclose(by["width_change"], by["mean_rank_width"] - by["full_mean_rank_width"])
    assert (by["full_mean_rank_width"] == by["full_mean_rank_width"].iloc[0]).all()

    from simplex_core.figures.judge_panel import leave_one_judge_out_figure

    fig = leave_one_judge_out_figure(result, title="x")
    roles = [t.meta["role"] for t in fig.data]
    assert roles == ["spearman", "width", "full_width"]
    assert list(fig.data[0].x) == list(result["spearman_vs_full"])


def test_a_judge_that_alone_scored_a_candidate_is_not_refitted():
    rows = []
    for i in range(12):
        for c in ("a", "b", "c"):
            judges = ("j1",) if c == "c" else ("j1", "j2", "j3")
            rows += [{"item": f"q{i}", "candidate": c, "judge": j, "score": (i + len(c) + n) % 3}
                     for n, j in enumerate(judges)]
    table = load_table(pd.DataFrame(rows), scale=SCALE)
    result = leave_one_judge_out(table, FitSettings(chains=2, draws=200, tune=200)).set_index("judge")
    assert result.loc["j1", "note"].startswith("not refitted:") and "'c'" in result.loc["j1", "note"]
    assert np.isnan(result.loc["j1", "spearman_vs_full"])
    assert result.loc[["j2", "j3"], "spearman_vs_full"].notna().all()


def test_one_judge_is_refused():
    rows = [{"item": f"q{i}", "candidate": c, "judge": "j1", "score": i % 3} for i in range(5) for c in ("a", "b")]
    with pytest.raises(ValueError, match="at least 2 judges"):
        leave_one_judge_out(load_table(pd.DataFrame(rows), scale=SCALE), SMALL)


def test_cli_writes_the_table_and_the_figure(panel_table, tmp_path, capsys):
    from simplex_core.cli import main

    data = tmp_path / "data.csv"
    panel_table.frame.to_csv(data, index=False)
    out, fig = tmp_path / "loo.csv", tmp_path / "loo.html"
    code = main(["leave-one-judge-out", str(data), "--levels", "0,1,2", "--out", str(out), "--figure", str(fig),
                 "--workers", "0", "--chains", "2", "--draws", "300", "--tune", "300", "--quiet"])
    assert code == 0
    table = pd.read_csv(out)
    assert list(table["judge"]) == ["good", "fair", "ok", "noise"]
    assert "<html>" in fig.read_text() and "plotly" in fig.read_text()
    printed = capsys.readouterr().out
    assert "without noise: Spearman" in printed and "wrote" in printed
    assert main(["leave-one-judge-out", str(data), "--out", str(out), "--figure", str(tmp_path / "x.png"),
                 "--workers", "0"]) == 2
