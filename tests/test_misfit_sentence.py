"""The one sentence the Rankings page shows beside the ranking when the posterior predictive check
says the model misfits: said only past what chance explains, naming the judge and candidate."""

from __future__ import annotations

import pandas as pd

from simplex_core.summaries.posterior_tables import misfit_sentence


def ppc(bad: set[tuple[str, str]], judges: int = 4, candidates: int = 10, excluded: set = frozenset()) -> pd.DataFrame:
    rows = []
    for j in range(judges):
        for k in range(candidates):
            pair = (f"J{j}", f"c{k}")
            rows.append({"judge": pair[0], "candidate": pair[1], "n": 50, "included": pair not in excluded,
                         "agrees": pair not in bad})
    return pd.DataFrame(rows)


def test_a_misfit_or_two_among_forty_pairs_is_chance():
    # Binomial(40, 0.05) reaches 4 with probability about 0.95: up to that many is what a right model gives
    assert misfit_sentence(ppc(set())) is None
    assert misfit_sentence(ppc({("J0", "c1"), ("J2", "c5")})) is None


def test_many_misfits_name_the_judge_and_the_candidate_and_the_remedy():
    bad = {("J1", f"c{k}") for k in range(7)} | {("J2", "c3"), ("J3", "c3")}
    text = misfit_sentence(ppc(bad))
    assert text is not None
    assert text.startswith("The model misfits 9 of 40 judge–candidate pairs")
    assert "judge J1, on 7 of its 10 candidates" in text and "candidate c3, by 3 judges" in text
    assert "integrated mode" in text
    assert "leave that judge out" in misfit_sentence(ppc(bad), integrated=True)


def test_excluded_pairs_do_not_count():
    # self-family pairs did not inform the fit: their disagreement is self-preference, not misfit
    excluded = {("J1", f"c{k}") for k in range(7)}
    assert misfit_sentence(ppc(excluded, excluded=excluded)) is None
