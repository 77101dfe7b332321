"""Move a fitted posterior to another ω / β_max by importance reweighting.

ω and β_max enter only the prior (the likelihood never sees them), so for a posterior fitted at
``source`` the posterior at ``target`` is the same distribution times the prior ratio::

    p_target(θ | y) ∝ p_source(θ | y) · p_target(θ) / p_source(θ)

and the draws of the source fit, weighted by that ratio, are draws of the target posterior up to
Monte Carlo error. The raw ratios are Pareto-smoothed (PSIS, Vehtari, Simpson, Gelman, Yao & Gabry
2024, ArviZ's :func:`arviz.psislw`), whose shape estimate k̂ says when the weights can be trusted:
k̂ ≤ 0.7 is usable (:data:`KHAT_OK`), above it the answer needs a real fit. The importance
effective sample size ``1 / Σ w̃²`` (smoothed, normalised weights) is reported with it.

The prior terms that depend on ω and β_max (every other term cancels in the ratio, and so does
every change-of-variables Jacobian, since source and target share the parameterisation)::

    R_j ~ Beta(ωJ, J),  W_k ~ Beta(ωK, K)                                    (ω)
    every Dirichlet(1 + ρ_j β_max on one "boosted" cell) of judge j's prior  (β_max)

    (ordered judge prior) the logistic prior of log s_j, located at log(1 + 0.4 β_max) (β_max)

(the ordered prior's ρ_j is the discrimination's quantile, so a β_max move is read at fixed s_j:
:func:`_ordered_log_ratio`)

A Dirichlet of size d with concentration 1 + s on one cell has log density
``lgamma(d + s) − lgamma(1 + s) + s · log p_boosted`` (+ terms free of s), so the β_max part needs,
per draw and judge, only ρ_j and ``boost_log_j = Σ log p_boosted`` over that judge's boosted
Dirichlets (their sizes d are fixed by the scale). The ``fast`` engine stores ``boost_log`` in the
posterior (computed from its unconstrained draws, see :func:`boost_log_from_unconstrained`); with
the PyMC engines it is read from the stored Dirichlet variables (``edge_weights_<d>``,
``theta_rows``, ``innovation``). Checked term by term against the model's own log density
(``fast_density.tempered_logp_grad`` at likelihood power 0) in ``tests/test_reweighting.py``.

Structure. ω = 0 builds a model without the random effects R, W, Z (a different parameter space),
so a fit at ω = 0 can only move β_max, and a target at ω = 0 needs a source at ω = 0; between
ω > 0 settings anything moves (small ω piles R and W up at 0, so k̂ grows as ω → 0: the limit is
the ω = 0 model, reached only by a real fit). Integrated fits (ω, β_max random) are not reweighted.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
from scipy.special import betaln, gammaln

__all__ = ["KHAT_OK", "PriorDraws", "Reweighted", "ReweightError", "best_source", "boost_log_from_unconstrained",
           "boosted_node_sizes", "log_prior_ratio", "prior_draws", "resampled_posterior", "reweight",
           "structure_problem", "systematic_resample"]

#: PSIS k̂ at or below this: the reweighted answer is usable (Vehtari et al.'s threshold).
KHAT_OK = 0.7


class ReweightError(ValueError):
    """The fit cannot be reweighted to the target (the message says why, in plain words)."""


# -- which Dirichlets carry β_max -------------------------------------------------------------------

def boosted_node_sizes(prior: str, scale: Any) -> np.ndarray:
    """Sizes d of one judge's Dirichlets that carry ``1 + ρ β_max`` on a cell, for ``prior`` and
    ``scale`` (the same for every judge), in the order :func:`boost_log_from_unconstrained` sums."""
    from simplex_core.model.priors import judge_prior_on

    M, T = scale.n_levels, scale.n_true
    correct = list(scale.true_index)
    prior = judge_prior_on(prior, M)
    if prior == "ordered":  # no Dirichlet: β_max does not enter this prior
        return np.zeros(0, dtype=int)
    if prior == "diagonal":
        return np.full(T, M)
    if prior == "mixing":
        return np.full(T, M)  # first row + T − 1 innovations, each over all observed levels
    sizes = [M]  # the first row
    for t in range(T - 1):
        tgt = correct[t + 1]
        sizes += [M - m2 for m2 in range(M - 1) if tgt >= m2]
    return np.asarray(sizes)


def boost_log_from_unconstrained(x: np.ndarray, J: int, K: int, M: int, T: int, true_index: Sequence[int],
                                 prior: str) -> np.ndarray:
    """``boost_log`` ``[..., J]`` from draws ``x [..., n]`` of the ``fast`` engine's unconstrained
    vector under judge prior ``prior`` (layout in :mod:`simplex_core.model.fast_density`'s docstring: π,
    ρ, first rows, then each judge's block), summed in the order of :func:`boosted_node_sizes`.

    Every simplex is PyMC's centred softmax ``p = softmax([y, −Σy])``."""
    from simplex_core.model.fast_density import PRIOR_CODES, coordinate_offsets, row_block

    from simplex_core.model.priors import judge_prior_on

    x = np.asarray(x, dtype=float)
    prior = judge_prior_on(prior, M)
    if prior == "ordered":  # nothing of this prior carries β_max
        return np.zeros(x.shape[:-1] + (J,))
    per_row = int(row_block(M, PRIOR_CODES[prior]))  # coordinates per row 1..T−1 of a judge's block
    o_first, o_block = (int(o) for o in coordinate_offsets(J, K, M, T, (T - 1) * per_row, 1)[2:4])

    def log_simplex(y: np.ndarray) -> np.ndarray:
        z = np.concatenate([y, -y.sum(axis=-1, keepdims=True)], axis=-1)
        zmax = z.max(axis=-1, keepdims=True)
        return z - (zmax + np.log(np.exp(z - zmax).sum(axis=-1, keepdims=True)))

    first = x[..., o_first:o_block].reshape(x.shape[:-1] + (J, M - 1))
    out = log_simplex(first)[..., int(true_index[0])]
    block = x[..., o_block:o_block + J * (T - 1) * per_row].reshape(x.shape[:-1] + (J, T - 1, per_row))
    for t in range(T - 1):
        tgt = int(true_index[t + 1])
        if prior != "weight-propagation":  # the row (diagonal) or the innovation (mixing) over all levels
            out = out + log_simplex(block[..., t, :M - 1])[..., tgt]
            continue
        pos = 0
        for m2 in range(M - 1):
            d = M - m2
            if tgt >= m2:
                out = out + log_simplex(block[..., t, pos:pos + d - 1])[..., tgt - m2]
            pos += d - 1
    return out


def _boost_log_from_pymc_vars(post: Any, prior: str, scale: Any) -> np.ndarray | None:
    """``boost_log [S, J]`` from the constrained Dirichlet variables the PyMC engines store."""
    from simplex_core.model.definition import weight_propagation_groups

    def flat(name: str) -> np.ndarray:
        a = np.asarray(post[name].values)
        return a.reshape((-1,) + a.shape[2:])

    from simplex_core.model.priors import judge_prior_on

    correct = np.asarray(scale.true_index)
    T = scale.n_true
    prior = judge_prior_on(prior, scale.n_levels)
    if prior == "ordered":
        return None if "rho" not in post else np.zeros(flat("rho").shape)
    if prior == "diagonal":
        if "theta" not in post:
            return None
        th = flat("theta")  # [S, J, T, M]: the rows are the Dirichlets themselves
        return np.log(th[:, :, np.arange(T), correct]).sum(axis=-1)
    if "theta" not in post:
        return None
    out = np.log(flat("theta")[:, :, 0, correct[0]])  # the first row is Θ[0]
    if prior == "mixing":
        if "innovation" not in post:
            return None
        eps = flat("innovation")  # [S, J, T-1, M]
        return out + np.log(eps[:, :, np.arange(T - 1), correct[1:]]).sum(axis=-1)
    for d, (nodes, boost) in weight_propagation_groups(scale).groups.items():
        name = f"edge_weights_{d}"
        if name not in post:
            return None
        w = flat(name)  # [S, J, n_nodes, d]
        for i in range(len(nodes)):
            if boost[i].any():
                out = out + np.log(w[:, :, i, int(np.argmax(boost[i]))])
    return out


# -- the draws the ratio needs --------------------------------------------------------------------

@dataclass(frozen=True)
class PriorDraws:
    """What the prior ratio reads from a fit: per draw ρ, boost_log (``[S, J]``), and, with random
    effects, log R, log(1 − R) ``[S, J]`` and log W, log(1 − W) ``[S, K]``; plus the fit's settings
    and its draws of E (``[S, K]``) with the candidates' names."""

    settings: Any
    node_sizes: np.ndarray
    rho: np.ndarray
    boost_log: np.ndarray
    log_r: np.ndarray | None
    log1m_r: np.ndarray | None
    log_w: np.ndarray | None
    log1m_w: np.ndarray | None
    expected_score: np.ndarray
    candidates: tuple[str, ...]
    #: δ draws [S, K] of the source fit (:mod:`simplex_core.inference.rater_deviation`): the truth's
    #: rank is that of E + δ; a reweighted posterior carries the source's δ with its draws
    rater_deviation: np.ndarray | None = None
    #: the source fit's record of δ (τ_0, each τ_j, why zero), so an approximate view can say what its
    #: rank intervals include as the fit's own view does
    rater_deviation_record: str = ""

    @property
    def ordered(self) -> bool:
        """Whether the judge prior is the ordered one (on two levels the ordered setting is weight
        propagation, :func:`simplex_core.model.priors.judge_prior_on`, whose Dirichlets these sizes are)."""
        return self.settings.prior == "ordered" and self.node_sizes.size == 0

    @property
    def n_draws(self) -> int:
        return int(self.rho.shape[0])

    def log_dirichlet_norms(self, beta_max: float) -> np.ndarray:
        """Per draw and judge ``[S, J]``, Σ over the judge's boosted Dirichlet nodes of
        log Γ(d + ρβ) − log Γ(1 + ρβ) at ``beta_max``. The source's own (at its fitted β_max) is
        kept: every reweighting of these draws needs it (the fine sweep 41 times)."""
        if beta_max == self.settings.beta_max:
            return self._own_log_dirichlet_norms
        return _log_dirichlet_norms(self.rho, self.node_sizes, beta_max)

    @functools.cached_property
    def _own_log_dirichlet_norms(self) -> np.ndarray:
        return _log_dirichlet_norms(self.rho, self.node_sizes, self.settings.beta_max)


def _log_dirichlet_norms(rho: np.ndarray, node_sizes: np.ndarray, beta_max: float) -> np.ndarray:
    sb = rho[..., None] * beta_max
    return (gammaln(node_sizes.astype(float) + sb) - gammaln(1.0 + sb)).sum(axis=-1)


def _settings_of(fit: Any) -> Any:
    import json

    from simplex_core.model.settings import FitSettings

    s = getattr(fit, "settings", None)
    if s is not None:
        return s
    attrs = getattr(fit, "idata", fit).posterior.attrs
    if "settings" not in attrs:
        raise ReweightError("this posterior does not record its settings, so its prior is unknown.")
    return FitSettings.from_dict(json.loads(attrs["settings"]))


def prior_draws(fit: Any) -> PriorDraws:
    """Read what :func:`log_prior_ratio` needs from a fit (a FitResult or its InferenceData)."""
    import json

    from simplex_core.data.scale import Scale

    idata = getattr(fit, "idata", fit)
    post = idata.posterior
    settings = _settings_of(fit)
    if settings.integrated:
        raise ReweightError("an integrated fit (ω and β_max random) has no fixed ω and β_max to move from.")
    counts = getattr(fit, "counts", None)
    scale = counts.scale if counts is not None else Scale.from_dict(json.loads(post.attrs["scale"]))

    def flat(name: str) -> np.ndarray:
        a = np.asarray(post[name].values, dtype=float)
        return a.reshape((-1,) + a.shape[2:])

    boost: np.ndarray | None
    if "boost_log" in post:
        boost = flat("boost_log")
    else:
        boost = _boost_log_from_pymc_vars(post, settings.prior, scale)
        if boost is None:
            raise ReweightError("this fit does not carry the judge-prior draws that reweighting needs (it predates "
                                "them, or was thinned): it can only be refitted.")
    re = _random_effect_logs(flat("R"), flat("W")) if settings.has_random_effects else _NO_RANDOM_EFFECTS
    e = flat("expected_score")
    delta = flat("rater_deviation") if "rater_deviation" in post else None
    return PriorDraws(settings, boosted_node_sizes(settings.prior, scale), flat("rho"), boost, *re, e,
                      tuple(str(c) for c in post["candidate"].values), delta,
                      str(post.attrs.get("rater_deviation", "") or ""))


_RandomEffectLogs = tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None, np.ndarray | None]
_NO_RANDOM_EFFECTS: _RandomEffectLogs = (None, None, None, None)  # ω = 0: no R, no W


def _random_effect_logs(R: np.ndarray, W: np.ndarray) -> _RandomEffectLogs:
    """log R, log(1 − R), log W, log(1 − W) of the draws, finite at the ends."""
    with np.errstate(divide="ignore"):
        R, W = np.clip(R, 1e-300, 1.0), np.clip(W, 1e-300, 1.0)
        return np.log(R), np.log1p(-np.minimum(R, 1 - 1e-16)), np.log(W), np.log1p(-np.minimum(W, 1 - 1e-16))


def prior_draws_from_file(path: Any, settings: Any, scale: Any) -> PriorDraws:
    """:func:`prior_draws` of the fit at ``settings`` stored in the NetCDF file ``path`` (a fit
    cache entry's ``posterior.nc``), reading only the five variables it needs with h5py: about
    0.02 s where reading the whole InferenceData back takes 0.3 s, the time a slider move waited
    for each source not yet in memory. ReweightError when the file lacks them (an older fit:
    :func:`prior_draws` of the whole fit may still rebuild ``boost_log``); OSError or KeyError when
    it does not read."""
    import h5py

    with h5py.File(path, "r") as f:
        post = f["posterior"]
        needed = ("rho", "boost_log", "expected_score", "rater_deviation") + (
            ("R", "W") if settings.has_random_effects else ())
        missing = [n for n in needed if n not in post]
        if missing:
            raise ReweightError(f"the stored fit lacks {', '.join(missing)}: read the whole fit instead.")

        def flat(name: str) -> np.ndarray:
            a = np.asarray(post[name][()], dtype=float)
            return a.reshape((-1,) + a.shape[2:])

        candidates = tuple(c.decode() if isinstance(c, bytes) else str(c) for c in post["candidate"][()])
        rho, boost, e, delta = flat("rho"), flat("boost_log"), flat("expected_score"), flat("rater_deviation")
        record = post.attrs.get("rater_deviation", b"")
        record = record.decode() if isinstance(record, bytes) else str(record)
        R = W = None
        if settings.has_random_effects:
            R, W = flat("R"), flat("W")
    re = _random_effect_logs(R, W) if R is not None and W is not None else _NO_RANDOM_EFFECTS
    return PriorDraws(settings, boosted_node_sizes(settings.prior, scale), rho, boost, *re, e, candidates, delta,
                      record)


def structure_problem(source: Any, target: Any) -> str | None:
    """Why a fit at ``source`` settings cannot be reweighted to ``target`` (None when it can)."""
    if source.integrated or target.integrated:
        return "integrated fits (ω and β_max random) are not reweighted."
    for name in ("prior", "likelihood", "delta", "self_exclusion"):
        if getattr(source, name) != getattr(target, name):
            return f"the {name.replace('_', ' ')} differs ({getattr(source, name)!r} vs {getattr(target, name)!r})."
    if source.has_random_effects != target.has_random_effects:
        return ("ω = 0 has no random effects (another model, not another prior on the same parameters): moving "
                "between ω = 0 and ω > 0 needs a fit on the same side.")
    return None


def log_prior_ratio(draws: PriorDraws, omega: float, beta_max: float) -> np.ndarray:
    """``log p_target(θ_s) − log p_source(θ_s)`` per draw ``[S]`` for target (ω, β_max) (the source
    is ``draws.settings``; same structure assumed, see :func:`structure_problem`)."""
    src = draws.settings
    out = np.zeros(draws.n_draws)
    if beta_max != src.beta_max and draws.ordered:
        out += _ordered_log_ratio(draws.rho, src.beta_max, beta_max)
    elif beta_max != src.beta_max:
        s1, s0 = draws.rho * beta_max, draws.rho * src.beta_max  # [S, J]
        out += (draws.log_dirichlet_norms(beta_max) - draws.log_dirichlet_norms(src.beta_max)
                + (s1 - s0) * draws.boost_log).sum(axis=-1)
    if omega != src.omega and draws.log_r is not None and draws.log_w is not None:  # both or neither
        J, K = draws.log_r.shape[1], draws.log_w.shape[1]
        for n, lx in ((J, draws.log_r), (K, draws.log_w)):
            # Beta(ωn, n): (ωn − 1) log x + (n − 1) log(1 − x) − B(ωn, n); only ω-terms remain
            out += ((omega - src.omega) * n * lx).sum(axis=-1) - lx.shape[1] * (betaln(omega * n, n) - betaln(src.omega * n, n))
    return out


def _ordered_log_ratio(rho: np.ndarray, beta_from: float, beta_to: float) -> np.ndarray:
    """Per draw ``[S]``: the ordered judge prior's log density ratio of the draws' discriminations
    s_j, from β_max ``beta_from`` (where ρ was sampled) to ``beta_to``. log s_j = log(1 + c β_max) +
    κ logit ρ_j with ρ_j ~ Beta(1, 1), so log s_j is logistic with location log(1 + c β_max) and scale
    κ (:mod:`simplex_core.model.fast_density`'s constants): the same s_j sits at logit ρ'_j = logit ρ_j
    + (log(1 + c β_from) − log(1 + c β_to))/κ under the target, and the ratio is that of the logistic
    densities (the Jacobian, 1/κ, cancels)."""
    from scipy.special import log_expit, logit

    from simplex_core.model.fast_density import ORDERED_LOG_S_PER_LOGIT, ORDERED_S_PER_BETA

    u = logit(np.clip(rho, 1e-300, 1.0 - 1e-16))
    shift = (np.log1p(ORDERED_S_PER_BETA * beta_from) - np.log1p(ORDERED_S_PER_BETA * beta_to)) / ORDERED_LOG_S_PER_LOGIT
    v = u + shift
    return (log_expit(v) + log_expit(-v) - log_expit(u) - log_expit(-u)).sum(axis=-1)


# -- the result ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Reweighted:
    """A fit's draws weighted to a target setting.

    Attributes
    ----------
    source, target
        The settings fitted and the settings reweighted to.
    weights
        Normalised PSIS weights ``[S]``.
    khat
        Pareto k̂ of the raw weights (≤ :data:`KHAT_OK`: usable; 0 when nothing moved).
    ess
        Importance effective sample size ``1 / Σ w²`` (of ``n_draws``; MCMC draws are correlated,
        so this is an upper bound of the information).
    """

    source: Any
    target: Any
    weights: np.ndarray
    khat: float
    ess: float
    n_draws: int

    @property
    def reliable(self) -> bool:
        return bool(math.isfinite(self.khat) and self.khat <= KHAT_OK)

    def describe(self) -> str:
        """One line: ``approximate (reweighted from ω = 1, β_max = 5): k̂ = 0.31, ESS 1800 of 4000``."""
        from_ = f"ω = {self.source.omega:g}, β_max = {self.source.beta_max:g}"
        verdict = "" if self.reliable else f" (k̂ > {KHAT_OK}: not trustworthy, needs a real fit)"
        return (f"approximate (reweighted from the fit at {from_}): k̂ = {self.khat:.2f}, ESS {self.ess:.0f} of "
                f"{self.n_draws} draws{verdict}")


def _reweight_draws(draws: PriorDraws, target: Any) -> Reweighted:
    import arviz as az

    problem = structure_problem(draws.settings, target)
    if problem:
        raise ReweightError(problem)
    lw = log_prior_ratio(draws, float(target.omega), float(target.beta_max))
    S = lw.size
    if not np.any(lw != 0.0):
        return Reweighted(draws.settings, target, np.full(S, 1.0 / S), 0.0, float(S), S)
    lw = np.where(np.isfinite(lw), lw, -np.inf)
    import warnings

    with warnings.catch_warnings():  # ArviZ warns on k̂ > 0.7; the caller reports it in words
        warnings.simplefilter("ignore")
        smoothed, khat = az.psislw(lw - np.max(lw))
    w = np.exp(smoothed - np.max(smoothed))
    w /= w.sum()
    return Reweighted(draws.settings, target, w, float(khat), float(1.0 / np.sum(w ** 2)), S)


def reweight(fit: Any, target: Any) -> Reweighted:
    """Weights that move ``fit`` (a FitResult or its InferenceData) to ``target`` settings.

    Raises
    ------
    ReweightError
        When the structures differ (ω = 0 vs ω > 0, another prior, likelihood or δ; integrated
        fits) or the fit lacks the judge-prior draws.
    """
    return _reweight_draws(prior_draws(fit), target)


def best_source(candidates: Iterable[tuple[Any, PriorDraws]], target: Any) -> tuple[Any, Reweighted] | None:
    """Among ``(key, prior_draws)`` pairs of fits of the same data, the one whose reweighting to
    ``target`` has the lowest k̂ (ties: larger ESS); None when none has the target's structure."""
    best = None
    for key, draws in candidates:
        if structure_problem(draws.settings, target):
            continue
        rw = _reweight_draws(draws, target)
        score = (rw.khat if math.isfinite(rw.khat) else math.inf, -rw.ess)
        if best is None or score < best[0]:
            best = (score, key, rw)
    return None if best is None else (best[1], best[2])


# -- the reweighted posterior as draws --------------------------------------------------------------

def systematic_resample(weights: np.ndarray, n: int | None = None, seed: int = 0) -> np.ndarray:
    """Indices of ``n`` draws (default: as many as weights) by systematic resampling (low variance,
    deterministic given ``seed``): draw ``s`` appears about ``n · w_s`` times."""
    w = np.asarray(weights, dtype=float).ravel()
    if not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise ValueError("weights must be finite, non-negative and not all zero.")
    w = w / w.sum()
    n = w.size if n is None else int(n)
    u = (np.random.default_rng(seed).uniform() + np.arange(n)) / n
    return np.minimum(np.searchsorted(np.cumsum(w), u), w.size - 1)


def resampled_posterior(draws: PriorDraws, rw: Reweighted, seed: int = 0) -> Any:
    """The reweighted posterior of E as plain draws: an InferenceData whose ``posterior`` holds
    ``expected_score`` and ``rank`` (one chain) of the source's draws systematically resampled by
    ``rw.weights``, so that every summary of a fit (candidate table, rank draws, pairwise, leaderboard)
    reads it unchanged. Its ``attrs`` say it is approximate (``approximate``: the reweighting's k̂,
    ESS and source) and carry the target's settings. Resampling adds a little Monte Carlo noise to
    the weighted answer, the price of one set of draws behind every view."""
    import json

    import arviz as az
    import xarray as xr

    from simplex_core.model.ranks import ranks_from_scores

    if rw.weights.shape != (draws.n_draws,):
        raise ValueError(f"{rw.weights.size} weights for {draws.n_draws} draws.")
    idx = systematic_resample(rw.weights, draws.n_draws, seed)
    e = draws.expected_score[idx]
    delta = np.zeros_like(e) if draws.rater_deviation is None else draws.rater_deviation[idx]
    coords = {"chain": [0], "draw": np.arange(e.shape[0]), "candidate": list(draws.candidates)}
    dims = ("chain", "draw", "candidate")
    post = xr.Dataset({"expected_score": (dims, e[None]), "rater_deviation": (dims, delta[None]),
                       "expected_rank": (dims, ranks_from_scores(e)[None]),
                       "rank": (dims, ranks_from_scores(e + delta)[None])}, coords=coords)
    post.attrs["approximate"] = rw.describe()
    if draws.rater_deviation_record:
        post.attrs["rater_deviation"] = draws.rater_deviation_record
    post.attrs["settings"] = json.dumps(rw.target.to_dict()) if hasattr(rw.target, "to_dict") else ""
    return az.InferenceData(posterior=post)
