"""Every scale message names the declaration that fixes it, and that declaration works: each test
writes a small file with one scale problem, reads the advice the message gives, applies it, and the
file loads (the command line's flags and the app's boxes alike)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from simplex_core.cli import main
from simplex_core.data.problems import ValidationError
from simplex_core.data.table import load_table
from simplex_core.data.scale import ScaleError, scale_from_options


def _write(tmp_path, rows, name="judged.csv"):
    path = tmp_path / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _rubric_no_one(tmp_path):
    """A 1-5 rubric where no judge gave a 1, and a truth (mean of three raters) below 2."""
    rows = []
    for i, (sa, sb, ta, tb) in enumerate([(2, 5, 5 / 3, 4.5), (3, 4, 1.0, 4.0), (2, 4, 2.0, 5.0)]):
        for judge, shift in (("j1", 0), ("j2", 1)):
            rows.append({"item": f"i{i}", "candidate": "a", "judge": judge, "score": min(sa + shift, 5), "true_score": ta})
            rows.append({"item": f"i{i}", "candidate": "b", "judge": judge, "score": min(sb + shift, 5), "true_score": tb})
    return _write(tmp_path, rows)


def _advice(capsys, args):
    """Run ``describe`` expecting a refusal; the flags its message says to use."""
    assert main(["describe", *args]) == 2
    err = capsys.readouterr().err
    found = re.findall(r"Use ((?:--[a-z-]+=\S+?(?: |\.(?:\s|$)))+)", err)
    assert found, err
    return err, found[-1].rstrip(". \n").split()


def _apply(capsys, args, flags):
    assert main(["describe", *args, *flags]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_truth_below_the_scores_advises_the_levels_that_reach_it(tmp_path, capsys):
    path = _rubric_no_one(tmp_path)
    err, flags = _advice(capsys, [str(path)])
    assert flags == ["--levels=1,2,3,4,5"], err
    assert "--true-levels" not in err  # the flag that cannot fix it is not offered
    assert "scale: 5 levels: 1, 2, 3, 4, 5" in _apply(capsys, [str(path)], flags)


def test_true_levels_that_are_no_scores_advise_the_observed_levels(tmp_path, capsys):
    path = _rubric_no_one(tmp_path)
    err, flags = _advice(capsys, [str(path), "--true-levels=1,2,3,4,5"])
    assert flags == ["--levels=1,2,3,4,5"], err
    _apply(capsys, [str(path), "--true-levels=1,2,3,4,5"], flags)


def test_declared_levels_missing_a_true_level_advise_the_wider_levels(tmp_path, capsys):
    path = _rubric_no_one(tmp_path)
    err, flags = _advice(capsys, [str(path), "--levels=2,3,4,5", "--true-levels=1,3,5"])
    assert flags == ["--levels=1,2,3,4,5"], err
    _apply(capsys, [str(path), "--true-levels=1,3,5"], flags)


def test_true_levels_narrower_than_the_truth_within_the_scores_advise_more_true_levels(tmp_path, capsys):
    rows = [{"item": f"i{i}", "candidate": c, "judge": j, "score": s, "true_score": t}
            for i, (s, t) in enumerate([(-1, -1), (0, 1), (1, 1)]) for c in ("a", "b") for j in ("j1", "j2")]
    path = _write(tmp_path, rows)
    args = [str(path), "--levels=-1:incorrect,0:unsure,1:correct", "--true-levels=0,1"]
    err, flags = _advice(capsys, args)
    assert flags == ["--true-levels=-1,0,1"], err
    _apply(capsys, args[:2], flags)


def test_non_square_scale_with_truth_past_the_scores_advises_both(tmp_path, capsys):
    rows = [{"item": f"i{i}", "candidate": c, "judge": j, "score": s, "true_score": t}
            for i, (s, t) in enumerate([(0, 0), (1, 2), (2, 3)]) for c in ("a", "b") for j in ("j1", "j2")]
    path = _write(tmp_path, rows)
    err, flags = _advice(capsys, [str(path), "--levels=0,1,2", "--true-levels=0,2"])
    assert flags == ["--levels=0,1,2,3", "--true-levels=0,2,3"], err
    _apply(capsys, [str(path)], flags)


def test_scores_off_the_declared_levels_advise_the_levels_with_them(tmp_path, capsys):
    rows = [{"item": f"i{i}", "candidate": c, "judge": "j", "score": s} for i, s in enumerate([1, 2, 3, 4]) for c in ("a", "b")]
    path = _write(tmp_path, rows)
    err, flags = _advice(capsys, [str(path), "--levels=1:poor,2,3:good"])
    assert flags == ["--levels=1:poor,2,3:good,4"], err  # the labels given are kept
    assert "scale: 4 levels: 1 (poor), 2, 3 (good), 4" in _apply(capsys, [str(path)], flags)


def test_one_distinct_score_advises_a_two_level_scale(tmp_path, capsys):
    rows = [{"item": f"i{i}", "candidate": c, "judge": "j", "score": 1} for i in range(3) for c in ("a", "b")]
    path = _write(tmp_path, rows)
    err, flags = _advice(capsys, [str(path)])
    assert flags == ["--levels=0,1"], err
    _apply(capsys, [str(path)], flags)


def test_too_many_distinct_scores_advise_declaring_them(tmp_path, capsys):
    rows = [{"item": f"i{i}", "candidate": c, "judge": "j", "score": i} for i in range(16) for c in ("a", "b")]
    path = _write(tmp_path, rows)
    err, flags = _advice(capsys, [str(path)])
    assert flags == ["--levels=" + ",".join(str(i) for i in range(16))], err
    assert "scale: 16 levels" in _apply(capsys, [str(path)], flags)


def test_the_app_names_the_box_and_the_value_that_fixes_it(tmp_path):
    from app_support.errors import plain_message

    path = _rubric_no_one(tmp_path)
    with pytest.raises(ValidationError) as caught:
        load_table(path)
    _, details = plain_message(caught.value)
    assert details == [details[0]] and "Set 'Observed levels' to 1,2,3,4,5" in details[0]
    table = load_table(path, scale=scale_from_options("1,2,3,4,5", None))  # what the box declares
    assert table.scale.values == (1, 2, 3, 4, 5) and table.frame["true_score"].min() == 1.0

    with pytest.raises(ScaleError) as scale_error:
        scale_from_options("2,3,4,5", "1,3,5")
    _, details = plain_message(scale_error.value)
    assert "Set 'Observed levels' to 1,2,3,4,5" in details[-1]


def test_scores_and_truth_past_the_declared_levels_get_one_declaration_that_fixes_both(tmp_path, capsys):
    path = _rubric_no_one(tmp_path)
    err, flags = _advice(capsys, [str(path), "--levels=2,3,4"])
    assert flags == ["--levels=1,2,3,4,5"], err  # the truth's advice also holds the score 5
    _apply(capsys, [str(path)], flags)
