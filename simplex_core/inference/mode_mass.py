"""Posterior mass of the region each MCMC chain explored, by bridge sampling: which chains sit in a
mode that holds a negligible share of the posterior.

Why (measured on TriviaQA V2 at ω = 1, β_max = 1): the optimiser's best mode is not always
the posterior's. There, two of four chains started at the best maximum L-BFGS found (log density
−5960) and two at a point it stopped on 11 log units lower; both pairs converged within themselves
(R-hat 1.002) but disagreed with each other (R-hat 1.5), and the second pair had climbed to a region
265 log units *higher* than any maximum the optimiser found. Bridge sampling says the first pair's
mode holds e^-277 of the second's mass: the fit was unconverged only because half of its chains
were stuck in a mode without mass, which parallel tempering could not leave either. The engine now
restarts such chains in the modes that hold the mass (:func:`simplex_core.inference.fitting._fit_fast`).

The estimator is the optimal bridge of Meng & Wong (1996) with a multivariate normal proposal fitted
to the chain's draws, as in Gronau et al. (2017, "A tutorial on bridge sampling", the R package
``bridgesampling``): the first half of the draws fits the proposal, the second half and as many
proposal draws enter the iteration; the relative error is the approximation of Frühwirth-Schnatter
(2004) with the draws taken as independent (an under-estimate for autocorrelated chains, which is
why a chain is only called negligible far below the best one). The log density is the one NUTS
samples (unconstrained coordinates, Jacobian included), so its integral is the mass of the region.
No library in the project's stack offers bridge sampling (ArviZ has PSIS for importance weights,
not normalising constants); this module is small and tested against exact normalising constants.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["bridge_log_mass", "chain_log_masses", "heavy_modes", "mode_log_masses", "same_mode_clusters"]

#: Iterations of the bridge fixed point at most (it converges in tens).
MAX_ITERATIONS = 1000
#: Two chains explored one mode when the R-hat of the pair is at most this (loose on purpose: two
#: chains of one mode give about 1.00-1.02 here; two modes the optimiser separates give 1.3-1.7).
SAME_MODE_RHAT = 1.05
#: The error scale of the mass estimates (log units) when no mode has two chains to measure it with.
UNMEASURED_ERROR = 5.0


def bridge_log_mass(draws: np.ndarray, log_density: Callable[[np.ndarray], float],
                    rng: np.random.Generator) -> tuple[float, float]:
    """``(log Z, relative error)`` of ``Z = ∫ exp(log_density)`` over the region the ``draws``
    (``[draw, n]``, in order) explored, by bridge sampling with a normal proposal fitted to their
    first half. The relative error is that of Z itself (0.1 ≈ ±0.1 in log Z)."""
    x = np.asarray(draws, dtype=np.float64)
    if x.ndim != 2 or len(x) < 8:
        raise ValueError(f"draws must be [draw, n] with at least 8 draws; got shape {x.shape}.")
    first, second = x[: len(x) // 2], x[len(x) // 2:]
    n = x.shape[1]
    mu = first.mean(axis=0)
    cov = np.cov(first, rowvar=False).reshape(n, n)
    if len(first) <= 2 * n:  # too few draws for a full covariance: its diagonal
        cov = np.diag(np.diag(cov))
    cov = cov + 1e-9 * np.eye(n) * max(1.0, float(np.max(np.diag(cov))))
    chol = np.linalg.cholesky(cov)
    log_norm = -np.log(np.diag(chol)).sum() - 0.5 * n * math.log(2 * math.pi)

    def log_proposal(y: np.ndarray) -> np.ndarray:
        z = np.linalg.solve(chol, (y - mu).T).T
        return log_norm - 0.5 * np.einsum("ij,ij->i", z, z)

    proposal = mu + rng.standard_normal((len(second), n)) @ chol.T
    l1 = np.array([log_density(y) for y in second]) - log_proposal(second)
    l2 = np.array([log_density(y) for y in proposal]) - log_proposal(proposal)
    l2 = np.where(np.isfinite(l2), l2, -np.inf)  # a proposal draw outside the support weighs 0
    n1, n2 = len(l1), len(l2)
    s1, s2 = n1 / (n1 + n2), n2 / (n1 + n2)
    shift = float(np.median(l1))
    # weights; a draw of log weight −inf weighs exactly 0 (the clip alone would give it e^-700)
    e1, e2 = (np.where(np.isfinite(l), np.exp(np.clip(l - shift, -700, 700)), 0.0) for l in (l1, l2))
    r = 1.0
    for _ in range(MAX_ITERATIONS):
        new = np.mean(e2 / (s1 * e2 + s2 * r)) / np.mean(1.0 / (s1 * e1 + s2 * r))
        done = abs(new - r) <= 1e-10 * r
        r = float(new)
        if done or not math.isfinite(r) or r <= 0:
            break
    if not math.isfinite(r) or r <= 0:
        return -math.inf, math.inf
    f1 = 1.0 / (s1 * e1 / r + s2)
    f2 = (e2 / r) / (s1 * e2 / r + s2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        re2 = float(np.var(f2) / np.mean(f2) ** 2 / n2 + np.var(f1) / np.mean(f1) ** 2 / n1)
    if not math.isfinite(re2):
        # almost no proposal draw reached where the posterior's are (or the reverse): the estimate
        # rests on nothing (the formula divides by a mean that underflows; a NaN here had been
        # silently dropped by the max() of mode_log_masses)
        return math.log(r) + shift, math.inf
    return math.log(r) + shift, math.sqrt(re2)


def chain_log_masses(draws: np.ndarray, log_density: Callable[[np.ndarray], float],
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per chain of ``draws`` (``[chain, draw, n]``): ``(log Z, relative error)`` arrays of the
    mass of the region that chain explored (:func:`bridge_log_mass`)."""
    x = np.asarray(draws, dtype=np.float64)
    rng = np.random.default_rng([int(seed), 8191])
    out = [bridge_log_mass(chain, log_density, rng) for chain in x]
    return np.array([o[0] for o in out]), np.array([o[1] for o in out])


def same_mode_clusters(summary: np.ndarray, max_rhat: float = SAME_MODE_RHAT) -> list[list[int]]:
    """Chains grouped by the mode they explored: two chains are in one mode when the R-hat of the
    pair over every column of ``summary`` (``[chain, draw, k]``, e.g. the expected scores) is at
    most ``max_rhat``. Greedy, in chain order: a chain joins the first group whose first chain it
    agrees with."""
    import arviz as az

    x = np.asarray(summary, dtype=np.float64)
    groups: list[list[int]] = []
    for c in range(len(x)):
        for g in groups:
            pair = az.convert_to_dataset({"x": x[[g[0], c]]})
            if float(az.rhat(pair)["x"].max()) <= max_rhat:
                g.append(c)
                break
        else:
            groups.append([c])
    return groups


def mode_log_masses(chain_log_mass: np.ndarray, chain_rel_error: np.ndarray,
                    clusters: list[list[int]]) -> tuple[np.ndarray, float]:
    """Per mode (a cluster of chains, :func:`same_mode_clusters`): the mean of its chains' log
    masses; and the error scale of those estimates, measured: the largest spread (max − min) of the
    estimates of chains that explored one mode, at least the largest relative error, and at least
    :data:`UNMEASURED_ERROR` when no mode has two chains to measure it with.

    Why measured: the normal proposal fits a posterior of ~150 skewed coordinates (HANNA, five
    levels) poorly; there the chains of one mode gave estimates up to 9 log units apart while the
    formula's error said about 1, and pooling a mode's chains into one proposal moved the estimate
    by 15-20 log units. Two chains of one mode must give one mass: how far they disagree is what
    the estimator can be trusted to."""
    lm = np.asarray(chain_log_mass, dtype=float)
    re = np.asarray(chain_rel_error, dtype=float)
    modes = np.array([lm[members].mean() for members in clusters])
    spreads = [lm[members].max() - lm[members].min() for members in clusters if len(members) > 1]
    scale = max(max(spreads) if spreads else UNMEASURED_ERROR, float(np.max(re)) if re.size else 0.0)
    return modes, float(scale)


def heavy_modes(log_mass: np.ndarray, error: float, negligible: float) -> np.ndarray | None:
    """Indices of the modes whose mass is not negligible: within ``negligible`` + 3 × ``error`` log
    units of the heaviest mode's (``error``: :func:`mode_log_masses`' scale). ``None`` when every
    mode is heavy (none can be called negligible) or when an estimate failed."""
    log_mass = np.asarray(log_mass, dtype=float)
    if not (np.all(np.isfinite(log_mass)) and math.isfinite(error)):
        return None  # an estimate failed: no reason to call any mode negligible
    best = int(np.argmax(log_mass))
    heavy = np.flatnonzero(log_mass >= log_mass[best] - (negligible + 3.0 * error))
    return None if len(heavy) == len(log_mass) else heavy
