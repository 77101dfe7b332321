"""Pooled rectifiers of the labelled ranking: shrink where the labels show no difference between
candidates, keep each candidate's own where they do, and cover the truth on simulated labels."""

import numpy as np
import pandas as pd

from simplex_core.data.scale import Scale
from simplex_core.methods.ppi import pooled_rectifier_draws, ppi_mean_ranks
from simplex_core.model.ranks import rank_scores


def _rectifiers(bias: np.ndarray, n: int, noise: float, rng: np.random.Generator) -> np.ndarray:
    return bias[None, :] + rng.normal(0.0, noise, size=(n, len(bias)))


def test_no_difference_between_candidates_shrinks_rectifiers_to_their_common_mean():
    rng = np.random.default_rng(1)
    r = _rectifiers(np.full(10, 0.2), n=5, noise=0.5, rng=rng)
    draws = pooled_rectifier_draws(r, 2000, np.random.default_rng(2))
    raw = r.mean(axis=0)
    post = draws.mean(axis=0)
    assert np.std(post) < 0.5 * np.std(raw)
    assert abs(post.mean() - raw.mean()) < 0.05


def test_clear_differences_between_candidates_are_kept():
    rng = np.random.default_rng(3)
    bias = np.linspace(-1.0, 1.0, 8)
    r = _rectifiers(bias, n=60, noise=0.3, rng=rng)
    post = pooled_rectifier_draws(r, 2000, np.random.default_rng(4)).mean(axis=0)
    np.testing.assert_allclose(post, r.mean(axis=0), atol=0.03)


def test_pooled_intervals_cover_each_candidates_bias_on_simulated_labels():
    hits = total = 0
    for seed in range(40):
        rng = np.random.default_rng([seed, 11])
        bias = rng.normal(0.1, 0.15, size=8)  # the predictor's bias differs a little between candidates
        r = _rectifiers(bias, n=5, noise=0.4, rng=rng)
        draws = pooled_rectifier_draws(r, 1000, rng)
        lo, hi = np.quantile(draws, [0.025, 0.975], axis=0)
        hits += int(((lo <= bias) & (bias <= hi)).sum())
        total += len(bias)
    assert hits / total >= 0.90


def test_pooled_ranking_beats_plain_ppi_when_the_predictor_is_good_and_labels_are_few():
    """A predictor unbiased for every candidate and 5% of 100 items labelled: plain PPI adds each
    candidate's noisy rectifier to its estimate; pooling shrinks them, so the ranking is closer to the truth."""
    scale = Scale((1.0, 2.0, 3.0, 4.0, 5.0))
    gains = []
    for seed in range(12):
        rng = np.random.default_rng([seed, 5])
        K, items = 10, 100
        quality = np.linspace(2.6, 3.4, K)
        truth = np.clip(np.round(quality[None, :] + rng.normal(0, 1.0, (items, K))), 1, 5)
        pred = truth + rng.normal(0, 0.3, truth.shape)  # a good predictor, no candidate-specific bias
        rows = [(f"i{i}", f"c{k}", "j", float(np.clip(np.round(pred[i, k]), 1, 5)), truth[i, k])
                for i in range(items) for k in range(K)]
        view = pd.DataFrame(rows, columns=["item", "candidate", "judge", "score", "true_score"])
        view = view.pivot_table(index=["item", "candidate"], columns="judge", values="score").join(
            view.groupby(["item", "candidate"])["true_score"].first())
        predictions = pd.Series(pred.ravel(), index=pd.MultiIndex.from_product(
            [[f"i{i}" for i in range(items)], [f"c{k}" for k in range(K)]], names=["item", "candidate"]))
        true_rank = rank_scores(truth.mean(axis=0))
        rho = {}
        for pooled in (False, True):
            res = ppi_mean_ranks(view, scale, 0.05, 200, np.random.default_rng(seed), predictions=predictions,
                                 power_tuning=True, moderated=True, expanded=True, pooled=pooled)
            rho[pooled] = np.corrcoef(res.ranks.to_numpy(), true_rank)[0, 1]
        gains.append(rho[True] - rho[False])
    assert np.mean(gains) > 0.05
