#!/usr/bin/env python
"""Regenerate the built-in datasets under ``assets/datasets/`` from the raw files.

Run from the checkout root::

    .venv/bin/python scripts/convert_datasets.py [--raw ../shared/data/raw] [--out assets/datasets] [--only NAME ...]

One function per dataset (``convert_triviaqa``, ``convert_hanna``, ``convert_topical_chat``,
``convert_wildbench``). Each writes, into ``assets/datasets/<name>/``:

- one table per criterion in the data contract (``item, candidate, judge, score[, true_score]``),
  as ``.csv``, or ``.csv.gz`` when the plain CSV would exceed 200 kB (gzip with a fixed header, so
  re-running the script gives byte-identical files);
- ``families.json`` (flat {model name: family}, covering every judge and candidate);
- ``dataset.json`` (the metadata :mod:`simplex_core.data.datasets` reads);
- ``CARD.md`` (source, licence, candidates, judges, levels, ground truth, every conversion decision
  with the counts of rows affected, caveats). The counts in the cards are computed here, from the
  data, so they cannot drift from the files.

Conventions shared by every table: each table holds the full design grid (every item x candidate x
judge the source meant to have a judgment); a judgment that is missing or unusable in the source is
a row with an *empty* ``score``, which :func:`simplex_core.data.table.load_table` excludes and reports
("N judgments with no score excluded"), so nothing disappears silently. Rows that are not
judgments at all (stale duplicates, empty placeholder blocks) are removed here and counted in the card.

The reduction rules (:func:`round_half_up`, :func:`hanna_pool`, :func:`topical_reduce`) are
module-level functions so that the tests can apply them to raw rows.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import io
import json
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
DEFAULT_RAW = REPO.parent / "shared" / "data" / "raw"
DEFAULT_OUT = REPO / "assets" / "datasets"
GZIP_ABOVE_BYTES = 200_000  # plain CSVs larger than this are shipped gzipped (keeps the repo small)
TRUE_SCORE_DECIMALS = 6  # means of 3 raters are thirds; 6 decimals keep them to within 5e-7

# --------------------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------------------


def round_half_up(x: float) -> float:
    """Round to the nearest integer, exact halves upwards (2.5 -> 3).

    The tiny epsilon makes a half that float arithmetic left at 2.4999999999999996 count as a half.
    """
    return float(math.floor(x + 0.5 + 1e-9))


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


def write_table(frame: pd.DataFrame, folder: Path, stem: str) -> str:
    """Write a contract table as CSV (or CSV.gz above 200 kB); returns the file name.

    ``score`` is written as an integer level or empty; ``true_score`` rounded to 6 decimals.
    """
    out = frame.copy()
    out["score"] = out["score"].map(lambda v: "" if pd.isna(v) else _fmt(float(v)))
    if "true_score" in out.columns:
        out["true_score"] = out["true_score"].map(
            lambda v: "" if pd.isna(v) else f"{float(v):.{TRUE_SCORE_DECIMALS}f}".rstrip("0").rstrip(".")
        )
    text = out.to_csv(index=False, lineterminator="\n")
    data = text.encode("utf-8")
    for old in (folder / f"{stem}.csv", folder / f"{stem}.csv.gz"):
        if old.exists():
            old.unlink()
    if len(data) > GZIP_ABOVE_BYTES:
        name = f"{stem}.csv.gz"
        buf = io.BytesIO()
        # mtime=0 and no file name in the header: identical input gives identical bytes.
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
            gz.write(data)
        (folder / name).write_bytes(buf.getvalue())
    else:
        name = f"{stem}.csv"
        (folder / name).write_bytes(data)
    return name


def write_json(obj: Any, path: Path) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def table_shape(frame: pd.DataFrame) -> dict[str, int]:
    """K x J x n of the usable rows, plus row counts (blank scores are missing judgments)."""
    usable = frame[frame["score"].notna()]
    return {
        "n_candidates": int(usable["candidate"].nunique()),
        "n_judges": int(usable["judge"].nunique()),
        "n_items": int(usable["item"].nunique()),
        "n_rows": int(len(frame)),
        "n_judgments": int(len(usable)),
        "n_missing": int(frame["score"].isna().sum()),
    }


def scale_dict(values: Sequence[float], labels: Sequence[str], true_values: Sequence[float] | None = None) -> dict:
    return {
        "values": [float(v) for v in values],
        "labels": list(labels),
        "true_values": [float(v) for v in (true_values if true_values is not None else values)],
    }


def collapse_spec(name: str, mapping: dict[int, int], labels: dict[int, str], why: str) -> dict:
    return {
        "name": name,
        "mapping": {str(k): int(v) for k, v in mapping.items()},
        "labels": {str(k): v for k, v in labels.items()},
        "why": why,
    }


MTBENCH_5_TO_3 = collapse_spec(
    "mtbench",
    {1: 1, 2: 1, 3: 2, 4: 3, 5: 3},
    {1: "low (1-2)", 2: "mid (3)", 3: "high (4-5)"},
    "The paper's MTBench-style mapping (appendix D, 'Score Mapping for Simplex Visualizations'): "
    "{1,2}->1, {3}->2, {4,5}->3. The paper's TLDR-style alternative puts 4 in the middle instead.",
)


def criterion_entry(
    name: str,
    title: str,
    description: str,
    frame: pd.DataFrame,
    file: str,
    scale: dict,
    *,
    collapse_to_3: dict | None = None,
    judges_are_prompts_of_one_model: bool = False,
) -> dict:
    usable = frame[frame["score"].notna()]
    return {
        "name": name,
        "title": title,
        "description": description,
        "file": file,
        "scale": scale,
        **table_shape(frame),
        "candidates": list(pd.unique(usable["candidate"])),
        "judges": list(pd.unique(usable["judge"])),
        "has_truth": bool("true_score" in frame.columns and frame["true_score"].notna().any()),
        "collapse_to_3": collapse_to_3,
        "judges_are_prompts_of_one_model": judges_are_prompts_of_one_model,
    }


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(lines)


def criteria_table(criteria: Sequence[dict], default: str) -> str:
    rows = []
    for c in criteria:
        sc = c["scale"]
        levels = ", ".join(f"{_fmt(v)}={lab}" if lab != _fmt(v) else _fmt(v) for v, lab in zip(sc["values"], sc["labels"]))
        rows.append([
            f"`{c['name']}`" + (" (default)" if c["name"] == default else ""),
            f"{c['n_candidates']} x {c['n_judges']} x {c['n_items']}",
            levels,
            "yes" if c["has_truth"] else "no",
            c["n_judgments"],
            c["n_missing"],
            f"`{c['file']}`",
        ])
    return markdown_table(["criterion", "K x J x n", "levels", "truth", "judgments", "missing (blank score)", "file"], rows)


def families_table(families: dict[str, str], judges: Sequence[str], candidates: Sequence[str]) -> str:
    rows = []
    for fam in sorted(set(families.values())):
        j = [m for m in judges if families.get(m) == fam]
        k = [m for m in candidates if families.get(m) == fam]
        rows.append([f"`{fam}`", ", ".join(j) or "-", ", ".join(k) or "-"])
    return markdown_table(["family", "judges", "candidates"], rows)


def self_pairs_text(pairs: Sequence[tuple[str, str]]) -> str:
    """(judge, candidate) pairs grouped: judges with the same excluded candidates share one clause."""
    by_judge: dict[str, list[str]] = {}
    for j, k in pairs:
        by_judge.setdefault(j, []).append(k)
    groups: dict[tuple[str, ...], list[str]] = {}
    for j, ks in by_judge.items():
        groups.setdefault(tuple(ks), []).append(j)
    return "; ".join(f"{', '.join(js)} on {', '.join(ks)}" for ks, js in groups.items())


@dataclass
class DatasetOutput:
    name: str
    folder: Path
    meta: dict
    files: list[str] = field(default_factory=list)


def finish_dataset(folder: Path, meta: dict, families: dict[str, str], card: str) -> DatasetOutput:
    write_json(dict(sorted(families.items(), key=lambda kv: (kv[1], kv[0]))), folder / "families.json")
    write_json(meta, folder / "dataset.json")
    (folder / "CARD.md").write_text(card.rstrip() + "\n", encoding="utf-8")
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    return DatasetOutput(meta["name"], folder, meta, files)


def fresh_folder(out_dir: Path, name: str) -> Path:
    folder = out_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    for p in folder.iterdir():  # the script owns every file in the folder: stale files must not linger
        if p.is_file():
            p.unlink()
    return folder


# --------------------------------------------------------------------------------------------------
# TriviaQA "Judging the Judges" (V1 and V2)
# --------------------------------------------------------------------------------------------------

TRIVIAQA_LLM_JUDGES = ("GPT-4", "Llama3-70B", "Llama3-8B", "Llama-70B", "Llama-13B", "Llama-7B",
                       "Mistral-7B", "Gemma-2B", "JudgeLM")
TRIVIAQA_LEXICAL_JUDGES = ("EM", "Contains")
TRIVIAQA_JUDGE_MODELS = {
    "GPT-4": "gpt-4-turbo-2024-04-09",
    "Llama3-70B": "Meta-Llama-3-70B-Instruct",
    "Llama3-8B": "Meta-Llama-3-8B-Instruct",
    "Llama-70B": "Llama-2-70b-chat",
    "Llama-13B": "Llama-2-13b-chat",
    "Llama-7B": "Llama-2-7b-chat",
    "Mistral-7B": "Mistral-7B-Instruct-v0.2",
    "Gemma-2B": "gemma-2b-it",
    "JudgeLM": "BAAI/JudgeLM-7B-v1.0",
    "EM": "exact match with a reference answer (lexical)",
    "Contains": "a reference answer is contained in the answer (lexical)",
}
TRIVIAQA_CANDIDATE_MODELS = {
    "gpt-4t": "gpt-4-turbo-2024-04-09",
    "llama2-7b-base": "Llama-2-7b", "llama2-13b-base": "Llama-2-13b", "llama2-70b-base": "Llama-2-70b",
    "llama2-7b-chat": "Llama-2-7b-chat", "llama2-13b-chat": "Llama-2-13b-chat", "llama2-70b-chat": "Llama-2-70b-chat",
    "mistral-7B": "Mistral-7B-v0.1 (base)", "mistral-7b-chat": "Mistral-7B-Instruct-v0.2",
}
TRIVIAQA_RAW = {"v1": "TriviaQA_Judges_w_HumanJudgement_V1.csv", "v2": "TriviaQA_Judges_w_HumanJudgement_V2.csv"}
TRIVIAQA_HUMAN = {"v1": "HumanJudgement", "v2": "Human-Eval"}
TRIVIAQA_SCALE = scale_dict([0, 1], ["incorrect", "correct"])


def triviaqa_families(candidates: Sequence[str], with_lexical: bool) -> dict[str, str]:
    """The project's families: openai / meta-llama / mistral / google / judgelm (+ lexical)."""
    fam: dict[str, str] = {
        "GPT-4": "openai", "Llama3-70B": "meta-llama", "Llama3-8B": "meta-llama", "Llama-70B": "meta-llama",
        "Llama-13B": "meta-llama", "Llama-7B": "meta-llama", "Mistral-7B": "mistral", "Gemma-2B": "google",
        "JudgeLM": "judgelm",
    }
    if with_lexical:
        fam.update({"EM": "lexical", "Contains": "lexical"})
    for c in candidates:
        if c == "gpt-4t":
            fam[c] = "openai"
        elif c.startswith("llama2-"):
            fam[c] = "meta-llama"
        elif c.lower().startswith("mistral"):
            fam[c] = "mistral"
        else:  # not expected; reported by the card and by the loader ("no family")
            pass
    return fam


def _verdict(v: str) -> float:
    v = v.strip()
    if v == "True":
        return 1.0
    if v == "False":
        return 0.0
    if v == "":
        return float("nan")
    raise ValueError(f"unexpected verdict {v!r}")


def read_triviaqa_raw(raw_dir: Path, version: str) -> pd.DataFrame:
    path = raw_dir / "triviaqa_judges_umass" / TRIVIAQA_RAW[version]
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df.insert(0, "raw_row", np.arange(1, len(df) + 1))  # 1-based data row of the raw CSV
    return df


def triviaqa_clean(raw: pd.DataFrame, version: str) -> tuple[pd.DataFrame, dict]:
    """Remove the rows that are not judgments and give each question an id.

    Returns the kept raw rows (with ``item``) and a dict of what was removed, for the card.
    ``item`` is ``q`` + the 0-based order of first appearance of the question text in the raw file
    (equal to ``question_idx`` in the folder's slim CSVs).
    """
    human = TRIVIAQA_HUMAN[version]
    verdict_cols = [c for c in TRIVIAQA_LLM_JUDGES + TRIVIAQA_LEXICAL_JUDGES if c in raw.columns]
    qidx = {q: i for i, q in enumerate(pd.unique(raw["question"]))}
    df = raw.assign(item=raw["question"].map(lambda q: f"q{qidx[q]:03d}"))
    no_verdicts = (df[verdict_cols] == "").all(axis=1)
    report: dict[str, Any] = {"raw_rows": int(len(df))}
    if version == "v1":
        # llama2-7b-chat: its first 5 rows repeat questions judged again later in the same block,
        # carry no judge verdicts at all, and were produced with an older prompt (no "Your task is to
        # answer..." instruction). They are stale leftovers: removed. Their human labels disagree
        # with the judged copies for some questions; we keep the judged copy's label.
        dup = df.duplicated(["model", "question"], keep=False)
        stale = dup & no_verdicts
        judged_dups = dup & ~no_verdicts
        stale_rows = df[stale]
        judged_rows = df[judged_dups].set_index(["model", "question"])
        disagree = sum(
            1 for _, r in stale_rows.iterrows()
            if judged_rows.loc[(r["model"], r["question"]), human] != r[human]
        )
        report.update({
            "stale_rows": stale_rows["raw_row"].tolist(),
            "stale_models": sorted(stale_rows["model"].unique().tolist()),
            "stale_human_disagree": int(disagree),
        })
        df = df[~stale]
    else:
        # gpt-4t appears twice (800 rows): the first 400 rows have every verdict and the human label
        # empty, the second 400 hold the same questions judged. The empty block is removed.
        empty = no_verdicts & (df[human] == "")
        twins = df["model"].isin(df.loc[empty, "model"].unique()) & ~empty
        report.update({
            "empty_rows": [int(df.loc[empty, "raw_row"].min()), int(df.loc[empty, "raw_row"].max())] if empty.any() else [],
            "empty_count": int(empty.sum()),
            "empty_models": sorted(df.loc[empty, "model"].unique().tolist()),
            "judged_rows": [int(df.loc[twins, "raw_row"].min()), int(df.loc[twins, "raw_row"].max())] if empty.any() else [],
        })
        df = df[~empty]
    if df.duplicated(["model", "question"]).any():
        raise ValueError(f"TriviaQA {version}: duplicate (model, question) rows remain after cleaning")
    return df.reset_index(drop=True), report


def triviaqa_long(df: pd.DataFrame, version: str, judges: Sequence[str]) -> pd.DataFrame:
    """The full grid question x candidate x judge; absent answers and blank verdicts = blank score."""
    human = TRIVIAQA_HUMAN[version]
    candidates = list(pd.unique(df["model"]))
    items = sorted(pd.unique(df["item"]))
    by_key = df.set_index(["model", "item"])
    rows = []
    for cand in candidates:
        for item in items:
            if (cand, item) in by_key.index:
                r = by_key.loc[(cand, item)]
                truth = _verdict(r[human])
                for j in judges:
                    rows.append((item, cand, j, _verdict(r[j]), truth))
            else:  # the answer is absent from the source: every judgment missing, truth unknown
                for j in judges:
                    rows.append((item, cand, j, float("nan"), float("nan")))
    return pd.DataFrame(rows, columns=["item", "candidate", "judge", "score", "true_score"])


def convert_triviaqa(raw_dir: Path, out_dir: Path, version: str) -> DatasetOutput:
    """TriviaQA "Judging the Judges" V1 or V2 -> ``assets/datasets/triviaqa-<version>/``."""
    name = f"triviaqa-{version}"
    folder = fresh_folder(out_dir, name)
    raw = read_triviaqa_raw(raw_dir, version)
    df, report = triviaqa_clean(raw, version)
    human = TRIVIAQA_HUMAN[version]
    candidates = list(pd.unique(df["model"]))
    n_questions = df["item"].nunique()

    criteria = []
    main = triviaqa_long(df, version, TRIVIAQA_LLM_JUDGES)
    f_main = write_table(main, folder, "correctness")
    criteria.append(criterion_entry(
        "correctness", "Answer correctness (9 LLM judges)",
        "Was the exam-taker's answer correct? Verdicts of the nine LLM judges; truth = the human label.",
        main, f_main, TRIVIAQA_SCALE))
    has_lexical = all(c in raw.columns for c in TRIVIAQA_LEXICAL_JUDGES)
    lex = None
    if has_lexical:
        lex = triviaqa_long(df, version, TRIVIAQA_LLM_JUDGES + TRIVIAQA_LEXICAL_JUDGES)
        f_lex = write_table(lex, folder, "correctness-with-lexical")
        criteria.append(criterion_entry(
            "correctness-with-lexical", "Answer correctness (9 LLM judges + EM + Contains)",
            "The same verdicts plus the two lexical judges (exact match, reference contained) as judges 10 and 11.",
            lex, f_lex, TRIVIAQA_SCALE))
    families = triviaqa_families(candidates, has_lexical)

    # Numbers for the card.
    absent_answers = main[main["true_score"].isna()][["item", "candidate"]].drop_duplicates()
    present = main.merge(absent_answers.assign(_absent=True), on=["item", "candidate"], how="left")
    blank_verdicts = present[present["_absent"].isna() & present["score"].isna()].groupby(["judge", "candidate"], sort=False).size()
    human_acc = df.groupby("model", sort=False)[human].apply(lambda s: (s == "True").mean())
    per_cand_q = df.groupby("model", sort=False)["item"].nunique()
    self_pairs = [(j, k) for j in TRIVIAQA_LLM_JUDGES for k in candidates if families.get(j) == families.get(k)]

    title = f"TriviaQA 'Judging the Judges' {version.upper()}: {len(candidates)} exam takers x {n_questions} questions, 9 LLM judges, human correctness"
    source = {
        "repository": "https://github.com/UMass-Meta-LLM-Eval/llm_eval",
        "commit": "7c0bf28e75703cd41c6088bebb64eefcdf348bd4",
        "files": [f"results/{TRIVIAQA_RAW[version]}"],
        "paper": "Thakur et al., 'Judging the Judges: Evaluating Alignment and Vulnerabilities in LLMs-as-Judges', arXiv:2406.12624",
        "raw_folder": "triviaqa_judges_umass",
    }
    meta = {
        "name": name,
        "title": title,
        "description": (
            f"{len(candidates)} LLM exam takers answered {n_questions} TriviaQA questions; nine LLM judges said "
            "whether each answer is correct; a human label is the ground truth. Binary (0 = incorrect, "
            "1 = correct). Heavy same-family overlap (GPT-4 judges gpt-4t, Llama judges judge Llama-2 "
            "candidates, Mistral judges Mistral), so self-family exclusion matters."
        ),
        "criteria": criteria,
        "default_criterion": "correctness",
        "families_file": "families.json",
        "has_truth": True,
        "licence": "MIT (declared in the source repository's pyproject.toml classifiers; the repository has no LICENSE file). Questions from TriviaQA (Joshi et al. 2017); no question text is shipped here.",
        "licence_warning": None,
        "source": source,
        "reference_file": None,
        "card": "CARD.md",
        "n_candidates": criteria[0]["n_candidates"],
        "n_judges": criteria[0]["n_judges"],
        "n_items": criteria[0]["n_items"],
    }

    # ---- card ----
    lines = [f"# {title}", ""]
    lines += [
        "## Source",
        f"- Repository `UMass-Meta-LLM-Eval/llm_eval`, commit `{source['commit']}`, file `{source['files'][0]}` "
        "(copied byte-for-byte into the project's raw data folder `triviaqa_judges_umass/`).",
        f"- Paper: {source['paper']}.",
        "- Converted by `scripts/convert_datasets.py` (`convert_triviaqa`); re-run it to regenerate this folder.",
        "",
        "## Licence",
        f"- {meta['licence']}",
        "",
        "## What is in it",
        criteria_table(criteria, "correctness"),
        "",
        f"- **Items**: {n_questions} TriviaQA (unfiltered) questions, 5-shot prompt. `item` = `q` + the 0-based order of first "
        "appearance of the question text in the raw CSV (= `question_idx` of the raw folder's slim CSV). "
        + "V1 and V2 are different 400-question samples (215 in common); their item ids are NOT comparable.",
        "- **Candidates** (exam takers, raw column `model`): "
        + ", ".join(f"`{c}` ({TRIVIAQA_CANDIDATE_MODELS.get(c, '?')})" for c in candidates) + ".",
        "- **Judges** (raw column names kept as judge names): "
        + ", ".join(f"`{j}` ({TRIVIAQA_JUDGE_MODELS[j]})" for j in TRIVIAQA_LLM_JUDGES) + "."
        + (" Lexical judges, only in `correctness-with-lexical`: `EM` (exact match), `Contains` (a reference answer is contained in the answer)." if has_lexical else ""),
        "  Note the case: the judge `Mistral-7B` (Instruct-v0.2) and the candidate `mistral-7B` (base v0.1) are different models.",
        "- **Levels**: observed and true levels 0 = incorrect, 1 = correct (raw `False`/`True`). No abstain level.",
        f"- **Ground truth**: the raw `{human}` column (one consolidated human label per answer) as `true_score` (0/1). "
        + ("The V2 column `Human-Eval_Confidence` is `True` on every judged row and is not used." if version == "v2" else ""),
        "",
        "### Human accuracy per candidate (after the conversion below)",
        markdown_table(["candidate", "questions", "human accuracy"],
                       [[f"`{c}`", int(per_cand_q[c]), f"{human_acc[c]:.4f}"] for c in candidates]),
        "",
        "## Families (for self-family exclusion)",
        families_table(families, list(TRIVIAQA_LLM_JUDGES) + (list(TRIVIAQA_LEXICAL_JUDGES) if has_lexical else []), candidates),
        "",
        f"{len(self_pairs)} (judge, candidate) pairs share a family and are excluded from the model by default: "
        + self_pairs_text(self_pairs) + ".",
        "JudgeLM is fine-tuned from Vicuna (itself Llama-based); following the project's family list it is its own family `judgelm`. "
        + ("The lexical judges are family `lexical` (no candidate shares it)." if has_lexical else ""),
        "",
        "## Conversion decisions",
    ]
    if version == "v1":
        lines += [
            f"1. **Stale duplicate rows removed ({len(report['stale_rows'])} rows).** `llama2-7b-chat` has 400 rows but only 395 distinct "
            f"questions. Its first {len(report['stale_rows'])} rows (raw data rows {', '.join(map(str, report['stale_rows']))}; 1 = the first row after the header) repeat questions that are "
            "judged again a few rows later; they have **no judge verdict at all** (every judge column blank) and their prompt "
            "(the raw `response` column) is an older format without the 'Your task is to answer...' instruction. They are "
            "left-overs of an earlier run and are removed; the judged copy of each question is kept. "
            f"Their human label disagrees with the judged copy's on {report['stale_human_disagree']} of the {len(report['stale_rows'])} questions; the judged copy's label is used.",
            f"2. **Absent answers.** After that, `llama2-7b-chat` covers 395 questions: the last 5 questions of the common order "
            f"({', '.join(sorted(absent_answers['item']))}) have no row for it. They are kept in the grid as {len(absent_answers) * 9} rows with a blank "
            "score and a blank truth (9 judges x 5 questions), so the loader reports them as missing judgments.",
            "3. **Blank verdicts kept as missing.** Besides those, the blank verdicts of the raw file are: "
            + "; ".join(f"`{j}` on `{k}`: {n}" for (j, k), n in blank_verdicts.items())
            + ". They are rows with a blank score (the loader excludes and reports them); the judge keeps its other verdicts on that candidate.",
        ]
    else:
        lines += [
            f"1. **Empty placeholder block removed ({report['empty_count']} rows).** `gpt-4t` appears in 800 rows: raw data rows "
            f"{report['empty_rows'][0]}-{report['empty_rows'][1]} (1 = the first row after the header) have every verdict and the "
            f"human label empty; rows {report['judged_rows'][0]}-{report['judged_rows'][1]} hold the same 400 questions (same prompts) with verdicts. "
            "The empty block carries no information and would duplicate every (question, gpt-4t) pair: removed.",
            ("2. **No other blanks.** Every remaining row has all nine verdicts and the human label: the grid is complete "
             f"({len(candidates)} x 9 x {n_questions})." if blank_verdicts.empty and main["true_score"].notna().all() else
             "2. **Blank verdicts kept as missing**: " + "; ".join(f"`{j}` on `{k}`: {n}" for (j, k), n in blank_verdicts.items())
             + ". They are rows with a blank score (the loader excludes and reports them)."),
        ]
    lines += [
        "4. **Verdicts**: `True` -> 1 (correct), `False` -> 0 (incorrect). The lexical columns are offered only as the separate "
        "criterion `correctness-with-lexical`, never by default: they are string-matching rules, not LLM judges."
        if has_lexical else
        "3. **Verdicts**: `True` -> 1 (correct), `False` -> 0 (incorrect). V2 has no lexical judge columns.",
        "",
        "## Caveats",
        "- The raw `response` column holds the *prompt* given to the exam taker, not its answer; answers are not in the source, "
        "so nothing here lets you re-judge an answer.",
        "- Same-family judging is heavy (see Families): most Llama-judge verdicts on Llama-2 candidates are excluded by default; "
        "with exclusion off, self-preference can bias the ranking.",
        "- The human label is a single consolidated label per answer; individual annotators are not available.",
    ]
    return finish_dataset(folder, meta, families, "\n".join(lines))


# --------------------------------------------------------------------------------------------------
# HANNA stories
# --------------------------------------------------------------------------------------------------

HANNA_CRITERIA = {  # name -> raw abbreviation, raw human-mean column, description
    "relevance": ("RE", "Relevance", "how well the story matches its prompt"),
    "coherence": ("CH", "Coherence", "how much the story makes sense"),
    "empathy": ("EM", "Empathy", "how well the reader understands the characters' emotions"),
    "surprise": ("SU", "Surprise", "how surprising the end of the story is"),
    "engagement": ("EG", "Engagement", "how much the reader engages with the story"),
    "complexity": ("CX", "Complexity", "how elaborate the story is"),
}
HANNA_DEFAULT_CRITERION = "coherence"
HANNA_JUDGES = ("Beluga-13B", "OrcaPlatypus", "Mistral-7B", "Llama-13B", "ChatGPT")
HANNA_JUDGE_MODELS = {
    "Beluga-13B": "StableBeluga-13B (Stability AI; Llama-2-13B fine-tune)",
    "OrcaPlatypus": "OpenOrca-Platypus2-13B (Llama-2-13B fine-tune)",
    "Mistral-7B": "Mistral-7B (Mistral AI)",
    "Llama-13B": "Llama-2-13B-chat (Meta)",
    "ChatGPT": "gpt-3.5-turbo (OpenAI)",
}
HANNA_VARIANTS = (1, 2, 3, 4)
HANNA_CANDIDATE_FAMILIES = {
    "Human": "human", "BertGeneration": "google", "CTRL": "salesforce", "GPT": "openai",
    "GPT-2 (tag)": "openai", "GPT-2": "openai", "RoBERTa": "facebook", "XLNet": "google",
    "Fusion": "facebook", "HINT": "hint", "TD-VAE": "td-vae",
}
HANNA_JUDGE_FAMILIES = {
    "Beluga-13B": "stabilityai", "OrcaPlatypus": "orca-platypus", "Mistral-7B": "mistral",
    "Llama-13B": "meta-llama", "ChatGPT": "openai",
}
HANNA_SCALE = scale_dict([1, 2, 3, 4, 5], ["1", "2", "3", "4", "5"])
HANNA_FAILURE_BELOW = 1.0  # a 3-sample mean below 1 can only come from a failed parse (-1) averaged in


def hanna_valid(value: float) -> bool:
    """A variant value is usable when it is a number >= 1 (below 1 a failed parse is certainly inside)."""
    return value is not None and not math.isnan(value) and value >= HANNA_FAILURE_BELOW


def hanna_pool(variant_values: Sequence[float]) -> float:
    """Pooled score of one LLM for one story: the mean of its usable variant values, rounded half up.

    Each variant value is the mean of 3 sampled ratings; a value below 1 contains a failed parse and
    is left out. No usable variant -> NaN (a missing judgment).
    """
    valid = [float(v) for v in variant_values if hanna_valid(float(v))]
    if not valid:
        return float("nan")
    return round_half_up(sum(valid) / len(valid))


def hanna_single(value: float) -> float:
    """Score of one (LLM, prompt variant) for one story: the 3-sample mean rounded half up, or NaN."""
    return round_half_up(float(value)) if hanna_valid(float(value)) else float("nan")


def system_level_spearman(frame: pd.DataFrame) -> dict[str, float]:
    """Per judge: Spearman correlation between its mean score per candidate and the mean truth."""
    truth = frame.groupby("candidate", sort=False)["true_score"].mean()
    out = {}
    for judge, grp in frame.dropna(subset=["score"]).groupby("judge", sort=False):
        means = grp.groupby("candidate", sort=False)["score"].mean().reindex(truth.index)
        out[str(judge)] = float(means.corr(truth, method="spearman"))
    return out


def read_hanna_raw(raw_dir: Path) -> pd.DataFrame:
    path = raw_dir / "hanna_story_eval" / "hanna_metric_scores_llm.csv"
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def hanna_matrix(raw: pd.DataFrame, column: str) -> np.ndarray:
    """A raw list column as an array [system, prompt] (11 x 96)."""
    rows = [ast.literal_eval(cell) for cell in raw[column]]
    if any(len(r) != 96 for r in rows):
        raise ValueError(f"HANNA column {column!r}: expected 96 values per system")
    return np.asarray(rows, dtype=float)


def convert_hanna(raw_dir: Path, out_dir: Path) -> DatasetOutput:
    """HANNA story evaluation -> ``assets/datasets/hanna/`` (6 criteria x {pooled, by-prompt})."""
    name = "hanna"
    folder = fresh_folder(out_dir, name)
    raw = read_hanna_raw(raw_dir)
    systems = raw["Model"].tolist()
    n_prompts = 96
    items = [f"p{i:02d}" for i in range(n_prompts)]

    criteria: list[dict] = []
    stats: dict[str, dict] = {}
    for crit, (ab, human_col, _desc) in HANNA_CRITERIA.items():
        truth = hanna_matrix(raw, human_col)
        values = {(j, p): hanna_matrix(raw, f"{j} {ab} {p}") for j in HANNA_JUDGES for p in HANNA_VARIANTS}
        pooled_rows, variant_rows = [], []
        st = Counter()
        for s, system in enumerate(systems):
            for i, item in enumerate(items):
                t = float(truth[s, i])
                for j in HANNA_JUDGES:
                    vals = [values[(j, p)][s, i] for p in HANNA_VARIANTS]
                    n_valid = sum(hanna_valid(v) for v in vals)
                    st["values"] += 4
                    st["failed_values"] += 4 - n_valid
                    st["minus_one"] += sum(1 for v in vals if v == -1)
                    st["non_thirds"] += sum(1 for v in vals if hanna_valid(v) and abs(v * 3 - round(v * 3)) > 1e-6)
                    if n_valid == 0:
                        st["pooled_all_failed"] += 1
                    elif n_valid < 4:
                        st["pooled_partial"] += 1
                    if n_valid:
                        m = sum(v for v in vals if hanna_valid(v)) / n_valid
                        st["pooled_ties"] += int(abs(m - math.floor(m) - 0.5) < 1e-9)
                        st["pooled_offgrid"] += int(abs(m - round(m)) > 1e-9)
                    pooled_rows.append((item, system, j, hanna_pool(vals), t))
                    for p, v in zip(HANNA_VARIANTS, vals):
                        if hanna_valid(v):
                            st["variant_ties"] += int(abs(v - math.floor(v) - 0.5) < 1e-9)
                        variant_rows.append((item, system, f"{j}/p{p}", hanna_single(v), t))
        cols = ["item", "candidate", "judge", "score", "true_score"]
        pooled = pd.DataFrame(pooled_rows, columns=cols)
        by_prompt = pd.DataFrame(variant_rows, columns=cols)
        stats[crit] = dict(st)
        f1 = write_table(pooled, folder, crit)
        f2 = write_table(by_prompt, folder, f"{crit}-by-prompt")
        criteria.append(criterion_entry(
            crit, f"{HANNA_CRITERIA[crit][1]} (5 LLM judges, prompt variants pooled)",
            f"{HANNA_CRITERIA[crit][1]}: {HANNA_CRITERIA[crit][2]}. 1-5; each judge's score pools its 4 prompt variants.",
            pooled, f1, HANNA_SCALE, collapse_to_3=MTBENCH_5_TO_3))
        criteria.append(criterion_entry(
            f"{crit}-by-prompt", f"{HANNA_CRITERIA[crit][1]} (20 judges = 5 LLMs x 4 prompt variants)",
            f"{HANNA_CRITERIA[crit][1]} with each (LLM, prompt variant) as a separate judge. The four judges of one "
            "LLM are the same model: correlated, not independent.",
            by_prompt, f2, HANNA_SCALE, collapse_to_3=MTBENCH_5_TO_3, judges_are_prompts_of_one_model=True))
        stats[crit]["pooled_dist"] = pooled["score"].value_counts().sort_index().to_dict()
        stats[crit]["system_rho"] = system_level_spearman(pooled)

    families = dict(HANNA_CANDIDATE_FAMILIES)
    families.update(HANNA_JUDGE_FAMILIES)
    families.update({f"{j}/p{p}": HANNA_JUDGE_FAMILIES[j] for j in HANNA_JUDGES for p in HANNA_VARIANTS})
    self_pairs = [(j, k) for j in HANNA_JUDGES for k in systems if families[j] == families[k]]

    source = {
        "repository": "https://github.com/dig-team/hanna-benchmark-asg",
        "commit": "282f27536a5d05ad4ce14298abcd70c45668fed2",
        "files": ["hanna_metric_scores_llm.csv"],
        "paper": "Chhun et al., 'Of Human Criteria and Automatic Metrics: A Benchmark of the Evaluation of Story Generation' (COLING 2022); "
                 "Chhun, Suchanek & Clavel, 'Do Language Models Enjoy Their Own Stories? Prompting Large Language Models for Automatic Story Evaluation' (TACL 2024)",
        "raw_folder": "hanna_story_eval",
    }
    default = next(c for c in criteria if c["name"] == HANNA_DEFAULT_CRITERION)
    title = "HANNA stories: 11 story generators x 96 prompts, 5 LLM judges, 6 criteria (1-5), crowd ratings as truth"
    meta = {
        "name": name,
        "title": title,
        "description": (
            "Stories written for 96 WritingPrompts prompts by 10 generation systems and a human; five LLM judges rated "
            "each story 1-5 on six criteria; the mean of three crowd ratings is the ground truth. Criterion `X` pools "
            "each LLM's four prompt variants into one judge; `X-by-prompt` keeps the 20 (LLM, prompt) pairs as judges."
        ),
        "criteria": criteria,
        "default_criterion": HANNA_DEFAULT_CRITERION,
        "families_file": "families.json",
        "has_truth": True,
        "licence": "MIT (LICENSE file in the source repository)",
        "licence_warning": None,
        "source": source,
        "reference_file": None,
        "card": "CARD.md",
        "n_candidates": default["n_candidates"],
        "n_judges": default["n_judges"],
        "n_items": default["n_items"],
    }

    s_all = {k: sum(stats[c][k] for c in stats) for k in
             ("values", "failed_values", "minus_one", "non_thirds", "pooled_all_failed", "pooled_partial", "pooled_ties", "variant_ties", "pooled_offgrid")}
    n_pooled = len(systems) * n_prompts * len(HANNA_JUDGES) * len(HANNA_CRITERIA)
    lines = [f"# {title}", ""]
    lines += [
        "## Source",
        f"- Repository `dig-team/hanna-benchmark-asg`, commit `{source['commit']}`, file `hanna_metric_scores_llm.csv` "
        "(copied byte-for-byte into the project's raw folder `hanna_story_eval/`; one row per system, each cell a list of 96 per-story values).",
        f"- Papers: {source['paper']}.",
        "- Converted by `scripts/convert_datasets.py` (`convert_hanna`) from the raw list file, not from the derived long CSV.",
        "",
        "## Licence",
        f"- {meta['licence']}. Story texts are not shipped (they were not in the snapshot either).",
        "",
        "## What is in it",
        criteria_table(criteria, HANNA_DEFAULT_CRITERION),
        "",
        f"- **Items**: the 96 WritingPrompts prompts, `item` = `p00`..`p95` (position in the raw lists).",
        "- **Candidates** (raw `Model` rows): " + ", ".join(f"`{s}`" for s in systems) + " (`Human` = the reference story).",
        "- **Judges**: " + ", ".join(f"`{j}` ({HANNA_JUDGE_MODELS[j]})" for j in HANNA_JUDGES)
        + ". In the `-by-prompt` criteria the judges are `<LLM>/p1`..`<LLM>/p4`: the four Eval-Prompts of Chhun et al. (2024).",
        "- **Criteria**: " + "; ".join(f"`{c}` ({v[1]}: {v[2]})" for c, v in HANNA_CRITERIA.items())
        + f". **Default: `{HANNA_DEFAULT_CRITERION}`**: a core story-quality criterion, and the one on which the five judges rank the "
        "11 systems most like the crowd does (highest mean system-level Spearman correlation, and its lowest per-judge value ties for the "
        "highest; table below), so a first look at it is about the method rather than about one judge failing.",
        "- **Levels**: observed and true levels 1, 2, 3, 4, 5 (Likert). Suggested 5->3 collapse for simplex views: the paper's MTBench-style "
        "mapping {1,2}->1, {3}->2, {4,5}->3 (in `dataset.json`, `collapse_to_3`).",
        "- **Ground truth**: `true_score` = the raw criterion column (`Relevance`, `Coherence`, ...), the mean of the three mTurk ratings "
        "(`Human 1..3 XX`), so a third-valued number in [1, 5]. Stored to 6 decimals.",
        "",
        "## Families (for self-family exclusion)",
        families_table(families, list(HANNA_JUDGES), systems),
        "",
        f"Families follow the developer's model line, as for the other built-ins (an OpenAI judge and OpenAI GPT models are one family). "
        f"So {len(self_pairs)} (judge, candidate) pairs are excluded by default: " + self_pairs_text(self_pairs)
        + ". The raw folder's SOURCE.md considers GPT/GPT-2 (2018-2019) too far from ChatGPT to matter; if you agree, pass your own families "
        "(e.g. `--families`) or switch exclusion off. Beluga and OrcaPlatypus are Llama-2 fine-tunes by other groups and, like JudgeLM in "
        "TriviaQA, have their own families; Fusion and RoBERTa (Facebook AI Research) are not in the Llama line.",
        "",
        "## Conversion decisions",
        f"1. **Failed parses.** Each raw LLM value is the mean of 3 sampled ratings, with a failed parse counted as -1. A value below 1 "
        f"can only arise with a failure inside: such a value is treated as missing. Across the 6 criteria, {s_all['failed_values']} of "
        f"{s_all['values']} variant values ({_pct(s_all['failed_values'], s_all['values'])}) are below 1 ({s_all['minus_one']} are exactly -1, "
        "i.e. all three samples failed). A failure can also hide in a value >= 1 (e.g. (2+2-1)/3 = 1); that cannot be detected from the "
        "means and is left as is.",
        f"2. **Non-thirds.** {s_all['non_thirds']} usable values ({_pct(s_all['non_thirds'], s_all['values'])}) are not multiples of 1/3 "
        "(sixths such as 1.5 and a few odd values such as 1.11): some replies gave non-integer ratings. They are used like the others.",
        f"3. **Prompt variants pooled (default criteria).** The four prompt variants are prompts of the same model; as separate judges "
        "they would be four strongly correlated judges counted as independent. By default each LLM is one judge whose score is the mean "
        "of its usable variant values (i.e. of up to 12 samples), rounded to the nearest level. Of the "
        f"{n_pooled} pooled (story, LLM, criterion) scores, {s_all['pooled_partial']} pool fewer than 4 variants because of failures and "
        f"{s_all['pooled_all_failed']} have no usable variant (blank score: a missing judgment, reported by the loader).",
        f"4. **Rounding.** Scores must be levels, so the pooled mean is rounded to the nearest integer; an exact half goes up "
        f"(2.5 -> 3). {s_all['pooled_ties']} pooled scores ({_pct(s_all['pooled_ties'], n_pooled)}) were exact halves. "
        "Rounding a mean of thirds is the majority-leaning choice (1.33 -> 1, 1.67 -> 2); the medians of the samples are not available.",
        f"5. **`-by-prompt` criteria.** Each (LLM, variant) is a judge (`Beluga-13B/p1`, ...), with the same failure rule and rounding "
        f"({s_all['variant_ties']} exact halves rounded up). Use them to study prompt sensitivity, not as 20 independent judges: "
        "the model assumes judges err independently given the truth, which four prompts of one model do not.",
        "6. **Human raters** are not judges: their mean is the truth. The `Human Avg k` columns (rater-subset means) and the 72 automatic metrics are not used.",
        "",
        "### Pooled score distribution per criterion (all judges and systems)",
        markdown_table(["criterion"] + [str(v) for v in range(1, 6)] + ["missing"],
                       [[c] + [int(stats[c]["pooled_dist"].get(float(v), 0)) for v in range(1, 6)] + [stats[c]["pooled_all_failed"]] for c in HANNA_CRITERIA]),
        "",
        "### System-level agreement with the crowd (pooled judges)",
        "",
        "Spearman correlation, over the 11 systems, between a judge's mean pooled score and the mean crowd rating.",
        "",
        markdown_table(["criterion"] + list(HANNA_JUDGES) + ["lowest", "mean"],
                       [[c] + [f"{stats[c]['system_rho'][j]:.2f}" for j in HANNA_JUDGES]
                        + [f"{min(stats[c]['system_rho'].values()):.2f}", f"{np.mean(list(stats[c]['system_rho'].values())):.2f}"]
                        for c in HANNA_CRITERIA]),
        "",
        "## Caveats",
        "- Averaging (3 samples per variant, then 4 variants) pulls scores towards the middle: level 5 is almost never reached "
        "by a pooled judge (table above) while the crowd means reach 4.5-5 for many human stories. The `-by-prompt` criteria are less compressed.",
        "- ChatGPT rates almost every machine story 1 and human stories higher: a very skewed judge.",
        "- The candidates are 2018-2021 story generators plus the human reference, not modern LLMs.",
        "- Crowd (mTurk) ratings are noisy; the truth is a mean of three, not an expert label.",
        "- The story-to-system mapping (story id = system row x 96 + prompt) follows the source README's grouping statement.",
    ]
    return finish_dataset(folder, meta, families, "\n".join(lines))


# --------------------------------------------------------------------------------------------------
# Topical-Chat (USR) + ChatGPT
# --------------------------------------------------------------------------------------------------

TOPICAL_ASPECTS = {  # name -> (levels, labels, USR name)
    "coherence": ((1, 2, 3), ("no", "somewhat", "yes"), "Maintains Context"),
    "engagingness": ((1, 2, 3), ("no", "somewhat", "yes"), "Interesting"),
    "naturalness": ((1, 2, 3), ("no", "somewhat", "yes"), "Natural"),
    "groundedness": ((0, 1), ("no", "yes"), "Uses Knowledge"),
}
TOPICAL_DEFAULT_ASPECT = "coherence"
TOPICAL_JUDGE = "gpt-3.5-turbo-0613"
TOPICAL_DEFAULT_MODE = "geval"
TOPICAL_MODES = ("geval", "geval_no_auto_cot", "llm_eval_no_cot", "rate_explain", "rate_explain_auto_cot",
                 "analyze_rate", "analyze_rate_auto_cot")
TOPICAL_SYSTEM_FAMILIES = {
    "Original Ground Truth": "human", "New Human Generated": "human",
    "Argmax Decoding": "usr-transformer", "Nucleus Decoding (p = 0.3)": "usr-transformer",
    "Nucleus Decoding (p = 0.5)": "usr-transformer", "Nucleus Decoding (p = 0.7)": "usr-transformer",
}
TOPICAL_LICENCE_WARNING = (
    "No licence: the source repository (d223302/A-Closer-Look-To-LLM-Evaluation) has no LICENSE file, so "
    "redistribution rights are unclear. The human ratings are the USR Topical-Chat annotations (Mehri & Eskenazi 2020), "
    "released for research. Use for research only and check the terms before redistributing."
)


@dataclass(frozen=True)
class Reduction:
    """One reduced judgment and which step of the rule decided it."""

    score: float
    step: str  # "median", "mean", "first-sample", "lower", "none"


def topical_reduce(samples: Sequence[float], levels: Sequence[float]) -> Reduction:
    """Reduce one judge's repeated samples of one item to one level.

    1. The median of the valid (non-blank) samples; if it is a level, that level.
    2. Otherwise the nearest level; if the median lies exactly halfway between two adjacent levels
       (e.g. ten 2s and ten 3s), the level nearer to the sample mean;
    3. if the mean is exactly halfway as well, the earliest sample equal to one of the two tied
       levels (with temperature-1 sampling that sample is a fair coin flip already in the data, so
       ties push scores neither up nor down);
    4. if no sample equals either level, the lower one.
    No valid sample -> NaN.
    """
    vals = [float(s) for s in samples if s is not None and not (isinstance(s, float) and math.isnan(s))]
    if not vals:
        return Reduction(float("nan"), "none")
    levels = [float(v) for v in levels]
    med = float(np.median(vals))
    if any(abs(med - v) < 1e-9 for v in levels):
        return Reduction(med, "median")
    dists = [abs(med - v) for v in levels]
    best = min(dists)
    tied = [v for v, d in zip(levels, dists) if abs(d - best) < 1e-9]
    if len(tied) == 1:
        return Reduction(tied[0], "median")
    lo, hi = tied[0], tied[-1]
    mean = float(np.mean(vals))
    if abs(mean - lo) < abs(mean - hi) - 1e-9:
        return Reduction(lo, "mean")
    if abs(mean - hi) < abs(mean - lo) - 1e-9:
        return Reduction(hi, "mean")
    for s in vals:
        if abs(s - lo) < 1e-9 or abs(s - hi) < 1e-9:
            return Reduction(lo if abs(s - lo) < 1e-9 else hi, "first-sample")
    return Reduction(lo, "lower")


def read_topical_raw(raw_dir: Path) -> tuple[list[dict], pd.DataFrame]:
    folder = raw_dir / "topicalchat_usr_chatgpt"
    items = json.loads((folder / "topical_chat.json").read_text(encoding="utf-8"))
    parsed = pd.read_csv(folder / "chatgpt_ratings_parsed.csv")
    return items, parsed


def topical_context_ids(items: list[dict]) -> list[int]:
    """0-based context id per item: order of first appearance of the (source, context) pair."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for it in items:
        key = (it["source"], it["context"])
        if key not in seen:
            seen[key] = len(seen)
        out.append(seen[key])
    return out


SAMPLE_COLUMNS = [f"s{i:02d}" for i in range(1, 21)]


def convert_topical_chat(raw_dir: Path, out_dir: Path) -> DatasetOutput:
    """Topical-Chat (USR) + ChatGPT -> ``assets/datasets/topical-chat/`` (4 aspects x {geval judge, 7 prompts})."""
    name = "topical-chat"
    folder = fresh_folder(out_dir, name)
    items, parsed = read_topical_raw(raw_dir)
    ctx = topical_context_ids(items)
    systems = list(dict.fromkeys(it["system_id"] for it in items))
    grid = [(f"c{ctx[i]:02d}", it["system_id"], i) for i, it in enumerate(items)]
    # Order rows candidate-major, then context.
    grid.sort(key=lambda g: (systems.index(g[1]), g[0]))
    parsed_by_key = {(int(r.item_idx), r.aspect, r.prompt_mode): r for r in parsed.itertuples(index=False)}

    criteria: list[dict] = []
    stats: dict[str, dict] = {}
    single_frames: dict[str, pd.DataFrame] = {}
    for aspect, (levels, labels, usr_name) in TOPICAL_ASPECTS.items():
        st = Counter()
        single_rows, multi_rows = [], []
        for item, system, idx in grid:
            truth = float(items[idx]["scores"][aspect])
            for mode in TOPICAL_MODES:
                r = parsed_by_key.get((idx, aspect, mode))
                if r is None:
                    red = Reduction(float("nan"), "absent")
                else:
                    samples = [getattr(r, c) for c in SAMPLE_COLUMNS]
                    red = topical_reduce(samples, levels)
                    st[f"{mode}:valid_samples_min"] = min(st.get(f"{mode}:valid_samples_min", 99),
                                                          sum(1 for s in samples if not pd.isna(s)))
                st[f"{mode}:{red.step}"] += 1
                multi_rows.append((item, system, f"{TOPICAL_JUDGE}/{mode}", red.score, truth))
                if mode == TOPICAL_DEFAULT_MODE:
                    single_rows.append((item, system, TOPICAL_JUDGE, red.score, truth))
        cols = ["item", "candidate", "judge", "score", "true_score"]
        single = pd.DataFrame(single_rows, columns=cols)
        multi = pd.DataFrame(multi_rows, columns=cols)
        stats[aspect] = dict(st)
        single_frames[aspect] = single
        scale = scale_dict(levels, labels)
        f1 = write_table(single, folder, aspect)
        f2 = write_table(multi, folder, f"{aspect}-by-prompt")
        lv = "1-3" if len(levels) == 3 else "0-1"
        criteria.append(criterion_entry(
            aspect, f"{aspect.capitalize()} (USR '{usr_name}', {lv}; one ChatGPT judge)",
            f"USR '{usr_name}' ({lv}). One judge: gpt-3.5-turbo-0613 with the G-Eval prompt, median of its 20 samples.",
            single, f1, scale))
        criteria.append(criterion_entry(
            f"{aspect}-by-prompt", f"{aspect.capitalize()} (7 prompts of ONE model as 7 judges)",
            f"USR '{usr_name}' ({lv}). The 7 judges are 7 prompts of the same model (gpt-3.5-turbo-0613): "
            "correlated, NOT independent judges.",
            multi, f2, scale, judges_are_prompts_of_one_model=True))

    families = dict(TOPICAL_SYSTEM_FAMILIES)
    families[TOPICAL_JUDGE] = "openai"
    families.update({f"{TOPICAL_JUDGE}/{m}": "openai" for m in TOPICAL_MODES})

    source = {
        "repository": "https://github.com/d223302/A-Closer-Look-To-LLM-Evaluation",
        "commit": "90084422bb32e89f77109dce578d0bd1db3912c4",
        "files": ["data/topical_chat.json", "results/topical_chat/gpt3.5_{coh,eng,nat,gro}_<prompt mode>.json (28 files)"],
        "paper": "Chiang & Lee, 'A Closer Look into Automatic Evaluation Using Large Language Models', Findings of EMNLP 2023; "
                 "human ratings: Mehri & Eskenazi, 'USR: An Unsupervised and Reference Free Evaluation Metric for Dialog Generation', ACL 2020",
        "raw_folder": "topicalchat_usr_chatgpt",
    }
    default = next(c for c in criteria if c["name"] == TOPICAL_DEFAULT_ASPECT)
    title = "Topical-Chat (USR): 6 responders x 60 dialogue contexts, ChatGPT judge (20 samples), 4 aspects, human means as truth"
    meta = {
        "name": name,
        "title": title,
        "description": (
            "Responses of 2 humans and 4 decoding settings of a Transformer dialogue model to 60 Topical-Chat contexts, "
            "rated by gpt-3.5-turbo-0613 (20 samples per response, reduced to one score) on four USR aspects; the mean "
            "of 3 annotators is the truth. Default: ONE judge (the G-Eval prompt). The `-by-prompt` criteria use the 7 "
            "prompts of the same model as 7 judges: correlated, not independent. NO LICENCE: research use only."
        ),
        "criteria": criteria,
        "default_criterion": TOPICAL_DEFAULT_ASPECT,
        "families_file": "families.json",
        "has_truth": True,
        "licence": "None: the source repository has no LICENSE file. USR annotations released by their authors for research.",
        "licence_warning": TOPICAL_LICENCE_WARNING,
        "source": source,
        "reference_file": None,
        "card": "CARD.md",
        "n_candidates": default["n_candidates"],
        "n_judges": default["n_judges"],
        "n_items": default["n_items"],
    }

    def step_counts(aspect: str, mode: str) -> dict[str, int]:
        return {k: stats[aspect].get(f"{mode}:{k}", 0) for k in ("median", "mean", "first-sample", "lower", "absent", "none")}

    step_rows = []
    for aspect in TOPICAL_ASPECTS:
        g = step_counts(aspect, TOPICAL_DEFAULT_MODE)
        tot = {k: sum(step_counts(aspect, m)[k] for m in TOPICAL_MODES) for k in g}
        step_rows.append([aspect, g["median"], g["mean"], g["first-sample"], g["lower"], g["absent"],
                          f"{tot['median']} / {tot['mean']} / {tot['first-sample']} / {tot['lower']} / {tot['absent']}"])
    min_valid = min(v for a in stats for k, v in stats[a].items() if k.endswith("valid_samples_min"))
    aspect_rows = []
    for aspect, frame in single_frames.items():
        usable = frame.dropna(subset=["score"])
        counts = usable["score"].value_counts().sort_index()
        aspect_rows.append([aspect, ", ".join(f"{_fmt(v)}: {int(n)}" for v, n in counts.items()),
                            f"{usable['score'].corr(usable['true_score']):.2f}"])

    lines = [
        f"# {title}",
        "",
        "> **NO LICENCE.** " + TOPICAL_LICENCE_WARNING,
        "",
        "> **One judge, not seven.** The default criteria have a single judge (ChatGPT with the G-Eval prompt). "
        "The `-by-prompt` criteria present **seven prompts of the same model as seven judges**; the model assumes "
        "judges err independently given the truth, which prompts of one model do not. Treat those rankings as a "
        "prompt-sensitivity study, and expect intervals that are too narrow.",
        "",
        "## Source",
        f"- Repository `d223302/A-Closer-Look-To-LLM-Evaluation`, commit `{source['commit']}`: `data/topical_chat.json` (items and human "
        "means; taken by that repository from UniEval, which holds the Topical-Chat part of the USR annotations) and "
        "`results/topical_chat/gpt3.5_<aspect>_<mode>.json` (20 sampled ChatGPT replies per item).",
        "- The raw folder `topicalchat_usr_chatgpt/` holds `topical_chat.json`, the four `geval` result files, and "
        "`chatgpt_ratings_parsed.csv`: the score parsed from each of the 20 replies of all 28 result files (4 aspects x 7 "
        "prompt modes; parsing rule in the raw folder's SOURCE.md). The conversion reads `topical_chat.json` and that parsed CSV.",
        f"- Papers: {source['paper']}.",
        "- Converted by `scripts/convert_datasets.py` (`convert_topical_chat`).",
        "",
        "## Licence",
        f"- {meta['licence']} Only ids, scores and human means are shipped here (no dialogue text).",
        "",
        "## What is in it",
        criteria_table(criteria, TOPICAL_DEFAULT_ASPECT),
        "",
        "- **Items**: 60 dialogue contexts, `item` = `c00`..`c59` (0-based order of first appearance of the (dialogue history, fact) "
        "pair in `topical_chat.json`, = `context_id` of the raw folder's CSVs).",
        "- **Candidates** (`system_id`): " + ", ".join(f"`{s}`" for s in systems)
        + ". `Original Ground Truth` and `New Human Generated` are human responses; the other four are decodings of a 2019 "
        "Transformer dialogue model.",
        f"- **Judge**: `{TOPICAL_JUDGE}` (ChatGPT), temperature 1, 20 samples per item. Default prompt: `geval` "
        "(G-Eval style, auto chain-of-thought). `-by-prompt` judges: "
        + ", ".join(f"`{TOPICAL_JUDGE}/{m}`" for m in TOPICAL_MODES) + " (the paper's Table 1).",
        f"- **Aspects** (criteria): coherence (USR 'Maintains Context'), engagingness ('Interesting'), naturalness ('Natural'), "
        f"all 1-3 (1 = no, 2 = somewhat, 3 = yes); groundedness ('Uses Knowledge') 0-1 (0 = no, 1 = yes). **Default: "
        f"`{TOPICAL_DEFAULT_ASPECT}`**: 3 levels (a simplex view without collapsing), and the only 3-level aspect whose reduced judge "
        "scores use more than one level substantially; for engagingness and naturalness the judge says 2 for most responses (table below). "
        "USR's `understandability` and `overall` have no ChatGPT ratings and are not included.",
        "- **Ground truth**: `true_score` = the USR human score from `topical_chat.json`, the mean of 3 annotators (thirds, "
        "stored to 6 decimals); individual votes are not available.",
        "",
        "### The default judge's scores per aspect",
        "",
        markdown_table(["aspect", "judge's level counts", "item-level Pearson r with the human mean"], aspect_rows),
        "",
        "## Families",
        families_table(families, [TOPICAL_JUDGE], systems),
        "",
        "The judge shares no family with any candidate: nothing is excluded.",
        "",
        "## Conversion decisions",
        "1. **Twenty samples -> one score.** Twenty samples of one judge are repeated draws from one judge's distribution, not "
        "twenty judges. Each (item, candidate, prompt) becomes one score by `topical_reduce`: the **median** of the valid "
        "samples, rounded to the nearest level; a median exactly halfway between two levels goes to the level nearer the "
        "sample mean; if the mean is exactly halfway too (e.g. ten 2s and ten 3s) the earliest sample equal to one of the two "
        "levels decides (a fair coin flip already in the data, so ties are not pushed up or down). Why the median: the scale is "
        "ordinal, and the median depends only on the order of the levels, not on their spacing; it is the level the judge says "
        "at least half the time from either side, robust to stray parses and to the few half-point replies (2.5). The mean of the "
        "samples (the paper's G-Eval-style score) is not a level and would need rounding that pulls split opinions (ten 1s, ten 3s) "
        "to a middle level nobody gave.",
        "2. **Which step decided** (geval judge; and summed over all 7 prompts as median / mean / first-sample / lower / absent):",
        "",
        markdown_table(["aspect", "median", "mean", "first sample", "lower", "absent item (blank)", "all 7 prompts"], step_rows),
        "",
        f"   Blank (unparseable) replies are left out of the median; every present row had at least {min_valid} valid samples of 20.",
        "3. **Items missing from a result file** (the source's result files cover 353-360 of the 360 responses) are rows with a blank "
        "score (counted as 'absent item' above); the loader excludes and reports them.",
        "4. **One judge by default.** The seven prompt modes are prompts of one model. Using them as seven judges would let the model "
        "treat seven correlated readings as independent evidence; the honest default is a single judge, the `geval` prompt: it has "
        "the fewest unparseable replies (<0.1%), is the G-Eval prompt the source paper takes as its starting point, and is the only mode whose raw replies "
        "are also in the raw folder (so its parsing can be checked). With one judge the posterior leans on the judge prior: "
        "read it with that in mind. The seven-judge view is available as `<aspect>-by-prompt`, flagged everywhere.",
        "5. **Groundedness** replies include fractions (0.2, 0.5, 0.75 ...); the same median rule maps them to 0 or 1.",
        "",
        "## Caveats",
        "- " + TOPICAL_LICENCE_WARNING,
        "- Candidates are 2019-era dialogue models plus two human references, not modern LLMs.",
        "- The truth is a mean of three crowd annotators; the two 'human' candidates are not always rated best.",
        "- Parsing of the raw replies is the project's own (see the raw folder's SOURCE.md); about 0.4% of replies had no readable score.",
    ]
    return finish_dataset(folder, meta, families, "\n".join(lines))


# --------------------------------------------------------------------------------------------------
# WildBench v2
# --------------------------------------------------------------------------------------------------

WILDBENCH_JUDGE_VERSIONS = {"gpt-4-turbo-2024-04-09": "v2.0522", "gpt-4o-2024-05-13": "v2.0522"}
WILDBENCH_FAMILIES = {
    "gpt-4-turbo-2024-04-09": "openai", "gpt-4o-2024-05-13": "openai", "gpt-3.5-turbo-0125": "openai",
    "gemma-2b-it": "google", "gemma-7b-it": "google", "Phi-3-mini-128k-instruct": "microsoft",
    "Qwen1.5-72B-Chat-greedy": "qwen", "reka-flash-20240226": "reka",
}
WILDBENCH_SCALE = scale_dict(list(range(1, 11)), [str(v) for v in range(1, 11)])
WILDBENCH_10_TO_3 = collapse_spec(
    "wildbench-rubric",
    {1: 1, 2: 1, 3: 1, 4: 1, 5: 2, 6: 2, 7: 3, 8: 3, 9: 3, 10: 3},
    {1: "poor (1-4)", 2: "fair (5-6)", 3: "good (7-10)"},
    "WildBench's own rubric bands: 1-2 very poor and 3-4 poor (does not solve the task), 5-6 fair (has issues), "
    "7-8 good and 9-10 perfect; the top bands are merged as in the paper's MTBench-style mapping.",
)


def read_wildbench_raw(raw_dir: Path) -> tuple[pd.DataFrame, dict, dict]:
    folder = raw_dir / "wildbench_v2_scores"
    scores = pd.read_csv(folder / "wildbench_score_v2_per_item.csv", dtype=str, keep_default_na=False)
    stats = json.loads((folder / "all_stat.json").read_text(encoding="utf-8"))
    elo = json.loads((folder / "wb_elo_results.json").read_text(encoding="utf-8"))
    return scores, stats, elo


def wildbench_selection(scores: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The judges (one eval version each) and the candidates every selected judge scored."""
    judges = list(WILDBENCH_JUDGE_VERSIONS)
    sets = []
    for j, ver in WILDBENCH_JUDGE_VERSIONS.items():
        sub = scores[(scores["judge"] == j) & (scores["eval_version"] == ver)]
        sets.append(list(pd.unique(sub["model"])))
    common = [m for m in sets[0] if all(m in s for s in sets[1:])]
    return judges, common


def _num_or_none(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def convert_wildbench(raw_dir: Path, out_dir: Path) -> DatasetOutput:
    """WildBench v2 -> ``assets/datasets/wildbench-v2/`` (one criterion, no item-level truth)."""
    name = "wildbench-v2"
    folder = fresh_folder(out_dir, name)
    scores, stat, elo = read_wildbench_raw(raw_dir)
    judges, candidates = wildbench_selection(scores)
    sel = scores[scores["model"].isin(candidates)]
    sel = sel[[(WILDBENCH_JUDGE_VERSIONS.get(j) == v) for j, v in zip(sel["judge"], sel["eval_version"])]]
    if sel.duplicated(["judge", "model", "session_id"]).any():
        raise ValueError("WildBench: duplicate (judge, model, session) rows")
    sessions = sorted(pd.unique(scores["session_id"]))
    lookup = {(r.judge, r.model, r.session_id): float(r.score) for r in sel.itertuples(index=False)}
    rows = [(s, c, j, lookup.get((j, c, s), float("nan"))) for c in candidates for s in sessions for j in judges]
    table = pd.DataFrame(rows, columns=["item", "candidate", "judge", "score"])
    f = write_table(table, folder, "overall")

    # Ranking-level reference (never item-level truth).
    ref_rows = []
    for c in candidates:
        s = stat.get(c, {})
        e = elo.get("elo_stat", {}).get(c, {})
        ci = e.get("ci", [None, None])
        ref_rows.append({
            "candidate": c,
            "arena_elo_hard_en_2024_07_16": _num_or_none(s.get("Arena Elo (hard-en) - 2024-07-16")),
            "arena_hard_v0_1": _num_or_none(s.get("Arena-Hard v0.1")),
            "alpacaeval2_lc": _num_or_none(s.get("AE2.0 LC")),
            "alpacaeval2": _num_or_none(s.get("AE2.0")),
            "wb_elo": _num_or_none(e.get("avg")),
            "wb_elo_ci_lo": _num_or_none(ci[0]) if ci else None,
            "wb_elo_ci_hi": _num_or_none(ci[1]) if ci else None,
        })
    ref = pd.DataFrame(ref_rows)
    ref["arena_rank"] = ref["arena_elo_hard_en_2024_07_16"].rank(ascending=False, method="min").astype("Int64")
    ref.to_csv(folder / "reference.csv", index=False, float_format="%.4f", lineterminator="\n")

    criteria = [criterion_entry(
        "overall", "WB-Score (checklist-guided single-answer grade, 1-10)",
        "WildBench v2 single-answer score: each judge grades the answer 1-10 with a task-specific checklist.",
        table, f, WILDBENCH_SCALE, collapse_to_3=WILDBENCH_10_TO_3)]
    families = {m: WILDBENCH_FAMILIES[m] for m in judges + candidates}
    self_pairs = [(j, k) for j in judges for k in candidates if families[j] == families[k]]

    # Numbers for the card.
    all_cells = scores.groupby(["judge", "eval_version"])["model"].unique()
    unused = scores[~scores.index.isin(sel.index)]
    unused_summary = unused.groupby(["judge", "eval_version"]).agg(rows=("model", "size"), models=("model", lambda s: ", ".join(sorted(pd.unique(s)))))
    o = scores[scores["judge"] == "gpt-4o-2024-05-13"]
    w = o.pivot_table(index=["model", "session_id"], columns="eval_version", values="score", aggfunc="first").dropna()
    same_versions = int((w["v2.0522"] == w["v2.0625"]).sum())
    per_cell = table.groupby(["judge", "candidate"], sort=False)["score"].apply(lambda s: int(s.notna().sum())).unstack()
    both = table.pivot_table(index=["item", "candidate"], columns="judge", values="score", aggfunc="first")
    n_both = int(both.notna().all(axis=1).sum())
    dist = table["score"].value_counts().sort_index()

    source = {
        "repository": "https://github.com/allenai/WildBench",
        "commit": "d6b8dcaf377d173d031980f97c16e1a82618c03d",
        "files": ["eval_results/<version>/score.v2/eval=<judge>/<model>.json (scores and ids extracted)",
                  "leaderboard/data_dir/all_stat.json", "leaderboard/data_dir/wb_elo_results.json"],
        "paper": "Lin et al., 'WildBench: Benchmarking LLMs with Challenging Tasks from Real Users in the Wild' (2024), arXiv:2406.04770",
        "raw_folder": "wildbench_v2_scores",
    }
    title = f"WildBench v2: {len(candidates)} models x {len(sessions)} real-user tasks, GPT-4-Turbo and GPT-4o judges (1-10), no item-level truth"
    meta = {
        "name": name,
        "title": title,
        "description": (
            f"{len(candidates)} chat models answered {len(sessions)} real-user tasks; GPT-4-Turbo and GPT-4o graded each "
            "answer 1-10 with a checklist. No item-level truth: Chatbot Arena and WildBench Elo ratings are a "
            "ranking-level reference only (reference.csv). Both judges are OpenAI models, as is gpt-3.5-turbo."
        ),
        "criteria": criteria,
        "default_criterion": "overall",
        "families_file": "families.json",
        "has_truth": False,
        "licence": "Apache-2.0 (source repository LICENSE). Task texts (Hugging Face allenai/WildBench, own terms) are not shipped; only task ids and scores.",
        "licence_warning": None,
        "source": source,
        "reference_file": "reference.csv",
        "card": "CARD.md",
        "n_candidates": criteria[0]["n_candidates"],
        "n_judges": criteria[0]["n_judges"],
        "n_items": criteria[0]["n_items"],
    }
    lines = [
        f"# {title}",
        "",
        "## Source",
        f"- Repository `allenai/WildBench`, commit `{source['commit']}`. The raw folder `wildbench_v2_scores/` holds "
        "`wildbench_score_v2_per_item.csv`, extracted from every `eval_results/<version>/score.v2/eval=<judge>/<model>.json` "
        "file of the snapshot under 4 MiB (ids and scores only), and `all_stat.json`, `wb_elo_results.json` byte-for-byte.",
        f"- Paper: {source['paper']}.",
        "- Converted by `scripts/convert_datasets.py` (`convert_wildbench`).",
        "",
        "## Licence",
        f"- {meta['licence']}",
        "",
        "## What is in it",
        criteria_table(criteria, "overall"),
        "",
        f"- **Items**: the {len(sessions)} WildBench v2 tasks, `item` = WildBench `session_id`.",
        "- **Candidates**: " + ", ".join(f"`{c}`" for c in candidates) + ".",
        "- **Judges**: `gpt-4-turbo-2024-04-09` and `gpt-4o-2024-05-13`, both with evaluation run `v2.0522`.",
        "- **Levels**: observed and true levels 1..10 (WB-Score). Suggested 10->3 collapse for simplex views "
        "(`collapse_to_3` in `dataset.json`): {1-4}->1 poor, {5,6}->2 fair, {7-10}->3 good, following WildBench's rubric bands "
        "(1-2 very poor, 3-4 poor, 5-6 fair, 7-8 good, 9-10 perfect) with the top bands merged as in the paper's MTBench-style mapping.",
        "- **Ground truth**: none per item (`has_truth` false). `reference.csv` holds ranking-level references for the candidates: "
        "Chatbot Arena Elo (hard-en, 2024-07-16; the 'latest' column of the source is identical), its rank, Arena-Hard v0.1, "
        "AlpacaEval 2.0 (LC and raw), and WildBench's own Elo (`wb_elo`, with its interval). Empty = not available. These "
        "are different measurements of different things (pairwise human preferences on other prompts, or aggregates of "
        "the same judges): use them to compare rankings, never as item-level truth.",
        "",
        "### Score distribution (both judges)",
        markdown_table([str(int(v)) for v in dist.index], [[int(x) for x in dist.values]]),
        "",
        "## Families",
        families_table(families, judges, candidates),
        "",
        f"Both judges are OpenAI models, as is `gpt-3.5-turbo-0125`: with self-family exclusion on (the default) "
        f"**every judgment of gpt-3.5-turbo is excluded** ({len(self_pairs)} pairs: " + "; ".join(f"{j} on {k}" for j, k in self_pairs)
        + "), so the model has no data about it and its posterior is its prior. Switch exclusion off to rank it (at the risk of "
        "same-family preference), or read its position as unknown.",
        "",
        "## Conversion decisions",
        f"1. **Models both judges scored.** The snapshot has score files for: "
        + "; ".join(f"{j} {v}: {len(ms)} models" for (j, v), ms in all_cells.items())
        + f". Only models scored by both judges are used ({len(candidates)}), so that every candidate is seen by the same judges. "
        "Unused rows: " + "; ".join(f"{j} {v}: {r.rows} rows ({r.models})" for (j, v), r in unused_summary.iterrows()) + ".",
        f"2. **One evaluation run per judge.** GPT-4o has runs v2.0522 and v2.0625; GPT-4-Turbo only v2.0522. The v2.0522 GPT-4o run "
        f"is used (same checklist version as the other judge). Where both GPT-4o runs scored the same answer they agree on "
        f"{same_versions} of {len(w)} ({_pct(same_versions, len(w))}).",
        f"3. **Missing scores.** The grid is {len(sessions)} tasks x {len(candidates)} models x {len(judges)} judges = {len(table)} rows; "
        f"{int(table['score'].isna().sum())} have no score in the source ({int(len(sessions) - per_cell.max().max())}-{int(len(sessions) - per_cell.min().min())} per judge and model) and are blank rows, "
        f"excluded and reported by the loader. {n_both} of the {len(sessions) * len(candidates)} answers have both judges' scores. "
        "Judgments present per judge and model:",
        "",
        markdown_table(["judge"] + list(per_cell.columns), [[j] + [int(x) for x in per_cell.loc[j]] for j in per_cell.index]),
        "",
        "4. **Scores** are the integers 1..10 as given (the raw column is text).",
        "",
        "## Caveats",
        "- No item-level truth: evaluation against truth (coverage, labelled baselines) is unavailable; compare rankings with `reference.csv` only.",
        "- Both judges are GPT-4-family models from one vendor: they are likely to share biases, and two judges give the model "
        "little to separate judge error from candidate quality.",
        "- Most models' score files were over the snapshot's size limit, which is why only a few models are here.",
        "- Scores concentrate on 3-8.",
    ]
    return finish_dataset(folder, meta, families, "\n".join(lines))


# --------------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------------

CONVERTERS: dict[str, Callable[[Path, Path], DatasetOutput]] = {
    "triviaqa-v1": lambda raw, out: convert_triviaqa(raw, out, "v1"),
    "triviaqa-v2": lambda raw, out: convert_triviaqa(raw, out, "v2"),
    "hanna": convert_hanna,
    "topical-chat": convert_topical_chat,
    "wildbench-v2": convert_wildbench,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raw", type=Path, default=DEFAULT_RAW, help=f"raw data folder (default: {DEFAULT_RAW})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    parser.add_argument("--only", nargs="+", choices=sorted(CONVERTERS), help="convert only these datasets")
    args = parser.parse_args(argv)
    if not args.raw.is_dir():
        print(f"error: raw data folder {args.raw} not found (give it with --raw)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only or list(CONVERTERS):
        result = CONVERTERS[name](args.raw, args.out)
        sizes = ", ".join(f"{f} {(result.folder / f).stat().st_size / 1024:.0f} KB" for f in result.files)
        print(f"{name}: {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
