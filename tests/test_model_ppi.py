"""bayesian_ppi_<pct>: PPI with the label-free model's posterior mean true score as predictor."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simplex_core.data import gold as gold_module
from simplex_core.methods.method_base import nanmean_last, score_array
from simplex_core.methods.baselines import baseline_methods, method_generator
from simplex_core.methods.ppi import ppi_mean_ranks
from simplex_core.data.views import count_tensor, item_view
from simplex_core.data.table import load_table
from simplex_core.summaries.evaluation import evaluate_methods, evaluate_results, true_ranks
from simplex_core.methods.labelling import LabelDraws
from simplex_core.studies.model_ppi import ModelPredictor, answer_predictions, model_ppi_fraction, model_ppi_methods, model_ppi_name
from simplex_core.data.scale import Scale
from simplex_core.model.simulate import simulate

BINARY = Scale((0.0, 1.0))


def _sim_table(n_items=80, seed=3, **kw):
    sim = simulate(scale=BINARY, n_items=n_items, candidates=4, judges=3, rng=seed, **kw)
    return load_table(sim.frame, scale=sim.scale)


def test_names_round_trip_and_a_bad_name_is_named():
    assert model_ppi_name(0.05) == "bayesian_ppi_5" and model_ppi_fraction("bayesian_ppi_10") == 0.10
    assert model_ppi_fraction("ppi_10") is None
    with pytest.raises(ValueError, match="bayesian_ppi_<percent>"):
        model_ppi_fraction("bayesian_ppi_x")


def test_answer_predictions_are_the_posterior_mean_true_level_by_bayes_rule():
    """One judge, two candidates, one draw: ŷ = P(t = 1 | score) by hand."""
    frame = pd.DataFrame({"item": ["q0", "q0", "q1", "q1"], "candidate": ["a", "b", "a", "b"],
                          "judge": "x", "score": [1.0, 1.0, 0.0, 1.0]})
    table = load_table(frame, scale=BINARY)
    counts = count_tensor(table)
    pi = np.array([[[0.3, 0.7], [0.8, 0.2]]])  # [S=1, K, T]
    theta = np.array([[[[0.9, 0.1], [0.25, 0.75]]]])  # [S, J, T, M]: rows = true level
    draws = LabelDraws(pi=pi, theta=theta, ranks=np.array([[1.0, 2.0]]))
    pred = answer_predictions(draws, table, counts)

    def post(prior1, score):
        like = theta[0, 0, :, score]
        p = np.array([1 - prior1, prior1]) * like
        return p[1] / p.sum()

    assert pred[("q0", "a")] == pytest.approx(post(0.7, 1))
    assert pred[("q0", "b")] == pytest.approx(post(0.2, 1))
    assert pred[("q1", "a")] == pytest.approx(post(0.7, 0))
    assert pred[("q1", "b")] == pytest.approx(post(0.2, 1))


def test_given_predictions_equal_to_the_judges_mean_reproduce_ppi():
    table = _sim_table()
    view = item_view(table)
    arr = score_array(view)
    mean = nanmean_last(arr.scores)  # scale is [0, 1]: rescaling is the identity
    preds = pd.Series(mean.ravel(), index=pd.MultiIndex.from_product([arr.items, arr.candidates],
                                                                       names=["item", "candidate"]))
    a = ppi_mean_ranks(view, BINARY, 0.10, 50, np.random.default_rng(4))
    b = ppi_mean_ranks(view, BINARY, 0.10, 50, np.random.default_rng(4), predictions=preds.sample(frac=1, random_state=0))
    pd.testing.assert_series_equal(a.scores, b.scores)
    pd.testing.assert_series_equal(a.rank_lo, b.rank_lo)


def test_a_perfect_predictor_gives_the_unlabelled_items_true_mean_exactly():
    table = _sim_table()
    view = item_view(table)
    arr = score_array(view)
    res = ppi_mean_ranks(view, BINARY, 0.10, 20, np.random.default_rng(9), predictions=view["true_score"],
                         name="oracle")
    labelled = gold_module.labelled_item_mask(len(arr.items), 0.10, np.random.default_rng(9))
    np.testing.assert_allclose(res.scores.to_numpy(), arr.truth[~labelled].mean(axis=0))
    assert res.method == "oracle"


def test_the_rectifier_removes_a_predictor_bias_that_depends_on_the_candidate():
    """Over many label draws the estimate averages to the true mean even when the predictor is off
    by +0.3 for one candidate and −0.2 for another (what PPI's guarantee rests on)."""
    table = _sim_table(n_items=200)
    view = item_view(table)
    arr = score_array(view)
    bias = {arr.candidates[0]: 0.3, arr.candidates[1]: -0.2}
    cand = view.index.get_level_values("candidate")
    preds = view["true_score"] + np.array([bias.get(c, 0.0) for c in cand])
    est = np.array([ppi_mean_ranks(view, BINARY, 0.10, 1, np.random.default_rng(s), predictions=preds).scores.to_numpy()
                    for s in range(300)])
    truth = arr.truth.mean(axis=0)
    se = est.std(axis=0) / np.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - truth) < 4 * se + 1e-9)
    assert np.abs(est.mean(axis=0)[0] - (truth[0] + 0.3)) > 0.2  # without the rectifier it would be off


def test_bayesian_ppi_labels_the_same_items_as_ppi_in_every_resample(monkeypatch):
    table = _sim_table(n_items=60)
    view = item_view(table)
    masks = []
    real = gold_module.labelled_item_mask

    def spy(n_items, fraction, rng):
        masks.append(real(n_items, fraction, rng))
        return masks[-1]

    monkeypatch.setattr(gold_module, "labelled_item_mask", spy)
    method = model_ppi_methods(table, ["bayesian_ppi_10"])["bayesian_ppi_10"]
    # the fit is not what this test is about: a predictor of the judges' mean stands in for it
    monkeypatch.setattr(type(method), "predictor",
                        lambda self, v: ModelPredictor(v.drop(columns="true_score").mean(axis=1), {"converged": 1.0}))
    methods = {"ppi_10": baseline_methods(view, table.scale, single_judges=False, ppi_fractions=(0.10,))["ppi_10"],
               "bayesian_ppi_10": method}
    evaluate_methods(view, methods, ci_resamples=3, rng=7)
    assert len(masks) == 8
    for ppi, ours in zip(masks[0::2], masks[1::2]):
        np.testing.assert_array_equal(ppi, ours)
    assert method.history[0].uses_labels and method.history[0].method == "bayesian_ppi_10"


def test_one_label_free_fit_serves_every_share_and_label_draw():
    table = _sim_table(n_items=60)
    view = item_view(table)
    methods = model_ppi_methods(table, ["bayesian_ppi_5", "bayesian_ppi_10"], chains=2, draws=200, tune=200)
    tasks = methods["bayesian_ppi_5"].fit_tasks([view])
    assert len(tasks) == 1 and tasks[0][1][1].likelihood == "shared-truth"
    assert count_tensor(table).patterns.n_gold == tasks[0][1][2].patterns.n_gold == 0  # never sees a label
    from simplex_core.studies.experiments import prefetch_fits

    assert prefetch_fits([(methods.values(), [view], 0)]) == 1  # shared memo: one fit for both shares
    assert methods["bayesian_ppi_10"].fit_tasks([view]) == []


def test_coverage_on_simulated_data_where_the_judges_err_by_candidate():
    """Known truth, judges whose confusion depends on the candidate (ω = 3) while the fit assumes
    ω = 0: the label-free model's intervals miss a third of the true ranks; PPI with that model as
    predictor covers them."""
    from simplex_core.studies.experiments import bayesian_methods

    sim = simulate(scale=BINARY, n_items=300, candidates=6, judges=4, omega=3.0,
                   pi=np.column_stack([1 - np.linspace(0.45, 0.75, 6), np.linspace(0.45, 0.75, 6)]), rng=12)
    table = load_table(sim.frame, scale=sim.scale)
    view = item_view(table)
    truth = true_ranks(view)
    fit = dict(chains=4, draws=500, tune=500)
    label_free = bayesian_methods(table, ["bayesian"], **fit)["bayesian"](view)
    assert evaluate_results({"m": label_free}, truth).iloc[0]["coverage"] < 0.9  # the model is off here
    method = model_ppi_methods(table, ["bayesian_ppi_10"], **fit)["bayesian_ppi_10"]
    covs, rhos = [], []
    for r in range(20):
        res = method(view, method_generator(0, "ppi_10", r))
        ev = evaluate_results({"m": res}, truth).iloc[0]
        covs.append(ev["coverage"])
        rhos.append(ev["spearman"])
    d = res.details
    assert d["max_rhat"] <= 1.01 and d["min_ess_bulk"] >= 400 and d["divergences"] == 0
    assert np.mean(covs) >= 0.90
    assert np.mean(rhos) > 0.7


def test_expanded_intervals_widen_ppi_most_where_few_items_are_labelled():
    """Hesterberg's expansion keeps the estimates, widens the intervals, and covers the true ranks
    at least as often as the plain percentile bootstrap when only 3 items are labelled."""
    rng = np.random.default_rng(1)
    n_items, n_cand = 60, 6
    truth = (rng.random((n_items, n_cand)) < np.linspace(0.3, 0.8, n_cand)).astype(float)
    judge = np.clip(truth + rng.normal(0, 0.6, truth.shape), 0, 1)
    index = pd.MultiIndex.from_product([[f"q{i}" for i in range(n_items)], [f"c{k}" for k in range(n_cand)]],
                                       names=["item", "candidate"])
    view = pd.DataFrame({"j": judge.ravel(), "true_score": truth.ravel()}, index=index)
    ranks = true_ranks(view)
    figures = {False: [], True: []}
    for s in range(60):
        for expanded in (False, True):
            res = ppi_mean_ranks(view, BINARY, 0.05, 200, np.random.default_rng(s), expanded=expanded)
            cov = evaluate_results({"m": res}, ranks).iloc[0]["coverage"]
            figures[expanded].append((res.scores.to_numpy(), np.mean(res.rank_hi - res.rank_lo + 1), cov))
    for (s0, w0, c0), (s1, w1, c1) in zip(figures[False], figures[True]):
        np.testing.assert_array_equal(s0, s1)
    width = {e: np.mean([f[1] for f in v]) for e, v in figures.items()}
    cover = {e: np.mean([f[2] for f in v]) for e, v in figures.items()}
    assert width[True] > width[False]
    assert cover[True] >= cover[False] and cover[True] >= 0.9


def test_blend_is_ppi_with_half_the_model_and_half_the_judges_mean(monkeypatch):
    table = _sim_table(n_items=60)
    view = item_view(table)
    method = model_ppi_methods(table, ["bayesian_ppi_10"], blend=True, expanded=False, pooled=False)["bayesian_ppi_10"]
    model = view["true_score"] * 0.8 + 0.1  # a stand-in for the fit's posterior means
    monkeypatch.setattr(type(method), "predictor", lambda self, v: ModelPredictor(model, {"converged": 1.0}))
    got = method(view, np.random.default_rng(5))
    judges_mean = view.drop(columns="true_score").mean(axis=1)
    want = ppi_mean_ranks(view, BINARY, 0.10, 300, np.random.default_rng(5), power_tuning=True,
                          predictions=0.5 * (model + judges_mean))
    np.testing.assert_allclose(got.scores.to_numpy(), want.scores.to_numpy())
    pd.testing.assert_series_equal(got.rank_hi, want.rank_hi)


def test_cli_evaluate_names_a_bad_bayesian_ppi_method(tmp_path, capsys):
    from simplex_core.cli import main

    sim = simulate(scale=BINARY, n_items=30, candidates=3, judges=3, rng=5)
    path = tmp_path / "tiny.csv"
    sim.frame.to_csv(path, index=False)
    assert main(["evaluate", str(path), "--out", str(tmp_path / "e.csv"), "--methods", "bayesian_ppi_x"]) == 2
    assert "bayesian_ppi_<percent>" in capsys.readouterr().err


def _few_label_view(seed: int, n_items: int = 80, n_cands: int = 8):
    """Binary truth, candidates right 10%–45% of the time (FaithBench-like), and a biased predictor that
    says little: high for every answer, a little higher for the true ones."""
    g = np.random.default_rng(seed)
    y = (g.random((n_items, n_cands)) < np.linspace(0.1, 0.45, n_cands)).astype(float)
    pred = np.clip(0.75 + 0.2 * (y - 0.5) + 0.1 * g.standard_normal(y.shape), 0.0, 1.0)
    idx = pd.MultiIndex.from_product([[f"q{i}" for i in range(n_items)], [f"c{k}" for k in range(n_cands)]],
                                     names=["item", "candidate"])
    view = pd.DataFrame({"j": (pred.ravel() > 0.75).astype(float), "true_score": y.ravel()}, index=idx)
    return view, pd.Series(pred.ravel(), index=idx)


def test_few_labels_per_candidate_keep_coverage_with_the_moderated_variance():
    """5% of 80 items = 4 labels per candidate, all alike for a candidate in about a third of the draws:
    PPI++ then puts λ = 0 and the bootstrap gives a point. The moderated variance keeps the 95% rank
    intervals covering; without it they fall below 0.90 (the FaithBench miss)."""
    cover = {False: [], True: []}
    for r in range(40):
        view, pred = _few_label_view(r)
        truth = true_ranks(view)
        for moderated in cover:
            res = ppi_mean_ranks(view, BINARY, 0.05, 300, np.random.default_rng(1000 + r), predictions=pred,
                                 power_tuning=True, expanded=True, moderated=moderated)
            lo, hi = res.rank_lo[truth.index], res.rank_hi[truth.index]
            cover[moderated].append(float(((lo <= truth) & (truth <= hi)).mean()))
    assert np.mean(cover[False]) < 0.90
    assert np.mean(cover[True]) >= 0.93


def test_the_moderated_noise_widens_only_candidates_whose_own_labels_say_too_little():
    from simplex_core.methods.ppi import alike_labels_note, moderated_rectifier_noise

    g = np.random.default_rng(0)
    rect = np.full((60, 3), np.nan)
    rect[:4, 0] = 1.0  # four labels, all alike: no spread of its own
    rect[:, 1] = g.normal(0.0, 0.5, 60)  # many labels, spread above the pooled: its own variance stands
    rect[:4, 2] = [0.0, 0.2, 0.0, 0.2]  # a little spread of its own, less than the pooled
    noise = moderated_rectifier_noise(rect, 4000, np.random.default_rng(1))
    sd = noise.std(axis=0)
    pooled = (np.nansum((rect - np.nanmean(rect, axis=0)) ** 2)) / (3 + 59 + 3)
    assert sd[0] == pytest.approx(np.sqrt(4 * pooled / (4 + 3) / 4), rel=0.05)
    assert sd[1] == 0.0 and 0 < sd[2] < sd[0]
    (note,) = alike_labels_note(rect, ["a", "b", "c"], "bayesian_ppi_5")
    assert note.startswith("bayesian_ppi_5: the labels of a are all alike, so they cannot say how far its")
