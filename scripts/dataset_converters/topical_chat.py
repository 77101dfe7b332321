"""Topical-Chat (USR) rated by ChatGPT (20 samples per response): the reduction rule and the converter."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .common import (criteria_table, criterion_entry, DatasetOutput, families_table, finish_dataset, _fmt,
                     fresh_folder, markdown_table, scale_dict, source_and_shape, write_table)

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


def topical_frames(items: list[dict], grid: list[tuple[str, str, int]], parsed_by_key: dict, aspect: str,
                   levels: Sequence[float]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """One aspect's tables (the G-Eval judge alone, and the 7 prompts as judges) and its counts of rule steps."""
    st: Counter = Counter()
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
    return pd.DataFrame(single_rows, columns=cols), pd.DataFrame(multi_rows, columns=cols), dict(st)


def topical_tables(items: list[dict], parsed: pd.DataFrame, grid: list[tuple[str, str, int]],
                   folder: Path) -> tuple[list[dict], dict[str, dict], dict[str, pd.DataFrame]]:
    """Write both tables of every aspect; returns the criterion entries, the counts and the single-judge tables."""
    parsed_by_key = {(int(r.item_idx), r.aspect, r.prompt_mode): r for r in parsed.itertuples(index=False)}

    criteria: list[dict] = []
    stats: dict[str, dict] = {}
    single_frames: dict[str, pd.DataFrame] = {}
    for aspect, (levels, labels, usr_name) in TOPICAL_ASPECTS.items():
        single, multi, stats[aspect] = topical_frames(items, grid, parsed_by_key, aspect, levels)
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
    return criteria, stats, single_frames


def topical_families() -> dict[str, str]:
    """Families of the responders, the judge and its seven prompt modes."""
    families = dict(TOPICAL_SYSTEM_FAMILIES)
    families[TOPICAL_JUDGE] = "openai"
    families.update({f"{TOPICAL_JUDGE}/{m}": "openai" for m in TOPICAL_MODES})
    return families


def topical_meta(name: str, criteria: list[dict]) -> dict:
    """The dataset.json contents: source, licence (none: warned), criteria and the default criterion's shape."""
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
        **source_and_shape(source, default),
    }
    return meta


def topical_card_tables(stats: dict[str, dict], single_frames: dict[str, pd.DataFrame]) -> tuple[list, int, list]:
    """The card's figures: rows of decided rule steps per aspect, the fewest valid samples, level counts and r per aspect."""
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
    return step_rows, min_valid, aspect_rows


def topical_card(meta: dict, families: dict[str, str], systems: Sequence[str], stats: dict[str, dict],
                 single_frames: dict[str, pd.DataFrame]) -> str:
    """CARD.md: the licence and one-judge warnings, source, contents, families, conversion decisions, caveats."""
    title, source, criteria = meta["title"], meta["source"], meta["criteria"]
    step_rows, min_valid, aspect_rows = topical_card_tables(stats, single_frames)
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
    return "\n".join(lines)


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

    criteria, stats, single_frames = topical_tables(items, parsed, grid, folder)
    families = topical_families()
    meta = topical_meta(name, criteria)
    return finish_dataset(folder, meta, families, topical_card(meta, families, systems, stats, single_frames))
