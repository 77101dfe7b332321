"""Simulation-based calibration: the uniformity test on known ranks, and a tiny run end to end."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from simplex_core.studies.calibration import CalibrationSettings, calibrate, default_bins, rank_of, uniformity_test
from simplex_core.figures.calibration import rank_histogram_figure
from simplex_core.cli import main


# -- the uniformity test ------------------------------------------------------------------------

def test_uniform_ranks_pass_and_skewed_ranks_fail():
    rng = np.random.default_rng(0)
    uniform = rng.integers(0, 100, size=2000)
    _, dof, p = uniformity_test(uniform, 100, 20)
    assert dof == 19 and p > 0.01
    # too-narrow posteriors: the true value falls outside the draws, ranks pile up at both ends
    ends = np.concatenate([rng.integers(0, 10, 300), rng.integers(90, 100, 300), rng.integers(0, 100, 400)])
    assert uniformity_test(ends, 100, 20)[2] < 1e-6
    # a biased posterior: ranks lean to one side
    biased = np.minimum(rng.integers(0, 100, 1000), rng.integers(0, 100, 1000))
    assert uniformity_test(biased, 100, 20)[2] < 1e-6


def test_uneven_bins_expect_their_share_of_rank_values():
    # 10 rank values in 3 bins of 4, 3, 3 values: exactly proportional counts give chi2 = 0
    ranks = np.repeat(np.arange(10), 3)
    chi2, dof, p = uniformity_test(ranks, 10, 3)
    assert chi2 == pytest.approx(0.0) and dof == 2 and p == pytest.approx(1.0)


def test_uniformity_test_rejects_ranks_out_of_range():
    with pytest.raises(ValueError, match="ranks must lie in 0..9"):
        uniformity_test(np.array([0, 10]), 10, 2)
    with pytest.raises(ValueError, match="bins must be between 2 and 10"):
        uniformity_test(np.array([0, 1]), 10, 11)


def test_rank_of_counts_kept_draws_below_the_truth():
    draws = np.arange(1000, dtype=float)[:, None] * np.array([1.0, -1.0])[None, :]  # [S, 2]
    ranks = rank_of(draws, np.array([499.5, 0.5]), 99)
    assert 0 <= ranks.min() and ranks.max() <= 99
    assert ranks[0] == pytest.approx(50, abs=1) and ranks[1] == 99  # every kept draw of -x is below 0.5
    assert default_bins(200, 100) == 20 and default_bins(5, 100) == 2 and default_bins(1000, 10) == 10


def test_shared_truth_refuses_a_scenario_with_random_effects():
    with pytest.raises(ValueError, match="ω = 4"):
        CalibrationSettings(scenario="five-level-nonconstant", likelihood="shared-truth").check()
    CalibrationSettings(scenario="five-level-nonconstant", likelihood="per-judge").check()


def test_histogram_figure_has_a_panel_and_a_band_per_parameter():
    ranks = pd.DataFrame({"parameter": ["a"] * 50 + ["b"] * 50, "rank": list(range(50)) * 2})
    fig = rank_histogram_figure(ranks, 50, 5, p_values={"a": 0.5, "b": 0.01})
    bars = [t for t in fig.data if t.meta["role"] == "sbc_histogram"]
    assert [b.meta["parameter"] for b in bars] == ["a", "b"]
    assert list(bars[0].y) == [10] * 5
    assert sum(t.meta["role"] == "sbc_uniform_band" for t in fig.data) == 2


# -- a tiny run ---------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("likelihood", ["shared-truth", "per-judge"])
def test_tiny_calibration_runs_and_ranks_are_in_range(likelihood):
    settings = CalibrationSettings(scenario="three-level", replicates=3, n_items=30, likelihood=likelihood,
                                   chains=2, draws=100, tune=100, rank_draws=19)
    lines = []
    result = calibrate(settings, progress=lines.append)
    ranks = result.ranks
    # 6 candidates, 3 judges, 3 × 3 diagonal cells of Θ, per replicate
    assert len(ranks) == 3 * (6 + 3 + 9)
    assert ranks["rank"].between(0, 19).all()
    assert set(ranks["group"]) == {"expected_score", "rho", "theta_diagonal"}
    assert len(lines) == 3 and "3 of 3 done" in lines[-1]
    tests = result.tests()
    assert len(tests) == 18 and tests["p_value"].between(0, 1).all() and (tests["replicates"] == 3).all()
    # replicates differ (the prior is drawn anew each time) and the truth lies in the prior's support
    e = ranks[ranks["group"] == "expected_score"]
    assert e.groupby("replicate")["true_value"].apply(tuple).nunique() == 3
    assert e["true_value"].between(1, 3).all()


@pytest.mark.slow
def test_calibration_of_a_scenario_of_ones_own():
    """A Scenario that is not in SCENARIOS (a 4-level square scale, 2 judges) calibrates without being
    registered, and its sbc.json names it and its shape."""
    import dataclasses

    from simplex_core.data.scale import Scale
    from simplex_core.model.simulate import SCENARIOS

    spec = dataclasses.replace(
        SCENARIOS["three-level"], name="square-4", description="4 levels, 2 judges", scale=Scale((0.0, 1.0, 2.0, 3.0)),
        candidates=tuple((f"m{k}", None, (0.25,) * 4) for k in range(3)),
        judges=(("j1", None, 0.7), ("j2", None, 0.7)), n_items=25)
    settings = CalibrationSettings(scenario=spec, replicates=2, chains=2, draws=60, tune=60, rank_draws=9)
    settings.check()
    result = calibrate(settings)
    assert "square-4" not in SCENARIOS
    # 3 candidates, 2 judges, 2 × 4 diagonal cells per replicate; E_k on the 0..3 scale
    assert len(result.ranks) == 2 * (3 + 2 + 8)
    e = result.ranks[result.ranks["group"] == "expected_score"]
    assert e["true_value"].between(0, 3).all() and list(e["parameter"][:3]) == ["E[m0]", "E[m1]", "E[m2]"]
    doc = json.loads(json.dumps(result.to_dict()))
    assert doc["settings"]["scenario"] == "square-4"
    assert doc["scenario"] == {"name": "square-4", "description": "4 levels, 2 judges", "levels": [0.0, 1.0, 2.0, 3.0],
                               "candidates": 3, "judges": 2, "items": 25,
                               "parameters": "drawn from the prior in every replicate (see 'prior'); the description's "
                                             "fixed values are not used"}


@pytest.mark.slow
def test_cli_calibrate_writes_json_csv_and_figure(tmp_path, capsys):
    out = tmp_path / "sbc"
    rc = main(["calibrate", "three-level", "--out", str(out), "--replicates", "2", "--items", "20",
               "--chains", "2", "--draws", "60", "--tune", "60", "--rank-draws", "9", "--workers", "0", "--quiet"])
    assert rc == 0
    doc = json.loads((out / "sbc.json").read_text())
    assert doc["settings"]["replicates"] == 2 and doc["rank_values"] == 10 and doc["bins"] == 2
    assert {t["group"] for t in doc["tests"]} == {"expected_score", "rho", "theta_diagonal"}
    ranks = pd.read_csv(out / "ranks.csv")
    assert ranks["rank"].between(0, 9).all()
    assert len(pd.read_csv(out / "diagnostics.csv")) == 2
    assert "sbc_histogram" in (out / "histograms.html").read_text()
    printed = capsys.readouterr().out
    assert "E[model-A]" in printed
    assert "2 replicates in 2 bins expect 1.0 per bin" in printed  # two replicates test nothing: said so


def test_cli_calibrate_rejects_bad_options(tmp_path, capsys):
    rc = main(["calibrate", "three-level", "--out", str(tmp_path / "x"), "--replicates", "0", "--rank-draws", "5000"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "--replicates must be at least 1; got 0" in err and "--rank-draws must be between 1 and" in err
    rc = main(["calibrate", "three-level", "--out", str(tmp_path / "y"), "--seed", "-1"])
    assert rc == 2 and "--seed must be between 0 and 2**32 - 1; got -1" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()  # checked before the output folder is made
    (tmp_path / "z").write_text("")
    rc = main(["calibrate", "three-level", "--out", str(tmp_path / "z"), "--replicates", "1"])
    assert rc == 2 and "cannot create --out " in (err := capsys.readouterr().err) and "it is a file; give a folder" in err
