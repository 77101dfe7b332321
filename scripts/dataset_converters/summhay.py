"""Summary of a Haystack: insight coverage of summaries, human labels as truth, five LLM judges."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .common import (criteria_table, criterion_entry, DatasetOutput, families_table, finish_dataset, fresh_folder,
                     markdown_table, scale_dict, self_pairs_text, source_and_shape, write_table)

SUMMHAY_JUDGE_KEYS = {  # judge name -> raw prediction key (all five share one zero-shot prompt)
    "gpt-4o": "predictions_prompted_gpt-4o",
    "claude3-opus": "predictions_prompted_claude3-opus",
    "gemini-1.5-pro": "predictions_prompted_gemini-1.5-pro",
    "gpt3.5": "predictions_prompted_gpt3.5",
    "claude3-haiku": "predictions_prompted_claude3-haiku",
}
SUMMHAY_LEFT_OUT_KEYS = ("predictions_9fs_gpt-4o",)  # GPT-4o again, 9-shot: a prompt variant, not a sixth judge
SUMMHAY_JUDGE_LEVEL = {"NO_COVERAGE": 0.0, "PARTIAL_COVERAGE": 1.0, "FULL_COVERAGE": 2.0}
SUMMHAY_HUMAN_LEVEL = {"not_covered": 0.0, "partially_covered": 1.0, "fully_covered": 2.0}
SUMMHAY_SCALE = scale_dict([0, 1, 2], ["not covered", "partially covered", "fully covered"])
SUMMHAY_RETRIEVERS = {  # raw middle part of summkey -> short name used in item ids
    "": "full", "random": "random", "vector": "vector", "keywords": "keywords", "dwzhu/e5-base-4k": "e5", "oracle": "oracle",
}
SUMMHAY_FAMILIES = {
    "gpt-4o": "openai", "gpt4-turbo": "openai", "gpt3.5": "openai",
    "claude3-opus": "anthropic", "claude3-sonnet": "anthropic", "claude3-haiku": "anthropic",
    "gemini-1.5-pro": "google", "gemini-1.5-flash": "google", "command-r-plus": "cohere",
}


def summhay_split_key(summkey: str) -> tuple[str, str]:
    """``summary_subtopic_[<retriever>_]<llm>`` -> (retriever short name, llm); no retriever = full context."""
    prefix = "summary_subtopic_"
    if not summkey.startswith(prefix):
        raise ValueError(f"SummHay: unexpected summkey {summkey!r}")
    retriever, _, llm = summkey[len(prefix):].rpartition("_")
    if retriever not in SUMMHAY_RETRIEVERS:
        raise ValueError(f"SummHay: unknown retrieval setting {retriever!r} in {summkey!r}")
    return SUMMHAY_RETRIEVERS[retriever], llm


def read_summhay_raw(raw_dir: Path) -> pd.DataFrame:
    """One row per (summary, insight): ids, candidate, retriever, human level and every judge's level."""
    records = json.loads((raw_dir / "summhay_coverage_judges" / "eval_benchmark_data.json").read_text(encoding="utf-8"))
    subtopic_idx: dict[str, int] = {}
    insight_idx: dict[tuple[str, str], int] = {}
    rows = []
    for summary_no, rec in enumerate(records):
        st = rec["subtopic_id"]
        s_no = subtopic_idx.setdefault(st, len(subtopic_idx))
        for i, ins in enumerate(rec["reference_insights"]):
            if insight_idx.setdefault((st, ins["insight_id"]), i) != i:
                raise ValueError(f"SummHay: insight order differs between summaries of subtopic {st}")
        retriever, llm = summhay_split_key(rec["summkey"])
        preds = {j: {p["insight_id"]: p["coverage"] for p in rec[key]} for j, key in SUMMHAY_JUDGE_KEYS.items()}
        for a in rec["annotation"]:
            iid = a["insight_id"]
            row = {
                "summary": summary_no, "subtopic": s_no, "insight": insight_idx[(st, iid)], "retriever": retriever,
                # one (insight, retrieval setting) is one item: a candidate has at most one summary per
                # subtopic and setting, so every (item, candidate) is one summary and one human label
                "item": f"s{s_no:02d}-i{insight_idx[(st, iid)]}-{retriever}",
                "candidate": llm, "true_score": SUMMHAY_HUMAN_LEVEL[a["coverage"]],
            }
            for j in SUMMHAY_JUDGE_KEYS:
                v = preds[j].get(iid)
                row[j] = float("nan") if v is None else SUMMHAY_JUDGE_LEVEL[v]
            rows.append(row)
    df = pd.DataFrame(rows)
    if df.duplicated(["item", "candidate"]).any():
        raise ValueError("SummHay: an (item, candidate) pair has two summaries")
    return df


def convert_summhay(raw_dir: Path, out_dir: Path) -> DatasetOutput:
    """SummHay auto-eval benchmark -> ``assets/datasets/summhay/`` (3-level coverage, human truth)."""
    name = "summhay"
    folder = fresh_folder(out_dir, name)
    df = read_summhay_raw(raw_dir)
    judges = list(SUMMHAY_JUDGE_KEYS)
    long = df.melt(id_vars=["summary", "item", "candidate", "true_score"], value_vars=judges, var_name="judge", value_name="score")
    long = long.sort_values(["summary", "item", "judge"], key=lambda s: s.map({j: i for i, j in enumerate(judges)}) if s.name == "judge" else s,
                            kind="stable")[["item", "candidate", "judge", "score", "true_score"]].reset_index(drop=True)
    f = write_table(long, folder, "coverage")
    criteria = [criterion_entry(
        "coverage", "Insight coverage of the summary (5 LLM judges, 3 levels)",
        "Does the summary cover a reference insight? Not / partially / fully covered, by five LLM judges with one prompt; "
        "truth = the authors' manual label.",
        long, f, SUMMHAY_SCALE)]
    candidates = list(pd.unique(long["candidate"]))
    families = {m: SUMMHAY_FAMILIES[m] for m in judges + candidates}
    self_pairs = [(j, k) for j in judges for k in candidates if families[j] == families[k]]
    judges_left = {k: sum(families[j] != families[k] for j in judges) for k in candidates}

    # Numbers for the card.
    n_summaries = df["summary"].nunique()
    per_cand = df.groupby("candidate", sort=False).agg(summaries=("summary", "nunique"), rows=("item", "size"), human=("true_score", "mean"))
    judge_means = long.groupby(["candidate", "judge"], sort=False)["score"].mean().unstack()[judges]
    retr = df.drop_duplicates("summary")["retriever"].value_counts()
    human_dist = df["true_score"].value_counts().reindex([0.0, 1.0, 2.0], fill_value=0)
    judge_dist = {j: long.loc[long["judge"] == j, "score"].value_counts().reindex([0.0, 1.0, 2.0], fill_value=0) for j in judges}
    items_per_cand = df.groupby("item")["candidate"].nunique()

    source = {
        "repository": "https://github.com/salesforce/summary-of-a-haystack",
        "commit": "43531729bc39fdc301bcc9ff7b26c5e6ce3fbf57",
        "files": ["data/eval_benchmark_data.json", "LICENSE"],
        "paper": "Laban, Fabbri, Xiong & Wu, 'Summary of a Haystack: A Challenge to Long-Context LLMs and RAG Systems', EMNLP 2024, arXiv:2407.01370",
        "raw_folder": "summhay_coverage_judges",
    }
    title = (f"Summary of a Haystack: {len(candidates)} LLM summarizers x {df['item'].nunique()} (insight, retrieval) items, "
             "5 LLM judges, human coverage labels (3 levels)")
    meta = {
        "name": name,
        "title": title,
        "description": (
            f"{len(candidates)} LLMs wrote {n_summaries} query-focused summaries of synthetic document haystacks; for each reference "
            "insight, five LLM judges and a human annotator said whether the summary covers it (not / partially / fully). "
            "Unbalanced design: each subtopic was summarized by only some candidates. Every judge model is also a candidate."
        ),
        "criteria": criteria,
        "default_criterion": "coverage",
        "families_file": "families.json",
        "has_truth": True,
        "licence": "Apache-2.0 (LICENSE file in the source repository; shipped in the project's raw data folder).",
        "licence_warning": None,
        **source_and_shape(source, criteria[0]),
    }
    lines = [
        f"# {title}",
        "",
        "## Source",
        f"- Repository `salesforce/summary-of-a-haystack`, commit `{source['commit']}`, file `data/eval_benchmark_data.json` "
        "(the paper's auto-evaluation benchmark: manual coverage labels and evaluator predictions), copied byte-for-byte "
        "into the project's raw data folder `summhay_coverage_judges/` with the repository's `LICENSE`.",
        f"- Paper: {source['paper']} (sections 4.2-4.3, Table 1).",
        "- Converted by `scripts/convert_datasets.py` (`convert_summhay`); re-run it to regenerate this folder.",
        "",
        "## Licence",
        f"- {meta['licence']} Apache-2.0 allows redistribution with the licence and a notice of changes: this folder holds "
        "tables derived from the file (ids and labels only, no summary or insight text).",
        "",
        "## What is in it",
        criteria_table(criteria, "coverage"),
        "",
        f"- **Rows**: one per (summary, reference insight) and judge: {len(df)} (summary, insight) pairs from {n_summaries} summaries "
        f"of {df['subtopic'].nunique()} subtopics (5-10 insights each).",
        "- **Items**: `item` = `s<subtopic>-i<insight>-<retrieval setting>`: subtopic number (order of first appearance in the file), "
        "the insight's position in the subtopic's reference list, and the retrieval setting of the summary (`full` = full "
        "context, `random`, `vector`, `keywords`, `e5` = dwzhu/e5-base-4k, `oracle`). Summaries per setting: "
        + ", ".join(f"{k} {int(v)}" for k, v in retr.items()) + ".",
        "- **Candidates** (summarizer = last `_`-separated token of `summkey`, as in the authors' notebook): "
        + ", ".join(f"`{c}`" for c in candidates) + ".",
        "- **Judges** (raw key `predictions_prompted_<judge>`, all with the zero-shot prompt `prompts/eval_summhay.txt`): "
        + ", ".join(f"`{j}`" for j in judges) + ".",
        "- **Levels**: 0 = not covered, 1 = partially covered, 2 = fully covered, for judges (`NO_` / `PARTIAL_` / `FULL_COVERAGE`) "
        "and truth (`not_covered` / `partially_covered` / `fully_covered`). The paper scores them 0 / 50 / 100: the same order "
        "and spacing.",
        "- **Ground truth**: the authors' manual label (one consolidated label per summary and insight, no annotator ids).",
        "",
        "### Level counts",
        markdown_table(["who", "0 not", "1 partial", "2 full"],
                       [["human"] + [int(x) for x in human_dist.values]] + [[j] + [int(x) for x in judge_dist[j].values] for j in judges]),
        "",
        "### Mean level per candidate (0-2)",
        markdown_table(["candidate", "summaries", "rows", "human"] + judges,
                       [[f"`{c}`", int(per_cand.loc[c, 'summaries']), int(per_cand.loc[c, 'rows']), f"{per_cand.loc[c, 'human']:.3f}"]
                        + [f"{judge_means.loc[c, j]:.3f}" for j in judges] for c in candidates]),
        "",
        "## Families (for self-family exclusion)",
        families_table(families, judges, candidates),
        "",
        f"Every judge is also a candidate. {len(self_pairs)} (judge, candidate) pairs share a family and are excluded by default: "
        + self_pairs_text(self_pairs) + ". Judges left per candidate after exclusion: "
        + ", ".join(f"{k} {n}" for k, n in judges_left.items()) + ".",
        "",
        "## Conversion decisions",
        "1. **Item = (insight, retrieval setting).** A candidate can summarize one subtopic several times with different "
        "retrieval settings; keying items by insight alone would give one (item, candidate) several summaries and several "
        "truths. With the setting in the key, every (item, candidate) is exactly one summary and one human label, which the "
        "shared-truth model needs. Nothing is averaged.",
        f"2. **Unbalanced grid kept as is.** Each subtopic and setting was summarized by only some candidates (1-"
        f"{int(items_per_cand.max())} candidates per item, median {int(items_per_cand.median())}); absent (item, candidate) pairs "
        "were never meant to exist and are not blank rows.",
        f"3. **The 9-shot GPT-4o predictions left out** (`predictions_9fs_gpt-4o`, {len(df)} labels): the same model as the "
        "judge `gpt-4o` with another prompt, i.e. a prompt variant, not an independent sixth judge.",
        "4. **Bullet links not used**: the judges' `bullet_id` and the annotators' `candidate_id` (which bullet covers the "
        "insight) are not coverage labels; the SummHay citation score is not part of this dataset.",
        f"5. **No missing values**: every summary has all five judges' labels for each annotated insight "
        f"({int(long['score'].isna().sum())} blank scores).",
        "",
        "## Caveats",
        f"- **Unbalanced, small per candidate**: `gpt3.5` has {int(per_cand.loc['gpt3.5', 'summaries'])} summaries "
        f"({int(per_cand.loc['gpt3.5', 'rows'])} rows); the retrieval setting is confounded with the candidate mix.",
        f"- **Lenient judge**: `claude3-haiku` says `NO_COVERAGE` on {int(judge_dist['claude3-haiku'][0.0])} of {len(df)} pairs "
        "(near-constant). Judges credit coverage more than the annotators for almost every candidate.",
        "- **Self-judging**: every judge model is a candidate, and same-vendor overlap is wider (see Families).",
        "- The haystack documents are synthetic (LLM-written); they are not shipped and not needed for scoring.",
    ]
    return finish_dataset(folder, meta, families, "\n".join(lines))
