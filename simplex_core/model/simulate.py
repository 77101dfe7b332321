"""Simulated judgment data with known truth, drawn from the paper's generative model, and the named
scenarios (``python -m simplex_core simulate SCENARIO``).

This module owns :func:`simulate`, :class:`SimulatedData`, :class:`SimulationSettings`, the scenario
table :data:`SCENARIOS` and :func:`scenario`. Judge matrices come from the numpy samplers of
``simplex_core/model/priors.py``.

The generative model (paper section 5, appendix B; appendix E for self-preference)
---------------------------------------------------------------------------------
For candidates k = 1..K, judges j = 1..J, items i = 1..n on a :class:`~simplex_core.data.scale.Scale`:

1. base prevalences π_k over the true levels (given, or π_k ~ Dirichlet(1));
2. judge confusion matrices Θ_j (given, or from a judge prior with β_max and ρ_j, default the
   weight-propagation prior);
3. random effects (ω > 0 only): Z_k ~ Dirichlet(δ), R_j ~ Beta(ωJ, J), W_k ~ Beta(ωK, K) and the
   perturbed prevalences π_k^(j) = (1 − W_k R_j) π_k + W_k R_j Z_k. ω = 0 means none: π_k^(j) = π_k
   and nothing is sampled for them;
4. for every (item, candidate) a true level T_ik ~ π_k (its value is the ``true_score`` column), and
   for every (item, judge, candidate) the judge's latent level L_ijk ~ π_k^(j) and the observed score
   Ŝ_ijk ~ Θ_j[L_ijk, ·];
5. self-preference (appendix E "Robustness to Self-Preference Bias"): when the judge and the candidate
   share a family, a score below the top observed level is moved to the top observed level with
   probability ``self_preference`` (the paper used 0.8: incorrect or abstain → correct).

How T and L relate (``latent_coupling``). The model's likelihood marginalises one latent level per
(item, judge, candidate) with distribution π_k^(j); the data contract wants one ``true_score`` per
(item, candidate), identical across judges. With ``latent_coupling="shared"`` (default) both come
from one uniform U_ik per (item, candidate): T_ik is the π_k-quantile of U_ik and L_ijk the
π_k^(j)-quantile of the same U_ik. So

* each L_ijk has exactly the marginal π_k^(j) the model assumes, hence the counts N[j, k, ·] are
  multinomial with γ_jk = Σ_m π_k^(j)[m] Θ_j[m, ·] exactly as in the likelihood;
* when ω = 0, L_ijk = T_ik for every judge: one true level per (item, candidate), seen by every judge
  through its own Θ_j — the paper's story (S*_ik) with the model's conditional independence given it;
* when ω > 0, a judge's latent level is the true level shifted monotonically by its perception
  (an inflating judge perceives a level >= the true one), and the population truth stays π_k.

The only thing the model ignores is that the judges' latent levels of one (item, candidate) are
dependent (they share U_ik); appendix B acknowledges that simplification, and it does not change the
distribution of any (judge, candidate) count vector. ``latent_coupling="independent"`` instead
draws every L_ijk independently (the likelihood's assumption taken literally); T_ik is then a
separate draw from π_k, related to the judges' scores only through π_k.

Population truth: E_k = Σ_m v_m π_k[m] with v_m the true level values, ranks 1 = best, ties averaged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from simplex_core.model.priors import JUDGE_PRIORS, parse_delta, sample_judge_matrices
from simplex_core.data.scale import Scale

__all__ = [
    "SCENARIOS",
    "Scenario",
    "SimulatedData",
    "SimulationSettings",
    "ordinal_prevalences",
    "scenario",
    "simulate",
]

LATENT_COUPLINGS: tuple[str, ...] = ("shared", "independent")


@dataclass(frozen=True)
class SimulationSettings:
    """Everything :func:`simulate` was asked for (what is needed to reproduce a draw)."""

    scale: Scale
    n_items: int
    candidates: tuple[str, ...]
    judges: tuple[str, ...]
    omega: float
    delta: tuple[float, ...]
    beta_max: float | None          # None when Θ was given explicitly
    judge_prior: str | None          # None when Θ was given explicitly
    self_preference: float
    latent_coupling: str
    seed: int | None                 # the integer seed, when one was given (None for a Generator)
    scenario: str | None = None


@dataclass(frozen=True)
class SimulatedData:
    """A simulated table in the data contract plus the truth that generated it.

    Attributes
    ----------
    frame
        Columns ``item, candidate, judge, score, true_score`` and, when any family was given,
        ``candidate_family, judge_family`` (None where a model has no family). Items, candidates and
        judges are strings; one row per (item, candidate, judge), sorted in that order.
    scale
        The scale of ``score`` (observed levels) and ``true_score`` (true levels).
    families
        Model name → family, for every judge and candidate that has one.
    pi
        ``[K, M_true]`` base prevalences π_k (the population truth).
    perturbed_pi
        ``[J, K, M_true]`` π_k^(j) (equal to ``pi`` for every judge when ω = 0).
    theta
        ``[J, M_true, M_obs]`` judge confusion matrices (row = true level).
    rho
        ``[J]`` the ρ_j used (NaN when Θ was given).
    R, W, Z
        Random effects ``[J]``, ``[K]``, ``[K, M_true]`` (zeros when ω = 0; Z is still drawn from
        Dirichlet(δ) only when ω > 0, otherwise zeros).
    gamma
        ``[J, K, M_obs]`` score probabilities before self-preference: γ_jk = π_k^(j) @ Θ_j.
    score_probabilities
        ``[J, K, M_obs]`` probabilities of the scores in ``frame`` (after self-preference).
    expected_scores
        ``[K]`` population E_k = Σ_m v_m π_k[m].
    ranks
        ``[K]`` population ranks of E_k, 1 = best, ties averaged.
    self_pairs
        (judge, candidate) pairs of one family (the ones self-preference was injected into).
    settings
        :class:`SimulationSettings`.
    """

    frame: pd.DataFrame
    scale: Scale
    families: dict[str, str]
    pi: np.ndarray
    perturbed_pi: np.ndarray
    theta: np.ndarray
    rho: np.ndarray
    R: np.ndarray
    W: np.ndarray
    Z: np.ndarray
    gamma: np.ndarray
    score_probabilities: np.ndarray
    expected_scores: np.ndarray
    ranks: np.ndarray
    self_pairs: tuple[tuple[str, str], ...]
    settings: SimulationSettings

    @property
    def candidates(self) -> tuple[str, ...]:
        return self.settings.candidates

    @property
    def judges(self) -> tuple[str, ...]:
        return self.settings.judges

    @property
    def population_ranking(self) -> list[str]:
        """Candidates from best to worst by population expected score (ties in input order)."""
        order = np.argsort(-self.expected_scores, kind="stable")
        return [self.candidates[i] for i in order]



# ------------------------------------------------------------------------------------------------
# simulate
# ------------------------------------------------------------------------------------------------

def _names(spec: int | Sequence[str], prefix: str, what: str) -> tuple[str, ...]:
    if isinstance(spec, (int, np.integer)):
        n = int(spec)
        width = len(str(n))
        return tuple(f"{prefix}{i + 1:0{width}d}" for i in range(n))
    names = tuple(str(s) for s in spec)
    if len(set(names)) != len(names):
        dupes = sorted({s for s in names if names.count(s) > 1})
        raise ValueError(f"{what} names must be distinct; repeated: {dupes}.")
    return names


def _check_distributions(arr: np.ndarray, what: str, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(arr, dtype=float)
    if arr.shape != shape:
        raise ValueError(f"{what} has shape {arr.shape}; expected {shape}.")
    if np.any(~np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{what} has negative or non-finite entries; expected probabilities.")
    sums = arr.sum(axis=-1)
    if np.any(np.abs(sums - 1.0) > 1e-8):
        bad = np.argwhere(np.abs(sums - 1.0) > 1e-8)[0].tolist()
        raise ValueError(f"{what} row {bad} sums to {sums[tuple(bad)]:.6g}; every row must sum to 1.")
    return arr / sums[..., None]


def _quantile_level(u: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    """Index of the category whose CDF interval contains u (u in [0, 1)); cdf[..., -1] is ignored,
    so rounding in the last partial sum can never produce an out-of-range index."""
    return (u[..., None] >= cdf[..., :-1]).sum(axis=-1)


def simulate(
    *,
    scale: Scale,
    n_items: int,
    candidates: int | Sequence[str],
    judges: int | Sequence[str],
    pi: np.ndarray | Sequence[Sequence[float]] | None = None,
    theta: np.ndarray | None = None,
    judge_prior: str = "weight-propagation",
    beta_max: float = 5.0,
    rho: float | Sequence[float] | None = None,
    omega: float = 0.0,
    delta: str | Sequence[float] = "inflation",
    candidate_families: Mapping[str, str] | None = None,
    judge_families: Mapping[str, str] | None = None,
    self_preference: float = 0.0,
    latent_coupling: str = "shared",
    rng: np.random.Generator | int | None = None,
    scenario_name: str | None = None,
) -> SimulatedData:
    """Draw a judgment table from the paper's generative model (see the module docstring).

    Parameters
    ----------
    scale
        Observed and true levels.
    n_items
        Number of items n (>= 1); every candidate answers every item and every judge scores every
        answer.
    candidates, judges
        Names, or a count (names ``cand01``…, ``judge1``…).
    pi
        ``[K, M_true]`` base prevalences; ``None`` draws π_k ~ Dirichlet(1).
    theta
        ``[J, M_true, M_obs]`` (or one ``[M_true, M_obs]`` for every judge) confusion matrices;
        ``None`` draws them from ``judge_prior`` with ``beta_max`` and ``rho``.
    judge_prior
        ``weight-propagation`` (default), ``diagonal`` or ``mixing`` (see ``priors.py``).
    beta_max
        β_max >= 0 of the judge prior.
    rho
        ρ_j in [0, 1]: one number for all judges, one per judge, or ``None`` to draw ρ_j ~ Beta(1, 1).
    omega
        ω >= 0, the strength of constancy violation; 0 = no random effects.
    delta
        δ of Z_k ~ Dirichlet(δ): a preset name or numbers (see :func:`priors.parse_delta`).
    candidate_families, judge_families
        Model name → family; names not in them have no family. A judge and a candidate of one family
        form a self pair.
    self_preference
        Probability p in [0, 1] that a self-pair score below the top observed level is moved to it.
    latent_coupling
        ``shared`` (default) or ``independent``: how the judges' latent levels relate to the
        ``true_score`` of an (item, candidate) (module docstring).
    rng
        Generator or integer seed. Draw order is fixed, so one seed gives one frame.
    scenario_name
        Recorded in the settings only.

    Returns
    -------
    SimulatedData

    Raises
    ------
    ValueError
        For any inconsistent input, naming it and what is expected.
    """
    seed = int(rng) if isinstance(rng, (int, np.integer)) else None
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    cand_names = _names(candidates, "cand", "Candidate")
    judge_names = _names(judges, "judge", "Judge")
    K, J = len(cand_names), len(judge_names)
    _check_inputs(n_items, cand_names, judge_names, omega, self_preference, latent_coupling,
                  judge_prior if theta is None else None, candidate_families, judge_families)
    n_items = int(n_items)
    delta_arr = parse_delta(delta, scale.n_true)

    # draws, in a fixed order: one seed gives one frame
    if pi is None:
        pi_arr = gen.dirichlet(np.ones(scale.n_true), size=K)
    else:
        pi_arr = _check_distributions(np.asarray(pi, dtype=float), "pi", (K, scale.n_true))
    theta_arr, rho_arr, used_beta_max, used_prior = _judge_matrices(theta, rho, judge_prior, scale, beta_max, J, gen)
    Z, R, W, perturbed = _random_effects(omega, delta_arr, pi_arr, J, K, gen)
    true_level, observed = _levels(pi_arr, perturbed, theta_arr, n_items, latent_coupling, gen)
    cfam = {c: (candidate_families or {}).get(c) for c in cand_names}
    jfam = {j: (judge_families or {}).get(j) for j in judge_names}
    self_mask = np.array(
        [[jfam[j] is not None and jfam[j] == cfam[c] for c in cand_names] for j in judge_names], dtype=bool
    )
    observed = _prefer_self(observed, self_mask, self_preference, scale.n_levels - 1, gen)
    gamma, probs = _score_probabilities(perturbed, theta_arr, self_mask, self_preference)

    frame, families = _judgment_frame(scale, n_items, cand_names, judge_names, observed, true_level, cfam, jfam)
    expected = pi_arr @ np.asarray(scale.true_values)
    ranks = rankdata(-expected, method="average")
    settings = SimulationSettings(
        scale=scale,
        n_items=n_items,
        candidates=cand_names,
        judges=judge_names,
        omega=float(omega),
        delta=tuple(float(d) for d in delta_arr),
        beta_max=used_beta_max,
        judge_prior=used_prior,
        self_preference=float(self_preference),
        latent_coupling=latent_coupling,
        seed=seed,
        scenario=scenario_name,
    )
    return SimulatedData(
        frame=frame,
        scale=scale,
        families=families,
        pi=pi_arr,
        perturbed_pi=perturbed,
        theta=theta_arr,
        rho=rho_arr,
        R=R,
        W=W,
        Z=Z,
        gamma=gamma,
        score_probabilities=probs,
        expected_scores=expected,
        ranks=ranks,
        self_pairs=tuple(
            (judge_names[j], cand_names[k]) for j, k in zip(*np.nonzero(self_mask))
        ),
        settings=settings,
    )


def _check_inputs(n_items: Any, cand_names: tuple[str, ...], judge_names: tuple[str, ...], omega: float,
                  self_preference: float, latent_coupling: str, judge_prior: str | None,
                  candidate_families: Mapping[str, str] | None, judge_families: Mapping[str, str] | None) -> None:
    """Every inconsistent input at once, in one ValueError (``judge_prior`` None: matrices given)."""
    K, J = len(cand_names), len(judge_names)
    problems = []
    if int(n_items) != n_items or n_items < 1:
        problems.append(f"n_items = {n_items!r}; expected an integer >= 1")
    if K < 2:
        problems.append(f"{K} candidate(s); expected at least 2 to rank")
    if J < 1:
        problems.append("no judges; expected at least 1")
    if not (math.isfinite(omega) and omega >= 0):
        problems.append(f"omega = {omega!r}; expected a finite number >= 0")
    if not (0.0 <= self_preference <= 1.0):
        problems.append(f"self_preference = {self_preference!r}; expected a probability in [0, 1]")
    if latent_coupling not in LATENT_COUPLINGS:
        problems.append(f"latent_coupling = {latent_coupling!r}; expected one of {', '.join(LATENT_COUPLINGS)}")
    if judge_prior is not None and judge_prior not in JUDGE_PRIORS:
        problems.append(f"judge_prior = {judge_prior!r}; expected one of {', '.join(JUDGE_PRIORS)}")
    overlap = set(cand_names) & set(judge_names)
    for name in sorted(overlap):
        cf = (candidate_families or {}).get(name)
        jf = (judge_families or {}).get(name)
        if cf is not None and jf is not None and cf != jf:
            problems.append(f"{name!r} is a judge of family {jf!r} and a candidate of family {cf!r}; one name, one family")
    if problems:
        raise ValueError("Cannot simulate: " + "; ".join(problems) + ".")


def _judge_matrices(theta: np.ndarray | None, rho: float | Sequence[float] | None, judge_prior: str, scale: Scale,
                    beta_max: float, J: int, gen: np.random.Generator):
    """``(Θ [J, M_true, M_obs], ρ [J], β_max used, prior used)``: the matrices given, or drawn from the
    judge prior (ρ drawn from Beta(1, 1) unless given); ρ NaN and no prior when Θ is given."""
    if theta is not None:
        theta_arr = np.asarray(theta, dtype=float)
        if theta_arr.ndim == 2:
            theta_arr = np.broadcast_to(theta_arr, (J,) + theta_arr.shape).copy()
        theta_arr = _check_distributions(theta_arr, "theta", (J, scale.n_true, scale.n_levels))
        return theta_arr, np.full(J, np.nan), None, None
    if rho is None:
        rho_arr = gen.beta(1.0, 1.0, size=J)
    else:
        rho_arr = np.asarray(rho, dtype=float)
        rho_arr = np.full(J, float(rho_arr)) if rho_arr.ndim == 0 else rho_arr
        if rho_arr.shape != (J,):
            raise ValueError(f"rho has {rho_arr.size} values for {J} judges; give one number or one per judge.")
    theta_arr = sample_judge_matrices(judge_prior, scale, beta_max, rho_arr, gen, size=J)
    return theta_arr, rho_arr, float(beta_max), judge_prior


def _random_effects(omega: float, delta: np.ndarray, pi: np.ndarray, J: int, K: int, gen: np.random.Generator):
    """``(Z [K, M_true], R [J], W [K], π_k^(j) [J, K, M_true])``: the constancy violation's draws and
    each judge's perturbed prevalence of each candidate."""
    if omega > 0:
        Z = gen.dirichlet(delta, size=K)
        R = gen.beta(omega * J, J, size=J)
        W = gen.beta(omega * K, K, size=K)
    else:  # ω = 0: exactly no random effects (never a degenerate Beta(0, ·))
        Z, R, W = np.zeros((K, pi.shape[1])), np.zeros(J), np.zeros(K)
    mix = R[:, None] * W[None, :]                                      # [J, K]
    perturbed = (1.0 - mix)[..., None] * pi[None] + mix[..., None] * Z[None]
    return Z, R, W, perturbed / perturbed.sum(axis=-1, keepdims=True)


def _levels(pi: np.ndarray, perturbed: np.ndarray, theta: np.ndarray, n_items: int, latent_coupling: str,
            gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(true level [n, K], observed level [J, n, K])``: an (item, candidate)'s true level, each judge's
    latent level (sharing the true level's uniform draw when ``latent_coupling`` is shared), and the
    observed level drawn from the latent level's row of Θ_j."""
    J, K = perturbed.shape[:2]
    u = gen.random((n_items, K))
    true_level = _quantile_level(u, np.cumsum(pi, axis=-1)[None, :, :])                # [n, K]
    cdf_pert = np.cumsum(perturbed, axis=-1)                                         # [J, K, M]
    if latent_coupling == "shared":
        latent = _quantile_level(np.broadcast_to(u, (J, n_items, K)), cdf_pert[:, None, :, :])
    else:
        latent = _quantile_level(gen.random((J, n_items, K)), cdf_pert[:, None, :, :])
    cdf_theta = np.cumsum(theta, axis=-1)                                            # [J, M_true, M_obs]
    row_cdf = cdf_theta[np.arange(J)[:, None, None], latent]                         # [J, n, K, M_obs]
    return true_level, _quantile_level(gen.random((J, n_items, K)), row_cdf)


def _prefer_self(observed: np.ndarray, self_mask: np.ndarray, p: float, top: int, gen: np.random.Generator) -> np.ndarray:
    """Self-preference: a self pair's score below the top level moved to it with probability ``p``."""
    J, n_items, K = observed.shape
    flip = gen.random((J, n_items, K)) < p
    moved = flip & self_mask[:, None, :] & (observed < top)
    return np.where(moved, top, observed)


def _score_probabilities(perturbed: np.ndarray, theta: np.ndarray, self_mask: np.ndarray,
                         p: float) -> tuple[np.ndarray, np.ndarray]:
    """``(γ [J, K, M_obs], the score probabilities with self-preference)``."""
    top = theta.shape[-1] - 1
    gamma = np.einsum("jkm,jmo->jko", perturbed, theta)
    probs = gamma.copy()
    probs[self_mask] = probs[self_mask] * (1.0 - p)
    probs[self_mask, top] = gamma[self_mask, top] + p * (1.0 - gamma[self_mask, top])
    return gamma, probs


def _judgment_frame(scale: Scale, n_items: int, cand_names: tuple[str, ...], judge_names: tuple[str, ...],
                    observed: np.ndarray, true_level: np.ndarray, cfam: Mapping[str, str | None],
                    jfam: Mapping[str, str | None]) -> tuple[pd.DataFrame, dict[str, str]]:
    """The long judgment table, rows ordered item, candidate, judge, and the families that are set."""
    J, K = len(judge_names), len(cand_names)
    values = np.asarray(scale.values)
    true_values = np.asarray(scale.true_values)
    integer_scale = all(float(v).is_integer() for v in scale.values)
    width = len(str(n_items))
    items = np.array([f"item{i + 1:0{width}d}" for i in range(n_items)], dtype=object)
    # rows ordered item, candidate, judge: move the judge axis last
    obs_ikj = np.transpose(observed, (1, 2, 0))
    ii, kk, jj = np.meshgrid(np.arange(n_items), np.arange(K), np.arange(J), indexing="ij")
    score = values[obs_ikj.ravel()]
    truth = true_values[np.broadcast_to(true_level[:, :, None], (n_items, K, J)).ravel()]
    if integer_scale:
        score, truth = score.astype(np.int64), truth.astype(np.int64)
    cand_arr = np.array(cand_names, dtype=object)
    judge_arr = np.array(judge_names, dtype=object)
    columns: dict[str, Any] = {
        "item": items[ii.ravel()],
        "candidate": cand_arr[kk.ravel()],
        "judge": judge_arr[jj.ravel()],
        "score": score,
        "true_score": truth,
    }
    families = {name: fam for name, fam in {**cfam, **jfam}.items() if fam is not None}
    if families:
        columns["candidate_family"] = np.array([cfam[c] for c in cand_names], dtype=object)[kk.ravel()]
        columns["judge_family"] = np.array([jfam[j] for j in judge_names], dtype=object)[jj.ravel()]
    return pd.DataFrame(columns), families


# ------------------------------------------------------------------------------------------------
# Scenarios
# ------------------------------------------------------------------------------------------------

def ordinal_prevalences(qualities: Sequence[float], n_true: int) -> np.ndarray:
    """Prevalences that increase in quality: π_k[m] ∝ exp(q_k · (m − (n_true − 1)/2)).

    Higher q puts more mass on higher levels, and E_k increases strictly with q_k (an exponential
    family in the level index), so a list of distinct qualities fixes the population ranking.
    """
    q = np.asarray(qualities, dtype=float)[:, None]
    centred = np.arange(n_true) - (n_true - 1) / 2
    logits = q * centred[None, :]
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class Scenario:
    """A named simulation setting: fixed population truth (π, families, judges' ρ), while the
    judges' matrices, random effects and data vary with the seed.

    Attributes
    ----------
    name, description
        The scenario's name (CLI argument) and what it is for.
    scale
        Its scale.
    candidates
        ``(name, family or None, π row)`` per candidate.
    judges
        ``(name, family or None, ρ)`` per judge.
    n_items, omega, delta, beta_max, self_preference
        As in :func:`simulate`.
    """

    name: str
    description: str
    scale: Scale
    candidates: tuple[tuple[str, str | None, tuple[float, ...]], ...]
    judges: tuple[tuple[str, str | None, float], ...]
    n_items: int
    omega: float
    delta: str
    beta_max: float
    self_preference: float = 0.0

    def simulate(self, seed: np.random.Generator | int | None, **overrides: Any) -> SimulatedData:
        """Draw this scenario; ``overrides`` replace any :func:`simulate` keyword (e.g. n_items)."""
        kwargs: dict[str, Any] = dict(
            scale=self.scale,
            n_items=self.n_items,
            candidates=[c[0] for c in self.candidates],
            judges=[j[0] for j in self.judges],
            pi=np.array([c[2] for c in self.candidates]),
            rho=[j[2] for j in self.judges],
            beta_max=self.beta_max,
            omega=self.omega,
            delta=self.delta,
            candidate_families={c[0]: c[1] for c in self.candidates if c[1] is not None},
            judge_families={j[0]: j[1] for j in self.judges if j[1] is not None},
            self_preference=self.self_preference,
            scenario_name=self.name,
        )
        kwargs.update(overrides)
        return simulate(rng=seed, **kwargs)


def _binary(accuracy: float) -> tuple[float, float]:
    return (round(1.0 - accuracy, 10), accuracy)


# GPQA-like: 19 candidates from 8 families with accuracies 0.30..0.84 (interleaved so that a family
# is not a block of the ranking); the two judges' families each own 3 candidates.
_GPQA_CANDIDATES: tuple[tuple[str, str, float], ...] = (
    ("claude-opus", "anthropic", 0.78),
    ("claude-sonnet", "anthropic", 0.63),
    ("claude-haiku", "anthropic", 0.42),
    ("gpt-4o", "openai", 0.72),
    ("gpt-4o-mini", "openai", 0.48),
    ("o1-mini", "openai", 0.84),
    ("gemini-pro", "google", 0.69),
    ("gemini-flash", "google", 0.54),
    ("gemma-27b", "google", 0.33),
    ("llama-405b", "meta", 0.60),
    ("llama-70b", "meta", 0.45),
    ("llama-8b", "meta", 0.30),
    ("mistral-large", "mistral", 0.57),
    ("mixtral-8x7b", "mistral", 0.36),
    ("qwen-72b", "qwen", 0.66),
    ("qwen-7b", "qwen", 0.39),
    ("deepseek-v3", "deepseek", 0.75),
    ("deepseek-lite", "deepseek", 0.51),
    ("grok-2", "xai", 0.81),
)

_THREE_QUALITIES = (-1.5, -0.8, -0.2, 0.4, 1.0, 1.7)
_FIVE_QUALITIES = (-1.0, -0.7, -0.4, -0.1, 0.2, 0.5, 0.8, 1.1)

#: The named scenarios (``python -m simplex_core simulate NAME``). π and ρ are fixed per scenario so
#: that replicates (different seeds) share the population ranking.
SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            name="gpqa-like",
            description=(
                "Binary truth (-1 incorrect, 1 correct) with an observed abstain level 0 (unsure), like the "
                "paper's GPQA set-up: 19 candidates from 8 families, 2 judges (claude-judge of family "
                "anthropic, gpt-judge of family openai, 3 own-family candidates each), 448 items. "
                "Self-preference as in appendix E: a self-family score of incorrect/unsure becomes "
                "correct with probability 0.8. Constancy is violated (ω = 2, δ inflation); judges from the "
                "weight-propagation prior with β_max = 5, ρ = 0.8 and 0.6."
            ),
            scale=Scale((-1.0, 0.0, 1.0), ("incorrect", "unsure", "correct"), (-1.0, 1.0)),
            candidates=tuple((n, f, _binary(a)) for n, f, a in _GPQA_CANDIDATES),
            judges=(("claude-judge", "anthropic", 0.8), ("gpt-judge", "openai", 0.6)),
            n_items=448,
            omega=2.0,
            delta="inflation",
            beta_max=5.0,
            self_preference=0.8,
        ),
        Scenario(
            name="three-level",
            description=(
                "3 levels 1..3 (square), 6 candidates of well-separated quality, 3 judges of varying "
                "quality (ρ = 0.9, 0.7, 0.5; β_max = 5), 200 items, perfect constancy (ω = 0), no "
                "families. The small scenario for recovery checks."
            ),
            scale=Scale((1.0, 2.0, 3.0)),
            candidates=tuple(
                (f"model-{chr(ord('A') + i)}", None, tuple(row))
                for i, row in enumerate(ordinal_prevalences(_THREE_QUALITIES, 3).tolist())
            ),
            judges=(("judge-1", None, 0.9), ("judge-2", None, 0.7), ("judge-3", None, 0.5)),
            n_items=200,
            omega=0.0,
            delta="inflation",
            beta_max=5.0,
        ),
        Scenario(
            name="five-level-nonconstant",
            description=(
                "5 levels 1..5 (square), 8 candidates, 4 judges (ρ = 0.9, 0.8, 0.6, 0.4; β_max = 5), "
                "300 items, with constancy strongly violated: random effects with ω = 4 (about 64% of "
                "each judge's perceived prevalence comes from the inflation-leaning direction Z_k, "
                "δ inflation), so judges disagree about candidates beyond their confusion matrices."
            ),
            scale=Scale((1.0, 2.0, 3.0, 4.0, 5.0)),
            candidates=tuple(
                (f"model-{i + 1}", None, tuple(row))
                for i, row in enumerate(ordinal_prevalences(_FIVE_QUALITIES, 5).tolist())
            ),
            judges=(("judge-1", None, 0.9), ("judge-2", None, 0.8), ("judge-3", None, 0.6), ("judge-4", None, 0.4)),
            n_items=300,
            omega=4.0,
            delta="inflation",
            beta_max=5.0,
        ),
    )
}


def scenario(name: str, seed: np.random.Generator | int | None = 0, **overrides: Any) -> SimulatedData:
    """Simulate the named scenario (see :data:`SCENARIOS`) with ``seed``; ``overrides`` replace any
    :func:`simulate` keyword (e.g. ``n_items=50``).

    Raises
    ------
    ValueError
        For an unknown name (listing the known ones).
    """
    try:
        spec = SCENARIOS[name]
    except KeyError:
        raise ValueError(f"Unknown scenario {name!r}; expected one of {', '.join(SCENARIOS)}.") from None
    return spec.simulate(seed, **overrides)
