"""TriviaQA 'Judging the Judges' (V1 and V2): human correctness labels, 9 LLM judges (+ 2 lexical)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .common import (criteria_table, criterion_entry, DatasetOutput, families_table, finish_dataset, fresh_folder,
                     markdown_table, scale_dict, self_pairs_text, source_and_shape, write_table)

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


def triviaqa_meta(name: str, version: str, criteria: list[dict], candidates: Sequence[str], n_questions: int) -> dict:
    """The dataset.json contents: source, licence, criteria and the default criterion's shape."""
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
        **source_and_shape(source, criteria[0]),
    }
    return meta


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

    meta = triviaqa_meta(name, version, criteria, candidates, n_questions)
    title, source = meta["title"], meta["source"]

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
