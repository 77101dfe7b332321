"""Built-in datasets: the registry, every dataset and criterion through the loader, the reduction
rules on hand-computed cases, and conversion checks against the raw files.

Tests that read the raw files (``../shared/data/raw`` beside the checkout) skip with a reason when
that folder is absent: users of the app do not have it; CI and developers do.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simplex_core.data import datasets as D
from simplex_core.data.problems import ValidationError
from simplex_core.data.table import collapse_levels
from simplex_core.data.views import count_tensor
from simplex_core.data.scale import Scale

REPO = Path(__file__).resolve().parent.parent
RAW = Path(os.environ.get("SIMPLEX_RAW_DATA", REPO.parent / "shared" / "data" / "raw"))
needs_raw = pytest.mark.skipif(
    not RAW.is_dir(),
    reason=f"raw data folder {RAW} not found (only CI and the project's developers have ../shared); "
    "the shipped datasets are still tested through the registry",
)
EXPECTED = ("triviaqa-v1", "triviaqa-v2", "hanna", "topical-chat", "wildbench-v2", "faithbench", "summhay")
# Criteria whose every judge shares a family with some candidate: the fit needs self-family exclusion off.
FULLY_SELF_FAMILY = {("wildbench-v2", "overall"), ("faithbench", "consistency")}


def _load_converter():
    spec = importlib.util.spec_from_file_location("convert_datasets", REPO / "scripts" / "convert_datasets.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("convert_datasets", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


conv = _load_converter()


def _stored(name: str, criterion: str) -> pd.DataFrame:
    """A shipped table read plainly (blank scores as NaN), independent of the loader."""
    info = D.get_dataset(name)
    return pd.read_csv(info.criterion(criterion).file, dtype={"item": str, "candidate": str, "judge": str})


ALL_CRITERIA = [(d.name, c.name) for d in D.list_datasets() for c in d.criteria]


# -- registry ---------------------------------------------------------------------------------------

def test_registry_lists_every_builtin_with_default_first():
    names = [d.name for d in D.list_datasets()]
    assert names == list(EXPECTED)
    assert D.DEFAULT_DATASET == names[0] == "triviaqa-v1"
    assert D.dataset_names() == EXPECTED


def test_unknown_dataset_error_lists_valid_names():
    with pytest.raises(ValueError, match=r"No built-in dataset 'nope'\. Valid names: triviaqa-v1, triviaqa-v2, hanna, topical-chat, wildbench-v2, faithbench, summhay\."):
        D.get_dataset("nope")
    with pytest.raises(ValueError, match=r"No built-in dataset '\.\./hanna'"):
        D.load_dataset("../hanna")


def test_unknown_criterion_error_lists_valid_criteria():
    with pytest.raises(ValueError, match=r"Dataset 'wildbench-v2' has no criterion 'coherence'\. Valid criteria: overall \(default: overall\)\."):
        D.load_dataset("wildbench-v2", criterion="coherence")
    with pytest.raises(D.DatasetError, match=r"Valid criteria: relevance, relevance-by-prompt, coherence, .*\(default: coherence\)"):
        D.get_dataset("hanna").criterion("story")


def test_metadata_shape_matches_the_brief():
    shapes = {d.name: (d.n_candidates, d.n_judges, d.n_items) for d in D.list_datasets()}
    assert shapes == {
        "triviaqa-v1": (9, 9, 400), "triviaqa-v2": (8, 9, 400), "hanna": (11, 5, 96),
        "topical-chat": (6, 1, 60), "wildbench-v2": (6, 2, 1024), "faithbench": (10, 3, 75), "summhay": (9, 5, 828),
    }
    hanna = D.get_dataset("hanna")
    assert set(hanna.criterion_names) == {f"{c}{s}" for c in ("relevance", "coherence", "empathy", "surprise", "engagement", "complexity") for s in ("", "-by-prompt")}
    assert hanna.criterion("coherence-by-prompt").n_judges == 20
    tc = D.get_dataset("topical-chat")
    assert tc.criterion("groundedness").scale.values == (0.0, 1.0)
    assert tc.criterion("coherence").scale.values == (1.0, 2.0, 3.0)
    assert tc.criterion("coherence-by-prompt").n_judges == 7
    assert D.get_dataset("triviaqa-v1").criterion("correctness-with-lexical").n_judges == 11
    assert D.get_dataset("faithbench").criterion("consistency-with-detectors").n_judges == 6
    assert D.get_dataset("summhay").criterion("coverage").scale.values == (0.0, 1.0, 2.0)
    assert [d.has_truth for d in D.list_datasets()] == [True, True, True, True, False, True, True]


def test_licence_warning_only_for_topical_chat_and_faithbench_and_shown_by_loader_and_line():
    warnings = {d.name: d.licence_warning for d in D.list_datasets()}
    assert warnings["topical-chat"] and "no LICENSE" in warnings["topical-chat"]
    assert warnings["faithbench"] and "CC BY-NC-SA 4.0" in warnings["faithbench"]
    assert all(w is None for n, w in warnings.items() if n not in ("topical-chat", "faithbench"))
    assert "[NON-COMMERCIAL LICENCE: research use only]" in D.dataset_line(D.get_dataset("faithbench"))
    assert D.load_dataset("faithbench").notes[0].startswith("Licence warning: Non-commercial licence")
    assert D.get_dataset("faithbench").card_text().splitlines()[2].startswith("> **NON-COMMERCIAL LICENCE.**")
    table = D.load_dataset("topical-chat")
    assert table.notes[0].startswith("Licence warning: No licence")
    assert "NO LICENCE" in D.dataset_line(D.get_dataset("topical-chat"))
    card = D.get_dataset("topical-chat").card_text()
    assert card.splitlines()[2].startswith("> **NO LICENCE.**")  # right under the title


def test_dataset_line_and_summary():
    for info in D.list_datasets():
        line = D.dataset_line(info)
        assert line.startswith(info.name + " ")
        assert info.shape_text in line and ("truth: yes" in line) == info.has_truth
        summary = D.dataset_summary(info)
        json.dumps(summary)  # JSON-able
        assert [c["name"] for c in summary["criteria"]] == list(info.criterion_names)
    assert "levels 0=incorrect,1=correct" in D.dataset_line(D.get_dataset("triviaqa-v1"))
    assert "levels 1..10" in D.dataset_line(D.get_dataset("wildbench-v2"))


def test_cards_state_source_licence_and_every_criterion():
    for info in D.list_datasets():
        card = info.card_text()
        for heading in ("## Source", "## Licence", "## Conversion decisions", "## Caveats"):
            assert heading in card, (info.name, heading)
        assert info.source["commit"] in card
        for c in info.criteria:
            assert f"`{c.name}`" in card
            assert c.file.exists() and c.file.name in card


def test_collapse_mappings_cover_every_level_and_follow_the_paper():
    for info in D.list_datasets():
        for c in info.criteria:
            if c.scale.n_levels > 3:
                assert c.collapse_to_3 is not None, (info.name, c.name)
                assert set(c.collapse_to_3.mapping) == set(c.scale.values)
                assert sorted(set(c.collapse_to_3.mapping.values())) == [1.0, 2.0, 3.0]
            else:
                assert c.collapse_to_3 is None
    mt = D.get_dataset("hanna").criterion("coherence").collapse_to_3
    assert dict(mt.mapping) == {1.0: 1.0, 2.0: 1.0, 3.0: 2.0, 4.0: 3.0, 5.0: 3.0}  # paper, appendix D, MTBench style
    table = D.load_dataset("hanna")
    collapsed = collapse_levels(table, mt.mapping, mt.labels)
    assert collapsed.scale.values == (1.0, 2.0, 3.0)
    assert (collapsed.frame["score"] == 3.0).sum() == table.frame["score"].isin([4.0, 5.0]).sum()


# -- every dataset and criterion through the loader ---------------------------------------------------

@pytest.mark.parametrize(("name", "criterion"), ALL_CRITERIA, ids=[f"{n}:{c}" for n, c in ALL_CRITERIA])
def test_every_criterion_loads_into_a_valid_table(name, criterion):
    info = D.get_dataset(name)
    crit = info.criterion(criterion)
    table = D.load_dataset(name, criterion=criterion)
    assert table.criterion == criterion and table.source == f"{name}:{criterion}"
    assert table.scale == crit.scale
    assert (len(table.candidates), len(table.judges), len(table.items)) == (crit.n_candidates, crit.n_judges, crit.n_items)
    assert len(table.frame) == crit.n_judgments
    assert list(table.candidates) == list(crit.candidates) and list(table.judges) == list(crit.judges)
    # Blank scores in the file are exactly the missing judgments the loader reports.
    if crit.n_missing:
        assert any(n.startswith(f"{crit.n_missing} judgment") and "no score excluded" in n for n in table.notes)
    # Families cover every judge and candidate (nothing reported as family-less).
    assert set(table.families) == set(table.candidates) | set(table.judges)
    assert not any(n.startswith("No family") for n in table.notes)
    # the dataset's families.json names the models of all its criteria: those of other criteria are no slip
    assert not any(n.startswith("The families name") for n in table.notes)
    assert table.has_truth == crit.has_truth == info.has_truth
    if table.has_truth:
        ts = table.frame["true_score"]
        assert ts.notna().all()
        assert ts.min() >= crit.scale.true_values[0] and ts.max() <= crit.scale.true_values[-1]
        assert (table.frame.groupby(["item", "candidate"])["true_score"].nunique() == 1).all()
    assert any("prompts of ONE model" in n for n in table.notes) == crit.judges_are_prompts_of_one_model
    # No judge loses every judgment to self-family exclusion; where OpenAI candidates are scored only
    # by OpenAI judges (WildBench, FaithBench's LLM judges), exclusion must be switched off (tested below).
    counts = count_tensor(table, self_exclusion=(name, criterion) not in FULLY_SELF_FAMILY)
    assert counts.N.sum() == crit.n_judgments


def test_families_and_scale_can_be_overridden():
    default = D.load_dataset("triviaqa-v1")
    assert ("GPT-4", "gpt-4t") in default.self_family_pairs
    assert len(default.self_family_pairs) == 1 + 5 * 6 + 2  # GPT-4; 5 Llama judges x 6 llama2; Mistral x 2
    none = D.load_dataset("triviaqa-v1", families=None)
    assert none.families == {} and none.self_family_pairs == ()
    relabelled = D.load_dataset("triviaqa-v1", scale=Scale((0, 1), ("wrong", "right")))
    assert relabelled.scale.labels == ("wrong", "right")
    with pytest.raises(ValidationError, match=r"The 'score' column: values (1, 2|2, 1) in rows .* are not on the scale"):
        D.load_dataset("hanna", scale=Scale((3, 4, 5)))


def test_wildbench_openai_candidate_is_fully_self_family():
    table = D.load_dataset("wildbench-v2")
    with pytest.raises(ValidationError, match=r"candidate 'gpt-3.5-turbo-0125' has no judge of another family"):
        count_tensor(table)
    assert count_tensor(table, self_exclusion=False).included.all()
    ref = D.get_dataset("wildbench-v2").reference()
    assert sorted(ref["candidate"]) == sorted(table.candidates)


def test_faithbench_openai_candidates_need_the_detectors_or_exclusion_off():
    table = D.load_dataset("faithbench")
    with pytest.raises(ValidationError, match=r"candidates 'openai/GPT-3.5-Turbo', 'openai/gpt-4o' have no judge of another family: only judges of their own family scored them"):
        count_tensor(table)
    assert count_tensor(table, self_exclusion=False).included.all()
    # With the detectors, the OpenAI candidates keep the 3 non-OpenAI judges; Gemini loses the 2 Google T5s.
    det = D.load_dataset("faithbench", criterion="consistency-with-detectors")
    excluded = {(k, j) for j, k in det.self_family_pairs}
    assert {j for k, j in excluded if k == "openai/gpt-4o"} == {"gpt-3.5-turbo", "gpt-4-turbo", "gpt_4o"}
    assert {j for k, j in excluded if k == "google/gemini-1.5-flash-001"} == {"trueteacher", "true_nli"}
    assert len(count_tensor(det).excluded_pairs) == 3 * 2 + 2  # (judge, candidate) pairs kept apart
    dropped = count_tensor(det, self_exclusion="drop")
    assert int((~dropped.included).sum()) == 3 * 2 + 2 and dropped.judges == det.judges  # left out
    apart = count_tensor(det)
    assert apart.judges[len(det.judges):] == tuple(f"{j} · own family" for j in det.judges
                                                   if any(jj == j for jj, _ in count_tensor(det).excluded_pairs))
    assert apart.N.sum() == dropped.N.sum()  # every judgment kept


def test_resolve_data_accepts_names_and_files(tmp_path):
    assert D.resolve_data("triviaqa-v2").source == "triviaqa-v2:correctness"
    path = tmp_path / "t.csv"
    pd.DataFrame({"item": ["a", "a", "b", "b"], "candidate": ["x", "y", "x", "y"], "judge": "j", "score": [1, 0, 1, 1]}).to_csv(path, index=False)
    table = D.resolve_data(str(path))
    assert table.candidates == ("x", "y") and table.source == str(path)


# -- reduction rules, hand-computed ----------------------------------------------------------------

def test_round_half_up():
    assert [conv.round_half_up(x) for x in (1.0, 1.4999, 1.5, 2.5, 2.4999999999999996, 4 / 3, 5 / 3)] == [1, 1, 2, 3, 3, 1, 2]


def test_hanna_pool_and_single():
    # Means of the usable variants, rounded half up.
    assert conv.hanna_pool([4 / 3, 5 / 3, 2.0, 2.0]) == 2.0  # mean 1.75
    assert conv.hanna_pool([4 / 3, 4 / 3, 5 / 3, 5 / 3]) == 2.0  # mean 1.5 exactly -> up
    assert conv.hanna_pool([1.0, 1.0, 1.0, 4 / 3]) == 1.0
    # Below 1 = a failed parse inside: left out; all failed -> missing.
    assert conv.hanna_pool([-1.0, 1 / 3, 2.0, 3.0]) == 3.0  # mean of 2 and 3 = 2.5 -> 3
    assert math.isnan(conv.hanna_pool([-1.0, 0.0, 2 / 3, 0.9]))
    assert conv.hanna_single(11 / 3) == 4.0 and conv.hanna_single(1.0) == 1.0
    assert math.isnan(conv.hanna_single(2 / 3))


def test_topical_reduce_rule_steps():
    r = conv.topical_reduce
    nan = float("nan")
    assert r([2] * 12 + [3] * 8, (1, 2, 3)) == conv.Reduction(2.0, "median")
    assert r([1, 1, 3], (1, 2, 3)).score == 1.0  # median, not the rounded mean (1.67 -> 2)
    # Halfway median, decided by the mean: sorted 1x9, 2, 3x10 -> median 2.5, mean 2.05.
    assert r([1] * 9 + [2] + [3] * 10, (1, 2, 3)) == conv.Reduction(2.0, "mean")
    assert r([1] * 10 + [2] + [3] * 9, (1, 2, 3)) == conv.Reduction(2.0, "mean")  # median 1.5, mean 1.95
    # Halfway median and halfway mean: the earliest sample that is one of the two levels.
    assert r([2, 3] * 10, (1, 2, 3)) == conv.Reduction(2.0, "first-sample")
    # Blanks are skipped; 2.5 x5, 3 x5, 2 x5: median 2.5, mean 2.5, earliest level sample is a 3.
    assert r([nan, 2.5, 3, 2] * 5, (1, 2, 3)) == conv.Reduction(3.0, "first-sample")
    assert r([2.5] * 20, (1, 2, 3)) == conv.Reduction(2.0, "lower")
    assert math.isnan(r([nan] * 20, (1, 2, 3)).score)
    # Groundedness 0/1 with fractional replies: median 0.75 -> 1; median 0.2 -> 0.
    assert r([0.75] * 11 + [0.5] * 9, (0, 1)).score == 1.0
    assert r([0.2] * 11 + [1] * 9, (0, 1)).score == 0.0


def test_faithbench_truth_takes_the_worst_label():
    ann = lambda *labels: [{"label": list(x)} for x in labels]  # noqa: E731
    assert conv.faithbench_truth([]) == 1.0  # no span marked: consistent
    assert conv.faithbench_truth(ann(["Benign"], ["Benign"])) == 1.0
    assert conv.faithbench_truth(ann(["Benign"], ["Questionable"])) == 0.0  # one Questionable span is enough
    assert conv.faithbench_truth(ann(["Unwanted", "Unwanted.Extrinsic"])) == 0.0
    assert conv.faithbench_worst_severity(ann(["Benign"], ["Unwanted.Intrinsic"], ["Questionable"])) == 3
    with pytest.raises(ValueError, match="unknown annotation label 'Bad'"):
        conv.faithbench_truth(ann(["Bad"]))


def test_summhay_key_split():
    assert conv.summhay_split_key("summary_subtopic_gpt-4o") == ("full", "gpt-4o")
    assert conv.summhay_split_key("summary_subtopic_dwzhu/e5-base-4k_gemini-1.5-pro") == ("e5", "gemini-1.5-pro")
    assert conv.summhay_split_key("summary_subtopic_oracle_claude3-haiku") == ("oracle", "claude3-haiku")
    with pytest.raises(ValueError, match="unknown retrieval setting 'bm25'"):
        conv.summhay_split_key("summary_subtopic_bm25_gpt3.5")


# -- conversion checks against the raw files -----------------------------------------------------------

def _raw_triviaqa(version: str) -> pd.DataFrame:
    return pd.read_csv(RAW / "triviaqa_judges_umass" / f"TriviaQA_Judges_w_HumanJudgement_{version}.csv", dtype=str, keep_default_na=False)


@needs_raw
def test_triviaqa_v1_human_accuracy_after_deduplication():
    raw = _raw_triviaqa("V1")
    judges = ["GPT-4", "Llama3-70B", "Llama3-8B", "Llama-70B", "Llama-13B", "Llama-7B", "Mistral-7B", "Gemma-2B", "JudgeLM", "EM", "Contains"]
    no_verdict = (raw[judges] == "").all(axis=1)
    dup = raw.duplicated(["model", "question"], keep=False)
    # The documented de-duplication: the 5 verdict-less rows are exactly the duplicated llama2-7b-chat rows.
    assert no_verdict.sum() == 5 and (no_verdict == (dup & no_verdict)).all()
    assert set(raw.loc[no_verdict, "model"]) == {"llama2-7b-chat"}
    kept = raw[~no_verdict]
    assert not kept.duplicated(["model", "question"]).any()
    expected = kept.groupby("model")["HumanJudgement"].apply(lambda s: (s == "True").mean())
    stored = _stored("triviaqa-v1", "correctness")
    truth = stored.drop_duplicates(["item", "candidate"]).dropna(subset=["true_score"])
    got = truth.groupby("candidate")["true_score"].mean()
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False)
    assert truth.groupby("candidate").size()["llama2-7b-chat"] == 395


@needs_raw
@pytest.mark.parametrize("version", ["V1", "V2"])
def test_triviaqa_verdicts_equal_raw(version):
    raw = _raw_triviaqa(version)
    judges = ["GPT-4", "Llama3-70B", "Llama3-8B", "Llama-70B", "Llama-13B", "Llama-7B", "Mistral-7B", "Gemma-2B", "JudgeLM"]
    qid = {q: f"q{i:03d}" for i, q in enumerate(pd.unique(raw["question"]))}
    kept = raw[~(raw[judges] == "").all(axis=1)]  # rows with no verdict at all are not judgments
    assert len(kept) == (3595 if version == "V1" else 3200)
    long = kept.assign(item=kept["question"].map(qid)).melt(id_vars=["item", "model"], value_vars=judges, var_name="judge", value_name="verdict")
    long["expected"] = long["verdict"].map({"True": 1.0, "False": 0.0, "": np.nan})
    stored = _stored(f"triviaqa-{version.lower()}", "correctness")
    merged = long.merge(stored, left_on=["item", "model", "judge"], right_on=["item", "candidate", "judge"], how="left", validate="one_to_one")
    assert merged["candidate"].notna().all()
    assert ((merged["expected"] == merged["score"]) | (merged["expected"].isna() & merged["score"].isna())).all()
    # Every stored row not coming from a raw row is a blank (an absent answer).
    extra = len(stored) - len(merged)
    assert extra == (5 * 9 if version == "V1" else 0)
    if version == "V2":
        assert (stored["candidate"] == "gpt-4t").sum() == 400 * 9


@needs_raw
@pytest.mark.parametrize("criterion", list(conv.HANNA_CRITERIA))
def test_hanna_truth_and_pooled_scores_equal_raw(criterion):
    raw = pd.read_csv(RAW / "hanna_story_eval" / "hanna_metric_scores_llm.csv", dtype=str, keep_default_na=False)
    ab, human_col, _ = conv.HANNA_CRITERIA[criterion]
    lists = lambda col: np.array([ast.literal_eval(x) for x in raw[col]], dtype=float)  # noqa: E731
    human = lists(human_col)
    # The raw criterion column is the mean of the three raters.
    raters = np.stack([lists(f"Human {k} {ab}") for k in (1, 2, 3)])
    assert np.allclose(raters.mean(axis=0), human)
    stored = _stored("hanna", criterion)
    sys_idx = {s: i for i, s in enumerate(raw["Model"])}
    s = stored["candidate"].map(sys_idx).to_numpy()
    p = stored["item"].str[1:].astype(int).to_numpy()
    assert np.allclose(stored["true_score"].to_numpy(), human[s, p], rtol=0, atol=1e-6)
    # Pooled rule, re-implemented vectorised: mean of variant values >= 1, rounded half up.
    for judge in conv.HANNA_JUDGES:
        v = np.stack([lists(f"{judge} {ab} {k}") for k in (1, 2, 3, 4)])  # [variant, system, prompt]
        ok = v >= 1
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(ok, v, 0).sum(0) / ok.sum(0)
        expected = np.floor(mean + 0.5 + 1e-9)
        rows = stored[stored["judge"] == judge]
        e = expected[rows["candidate"].map(sys_idx).to_numpy(), rows["item"].str[1:].astype(int).to_numpy()]
        got = rows["score"].to_numpy()
        assert np.array_equal(np.isnan(e), np.isnan(got))
        assert np.array_equal(e[~np.isnan(e)], got[~np.isnan(got)])
    by_prompt = _stored("hanna", f"{criterion}-by-prompt")
    assert len(by_prompt) == 11 * 96 * 20
    assert by_prompt["score"].isna().sum() == sum(
        int((lists(f"{j} {ab} {k}") < 1).sum()) for j in conv.HANNA_JUDGES for k in (1, 2, 3, 4))


@needs_raw
@pytest.mark.parametrize("aspect", list(conv.TOPICAL_ASPECTS))
def test_topical_chat_reduction_applied_to_raw_rows(aspect):
    folder = RAW / "topicalchat_usr_chatgpt"
    items = json.loads((folder / "topical_chat.json").read_text())
    parsed = pd.read_csv(folder / "chatgpt_ratings_parsed.csv")
    levels = conv.TOPICAL_ASPECTS[aspect][0]
    stored = _stored("topical-chat", f"{aspect}-by-prompt").set_index(["item", "candidate", "judge"])
    # Human means equal topical_chat.json.
    ctx = pd.read_csv(folder / "human_scores.csv")
    for row in ctx.itertuples():
        key = (f"c{row.context_id:02d}", row.system_id, f"{conv.TOPICAL_JUDGE}/geval")
        assert stored.loc[key, "true_score"] == pytest.approx(items[row.item_idx]["scores"][aspect], abs=1e-6)
    sub = parsed[parsed["aspect"] == aspect]
    for row in sub.itertuples(index=False):
        samples = [getattr(row, c) for c in conv.SAMPLE_COLUMNS]
        expected = conv.topical_reduce(samples, levels).score
        got = stored.loc[(f"c{row.context_id:02d}", row.system_id, f"{conv.TOPICAL_JUDGE}/{row.prompt_mode}"), "score"]
        assert got == expected
    # Rows absent from the result files are blank in the table.
    assert stored["score"].isna().sum() == 360 * 7 - len(sub)


@needs_raw
def test_topical_chat_geval_from_the_raw_replies():
    """The whole chain from the byte-for-byte result file: plain-number replies -> stored score."""
    folder = RAW / "topicalchat_usr_chatgpt"
    items = json.loads((folder / "topical_chat.json").read_text())
    ctx = conv.topical_context_ids(items)
    index = {(it["source"], it["system_id"], it["system_output"]): i for i, it in enumerate(items)}
    stored = _stored("topical-chat", "coherence").set_index(["item", "candidate"])
    result = json.loads((folder / "gpt3.5_coh_geval.json").read_text())
    checked = 0
    for rec in result:
        replies = [str(x).strip() for x in rec["all_responses"]]
        if not all(re.fullmatch(r"[123]", x) for x in replies):
            continue
        i = index[(rec["source"], rec["system_id"], rec["system_output"])]
        expected = conv.topical_reduce([float(x) for x in replies], (1, 2, 3)).score
        assert stored.loc[(f"c{ctx[i]:02d}", rec["system_id"]), "score"] == expected
        checked += 1
    assert checked > 200


@needs_raw
def test_wildbench_counts_and_scores_equal_raw():
    folder = RAW / "wildbench_v2_scores"
    raw = pd.read_csv(folder / "wildbench_score_v2_per_item.csv", dtype=str, keep_default_na=False)
    raw = raw[raw["eval_version"] == "v2.0522"]
    both = set(raw.loc[raw["judge"].str.startswith("gpt-4-turbo"), "model"]) & set(raw.loc[raw["judge"].str.startswith("gpt-4o"), "model"])
    stored = _stored("wildbench-v2", "overall")
    assert set(stored["candidate"]) == both and len(both) == 6
    assert stored["item"].nunique() == raw["session_id"].nunique() == 1024
    sel = raw[raw["model"].isin(both)]
    expected_counts = sel.groupby(["judge", "model"]).size()
    got_counts = stored.dropna(subset=["score"]).groupby(["judge", "candidate"]).size()
    assert dict(got_counts) == dict(expected_counts)
    merged = sel.merge(stored, left_on=["session_id", "model", "judge"], right_on=["item", "candidate", "judge"], validate="one_to_one")
    assert (merged["score_x"].astype(float) == merged["score_y"]).all()
    stat = json.loads((folder / "all_stat.json").read_text())
    ref = D.get_dataset("wildbench-v2").reference().set_index("candidate")
    for c in both:
        assert ref.loc[c, "arena_elo_hard_en_2024_07_16"] == float(stat[c]["Arena Elo (hard-en) - 2024-07-16"])


@needs_raw
def test_faithbench_truth_and_verdicts_equal_raw():
    """Recomputed from the raw JSON independently of the converter: truth shares and every verdict."""
    rows = []
    for path in sorted((RAW / "faithbench_hallucination").glob("batch_*.json")):
        b = int(path.stem.split("_")[1])
        for smp in json.loads(path.read_text())["samples"]:
            labels = {lab for a in smp["annotations"] for lab in a["label"]}
            bad = any(lab.startswith("Unwanted") or lab == "Questionable" for lab in labels)
            md = smp["metadata"]
            rows.append({"item": f"b{b:02d}-s{smp['sample_id'] // 10}", "candidate": md["summarizer"], "truth": 0.0 if bad else 1.0,
                         **{j: md[j] for j in ("gpt-3.5-turbo", "gpt-4-turbo", "gpt_4o")}, "hhem": md["hhem-2.1"]})
    raw = pd.DataFrame(rows)
    assert len(raw) == 750 and (raw["truth"] == 1).sum() == 239  # the counts SOURCE.md states
    shares = raw.groupby("candidate")["truth"].mean()
    assert shares["openai/GPT-3.5-Turbo"] == pytest.approx(34 / 75) and shares["cohere/command-r-08-2024"] == pytest.approx(14 / 75)
    stored = _stored("faithbench", "consistency-with-detectors")
    assert len(stored) == 750 * 6
    long = raw.melt(id_vars=["item", "candidate", "truth"], value_vars=["gpt-3.5-turbo", "gpt-4-turbo", "gpt_4o"], var_name="judge", value_name="v")
    merged = long.merge(stored, on=["item", "candidate", "judge"], validate="one_to_one")
    assert len(merged) == 2250
    assert (merged["v"].astype(float) == merged["score"]).all() and (merged["truth"] == merged["true_score"]).all()
    hhem = raw.merge(stored[stored["judge"] == "hhem-2.1"], on=["item", "candidate"], validate="one_to_one")
    assert ((hhem["hhem"] >= 0.5).astype(float) == hhem["score"]).all()
    main = _stored("faithbench", "consistency")
    pd.testing.assert_frame_equal(main, stored[stored["judge"].isin(["gpt-3.5-turbo", "gpt-4-turbo", "gpt_4o"])].reset_index(drop=True), check_dtype=False)


@needs_raw
def test_summhay_every_raw_label_is_one_row():
    records = json.loads((RAW / "summhay_coverage_judges" / "eval_benchmark_data.json").read_text())
    level = {"not_covered": 0, "partially_covered": 1, "fully_covered": 2, "NO_COVERAGE": 0, "PARTIAL_COVERAGE": 1, "FULL_COVERAGE": 2}
    judges = ["gpt-4o", "claude3-opus", "gemini-1.5-pro", "gpt3.5", "claude3-haiku"]
    expected = []
    for r in records:
        cand = r["summkey"].split("_")[-1]
        for a in r["annotation"]:
            for j in judges:
                pred = {p["insight_id"]: p["coverage"] for p in r[f"predictions_prompted_{j}"]}[a["insight_id"]]
                expected.append((cand, j, level[pred], level[a["coverage"]]))
    exp = pd.DataFrame(expected, columns=["candidate", "judge", "score", "true_score"])
    stored = _stored("summhay", "coverage")
    assert len(stored) == len(exp) == 1419 * 5
    # Same multiset of (candidate, judge, score, truth) rows, and per-candidate human means as SOURCE.md (0-1 scale x 2).
    key = ["candidate", "judge", "score", "true_score"]
    assert exp.groupby(key).size().sort_index().equals(stored.astype({"score": int, "true_score": int}).groupby(key).size().sort_index())
    human = stored[stored["judge"] == "gpt-4o"].groupby("candidate")["true_score"].mean() / 2
    assert human["claude3-opus"] == pytest.approx(0.650, abs=5e-4) and human["gpt3.5"] == pytest.approx(0.308, abs=5e-4)
    assert not stored.duplicated(["item", "candidate", "judge"]).any()


@needs_raw
@pytest.mark.slow
def test_shipped_assets_are_what_the_script_produces(tmp_path):
    """Re-running the conversion gives byte-identical files: the shipped data is not stale or hand-edited."""
    assert conv.main(["--raw", str(RAW), "--out", str(tmp_path)]) == 0
    for info in D.list_datasets():
        fresh = sorted(p.name for p in (tmp_path / info.name).iterdir())
        shipped = sorted(p.name for p in info.folder.iterdir())
        assert fresh == shipped, info.name
        for name in fresh:
            a, b = (tmp_path / info.name / name).read_bytes(), (info.folder / name).read_bytes()
            assert a == b, f"{info.name}/{name} differs from a fresh conversion: run scripts/convert_datasets.py"


def test_cli_true_levels_alone_take_the_observed_levels_from_the_data(tmp_path, capsys):
    """--true-levels without --levels: the observed levels come from the data (a built-in with a
    criterion, and a file with several criteria read with --criterion)."""
    from simplex_core.cli import main

    assert main(["describe", "hanna", "--criterion", "coherence", "--true-levels=1,3,5"]) == 0
    assert "5 observed levels: 1, 2, 3, 4, 5; 3 true levels: 1, 3, 5" in capsys.readouterr().out
    path = tmp_path / "two_criteria.csv"
    rows = [{"item": f"i{i}", "candidate": c, "judge": "j", "score": s, "criterion": crit}
            for i in range(3) for c, s in (("a", 1), ("b", 2), ("c", 3)) for crit in ("x", "y")]
    pd.DataFrame(rows).to_csv(path, index=False)
    assert main(["describe", str(path), "--criterion", "x", "--true-levels=1,3"]) == 0
    assert "3 observed levels: 1, 2, 3; 2 true levels: 1, 3" in capsys.readouterr().out
    assert main(["describe", str(path), "--criterion", "x", "--true-levels=1,9"]) == 2
    assert "True levels [9] are not observed levels [1, 2, 3]" in capsys.readouterr().err
