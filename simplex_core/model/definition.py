"""The Bayesian model: the PyMC graph (the definition of the model).

This module owns :func:`build_model` and what it reads (:func:`model_data`, :func:`structure_key`). It
builds the model of the paper's section 5 and appendix B from the sufficient statistics of the data
(the count tensor) and the model part of the settings (:mod:`simplex_core.model.settings`), and never
samples; :mod:`simplex_core.inference.fitting` compiles and samples it. What the data cannot settle is
said by :mod:`simplex_core.model.data_notes`.

The model, for every judge ``j`` and candidate ``k`` whose pair is included (not excluded as
self-family)::

    N[j, k, ·] ~ Multinomial(n_jk, γ_jk),   γ_jk = Σ_m π_k^(j)[m] Θ_j[m, ·]

The graph is dense over all (j, k); an excluded pair enters with zero counts, and a multinomial with
zero trials contributes exactly 0 to the log density (see :func:`model_data`). That is the paper's
likelihood, ``likelihood='per-judge'``: each judge's counts are an independent sample, so the same
answers are counted once per judge, and a large panel of good judges makes π_k far too certain.

``likelihood='shared-truth'`` reads the same model per answer. Each answer (item i, candidate k)
has one latent true level t_ik ~ Categorical(π_k), shared by every judge who scored it; judge j's
score comes from Θ_j[t_ik, ·] with probability 1 − W_k R_j and, with probability W_k R_j, from
Θ_j[z, ·] with z ~ Z_k drawn for that judgment (the random effects read per judgment), so that each
judge's marginal is exactly the paper's γ_jk. Marginalising t_ik::

    log p(data) = Σ_answers log Σ_t π_k[t] Π_j L[j, k, t, s_ij],
    L[j, k, t, ·] = (1 − W_k R_j) Θ_j[t, ·] + W_k R_j Σ_z Z_k[z] Θ_j[z, ·]

(judges with no score — missing, or an excluded self-family pair — drop out of the product; a gold
answer keeps only its known t). Answers with the same scores are summed once with a weight: the
score patterns of :mod:`simplex_core.data.patterns` are the sufficient statistics. Joint score patterns
of three or more judges identify the confusion matrices (Dawid–Skene; Kruskal), which the
per-judge marginals cannot (the paper's theorem 2).

* ``π_k ~ Dirichlet(1)`` over the true levels (**our choice**; the paper does not state it).
* Random effects (only when ω > 0 or in integrated mode; ω = 0 builds a second structure with no
  random-effect variables at all)::

      Z_k ~ Dirichlet(δ),  R_j ~ Beta(ωJ, J),  W_k ~ Beta(ωK, K),
      π_k^(j) = (1 − W_k R_j) π_k + W_k R_j Z_k

* Judge confusion matrices Θ_j (rows = true levels, columns = observed levels) from one of four
  priors, all driven by ``ρ_j ~ Beta(1, 1)`` and ``β_max``:

  - ``weight-propagation`` (default, the paper's): the graph of
    :func:`simplex_core.model.priors.weight_propagation_graph`. The first row is
    ``Dirichlet(1 + ρ_j β_max on its correct cell)`` (**our choice**); every node ``(m1, m2)`` with
    several outgoing edges to ``(m1 + 1, m2' ≥ m2)`` draws its edge weights from a Dirichlet with
    concentration 1, plus ``ρ_j β_max`` on the edge into the correct cell of row ``m1 + 1``; a node
    with one edge passes all its mass. Each row stochastically dominates the previous one.
  - ``diagonal``: independent rows ``Θ_j[m, ·] ~ Dirichlet(1 + ρ_j β_max on the correct cell)``
    (appendix E's diagonal-heavy prior; no coupling between rows).
  - ``mixing``: first row as above; ``Θ_j[m, ·] = (1 − λ_jm) Θ_j[m−1, ·] + λ_jm ε_jm`` with
    innovations ``ε_jm ~ Dirichlet(1 + ρ_j β_max on the correct cell of row m)`` and
    ``λ_jm ~ Beta(1, 1)`` (appendix E's mixing prior in the form of
    :func:`simplex_core.model.priors.sample_mixing`, **our reading**; it does not enforce monotonicity).
  - ``ordered`` (**our addition**, docs/DIAGNOSIS-real-data.md parts 6–8): a latent-threshold judge,
    ``P(score ≤ m | t) = logistic(s_j (c_jm − pos_t − ℓ_j))`` with discrimination
    ``s_j = (1 + 0.4 β_max) (ρ_j/(1 − ρ_j))^0.28`` (β_max = 0: near-noise judges; 5: median 3),
    leniency ``ℓ_j ~ Normal(0, 0.5)`` and cut-points ``c_j0 = ½``, gaps ``exp(γ_jm)``,
    ``γ_jm ~ Normal(0, 0.3)``: centred (a judge scores each level around itself before any data) and
    ordered (every row dominates the one above, so no judge reads as flipped).

* Integrated mode (**our choice** of hyperpriors): ``ω ~ Uniform(0, 8)`` and
  ``β_max ~ Uniform(0, 20)`` become random so one fit marginalises over them (the paper's setting
  of its Table 1). Small ω makes R_j, W_k ~ Beta(ωJ, J), Beta(ωK, K) pile up at 0: with PyMC's
  log-odds of R_j the prior's scale grows like 1/ω, a funnel with ω (divergent transitions on
  single-judge data, where the mix W_k R_j is not identified). So integrated mode writes each of
  them by an exact augmentation (no floor, the same distribution)::

      logit R_j = logit V_j − E_j/(ωJ),   V_j ~ Beta(1 + ωJ, J),   E_j ~ Exponential(1)

  (W_k likewise with K): for a = ωJ, Gamma(a) = Gamma(a + 1)·U^{1/a} with U ~ Uniform(0, 1), so
  R_j = X/(X + Y) with X ~ Gamma(a), Y ~ Gamma(J) is Beta(ωJ, J). V's prior is well-conditioned at
  every ω ≥ 0 and E's does not depend on ω. ``V_R``, ``E_R``, ``V_W``, ``E_W`` are the free
  variables; R and W are Deterministics of the same names and dims as with fixed ω. Fixed-ω fits
  keep ``R ~ Beta(ωJ, J)``, ``W ~ Beta(ωK, K)`` as they are.

Hyperparameters ω, β_max and δ and the observed counts are ``pm.Data`` so that a compiled model can
be reused when only their values change (see :func:`model_data` and :func:`structure_key`).

Posterior variable names (the contract): ``pi`` (candidate, true_level), ``expected_score``
(candidate), ``theta`` (judge, true_level, level), ``rho`` (judge), random effects ``Z``
(candidate, true_level), ``R`` (judge), ``W`` (candidate); in integrated mode ``omega``, ``beta_max``
(and the augmentation's ``V_R``, ``E_R``, ``V_W``, ``E_W`` in a PyMC-engine trace). ``rank`` is added after sampling by
:mod:`simplex_core.inference.fitting` (rank 1 = best = largest expected score).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from simplex_core.model.priors import judge_prior_on, parse_delta

from simplex_core.model.settings import (BETA_MAX_UPPER, OMEGA_UPPER, CountsLike, FitSettings, ModelSettings, check_data_view,
                                         check_fit_size, model_settings)

if TYPE_CHECKING:  # pragma: no cover
    import pymc as pm

    from simplex_core.data.patterns import ScorePatterns
    from simplex_core.data.scale import Scale


# -- priors glue ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class EdgeGroups:
    """The weight-propagation graph arranged for vectorised sampling.

    Nodes ``(m1, m2)`` of rows ``m1 = 0 .. M_true-2`` with ``d ≥ 2`` outgoing edges share one
    Dirichlet variable of shape ``(J, n_nodes_d, d)``.

    Attributes
    ----------
    groups
        ``d -> (nodes, boost)``: ``nodes`` is a list of ``(m1, m2)``; ``boost`` an ``(n_nodes_d, d)``
        0/1 array marking the boosted edge of each node; the ``i``-th edge of node ``(m1, m2)`` goes
        to ``(m1 + 1, m2 + i)``.
    first_row_boost
        0/1 vector over observed levels marking the correct cell of the first row.
    """

    groups: dict[int, tuple[list[tuple[int, int]], np.ndarray]]
    first_row_boost: np.ndarray


def weight_propagation_groups(scale: "Scale") -> EdgeGroups:
    """Arrange :func:`simplex_core.model.priors.weight_propagation_graph` by out-degree for vectorising.

    Checks that the graph has the shape the vectorised model relies on: the children of node
    ``(m1, m2)`` are the consecutive observed levels ``m2, m2 + 1, ...``.
    """
    from simplex_core.model import priors

    graph = priors.weight_propagation_graph(scale)
    groups_nodes: dict[int, list[tuple[int, int]]] = {}
    groups_boost: dict[int, list[np.ndarray]] = {}
    for tr in graph.transitions:
        for parent, children, boosted in tr.dirichlet_nodes:
            d = len(children)
            if tuple(children) != tuple(range(parent, parent + d)):
                raise ValueError(
                    f"weight-propagation node {(tr.source_row, parent)} has children {children}; "
                    f"expected the consecutive levels from {parent}."
                )
            b = np.zeros(d)
            if boosted >= 0:
                b[boosted] = 1.0
            groups_nodes.setdefault(d, []).append((tr.source_row, parent))
            groups_boost.setdefault(d, []).append(b)
    groups = {d: (groups_nodes[d], np.stack(groups_boost[d])) for d in sorted(groups_nodes)}
    return EdgeGroups(groups=groups, first_row_boost=np.asarray(graph.first_row_boost, dtype=float))




def included_pairs(counts: CountsLike) -> tuple[np.ndarray, np.ndarray]:
    """Judge and candidate indices of the pairs that enter the likelihood (row-major order)."""
    jj, kk = np.nonzero(np.asarray(counts.included, dtype=bool))
    return jj.astype(np.int64), kk.astype(np.int64)


def _check_counts(counts: CountsLike) -> None:
    check_fit_size(counts.scale)
    N = np.asarray(counts.N)
    problems = []
    J, K = len(counts.judges), len(counts.candidates)
    M = counts.scale.n_levels
    if N.shape != (J, K, M):
        problems.append(
            f"counts.N has shape {N.shape}; expected (judges, candidates, levels) = {(J, K, M)}."
        )
    elif (N < 0).any():
        problems.append("counts.N has negative counts.")
    inc = np.asarray(counts.included)
    if inc.shape != (J, K):
        problems.append(f"counts.included has shape {inc.shape}; expected (judges, candidates) = {(J, K)}.")
    elif not inc.any():
        problems.append("every (judge, candidate) pair is excluded: nothing to fit.")
    if K < 2:
        problems.append(f"at least 2 candidates are needed to rank; got {K}.")
    if problems:
        raise ValueError("Cannot build the model:\n- " + "\n- ".join(problems))


def require_patterns(counts: CountsLike) -> "ScorePatterns":
    """The counts' score patterns, or a clear error when they were built without item-level data."""
    patterns = getattr(counts, "patterns", None)
    if patterns is None:
        raise ValueError(
            "the shared-truth likelihood needs each answer's scores from every judge (item-level data), "
            "but these counts carry only per-judge totals: build them with data.count_tensor(table), or "
            "use likelihood='per-judge'."
        )
    if patterns.n_patterns == 0:
        raise ValueError("no answer has a score or a gold label: nothing to fit.")
    return patterns


def model_data(counts: CountsLike, settings: ModelSettings | FitSettings) -> dict[str, np.ndarray]:
    """Values of the model's ``pm.Data`` variables for these counts and model settings (of a
    :class:`FitSettings`, its :attr:`~FitSettings.model` part is read).

    ``counts_obs`` is the count tensor with the excluded pairs' counts set to zero: a multinomial
    with zero trials has probability one, so those pairs contribute exactly nothing to the
    likelihood (and the graph stays dense, without index gathers). Swapping these values into a
    compiled model of the same :func:`structure_key` gives the model :func:`build_model` would build
    for ``(counts, settings)``.
    """
    settings = model_settings(settings)
    if settings.likelihood == "shared-truth":
        patterns = require_patterns(counts)
        data: dict[str, np.ndarray] = {
            "pattern_candidate": patterns.candidate.astype(np.int64),
            "pattern_scores": patterns.scores.astype(np.int64),
            "pattern_truth": patterns.truth.astype(np.int64),
            "pattern_weight": patterns.weight.astype(np.float64),
        }
    else:
        included = np.asarray(counts.included, dtype=bool)
        data = {"counts_obs": np.where(included[:, :, None], np.asarray(counts.N, dtype=np.int64), 0)}
    if not settings.integrated:
        data["beta_max"] = np.asarray(settings.beta_max, dtype=float)
    if settings.has_random_effects:
        data["delta"] = parse_delta(settings.delta, counts.scale.n_true)
        if not settings.integrated:
            data["omega"] = np.asarray(settings.omega, dtype=float)
    return data


def structure_key(counts: CountsLike, settings: ModelSettings | FitSettings) -> str:
    """A key that is equal exactly when two (counts, settings) build the same graph up to data.

    It covers the scale (shape, true-level positions, labels), the judge and candidate names, the
    prior, whether there are random effects and integrated mode; not the counts, the included mask
    (excluded pairs are zero counts, see :func:`model_data`), ω, β_max or δ.
    """
    settings = model_settings(settings)
    scale = counts.scale
    payload = {
        "levels": scale.n_levels,
        "true_index": list(scale.true_index),
        "true_values": list(scale.true_values),
        "labels": list(scale.labels),
        "judges": list(counts.judges),
        "candidates": list(counts.candidates),
        "prior": settings.prior,
        "random_effects": settings.has_random_effects,
        "integrated": settings.integrated,
        "likelihood": settings.likelihood,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def build_model(counts: CountsLike, settings: ModelSettings | FitSettings) -> "pm.Model":
    """Build the PyMC model for these counts and settings (no sampling, no compilation).

    Parameters
    ----------
    counts
        The count tensor (:class:`simplex_core.data.views.Counts`): ``N`` [J, K, M_obs], ``included``
        [J, K], names and the scale. Excluded pairs do not enter the likelihood.
    settings
        The model settings (:class:`ModelSettings`). Given a :class:`FitSettings`, only its
        :attr:`~FitSettings.model` part is read, after :func:`check_data_view`.

    Returns
    -------
    pm.Model
        With coords ``candidate``, ``judge``, ``true_level``, ``level`` and the variables named in
        the module docstring; the observed ``y`` is the count tensor with excluded pairs zeroed.
    """
    import pymc as pm
    import pytensor.tensor as pt

    _check_counts(counts)
    if isinstance(settings, FitSettings):
        check_data_view(counts, settings)
        settings = settings.model
    scale = counts.scale
    J, K, M = np.asarray(counts.N).shape
    T = scale.n_true
    data = model_data(counts, settings)
    true_values = np.asarray(scale.true_values, dtype=float)
    correct = np.asarray(scale.true_index)  # observed-level position of each true level

    coords = {
        "candidate": list(counts.candidates),
        "judge": list(counts.judges),
        "true_level": list(scale.true_labels),
        "level": list(scale.labels),
    }
    with pm.Model(coords=coords) as model:
        if settings.integrated:
            beta_max = pm.Uniform("beta_max", 0.0, BETA_MAX_UPPER)
        else:
            beta_max = pm.Data("beta_max", data["beta_max"])

        pi = pm.Dirichlet("pi", a=np.ones((K, T)), dims=("candidate", "true_level"))
        pm.Deterministic("expected_score", pt.dot(pi, true_values), dims="candidate")
        rho = pm.Beta("rho", 1.0, 1.0, dims="judge")
        prior = judge_prior_on(settings.prior, M)  # on two levels the ordered prior is weight propagation
        if prior == "ordered":
            theta = _ordered_judge_prior(rho, beta_max, J, T, M, correct)
        else:
            theta = _judge_prior(prior, scale, rho * beta_max, J, T, M, correct)
        theta = pm.Deterministic("theta", theta, dims=("judge", "true_level", "level"))

        if settings.has_random_effects:
            delta = pm.Data("delta", data["delta"], dims="true_level")
            if settings.integrated:
                omega = pm.Uniform("omega", 0.0, OMEGA_UPPER)
            else:
                omega = pm.Data("omega", data["omega"])
            Z = pm.Dirichlet("Z", a=pt.ones((K, 1)) * delta[None, :], dims=("candidate", "true_level"))
            if settings.integrated:
                R = _augmented_beta("R", omega, J, "judge")
                W = _augmented_beta("W", omega, K, "candidate")
            else:
                R = pm.Beta("R", alpha=omega * J, beta=float(J), dims="judge")
                W = pm.Beta("W", alpha=omega * K, beta=float(K), dims="candidate")
            mix = R[:, None] * W[None, :]  # [J, K]
        else:
            Z = mix = None
        if settings.likelihood == "shared-truth":
            pm.Potential("shared_truth_loglik", _shared_truth_loglik(pi, theta, mix, Z, data))
        else:
            if mix is not None:
                m = mix[:, :, None]
                pi_jk = (1.0 - m) * pi[None, :, :] + m * Z[None, :, :]  # [J, K, T]
                gamma = (pi_jk[:, :, :, None] * theta[:, None, :, :]).sum(axis=2)
            else:
                gamma = (pi[None, :, :, None] * theta[:, None, :, :]).sum(axis=2)
            # γ_jk = Σ_m π_k^(j)[m] Θ_j[m, ·] [J, K, M]; excluded pairs have zero counts (n = 0).
            counts_obs = pm.Data("counts_obs", data["counts_obs"], dims=("judge", "candidate", "level"))
            pm.Multinomial(
                "y", n=counts_obs.sum(axis=-1), p=gamma, observed=counts_obs, dims=("judge", "candidate", "level")
            )
    return model


def _augmented_beta(name: str, omega, n: int, dim: str):
    """``name ~ Beta(ωn, n)`` (integrated mode) written exactly as ``logit = logit V − E/(ωn)`` with
    ``V_<name> ~ Beta(1 + ωn, n)`` and ``E_<name> ~ Exponential(1)`` free, ``name`` a Deterministic.

    Why: X ~ Gamma(a) is G·U^{1/a} with G ~ Gamma(a + 1), U ~ Uniform(0, 1) independent, so
    Beta(a, b) = X/(X + Y) has log-odds log(G/Y) − (−log U)/a = logit V − E/a. V's prior stays
    well-conditioned as ω → 0 and E's does not depend on ω: no funnel between ω and the variable."""
    import pymc as pm

    a = omega * n
    V = pm.Beta(f"V_{name}", alpha=1.0 + a, beta=float(n), dims=dim)
    E = pm.Exponential(f"E_{name}", 1.0, dims=dim)
    return pm.Deterministic(name, pm.math.sigmoid(pm.math.logit(V) - E / a), dims=dim)


def shared_truth_emission(theta, mix=None, Z=None):
    """``L[j, k, t, s]``: probability that judge j scores s an answer of candidate k whose true level
    is t, under the shared-truth likelihood (works on numpy arrays and pytensor tensors).

    With random effects, the judge sees the true level with probability ``1 − mix_jk`` (``mix_jk =
    W_k R_j``) and, with probability ``mix_jk``, a level z ~ Z_k drawn afresh for that judgment::

        L[j, k, t, ·] = (1 − mix_jk) Θ_j[t, ·] + mix_jk Σ_z Z_k[z] Θ_j[z, ·]

    so that averaging over t ~ π_k gives the paper's γ_jk exactly. Without random effects L is
    Θ_j[t, ·] for every k (returned as ``[J, 1, T, M]``).
    """
    if mix is None:
        return theta[:, None, :, :]
    zeta = (Z[None, :, :, None] * theta[:, None, :, :]).sum(axis=2)  # [J, K, M]
    m = mix[:, :, None, None]
    return (1.0 - m) * theta[:, None, :, :] + m * zeta[:, :, None, :]


def _shared_truth_loglik(pi, theta, mix, Z, data):
    """Σ over patterns of weight · log Σ_t π_k[t] Π_j L[j, k, t, s_j] (judges with no score drop
    out; a gold answer keeps only its true level t)."""
    import pymc as pm
    import pytensor.tensor as pt

    cand = pm.Data("pattern_candidate", data["pattern_candidate"])
    scores = pm.Data("pattern_scores", data["pattern_scores"])
    truth = pm.Data("pattern_truth", data["pattern_truth"])
    weight = pm.Data("pattern_weight", data["pattern_weight"])
    J = theta.shape[0]
    T = theta.shape[1]
    log_L = pt.log(shared_truth_emission(theta, mix, Z))  # [J, K or 1, T, M]
    log_Lt = log_L.dimshuffle(0, 1, 3, 2)  # [J, K', M, T]
    k_index = cand if mix is not None else pt.zeros_like(cand)
    scored = pt.ge(scores, 0)  # [P, J]
    picked = log_Lt[pt.arange(J)[None, :], k_index[:, None], pt.maximum(scores, 0)]  # [P, J, T]
    per_level = (picked * scored[:, :, None]).sum(axis=1) + pt.log(pi)[cand]  # [P, T]
    gold = pt.ge(truth, 0)[:, None]
    keep = pt.or_(pt.bitwise_not(gold), pt.eq(pt.arange(T)[None, :], truth[:, None]))
    per_level = pt.switch(keep, per_level, -np.inf)
    return (weight * pt.logsumexp(per_level, axis=1)).sum()


def _ordered_judge_prior(rho, beta_max, J: int, T: int, M: int, correct: np.ndarray):
    """Θ [J, T, M] under the ordered (latent-threshold) judge prior; the constants and the reasons are
    those of :func:`simplex_core.model.fast_density._ordered_rows`, written once there."""
    import pymc as pm
    import pytensor.tensor as pt

    from simplex_core.model import fast_density as fd

    s = (1.0 + fd.ORDERED_S_PER_BETA * beta_max) * pt.exp(fd.ORDERED_LOG_S_PER_LOGIT * pm.math.logit(rho))  # [J]
    lenient = pm.Normal("leniency", 0.0, fd.ORDERED_LENIENCY_SD, dims="judge")
    if M > 2:
        gaps = pm.Normal("log_gap", 0.0, fd.ORDERED_GAP_LOG_SD, shape=(J, M - 2))
        cuts = pt.concatenate([pt.full((J, 1), 0.5), 0.5 + pt.cumsum(pt.exp(gaps), axis=1)], axis=1)  # [J, M − 1]
    else:
        cuts = pt.full((J, 1), 0.5)
    z = s[:, None, None] * (cuts[:, None, :] - np.asarray(correct, dtype=float)[None, :, None] - lenient[:, None, None])
    cdf = pm.math.sigmoid(z)  # [J, T, M − 1]: P(score ≤ m | true level t)
    upper = pt.concatenate([cdf, pt.ones((J, T, 1))], axis=2)
    lower = pt.concatenate([pt.zeros((J, T, 1)), cdf], axis=2)
    return pt.clip(upper - lower, fd.ORDERED_FLOOR, 1.0)


def _judge_prior(prior: str, scale: "Scale", strength, J: int, T: int, M: int, correct: np.ndarray):
    """Θ [J, T, M] as a pytensor expression under the chosen judge prior.

    ``strength`` is ρ_j·β_max [J]; ``correct[m]`` the observed position of true level m.
    """
    import pymc as pm
    import pytensor.tensor as pt

    onehots = np.zeros((T, M))
    onehots[np.arange(T), correct] = 1.0
    if prior == "diagonal":
        conc = 1.0 + strength[:, None, None] * onehots[None]
        return pm.Dirichlet("theta_rows", a=conc, dims=("judge", "true_level", "level"))

    first = pm.Dirichlet("theta_first_row", a=1.0 + strength[:, None] * onehots[0][None, :], dims=("judge", "level"))
    if prior == "mixing":
        # Same form as priors.sample_mixing: Θ[m] = (1 − λ_m) Θ[m−1] + λ_m ε_m.
        eps = pm.Dirichlet("innovation", a=1.0 + strength[:, None, None] * onehots[None, 1:])
        lam = pm.Beta("mixing_weight", 1.0, 1.0, shape=(J, T - 1))
        rows = [first]
        for m in range(1, T):
            lm = lam[:, m - 1, None]
            rows.append((1.0 - lm) * rows[-1] + lm * eps[:, m - 1, :])
        return pt.stack(rows, axis=1)

    # weight propagation: one Dirichlet variable per out-degree d, shape [J, n_nodes_d, d]
    wp = weight_propagation_groups(scale)
    edge_weights = {}
    for d, (nodes, boost) in wp.groups.items():
        edge_weights[d] = pm.Dirichlet(f"edge_weights_{d}", a=1.0 + strength[:, None, None] * boost[None])
    position = {node: (d, i) for d, (nodes, _) in wp.groups.items() for i, node in enumerate(nodes)}
    rows = [first]
    for m1 in range(T - 1):
        # Transition matrix A [J, M, M]: row m2 spreads node (m1, m2)'s mass over columns >= m2.
        a_rows = []
        for m2 in range(M):
            if (m1, m2) in position:
                d, i = position[(m1, m2)]
                w = edge_weights[d][:, i, :]
            else:  # single outgoing edge: passes all its mass
                w = pt.ones((J, M - m2))
            a_rows.append(pt.concatenate([pt.zeros((J, m2)), w], axis=1) if m2 else w)
        A = pt.stack(a_rows, axis=1)
        rows.append((rows[-1][:, :, None] * A).sum(axis=1))
    return pt.stack(rows, axis=1)
