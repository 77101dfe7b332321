"""Tests of simplex_core/summaries/posterior_tables.py, sensitivity.py and fit_cache.py.

Exact values come from small hand-made posteriors (draws written out below); the real shared fits
(tests/fixtures/fit_fixtures.py) check the properties the tables must have on any posterior.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import pytest

from simplex_core.inference import fit_cache
from simplex_core.inference import fit_identity
from simplex_core.summaries import posterior_tables as summaries
from simplex_core.data.views import Counts
from simplex_core.inference.fit_result import Diagnostics, FitResult
from simplex_core.model.settings import FitSettings
from simplex_core.data.scale import Scale
from simplex_core.summaries.evaluation import rank_correlation as spearman
from simplex_core.studies.sensitivity import sensitivity_sweep

THREE = Scale((1.0, 2.0, 3.0), ("low", "mid", "high"))
CANDS = ("c0", "c1", "c2")
JUDGES = ("j0", "j1")

# One chain, four draws. E_k per draw and the ranks they imply (written by hand).
E_DRAWS = np.array([[3.0, 2.0, 1.0], [3.0, 1.0, 2.0], [1.0, 3.0, 2.0], [3.0, 2.0, 1.0]])
RANK_DRAWS = np.array([[1, 2, 3], [1, 3, 2], [3, 1, 2], [1, 2, 3]])
THETA = np.array([[[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]],
                  [[0.6, 0.3, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]]])


def make_counts(N=None, included=None) -> Counts:
    N = np.full((2, 3, 3), 10, dtype=np.int64) if N is None else N
    included = np.ones((2, 3), bool) if included is None else included
    excluded = tuple((JUDGES[j], CANDS[k]) for j, k in zip(*np.nonzero(~included)))
    return Counts(N=N, included=included, judges=JUDGES, candidates=CANDS, scale=THREE,
                  excluded_pairs=excluded, families={"j0": "fam0", "c0": "fam0"}, data_hash="abc123")


def make_fit(e_draws=E_DRAWS, rank_draws=RANK_DRAWS, theta=THETA, counts=None, settings=None, extra=None) -> FitResult:
    """A FitResult around a hand-made posterior: π puts all mass on the level whose value is E."""
    counts = counts or make_counts()
    S, K = e_draws.shape
    pi = np.zeros((S, K, 3))
    for s in range(S):
        for k in range(K):
            pi[s, k, int(e_draws[s, k]) - 1] = 1.0
    posterior = {"expected_score": e_draws[None], "rank": rank_draws[None], "pi": pi[None],
                 "theta": np.broadcast_to(theta, (S,) + theta.shape)[None]}
    dims = {"expected_score": ["candidate"], "rank": ["candidate"], "pi": ["candidate", "true_level"],
            "theta": ["judge", "true_level", "level"], "counts": ["judge", "candidate", "level"],
            "included": ["judge", "candidate"], "R": ["judge"], "W": ["candidate"], "Z": ["candidate", "true_level"]}
    for name, value in (extra or {}).items():
        posterior[name] = np.broadcast_to(value, (S,) + np.shape(value))[None]
    idata = az.from_dict(
        posterior=posterior,
        constant_data={"counts": counts.N, "included": counts.included},
        coords={"candidate": list(CANDS), "judge": list(JUDGES), "true_level": list(THREE.true_labels),
                "level": list(THREE.labels)},
        dims=dims,
    )
    idata.posterior.attrs["scale"] = json.dumps(THREE.to_dict())
    diag = Diagnostics(1.001, 900.0, 800.0, 0, 1.002, True, "converged: fine.")
    return FitResult(idata=idata, diagnostics=diag, timing={"compile_s": 1.5, "sample_s": 2.5},
                     settings=settings or FitSettings(likelihood="per-judge", chains=1, draws=4), counts=counts)


# -- exact tables on a hand-made posterior ---------------------------------------------------------

def test_candidate_summary_hand_computed():
    table = summaries.candidate_summary(make_fit())
    assert list(table.columns[:8]) == list(summaries.CANDIDATE_COLUMNS)
    assert table["candidate"].tolist() == ["c0", "c1", "c2"]  # best first by posterior mean
    assert table["expected_score_mean"].tolist() == [2.5, 2.0, 1.5]
    # numpy's linear quantiles of the sorted draws, e.g. c0 [1, 3, 3, 3]: 1 + 0.075 * 2 at 2.5%
    np.testing.assert_allclose(table["expected_score_lo"], [1.15, 1.075, 1.0])
    np.testing.assert_allclose(table["expected_score_hi"], [3.0, 2.925, 2.0])
    # rank draws c0 [1,1,3,1], c1 [2,3,1,2], c2 [3,2,2,3]: quantiles are actual draws
    assert table["rank_median"].tolist() == [1, 2, 2]
    assert table["rank_lo"].tolist() == [1, 1, 2]
    assert table["rank_hi"].tolist() == [3, 3, 3]
    assert table["p_best"].tolist() == [0.75, 0.25, 0.0]
    assert table["point_rank"].tolist() == [1, 2, 3]
    unsorted = summaries.candidate_summary(make_fit(e_draws=E_DRAWS[:, ::-1], rank_draws=RANK_DRAWS[:, ::-1]), sort=False)
    assert unsorted["candidate"].tolist() == ["c0", "c1", "c2"] and unsorted["point_rank"].tolist() == [3, 2, 1]


def test_ranking_sentence_reads_the_summary_best_first():
    table = summaries.candidate_summary(make_fit())  # medians [1, 2, 2], intervals [1–3, 1–3, 2–3]
    assert summaries.ranking_sentence(table) == (
        "**c0** (rank 1, 95%: 1–3) · **c1** (rank 2, 95%: 1–3) · **c2** (rank 2, 95%: 2–3)")
    shuffled = table.iloc[[2, 0, 1]]
    assert summaries.ranking_sentence(shuffled, top=1) == "**c0** (rank 1, 95%: 1–3) · … and 2 more"


def test_rank_and_pairwise_probabilities_hand_computed():
    fit = make_fit()
    ranks = summaries.rank_probabilities(fit)
    assert list(ranks.columns) == [1, 2, 3] and list(ranks.index) == list(CANDS)
    np.testing.assert_allclose(ranks.to_numpy(), [[0.75, 0, 0.25], [0.25, 0.5, 0.25], [0, 0.5, 0.5]])
    pair = summaries.pairwise_probabilities(fit)
    expected = np.array([[np.nan, 0.75, 0.75], [0.25, np.nan, 0.75], [0.25, 0.25, np.nan]])
    np.testing.assert_allclose(pair.to_numpy(), expected)


def test_judge_matrices_carry_the_level_labels():
    mats = summaries.judge_matrices(make_fit())
    assert list(mats) == ["j0", "j1"]
    assert list(mats["j1"].index) == ["low", "mid", "high"] and list(mats["j1"].columns) == ["low", "mid", "high"]
    np.testing.assert_allclose(mats["j1"].to_numpy(), THETA[1])


def test_summaries_accept_the_inference_data_alone():
    fit = make_fit()
    pd.testing.assert_frame_equal(summaries.candidate_summary(fit.idata), summaries.candidate_summary(fit))
    counts = summaries.counts_of(fit.idata)
    assert counts.candidates == CANDS and counts.scale == THREE
    np.testing.assert_array_equal(counts.N, fit.counts.N)


def test_fitted_score_distributions_with_random_effects_by_hand():
    R, W = np.array([1.0, 0.0]), np.array([0.5, 0.5, 0.5])
    Z = np.tile([0.0, 0.0, 1.0], (3, 1))
    fit = make_fit(extra={"R": R, "W": W, "Z": Z})
    gamma = summaries.fitted_score_distributions(fit)  # [S, J, K, M]
    pi0 = np.array([0.0, 0.0, 1.0])  # draw 0: c0 has E = 3
    pi1 = np.array([0.0, 1.0, 0.0])  # draw 0: c1 has E = 2
    np.testing.assert_allclose(gamma[0, 0, 1], (0.5 * pi1 + 0.5 * Z[1]) @ THETA[0])  # R_0 W_1 = 0.5
    np.testing.assert_allclose(gamma[0, 1, 0], pi0 @ THETA[1])  # R_1 = 0: no perturbation
    np.testing.assert_allclose(gamma.sum(-1), 1.0)


def test_posterior_predictive_check_flags_the_pair_that_does_not_fit():
    """Every draw says candidate c2 is 'low' (E = 1 in draws 0 and 3, 2 in draws 1-2); judge j0's
    counts for c1 and c2 are made to match or contradict the fitted distribution."""
    e = np.ones((4, 3))  # every candidate at the lowest level in every draw: γ_jk = Θ_j[low]
    ranks = np.tile([1, 2, 3], (4, 1))
    N = np.zeros((2, 3, 3), dtype=np.int64)
    for j in range(2):
        for k in range(3):
            N[j, k] = np.round(200 * THETA[j, 0]).astype(int)  # exactly n γ
    N[0, 2] = [40, 10, 150]  # j0 calls c2 'high' far more often than Θ_j0[low] allows
    included = np.ones((2, 3), bool)
    included[1, 0] = False
    fit = make_fit(e_draws=e, rank_draws=ranks, counts=make_counts(N, included))
    ppc = summaries.posterior_predictive_check(fit, seed=1)
    assert len(ppc) == 2 * 3 * 3
    assert set(ppc.columns) >= {"judge", "candidate", "level", "observed", "fitted_share", "predicted_lo",
                                "predicted_hi", "outside", "p_value", "agrees", "verdict"}
    pair = ppc[(ppc.judge == "j0") & (ppc.candidate == "c2")]
    assert not pair["agrees"].any()
    verdict = pair["verdict"].iloc[0]
    assert verdict.startswith("disagrees") and "observed 75% 'high' vs fitted 5%" in verdict
    # no replicate of the 4 draws is as far off: p is below what they can tell (1/4), not "p = 0.000"
    assert pair["p_value"].iloc[0] == 0.0 and verdict.startswith("disagrees (p < 0.25)")
    assert pair.set_index("level").loc["high", "outside"]
    good = ppc[(ppc.judge == "j0") & (ppc.candidate == "c1")]
    assert good["agrees"].all() and not good["outside"].any() and good["verdict"].iloc[0].startswith("agrees")
    excluded = ppc[(ppc.judge == "j1") & (ppc.candidate == "c0")]
    assert excluded["verdict"].iloc[0].startswith("excluded from the fit (self-family); agrees")
    assert not excluded["included"].any()
    pd.testing.assert_frame_equal(ppc, summaries.posterior_predictive_check(fit.idata, fit.counts, seed=1))


def test_result_json_has_the_contract_keys_and_is_strict_json():
    included = np.ones((2, 3), bool)
    included[0, 0] = False
    fit = make_fit(counts=make_counts(included=included))
    doc = summaries.result_json(fit, command_line="python -m simplex_core fit x.csv --out r.json")
    assert set(doc) == {"candidates", "leaderboard", "pairwise", "judges", "excluded_pairs", "notes", "diagnostics",
                        "settings", "hyperparameters", "timing", "judge_panel", "rater_deviation"}
    assert doc["rater_deviation"] is None  # a hand-made posterior without δ
    json.dumps(doc, allow_nan=False)
    assert [r["judge"] for r in doc["judge_panel"]["judges"]] == list(doc["judges"])
    assert doc["hyperparameters"] == {}
    assert len(doc["notes"]) == 1 and "of any candidate" in doc["notes"][0]  # two judges
    assert doc["candidates"][0] == {"candidate": "c0", "expected_score_mean": 2.5,
                                    "expected_score_lo": pytest.approx(1.15), "expected_score_hi": 3.0,
                                    "rank_median": 1, "rank_lo": 1, "rank_hi": 3, "p_best": 0.75}
    assert doc["pairwise"]["candidates"] == ["c0", "c1", "c2"]
    # four draws settle no pair at 97.5%: one tier; P(top 3) is 1 with three candidates
    assert [(r["candidate"], r["tier"], r["p_top3"]) for r in doc["leaderboard"]] == [
        ("c0", 1, 1.0), ("c1", 1, 1.0), ("c2", 1, 1.0)]
    assert doc["leaderboard"][0]["p_ahead_of_next"] == 0.75 and doc["leaderboard"][-1]["p_ahead_of_next"] is None
    assert doc["pairwise"]["matrix"][0] == [None, 0.75, 0.75]
    assert doc["judges"]["j0"]["levels"] == ["low", "mid", "high"]
    assert doc["judges"]["j0"]["theta_mean"][2] == pytest.approx(THETA[0, 2].tolist())
    assert doc["excluded_pairs"] == [{"judge": "j0", "candidate": "c0"}]
    assert doc["diagnostics"]["converged"] is True and doc["diagnostics"]["message"] == "converged: fine."
    s = doc["settings"]
    assert s["data_hash"] == "abc123" and s["families"] == {"j0": "fam0", "c0": "fam0"}
    assert s["scale"]["labels"] == ["low", "mid", "high"] and s["seed"] == 0 and s["options"]["draws"] == 4
    assert s["command_line"].endswith("--out r.json") and {"python", "pymc", "numpy"} <= set(s["package_versions"])
    assert s["excluded_pairs"] == doc["excluded_pairs"]
    assert s["data"] == {"dataset": None, "source": None, "criterion": None, "collapsed": False}  # not given
    posterior = fit.idata.posterior.sizes
    assert doc["timing"] == {"compile_s": 1.5, "sample_s": 2.5, "sampler": None, "rounds": None,
                             "chains": posterior["chain"], "draws_per_chain": posterior["draw"]}


# -- properties on real (small) fits ---------------------------------------------------------------

def test_tables_of_a_real_fit_are_coherent(three_level_fit):
    table = summaries.candidate_summary(three_level_fit)
    assert table["p_best"].sum() == pytest.approx(1.0)
    assert (table["rank_lo"] <= table["rank_median"]).all() and (table["rank_median"] <= table["rank_hi"]).all()
    assert (table["expected_score_lo"] <= table["expected_score_mean"]).all()
    assert (table["expected_score_mean"] <= table["expected_score_hi"]).all()
    ranks = summaries.rank_probabilities(three_level_fit)
    np.testing.assert_allclose(ranks.sum(axis=1), 1.0)
    np.testing.assert_allclose(ranks.sum(axis=0), 1.0)  # every rank is taken by exactly one candidate per draw
    pair = summaries.pairwise_probabilities(three_level_fit).to_numpy()
    off = ~np.eye(len(pair), dtype=bool)
    np.testing.assert_allclose((pair + pair.T)[off], 1.0)
    for m in summaries.judge_matrices(three_level_fit).values():
        np.testing.assert_allclose(m.sum(axis=1), 1.0)


def test_ppc_of_the_binary_fit_reports_excluded_pairs(binary_fit):
    ppc = summaries.posterior_predictive_check(binary_fit)
    excluded = ppc[~ppc["included"]]
    assert set(zip(excluded.judge, excluded.candidate)) == set(binary_fit.counts.excluded_pairs)
    # kept apart (the default): the judge's own-family judgments are a rater of their own, which the PPC checks
    assert excluded["verdict"].str.startswith("self-family: kept apart, scored by the rater").all()
    apart = ppc[ppc["judge"].str.endswith(" · own family")]
    assert set(apart.candidate) == {k for _, k in binary_fit.counts.excluded_pairs}
    assert apart["included"].all() and (apart["n"] > 0).all()
    assert (ppc["predicted_lo"] <= ppc["predicted_hi"]).all()


# -- sensitivity -----------------------------------------------------------------------------------

def test_sensitivity_sweep_structure_and_spearman_with_a_stub_fitter():
    calls = []

    def fake_fit(counts, settings, progress_callback=None):
        calls.append((settings.omega, settings.beta_max))
        if progress_callback:
            progress_callback("sampling", 0.5)
        flip = settings.omega >= 4  # strong constancy violation reverses the ranking in this story
        e = E_DRAWS[:, ::-1] if flip else E_DRAWS
        return make_fit(e_draws=e, rank_draws=RANK_DRAWS[:, ::-1] if flip else RANK_DRAWS, settings=settings)

    progress = []
    result = sensitivity_sweep(make_counts(), omegas=(0, 2, 8), beta_maxes=(0, 5, 20), fit_fn=fake_fit,
                               progress_callback=lambda m, f: progress.append(f))
    assert sorted(calls) == sorted({(0.0, 5.0), (2.0, 5.0), (8.0, 5.0), (0.0, 0.0), (0.0, 20.0)})  # base once
    assert [(r.sweep, r.omega, r.beta_max) for r in result.rows] == [
        ("omega", 0, 5), ("omega", 2, 5), ("omega", 8, 5), ("beta_max", 0, 0), ("beta_max", 0, 5), ("beta_max", 0, 20)]
    assert [r.spearman_vs_base for r in result.rows] == [1.0, 1.0, -1.0, 1.0, 1.0, 1.0]
    doc = result.to_dict()
    json.dumps(doc, allow_nan=False)
    assert doc["base"]["omega"] == 0.0 and doc["settings"][2]["candidates"][0]["candidate"] == "c2"
    assert set(doc["settings"][0]) >= {"omega", "beta_max", "spearman_vs_base", "candidates", "diagnostics"}
    assert progress == sorted(progress) and progress[-1] == 1.0
    assert result.table()["spearman_vs_base"].tolist() == [1.0, 1.0, -1.0, 1.0, 1.0, 1.0]


def test_sensitivity_rejects_bad_grids_and_integrated_base():
    with pytest.raises(ValueError, match=r"Sweep values must be finite numbers ≥ 0; got \[-1.0\]"):
        sensitivity_sweep(make_counts(), omegas=(0, -1.0), fit_fn=lambda *a, **k: None)
    with pytest.raises(ValueError, match="use a base with integrated=False"):
        sensitivity_sweep(make_counts(), base=FitSettings(integrated=True), fit_fn=lambda *a, **k: None)
    assert spearman([1, 2, 3], [3, 2, 1]) == -1.0
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3]))


# -- on-disk fit cache -----------------------------------------------------------------------------

def test_fit_cache_round_trip(tmp_path):
    cache = fit_cache.FitCache(tmp_path)
    fit = make_fit()
    assert cache.get(fit.counts, fit.settings) is None
    path = cache.put(fit)
    assert (path / "posterior.nc").exists() and json.loads((path / "summary.json").read_text())["settings"] == fit.settings.to_dict()
    back = cache.get(fit.counts, fit.settings)
    assert back.timing["from_cache"] and back.diagnostics == fit.diagnostics
    np.testing.assert_array_equal(back.idata.posterior["rank"].values, fit.idata.posterior["rank"].values)
    pd.testing.assert_frame_equal(summaries.candidate_summary(back), summaries.candidate_summary(fit))
    assert cache.get(fit.counts, fit.settings.replace(seed=9)) is None
    other_counts = make_counts(N=np.full((2, 3, 3), 11, dtype=np.int64))
    assert cache.get(other_counts, fit.settings) is None
    assert fit_identity.fit_key(fit.counts, fit.settings) != fit_identity.fit_key(other_counts, fit.settings)


def test_fit_cache_concurrent_writers_leave_one_complete_entry(tmp_path):
    cache = fit_cache.FitCache(tmp_path)
    fit = make_fit()
    errors = []

    def write():
        try:
            fit_cache.FitCache(tmp_path).put(fit)
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=write) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [p.name for p in cache.fits_dir.iterdir()] == [fit_identity.fit_key(fit.counts, fit.settings)]
    assert cache.get(fit.counts, fit.settings) is not None


def test_fit_cached_fits_once_then_reads(tmp_path, monkeypatch):
    calls = []

    def fake_fit_model(counts, settings, progress_callback=None):
        calls.append(settings)
        return make_fit(settings=settings, counts=counts)

    monkeypatch.setattr("simplex_core.inference.fitting.fit_model", fake_fit_model)
    cache = fit_cache.FitCache(tmp_path)
    first = fit_cache.fit_cached(make_counts(), FitSettings(likelihood="per-judge", chains=1, draws=4), cache=cache)
    second = fit_cache.fit_cached(make_counts(), FitSettings(likelihood="per-judge", chains=1, draws=4), cache=cache)
    assert len(calls) == 1 and "from_cache" not in first.timing and second.timing["from_cache"]


def test_default_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(fit_cache.ENV_VAR, str(tmp_path / "here"))
    assert fit_cache.default_cache_dir() == tmp_path / "here"
    assert fit_cache.FitCache().root == tmp_path / "here"
    monkeypatch.delenv(fit_cache.ENV_VAR)
    assert fit_cache.default_cache_dir() == Path.home() / ".cache" / "simplex_judge"


def test_summary_rank_interval_follows_the_one_rule_of_every_method():
    """4,000 draws with 100 at rank 3 (2.5 %): the summary's upper end and the evaluation's agree
    (numpy's inverted_cdf gave 2 here, the order statistic just above 97.5 % gives 3)."""
    from simplex_core.model.ranks import rank_interval

    ranks = np.ones((4000, 3), dtype=int)
    ranks[:, 1], ranks[:, 2] = 2, 3
    ranks[:100, 0], ranks[:100, 2] = 3, 1  # candidate 0 third in 100 draws, candidate 2 first then
    es = (4 - ranks).astype(float)
    table = summaries.candidate_summary(make_fit(e_draws=es, rank_draws=ranks), sort=False)
    lo, hi = rank_interval(ranks)
    np.testing.assert_array_equal(table["rank_lo"], lo)
    np.testing.assert_array_equal(table["rank_hi"], hi)
    assert table.loc[0, "rank_hi"] == 3


def test_hyperparameters_are_summarised_only_where_the_fit_sampled_them():
    omega = np.arange(400, dtype=float).reshape(2, 200) / 50.0  # 0 … 7.98, evenly
    beta = np.full((2, 200), 12.5)
    integrated = az.from_dict(posterior={"omega": omega, "beta_max": beta, "expected_score": np.zeros((2, 200, 2))})
    h = summaries.hyperparameter_records(integrated)
    assert set(h) == {"omega", "beta_max"}
    assert h["omega"]["mean"] == pytest.approx(omega.mean())
    assert (h["omega"]["lo"], h["omega"]["hi"]) == pytest.approx(tuple(np.quantile(omega, [0.025, 0.975])))
    assert h["beta_max"] == pytest.approx({"mean": 12.5, "lo": 12.5, "hi": 12.5})
    fixed = az.from_dict(posterior={"expected_score": np.zeros((2, 200, 2))})
    assert summaries.hyperparameter_records(fixed) == {}
    json.dumps(h, allow_nan=False)


def test_one_reproducibility_record_before_and_after_the_fit():
    """The app's Settings JSON (no fit needed: the counts and settings of the fit to come) and result.json's
    ``settings`` are one record, field for field."""
    included = np.ones((2, 3), bool)
    included[1, 2] = False
    counts = make_counts(included=included)
    fit = make_fit(counts=counts, settings=FitSettings(omega=1.0, chains=1, draws=4, seed=7))
    left = {"candidates_left_out": ["c9"], "judges_left_out": []}
    source = {"dataset": "hanna", "source": "hanna:coherence", "criterion": "coherence", "collapsed": True}
    after = summaries.result_json(fit, command_line="python -m simplex_core fit hanna", selection=left, data=source)["settings"]
    before = summaries.settings_record(counts=counts, settings=fit.settings, command_line="python -m simplex_core fit hanna",
                                       selection=left, data=source)
    assert before == after
    assert list(after) == ["data", "data_hash", "counts_hash", "scale", "families", "excluded_pairs", "options", "seed",
                           "package_versions", "command_line", "selection"]
    assert after["data"] == source and after["seed"] == 7 and after["options"]["omega"] == 1.0
    assert after["excluded_pairs"] == [{"judge": "j1", "candidate": "c2"}] and after["selection"] == left
    with_app = summaries.settings_record(counts=counts, settings=fit.settings, extra_versions=("pytest",))
    assert "pytest" in with_app["package_versions"] and "pytest" not in after["package_versions"]
    with pytest.raises(ValueError, match="needs a fit, or the counts and the settings"):
        summaries.settings_record(counts=counts)


def test_data_record_reads_the_tables_origin():
    from simplex_core.data.datasets import load_dataset

    table = load_dataset("hanna", criterion="coherence")
    assert summaries.data_record(table, "hanna") == {"dataset": "hanna", "source": table.source,
                                                      "criterion": "coherence", "collapsed": False}
