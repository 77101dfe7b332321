"""Hostile and malformed inputs: every one ends in a ValidationError (exit status 2 on the
command line) that names what is wrong and where, within bounded memory; never another exception."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from simplex_core.cli import main
from simplex_core.cli.data_commands import describe_table
from simplex_core.data.table import JudgmentTable, load_table
from simplex_core.data.problems import ValidationError
from simplex_core.data.views import count_tensor
from simplex_core.data.reading import load_families

ROOT = Path(__file__).resolve().parents[1]
GOOD = "item,candidate,judge,score\nq1,a,j1,1\nq1,b,j1,2\nq2,a,j1,2\nq2,b,j1,1\n"


def _problem(source, **kw) -> str:
    with pytest.raises(ValidationError) as info:
        load_table(source, **kw)
    return str(info.value)


# -- caps ------------------------------------------------------------------------------------------

def test_decompression_bomb_is_refused_without_inflating_it(monkeypatch):
    monkeypatch.setenv("SIMPLEX_JUDGE_MAX_BYTES", str(1_000_000))
    bomb = gzip.compress(GOOD.encode() + b"q3,a,j1,1\n" * 2_000_000)  # ~20 MB inflated, ~40 kB packed
    assert len(bomb) < 200_000
    text = _problem(bomb, name="upload.csv")  # the name says CSV; the magic bytes say gzip
    assert "'upload.csv' decompresses to more than 1.0 MB" in text


def test_parquet_whose_dictionary_decodes_past_the_cap_is_refused_without_decoding_it(monkeypatch):
    """A few kB of Parquet can repeat one long dictionary value on every row: the size check counts
    the text as decoded (the file's own metadata counts it as stored)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setenv("SIMPLEX_JUDGE_MAX_BYTES", str(5_000_000))
    n = 2_000
    long_name = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array(["x" * 10_000]))
    table = pa.table({"item": [f"q{i}" for i in range(n)], "candidate": long_name, "judge": ["j"] * n, "score": [1] * n})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)  # dictionary-encoded: ~20 MB of names in a small file
    assert len(buffer.getvalue()) < 200_000
    text = _problem(buffer.getvalue(), name="names.parquet")
    assert "once decoded" in text and "MB" in text
    # under the cap, the same kind of file reads, with plain (not categorical) names
    monkeypatch.setenv("SIMPLEX_JUDGE_MAX_BYTES", str(50_000_000))
    small = pa.table({"item": ["q1", "q1", "q2", "q2"], "judge": ["j1"] * 4, "score": [1, 2, 2, 1],
                      "candidate": pa.array(["a", "b", "a", "b"]).dictionary_encode()})
    buffer = io.BytesIO()
    pq.write_table(small, buffer)
    loaded = load_table(buffer.getvalue(), name="small.parquet")
    assert sorted(loaded.candidates) == ["a", "b"]


def test_a_huge_echoed_value_is_cut_in_the_message():
    huge = "z" * 3_000_000
    text = _problem((GOOD + f"q3,a,j1,{huge}\n").encode(), name="huge.csv")
    assert len(text) < 5_000 and "characters not shown" in text and "row 5" in text


def test_row_cap(monkeypatch):
    monkeypatch.setenv("SIMPLEX_JUDGE_MAX_ROWS", "3")
    assert "has 4 lines; at most 3 rows are read" in _problem(GOOD.encode(), name="t.csv")
    assert "at most 3 are read" in _problem(pd.read_csv(io.StringIO(GOOD)))


def test_device_and_folder_are_not_read(tmp_path):
    assert "is not a regular file" in _problem("/dev/zero")
    assert "is not a regular file" in _problem(tmp_path)


# -- messages --------------------------------------------------------------------------------------

def test_duplicate_columns_after_case_folding():
    text = _problem(b"item,candidate,judge,Score,score\nq1,a,j,1,2\n", name="t.csv")
    assert "2 columns are named 'score' once case and spaces are ignored: 'Score', 'score'" in text


def test_object_and_list_scores_name_the_rows(tmp_path):
    lines = [{"item": "q1", "candidate": "a", "judge": "j", "score": 1},
             {"item": "q1", "candidate": "b", "judge": "j", "score": {"value": 2}}]
    text = _problem("\n".join(json.dumps(r) for r in lines).encode(), name="t.jsonl")
    assert "The 'score' column: 1 cell in row 2 holds a list or an object" in text
    path = tmp_path / "t.parquet"
    pd.DataFrame({"item": ["q1", "q1"], "candidate": ["a", "b"], "judge": ["j", "j"], "score": [[1], [1, 2]]}).to_parquet(path)
    assert "2 cells in rows 1, 2 hold a list or an object" in _problem(path)


def test_binary_garbage_and_other_encodings():
    assert "is not a text table: it holds binary data (a zero byte on line 2)" in _problem(b"item,x\n\x00\x01\x02", name="t.csv")
    assert "is not UTF-8 text (byte 0xff on line 6)" in _problem(GOOD.encode() + b"q3,\xff,j,1\n", name="t.csv")
    rng = np.random.default_rng(0)
    _problem(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes(), name="t.csv")


def test_duplicate_rows_with_blank_names_are_reported_not_raised():
    """Found by the fuzz below (2026-11-27): repeated rows whose item and candidate are blank made the
    duplicate check index with the NaN group of pandas (IndexError). The blanks are the message."""
    frame = pd.DataFrame([[None, None, "j", 1], [None, None, "j", 1], ["i", "c", "j", 1]],
                         columns=["item", "candidate", "judge", "score"])
    with pytest.raises(ValidationError, match=r"The 'item' column: 2 blank values in rows 1, 2"):
        load_table(frame)


def test_blank_score_column():
    assert "every score is blank (2 rows): there is nothing to rank" in _problem(b"item,candidate,judge,score\nq,a,j,\nq,b,j,\n", name="t.csv")


def test_infinite_scores_name_the_rows():
    text = _problem(GOOD.encode() + b"q3,a,j1,inf\nq3,b,j1,1e400\n", name="t.csv")
    assert "values 'inf', '1e400' in rows 5, 6 are not a finite number" in text


def test_json_array_is_not_json_lines_but_records_are_read():
    assert "is a JSON array, not JSON Lines" in _problem(json.dumps(["item", "candidate", "judge", "score"] * 70).encode(), name="t.json")
    assert "line 2 is a JSON array, not an object" in _problem(b'{"item": "q"}\n[1, 2]\n', name="t.jsonl")
    records = pd.read_csv(io.StringIO(GOOD)).to_dict(orient="records")
    assert load_table(json.dumps(records).encode(), name="t.json").candidates == ("a", "b")


def test_empty_inputs():
    assert "'upload.csv' is empty (0 bytes)" in _problem(b"", name="upload.csv")
    assert "is empty (only blank space)" in _problem(b"\n \n", name="upload.csv")


def test_families_text_is_never_a_path(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"cand-a": "LEAKED-VALUE"}')
    with pytest.raises(ValidationError) as info:
        load_families(str(secret))
    assert "The families text is not valid JSON" in str(info.value) and "LEAKED" not in str(info.value)
    assert load_families(secret) == {"cand-a": "LEAKED-VALUE"}  # a Path (the command line's --families) is a file
    with pytest.raises(ValidationError, match="No families file at"):
        load_families(tmp_path / "missing.json")
    with pytest.raises(ValidationError, match="is not valid JSON \\(a number with more digits"):
        load_families('{"cand-a": ' + "9" * 5000 + "}")  # past Python's cap on an integer's digits


def test_merged_and_stripped_names_are_reported():
    lines = [{"item": "q", "candidate": 1, "judge": "j", "score": 1}, {"item": "q2", "candidate": "1", "judge": "j", "score": 2},
             {"item": "q3", "candidate": 1.0, "judge": "j", "score": 1}, {"item": "q", "candidate": " b", "judge": "j", "score": 2}]
    table = load_table("\n".join(json.dumps(r) for r in lines).encode(), name="t.jsonl")
    assert table.candidates == ("1", "b")
    notes = " ".join(table.notes)
    assert "1 candidate name had spaces around it removed (e.g. ' b' → 'b')" in notes
    assert "(e.g. 1, '1', 1.0 all read as '1') and count as one candidate" in notes


# -- the command line ------------------------------------------------------------------------------

def test_cli_missing_families_file_and_out_checked_before_work(tmp_path, capsys):
    data = tmp_path / "t.csv"
    data.write_text(GOOD)
    assert main(["describe", str(data), "--families", str(tmp_path / "nope.json")]) == 2
    assert "No families file at" in capsys.readouterr().err
    # --out is a folder: refused before loading the data, let alone fitting
    assert main(["fit", str(tmp_path / "absent.csv"), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["fit", str(data), "--out", str(data / "x.json")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_outputs_never_overwrite_the_input_or_each_other(tmp_path, capsys):
    data = tmp_path / "t.csv"
    data.write_text(GOOD)
    # every refusal comes before the fit (the data here are too small to fit at all)
    assert main(["fit", str(data), "--out", str(data)]) == 2
    assert "is the input file DATA" in capsys.readouterr().err
    assert data.read_text() == GOOD
    assert main(["evaluate", str(data), "--out", str(tmp_path / "." / "t.csv")]) == 2
    assert "is the input file DATA" in capsys.readouterr().err
    same = str(tmp_path / "r.json")
    assert main(["fit", str(data), "--out", same, "--leaderboard", same]) == 2
    assert "--out and --leaderboard name the same file" in capsys.readouterr().err
    assert main(["fit", str(data), "--out", str(tmp_path / "r.json"), "--idata", ""]) == 2
    assert "--idata is empty" in capsys.readouterr().err
    # an output named for another format than the one written there (--out x.json written as CSV)
    assert main(["evaluate", str(data), "--out", str(tmp_path / "e.json")]) == 2
    assert "--out '" in (err := capsys.readouterr().err) and "names a JSON file, but CSV is written there" in err
    assert main(["fit", str(data), "--out", str(tmp_path / "r.json"), "--idata", str(tmp_path / "p.csv")]) == 2
    assert "names a CSV file, but NetCDF is written there: give it a name ending in .nc" in capsys.readouterr().err
    assert not (tmp_path / "e.json").exists() and not (tmp_path / "r.json").exists()


def test_rows_and_header_that_do_not_line_up_are_named_not_shifted():
    # a trailing separator on every data row (spreadsheet exports): read as meant, nothing shifted
    table = load_table(b"item,candidate,judge,score\nq1,a,j1,1,\nq1,b,j1,2,\nq2,a,j1,2,\nq2,b,j1,1,\n", name="t.csv")
    assert table.candidates == ("a", "b") and sorted(table.frame["score"]) == [1, 1, 2, 2]
    # a value past the header's columns is named, with its row
    text = _problem(b"item,candidate,judge,score\nq1,a,j1,1\nq1,b,j1,2,extra\n", name="t.csv")
    assert "data row 2" in text and "'extra'" in text or "line 3 (data row 2)" in text, text
    text = _problem(b"item,candidate,judge,score\nq1,a,j1,1,oops\nq1,b,j1,2\n", name="t.csv")
    assert "data row 1 has a value ('oops')" in text, text
    # two extra fields, the first filled: named too, not dropped with the empty last one
    text = _problem(b"item,candidate,judge,score\nq1,a,j1,1,,\nq1,b,j1,2,kept?,\n", name="t.csv")
    assert "data row 2 has a value ('kept?')" in text, text
    assert "two columns named 'score'" in _problem(b"item,candidate,judge,score,score\nq1,a,j1,1,2\n", name="t.csv")
    assert "header with semicolons but its rows with commas" in _problem(
        b"item;candidate;judge;score\nq1,a,j1,1\nq1,b,j1,2\n", name="t.csv")


def test_missing_columns_suggest_the_column_that_looks_like_them():
    text = _problem(b"item,candidate,grader,score\nq1,a,j,1\nq1,b,j,0\n", name="t.csv")
    assert "Missing required column 'judge'" in text and "'grader' looks like the judge column" in text, text
    text = _problem(b"item,candidate,colour,score\nq1,a,j,1\n", name="t.csv")
    assert "looks like" not in text  # no guess without a known synonym


def test_a_level_that_looks_like_a_typo_is_named():
    rows = ["item,candidate,judge,score"] + [f"q{i},{c},j1,{1 + (i + k) % 3}" for i in range(60) for k, c in enumerate("ab")]
    rows[7] = "q3,a,j1,7"  # one stray score, data row 7
    table = load_table("\n".join(rows).encode(), name="t.csv")
    assert table.scale.n_levels == 4
    assert any("level 7 (1 row: row 7) looks like a typo" in n for n in table.notes), table.notes
    clean = load_table("\n".join(rows[:7] + rows[8:]).encode(), name="t.csv")
    assert not any("typo" in n for n in clean.notes)


def test_simulate_writes_the_format_its_file_name_says(tmp_path):
    for name in ("s.parquet", "s.jsonl", "s.csv.gz"):
        assert main(["simulate", "three-level", "--items", "10", "--out", str(tmp_path / name)]) == 0
        assert len(load_table(tmp_path / name).items) == 10
    assert main(["simulate", "three-level", "--items", "100000000", "--out", str(tmp_path / "big.csv")]) == 2
    assert not (tmp_path / "big.csv").exists()


def test_describe_json_says_whether_the_table_is_valid_and_what_fit_would_refuse(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("item,candidate,judge,score,score\nq1,a,j1,1,2\n")
    assert main(["describe", str(bad), "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] is False and "two columns named 'score'" in out["error"]
    # every judgment of candidate b is self-family: describe passes it, and says what `fit` refuses
    fam = tmp_path / "fam.json"
    fam.write_text(json.dumps({"b": "f", "j1": "f"}))
    good = tmp_path / "t.csv"
    good.write_text(GOOD)
    assert main(["describe", str(good), "--families", str(fam), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] is True and any("candidate 'b' has no judge of another family" in p for p in out["fit_problems"])
    assert main(["describe", str(good), "--families", str(fam)]) == 0
    assert "validation: 1 problem for `fit` at its defaults" in capsys.readouterr().out


def test_conflicting_duplicates_name_what_differs():
    text = _problem(b"item,candidate,judge,score,true_score\nq1,a,j1,1,1\nq1,a,j1,1,2\nq2,a,j1,2,1\n", name="t.csv")
    assert "different true_score values in rows 1, 2" in text and "different scores" not in text, text


def test_describe_into_a_closed_pipe_prints_no_traceback(tmp_path):
    data = tmp_path / "t.csv"
    data.write_text(GOOD)
    proc = subprocess.Popen([sys.executable, "-m", "simplex_core", "describe", str(data)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    proc.stdout.close()  # like `| head` exiting at once
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


# -- fuzz: a message or a table, never another exception -------------------------------------------

_cells = st.one_of(
    st.none(), st.text(max_size=6), st.integers(-3, 7), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.sampled_from(["1", "2", " 1", "1.0", "inf", "nan", "true", "", "1e400"]),
    st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
_any_columns = st.lists(st.one_of(st.sampled_from(["item", "candidate", "judge", "score", "true_score", "Score", " judge",
                                                "candidate_family", "judge_family", "criterion"]), st.text(max_size=5)),
                    min_size=0, max_size=7)
# Most examples have the four required columns, so that the fuzz reaches the cell checks.
_columns = st.one_of(_any_columns, st.builds(lambda extra: ["item", "candidate", "judge", "score"] + extra, _any_columns))
_cells_small = st.one_of(st.sampled_from(["a", "b", "q1", "q2", 1, 2, "1", " a"]), _cells)


def _must_be_clean(source, **kw) -> None:
    try:
        table = load_table(source, **kw)
    except ValidationError as exc:
        assert str(exc).strip()
        return
    assert isinstance(table, JudgmentTable)
    try:
        describe_table(table)
        count_tensor(table)
    except ValidationError:
        pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400), st.sampled_from(["x.csv", "x.tsv", "x.jsonl", "x.json", "x.parquet", "x.csv.gz", "x"]))
def test_fuzz_random_bytes(data, name):
    _must_be_clean(data, name=name)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_columns, st.integers(0, 12), st.data(), st.sampled_from(["frame", "csv", "jsonl", "parquet"]))
def test_fuzz_random_tables(columns, n_rows, data, form):
    rows = [{c: data.draw(_cells_small) for c in columns} for _ in range(n_rows)]
    frame = pd.DataFrame(rows, columns=list(dict.fromkeys(columns)))
    if form == "frame":
        _must_be_clean(frame)
    elif form == "csv":
        _must_be_clean(frame.to_csv(index=False).encode(), name="t.csv")
    elif form == "jsonl":
        try:
            text = "\n".join(json.dumps(r, default=str) for r in rows)
        except ValueError:
            return
        _must_be_clean(text.encode(), name="t.jsonl")
    else:
        buf = io.BytesIO()
        try:
            frame.to_parquet(buf)
        except Exception:  # noqa: BLE001 — pyarrow cannot store every mix of types; nothing to load then
            return
        _must_be_clean(buf.getvalue(), name="t.parquet")


# -- the fast JSON Lines reader reads what pandas reads ------------------------------------------

_json_values = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.integers(-5, 5),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.5, 1.0, 2.0, -3.25]),
    st.text(max_size=6), st.sampled_from(["2024-01-01", "12:30", "1", "007", "true", "null", "NaN", "", " a "]),
    st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.sampled_from("xy"), st.integers(0, 3), max_size=1),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(st.sampled_from(["item", "candidate", "score", "judge"]), _json_values, max_size=4),
                min_size=1, max_size=8))
@example([{"item": float("nan")}])  # a column of NaN only: pandas reads nulls (object), pyarrow doubles (found by CI-like run)
@example([{"score": float("nan")}, {"score": None}])
def test_fast_jsonl_reader_reads_what_pandas_reads(records):
    from simplex_core.data.reading import _read_jsonl_arrow

    text = "\n".join(json.dumps(r) for r in records) + "\n"
    fast = _read_jsonl_arrow(text)
    if fast is None:
        return  # pandas reads it (or names the fault), as before
    slow = pd.read_json(io.StringIO(text), lines=True, dtype=False)
    pd.testing.assert_frame_equal(fast, slow, check_column_type=False)


def test_fast_jsonl_reader_takes_a_contract_table():
    from simplex_core.data.reading import _read_jsonl_arrow

    rows = [{"item": f"q{i}", "candidate": c, "judge": "j", "score": (i % 3) + 1, "true_score": 1.5}
            for i in range(50) for c in ("a", "b")]
    text = "\n".join(json.dumps(r) for r in rows)
    fast = _read_jsonl_arrow(text)
    assert fast is not None and len(fast) == 100
    pd.testing.assert_frame_equal(fast, pd.read_json(io.StringIO(text), lines=True, dtype=False))


def test_a_key_named_twice_in_a_json_object_is_named_with_its_line():
    text = b'{"item": "q1", "candidate": "a", "judge": "j", "score": 1}\n' \
           b'{"item": "q1", "candidate": "b", "judge": "j", "score": 1, "score": 2}\n'
    message = _problem(text, name="t.jsonl")
    assert "line 2 names the key 'score' twice" in message


def test_an_unclosed_quote_is_named_with_its_line():
    message = _problem(b'item,candidate,judge,score\nq1,a,j,1\n\nq1,"b,j,2\nq2,a,j,1\n', name="t.csv")
    assert "double quote on line 4 that is never closed" in message


def test_a_very_wide_header_reads_the_contracts_columns_only_and_still_names_its_faults(tmp_path):
    # a header of a million names took 48 s to describe: past WIDE_HEADER_COLUMNS only the contract's
    # columns are built, in every format, and a wide file reads as the same table as a narrow one
    from simplex_core.data.reading import WIDE_HEADER_COLUMNS

    narrow = pd.read_csv(io.StringIO(GOOD))
    extra = pd.DataFrame({f"x{i}": ["0"] * len(narrow) for i in range(WIDE_HEADER_COLUMNS + 10)})
    wide = pd.concat([narrow.rename(columns={"judge": " Judge"}), extra], axis=1)
    want = load_table(GOOD.encode(), name="t.csv").frame
    records = wide.to_dict(orient="records")
    files = {"w.csv": wide.to_csv(index=False).encode(),
             "w.jsonl": "".join(json.dumps(r) + "\n" for r in records).encode(),
             "w.json": json.dumps(records).encode()}
    wide.to_parquet(tmp_path / "w.parquet", index=False)
    files["w.parquet"] = (tmp_path / "w.parquet").read_bytes()
    for name, data in files.items():
        table = load_table(data, name=name)
        pd.testing.assert_frame_equal(table.frame, want, check_dtype=False, obj=name)
        assert any("' Judge'→'judge'" in n for n in table.notes), (name, table.notes)
    header = wide.to_csv(index=False).split("\n", 1)[0]
    text = _problem((header + "\nq1,a,j1,1\n").replace(" Judge", "grader").encode(), name="t.csv")
    assert "Missing required column 'judge'; found 'item', 'candidate', 'grader', 'score'" in text and "'grader' looks like the judge column" in text
    assert f"and {WIDE_HEADER_COLUMNS + 10 - 4:,} more" in text, text
    row = "q1,a,j1,1," + ",".join(["0"] * (WIDE_HEADER_COLUMNS + 10))
    text = _problem(f"{header}\n{row}\n{row.replace('q1,a', 'q2,a')},oops\n".encode(), name="t.csv")
    assert "data row 2 has a value ('oops')" in text, text
    text = _problem(f'{header}\n{row}\nq2,"a,j1,1\n'.encode(), name="t.csv")
    assert "double quote on line 3 that is never closed" in text, text


def test_json_lines_integers_past_64_bits_are_read_exactly_or_named():
    # pandas' JSON reader refuses them ("could not be read" was all it said); Python's reads them exactly
    rows = [{"item": 12345678901234567890123, "candidate": "a", "judge": "j", "score": 1},
            {"item": 12345678901234567890123, "candidate": "b", "judge": "j", "score": 0},
            {"item": 12345678901234567890124, "candidate": "a", "judge": "j", "score": 0}]
    text = "".join(json.dumps(r) + "\n" for r in rows).encode()
    table = load_table(text, name="t.jsonl")
    assert sorted(set(table.frame["item"])) == ["12345678901234567890123", "12345678901234567890124"]
    within_64_bits = text.replace(b"12345678901234567890123", b"1234567890123456789").replace(
        b"12345678901234567890124", b"1234567890123456788")  # past 2^53: a float would make them one item
    assert sorted(set(load_table(within_64_bits, name="t.jsonl").frame["item"])) == ["1234567890123456788",
                                                                                      "1234567890123456789"]
    rows[1]["score"] = 123456789012345678901234567890
    message = _problem("".join(json.dumps(r) + "\n" for r in rows).encode(), name="t.jsonl")
    assert "the score 123456789012345678901234567890 (row 2) has more digits than a score keeps" in message, message


def test_scores_that_differ_only_past_a_floats_digits_are_named_not_merged():
    message = _problem(b"item,candidate,judge,score\nq1,a,j,1.00000000000000001\nq1,b,j,1\nq2,a,j,2\n", name="t.csv")
    assert "the scores 1.00000000000000001 and 1 (rows 1, 2) are different numbers, but the same one" in message or \
        "the scores 1 and 1.00000000000000001 (rows 1, 2)" in message, message
    message = _problem(b"item,candidate,judge,score\nq1,a,j,12345678901234567890123\nq1,b,j,12345678901234567890124\n"
                       b"q2,a,j,1\nq2,b,j,2\n", name="t.csv")  # long whole numbers that also become one: said so
    assert "the scores 12345678901234567890123 and 12345678901234567890124 (rows 1, 2) are different numbers" in message
    table = load_table(b"item,candidate,judge,score\nq1,a,j,1.0\nq1,b,j,1\nq2,a,j,2\nq2,b,j,2.00\n", name="t.csv")
    assert table.scale.values == (1.0, 2.0)  # the same number written two ways is one level, as before


def test_half_a_surrogate_pair_in_json_lines_is_named_with_its_line():
    # pandas' reader dropped it: "a\ud800" became "a", one candidate with the real "a"
    text = (b'{"item": "q1", "candidate": "a", "judge": "j", "score": 1}\n'
            b'{"item": "q1", "candidate": "a\\ud800", "judge": "j", "score": 0}\n')
    message = _problem(text, name="t.jsonl")
    assert "line 2: the value of 'candidate' holds half of a UTF-16 surrogate pair" in message, message
    pair = text.replace(b"a\\ud800", b"a\\ud83d\\ude00")  # a whole pair is a character
    assert load_table(pair, name="t.jsonl").candidates == ("a", "a\U0001F600")
    escaped = text.replace(b"a\\ud800", b"a\\\\ud800")  # a backslash, then the letters u d 8 0 0
    assert load_table(escaped, name="t.jsonl").candidates == ("a", "a\\ud800")
