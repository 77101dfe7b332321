"""WildBench v2: two GPT-4 judges scoring chat answers 1-10 (no ground truth, a leaderboard as reference)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from .common import (collapse_spec, criteria_table, criterion_entry, DatasetOutput, families_table, finish_dataset,
                     fresh_folder, markdown_table, _pct, scale_dict, source_and_shape, write_table)

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


def wildbench_meta(name: str, criteria: list[dict], candidates: Sequence[str], sessions: Sequence[str]) -> dict:
    """The dataset.json contents: source, licence, criteria and shape (no truth; a ranking-level reference file)."""
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
        **source_and_shape(source, criteria[0], reference_file="reference.csv"),
    }
    return meta


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

    meta = wildbench_meta(name, criteria, candidates, sessions)
    title, source = meta["title"], meta["source"]
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
        "1. **Models both judges scored.** The snapshot has score files for: "
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
