"""The judge panel: accuracy, leniency, information and the effective number of judges."""

from __future__ import annotations

import numpy as np
import pytest

from simplex_core.data.patterns import NO_SCORE
from simplex_core.methods.labelling import LabelDraws
from simplex_core.summaries.judge_panel import judge_quality, panel_information

T = 3


def _draws(theta: np.ndarray, pi: np.ndarray, S: int = 4) -> LabelDraws:
    """S identical draws of one parameter setting (theta [J, T, M], pi [K, T])."""
    K = pi.shape[0]
    return LabelDraws(pi=np.repeat(pi[None], S, 0), theta=np.repeat(theta[None], S, 0),
                      ranks=np.tile(np.arange(1.0, K + 1), (S, 1)))


def _confusion(accuracy: float, m: int = T) -> np.ndarray:
    return np.full((m, m), (1 - accuracy) / (m - 1)) + np.eye(m) * (accuracy - (1 - accuracy) / (m - 1))


def _answers(theta: np.ndarray, pi: np.ndarray, n: int, seed: int = 0):
    """n answers per candidate simulated from the model: (candidate, scores, weight) one row each."""
    rng = np.random.default_rng(seed)
    K, J = pi.shape[0], theta.shape[0]
    cand = np.repeat(np.arange(K), n)
    t = np.array([rng.choice(T, p=pi[k]) for k in cand])
    scores = np.array([[rng.choice(theta.shape[2], p=theta[j, tt]) for j in range(J)] for tt in t])
    return cand, scores, np.ones(cand.size)


PI = np.array([[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]])


def test_one_perfect_judge_and_noise_is_one_effective_judge():
    theta = np.stack([np.eye(T), np.full((T, T), 1 / T), np.full((T, T), 1 / T), np.full((T, T), 1 / T)])
    cand, scores, w = _answers(theta, PI, 200)
    info = panel_information(_draws(theta, PI), cand, scores, w)
    np.testing.assert_allclose(info.effective, 1.0, atol=1e-9)
    np.testing.assert_allclose(info.alone[:, 1:], 0.0, atol=1e-9)  # noise tells nothing
    np.testing.assert_allclose(info.added[:, 1:], 0.0, atol=1e-9)
    # the perfect judge adds all there is to know: the mean of −log2 π_k[t] over the answers
    h = float(np.mean(-np.log2(PI[cand, scores[:, 0]])))
    np.testing.assert_allclose(info.added[:, 0], h, rtol=1e-9)
    np.testing.assert_allclose(info.panel, h, rtol=1e-9)


def test_equally_accurate_independent_judges_grow_with_the_panel_and_stay_in_bounds():
    effective = []
    for J in (1, 2, 4, 8):
        theta = np.stack([_confusion(0.7)] * J)
        cand, scores, w = _answers(theta, PI, 400, seed=J)
        info = panel_information(_draws(theta, PI), cand, scores, w)
        assert np.all((info.effective >= 1) & (info.effective <= J))
        effective.append(float(info.effective.mean()))
    assert effective[0] == pytest.approx(1.0)
    assert effective[0] < effective[1] < effective[2] < effective[3]
    assert effective[3] < 8  # accurate judges tell the same truth: they saturate


def test_missing_scores_add_nothing_and_a_weaker_judge_adds_least():
    theta = np.stack([_confusion(0.9), _confusion(0.8), _confusion(0.45)])
    cand, scores, w = _answers(theta, PI, 300, seed=3)
    info = panel_information(_draws(theta, PI), cand, scores, w)
    assert int(np.argmin(info.added.mean(axis=0))) == 2
    assert int(np.argmax(info.alone.mean(axis=0))) == 0
    # a judge that scored no answer has no information
    blank = scores.copy()
    blank[:, 1] = NO_SCORE
    info2 = panel_information(_draws(theta, PI), cand, blank, w)
    np.testing.assert_allclose(info2.alone[:, 1], 0.0, atol=1e-12)
    np.testing.assert_allclose(info2.added[:, 1], 0.0, atol=1e-12)


def test_random_panels_stay_within_one_and_J():
    rng = np.random.default_rng(11)
    for J in (2, 3, 5):
        theta = rng.dirichlet(np.ones(T), size=(J, T))
        pi = rng.dirichlet(np.ones(T), size=3)
        cand, scores, w = _answers(theta, pi, 50, seed=J)
        info = panel_information(_draws(theta, pi), cand, scores, w)
        assert np.all((info.effective >= 1) & (info.effective <= J))


def test_accuracy_and_leniency_exact():
    values = np.array([1.0, 2.0, 3.0])
    up = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 1]], dtype=float)  # one level too high, top stays
    theta = np.stack([np.eye(T), up, _confusion(0.6)])
    draws = _draws(theta, PI)
    accuracy, leniency = judge_quality(draws, np.arange(T), values, np.array([10, 30]))
    np.testing.assert_allclose(accuracy[0], [1.0, 1 / 3, 0.6])
    p_bar = 0.25 * PI[0] + 0.75 * PI[1]
    # the lenient judge: +1 at the two lower levels, 0 at the top
    np.testing.assert_allclose(leniency[0, :2], [0.0, p_bar[0] + p_bar[1]])
    # symmetric errors: +0.2·1 + 0.2·2 at the bottom, 0 in the middle, −0.6 at the top
    np.testing.assert_allclose(leniency[0, 2], p_bar[0] * 0.6 - p_bar[2] * 0.6)


def test_fit_result_json_has_the_panel_and_finds_the_noise_judge():
    from simplex_core.data.scale import Scale
    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.definition import FitSettings
    from simplex_core.model.simulate import simulate
    from simplex_core.summaries.posterior_tables import result_json

    scale = Scale((0.0, 1.0, 2.0), ("0", "1", "2"))
    theta = np.stack([_confusion(0.9), _confusion(0.85), _confusion(0.8), np.full((T, T), 1 / T)])
    sim = simulate(scale=scale, n_items=80, candidates=4, judges=["good", "fair", "ok", "noise"],
                   theta=theta, rng=21)
    table = load_table(sim.frame, scale=sim.scale)
    fit = fit_model(count_tensor(table), FitSettings(chains=2, draws=500, tune=500, seed=1))
    assert fit.diagnostics.converged
    doc = result_json(fit)
    panel = doc["judge_panel"]
    assert panel["least_informative_judge"] == "noise"
    eff = panel["effective_judges"]
    assert 1.0 <= eff["lo"] <= eff["mean"] <= eff["hi"] <= 4.0
    by = {r["judge"]: r for r in panel["judges"]}
    assert by["noise"]["accuracy"]["hi"] < by["good"]["accuracy"]["lo"]
    assert by["good"]["accuracy"]["lo"] < 0.9 < by["good"]["accuracy"]["hi"]
    assert "candidates" in doc and "judges" in doc  # the existing keys stay


def test_panel_sentence_names_the_numbers_and_the_judge():
    from simplex_core.summaries.judge_panel import judge_panel_sentence

    panel = {"n_judges": 4, "effective_judges": {"mean": 1.234, "lo": 1.1, "hi": 1.5},
             "least_informative_judge": "noise"}
    text = judge_panel_sentence(panel)
    assert "4 judges are worth 1.23" in text and "1.10–1.50" in text and "without noise" in text
    assert "cannot be measured" in judge_panel_sentence({"n_judges": 2, "effective_judges": None})
