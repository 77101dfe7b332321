"""Judgments read where they live (simplex_core.data.importers): FastChat MT-Bench judgment files
written here as FastChat's gen_judgment.py writes them, and Hugging Face ``datasets`` files written
by the package's own writers (tests/fixtures/hf_datasets, made by its make_fixtures.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from simplex_core.cli import main
from simplex_core.data.importers import FASTCHAT_PAIR, FASTCHAT_SINGLE, HF_DISK, detect_format
from simplex_core.data.problems import ValidationError
from simplex_core.data.table import load_table
from simplex_core.data.reading import read_source

HF = Path(__file__).parent / "fixtures" / "hf_datasets"
HF_COLUMNS = {"item": "question_id", "candidate": "model", "judge": "grader", "score": "rating"}


def _fastchat_rows(failed=(), judges=(("gpt-4", None),)):
    """Rows as FastChat's gen_judgment.py --mode single writes them (one JSON object a line, the judge
    as [model, prompt name]; the prompt is single-v1 for turn 1, single-v1-multi-turn for turn 2 and
    single-math-v1 for math questions). ``failed``: (question, model, turn) whose score is -1."""
    rows = []
    for q in (81, 82, 111):
        for k, model in enumerate(("alpaca-13b", "vicuna-13b", "gpt-3.5-turbo")):
            for turn in (1, 2):
                for j, (name, prompt) in enumerate(judges):
                    prompt = prompt or ("single-math-v1" if q == 111 else "single-v1") + ("-multi-turn" if turn == 2 else "")
                    score = -1 if (q, model, turn) in failed else 1 + (q + 3 * k + turn + j) % 10
                    rows.append({"question_id": q, "model": model, "judge": [name, prompt],
                                 "user_prompt": "[Instruction]\nPlease act as an impartial judge ...",
                                 "judgment": f"... Rating: [[{score}]]", "score": score, "turn": turn,
                                 "tstamp": 1687221890.5 + len(rows)})
    return rows


def _write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_fastchat_single_answer_file_is_read_as_it_is(tmp_path):
    rows = _fastchat_rows(failed={(82, "alpaca-13b", 2), (111, "gpt-3.5-turbo", 1)})
    path = _write_jsonl(tmp_path / "judgments.jsonl", rows)  # any name: told by content
    table = load_table(path)
    assert table.judges == ("gpt-4",)  # one judge whatever its prompt per question type and turn
    assert set(table.candidates) == {"alpaca-13b", "vicuna-13b", "gpt-3.5-turbo"}
    assert sorted(table.frame["item"].unique()) == ["111:1", "111:2", "81:1", "81:2", "82:1", "82:2"]
    assert len(table.frame) == len(rows) - 2
    got = table.frame.set_index(["item", "candidate"])["score"]
    for r in rows:
        if r["score"] != -1:
            assert got[(f"{r['question_id']}:{r['turn']}", r["model"])] == r["score"]
    assert ("82:2", "alpaca-13b") not in got.index
    notes = " ".join(table.notes)
    assert "FastChat MT-Bench single-answer judgments: 16 of 18 rows mapped" in notes
    assert "2 of 18 FastChat rows have score -1" in notes
    assert "Columns not used: user_prompt, judgment, tstamp." in notes


def test_fastchat_several_judges_and_prompts(tmp_path):
    # two judges; gpt-4 scored every answer under two prompts: each of its prompts is a judge of its own
    rows = _fastchat_rows(judges=(("gpt-4", "single-v1"), ("gpt-4", "single-v1-strict"), ("claude-v1", None)))
    table = load_table(_write_jsonl(tmp_path / "gpt-4_single.jsonl", rows))
    assert set(table.judges) == {"gpt-4/single-v1", "gpt-4/single-v1-strict", "claude-v1"}
    assert len(table.frame) == len(rows)
    assert any("several prompts" in n and "'gpt-4'" in n for n in table.notes)


def test_fastchat_pairwise_file_is_refused_with_what_to_give(tmp_path):
    rows = [{"question_id": 81, "model_1": "alpaca-13b", "model_2": "gpt-3.5-turbo", "g1_winner": "model_2",
             "g2_winner": "model_2", "judge": ["gpt-4", "pair-v2"], "g1_user_prompt": "...", "g1_judgment": "[[B]]",
             "g2_user_prompt": "...", "g2_judgment": "[[B]]", "turn": 1, "tstamp": 1687221890.5}] * 3
    path = _write_jsonl(tmp_path / "gpt-4_pair.jsonl", rows)
    with pytest.raises(ValidationError) as err:
        load_table(path)
    text = str(err.value)
    assert "FastChat pairwise judgment file" in text and "3 rows" in text and "_single.jsonl" in text


def test_detect_format_by_content_not_name(tmp_path):
    frame = pd.DataFrame(_fastchat_rows())
    assert detect_format(frame) == FASTCHAT_SINGLE
    # the same columns with a plain judge name are a table, read as it is (with --columns)
    assert detect_format(frame.assign(judge="gpt-4")) is None
    assert detect_format(frame.rename(columns={"model": "model_1"}).assign(model_2="x", g1_winner="tie")) == FASTCHAT_PAIR
    assert detect_format(HF / "saved") == HF_DISK and detect_format(HF / "saved_splits") == HF_DISK
    assert detect_format(tmp_path) is None  # an empty folder


def test_fastchat_from_a_dataframe_and_from_parquet(tmp_path):
    frame = pd.DataFrame(_fastchat_rows())
    assert read_source(frame)[["item", "candidate", "judge", "score"]].shape == (18, 4)
    path = tmp_path / "mt.parquet"
    frame.to_parquet(path)  # pyarrow reads the [name, prompt] lists back as arrays
    table = load_table(path)
    assert table.judges == ("gpt-4",) and len(table.frame) == 18


def _expected_hf():
    rows = [(f"q{q}", m, g, (q + len(m) + len(g)) % 3 + 1) for q in range(3) for m in ("m-a", "m-bb") for g in ("j-1", "j-22")]
    return sorted((i, c, j, float(s)) for i, c, j, s in rows)


def _triples(table):
    return sorted(table.frame[["item", "candidate", "judge", "score"]].itertuples(index=False, name=None))


@pytest.mark.parametrize("name", ["saved", "judgments.parquet", "judgments.jsonl"])
def test_hugging_face_files_with_a_column_mapping(name):
    table = load_table(HF / name, columns=HF_COLUMNS)
    assert _triples(table) == _expected_hf()
    if name == "saved":
        assert any("Hugging Face dataset saved with save_to_disk: 12 rows from 1 Arrow file" in n for n in table.notes)


def test_hugging_face_dataset_dict(tmp_path):
    with pytest.raises(ValidationError) as err:
        load_table(HF / "saved_splits", columns=HF_COLUMNS)
    assert "2 splits (train, test)" in str(err.value) and str(HF / "saved_splits" / "train") in str(err.value)
    assert _triples(load_table(HF / "saved_splits" / "train", columns=HF_COLUMNS)) == _expected_hf()
    one = tmp_path / "one_split"  # a DatasetDict of one split reads that split
    shutil.copytree(HF / "saved_splits" / "test", one / "test")
    (one / "dataset_dict.json").write_text('{"splits": ["test"]}')
    table = load_table(one, columns=HF_COLUMNS)
    assert len(table.frame) == 4 and any("(split test)" in n for n in table.notes)


def test_broken_save_to_disk_folders_are_named(tmp_path):
    folder = tmp_path / "ds"
    shutil.copytree(HF / "saved", folder)
    (folder / "data-00000-of-00001.arrow").unlink()
    with pytest.raises(ValidationError, match="names Arrow files that are not there: data-00000-of-00001.arrow"):
        load_table(folder)
    (tmp_path / "empty_folder").mkdir()
    with pytest.raises(ValidationError, match="no dataset saved by Hugging Face datasets' save_to_disk"):
        load_table(tmp_path / "empty_folder")
    (folder / "data-00000-of-00001.arrow").write_bytes(b"not arrow")
    with pytest.raises(ValidationError, match="Arrow file data-00000-of-00001.arrow cannot be read"):
        load_table(folder)


def test_save_to_disk_folder_within_the_row_limit(monkeypatch):
    monkeypatch.setenv("SIMPLEX_JUDGE_MAX_ROWS", "10")
    with pytest.raises(ValidationError, match="more than 10 rows"):
        load_table(HF / "saved", columns=HF_COLUMNS)


def test_the_command_line_prints_what_it_mapped(tmp_path, capsys):
    path = _write_jsonl(tmp_path / "gpt-4_single.jsonl", _fastchat_rows(failed={(81, "vicuna-13b", 1)}))
    assert main(["describe", str(path)]) in (0, None)
    out = capsys.readouterr().out
    assert "17 of 18 rows mapped" in out and "1 of 18 FastChat rows have score -1" in out
    assert main(["describe", str(HF / "saved"), "--columns", "item=question_id,candidate=model,judge=grader,score=rating"]) in (0, None)
    out = capsys.readouterr().out
    assert "save_to_disk" in out and "2 candidates x 2 judges x 3 items" in out


def test_written_by_the_datasets_package_itself(tmp_path):
    datasets = pytest.importorskip("datasets", reason="the datasets package is an optional extra (requirements-import.txt)")
    rows = {"question_id": ["q0", "q0", "q1", "q1"], "model": ["a", "b", "a", "b"], "grader": ["g"] * 4, "rating": [1, 2, 2, 1]}
    datasets.Dataset.from_dict(rows).shuffle(seed=0).save_to_disk(str(tmp_path / "ds"))
    table = load_table(tmp_path / "ds", columns=HF_COLUMNS)
    assert _triples(table) == [("q0", "a", "g", 1.0), ("q0", "b", "g", 2.0), ("q1", "a", "g", 2.0), ("q1", "b", "g", 1.0)]


INSPECT = Path(__file__).parent / "fixtures" / "inspect_logs"


def _inspect_expected():
    """The fixtures' scores as make_fixtures.py computes them: (item, candidate, judge, score)."""
    out = []
    for model in ("model-a", "model-bb"):
        candidate = f"mockllm/{model}"
        for i in range(1, 5):
            level = 1 + (i + len(candidate)) % 5
            if i != 4:
                out.append((str(i), candidate, "strict", float(level)))
            out.append((str(i), candidate, "lenient", float(min(5, level + 1))))
            for shift in (0, 1):
                grade = "CPI"[(i + shift + len(candidate)) % 3]
                out.append((str(i), candidate, f"multi_scorer/grade{shift}", {"C": 1.0, "P": 0.5, "I": 0.0}[grade]))
    return sorted(out)


def test_inspect_log_without_inspect_ai_says_what_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_inspect(name, *args, **kwargs):
        if name.startswith("inspect_ai"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_inspect)
    with pytest.raises(ValidationError) as err:
        load_table(INSPECT / "model-a.eval")
    text = str(err.value)
    assert "is an Inspect AI eval log" in text and "requirements-import.txt" in text
    assert detect_format(INSPECT / "model-bb.json") == "inspect-json" and detect_format(INSPECT / "model-a.eval") == "inspect-eval"


def test_inspect_logs_read_with_inspect_ais_reader(tmp_path):
    pytest.importorskip("inspect_ai", reason="inspect_ai is an optional extra (requirements-import.txt)")
    folder = tmp_path / "logs"  # an .eval log and a .json log, one per candidate, renamed: told by content
    folder.mkdir()
    shutil.copy(INSPECT / "model-a.eval", folder / "run1.eval")
    shutil.copy(INSPECT / "model-bb.json", folder / "run2.json")
    (folder / "notes.json").write_text('{"not": "a log"}')
    table = load_table(folder)
    assert _triples(table) == _inspect_expected()
    notes = " ".join(table.notes)
    assert "Inspect AI eval logs (2 logs, task task): 30 scores" in notes
    assert "one judge per member" in notes and "Unscored (left out as missing scores): 2 by strict." in notes
    one = read_source((INSPECT / "model-a.eval").read_bytes(), name="upload")  # an upload: bytes
    assert sorted(one.itertuples(index=False, name=None)) == [t for t in _inspect_expected() if t[1] == "mockllm/model-a"]


def test_an_eval_log_inflating_past_the_byte_limit_is_refused(monkeypatch):
    pytest.importorskip("inspect_ai", reason="inspect_ai is an optional extra (requirements-import.txt)")
    import zipfile

    path = INSPECT / "model-a.eval"
    with zipfile.ZipFile(path) as zf:
        inflated = sum(i.file_size for i in zf.infolist())
    assert inflated > 2 * path.stat().st_size
    monkeypatch.setenv("SIMPLEX_JUDGE_MAX_BYTES", str(path.stat().st_size + 1))  # the file fits, its content does not
    with pytest.raises(ValidationError, match="Inspect logs of more than .* bytes once decompressed"):
        load_table(path)
