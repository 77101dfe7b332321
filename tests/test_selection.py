"""Choosing candidates and judges (simplex_core.data.selection and the four flags of every data command):
small files written here, one case per test."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from simplex_core.cli import main
from simplex_core.data.problems import ValidationError
from simplex_core.data.views import count_tensor
from simplex_core.data.table import load_table
from simplex_core.data.selection import select_models, selection_record, selection_text, split_names


def _study(tmp_path):
    """Two competitors, a human reference answer that is always right, an honest judge and one that
    says 5 to everything; families for self-family exclusion."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(12):
        truth = {"gpt": 1 + i % 5, "claude": 1 + (i + 2) % 5, "human-ref": 5}
        for cand, t in truth.items():
            rows.append({"item": f"q{i}", "candidate": cand, "judge": "honest", "score": t, "true_score": t,
                         "candidate_family": "openai" if cand == "gpt" else ("anthropic" if cand == "claude" else "human"),
                         "judge_family": "meta"})
            rows.append({"item": f"q{i}", "candidate": cand, "judge": "always-yes", "score": 5, "true_score": t,
                         "candidate_family": rows[-1]["candidate_family"], "judge_family": "openai"})
    path = tmp_path / "study.csv"
    pd.DataFrame(rows).sample(frac=1, random_state=int(rng.integers(100))).to_csv(path, index=False)
    return path


def test_nothing_chosen_is_the_same_table_and_hash(tmp_path):
    table = load_table(_study(tmp_path))
    same = select_models(table)
    assert same is table and same.data_hash() == load_table(_study(tmp_path)).data_hash()
    assert selection_record(table) == {"candidates_left_out": [], "judges_left_out": []} and selection_text(table) == ""


def test_dropping_a_reference_row_and_a_judge_narrows_every_view_and_says_so(tmp_path):
    table = load_table(_study(tmp_path))
    narrowed = select_models(table, drop_candidates=["human-ref"], drop_judges=["always-yes"])
    assert narrowed.candidates == tuple(c for c in table.candidates if c != "human-ref")  # the table's order
    assert narrowed.judges == ("honest",)
    assert set(narrowed.frame["candidate"]) == {"gpt", "claude"} and set(narrowed.frame["judge"]) == {"honest"}
    assert len(narrowed.frame) == 24  # 12 items x 2 candidates x 1 judge
    counts = count_tensor(narrowed)
    assert counts.N.shape[:2] == (1, 2) and counts.N.sum() == 24
    assert "human-ref" not in narrowed.families and "always-yes" not in narrowed.families
    note = narrowed.notes[-1]
    assert "human-ref (24 judgments)" in note and "always-yes (36 judgments)" in note and "other 2 candidates and 1 judge" in note
    assert selection_record(narrowed) == {"candidates_left_out": ["human-ref"], "judges_left_out": ["always-yes"]}
    assert selection_text(narrowed) == "without candidate human-ref; judge always-yes"
    assert narrowed.data_hash() != table.data_hash()


def test_keeping_names_is_the_same_as_dropping_the_others(tmp_path):
    table = load_table(_study(tmp_path))
    kept = select_models(table, candidates=["claude", "gpt"], judges=["honest"])
    dropped = select_models(table, drop_candidates=["human-ref"], drop_judges=["always-yes"])
    assert kept.data_hash() == dropped.data_hash() and kept.candidates == dropped.candidates  # the table's order, not the order asked


def test_an_unknown_name_is_named_with_its_close_matches(tmp_path):
    table = load_table(_study(tmp_path))
    with pytest.raises(ValidationError) as info:
        select_models(table, drop_candidates=["human_ref", "GPT"], judges=["gpt"])
    messages = [p.describe() for p in info.value.problems]
    assert len(messages) == 3
    assert "no candidate named 'human_ref'. Close match: 'human-ref'." in messages[0]
    assert "no candidate named 'GPT'. Close match: 'gpt'." in messages[1]
    assert "'gpt' is a candidate of the table, not a judge" in messages[2]
    assert [p.setting for p in info.value.problems] == ["drop_candidates", "drop_candidates", "judges"]


def test_a_choice_that_leaves_too_little_is_refused(tmp_path):
    table = load_table(_study(tmp_path))
    with pytest.raises(ValidationError, match="keeps 1 candidate"):
        select_models(table, candidates=["gpt"])
    with pytest.raises(ValidationError, match="keeps no judge"):
        select_models(table, drop_judges=["honest", "always-yes"])


def test_a_kept_candidate_no_kept_judge_scored_is_named(tmp_path):
    rows = [{"item": "q1", "candidate": c, "judge": j, "score": s}
            for c, j, s in (("a", "j1", 1), ("b", "j1", 2), ("c", "j2", 2), ("a", "j2", 1))]
    table = load_table(pd.DataFrame(rows))
    with pytest.raises(ValidationError, match="no kept judge scored 'c'"):
        select_models(table, drop_judges=["j2"])


def test_names_split_on_commas_with_spaces_and_repeats():
    assert split_names(" a, b ,,a") == ("a", "b") and split_names(None) == () and split_names(["a,b", "c"]) == ("a", "b", "c")


@pytest.mark.parametrize("command", [["describe"], ["suggest-labels", "--out", "labels.csv"], ["evaluate", "--out", "e.csv"]])
def test_every_data_command_takes_the_flags_and_names_an_unknown_name(tmp_path, capsys, command):
    path = _study(tmp_path)
    assert main([command[0], str(path), "--drop-judges=always_yes",
                 *[str(tmp_path / a) if a.endswith(".csv") else a for a in command[1:]]]) == 2
    err = capsys.readouterr().err
    assert "no judge named 'always_yes'. Close match: 'always-yes'." in err and "--drop-judges" in err


def test_describe_says_what_was_left_out(tmp_path, capsys):
    path = _study(tmp_path)
    assert main(["describe", str(path), "--drop-candidates", "human-ref", "--judges=honest", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["candidates_left_out"] == ["human-ref"] and doc["judges_left_out"] == ["always-yes"]
    assert doc["candidates"] == 2 and doc["judges"] == 1
    assert any(n.startswith("Left out as chosen:") for n in doc["notes"])


def test_every_data_command_has_the_four_flags():
    from simplex_core.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    with_data = [name for name, p in sub.choices.items() if any(a.dest == "data" for a in p._actions)]
    assert {"describe", "fit", "evaluate", "sensitivity", "experiment", "figures", "suggest-labels"} <= set(with_data)
    for name in with_data:
        dests = {a.dest for a in sub.choices[name]._actions}
        assert {"candidates", "drop_candidates", "judges", "drop_judges"} <= dests, name


def test_a_fit_records_what_was_left_out(tmp_path, capsys):
    path, out = _study(tmp_path), tmp_path / "result.json"
    code = main(["fit", str(path), "--out", str(out), "--drop-candidates=human-ref", "--drop-judges", "always-yes",
                 "--chains", "2", "--draws", "60", "--tune", "60", "--seed", "1", "--extra-rounds", "0", "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert "data: Left out as chosen: candidate human-ref" in capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["settings"]["selection"] == {"candidates_left_out": ["human-ref"], "judges_left_out": ["always-yes"]}
    assert "--drop-candidates=human-ref" in doc["settings"]["command_line"]
    assert {c["candidate"] for c in doc["candidates"]} == {"gpt", "claude"} and set(doc["judges"]) == {"honest"}


def test_the_commands_the_export_page_shows_carry_the_choice():
    from simplex_core.summaries.command_lines import figures_command_line
    from simplex_core.summaries.command_lines import fit_command_line
    from simplex_core.model.settings import FitSettings

    left = {"candidates_left_out": ["human ref"], "judges_left_out": ["always-yes"]}
    line = fit_command_line("study.csv", FitSettings(), left_out=left)
    assert "--drop-candidates 'human ref'" in line and "--drop-judges always-yes" in line
    assert "--drop-judges always-yes" in figures_command_line("study.csv", left_out=left)
    assert "--drop" not in fit_command_line("study.csv", FitSettings())
    import shlex

    from simplex_core.cli import build_parser, selection_options

    for shown in (line, figures_command_line("study.csv", left_out=left)):
        args = build_parser().parse_args(shlex.split(shown.replace("\\\n", ""))[3:])  # they read back as the choice
        assert selection_options(args) == {"candidates": (), "drop_candidates": ("human ref",), "judges": (),
                                           "drop_judges": ("always-yes",)}
