"""The product's labelled ranking from a file's own gold answers (simplex_core.studies.labelled_ranking)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simplex_core.data.table import load_table
from simplex_core.data.views import count_tensor
from simplex_core.model.settings import FitSettings
from simplex_core.methods.baselines import MethodResult
from simplex_core.studies.labelled_ranking import (LABELLED_METHOD, gold_answers, labelled_ranking,
                                                   labelled_ranking_from_fit, labels_used_sentence, rank_moves,
                                                   without_labels)

CANDIDATES = ("a", "b", "c", "d")
MEANS = {"a": 1.6, "b": 2.4, "c": 3.6, "d": 4.4}  # true mean scores, well apart


def _frame(n_items: int = 120, gold=lambda item, cand: item < 30, seed: int = 0, means=MEANS) -> pd.DataFrame:
    """Two judges who score the true level or one off it; ``gold(item, candidate)`` marks labels."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        for c in CANDIDATES:
            low = int(np.floor(means[c]))
            truth = low + int(rng.random() < means[c] - low)
            for j in ("j1", "j2"):
                score = int(np.clip(truth + rng.choice([-1, 0, 0, 1]), 1, 5))
                rows.append({"item": f"q{i}", "candidate": c, "judge": j, "score": score, "true_score": truth,
                             "gold": bool(gold(i, c))})
    return pd.DataFrame(rows)


def _table(frame: pd.DataFrame):
    return load_table(frame.to_csv(index=False).encode(), name="labelled.csv")  # levels 1-5, all scored


def _truth_per_answer(table) -> pd.Series:
    f = table.frame.drop_duplicates(["item", "candidate"])
    return pd.Series(f["true_score"].to_numpy(float), index=pd.MultiIndex.from_frame(f[["item", "candidate"]]))


def test_the_labels_restore_the_order_a_biased_predictor_gets_wrong():
    table = _table(_frame())
    truth = _truth_per_answer(table)
    # a predictor that overrates b by 2.5 and underrates c by 1.5: on its own it ranks b first and c last
    bias = truth.index.get_level_values("candidate").map({"a": 0.0, "b": 2.5, "c": -1.5, "d": 0.0}).to_numpy(float)
    predictions = truth + bias
    own = predictions.groupby(level="candidate").mean().rank(ascending=False)
    assert own["b"] == 1 and own["c"] == 3
    result = labelled_ranking(table, predictions)
    assert result.method == LABELLED_METHOD and result.uses_labels
    assert list(result.ranks.sort_values().index) == ["d", "c", "b", "a"]
    for c in CANDIDATES:  # each estimate is the candidate's mean true score, not the predictor's
        assert result.scores[c] == pytest.approx(truth.xs(c, level="candidate").mean(), abs=0.25)
    assert result.details["n_labelled_answers"] == 30 * 4 and result.details["labels:b"] == 30


def test_a_better_predictor_narrows_the_intervals():
    close = {"a": 2.7, "b": 2.9, "c": 3.1, "d": 3.3}  # close enough for the intervals to overlap
    table = _table(_frame(n_items=200, gold=lambda i, c: i < 30, means=close))
    truth = _truth_per_answer(table)
    exact = labelled_ranking(table, truth)
    flat = labelled_ranking(table, pd.Series(3.0, index=truth.index))  # says nothing: the labels' mean alone
    spread = lambda r: float(r.rank_draws.groupby("candidate")["rank"].std().mean())  # noqa: E731
    assert spread(exact) < 0.8 * spread(flat)
    assert (exact.rank_lo <= exact.ranks).all() and (exact.ranks <= exact.rank_hi).all()


def test_labels_on_single_answers_need_not_cover_whole_items():
    # each candidate labelled on its own items: no item is labelled for every candidate
    table = _table(_frame(gold=lambda i, c: i % 4 == CANDIDATES.index(c) and i < 60))
    result = labelled_ranking(table, _truth_per_answer(table))
    assert result.details["min_labels_per_candidate"] == 15
    assert not result.rank_draws["rank"].isna().any()
    assert list(result.ranks.sort_values().index) == ["d", "c", "b", "a"]


def test_too_few_labels_for_a_candidate_are_refused_with_its_name():
    table = _table(_frame(gold=lambda i, c: (i < 10) if c != "c" else (i == 0)))
    with pytest.raises(ValueError, match=r"at least 2 labelled answers .* c \(1\) has fewer"):
        labelled_ranking(table, _truth_per_answer(table))


def test_a_table_without_gold_is_refused():
    table = _table(_frame(gold=lambda i, c: False))
    assert len(gold_answers(table)) == 0
    with pytest.raises(ValueError, match="needs gold labels"):
        labelled_ranking(table, _truth_per_answer(table))


def test_without_labels_gives_back_the_table_the_gold_column_was_added_to():
    frame = _frame()
    labelled = _table(frame)
    plain = _table(frame.drop(columns="gold"))
    free = without_labels(labelled)
    assert "gold" not in free.frame.columns and free.n_gold == 0 and labelled.n_gold == 120
    assert free.data_hash() == plain.data_hash()  # the plain table's fit (a shipped one too) serves
    assert "the 120 gold labels of the file left out" in free.notes[-1]
    assert without_labels(plain) is plain


def test_the_predictor_must_come_from_a_label_free_fit():
    table = _table(_frame())
    with pytest.raises(ValueError, match="must come from a label-free fit"):
        labelled_ranking_from_fit(None, table, count_tensor(table))


def _result(ranks: dict, lo: dict, hi: dict, labels: bool) -> MethodResult:
    idx = pd.Index(list(ranks), name="candidate")
    s = lambda d: pd.Series([float(d[c]) for c in idx], index=idx)  # noqa: E731
    return MethodResult("m", labels, scores=-s(ranks), ranks=s(ranks), rank_lo=s(lo), rank_hi=s(hi))


def test_rank_moves_say_who_moved_where():
    free = _result({"x": 1, "y": 2, "z": 3}, {"x": 1, "y": 1, "z": 2}, {"x": 2, "y": 3, "z": 3}, False)
    lab = _result({"x": 3, "y": 2, "z": 1}, {"x": 2, "y": 1, "z": 1}, {"x": 3, "y": 3, "z": 2}, True)
    moves = rank_moves(free, lab)
    assert list(moves["candidate"]) == ["z", "y", "x"]  # the labelled order
    assert list(moves["move"]) == ["rank 3 → 1", "unchanged (rank 2)", "rank 1 → 3"]
    assert list(moves["moved_up"]) == [2, 0, -2]
    assert list(moves["label_free_hi"]) == [3, 3, 2]


def test_a_real_label_free_fit_predicts_and_the_labels_rank():
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.definition import FitSettings

    table = _table(_frame(n_items=60, gold=lambda i, c: i < 12))
    free = without_labels(table)
    counts = count_tensor(free)
    fit = fit_model(counts, FitSettings(chains=2, draws=200, tune=200, seed=1))
    result = labelled_ranking_from_fit(fit, table, counts)
    assert set(result.candidates) == set(CANDIDATES) and result.uses_labels
    assert result.ranks["d"] < result.ranks["a"]
    text = labels_used_sentence(result, table)
    assert text.startswith("48 labelled answers (20% of 240, on 12 items; at least 12 per candidate)")


def test_the_label_free_fits_data_notes_do_not_propose_the_labels_the_file_has():
    from simplex_core.model.data_notes import data_notes
    from simplex_core.studies.labelled_ranking import label_free_notes

    # 5 square levels, two judges, the paper's judge prior: both notes that propose labels speak (under the
    # default, centred prior only the judges-too-few one)
    table = _table(_frame())
    free = count_tensor(without_labels(table))
    wp = FitSettings(prior="weight-propagation")
    plain = data_notes(free, wp)
    assert any("A few labelled answers" in n for n in plain) and any("or a few labelled answers" in n for n in plain)
    assert label_free_notes(free, wp) == plain  # no labels in the file: the same notes
    assert len(data_notes(free)) == len(plain) - 1

    notes = label_free_notes(free, wp, n_labels=120)
    assert len(notes) == len(plain)
    assert not any("a few labelled answers" in n.lower() for n in notes)
    told = "This fit is label-free: the file's 120 gold labels are left out of it, and the ranking with labels"
    assert sum(told in n for n in notes) == 2
    # what the notes say of the fit stays: the judge prior's lean and the judges too few
    assert any("expected scores lean low, their order much less. " + told in n for n in notes)
    assert any(n.startswith("Fewer than 3 judges scored") for n in notes)


def test_a_candidate_whose_labels_are_all_alike_is_named_in_the_notes():
    # a's true score is always 1: its 4 labels cannot show how far its estimate may be off
    table = _table(_frame(gold=lambda i, c: i < (4 if c == "a" else 20), means={**MEANS, "a": 1.0}))
    truth = _truth_per_answer(table)
    result = labelled_ranking(table, truth + 0.3)
    (note,) = result.notes
    assert note.startswith(f"{LABELLED_METHOD}: the labels of a are all alike, so they cannot say")
    assert result.details["labels:a"] == 4
