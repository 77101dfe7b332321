"""The rubric note: the paper's identifiability conditions and the measured effect of fewer levels."""

from __future__ import annotations

import json

import numpy as np
import pytest

from simplex_core.data.scale import Scale
from simplex_core.data.table import load_table
from simplex_core.model.settings import FitSettings
from simplex_core.model.simulate import simulate
from simplex_core.studies.rubric import collapse_mapping, identifiability_text, rubric_note


def test_collapse_mapping_groups_contiguous_levels_evenly():
    assert collapse_mapping((1.0, 2.0, 3.0, 4.0, 5.0), 2) == {1.0: 0, 2.0: 0, 3.0: 0, 4.0: 1, 5.0: 1}
    assert collapse_mapping((1.0, 2.0, 3.0, 4.0, 5.0), 3) == {1.0: 0, 2.0: 0, 3.0: 1, 4.0: 1, 5.0: 2}
    assert collapse_mapping((0.0, 1.0, 2.0, 3.0), 2) == {0.0: 0, 1.0: 0, 2.0: 1, 3.0: 1}


@pytest.mark.parametrize("n_true, J, K, gold, identified", [
    (2, 1, 3, 0, True), (2, 2, 4, 0, True), (2, 3, 3, 0, False), (3, 9, 10, 0, False), (5, 3, 8, 12, True),
])
def test_identifiability_follows_the_papers_theorems(n_true, J, K, gold, identified):
    ok, text = identifiability_text(n_true, J, K, gold)
    assert ok is identified
    assert ("theorem 1" in text) == (n_true == 2) and ("theorem 2" in text) == (n_true > 2)


@pytest.fixture(scope="module")
def five_level_table():
    scale = Scale(tuple(float(v) for v in range(1, 6)), tuple(str(v) for v in range(1, 6)))
    sim = simulate(scale=scale, n_items=40, candidates=4, judges=3, rho=0.8, rng=12)
    return load_table(sim.frame, scale=sim.scale)


def test_rubric_note_fits_the_collapsed_tables(five_level_table):
    note = rubric_note(five_level_table, FitSettings(chains=2, draws=300, tune=300, seed=2))
    assert note["levels"] == 5 and note["identified"] is False and "no gold answers" in note["conditions"]
    assert [c["levels"] for c in note["collapsed"]] == [3, 2]
    assert note["collapsed"][1]["mapping"] == {"1": 0, "2": 0, "3": 0, "4": 1, "5": 1}
    for c in [note] + note["collapsed"]:
        assert 0 <= c["mean_rank_width"] <= 3  # 4 candidates: widths are hi − lo ranks
    for c in note["collapsed"]:
        assert -1 <= c["spearman_vs_full"] <= 1 and isinstance(c["converged"], bool)
    json.dumps(note, allow_nan=False)


def test_two_levels_need_no_collapse():
    scale = Scale((0.0, 1.0), ("0", "1"))
    sim = simulate(scale=scale, n_items=30, candidates=4, judges=2, rng=1)
    note = rubric_note(load_table(sim.frame, scale=sim.scale), FitSettings(chains=2, draws=200, tune=200))
    assert note["identified"] is True and note["collapsed"] == []
    assert np.isfinite(note["mean_rank_width"])


def test_fit_rubric_note_adds_the_section(five_level_table, tmp_path, capsys):
    from simplex_core.cli import main

    data, out = tmp_path / "data.csv", tmp_path / "result.json"
    five_level_table.frame.to_csv(data, index=False)
    assert main(["fit", str(data), "--levels", "1,2,3,4,5", "--out", str(out), "--rubric-note", "--chains", "2",
                 "--draws", "300", "--tune", "300", "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert [c["levels"] for c in doc["rubric"]["collapsed"]] == [3, 2]
    assert "--rubric-note" in doc["settings"]["command_line"]
    assert "collapsed to 2 levels: mean width" in capsys.readouterr().out
