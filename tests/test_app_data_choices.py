"""The Data page's declarations of a file: the observed levels prefilled from the scores and
editable (the fix a scale message names), and the candidates and judges left out (multiselects kept
in the link, said by every page). AppTest, no browser, no fit."""

from __future__ import annotations

from tests.test_app import (  # noqa: F401 — fixtures
    _app_env,
    _cancel_leftover_fits,
    assert_clean,
    new_app,
    plain,
    texts,
)

RUBRIC = "\n".join(["item,candidate,judge,score,true_score"] + [
    f"q{i},{c},{j},{s},{t}" for i, (sa, sb, ta, tb) in enumerate([(2, 5, 1.66667, 4.5), (3, 4, 1, 4), (2, 4, 2, 5)])
    for j in ("j1", "j2") for c, s, t in (("a", sa, ta), ("b", sb, tb))])


def _upload(at, name, text):
    at.switch_page("pages/data_page.py").run()
    at.file_uploader(key="w_uploader").set_value((name, text.encode(), "text/csv")).run()
    return at


def test_a_truth_past_the_scores_names_the_box_and_value_and_that_value_loads_the_file():
    at = _upload(new_app(), "rubric.csv", RUBRIC)
    errors = [plain(e.value) for e in at.error]
    assert any("Set 'Observed levels' to 1,2,3,4,5" in e for e in errors), errors
    at.text_input(key="w_levels").set_value("1,2,3,4,5").run()
    assert_clean(at)
    assert "5 levels: 1, 2, 3, 4, 5" in texts(at)


def test_the_observed_levels_box_is_filled_from_the_scores_and_changes_nothing():
    rows = RUBRIC.replace(",1.66667", ",2").replace(",1\n", ",2\n")  # truth within 2..5 now
    rows = "\n".join(line.rsplit(",", 1)[0] + ",2" if line.endswith(",1") else line for line in rows.splitlines())
    at = _upload(new_app(), "ok.csv", rows)
    assert_clean(at)
    assert at.text_input(key="w_levels").value == "2,3,4,5"
    caption = texts(at)
    at.run()  # the declared levels are the ones read: the same table
    assert_clean(at) and texts(at) == caption
    assert not any("Emptied for this new file" in c.value for c in at.caption)


def test_leaving_out_a_candidate_and_a_judge_is_kept_in_the_link_and_said_on_the_pages():
    at = new_app()
    at.switch_page("pages/data_page.py").run()
    table_candidates = at.multiselect(key="w_drop_candidates").options
    judges = at.multiselect(key="w_drop_judges").options
    assert len(table_candidates) > 2 and len(judges) > 1
    cand, judge = table_candidates[0], judges[-1]
    at.multiselect(key="w_drop_candidates").set_value([cand]).run()
    at.multiselect(key="w_drop_judges").set_value([judge]).run()
    assert_clean(at)
    assert at.query_params["drop_candidates"] == cand and at.query_params["drop_judges"] == judge
    shown = texts(at)
    assert f"Left out as chosen: candidate {cand}" in shown and f"judge {judge}" in shown
    at.switch_page("pages/export_page.py").run()
    assert f"without candidate {cand}; judge {judge})" in texts(at)  # the caption every page draws
    assert any(f"--drop-candidates {cand}" in c.value or f"--drop-candidates '{cand}'" in c.value for c in at.code)

    # a link with the choice (and a misspelt judge) opens the same view and says what it could not use
    linked = new_app({"drop_candidates": cand, "drop_judges": f"{judge},no-such-judge"})
    linked.switch_page("pages/data_page.py").run()
    assert_clean(linked)
    assert linked.multiselect(key="w_drop_candidates").value == [cand]
    assert linked.multiselect(key="w_drop_judges").value == [judge]
    assert "The link's drop_judges names 'no-such-judge', not a judge of this table: not left out." in texts(linked)


def test_a_choice_that_leaves_one_candidate_is_refused_and_can_be_undone():
    rows = "\n".join(["item,candidate,judge,score"] + [f"q{i},{c},j,{1 + (i + k) % 3}" for i in range(6)
                                                        for k, c in enumerate(("a", "b"))])
    at = _upload(new_app(), "two.csv", rows)
    at.multiselect(key="w_drop_candidates").set_value(["a"]).run()
    assert any("the choice keeps 1 candidate ('b')" in plain(e.value) for e in at.error)
    at.multiselect(key="w_drop_candidates").set_value([]).run()
    assert_clean(at)


OTHER_TOOL = "\n".join(["question_id,model,grader,rating,human"] + [
    f"q{i},{m},{g},{1 + (i + k + len(g)) % 5},{1 + (i + k) % 5}" for i in range(4) for k, m in enumerate(("a", "b"))
    for g in ("g1", "g22")])


def test_an_upload_with_other_column_names_is_read_through_the_guessed_editable_mapping_kept_in_the_link():
    at = _upload(new_app(), "other-tool.csv", OTHER_TOOL)
    assert_clean(at)
    assert at.text_input(key="w_columns").value == "item=question_id,candidate=model,judge=grader,score=rating"
    shown = texts(at)
    assert "Columns read as: item ← 'question_id', candidate ← 'model', judge ← 'grader', score ← 'rating'." in shown
    assert "Ground truth" in [m.label for m in at.metric] and at.metric[4].value == "no"
    at.text_input(key="w_columns").set_value(at.text_input(key="w_columns").value + ", true_score=human").run()
    assert_clean(at)
    assert at.metric[4].value == "yes"
    assert at.query_params["columns"] == "item=question_id,candidate=model,judge=grader,score=rating, true_score=human"

    # a link's mapping reads the same file the same way (the file itself cannot travel in a link)
    linked = new_app({"data": "__upload__", "columns": "item=question_id,candidate=model,judge=grader,score=rating,true_score=human"})
    linked = _upload(linked, "other-tool.csv", OTHER_TOOL)
    assert_clean(linked)
    assert linked.metric[4].value == "yes"

    # a column that is not there is named with its close match, and the box's label
    at.text_input(key="w_columns").set_value("item=question,candidate=model,judge=grader,score=rating").run()
    errors = [plain(e.value) for e in at.error]
    assert any("close match: 'question_id'" in e and "'Columns' box" in e for e in errors), errors
