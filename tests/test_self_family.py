"""Self-family judgments kept apart (the default data view): on data with a strong self-preference,
the own-family raters absorb it, so each candidate's E_k stays near its true accuracy, where pooling
those judgments with the judges' others inflates the family that three of five judges belong to."""

from __future__ import annotations

import numpy as np
import pandas as pd

from simplex_core.data.scale import Scale
from simplex_core.data.table import load_table
from simplex_core.data.views import count_tensor
from simplex_core.inference.fitting import fit_model
from simplex_core.model.settings import FitSettings

ACCURACY = {"A-1": 0.45, "A-2": 0.60, "B-1": 0.50, "B-2": 0.70, "C-1": 0.55, "C-2": 0.65}
JUDGES = {"A-judge-1": "A", "A-judge-2": "A", "A-judge-3": "A", "B-judge": "B", "D-judge": "D"}


def _self_preferring_table(seed: int = 11, n_items: int = 300):
    rng = np.random.default_rng(seed)
    rows = []
    for cand, acc in ACCURACY.items():
        truth = rng.uniform(size=n_items) < acc
        for judge, fam in JUDGES.items():
            seen = np.where(truth, rng.uniform(size=n_items) < 0.9, rng.uniform(size=n_items) < 0.1)
            if cand.startswith(fam):  # its own family: most wrong answers called right
                seen |= rng.uniform(size=n_items) < 0.7
            rows.append(pd.DataFrame({"item": np.arange(n_items), "candidate": cand, "judge": judge,
                                      "score": seen.astype(float)}))
    families = JUDGES | {c: c[0] for c in ACCURACY}
    return load_table(pd.concat(rows, ignore_index=True), scale=Scale((0.0, 1.0)), families=families)


def test_kept_apart_absorbs_a_self_preference_that_pooling_passes_on():
    table = _self_preferring_table()
    truth = np.array([ACCURACY[c] for c in table.candidates])
    errors = {}
    for view in (True, False):
        fit = fit_model(count_tensor(table, self_exclusion=view),
                        FitSettings(self_exclusion=view, chains=2, draws=400, tune=400, seed=3))
        assert fit.diagnostics.converged, fit.diagnostics.message
        errors[view] = np.asarray(fit.idata.posterior["expected_score"].mean(("chain", "draw"))) - truth
    assert np.abs(errors[True]).max() < 0.06, errors[True]
    # pooled, three of the five judges call family A's wrong answers right: its candidates' E_k inflated
    family_a = np.array([c.startswith("A") for c in table.candidates])
    assert errors[False][family_a].min() > 0.08, errors[False]


def test_the_per_judge_likelihood_leaves_self_family_judgments_out_and_mismatched_counts_are_refused():
    import pytest

    from simplex_core.model.settings import check_data_view

    # no shared truth to learn an own-family rater's vertices from: left out, as in the paper
    assert FitSettings(likelihood="per-judge").self_exclusion == "drop"
    assert FitSettings(likelihood="per-judge", self_exclusion=False).self_exclusion is False
    assert FitSettings().self_exclusion is True
    table = _self_preferring_table(n_items=20)
    with pytest.raises(ValueError, match="keep self-family judgments apart"):
        check_data_view(count_tensor(table), FitSettings(likelihood="per-judge"))
    check_data_view(count_tensor(table, self_exclusion="drop"), FitSettings(likelihood="per-judge"))
