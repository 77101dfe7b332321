"""HANNA stories: 11 story generators x 96 prompts, 5 LLM judges x 4 prompt variants, crowd means as truth."""

from __future__ import annotations

import ast
import math
from collections import Counter
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .common import (criteria_table, criterion_entry, DatasetOutput, families_table, finish_dataset, fresh_folder,
                     markdown_table, MTBENCH_5_TO_3, _pct, round_half_up, scale_dict, self_pairs_text,
                     source_and_shape, write_table)

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


def hanna_frames(raw: pd.DataFrame, crit: str, systems: Sequence[str], items: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """One criterion's pooled and by-prompt tables, and its counts of failures and ties (for the card)."""
    ab, human_col, _desc = HANNA_CRITERIA[crit]
    truth = hanna_matrix(raw, human_col)
    values = {(j, p): hanna_matrix(raw, f"{j} {ab} {p}") for j in HANNA_JUDGES for p in HANNA_VARIANTS}
    pooled_rows, variant_rows = [], []
    st: Counter = Counter()
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
    return pd.DataFrame(pooled_rows, columns=cols), pd.DataFrame(variant_rows, columns=cols), dict(st)


def hanna_tables(raw: pd.DataFrame, folder: Path, systems: Sequence[str], items: Sequence[str]) -> tuple[list[dict], dict[str, dict]]:
    """Write both tables of every criterion; returns their criterion entries and the counts per criterion."""
    criteria: list[dict] = []
    stats: dict[str, dict] = {}
    for crit in HANNA_CRITERIA:
        pooled, by_prompt, stats[crit] = hanna_frames(raw, crit, systems, items)
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
    return criteria, stats


def hanna_families(systems: Sequence[str]) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Families of candidates and judges (pooled and per prompt), and the same-family (judge, candidate) pairs."""
    families = dict(HANNA_CANDIDATE_FAMILIES)
    families.update(HANNA_JUDGE_FAMILIES)
    families.update({f"{j}/p{p}": HANNA_JUDGE_FAMILIES[j] for j in HANNA_JUDGES for p in HANNA_VARIANTS})
    self_pairs = [(j, k) for j in HANNA_JUDGES for k in systems if families[j] == families[k]]
    return families, self_pairs


def hanna_meta(name: str, criteria: list[dict]) -> dict:
    """The dataset.json contents: source, licence, criteria and the default criterion's shape."""
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
        **source_and_shape(source, default),
    }
    return meta


def hanna_card(meta: dict, families: dict[str, str], self_pairs: list[tuple[str, str]], systems: Sequence[str],
               stats: dict[str, dict], n_prompts: int) -> str:
    """CARD.md: source, contents, families, every conversion decision with its counts, caveats."""
    title, source, criteria = meta["title"], meta["source"], meta["criteria"]
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
        "- **Items**: the 96 WritingPrompts prompts, `item` = `p00`..`p95` (position in the raw lists).",
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
    return "\n".join(lines)


def convert_hanna(raw_dir: Path, out_dir: Path) -> DatasetOutput:
    """HANNA story evaluation -> ``assets/datasets/hanna/`` (6 criteria x {pooled, by-prompt})."""
    name = "hanna"
    folder = fresh_folder(out_dir, name)
    raw = read_hanna_raw(raw_dir)
    systems = raw["Model"].tolist()
    n_prompts = 96
    items = [f"p{i:02d}" for i in range(n_prompts)]

    criteria, stats = hanna_tables(raw, folder, systems, items)
    families, self_pairs = hanna_families(systems)
    meta = hanna_meta(name, criteria)
    return finish_dataset(folder, meta, families, hanna_card(meta, families, self_pairs, systems, stats, n_prompts))
