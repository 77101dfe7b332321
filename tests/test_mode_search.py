"""Where the fast engine's chains start (``simplex_core.inference.fast_engine.find_modes``): the "judges mostly
right" start is what it says for every judge prior, and on latent-class data whose random starts all
end in a relabelled maximum the search still finds the maximum the data came from."""

from __future__ import annotations

import numpy as np
import pytest

from simplex_core.model import fast_density
from simplex_core.inference import fast_engine
from simplex_core.data.views import count_tensor
from simplex_core.data.table import load_table
from simplex_core.model.definition import FitSettings
from simplex_core.data.scale import Scale
from simplex_core.model.simulate import ordinal_prevalences, simulate

BINARY_ABSTAIN = Scale((-1.0, 0.0, 1.0), ("incorrect", "unsure", "correct"), (-1.0, 1.0))
SEVEN = Scale(tuple(float(v) for v in range(7)))


def _counts(sim):
    return count_tensor(load_table(sim.frame.drop(columns=["true_score"]), scale=sim.scale))


def _expanded(counts, settings, x):
    buf = fast_density.build_buffer(counts, settings)
    names, shapes, _ = fast_density.stored_variables(counts, settings)
    out = np.zeros(fast_density.stored_slices(shapes)[-1].stop)
    fast_density.expand(np.ascontiguousarray(x), out, buf)
    return {name: out[s].reshape(shape) for name, s, shape in zip(names, fast_density.stored_slices(shapes), shapes)}


def _judge(kind: str, accuracy: float, M: int) -> np.ndarray:
    """Θ with ``accuracy`` on the diagonal; the rest one level down (harsh), up (lenient) or split
    between the neighbours (symmetric)."""
    theta = np.zeros((M, M))
    for t in range(M):
        theta[t, t] = accuracy
        if kind == "lenient" and t < M - 1:
            theta[t, t + 1] += 1.0 - accuracy
        elif kind == "harsh" and t > 0:
            theta[t, t - 1] += 1.0 - accuracy
        else:
            near = [m for m in (t - 1, t + 1) if 0 <= m < M]
            theta[t, near] += (1.0 - accuracy) / len(near)
    return theta


@pytest.mark.parametrize("prior", ["weight-propagation", "diagonal", "mixing"])
@pytest.mark.parametrize("scale", [SEVEN, BINARY_ABSTAIN], ids=["seven", "binary+abstain"])
def test_the_trusted_start_leans_every_judge_row_on_its_correct_cell_and_pi_on_the_scores(prior, scale):
    sim = simulate(scale=scale, n_items=60, candidates=4, judges=3, rng=5)
    counts = _counts(sim)
    settings = FitSettings(prior=prior).model
    x = fast_engine.trusted_start(counts, fast_density.build_buffer(counts, settings))
    point = _expanded(counts, settings, x)
    theta, pi = point["theta"], point["pi"]
    correct = np.asarray(scale.true_index)
    for j in range(theta.shape[0]):
        for t, c in enumerate(correct):
            assert np.argmax(theta[j, t]) == c and theta[j, t, c] >= 0.5, (j, t, theta[j, t])
    # π_k: the shares of candidate k's scores at the true levels' observed levels, one added per level
    at_true = counts.N.sum(axis=0)[:, correct] + 1.0
    np.testing.assert_allclose(pi, at_true / at_true.sum(axis=1, keepdims=True), rtol=1e-10)
    np.testing.assert_allclose(point["rho"], 0.5)


def test_the_mode_search_finds_the_maximum_the_data_came_from_where_random_starts_relabel_the_levels():
    """Seven levels, five judges (one perfect, one harsh, one lenient), 400 items: each of 30 random
    starts ends in a maximum where the judges' rows are shifted against the true levels (every E_k
    0.5–1.2 too low, 940 log units or more below the maximum near the truth; measured), and chains
    started there look converged. The search must return the maximum near the truth first."""
    rng = np.random.default_rng(7)
    theta = np.stack([_judge("symmetric", 0.73, 7), _judge("harsh", 0.63, 7), _judge("lenient", 0.70, 7),
                      _judge("symmetric", 0.83, 7), np.eye(7)])
    pi = ordinal_prevalences([-0.7, 0.9, 0.9, 0.25, -0.3], 7)
    sim = simulate(scale=SEVEN, n_items=400, candidates=5, judges=5, pi=pi, theta=theta, rng=rng)
    counts = _counts(sim)
    settings = FitSettings(seed=3).model
    modes = fast_engine.find_modes(counts, settings, seed=3)
    best = _expanded(counts, settings, modes[0].point)
    order = [sim.candidates.index(c) for c in counts.candidates]
    np.testing.assert_allclose(best["expected_score"], sim.expected_scores[order], atol=0.3)


def test_dawid_skene_tells_the_near_random_judges_from_the_good_ones_and_recovers_pi():
    """Dawid & Skene's EM (the start for judges of unequal worth): on 5-level data with three good
    judges and two near random, each judge's estimated mean accuracy is within 0.1 of its true one,
    and each π_k within 0.1 (total variation) of the shares of its answers' true levels."""
    M = 5
    near_random = np.full((M, M), 0.8 / (M - 1))
    np.fill_diagonal(near_random, 0.2)
    theta = np.stack([_judge("symmetric", 0.85, M), _judge("harsh", 0.75, M), near_random,
                      _judge("lenient", 0.8, M), near_random])
    sim = simulate(scale=Scale(tuple(float(v) for v in range(M))), n_items=300, candidates=6, judges=5,
                   pi=ordinal_prevalences([-0.8, -0.4, 0.0, 0.3, 0.6, 1.0], M), theta=theta, rng=11)
    counts = _counts(sim)
    pi, estimated = fast_engine.dawid_skene(counts)
    judges = [sim.judges.index(j) for j in counts.judges]
    true_accuracy = np.diagonal(theta[judges], axis1=1, axis2=2).mean(axis=1)
    np.testing.assert_allclose(np.diagonal(estimated, axis1=1, axis2=2).mean(axis=1), true_accuracy, atol=0.1)
    frame = sim.frame.drop_duplicates(["item", "candidate"])
    for k, name in enumerate(counts.candidates):
        levels = frame.loc[frame["candidate"] == name, "true_score"].astype(float).astype(int)
        shares = np.bincount(levels, minlength=M) / len(levels)
        assert 0.5 * np.abs(pi[k] - shares).sum() < 0.1, (name, pi[k], shares)
