"""FaithBench: summary hallucinations, expert span annotations as truth, LLM judges and detectors."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from .common import (criteria_table, criterion_entry, DatasetOutput, families_table, finish_dataset, fresh_folder,
                     markdown_table, scale_dict, self_pairs_text, source_and_shape, write_table)

FAITHBENCH_LLM_JUDGES = ("gpt-3.5-turbo", "gpt-4-turbo", "gpt_4o")
# Non-LLM detectors offered as extra judges in a separate criterion (binary as released, or a
# consistency probability thresholded at 0.5).
FAITHBENCH_DETECTORS = {"trueteacher": None, "true_nli": None, "hhem-2.1": 0.5}
FAITHBENCH_DETECTOR_MODELS = {
    "trueteacher": "google/t5_11b_trueteacher_and_anli (TrueTeacher, Gekhman et al. 2023)",
    "true_nli": "google/t5_xxl_true_nli_mixture (TRUE, Honovich et al. 2022)",
    "hhem-2.1": "vectara/hallucination_evaluation_model HHEM-2.1-Open (probability >= 0.5 -> consistent)",
}
FAITHBENCH_FAMILIES = {
    "gpt-3.5-turbo": "openai", "gpt-4-turbo": "openai", "gpt_4o": "openai",
    "trueteacher": "google", "true_nli": "google", "hhem-2.1": "vectara",
}
FAITHBENCH_VENDOR_FAMILY = {  # summarizer prefix (before "/") -> the project's family name
    "openai": "openai", "anthropic": "anthropic", "google": "google", "meta-llama": "meta-llama",
    "qwen": "qwen", "microsoft": "microsoft", "cohere": "cohere", "mistralai": "mistral",
}
# The repository's scripts/binarize.py: the worst label of all annotators decides.
FAITHBENCH_SEVERITY = {"Benign": 1, "Questionable": 2, "Unwanted": 3, "Unwanted.Intrinsic": 3, "Unwanted.Extrinsic": 3}
FAITHBENCH_SCALE = scale_dict([0, 1], ["hallucinated", "consistent"])
FAITHBENCH_LICENCE_WARNING = (
    "Non-commercial licence: FaithBench is released under CC BY-NC-SA 4.0, so this adaptation is too. Use it for "
    "non-commercial (research) purposes only, credit Bao et al. (NAACL 2025), and share anything derived from it under "
    "the same licence."
)


def faithbench_worst_severity(annotations: Sequence[dict]) -> int:
    """0 = no annotation; else the highest severity among all labels of all annotators."""
    worst = 0
    for a in annotations:
        for label in a["label"]:
            if label not in FAITHBENCH_SEVERITY:
                raise ValueError(f"FaithBench: unknown annotation label {label!r}")
            worst = max(worst, FAITHBENCH_SEVERITY[label])
    return worst


def faithbench_truth(annotations: Sequence[dict]) -> float:
    """1 = consistent (no annotation, or only Benign spans), 0 = hallucinated (a Questionable or Unwanted span)."""
    return 1.0 if faithbench_worst_severity(annotations) <= 1 else 0.0


def _faithbench_verdict(value: Any, threshold: float | None) -> float:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return float("nan")
    v = float(value)
    if threshold is not None:
        return 1.0 if v >= threshold else 0.0
    if v not in (0.0, 1.0):
        raise ValueError(f"FaithBench: unexpected binary verdict {value!r}")
    return v


def read_faithbench_raw(raw_dir: Path) -> pd.DataFrame:
    """One row per summary: batch, sample id, item, candidate, truth, severity and every judge's raw output."""
    folder = raw_dir / "faithbench_hallucination"
    files = sorted(folder.glob("batch_*.json"), key=lambda p: int(p.stem.split("_")[1]))
    rows = []
    for path in files:
        batch = int(path.stem.split("_")[1])
        for s in json.loads(path.read_text(encoding="utf-8"))["samples"]:
            md = s["metadata"]
            rows.append({
                "batch": batch, "sample_id": int(s["sample_id"]),
                # within a batch, samples 10k..10k+9 are the 10 summaries of one source
                "item": f"b{batch:02d}-s{int(s['sample_id']) // 10}",
                "source": s["source"], "candidate": md["summarizer"],
                "severity": faithbench_worst_severity(s["annotations"]),
                "true_score": faithbench_truth(s["annotations"]),
                **{j: md.get(j) for j in FAITHBENCH_LLM_JUDGES + tuple(FAITHBENCH_DETECTORS)},
            })
    df = pd.DataFrame(rows)
    if df.duplicated(["item", "candidate"]).any():
        raise ValueError("FaithBench: a source has two summaries by the same summarizer")
    if (df.groupby("item")["source"].nunique() != 1).any():
        raise ValueError("FaithBench: the item key (batch, sample_id // 10) does not identify one source text")
    return df


def faithbench_long(df: pd.DataFrame, judges: Sequence[str]) -> pd.DataFrame:
    rows = []
    for rec in df.to_dict("records"):  # judge keys such as "gpt-3.5-turbo" are no Python identifiers
        for j in judges:
            threshold = FAITHBENCH_DETECTORS.get(j)
            rows.append((rec["item"], rec["candidate"], j, _faithbench_verdict(rec[j], threshold), rec["true_score"]))
    return pd.DataFrame(rows, columns=["item", "candidate", "judge", "score", "true_score"])


def faithbench_tables(df: pd.DataFrame, folder: Path) -> tuple[list[dict], pd.DataFrame, pd.DataFrame]:
    """Write the GPT-judge table and the one with the detectors added; returns their criterion entries and both tables."""
    detectors = tuple(FAITHBENCH_DETECTORS)
    main = faithbench_long(df, FAITHBENCH_LLM_JUDGES)
    f_main = write_table(main, folder, "consistency")
    det = faithbench_long(df, FAITHBENCH_LLM_JUDGES + detectors)
    f_det = write_table(det, folder, "consistency-with-detectors")
    criteria = [
        criterion_entry(
            "consistency", "Factual consistency of the summary (3 GPT judges)",
            "Is the summary free of hallucinations? Verdicts of three GPT judges (1 = consistent, 0 = hallucinated); "
            "truth = expert span annotations, worst label pooled.",
            main, f_main, FAITHBENCH_SCALE),
        criterion_entry(
            "consistency-with-detectors", "Factual consistency (3 GPT judges + 3 non-LLM detectors)",
            "The same verdicts plus three trained hallucination detectors (TrueTeacher, TRUE NLI, HHEM-2.1 >= 0.5) as "
            "judges 4-6; with them every candidate keeps judges under self-family exclusion.",
            det, f_det, FAITHBENCH_SCALE),
    ]
    return criteria, main, det


def faithbench_families(candidates: Sequence[str]) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Families of judges, detectors and summarizers (by vendor prefix), and the same-family (judge, candidate) pairs."""
    detectors = tuple(FAITHBENCH_DETECTORS)
    families = dict(FAITHBENCH_FAMILIES)
    for c in candidates:
        vendor = c.split("/", 1)[0].lower()
        if vendor not in FAITHBENCH_VENDOR_FAMILY:
            raise ValueError(f"FaithBench: no family for summarizer {c!r}")
        families[c] = FAITHBENCH_VENDOR_FAMILY[vendor]
    self_pairs = [(j, k) for j in FAITHBENCH_LLM_JUDGES + detectors for k in candidates if families[j] == families[k]]
    return families, self_pairs


def faithbench_meta(name: str, criteria: list[dict], candidates: Sequence[str], n_items: int) -> dict:
    """The dataset.json contents: source, licence (non-commercial: warned), criteria and shape."""
    source = {
        "repository": "https://github.com/vectara/FaithBench",
        "commit": "cf89797d82812c23b5d5e5c121f1d9b8983bbbce",
        "files": ["data_for_release/batch_{1..12,14..16}.json (annotator_name fields removed)"],
        "paper": "Bao et al., 'FaithBench: A Diverse Hallucination Benchmark for Summarization by Modern LLMs', NAACL 2025 (short papers)",
        "raw_folder": "faithbench_hallucination",
    }
    title = (f"FaithBench: {len(candidates)} LLM summarizers x {n_items} sources, 3 GPT judges, "
             "expert hallucination annotations (binary)")
    meta = {
        "name": name,
        "title": title,
        "description": (
            f"{len(candidates)} LLMs summarized {n_items} news-style passages; three GPT judges said whether each summary "
            "is consistent with its source (1) or hallucinated (0); expert span annotations, pooled to the worst label, "
            "are the truth. The items were chosen because hallucination detectors disagreed on them, so judges are "
            "near chance per item. All judges are OpenAI models and two candidates are OpenAI models. "
            "Non-commercial licence (CC BY-NC-SA 4.0)."
        ),
        "criteria": criteria,
        "default_criterion": "consistency",
        "families_file": "families.json",
        "has_truth": True,
        "licence": "CC BY-NC-SA 4.0 (LICENSE file in the source repository): non-commercial use, share alike, credit the authors.",
        "licence_warning": FAITHBENCH_LICENCE_WARNING,
        **source_and_shape(source, criteria[0]),
    }
    return meta


def faithbench_card(meta: dict, df: pd.DataFrame, main: pd.DataFrame, det: pd.DataFrame, families: dict[str, str],
                    self_pairs: list[tuple[str, str]]) -> str:
    """CARD.md: licence warning, source, contents, truth and verdict figures, families, conversion decisions, caveats."""
    title, source, criteria = meta["title"], meta["source"], meta["criteria"]
    candidates = list(pd.unique(df["candidate"]))
    n_items = df["item"].nunique()
    detectors = tuple(FAITHBENCH_DETECTORS)
    self_llm = [(j, k) for j, k in self_pairs if j in FAITHBENCH_LLM_JUDGES]
    fully_excluded = sorted({k for _, k in self_llm})

    sev = df["severity"].value_counts().reindex([0, 1, 2, 3], fill_value=0)
    n_cons = int((df["true_score"] == 1).sum())
    human = df.groupby("candidate", sort=False)["true_score"].mean()
    judge_rate = {j: float(pd.to_numeric(main.loc[main["judge"] == j, "score"]).mean()) for j in FAITHBENCH_LLM_JUDGES}
    item_check = {}
    for j in FAITHBENCH_LLM_JUDGES + detectors:
        rows = det[det["judge"] == j].dropna(subset=["score"])
        item_check[j] = (rows.loc[rows["score"] == 1, "true_score"].mean(), rows.loc[rows["score"] == 0, "true_score"].mean())
    missing = det[det["score"].isna()].groupby("judge").size()
    lines = [
        f"# {title}",
        "",
        "> **NON-COMMERCIAL LICENCE.** " + FAITHBENCH_LICENCE_WARNING,
        "",
        "## Source",
        f"- Repository `vectara/FaithBench`, commit `{source['commit']}` (data files last changed in commit "
        "`abb6503bb2356da196260fbc4cb7837fb1742bb5`). The raw folder `faithbench_hallucination/` holds "
        "`data_for_release/batch_*.json` (15 files; the release has no batch 13) with the `annotator_name` field of every "
        "annotation removed; nothing else changed.",
        f"- Paper: {source['paper']}.",
        "- Converted by `scripts/convert_datasets.py` (`convert_faithbench`); re-run it to regenerate this folder.",
        "",
        "## Licence",
        f"- {meta['licence']} This folder is an adaptation (tables derived from the release) and is shared under the same "
        "licence; it may be redistributed for non-commercial purposes with credit to Bao et al. No source or summary text "
        "and no annotator identifier is shipped here, only ids, verdicts and the binarized expert label.",
        "",
        "## What is in it",
        criteria_table(criteria, "consistency"),
        "",
        f"- **Items**: {n_items} source passages (news and Wikipedia-style), `item` = `b<batch>-s<k>`: within batch `<batch>`, "
        "samples 10k..10k+9 are the 10 summaries of one source (checked: one source text per item, every summarizer once).",
        "- **Candidates** (summarizers, raw `metadata.summarizer`, names kept): " + ", ".join(f"`{c}`" for c in candidates) + ".",
        "- **Judges**: `gpt-3.5-turbo`, `gpt-4-turbo`, `gpt_4o` (raw metadata keys kept as names; the judge prompt is not "
        "in the release). In `consistency-with-detectors` also: "
        + ", ".join(f"`{d}` ({FAITHBENCH_DETECTOR_MODELS[d]})" for d in detectors) + ".",
        "- **Levels**: 0 = hallucinated, 1 = consistent, for judges and truth. The release does not state the judges' coding in "
        "words; 1 = consistent follows the HHEM/TRUE convention and the data (GPT-4-turbo and GPT-4o say 1 more often when "
        "the experts found no hallucination).",
        f"- **Ground truth**: expert annotators mark hallucinated spans with labels Unwanted (Intrinsic / Extrinsic), "
        "Questionable or Benign. As in the repository's own `scripts/binarize.py`, all labels of a summary are pooled and "
        "the worst decides: **0** if it is Questionable or Unwanted, **1** if the summary has no annotation or only Benign "
        f"spans. Result: {n_cons} consistent, {len(df) - n_cons} hallucinated. Worst-label counts: none {sev[0]}, "
        f"Benign {sev[1]}, Questionable {sev[2]}, Unwanted {sev[3]}.",
        "",
        "### Consistent share per candidate",
        markdown_table(["candidate", "summaries", "expert: consistent"] + [f"{j}: consistent" for j in FAITHBENCH_LLM_JUDGES],
                       [[f"`{c}`", int((df['candidate'] == c).sum()), f"{human[c]:.3f}"]
                        + [f"{pd.to_numeric(main.loc[(main['judge'] == j) & (main['candidate'] == c), 'score']).mean():.3f}"
                           for j in FAITHBENCH_LLM_JUDGES] for c in candidates]),
        "",
        "## Families (for self-family exclusion)",
        families_table(families, list(FAITHBENCH_LLM_JUDGES) + list(detectors), candidates),
        "",
        f"All three LLM judges are OpenAI models, as are {len(fully_excluded)} candidates ({', '.join(f'`{c}`' for c in fully_excluded)}). "
        f"With self-family exclusion on (the default) **every judgment of those candidates is excluded in `consistency`** "
        f"({len(self_llm)} pairs: {self_pairs_text(self_llm)}), and the fit refuses: switch exclusion off to rank them (at the "
        "risk of same-vendor preference), or use `consistency-with-detectors`, where the detectors still judge them. "
        "TrueTeacher and TRUE NLI are Google T5 models, so they are excluded on the Gemini candidate there.",
        "",
        "## Conversion decisions",
        "1. **Truth binarized as the authors do** (worst pooled label; see Ground truth). A 4-level ordinal truth "
        "(none / Benign / Questionable / Unwanted) is possible but the judges are binary, so the binary one is used.",
        "2. **Judge verdicts as released**: `1` -> 1 (consistent), `0` -> 0 (hallucinated). HHEM-2.1's consistency probability "
        "is thresholded at 0.5 (its documented decision threshold). HHEM v1 and HHEM-2.1-english are left out (one HHEM "
        "model is enough, and v1 is superseded).",
        "3. **Missing verdicts** kept as blank rows (the loader excludes and reports them): "
        + ("; ".join(f"`{j}`: {int(n)}" for j, n in missing.items()) if len(missing) else "none") + ". "
        "The LLM judges have a verdict on every summary.",
        f"4. **Nothing left out**: all {len(df)} summaries of the release ({n_items} sources x {len(candidates)} summarizers, a "
        "complete grid) are in both tables. Source texts, summaries, spans and notes are not shipped (not needed for scoring).",
        "",
        "## Caveats",
        "- **Selection bias by design**: the authors kept summaries on which hallucination detectors *disagreed* (among them "
        "GPT-4o, GPT-3.5-Turbo, TrueTeacher, TRUE NLI and HHEM-2.1), so every judge is near chance per item, and some judges "
        "chose the items. Per item, P(expert: consistent | judge = 1) vs (| judge = 0): "
        + "; ".join(f"{j} {a:.2f} vs {b:.2f}" for j, (a, b) in item_check.items())
        + " (gpt-3.5-turbo is inverted).",
        "- Judges are lenient: the share of summaries called consistent is "
        + ", ".join(f"{j} {r:.2f}" for j, r in judge_rate.items())
        + f", while the experts' pooled share is {n_cons / len(df):.2f}. The worst-label pooling is strict (one annotator's "
        "Questionable span is enough).",
        "- Same-vendor judging: all LLM judges are OpenAI models (see Families).",
        "- Per the detailed annotation repository, 2-3 experts annotated each summary; the pooled label hides their disagreement.",
    ]
    return "\n".join(lines)


def convert_faithbench(raw_dir: Path, out_dir: Path) -> DatasetOutput:
    """FaithBench -> ``assets/datasets/faithbench/`` (binary consistency, expert truth)."""
    name = "faithbench"
    folder = fresh_folder(out_dir, name)
    df = read_faithbench_raw(raw_dir)
    df = df.sort_values(["batch", "sample_id"], kind="stable").reset_index(drop=True)
    candidates = list(pd.unique(df["candidate"]))
    n_items = df["item"].nunique()

    criteria, main, det = faithbench_tables(df, folder)
    families, self_pairs = faithbench_families(candidates)
    meta = faithbench_meta(name, criteria, candidates, n_items)
    return finish_dataset(folder, meta, families, faithbench_card(meta, df, main, det, families, self_pairs))
