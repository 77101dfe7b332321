"""The posterior slices the figures draw (simplex_core/summaries/posterior_views.py), read from an InferenceData
built by hand so every number can be checked against the draws it came from."""

from __future__ import annotations

import arviz as az
import numpy as np
import pandas as pd
import pytest

from simplex_core.model.ranks import rank_interval
from simplex_core.summaries.posterior_views import bayesian_method_result, judge_simplex_data, ppc_figure_table, rank_draws, simplex_parts

CANDS, JUDGES, LEVELS = ["a", "b", "c"], ["j1", "j2"], ["low", "mid", "high"]


@pytest.fixture(scope="module")
def idata():
    rng = np.random.default_rng(3)
    C, D, K, J, M = 2, 50, len(CANDS), len(JUDGES), len(LEVELS)
    pi = rng.dirichlet([1, 1, 1], size=(C, D, K))
    theta = rng.dirichlet([4, 2, 1], size=(C, D, J, M))
    expected = pi @ np.arange(1.0, M + 1)
    rank = 1 + (expected[..., None, :] > expected[..., :, None]).sum(axis=-1)
    return az.from_dict(
        posterior={"pi": pi, "theta": theta, "expected_score": expected, "rank": rank},
        coords={"candidate": CANDS, "judge": JUDGES, "true_level": [0, 1, 2], "level": LEVELS},
        dims={"pi": ["candidate", "true_level"], "theta": ["judge", "true_level", "level"],
              "expected_score": ["candidate"], "rank": ["candidate"]})


def _flat(idata, name):
    a = idata.posterior[name].values
    return a.reshape((-1,) + a.shape[2:])


def test_the_fit_as_a_method_ranks_the_posterior_means(idata):
    res = bayesian_method_result(idata, max_draws=30)
    mean = _flat(idata, "expected_score").mean(axis=0)
    assert list(res.scores.index) == CANDS and np.allclose(res.scores, mean)
    assert list(res.ranks) == list(pd.Series(-mean).rank(method="average"))  # 1 = largest E_k
    lo, hi = rank_interval(_flat(idata, "rank").astype(float))
    assert np.array_equal(res.rank_lo, lo) and np.array_equal(res.rank_hi, hi)
    assert res.rank_draws.groupby("candidate").size().tolist() == [30, 30, 30]  # thinned
    assert not res.uses_labels and res.method == "bayesian"


def test_the_evaluation_keeps_every_draw(idata):
    res = bayesian_method_result(idata, max_draws=None, method="bayesian_gold_10", uses_labels=True)
    flat = _flat(idata, "rank")
    b = res.rank_draws[res.rank_draws["candidate"] == "b"]
    assert np.array_equal(b["rank"].to_numpy(), flat[:, 1]) and b["replicate"].tolist() == list(range(len(flat)))
    assert res.uses_labels and res.method == "bayesian_gold_10"
    thinned = bayesian_method_result(idata, max_draws=30)  # thinning changes the draws, never the interval
    assert res.rank_lo.equals(thinned.rank_lo) and res.rank_hi.equals(thinned.rank_hi)


def test_ppc_figure_table_turns_counts_into_shares():
    ppc = pd.DataFrame({"judge": ["j1", "j1"], "candidate": ["a", "b"], "level": [1, 1], "n": [10, 0],
                        "observed_share": [0.3, np.nan], "fitted_share": [0.25, np.nan],
                        "predicted_lo": [1, 0], "predicted_hi": [5, 0], "outside": [False, False]})
    t = ppc_figure_table(ppc)
    assert list(t.columns) == ["judge", "candidate", "level", "label", "observed", "fitted_mean", "fitted_lo",
                               "fitted_hi", "misfit"]
    assert t.loc[0, ["fitted_lo", "fitted_hi"]].tolist() == [0.1, 0.5]
    assert t.loc[1, ["fitted_lo", "fitted_hi"]].isna().all()  # no judgments: no share, not a division by zero


def test_rank_draws_are_evenly_spaced_real_draws(idata):
    long = rank_draws(idata, max_draws=5)
    flat = _flat(idata, "rank")
    idx = np.linspace(0, len(flat) - 1, 5).round().astype(int)
    a = long[long["candidate"] == "a"].sort_values("replicate")["rank"].to_numpy()
    assert np.array_equal(a, flat[idx, 0])


def test_simplex_parts_are_the_judges_draws_and_the_candidates_positions(idata):
    parts = simplex_parts(idata, max_draws=10, judges=["j2"])
    assert list(parts) == ["j2"]
    p = parts["j2"]
    theta, pi = _flat(idata, "theta"), _flat(idata, "pi")
    idx = np.linspace(0, len(theta) - 1, 10).round().astype(int)
    assert np.allclose(p["theta_draws"], theta[idx, 1]) and np.allclose(p["theta_mean"], theta[:, 1].mean(axis=0))
    # γ_jk = Σ_m π_k[m] Θ_j[m, ·] at the same draws (no random effects in this posterior)
    assert np.allclose(p["candidate_posterior"], np.einsum("skt,stm->skm", pi[idx], theta[idx, 1]))
    assert p["candidates"] == CANDS
    with pytest.raises(ValueError, match="'nobody' not in this fit; its judges: j1, j2"):
        simplex_parts(idata, judges=["nobody"])


def test_judge_simplex_data_joins_observed_shares_in_the_fits_order(idata):
    rows = [{"judge": j, "candidate": k, "level": m, "label": LEVELS[m], "count": (m + 1) * (1 + (k == "b"))}
            for j in JUDGES for k in ["c", "b"] for m in range(3)]  # "a" never scored: left out
    data = judge_simplex_data(idata, pd.DataFrame(rows), max_draws=4)
    d = data["j1"]
    assert list(d.observed.index) == ["b", "c"] and list(d.observed.columns) == LEVELS
    assert np.allclose(d.observed.loc["c"], [1 / 6, 2 / 6, 3 / 6]) and d.counts.loc["b"].tolist() == [2, 4, 6]
    full = simplex_parts(idata, max_draws=4)["j1"]["candidate_posterior"]
    assert np.allclose(d.candidate_posterior, full[:, [1, 2], :])  # rows follow the observed candidates
