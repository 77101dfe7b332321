"""The answer-effect prototype of the benches (``bench/answer_effect_prototype.py``).

Checked: with σ_b = 0 its log density is the product's shared-truth one (missing scores, gold answers,
the default judge prior); with b ≠ 0 each judge's tilted row is a distribution over the scores (every
joint score pattern of one answer sums to 1), and a larger b moves every judge's scores up.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytensor.tensor as pt

from bench.answer_effect_prototype import answer_effect_loglik, build_answer_effect_model, level_positions
from simplex_core.data.patterns import NO_SCORE, patterns_from_answers
from simplex_core.data.scale import Scale
from simplex_core.data.views import Counts
from simplex_core.model.definition import build_model
from simplex_core.model.settings import ModelSettings


def _tiny_counts(seed: int = 3) -> Counts:
    scale = Scale((1.0, 2.0, 3.0, 4.0))
    rng = np.random.default_rng(seed)
    J, K, n, M = 3, 2, 12, scale.n_levels
    cand = np.repeat(np.arange(K), n)
    scores = rng.integers(0, M, size=(K * n, J))
    scores[rng.random(scores.shape) < 0.15] = NO_SCORE
    truth = np.where(rng.random(K * n) < 0.2, rng.integers(0, scale.n_true, size=K * n), NO_SCORE)
    included = np.ones((J, K), dtype=bool)
    patterns = patterns_from_answers(cand, scores, truth, included)
    return Counts(N=patterns.count_tensor(J, K, M), included=included, judges=("a", "b", "c"),
                  candidates=("x", "y"), scale=scale, excluded_pairs=(), patterns=patterns)


def _potential(model, name, point):
    out = model.replace_rvs_by_values([model[name]])
    fn = model.compile_fn(out, inputs=model.value_vars, point_fn=True, on_unused_input="ignore")
    at = model.initial_point()
    at.update({name: point[name] for name in at if name in point})
    return float(np.asarray(fn(at)[0]))


def test_zero_sigma_gives_the_product_shared_truth_density():
    counts = _tiny_counts()
    settings = ModelSettings()
    product = build_model(counts, settings)
    proto = build_answer_effect_model(counts, settings, sigma_b=0.0)
    rng = np.random.default_rng(0)
    point = {k: v + rng.normal(0.0, 0.7, np.shape(v)) for k, v in product.initial_point().items()}
    expected = _potential(product, "shared_truth_loglik", point)
    assert np.isfinite(expected)
    assert np.isclose(_potential(proto, "answer_loglik", point), expected, rtol=1e-10, atol=1e-10)
    # and the effect is live: the same point with σ_b = 1 and z ≠ 0 gives another density
    other = build_answer_effect_model(counts, settings, sigma_b=1.0)
    point["z"] = rng.normal(0.0, 1.0, counts.patterns.n_answers)
    assert not np.isclose(_potential(other, "answer_loglik", point), expected, rtol=1e-6)


def _answer_loglik(log_pi, log_theta, b, scores, s):
    return float(answer_effect_loglik(pt.as_tensor_variable(log_pi), pt.as_tensor_variable(log_theta),
                                      pt.as_tensor_variable(np.array([b])), np.array([0]), np.array([scores]),
                                      np.array([NO_SCORE]), s).eval())


def test_tilted_rows_are_distributions_and_move_scores_up():
    rng = np.random.default_rng(1)
    J, T, M = 2, 3, 4
    log_theta = np.log(rng.dirichlet(np.ones(M), size=(J, T)))
    log_pi = np.log(rng.dirichlet(np.ones(T)))[None, :]
    s = level_positions(M)
    for b in (-2.5, 0.0, 1.7):
        total = sum(np.exp(_answer_loglik(log_pi, log_theta, b, list(p), s))
                    for p in itertools.product(range(M), repeat=J))
        assert np.isclose(total, 1.0, rtol=1e-10)
    # judge 0 alone (judge 1 gives no score): its expected score rises with b
    means = [sum(m * np.exp(_answer_loglik(log_pi, log_theta, b, [m, NO_SCORE], s)) for m in range(M))
             for b in (-1.0, 0.0, 1.0)]
    assert means[0] < means[1] < means[2]
