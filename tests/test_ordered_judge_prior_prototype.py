"""The centred, ordered judge prior of ``bench/ordered_judge_prior_prototype.py``: what its docstring
claims of it, checked on prior draws. Every row is a distribution; every row stochastically dominates
the one above (no judge can be read as flipped); before any data a judge scores each interior true
level about at that level, where the weight-propagation prior leans up (``mean_weight_propagation``)."""

from __future__ import annotations

import numpy as np
import pymc as pm

from bench.ordered_judge_prior_prototype import ordered_judge_rows
from simplex_core.data.scale import Scale
from simplex_core.model.priors import mean_weight_propagation, stochastically_dominates


def test_ordered_rows_are_distributions_ordered_and_centred_unlike_weight_propagation():
    J, T = 3, 5
    scale = Scale(tuple(float(v) for v in range(1, T + 1)))
    with pm.Model():
        theta = ordered_judge_rows("ordered", scale, np.ones(J), J, T, T, np.arange(T))
        draws = pm.draw(theta, draws=400, random_seed=1)  # [400, J, T, M]
    assert np.allclose(draws.sum(axis=-1), 1.0, atol=1e-9)
    assert stochastically_dominates(draws, atol=1e-9)
    levels = np.arange(T, dtype=float)
    mean_score = (draws.mean(axis=(0, 1)) * levels).sum(axis=-1)  # per true level, index units
    assert np.all(np.abs(mean_score[1:-1] - levels[1:-1]) < 0.15), mean_score
    assert mean_score[0] > 0 and mean_score[-1] < T - 1  # only the end levels pulled inward
    lean = mean_weight_propagation(scale, 5.0) @ levels - levels
    assert lean[1:-1].min() > 0.5  # the default prior's upward lean this one removes
