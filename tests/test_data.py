"""The data contract: validation messages, views, families, collapsing, file formats."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simplex_core.data.problems import ValidationError
from simplex_core.data.table import collapse_levels, load_table, template_frame
from simplex_core.data.views import count_tensor, item_view, score_distribution, score_distribution_wide
from simplex_core.data.scale import Scale, ScaleError, collapse_scale, level_mapping_text, paper_three_level_mapping, parse_level_mapping, parse_levels, parse_true_levels


def _frame(rows):
    return pd.DataFrame(rows, columns=["item", "candidate", "judge", "score"])


SMALL = _frame([
    ("q1", "a", "j1", 1), ("q1", "b", "j1", 2), ("q1", "a", "j2", 3), ("q1", "b", "j2", 2),
    ("q2", "a", "j1", 2), ("q2", "b", "j1", 1), ("q2", "a", "j2", 3), ("q2", "b", "j2", 1),
])


# -- messages ---------------------------------------------------------------------------------------

def test_missing_columns_lists_those_found():
    with pytest.raises(ValidationError, match=r"Missing required columns 'judge', 'score'; found 'item', 'candidate', 'rating'"):
        load_table(pd.DataFrame({"item": ["q"], "candidate": ["a"], "rating": [1]}))


def test_empty_input():
    with pytest.raises(ValidationError, match="is empty: it has column names but no data rows"):
        load_table(pd.DataFrame(columns=["item", "candidate", "judge", "score"]))


def test_out_of_scale_score_names_value_and_row():
    df = SMALL.copy()
    df.loc[5, "score"] = 7
    with pytest.raises(ValidationError, match=r"The 'score' column: value 7 in row 6 is not on the scale\. Expected one of 1, 2, 3"):
        load_table(df, scale=Scale((1, 2, 3)))


def test_non_numeric_score_names_value_and_row():
    df = SMALL.copy().astype({"score": object})
    df.loc[2, "score"] = "good"
    with pytest.raises(ValidationError, match=r"non-numeric value 'good' in row 3"):
        load_table(df)


def test_every_problem_is_reported_at_once():
    df = SMALL.copy().astype({"score": object})
    df.loc[0, "score"] = "x"
    df.loc[1, "judge"] = ""
    df.loc[3, "score"] = 9
    with pytest.raises(ValidationError) as info:
        load_table(df, scale=Scale((1, 2, 3)))
    text = str(info.value)
    assert text.startswith("3 problems in the input:")
    assert "'judge' column: 1 blank value in row 2" in text
    assert "non-numeric value 'x' in row 1" in text
    assert "value 9 in row 4 is not on the scale" in text


def test_problems_carry_their_rows_values_and_the_setting_each_front_end_words_itself():
    df = SMALL.copy().astype({"score": object})
    df.loc[0, "score"] = "x"
    df.loc[1, "judge"] = ""
    df.loc[[3, 6], "score"] = 9
    with pytest.raises(ValidationError) as info:
        load_table(df, scale=Scale((1, 2, 3)))
    blank, bad, off = info.value.problems  # in the order of the checks: identifiers, then scores
    assert (blank.column, blank.rows) == ("judge", (2,)) and (bad.rows, bad.value) == ((1,), ("x",))
    assert off.rows == (4, 7) and off.value == (9.0,) and off.setting == "levels"
    # the core speaks of the data and the scale, never of a flag or a box
    assert "--" not in str(info.value) and "box" not in str(info.value)
    from app_support.errors import ADVICE as APP
    from simplex_core.cli import ADVICE as CLI

    assert "--levels=1,2,3,4,5" in info.value.describe(CLI) and "'Observed levels' box" in off.describe(APP)
    dup = pd.concat([SMALL, _frame([("q1", "a", "j1", 3)])], ignore_index=True)
    with pytest.raises(ValidationError) as info:
        load_table(dup)
    assert info.value.problems[0].rows == (1, 9)
    with pytest.raises(ValidationError) as info:
        load_table(SMALL.assign(criterion=["x", "y"] * 4))
    p = info.value.problems[0]
    assert p.value == ("x", "y") and p.setting == "criterion" and "Use --criterion C." in p.describe(CLI)


def test_a_bad_levels_option_names_its_flag_on_the_command_line_only():
    from simplex_core.cli import usage_message
    from simplex_core.data.scale import scale_from_options

    with pytest.raises(ScaleError) as info:
        scale_from_options("1,,3", None)
    assert "--" not in str(info.value) and info.value.setting == "levels"
    assert usage_message(info.value).endswith("(--levels)")
    # values that parse but make no scale name their flag too (a true level no score has: the levels that hold it)
    for levels, true_levels, flag in (("nan,1", None, "(--levels)"), ("1,2,3", "1,4", "Use --levels=1,2,3,4."),
                                      ("1,2,3", "2", "(--true-levels)")):
        with pytest.raises(ScaleError) as info:
            scale_from_options(levels, true_levels)
        assert usage_message(info.value).endswith(flag), (levels, true_levels, str(info.value))


def test_conflicting_duplicates_are_an_error_and_exact_ones_a_note():
    conflicting = pd.concat([SMALL, _frame([("q1", "a", "j1", 3)])], ignore_index=True)
    with pytest.raises(ValidationError, match=r"Conflicting duplicate rows: .* rows 1, 9"):
        load_table(conflicting)
    exact = pd.concat([SMALL, _frame([("q1", "a", "j1", 1)])], ignore_index=True)
    table = load_table(exact)
    assert len(table.frame) == len(SMALL)
    assert any("1 exact duplicate row" in n and "row 9" in n for n in table.notes)


def test_missing_scores_are_excluded_and_counted_not_silently_dropped():
    df = SMALL.copy().astype({"score": object})
    df.loc[[0, 4], "score"] = None
    table = load_table(df)
    assert len(table.frame) == len(SMALL) - 2
    assert any("2 judgments with no score excluded (j1: 2)." in n for n in table.notes)
    df.loc[[1, 2, 3], "score"] = None  # every score of item q1
    table = load_table(df)
    assert table.items == ("q2",)
    assert any("5 judgments with no score excluded (j1: 3, j2: 2); 1 item with no score at all left out ('q1')." in n
               for n in table.notes), table.notes


def test_candidate_with_no_usable_rows():
    df = pd.concat([SMALL, _frame([("q1", "c", "j1", None)])], ignore_index=True)
    with pytest.raises(ValidationError, match=r"'candidate' column: no usable rows \(every score missing\) for 'c'"):
        load_table(df)


def test_fewer_than_two_candidates():
    df = SMALL[SMALL.candidate == "a"]
    with pytest.raises(ValidationError, match=r"only 1 candidate with usable rows \('a'\)"):
        load_table(df)


def test_true_score_must_agree_across_judges():
    df = SMALL.copy()
    df["true_score"] = [1, 2, 3, 2, 2, 1, 2, 1]  # (q1, a) gets 1 from j1 and 3 from j2
    with pytest.raises(ValidationError, match=r"true_score' column: differs between the rows of 1 \(item, candidate\) pair: \('q1', 'a'\)"):
        load_table(df)


def test_true_score_out_of_range_names_row():
    df = SMALL.copy()
    df["true_score"] = [1, 2, 1, 2, 2, 1, 2, 5.5]
    with pytest.raises(ValidationError, match=r"value 5.5 in row 8 outside the true scale's range\. Expected a number from 1 to 3"):
        load_table(df, scale=Scale((1, 2, 3)))


def test_too_many_distinct_scores_asks_for_levels():
    df = SMALL.copy()
    df = pd.concat([df] * 3, ignore_index=True)
    df["item"] = [f"q{i}" for i in range(len(df))]
    df["score"] = np.linspace(0, 1, len(df))
    with pytest.raises(ValidationError, match=r"24 distinct values .* too many to be scoring levels"):
        load_table(df)


def test_self_family_judge_with_nothing_left():
    df = SMALL.copy()
    df["candidate_family"] = df["candidate"].map({"a": "fa", "b": "fa"})
    df["judge_family"] = df["judge"].map({"j1": "fa", "j2": "fb"})
    table = load_table(df)
    with pytest.raises(ValidationError, match=r"every judgment of judge 'j1' is excluded as self-family"):
        count_tensor(table)
    assert count_tensor(table, self_exclusion=False).included.all()


def test_candidate_scored_only_by_its_own_family():
    df = SMALL.copy()
    df["candidate_family"] = df["candidate"].map({"a": "fa", "b": "fb"})
    df["judge_family"] = "fa"
    table = load_table(df)
    # kept apart (the default) its judgments stay, as own-family raters: the message says what is missing
    with pytest.raises(ValidationError, match=r"candidate 'a' has no judge of another family: only judges of its own "
                       r"family scored it, and those judgments, kept apart as own-family raters, .*data say nothing "
                       r"about it\. Fix: add a judge of another family, pool self-family judgments"):
        count_tensor(table)
    # left out, its judgments are excluded
    with pytest.raises(ValidationError, match=r"every judgment of candidate 'a' is excluded as self-family .*data say "
                       r"nothing about it\. Fix: switch self-family exclusion off"):
        count_tensor(table, self_exclusion="drop")
    assert count_tensor(table, self_exclusion=False).included.all()


def test_self_family_judgments_are_kept_apart_left_out_or_pooled():
    # j1 is of a's family: its two judgments of a become the rater "j1 · own family" (kept apart, the
    # default), are left out ("drop"), or stay j1's (False); no judgment is lost except when dropped
    table = load_table(SMALL, families={"a": "x", "j1": "x"})
    apart = count_tensor(table)
    assert apart.judges == ("j1", "j2", "j1 · own family")
    np.testing.assert_array_equal(apart.included, [[False, True], [True, True], [True, False]])
    np.testing.assert_array_equal(apart.N[0, 0], [0, 0, 0])  # j1's own vertices never see candidate a
    np.testing.assert_array_equal(apart.N[2, 0], [1, 1, 0])  # a's scores from j1: 1 and 2
    assert apart.N.sum() == len(SMALL) and apart.excluded_pairs == (("j1", "a"),)
    # each answer is one pattern over the three raters: a's answers carry the own-family rater's score
    assert apart.patterns.count_tensor(3, 2, 3).sum() == len(SMALL)
    np.testing.assert_array_equal(apart.patterns.count_tensor(3, 2, 3), apart.N)
    dropped = count_tensor(table, self_exclusion="drop")
    assert dropped.judges == ("j1", "j2") and not dropped.included[0, 0] and dropped.N.sum() == len(SMALL)
    pooled = count_tensor(table, self_exclusion=False)
    assert pooled.judges == ("j1", "j2") and pooled.included.all()
    np.testing.assert_array_equal(apart.N[0] + apart.N[2], pooled.N[0])
    with pytest.raises(ValueError, match="True, False or 'drop'"):
        count_tensor(table, self_exclusion="apart")


def test_families_json_and_unknown_names_are_reported():
    table = load_table(SMALL, families={"a": "x", "j1": "x"})
    assert table.self_family_pairs == (("j1", "a"),)
    assert any("No family for 'b', 'j2'" in n for n in table.notes)
    typo = load_table(SMALL, families={"a": "x", "j1": "x", "gpt4": "y"})
    assert any("The families name 'gpt4', neither a candidate nor a judge" in n for n in typo.notes)
    assert "gpt4" not in typo.families
    with pytest.raises(ValidationError, match="flat JSON object"):
        load_table(SMALL, families='["not", "a", "mapping"]')


def test_criterion_column():
    df = pd.concat([SMALL.assign(criterion="fluency"), SMALL.assign(criterion="relevance")], ignore_index=True)
    with pytest.raises(ValidationError, match=r"holds 2 criteria \('fluency', 'relevance'\)"):
        load_table(df)
    assert len(load_table(df, criterion="relevance").frame) == len(SMALL)
    with pytest.raises(ValidationError, match="no rows for criterion 'x'"):
        load_table(df, criterion="x")


def test_unreadable_file_is_a_validation_error(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_text("this is not parquet")
    with pytest.raises(ValidationError, match=r"bad\.parquet.* is not a Parquet file"):
        load_table(path)


# -- views ------------------------------------------------------------------------------------------

def test_count_tensor_exact():
    counts = count_tensor(load_table(SMALL))
    # judge j1: a got 1, 2; b got 2, 1. judge j2: a got 3, 3; b got 2, 1.
    assert counts.N.tolist() == [[[1, 1, 0], [1, 1, 0]], [[0, 0, 2], [1, 1, 0]]]
    assert counts.judges == ("j1", "j2") and counts.candidates == ("a", "b")


def test_item_view_and_self_exclusion():
    table = load_table(SMALL.assign(true_score=[1, 2, 1, 2, 3, 1, 3, 1]), families={"a": "f", "j2": "f"})
    view = item_view(table)
    assert view.loc[("q2", "a"), "j2"] == 3 and view.loc[("q2", "a"), "true_score"] == 3
    excl = item_view(table, self_exclusion=True)
    assert excl["j2"].xs("a", level="candidate").isna().all()
    assert excl["j1"].notna().all()


def test_score_distribution_shares_sum_to_one():
    dist = score_distribution(load_table(SMALL))
    assert np.allclose(dist.groupby(["judge", "candidate"])["share"].sum(), 1.0)


@pytest.mark.parametrize("fmt", ["csv", "csv.gz", "jsonl", "parquet"])
def test_formats_round_trip(tmp_path, fmt):
    df = template_frame()
    path = tmp_path / f"t.{fmt}"
    if fmt == "csv":
        df.to_csv(path, index=False)
    elif fmt == "csv.gz":
        df.to_csv(path, index=False, compression="gzip")
    elif fmt == "jsonl":
        df.to_json(path, orient="records", lines=True)
    else:
        df.to_parquet(path)
    table = load_table(path)
    ref = load_table(df)
    assert table.data_hash() == ref.data_hash()
    assert table.families == ref.families


def test_bytes_upload_like_streamlit():
    buf = io.BytesIO(template_frame().to_csv(index=False).encode())
    buf.name = "upload.csv"
    assert load_table(buf).candidates == ("model-a", "model-b")



@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_a_csv_saved_with_another_separator_reads_as_the_same_table(sep):
    # A name holding the separator, quoted, stays one name.
    df = template_frame().assign(candidate=lambda d: d["candidate"].str.replace("model-a", f"model{sep}a", regex=False))
    buf = io.BytesIO(df.to_csv(index=False, sep=sep).encode())
    buf.name = "upload.csv"
    table = load_table(buf)
    assert table.data_hash() == load_table(df).data_hash()
    assert f"model{sep}a" in table.candidates


def test_a_decimal_comma_is_named_with_its_fix():
    text = "item;candidate;judge;score\nq1;a;j1;3,5\nq1;b;j1;4\n"
    with pytest.raises(ValidationError, match=r"'3,5' in row 1\..*write decimals with a point"):
        load_table(io.BytesIO(text.encode()))

# -- scales -----------------------------------------------------------------------------------------

def test_a_scale_too_large_to_fit_is_described_but_refused_by_a_fit_with_its_flag(tmp_path, capsys):
    from simplex_core.cli import main
    from simplex_core.model.settings import MAX_FIT_LEVELS

    n = MAX_FIT_LEVELS + 1
    rows = [(f"q{i}", c, j, 1 + (i * 7 + len(c) + len(j)) % n) for i in range(3 * n) for c in ("a", "bb") for j in ("x", "yy")]
    path = tmp_path / "wide.csv"
    _frame(rows).to_csv(path, index=False)
    levels = "--levels=" + ",".join(str(v) for v in range(1, n + 1))
    assert main(["describe", str(path), levels]) == 0
    capsys.readouterr()
    for command in (["fit", str(path), levels, "--out", str(tmp_path / "r.json")],
                    ["suggest-labels", str(path), levels, "--out", str(tmp_path / "s.csv")]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert f"The scale has {n} levels; a fit takes at most {MAX_FIT_LEVELS}" in err and err.rstrip().endswith("(--levels)")
        assert "Traceback" not in err
    assert not (tmp_path / "r.json").exists()


def test_parse_levels_negative_and_labels():
    assert parse_levels("-1:incorrect,0:unsure,1:correct") == ((-1.0, 0.0, 1.0), ("incorrect", "unsure", "correct"))
    assert parse_true_levels("-1,1") == (-1.0, 1.0)
    with pytest.raises(ScaleError, match="ascending"):
        parse_levels("3,2,1")


def test_non_square_scale():
    s = Scale((-1, 0, 1), ("incorrect", "unsure", "correct"), (-1, 1))
    assert s.true_index == (0, 2) and not s.is_square and s.true_labels == ("incorrect", "correct")
    with pytest.raises(ScaleError, match=r"True levels \[2\] are not observed levels"):
        Scale((1, 3), (), (1, 2))


def test_paper_mtbench_mapping():
    m = paper_three_level_mapping(Scale((1, 2, 3, 4, 5)))
    assert m == {1.0: 1.0, 2.0: 1.0, 3.0: 2.0, 4.0: 3.0, 5.0: 3.0}
    assert paper_three_level_mapping(Scale((1, 2, 3, 4, 5)), "tldr")[4.0] == 2.0


def test_level_mapping_text_reads_back_and_names_every_problem():
    scale = Scale((1, 2, 3, 4, 5))
    m = paper_three_level_mapping(scale)
    assert level_mapping_text(m) == "1:1, 2:1, 3:2, 4:3, 5:3"
    assert parse_level_mapping(level_mapping_text(m), scale) == m
    assert parse_level_mapping("1:1; 2:1; 3:2; 4:3; 5:3", scale) == m  # ';' separates too
    with pytest.raises(ScaleError) as err:
        parse_level_mapping("1:1, 2-1, 3:x, 7:2", scale)
    msg = str(err.value)
    assert "'2-1', '3:x'" in msg and "say where levels 2, 3, 4, 5 go" in msg and "7 is not a level of the scale (1, 2, 3, 4, 5)" in msg


def test_wide_distribution_is_the_long_one_pivoted():
    df = _frame([("q1", "a", "j1", 1), ("q2", "a", "j1", 3), ("q1", "b", "j1", 3), ("q1", "a", "j2", 2)])
    table = load_table(df, scale=Scale((1, 2, 3)))
    wide = score_distribution_wide(table)
    assert list(wide.index) == ["a", "b"] and list(wide.columns) == [(j, lab) for j in ("j1", "j2") for lab in ("1", "2", "3")]
    assert wide.loc["a", ("j1", "3")] == 1 and wide.loc["a", ("j2", "1")] == 0 and wide.sum().sum() == 4
    assert wide.loc["b", "j2"].isna().all()  # j2 never scored b: missing, not "never gave this level"


# -- properties -------------------------------------------------------------------------------------

@st.composite
def judgment_tables(draw):
    n_levels = draw(st.integers(2, 6))
    K = draw(st.integers(2, 5))
    J = draw(st.integers(1, 3))
    n = draw(st.integers(1, 6))
    scores = draw(st.lists(st.integers(1, n_levels), min_size=K * J * n, max_size=K * J * n))
    rows = []
    idx = 0
    for i in range(n):
        for k in range(K):
            for j in range(J):
                rows.append((f"q{i}", f"c{k}", f"j{j}", scores[idx]))
                idx += 1
    return _frame(rows), n_levels


@given(judgment_tables())
@settings(max_examples=60, deadline=None)
def test_counts_preserve_every_judgment(case):
    df, n_levels = case
    table = load_table(df, scale=Scale(tuple(range(1, n_levels + 1))))
    counts = count_tensor(table)
    assert counts.N.sum() == len(df)
    # per (judge, candidate): counts equal the number of items
    assert (counts.N.sum(axis=2) == df["item"].nunique()).all()


@given(judgment_tables(), st.data())
@settings(max_examples=60, deadline=None)
def test_collapsing_preserves_counts_and_order(case, data):
    df, n_levels = case
    scale = Scale(tuple(range(1, n_levels + 1)))
    table = load_table(df, scale=scale)
    # a random monotone map onto fewer levels
    cuts = sorted(data.draw(st.lists(st.integers(1, n_levels - 1), min_size=1, max_size=n_levels - 1, unique=True)))
    mapping = {float(v): float(1 + sum(v > c for c in cuts)) for v in range(1, n_levels + 1)}
    collapsed = collapse_levels(table, mapping)
    assert collapsed.scale.n_levels == len(cuts) + 1
    before, after = count_tensor(table).N, count_tensor(collapsed).N
    assert after.sum() == before.sum()
    for new_index, new_value in enumerate(collapsed.scale.values):
        olds = [scale.index_of(v) for v in scale.values if mapping[v] == new_value]
        assert np.array_equal(after[:, :, new_index], before[:, :, olds].sum(axis=2))


def test_collapse_must_be_monotone():
    with pytest.raises(ScaleError, match="keep the order"):
        collapse_scale(Scale((1, 2, 3)), {1: 2, 2: 1, 3: 3})
