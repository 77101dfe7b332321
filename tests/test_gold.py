"""Gold labels: validation of the gold column, the experimental draw, the draw shared with PPI, an
all-gold fit, and the CLI options."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simplex_core.data import gold as gold_module
from simplex_core.methods.baselines import baseline_methods
from simplex_core.methods.simple_average import simple_average
from simplex_core.cli import main
from simplex_core.data.problems import ValidationError
from simplex_core.data.views import count_tensor, item_view
from simplex_core.data.table import load_table
from simplex_core.summaries.evaluation import evaluate_methods
from simplex_core.studies.experiments import bayesian_methods
from simplex_core.data.gold import draw_gold, labelled_item_mask
from simplex_core.data.scale import Scale
from simplex_core.model.simulate import simulate

BINARY = Scale((0.0, 1.0))


def _frame(n_items=3, gold=None, truth=None) -> pd.DataFrame:
    """Two candidates, two judges; ``gold`` / ``truth`` give the value for the rows of answer (q0, a)."""
    rows = []
    for i in range(n_items):
        for c in ("a", "b"):
            for j in ("x", "y"):
                row = {"item": f"q{i}", "candidate": c, "judge": j, "score": (i + (j == "x")) % 2, "true_score": 1}
                first = (i, c) == (0, "a")
                if gold is not None:
                    row["gold"] = gold if first else "false"
                if truth is not None and first:
                    row["true_score"] = truth
                rows.append(row)
    return pd.DataFrame(rows)


def test_a_gold_value_that_is_not_boolean_is_named_with_its_rows():
    with pytest.raises(ValidationError, match=r"The 'gold' column: value 'maybe' in rows 1, 2 is not true or false"):
        load_table(_frame(gold="maybe"))


def test_a_gold_answer_without_true_score_is_named():
    with pytest.raises(ValidationError, match=r"rows 1, 2 are marked gold but the answer has no true_score"):
        load_table(_frame(gold="true", truth=np.nan).assign(
            true_score=lambda f: f["true_score"].where(f.index > 1)))
    with pytest.raises(ValidationError, match=r"marked gold but the answer has no true_score"):
        load_table(_frame(gold="yes").drop(columns="true_score"))


def test_a_gold_true_score_off_the_true_levels_is_named():
    with pytest.raises(ValidationError, match=r"gold true score 0\.5 in rows 1, 2 is not a true level of the scale.*one of the true levels 0, 1"):
        load_table(_frame(gold="true", truth=0.5))


def test_gold_spellings_and_the_patterns_they_give():
    frame = _frame(gold="TRUE")
    frame.loc[frame["candidate"] == "b", "gold"] = ""  # blank = not gold
    table = load_table(frame)
    assert table.n_gold == 1
    patterns = count_tensor(table).patterns
    assert patterns.n_gold == 1
    assert set(patterns.truth[patterns.truth >= 0]) == {1}
    # the gold flag is part of the data's identity
    assert table.data_hash() != load_table(_frame()).data_hash()


def test_a_gold_answer_no_judge_scored_is_named_in_a_note_not_dropped_quietly():
    frame = _frame(gold="true").astype({"score": object})
    frame.loc[:1, "score"] = None  # both judges' rows of the gold answer (q0, a)
    table = load_table(frame)
    assert table.n_gold == 0 and count_tensor(table).patterns.n_gold == 0
    assert any("1 gold answer with no score from any judge left out with its label: (q0, a)" in n for n in table.notes)
    frame.loc[1, "score"] = 1  # one judge scored it: the label stays, no such note
    table = load_table(frame)
    assert table.n_gold == 1 and not any("gold answer" in n for n in table.notes)


def test_gold_that_differs_across_judges_of_one_answer_is_named():
    frame = _frame(gold="true")
    frame.loc[1, "gold"] = "false"
    with pytest.raises(ValidationError, match=r"differs across judges for 1 \(item, candidate\) answer: \('q0', 'a'\)"):
        load_table(frame)


def _sim_table(n_items=40, candidates=3, judges=2, seed=1):
    sim = simulate(scale=BINARY, n_items=n_items, candidates=candidates, judges=judges, rng=seed)
    return load_table(sim.frame, scale=sim.scale)


def test_draw_gold_marks_a_seeded_share_of_the_answers_with_truth():
    table = _sim_table()
    a = draw_gold(table, 0.25, seed=3)
    assert a.n_gold == 30  # 25% of 120 answers
    assert draw_gold(table, 0.25, seed=3).frame["gold"].equals(a.frame["gold"])
    assert not draw_gold(table, 0.25, seed=4).frame["gold"].equals(a.frame["gold"])
    assert draw_gold(table, 1.0).n_gold == 120
    with pytest.raises(ValueError, match="between 0 and 1"):
        draw_gold(table, 1.5)
    with pytest.raises(ValueError, match="already marks 30 answers gold"):
        draw_gold(a, 0.1)


def test_marking_a_mean_of_raters_gold_rounds_it_and_says_so():
    frame = _frame().assign(true_score=2 / 3)
    table = load_table(frame)
    g = gold_module.mark_gold(table, [("q0", "a"), ("q1", "b")])
    assert g.n_gold == 2
    assert set(g.frame.loc[g.frame["gold"], "true_score"]) == {1.0}
    assert "2 of their true scores rounded" in g.notes[-1]


def test_gold_methods_label_the_same_items_as_ppi_in_every_resample(monkeypatch):
    """bayesian_gold_10 gets ppi_10's generator, so both draw the same labelled items each time."""
    table = _sim_table(n_items=60)
    view = item_view(table)
    draws = []
    real = gold_module.labelled_item_mask

    def spy(n_items, fraction, rng):
        mask = real(n_items, fraction, rng)
        draws.append(mask)
        return mask

    monkeypatch.setattr(gold_module, "labelled_item_mask", spy)
    gold = bayesian_methods(table, ["bayesian_gold_10"])["bayesian_gold_10"]
    n_gold = []

    class GoldCounts:  # the gold method's data preparation, without the fit
        rng_stream = gold.rng_stream

        def __call__(self, v, rng):
            n_gold.append(gold.counts_of(v, rng).patterns.n_gold)
            return simple_average(v)

    methods = {"ppi_10": baseline_methods(view, table.scale, single_judges=False, ppi_fractions=(0.10,))["ppi_10"],
               "bayesian_gold_10": GoldCounts()}
    evaluate_methods(view, methods, ci_resamples=4, rng=7)
    assert len(draws) == 10  # (full data + 4 resamples) × 2 methods
    for ppi, bayes in zip(draws[0::2], draws[1::2]):
        np.testing.assert_array_equal(ppi, bayes)
    assert any(not np.array_equal(draws[0], d) for d in draws[2::2])  # resamples draw afresh
    assert all(n == 6 * 3 for n in n_gold)  # 10% of 60 items, 3 candidates each
    assert gold.settings.likelihood == "shared-truth"


def test_all_gold_fit_recovers_the_true_prevalences():
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.settings import FitSettings

    table = draw_gold(_sim_table(), 1.0)
    fit = fit_model(count_tensor(table), FitSettings(likelihood="shared-truth", chains=2, draws=300, tune=300))
    pi1 = fit.draws("pi")[:, :, 1].mean(axis=0)
    truth = table.frame.drop_duplicates(["item", "candidate"]).groupby("candidate", sort=False)["true_score"]
    expected = ((truth.sum() + 1) / (truth.count() + 2)).reindex(table.candidates).to_numpy()  # Beta posterior mean
    np.testing.assert_allclose(pi1, expected, atol=0.02)


def _tiny_csv(tmp_path, n_items=30):
    sim = simulate(scale=BINARY, n_items=n_items, candidates=3, judges=3, rng=5)
    path = tmp_path / "tiny.csv"
    sim.frame.to_csv(path, index=False)
    return path


def test_cli_gold_fraction_needs_the_shared_truth_likelihood(tmp_path, capsys):
    path = _tiny_csv(tmp_path)
    code = main(["fit", str(path), "--out", str(tmp_path / "r.json"), "--gold-fraction", "0.1", "--likelihood", "per-judge"])
    assert code == 2
    assert "gold labels enter only the shared-truth likelihood" in capsys.readouterr().err
    assert main(["fit", str(path), "--out", str(tmp_path / "r.json"), "--gold-fraction", "2"]) == 2
    assert "--gold-fraction must be between 0 and 1; got 2.0" in capsys.readouterr().err


def test_cli_evaluate_adds_gold_methods_next_to_ppi(tmp_path, capsys):
    path = _tiny_csv(tmp_path, n_items=40)
    out = tmp_path / "eval.csv"
    code = main(["evaluate", str(path), "--out", str(out), "--methods", "simple_average", "--gold-fractions", "0.1",
                 "--ci-resamples", "0", "--chains", "2", "--draws", "200", "--tune", "200", "--quiet"])
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out).set_index("method")
    assert list(table.index) == ["simple_average", "ppi_10", "bayesian_gold_10", "bayesian_ppi_10"]
    assert table.loc["bayesian_gold_10", "uses_labels"] and table.loc["ppi_10", "uses_labels"]
    assert table.loc["bayesian_ppi_10", "uses_labels"]
    assert np.isfinite(table.loc["bayesian_gold_10", "spearman"]) and np.isfinite(table.loc["bayesian_ppi_10", "spearman"])
    assert main(["evaluate", str(path), "--out", str(out), "--gold-fractions", "0.1,abc"]) == 2
    assert "entry 2 ('abc')" in capsys.readouterr().err


def test_labelled_item_mask_is_ppis_draw():
    from simplex_core.methods.ppi import ppi_labelled_items

    a = ppi_labelled_items(50, 0.1, np.random.default_rng(3))
    b = labelled_item_mask(50, 0.1, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert a.sum() == 5


def test_gold_answers_that_all_share_one_true_score_get_a_warning_not_an_error():
    from simplex_core.data.validation import WARNING_PREFIX

    frame = _frame(n_items=4)
    frame["gold"] = frame["item"].isin(["q0", "q1"])  # four gold answers, every true_score 1
    table = load_table(frame)
    assert table.n_gold == 4
    (warning,) = [n for n in table.notes if n.startswith(WARNING_PREFIX)]
    assert "all 4 gold answers have the same true score (1)" in warning
    assert "cannot tell the candidates apart" in warning and "some false as well as true" in warning
    frame.loc[(frame["item"] == "q1") & (frame["candidate"] == "b"), "true_score"] = 0  # one label of the other outcome
    assert not any(n.startswith(WARNING_PREFIX) for n in load_table(frame).notes)
    frame.loc[(frame["item"] == "q1") & (frame["candidate"] == "b"), "true_score"] = 1
    frame["gold"] = frame["item"].eq("q0") & frame["candidate"].eq("a")  # a single label: nothing to compare
    assert not any(n.startswith(WARNING_PREFIX) for n in load_table(frame).notes)
