"""Reading a file whose columns other tools named (``--columns``, simplex_core.data.column_mapping):
small files written here, one case per test."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from simplex_core.cli import main
from simplex_core.data.column_mapping import columns_text, guess_columns, parse_columns
from simplex_core.data.problems import ValidationError
from simplex_core.data.table import load_table


def _study(tmp_path, extra_score=False):
    rows = [{"question_id": f"q{i}", "model": m, "grader": g, "rating": 1 + (i + k + len(g)) % 5, "human": 1 + (i + k) % 5}
            for i in range(4) for k, m in enumerate(("a", "b")) for g in ("g1", "g22")]
    frame = pd.DataFrame(rows)
    if extra_score:
        frame["Score"] = "not this one"
    path = tmp_path / "other-tool.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_a_mapping_reads_the_columns_as_the_contracts_and_says_so(tmp_path):
    path, frame = _study(tmp_path)
    table = load_table(path, columns={"item": "question_id", "candidate": "model", "judge": "grader", "score": "rating",
                                      "true_score": "human"})
    assert table.candidates == ("a", "b") and table.judges == ("g1", "g22") and len(table.frame) == len(frame)
    assert table.frame["score"].tolist() == frame["rating"].astype(float).tolist()
    assert table.frame["true_score"].tolist() == frame["human"].astype(float).tolist()
    assert "Columns read as: item ← 'question_id', candidate ← 'model', judge ← 'grader', score ← 'rating', true_score ← 'human'." in table.notes


def test_a_file_column_bearing_a_mapped_name_is_left_unused_in_a_note(tmp_path):
    path, _ = _study(tmp_path, extra_score=True)
    table = load_table(path, columns={"item": "question_id", "candidate": "model", "judge": "grader", "score": "rating"})
    assert table.frame["score"].notna().all()
    assert any("The file's own 'Score' column is not used." in n for n in table.notes)


def test_an_unknown_column_is_named_with_its_close_match_and_an_unknown_contract_name_too(tmp_path):
    path, _ = _study(tmp_path)
    with pytest.raises(ValidationError) as info:
        load_table(path, columns={"item": "questionid", "candidate": "model", "judge": "model", "score": "rating"})
    text = str(info.value)
    assert "reads item from 'questionid', but the file has no such column; close match: 'question_id'" in text
    assert "reads candidate and judge from the same column 'model'" in text
    with pytest.raises(ValidationError, match="names 'truth', which is no column of the contract"):
        parse_columns("item=question_id, truth=human")


def test_the_text_reads_back_and_guesses_only_what_is_missing():
    mapping = parse_columns(" item = question_id ,score=rating,")
    assert mapping == {"item": "question_id", "score": "rating"} and parse_columns(columns_text(mapping)) == mapping
    assert parse_columns("") == {} and parse_columns(None) == {}
    with pytest.raises(ValidationError, match="gives item twice"):
        parse_columns("item=a,item=b")
    assert guess_columns(["question_id", "model", "grader", "rating"]) == {
        "item": "question_id", "candidate": "model", "judge": "grader", "score": "rating"}
    assert guess_columns(["item", "model", "judge", "score"]) == {"candidate": "model"}
    assert guess_columns(["item", "candidate", "judge", "score"]) == {}


def test_the_missing_column_message_offers_the_mapping_and_it_loads(tmp_path, capsys):
    path, _ = _study(tmp_path)
    assert main(["describe", str(path)]) == 2
    err = capsys.readouterr().err
    flags = re.findall(r"Use (--columns=\S+?)\.(?:\s|$)", err)
    assert flags == ["--columns=item=question_id,candidate=model,judge=grader,score=rating"], err
    assert main(["describe", str(path), flags[0]]) == 0
    out = capsys.readouterr().out
    assert "candidates: a, b" in out and "judges: g1, g22" in out


@pytest.mark.parametrize("command", [["describe"], ["suggest-labels", "--out", "labels.csv"], ["evaluate", "--out", "e.csv"]])
def test_every_data_command_takes_columns_and_names_a_bad_one(tmp_path, capsys, command):
    path, _ = _study(tmp_path)
    args = [command[0], str(path), "--columns", "item=question,candidate=model,judge=grader,score=rating",
            *[str(tmp_path / a) if a.endswith(".csv") else a for a in command[1:]]]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "reads item from 'question', but the file has no such column; close match: 'question_id'" in err
    assert "--columns" in err
