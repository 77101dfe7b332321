"""AppTest smoke and behaviour tests of the Streamlit app (no browser).

Fits run small (``SIMPLEX_JUDGE_FAST=1``: 2 chains × 200 draws) and the background grid is off, so
the suite does not fill the machine with fits; every test cancels what it left queued.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGES = ["data", "simplex", "rankings", "sensitivity", "geometry_lab", "guide", "export"]


@pytest.fixture(scope="module", autouse=True)
def _app_env():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SIMPLEX_JUDGE_FAST", "1")
        mp.setenv("SIMPLEX_JUDGE_BACKGROUND_GRID", "0")
        mp.setenv("SIMPLEX_JUDGE_WARM_WORKER", "0")  # start the fit process only when a test needs a fit
        yield


@pytest.fixture(autouse=True)
def _cancel_leftover_fits():
    yield
    from app_support.fits import fit_manager

    manager = fit_manager()
    for job in manager.jobs():
        if not job.is_final:
            manager.cancel(job.job_id)


def new_app(query: dict | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=180)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def plain(value) -> str:
    """Page text with the Markdown escapes of user strings (app_support.safe_text.md) removed."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", str(value)).replace("\u2060", "")


def texts(at) -> str:
    parts = [e.value for e in at.markdown] + [e.value for e in at.caption] + [e.value for e in at.info]
    parts += [e.value for e in at.warning] + [plain(e.value) for e in at.error] + [e.value for e in at.success]
    return "\n".join(plain(p) for p in parts)


def assert_clean(at, *, allow_errors: bool = False) -> None:
    assert not at.exception, [e.value for e in at.exception]
    if not allow_errors:
        assert not at.error, [plain(e.value) for e in at.error]


# -- every page ---------------------------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_without_exception_on_the_default_dataset(page):
    at = new_app()
    at.switch_page(f"pages/{page}_page.py").run()
    assert_clean(at)
    assert at.title and at.title[0].value  # the page drew its title, not only the sidebar


@pytest.mark.parametrize("dataset", ["hanna", "topical-chat", "wildbench-v2", "triviaqa-v2", "faithbench", "summhay"])
@pytest.mark.parametrize("page", ["data", "simplex", "rankings"])
def test_pages_run_on_the_other_builtin_datasets(dataset, page):
    at = new_app({"data": dataset})
    assert at.session_state["w_dataset"] == dataset
    at.switch_page(f"pages/{page}_page.py").run()
    if dataset in ("wildbench-v2", "faithbench") and page != "data":
        # WildBench's gpt-3.5 answers (FaithBench's OpenAI summaries) are judged only by OpenAI judges: with
        # self-family judgments kept apart (the default) the model has nothing to go on, and the page says so and
        # what to do (pool them with the judges' others: the sidebar's switch).
        assert not at.exception
        error = plain(at.error[0].value) if len(at.error) == 1 else ""
        assert re.search(r"ha(s|ve) no judge of another family", error) and "pool self-family judgments" in error, error
        assert "Keep self-family judgments apart' switch" in error, error
    else:
        assert_clean(at)


def test_switching_self_family_exclusion_off_makes_wildbench_fittable():
    at = new_app({"data": "wildbench-v2", "self_exclusion": "0"})
    assert at.session_state["w_self_exclusion"] is False
    at.switch_page("pages/rankings_page.py").run()
    assert_clean(at)


def test_the_topical_chat_licence_warning_shows_wherever_the_dataset_appears():
    from simplex_core.data.datasets import get_dataset

    warning = get_dataset("topical-chat").licence_warning
    assert warning
    at = new_app({"data": "topical-chat"})
    for page in ("data", "rankings", "simplex", "sensitivity", "export"):
        at.switch_page(f"pages/{page}_page.py").run()
        shown = [w.value for w in at.warning]
        assert any(warning in w for w in shown), (page, shown)


def test_a_dataset_with_one_judge_says_its_ranking_rests_on_the_judge_prior():
    at = new_app({"data": "topical-chat"})
    at.switch_page("pages/rankings_page.py").run()
    assert_clean(at)
    assert any("Fewer than 3 judges scored the answers of any candidate" in plain(i.value) for i in at.info), \
        [plain(i.value) for i in at.info]
    at = new_app()  # TriviaQA V1: nine judges
    at.switch_page("pages/rankings_page.py").run()
    assert not any("Fewer than 3 judges" in plain(i.value) for i in at.info)


def test_a_candidate_scored_only_at_the_top_says_its_estimate_stops_short_of_the_end():
    rows = ["item,candidate,judge,score"]
    for judge in ("j1", "j2", "j3"):
        for item in range(8):
            rows += [f"q{item},always-top,{judge},5", f"q{item},mixed,{judge},{1 + item % 5}"]
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("top.csv", "\n".join(rows).encode(), "text/csv")).run()
    at.switch_page("pages/rankings_page.py").run()
    assert_clean(at)
    shown = [plain(i.value) for i in at.info]
    assert any("answers of always-top received is the top level (for always-top, 8 answers on 5 levels" in s
               for s in shown), shown


def test_a_scale_too_large_to_fit_is_shown_on_the_data_page_and_refused_in_words_on_rankings():
    from simplex_core.model.settings import MAX_FIT_LEVELS

    n = MAX_FIT_LEVELS + 1
    rows = ["item,candidate,judge,score"] + [f"q{i},{c},{j},{1 + (i + len(c) + len(j)) % n}"
                                              for i in range(3 * n) for c in ("a", "bb") for j in ("x", "yy")]
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("wide.csv", "\n".join(rows).encode(), "text/csv")).run()
    assert any("too many to be scoring levels" in plain(e.value) for e in at.error)  # 21 distinct scores > 15
    at.text_input(key="w_levels").set_value(",".join(str(v) for v in range(1, n + 1))).run()
    assert_clean(at)  # declared, the data page reads any scale
    at.switch_page("pages/rankings_page.py").run()
    assert not at.exception
    shown = [plain(e.value) for e in at.error]
    assert any(f"The scale has {n} levels; a fit takes at most {MAX_FIT_LEVELS}" in e for e in shown), shown
    assert not [b for b in at.button if b.label == "Try again"]  # it cannot help
    assert "waiting for the real fit" not in texts(at) and "not ready yet" not in texts(at)
    assert "ordered by the simple average (the Bayesian fit failed, above)" in texts(at)
    from app_support.fits import fit_manager

    assert not [j for j in fit_manager().jobs() if not j.is_final]  # nothing queued for it


# -- data page ----------------------------------------------------------------------------------

def test_a_malformed_upload_shows_the_problems_in_plain_words():
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("scores.csv", b"question,model,grade\nq1,a,5\n", "text/csv")).run()
    assert not at.exception
    errors = [plain(e.value) for e in at.error]
    assert len(errors) == 1
    assert "Missing required columns 'item', 'candidate', 'judge', 'score'; found 'question', 'model', 'grade'" in errors[0]
    assert "Traceback" not in errors[0]


def test_an_upload_with_bad_scores_lists_every_problem_with_its_rows():
    bad = b"item,candidate,judge,score\nq1,a,j,1\nq1,b,j,oops\nq2,a,j,1\nq2,b,j,\nq3,a,j,x\n"
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("bad.csv", bad, "text/csv")).run()
    assert not at.exception
    err = plain(at.error[0].value)
    assert "non-numeric values 'oops', 'x' in rows 2, 5" in err


def test_a_valid_upload_replaces_the_dataset_and_survives_a_page_switch():
    from simplex_core.data.table import template_frame

    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("mine.csv", template_frame().to_csv(index=False).encode(), "text/csv")).run()
    assert_clean(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Candidates"] == "2" and metrics["Judges"] == "2" and metrics["Items"] == "2"
    at.switch_page("pages/guide_page.py").run()
    at.switch_page("pages/data_page.py").run()
    assert {m.label: m.value for m in at.metric}["Judgments"] == "8"



def test_a_fastchat_judgment_upload_is_read_as_it_is_and_says_what_it_mapped():
    import json

    rows = [{"question_id": q, "model": m, "judge": ["gpt-4", "single-v1" + ("-multi-turn" if t == 2 else "")],
             "user_prompt": "...", "judgment": "...", "score": -1 if (q, m, t) == (2, "b", 1) else 1 + (q + len(m) + t) % 10,
             "turn": t, "tstamp": 1.0} for q in (1, 2, 3) for m in ("a", "b", "c") for t in (1, 2)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("gpt-4_single.jsonl", data, "application/json")).run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Candidates"] == "3" and metrics["Judges"] == "1" and metrics["Items"] == "6" and metrics["Judgments"] == "17"
    shown = texts(at)
    assert "FastChat MT-Bench single-answer judgments: 17 of 18 rows mapped" in shown and "1 of 18 FastChat rows have score -1" in shown


def test_gold_answers_are_counted_and_said_to_be_left_out_of_the_fit():
    rows = ["item,candidate,judge,score,true_score,gold"]
    for item in range(6):
        for cand in ("a", "b"):
            gold = "true" if item < 2 and cand == "a" else ""
            rows += [f"q{item},{cand},{j},{1 + (item + n) % 3},{1 + item % 3},{gold}" for n, j in enumerate(("j1", "j2", "j3"))]
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("gold.csv", "\n".join(rows).encode(), "text/csv")).run()
    assert_clean(at)
    assert {m.label: m.value for m in at.metric}["Ground truth"] == "2 gold"
    captions = " ".join(plain(c.value) for c in at.caption)
    assert "2 answers marked `gold`: the app's Bayesian fit leaves them out" in captions and "never sees" not in captions
    at.switch_page("pages/export_page.py").run()
    assert "2 gold answers (left out of the Bayesian fit, label-free on every page" in " ".join(plain(c.value) for c in at.caption)


def test_gold_answers_that_all_share_one_true_score_are_warned_of_on_the_data_page():
    rows = ["item,candidate,judge,score,true_score,gold"]
    for item in range(6):
        for cand in ("a", "b"):
            gold = "true" if item in (0, 3) else ""  # true_score 1 on both items
            rows += [f"q{item},{cand},{j},{1 + (item + n) % 3},{1 + item % 3},{gold}" for n, j in enumerate(("j1", "j2", "j3"))]
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("alike.csv", "\n".join(rows).encode(), "text/csv")).run()
    assert_clean(at)
    warnings = " ".join(plain(w.value) for w in at.warning)
    assert "all 4 gold answers have the same true score (1)" in warnings and "answers at other levels" in warnings

def test_collapsing_levels_for_the_analysis_changes_the_scale():
    at = new_app({"data": "hanna"})
    at.switch_page("pages/data_page.py").run()
    assert "5 levels" in texts(at)
    at.toggle(key="w_collapse_on").set_value(True).run()
    assert_clean(at)
    assert "**in use**" in texts(at)
    # the rest of the app now works on 3 levels
    at.switch_page("pages/simplex_page.py").run()
    assert_clean(at)
    assert "collapsed" in texts(at)


def test_the_simplex_page_explains_the_judge_panel():
    at = new_app()
    at.switch_page("pages/simplex_page.py").run()
    assert_clean(at)
    assert "Judges" in [s.value for s in at.subheader]
    panel = next(d.value for d in at.dataframe if "info_added" in d.value.columns)
    assert len(panel) >= 2 and panel["accuracy"].between(0, 1).all()
    assert (panel["accuracy_lo"] <= panel["accuracy"]).all() and (panel["accuracy"] <= panel["accuracy_hi"]).all()
    assert f"The {len(panel)} judges are worth" in texts(at)


def test_a_mapping_that_skips_a_level_is_refused_in_plain_words():
    at = new_app({"data": "hanna"})
    at.switch_page("pages/data_page.py").run()
    box = next(t for t in at.text_input if t.key.startswith("w_collapse_text_"))
    box.set_value("1:1, 2:1, 3:2, 4:3").run()
    assert not at.exception
    assert any("say where levels 5 go" in plain(e.value) for e in at.error)


def test_families_text_is_data_never_a_server_path(tmp_path):
    from simplex_core.data.table import template_frame

    secret = tmp_path / "secret.json"
    secret.write_text('{"model-a": "LEAKED-VALUE"}')
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("mine.csv", template_frame().to_csv(index=False).encode(), "text/csv")).run()
    at.session_state["w_families"] = str(secret)
    at.run()
    assert not at.exception
    assert "LEAKED" not in texts(at)
    assert any("The families text is not valid JSON" in plain(e.value) for e in at.error)


def test_many_families_and_self_family_pairs_are_tables_not_a_paragraph():
    import json as json_module

    import pandas as pd

    models = [f"m{i}" for i in range(10)]
    rows = [{"item": f"q{q}", "candidate": c, "judge": j, "score": (q + k) % 2}
            for q in range(4) for k, c in enumerate(models) for j in models]
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("many.csv", pd.DataFrame(rows).to_csv(index=False).encode(), "text/csv")).run()
    at.session_state["w_families"] = json_module.dumps({m: f"family-{m}" for m in models})  # each judges itself
    at.run()
    assert not at.exception
    tables = {tuple(d.value.columns): d.value for d in at.dataframe}
    assert sorted(map(tuple, tables[("judge", "candidate")].to_numpy())) == [(m, m) for m in models]
    assert tables[("model", "family")].set_index("model")["family"].to_dict() == {m: f"family-{m}" for m in models}
    assert "m3 on m3" not in texts(at)  # no paragraph of pairs


def test_an_empty_upload_says_so():
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("empty.csv", b"", "text/csv")).run()
    assert not at.exception
    assert any("'empty.csv' is empty (0 bytes)" in plain(e.value) for e in at.error)


def test_names_are_shown_as_text_and_csv_downloads_cannot_run_formulas():
    import pandas as pd

    from app_support.downloads import csv_text
    from app_support.safe_text import md

    hostile = "![t](http://127.0.0.1:8799/x.png) <a href='x'>z</a> $x$ :red[a] *b*\n# h"
    escaped = md(hostile)
    assert plain(escaped) == hostile.replace("\n", " ")
    assert re.search(r"(?<!\\)[!\[\]()<>$:*#]", escaped) is None  # every markup character is escaped
    frame = pd.DataFrame({"candidate": ["=HYPERLINK(\"x\")", "+1", "-cmd", "@SUM(1)", "\tx", "ok"], "score": [-1.5, 2, 3, 4, 5, 6]})
    lines = csv_text(frame.set_index("candidate"), index=True).splitlines()
    assert lines[1] == '"\'=HYPERLINK(""x"")",-1.5'  # quoted by the CSV writer, defused by the apostrophe
    assert lines[2:5] == ["'+1,2.0", "'-cmd,3.0", "'@SUM(1),4.0"]
    assert lines[5] == "'\tx,5.0" and lines[6] == "ok,6.0"



def test_download_names_drop_an_uploaded_files_extension():
    from app_support.downloads import slug

    assert slug("scores.csv-rows") == "scores-rows"  # the button adds ".csv": not "scores.csv-rows.csv"
    assert slug("My Scores.JSONL.gz-leaderboard") == "my-scores-leaderboard"
    assert slug("v1.0-rows") == "v1.0-rows" and slug("") == "download"

# -- URL and settings ---------------------------------------------------------------------------

def test_the_url_chooses_dataset_and_settings_and_is_written_back():
    at = new_app({"data": "hanna", "criterion": "empathy", "omega": "2", "beta_max": "10"})
    assert at.session_state["w_dataset"] == "hanna"
    assert at.session_state["w_criterion"] == "empathy"
    assert at.session_state["w_omega"] == 2.0 and at.session_state["w_beta_max"] == 10.0
    assert at.query_params["omega"] == ["2"] or at.query_params["omega"] == "2"
    assert_clean(at)


def test_an_invalid_url_value_is_ignored_and_said():
    at = new_app({"omega": "banana", "data": "no-such-dataset"})
    assert at.session_state["w_omega"] == 0.0
    notes = " ".join(plain(c.value) for c in at.caption)
    assert "omega='banana' is not valid here and was ignored" in notes
    assert "data='no-such-dataset'" in notes


def test_the_sliders_offer_the_fine_grid_and_a_value_between_turns_on_the_continuous_sliders():
    from app_support.state import SLIDER_BETA_MAXES, SLIDER_OMEGAS

    # at least 33 × 41 values, the paper's 5 × 5 grid among them
    assert len(SLIDER_OMEGAS) >= 33 and len(SLIDER_BETA_MAXES) >= 41
    assert {0.0, 1.0, 2.0, 4.0, 8.0} <= set(SLIDER_OMEGAS) and {0.0, 1.0, 5.0, 10.0, 20.0} <= set(SLIDER_BETA_MAXES)
    at = new_app({"omega": "0.75", "beta_max": "12.5"})
    assert at.session_state["w_off_grid"] is False
    assert (at.session_state["w_omega"], at.session_state["w_beta_max"]) == (0.75, 12.5)
    at = new_app({"omega": "0.6"})
    assert at.session_state["w_off_grid"] is True
    assert at.session_state["w_omega_free"] == 0.6


@pytest.mark.parametrize("query", [{"omega": "2", "beta_max": "7"}, {"omega": "0.6", "beta_max": "10"},
                                   {"omega": "4", "beta_max": "20"}, {"omega": "1.3", "beta_max": "2.5"},
                                   {"omega": "2.25", "beta_max": "7.3"}])
def test_a_link_reproduces_exactly_the_setting_it_names(query):
    from app_support.state import K as keys

    at = new_app(query)
    ss = at.session_state
    off = ss[keys.OFF_GRID]
    shown = (ss[keys.OMEGA_FREE], ss[keys.BETA_MAX_FREE]) if off else (ss[keys.OMEGA], ss[keys.BETA_MAX])
    assert shown == (float(query["omega"]), float(query["beta_max"]))
    written = {k: (v[0] if isinstance(v, list) else v) for k, v in ((k, at.query_params[k]) for k in ("omega", "beta_max"))}
    assert {k: float(v) for k, v in written.items()} == {k: float(v) for k, v in query.items()}
    from app_support.state import SLIDER_BETA_MAXES, SLIDER_OMEGAS

    fine = float(query["omega"]) in SLIDER_OMEGAS and float(query["beta_max"]) in SLIDER_BETA_MAXES
    assert at.session_state[keys.OFF_GRID] is (not fine)


def test_a_bad_custom_delta_is_a_plain_message():
    at = new_app()
    at.session_state["w_delta"] = "custom"
    at.session_state["w_delta_custom"] = "1, two"
    at.run()
    assert not at.exception
    # the value at fault and what is expected, in the core's words (priors.parse_delta)
    assert any("Custom δ" in plain(e.value) and "item 2 ('two') is not a number" in plain(e.value) for e in at.error)


# -- geometry lab --------------------------------------------------------------------------------

def _lab_tab(at, label: str):
    at.session_state["w_lab_tab"] = label
    return at.run()


def test_the_geometry_lab_draws_only_the_open_tab_and_the_flip_tabs_share_h():
    at = new_app()
    at.switch_page("pages/geometry_lab_page.py").run()
    assert not at.exception and len(at.get("plotly_chart")) == 1  # the area view's figure only
    _lab_tab(at, "Augmented simplex")  # opened before the flip tab: h starts at the flip tab's default
    assert not at.exception and len(at.get("plotly_chart")) == 1
    lifted_h = at.session_state["w_lab_h"]
    _lab_tab(at, "Three levels: the flip")
    assert len(at.get("plotly_chart")) == 2 and at.slider(key="w_lab_h").value == lifted_h != 0
    at.slider(key="w_lab_h").set_value(-lifted_h).run()
    _lab_tab(at, "Augmented simplex")
    assert f"h = {-lifted_h:+.3f}" in texts(at)


def test_the_flip_slider_reverses_the_expected_score_order():
    at = new_app()
    at.switch_page("pages/geometry_lab_page.py").run()
    _lab_tab(at, "Three levels: the flip")
    h = at.slider(key="w_lab_h")
    verdicts = {}
    for sign in (1, -1):
        h.set_value(sign * abs(h.value)).run()
        text = texts(at)
        verdicts[sign] = "candidate 1 ranks higher" in text, "candidate 2 ranks higher" in text
    assert verdicts[1] != verdicts[-1] and all(any(v) for v in verdicts.values())


def test_the_area_view_gives_no_expected_score_outside_the_triangle():
    """Outside the judge's triangle π has negative shares: Σ m·π(m) is no score (it was shown: 0.326
    on a 1–3 scale), so the metric shows a dash beside the warning; inside, a number in [1, 3]."""
    at = new_app()
    at.switch_page("pages/geometry_lab_page.py").run()
    expected = [m for m in at.metric if m.label == "Expected score"]
    assert 1.0 <= float(expected[0].value) <= 3.0 and not at.warning
    at.slider(key="w_lab_a").set_value(0.0)  # the candidate's share of level 3, then of level 2
    at.slider(key="w_lab_b").set_value(0.0).run()
    assert [m.value for m in at.metric if m.label == "Expected score"] == ["—"]
    assert any("outside the judge's triangle" in plain(w.value) for w in at.warning)


def test_the_level_2_slider_stays_in_place_greyed_when_level_3_takes_the_whole_share():
    at = new_app()
    at.switch_page("pages/geometry_lab_page.py").run()
    at.slider(key="w_lab_a").set_value(1.0).run()
    greyed = at.slider(key="w_lab_b-none")
    assert greyed.disabled and greyed.value == 0.0 and not at.exception
    at.slider(key="w_lab_a").set_value(0.6).run()
    assert 0.0 <= at.slider(key="w_lab_b").value <= 0.4 and not at.exception


def test_a_label_flipping_segment_judge_is_called_out():
    at = new_app()
    at.switch_page("pages/geometry_lab_page.py").run()
    _lab_tab(at, "Two levels: order on a segment")
    at.slider(key="w_lab_t1").set_value(0.8)
    at.slider(key="w_lab_t2").set_value(0.3).run()
    assert any("Label-flipping judge" in plain(e.value) for e in at.error)


# -- fits -----------------------------------------------------------------------------------------

def _bayes_boxes(at) -> dict:
    """Candidate -> the Bayesian rank draws' quartiles, read from the rank figure's data."""
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    out = {}
    for trace in fig["data"]:
        if str(trace.get("name", "")).startswith("bayesian"):
            out[trace["name"]] = (trace.get("x"), trace.get("y"), trace.get("q1"), trace.get("median"))
    return out


def test_moving_omega_queues_a_refit_and_shows_the_reweighted_answer_everywhere_meanwhile():
    """While the refit runs, every Bayesian view of the Rankings page (ranking line, rank figure,
    summary, leaderboard, pairwise) shows the setting asked for, reweighted from a fit already done
    and labelled approximate; none shows the previous fit. The refit's completion (figure data
    changing) is checked in the real browser test."""
    import shutil

    from app_support.sidebar import sampler_sizes
    from simplex_core.data import datasets
    from simplex_core.data.views import count_tensor
    from simplex_core.inference.fit_cache import FitCache
    from simplex_core.model.settings import FitSettings

    from app_support import approximate, fits
    from simplex_core.studies.sensitivity import grid_settings

    counts = count_tensor(datasets.load_dataset(datasets.DEFAULT_DATASET))
    # no stored fit at ω = 4 (the setting asked for), nor the other grid fits that other tests left (a
    # fast machine finishes them before they are cancelled), which would be nearer sources: the only
    # fit with random effects is then the one shipped at ω = 1
    assert FitSettings(omega=4.0, **sampler_sizes()) in grid_settings(FitSettings(**sampler_sizes()))
    for s in grid_settings(FitSettings(**sampler_sizes())):
        if s.omega > 0:
            shutil.rmtree(FitCache().path(counts, s), ignore_errors=True)
    for memo in (fits._memo, approximate._draws_memo, approximate._answers):
        memo.clear()
    at = new_app()
    at.switch_page("pages/rankings_page.py").run()
    assert_clean(at)
    before = _bayes_boxes(at)
    assert before, "the default view should show the Bayesian ranking at once (precomputed)"
    summary_before = at.dataframe[0].value
    at.select_slider(key="w_omega").set_value(4.0).run()
    assert_clean(at)
    text = texts(at)
    assert "Fitting ω = 4, β_max = 5" in text
    assert "Showing the previous fit" not in text and "Previous fit's ranking" not in text
    # reweighted from the fit at ω = 1 shipped with the app; the line names the setting it stands for
    assert "**Bayesian ranking, approximate** (ω = 4, β_max = 5, shared-truth likelihood; best first" in text
    assert any(plain(c.value).startswith("Approximate: reweighted from the fit at ω = 1") for c in at.caption)
    summary = at.dataframe[0].value  # the posterior summary: the approximate answer's numbers
    assert list(summary.columns) == list(summary_before.columns)
    assert not summary["expected_score_mean"].equals(summary_before["expected_score_mean"])
    evaluation = at.dataframe[-1].value
    assert "bayesian (approximate)" in set(evaluation["method"])
    titles = [" ".join(t.replace("<br>", " ").split()) for t in _figure_titles(at).split("\n")]
    asked = "ω = 4, β_max = 5, shared-truth likelihood, approximate"
    assert any("rank distributions" in t and asked in t for t in titles), titles
    assert any("leaderboard" in t and asked in t for t in titles), titles
    assert any("P(row beats column)" in t and asked in t for t in titles), titles
    assert _bayes_boxes(at) != before  # the figure's Bayesian boxes are the reweighted draws, not ω = 0's
    assert at.query_params["omega"] in (["4"], "4")  # the link already carries the new setting


@pytest.mark.slow
def test_a_cancelled_fit_says_so_and_can_be_restarted():
    import shutil

    from app_support.sidebar import sampler_sizes
    from simplex_core.data import datasets
    from simplex_core.data.views import count_tensor
    from simplex_core.inference.fit_cache import FitCache
    from simplex_core.model.settings import FitSettings

    # make sure this setting is not in the disk cache, so that there is a fit to cancel
    counts = count_tensor(datasets.load_dataset(datasets.DEFAULT_DATASET))
    shutil.rmtree(FitCache().path(counts, FitSettings(beta_max=20.0, **sampler_sizes())), ignore_errors=True)
    at = new_app()
    at.switch_page("pages/rankings_page.py").run()
    at.select_slider(key="w_beta_max").set_value(20.0).run()
    assert "Fitting ω = 0, β_max = 20" in texts(at)
    next(b for b in at.button if b.label == "Cancel this fit").click().run()
    assert not at.exception
    assert any("was cancelled" in w.value for w in at.warning)
    at.run()  # a cancelled fit is not restarted behind the user's back...
    assert any("was cancelled" in w.value for w in at.warning)
    next(b for b in at.button if b.label == "Fit it again").click().run()
    assert "Fitting ω = 0, β_max = 20" in texts(at)  # ... but on request


def test_a_fit_that_lands_while_its_page_waits_is_logged_once_with_the_delay_to_the_page(monkeypatch):
    """The server's share of "stored → shown": the first page run that gets a fit its
    session asked for before it was fitted logs how long after landing that was; later runs do not."""
    import shutil
    import time
    from types import SimpleNamespace

    from app_support import fits
    from app_support.sidebar import sampler_sizes
    from simplex_core.data import datasets
    from simplex_core.data.views import count_tensor
    from simplex_core.inference.fit_cache import FitCache
    from simplex_core.model.settings import FitSettings

    counts = count_tensor(datasets.load_dataset(datasets.DEFAULT_DATASET))
    shutil.rmtree(FitCache().path(counts, FitSettings(beta_max=17.5, **sampler_sizes())), ignore_errors=True)
    fits._memo.clear()
    lines: list[str] = []
    monkeypatch.setattr(fits, "_LOG", SimpleNamespace(info=lambda msg, *args: lines.append(msg % args)))
    at = new_app({"beta_max": "17.5"})
    assert "Fitting ω = 0, β_max = 17.5" in texts(at)
    assert lines == []  # nothing has landed yet
    deadline = time.time() + 300
    while "Fit: ω = 0, β_max = 17.5" not in texts(at) and time.time() < deadline:
        time.sleep(1.0)
        at.run()
    assert_clean(at)
    assert "Fit: ω = 0, β_max = 17.5" in texts(at)
    assert len(lines) == 1, lines
    found = re.fullmatch(r"fit ω = 0, β_max = 17\.5, [^ ]+ likelihood reached a page that waited for it "
                         r"(\d+\.\d\d) s after it landed", lines[0])
    assert found, lines[0]
    assert 0.0 <= float(found.group(1)) < 60.0
    at.run()  # the same fit shown again is not a delivery
    assert len(lines) == 1


def test_showing_a_first_fit_queues_the_rest_of_the_grid_in_the_background(monkeypatch):
    monkeypatch.setenv("SIMPLEX_JUDGE_BACKGROUND_GRID", "1")
    from app_support.fits import fit_manager
    from simplex_core.jobs import BACKGROUND

    at = new_app()  # the default view: the precomputed fit is shown, so the grid starts
    assert_clean(at)
    groups = {j.group for j in fit_manager().jobs() if j.group and j.group.startswith("grid:")}
    assert len(groups) == 1
    jobs = fit_manager().jobs(groups.pop())
    assert len(jobs) == 24 and all(j.priority == BACKGROUND for j in jobs)
    assert {j.label for j in jobs} == {f"ω = {o:g}, β_max = {b:g}, shared-truth likelihood" for o in (0, 1, 2, 4, 8) for b in (0, 1, 5, 10, 20)} - {"ω = 0, β_max = 5, shared-truth likelihood"}
    sidebar = " ".join(m.value for m in at.sidebar.markdown)
    assert "Background grid" in sidebar
    at.run()  # a rerun does not queue the grid twice
    assert len(fit_manager().jobs(jobs[0].group)) == 24
    progress = fit_manager().group_progress(jobs[0].group)
    assert progress.total == 24 and progress.done + progress.running + progress.queued == 24


# -- the precomputed default result ---------------------------------------------------------------

def _shipped(settings=None):
    """The shipped default fit as the app's fit cache returns it (its read-only layer) for the
    default data at ``settings`` (default: the app's own sampler sizes, not the shipped fit's), and
    the default counts."""
    from app_support.fits import fit_store
    from simplex_core.data import datasets
    from simplex_core.data.views import count_tensor
    from simplex_core.model.settings import FitSettings

    counts = count_tensor(datasets.load_dataset(datasets.DEFAULT_DATASET))
    settings = settings or FitSettings(chains=4, draws=1000, tune=1000, seed=7)
    return fit_store().load(counts, settings), counts


def _shipped_meta(stem="default"):
    from simplex_core.inference.fit_cache import READ_ONLY_META, SHIPPED_DIR

    return json.loads((SHIPPED_DIR / READ_ONLY_META.format(stem=stem)).read_text())


def test_opening_the_app_shows_the_precomputed_fit_without_fitting():
    pre, _ = _shipped()
    if pre is None or not pre.timing.get("read_only"):
        pytest.fail("assets/precomputed/ is missing: run scripts/precompute_default.py")
    at = new_app()
    assert_clean(at)
    assert "precomputed with the app" in texts(at)
    assert "Fitting" not in texts(at)
    assert _bayes_boxes(at)  # the Bayesian rank distributions are on the first page


def test_one_rankings_page_run_hashes_its_fit_key_once(monkeypatch):
    """The fit key (settings and data) is hashed once per page run and reused: ``FitView.key`` for the
    memo, the fit shown and the reweighting memo; ``FitView.data_key`` for the data's own key."""
    import threading

    from simplex_core.inference import fit_identity
    from simplex_core.model.settings import FitSettings

    at = new_app()
    at.switch_page("pages/rankings_page.py").run()
    assert_clean(at)
    calls: dict[str, int] = {"key": 0, "counts_hash": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            if threading.current_thread().name.startswith("ScriptRunner"):  # the page run, not a worker
                calls[name] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(FitSettings, "key", counting("key", FitSettings.key))
    monkeypatch.setattr(fit_identity, "counts_hash", counting("counts_hash", fit_identity.counts_hash))
    at.run()
    assert_clean(at)
    assert _bayes_boxes(at)  # the page did show the fit
    # one fit_key (settings and counts hashed once) and one data_key (counts hashed once more)
    assert calls == {"key": 1, "counts_hash": 2}


def test_label_suggestions_are_computed_only_when_their_panel_is_opened():
    at = new_app()
    assert "Open to compute the suggestions." in texts(at)
    assert not any("expected_reduction" in d.value.columns for d in at.dataframe)
    at.session_state["exp_label_next"] = True  # what clicking the expander does
    at.run()
    assert_clean(at)
    tables = [d.value for d in at.dataframe if "expected_reduction" in d.value.columns]
    assert len(tables) == 1 and len(tables[0]) == 20  # the default budget
    assert {"item", "candidate"} <= set(tables[0].columns)
    assert (tables[0]["expected_reduction"] >= 0).all() and tables[0]["expected_reduction"].iloc[0] > 0


def test_the_precomputed_assets_are_small_and_describe_themselves():
    from simplex_core.inference.fit_cache import READ_ONLY_POSTERIOR, SHIPPED_DIR

    meta = _shipped_meta()
    assert (SHIPPED_DIR / READ_ONLY_POSTERIOR.format(stem="default")).stat().st_size < 5e6
    assert meta["reweighting_only"] is False and _shipped_meta("omega1")["reweighting_only"] is True
    from simplex_core.data import datasets

    assert meta["dataset"] == datasets.DEFAULT_DATASET
    assert meta["criterion"] == datasets.get_dataset(meta["dataset"]).default_criterion
    assert meta["data_hash"] == datasets.load_dataset(meta["dataset"]).data_hash()
    assert {c["candidate"] for c in meta["candidates"]} == set(datasets.load_dataset(meta["dataset"]).candidates)


@pytest.mark.slow
def test_the_precomputed_result_agrees_with_a_fresh_fit():
    """E_k means within Monte Carlo error, rank intervals within 1, for a fresh fit with another seed."""
    import arviz as az
    import pandas as pd

    from simplex_core.summaries import posterior_tables as summaries
    from simplex_core.inference.fitting import fit_model

    pre, counts = _shipped()
    assert pre is not None
    settings = pre.settings.replace(seed=pre.settings.seed + 1, chains=2, draws=600, tune=600)
    fresh = fit_model(counts, settings)
    a = pd.DataFrame(_shipped_meta()["candidates"]).set_index("candidate")
    b = summaries.candidate_summary(fresh.idata).set_index("candidate").loc[a.index]
    mcse_a = az.mcse(pre.idata, var_names=["expected_score"])["expected_score"].to_series()
    mcse_b = az.mcse(fresh.idata, var_names=["expected_score"])["expected_score"].to_series()
    tolerance = 4 * np.sqrt(mcse_a.loc[a.index] ** 2 + mcse_b.loc[a.index] ** 2) + 1e-3
    gap = (a["expected_score_mean"] - b["expected_score_mean"]).abs()
    assert (gap <= tolerance).all(), pd.DataFrame({"gap": gap, "tolerance": tolerance})
    assert ((a["rank_lo"] - b["rank_lo"]).abs() <= 1).all()
    assert ((a["rank_hi"] - b["rank_hi"]).abs() <= 1).all()


def test_the_export_files_of_the_default_fit_open_again(tmp_path):
    """What the Export page's buttons produce: NetCDF that ArviZ reads back, JSON-able result.json."""
    import arviz as az

    from app_support.downloads import netcdf_bytes
    from simplex_core.summaries import posterior_tables as summaries

    pre, counts = _shipped()
    path = tmp_path / "posterior.nc"
    path.write_bytes(netcdf_bytes(pre.idata))
    back = az.from_netcdf(str(path))
    np.testing.assert_array_equal(back.posterior["expected_score"].values, pre.idata.posterior["expected_score"].values)
    doc = json.loads(json.dumps(summaries.result_json(pre, command_line="test", counts=counts)))
    assert [c["candidate"] for c in doc["candidates"]] == list(summaries.candidate_summary(pre)["candidate"])
    assert doc["diagnostics"]["converged"] is True


def test_the_warm_start_does_the_first_visitors_work_before_they_come(monkeypatch):
    """``serve.py`` warms a new server (app_support.warmup): afterwards a first visitor's run of the
    Rankings page shows the precomputed Bayesian ranking without loading the dataset or running the
    baselines again (both are served from the process's shared caches)."""
    import streamlit as st

    from app_support import warmup
    from simplex_core.methods import baselines
    from simplex_core.data import datasets

    st.cache_data.clear()
    st.cache_resource.clear()
    calls = {"load": 0, "baselines": 0}
    real_load, real_run = datasets.load_dataset, baselines.run_methods

    def counting_load(*a, **k):
        calls["load"] += 1
        return real_load(*a, **k)

    def counting_run(*a, **k):
        calls["baselines"] += 1
        return real_run(*a, **k)

    monkeypatch.setattr(datasets, "load_dataset", counting_load)
    monkeypatch.setattr(baselines, "run_methods", counting_run)
    steps = warmup.warm_default_view()
    assert set(steps) == {"imports", "dataset", "posterior", "baselines"}
    assert calls["load"] == 1 and calls["baselines"] >= 1
    after_warm = dict(calls)

    at = new_app()
    assert_clean(at)
    assert calls == after_warm  # the visitor did neither again
    assert any(str(t.get("name", "")).startswith("bayesian")
               for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"])


def test_a_warm_server_keeps_its_long_lived_objects_out_of_the_collector_and_collects_less_often():
    import gc

    from app_support import warmup

    before = gc.get_threshold()
    try:
        warmup.freeze_long_lived()
        assert gc.get_freeze_count() > 10_000  # the imports and warm caches, out of the collector's walks
        assert gc.get_threshold() == (warmup.YOUNG_GENERATION, *before[1:])
        assert warmup.YOUNG_GENERATION > 10 * before[0]
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def _figure_titles(at) -> str:
    titles = []
    for chart in at.get("plotly_chart"):
        title = json.loads(chart.proto.spec).get("layout", {}).get("title", {})
        titles.append(title.get("text", "") if isinstance(title, dict) else str(title))
    return "\n".join(titles)


def test_a_slider_move_shows_a_reweighted_answer_at_once_with_its_khat_and_ess():
    """The reweighted answer is on the page in the same run as the move, labelled
    approximate with k̂ and ESS, with its leaderboard; the real fit is queued behind it. ω = 0 → 2.5:
    the default fit (ω = 0, no random effects) cannot stand in, a fit at ω > 0 (the one shipped with
    the app, or one of the cache) is reweighted; β_max 5 → 7 at ω = 0 reweights the default fit."""
    import shutil

    from app_support.sidebar import sampler_sizes
    from simplex_core.data import datasets
    from simplex_core.data.views import count_tensor
    from simplex_core.inference.fit_cache import FitCache
    from simplex_core.model.settings import FitSettings

    counts = count_tensor(datasets.load_dataset(datasets.DEFAULT_DATASET))
    for omega, beta_max in ((2.5, 5.0), (0.0, 7.0)):  # the targets must not be fitted already
        shutil.rmtree(FitCache().path(counts, FitSettings(omega=omega, beta_max=beta_max, **sampler_sizes())),
                      ignore_errors=True)
    approximate = re.compile(r"Approximate: reweighted from the fit at ω = ([\d.]+), β_max = [\d.]+ "
                             r"\(k̂ = -?\d\.\d\d, ESS \d+ of \d+ draws")
    at = new_app({"omega": "2.5"})  # a value of the fine-grid sliders, between the background grid's
    assert_clean(at)
    text = texts(at)
    assert "Bayesian ranking, approximate" in text and "Fitting ω = 2.5, β_max = 5" in text
    found = approximate.search(text)
    assert found and float(found.group(1)) > 0, text
    assert "leaderboard (ω = 2.5, β_max = 5, shared-truth likelihood, approximate)" in _figure_titles(at)
    at.select_slider(key="w_omega").set_value(0.0).run()
    at.select_slider(key="w_beta_max").set_value(7.0).run()
    assert_clean(at)
    found = approximate.search(texts(at))
    assert found and float(found.group(1)) == 0.0
    assert "Bayesian ranking, approximate" in texts(at)


def test_a_grid_fit_in_the_cache_is_a_source_read_from_its_file_alone(monkeypatch):
    """A slider move reweights a grid fit found in the disk cache by reading its draws from the
    entry's file (prior_draws_from_file), not the whole fit back: ω = 2.25 is answered from the fit
    at ω = 2 without cached_result reading that fit."""
    import shutil

    from app_support.sidebar import sampler_sizes
    from simplex_core.data import datasets
    from simplex_core.data.views import count_tensor
    from simplex_core.inference.fit_cache import FitCache
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.settings import FitSettings

    from app_support import approximate, fits

    counts = count_tensor(datasets.load_dataset(datasets.DEFAULT_DATASET))
    source = FitSettings(omega=2.0, beta_max=5.0, **sampler_sizes())
    target = source.replace(omega=2.25)
    shutil.rmtree(FitCache().path(counts, target), ignore_errors=True)
    if not FitCache().contains(counts, source):
        FitCache().put(fit_model(counts, source))
    for memo in (fits._memo, approximate._draws_memo, approximate._answers):
        memo.clear()
    whole_reads = []
    real_cached_result = fits.cached_result

    def spy(c, s, key=None):
        whole_reads.append((s.omega, s.beta_max))
        return real_cached_result(c, s, key)

    monkeypatch.setattr(fits, "cached_result", spy)
    at = new_app({"omega": "2.25"})
    assert_clean(at)
    text = texts(at)
    assert "Bayesian ranking, approximate" in text, text
    assert re.search(r"Approximate: reweighted from the fit at ω = 2, β_max = 5 \(k̂ = ", text), text
    assert (2.0, 5.0) not in whole_reads, whole_reads


def test_a_fit_another_session_asked_for_is_a_source_once_it_has_landed():
    """Any fit of these data that lands, not only the grid's or the one on the page, answers the
    next move: a session asks for ω = 5.5 (off the grid); once that fit is in the cache, another
    session's move to ω = 5.75 is reweighted from it, not from the grid's or the shipped fits."""
    import shutil

    from app_support.sidebar import sampler_sizes
    from simplex_core.data import datasets
    from simplex_core.data.views import count_tensor
    from simplex_core.inference.fit_cache import FitCache
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.definition import FitSettings

    from app_support import approximate, fits

    counts = count_tensor(datasets.load_dataset(datasets.DEFAULT_DATASET))
    source = FitSettings(omega=5.5, beta_max=5.0, **sampler_sizes())
    target = source.replace(omega=5.75)
    for s in (source, target):
        shutil.rmtree(FitCache().path(counts, s), ignore_errors=True)
    for memo in (fits._memo, approximate._draws_memo, approximate._answers):
        memo.clear()
    approximate._asked.clear()
    asking = new_app({"omega": "5.5"})  # queues the fit of ω = 5.5 and shows an approximate answer
    assert_clean(asking)
    assert "Fitting ω = 5.5, β_max = 5" in texts(asking)
    manager = fits.fit_manager()
    for job in manager.jobs():  # the worker's own fit is not waited for: the test stores it itself
        if not job.is_final:
            manager.cancel(job.job_id)
    FitCache().put(fit_model(counts, source))  # the fit lands (as the worker would store it)
    other = new_app({"omega": "5.75"})  # another session, which never asked for ω = 5.5
    assert_clean(other)
    assert re.search(r"Approximate: reweighted from the fit at ω = 5.5, β_max = 5 \(k̂ = ", texts(other)), texts(other)


def test_a_move_with_nothing_to_reweight_says_why_in_one_line():
    """A setting no fit done can stand in for (another judge prior than every fit of these data)
    says in one line why there is no approximate answer, and waits for the real fit."""
    from app_support import approximate
    from simplex_core.model.definition import FitSettings

    at = new_app({"prior": "diagonal", "omega": "2"})
    assert_clean(at)
    text = texts(at)
    assert "Bayesian ranking, approximate" not in text
    assert approximate.no_approximation_reason(FitSettings(omega=2.0, prior="diagonal")) in text, text


def test_the_precomputed_fit_is_used_for_its_likelihood_only_and_the_omega1_fit_only_as_a_source():
    from app_support.fits import shipped_fits

    default, counts = _shipped()  # (a seed no fit in the test cache has: only the shipped fit answers)
    assert default.timing["read_only"] and default.settings.to_dict() == _shipped_meta()["settings"]
    unused = default.settings.replace(seed=7, draws=300)
    assert _shipped(unused)[0].idata is default.idata  # read once, the same posterior
    assert _shipped(unused.replace(likelihood="per-judge"))[0] is None
    assert _shipped(unused.replace(omega=1.0))[0] is None  # the ω = 1 fit is never shown as a fit
    sources = {(p.settings.omega, p.settings.beta_max) for p in shipped_fits(counts)}
    assert sources == {(0.0, 5.0), (1.0, 5.0)}


def test_download_names_carry_the_setting():
    # two settings of one dataset downloaded one after the other must not share a file name
    from app_support.fits import settings_slug
    from simplex_core.model.settings import FitSettings

    slugs = [settings_slug(FitSettings(omega=o, beta_max=b)) for o, b in ((0, 5), (1, 5), (0.75, 5), (1, 7))]
    slugs += [settings_slug(FitSettings(integrated=True)), settings_slug(FitSettings(likelihood="per-judge")),
              settings_slug(FitSettings(omega=1, delta=(1.0, 2.0)))]
    assert slugs[:4] == ["omega0-beta5", "omega1-beta5", "omega0.75-beta5", "omega1-beta7"]
    assert len(set(slugs)) == len(slugs) and all(re.fullmatch(r"[\w.\-]+", s) for s in slugs), slugs


def test_rows_download_writes_whole_levels_as_integers():
    from app_support.data_access import rows_table
    from simplex_core.data.table import load_table

    table = load_table(b"item,candidate,judge,score,true_score\nq1,a,j,1,0.5\nq1,b,j,0,1\nq2,a,j,1,1\nq2,b,j,0,0\n", name="t.csv")
    text = rows_table(table).to_csv(index=False)
    assert "q1,a,j,1,0.5" in text and "q1,b,j,0,1.0" in text and ".0," not in text.split("\n")[1]
    whole = load_table(b"item,candidate,judge,score,true_score\nq1,a,j,1,1\nq1,b,j,0,0\n", name="t.csv")
    assert rows_table(whole).to_csv(index=False).splitlines()[1:] == ["q1,a,j,1,1", "q1,b,j,0,0"]


# -- a file with gold labels ----------------------------------------------------------------------

def _labelled_csv(gold=lambda item, cand: item < 8) -> bytes:
    """3 candidates x 40 items x 3 judges on a 1-3 scale, every answer with its truth; by default the
    answers of the first 8 items gold (24 labels)."""
    rng = np.random.default_rng(3)
    rows = ["item,candidate,judge,score,true_score,gold"]
    for item in range(40):
        for cand, mean in (("a", 1.4), ("b", 2.1), ("c", 2.7)):
            truth = int(np.floor(mean)) + int(rng.random() < mean - np.floor(mean))
            for judge in ("j1", "j2", "j3"):
                score = int(np.clip(truth + rng.choice([-1, 0, 0, 1]), 1, 3))
                rows.append(f"q{item},{cand},{judge},{score},{truth},{'true' if gold(item, cand) else ''}")
    return "\n".join(rows).encode()


def test_every_page_with_a_fit_shows_the_label_free_one_and_says_so():
    """A file with labels on 5 square levels and two judges: the notes of the fit shown (too few
    judges) are those of a label-free fit, on every page, and none proposes the
    labels the file has (the fits are not awaited: the notes are said while they run)."""
    rng = np.random.default_rng(5)
    rows = ["item,candidate,judge,score,true_score,gold"]
    for item in range(30):
        for cand, mean in (("a", 2.0), ("b", 3.0), ("c", 4.0)):
            truth = int(np.clip(round(mean + rng.normal(0, 0.8)), 1, 5))
            rows += [f"q{item},{cand},{judge},{int(np.clip(truth + rng.choice([-1, 0, 1]), 1, 5))},{truth},"
                     f"{'true' if item < 5 else ''}" for judge in ("j1", "j2")]
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("five.csv", "\n".join(rows).encode(), "text/csv")).run()
    assert_clean(at)
    told = "This fit is label-free: the file's 15 gold labels are left out of it"
    for page, notes in (("rankings", 1), ("sensitivity", 1), ("simplex", 1)):  # too few judges (the default prior has no lean)
        at.switch_page(f"pages/{page}_page.py").run()
        assert_clean(at)
        caption = " ".join(plain(c.value) for c in at.caption)
        assert "15 gold answers (left out of the Bayesian fit, label-free on every page" in caption, page
        assert "true level observed" not in caption, page
        boxes = [plain(i.value) for i in at.info]
        assert sum(told in b for b in boxes) == notes, (page, boxes)
        assert not any("a few labelled answers" in b.lower() for b in boxes), (page, boxes)


def test_a_file_with_gold_labels_opens_the_rankings_on_the_labelled_ranking():
    import time

    at = new_app()
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value(("labelled.csv", _labelled_csv(), "text/csv")).run()
    at.switch_page("pages/rankings_page.py").run()
    assert at.radio(key="w_rank_labels").value == "With the file's labels"
    deadline = time.time() + 300
    while "Ranking with the file's labels" not in texts(at) and time.time() < deadline:
        assert "starts from the label-free fit at this setting" in texts(at)  # said while the fit runs
        time.sleep(1.0)
        at.run()
    assert_clean(at)
    shown = texts(at)
    assert "Labels used: 24 labelled answers (20% of 120, on 8 items; at least 8 per candidate)." in shown
    assert "**Label-free Bayesian ranking**" in shown
    moves = next(d.value for d in at.dataframe if "what the labels changed" in d.value.columns)
    assert sorted(moves["candidate"]) == ["a", "b", "c"]
    assert all(re.fullmatch(r"rank [\d.]+ → [\d.]+|unchanged \(rank [\d.]+\)", m) for m in moves["what the labels changed"])
    assert any(e.proto.label == "Comparison CSV" for e in at.get("download_button"))
    # the labelled ranking is a row of the rank figure, hollow (it uses labels), and of the evaluation
    evaluation = next(d.value for d in at.dataframe if "interval_score" in d.value.columns)
    assert "bayesian_ppi (uses labels)" in list(evaluation["method"])
    at.radio(key="w_rank_labels").set_value("Label-free").run()
    assert_clean(at)
    shown = texts(at)
    assert "Ranking with the file's labels" not in shown
    assert "Label-free: the file's 24 gold labels are left out of every ranking on this page" in shown
    evaluation = next(d.value for d in at.dataframe if "interval_score" in d.value.columns)
    assert "bayesian_ppi (uses labels)" not in list(evaluation["method"])
    # the Export page's evaluation CSV has the Rankings table's rows, the ranking with labels first
    at.switch_page("pages/export_page.py").run()
    assert_clean(at)
    assert "Rows of the evaluation CSV: bayesian_ppi, bayesian, " in texts(at)


def test_too_few_labels_for_a_candidate_say_so_and_the_label_free_ranking_stays():
    import time

    at = new_app()
    at.switch_page("pages/data_page.py").run()
    csv = _labelled_csv(gold=lambda item, cand: item < 8 if cand != "b" else item == 0)  # b: one label
    at.file_uploader(key="w_uploader").set_value(("few.csv", csv, "text/csv")).run()
    at.switch_page("pages/rankings_page.py").run()
    deadline = time.time() + 300
    while not any("No labelled ranking" in w.value for w in at.warning) and time.time() < deadline:
        time.sleep(1.0)
        at.run()
    assert_clean(at)
    warning = next(plain(w.value) for w in at.warning if "No labelled ranking" in w.value)
    assert "at least 2 labelled answers" in warning and "b (1) has fewer" in warning
    assert "**Label-free Bayesian ranking**" in texts(at)


# -- the ordinal model, a background fit ------------------------------------------------------------

def _forget_ordinal_fit(dataset: str) -> None:
    """Remove the ordinal fit of a built-in dataset stored by an earlier run of the suite."""
    from app_support.ordinal_fit import ORDINAL_JOB
    from simplex_core.data.datasets import load_dataset
    from simplex_core.data.views import item_view
    from simplex_core.methods.ordinal import OrdinalSettings, ordinal_data

    table = load_dataset(dataset)
    data = ordinal_data(item_view(table), table.scale, frozenset(table.self_family_pairs))
    ORDINAL_JOB.store._path(data, OrdinalSettings()).unlink(missing_ok=True)


def test_the_ordinal_row_is_fitted_in_the_background_and_offered_on_the_export_page():
    import time

    _forget_ordinal_fit("topical-chat")
    at = new_app({"data": "topical-chat"})
    at.switch_page("pages/export_page.py").run()
    assert_clean(at)
    assert "Ordinal model CSV" not in [e.proto.label for e in at.get("download_button")]
    at.switch_page("pages/rankings_page.py").run()
    at.toggle(key="w_rank_ordinal").set_value(True).run()
    assert_clean(at)
    deadline = time.time() + 300
    evaluation = lambda: next(d.value for d in at.dataframe if "interval_score" in d.value.columns)  # noqa: E731
    # the page is drawn at once, with the fit's progress and a Cancel button, not blocked by the fit
    assert "Fitting the ordinal many-facet model" in texts(at)
    assert any(b.label == "Cancel the ordinal fit" for b in at.button)
    while "ordinal" not in list(evaluation()["method"]) and time.time() < deadline:
        time.sleep(1.0)
        at.run()
    assert_clean(at)
    assert "ordinal" in list(evaluation()["method"])
    at.switch_page("pages/export_page.py").run()
    assert_clean(at)
    assert "Ordinal model CSV" in [e.proto.label for e in at.get("download_button")]
    rows = next(plain(c.value) for c in at.caption if c.value.startswith("Rows of the evaluation CSV"))
    methods = rows.removeprefix("Rows of the evaluation CSV: ").removesuffix(".").split(";")[0].split(", ")
    assert methods[-1] == "ordinal" and "simple_average" in methods


def test_the_ordinal_fit_can_be_cancelled_and_fitted_again():
    _forget_ordinal_fit("hanna")
    at = new_app({"data": "hanna"})
    at.switch_page("pages/rankings_page.py").run()
    at.toggle(key="w_rank_ordinal").set_value(True).run()
    next(b for b in at.button if b.label == "Cancel the ordinal fit").click().run()
    assert not at.exception
    assert any("The fit of the ordinal many-facet model was cancelled" in w.value for w in at.warning)
    at.run()  # not restarted behind the user's back
    assert any("was cancelled" in w.value for w in at.warning)
    next(b for b in at.button if b.label == "Fit the ordinal model again").click().run()
    assert "Fitting the ordinal many-facet model" in texts(at)
