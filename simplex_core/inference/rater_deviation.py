"""The truth as one more rater: candidate-specific rater deviation in the rank intervals.

The simplex model says every judge sees a candidate through the same confusion matrix, whatever the
candidate. Real judges do not: a judge favours some candidates' style or length over others' (a
judge × candidate deviation no per-judge matrix absorbs), and the human truth is one more rater with
deviations of its own. The model's E_k is the candidate's expected true score *as the panel sees it*;
the truth a benchmark compares with differs from it by

    δ_k ~ N(0, τ_0² + Σ_{j ∈ J_k} τ_j² / |J_k|²)

— the panel's own deviation (the mean of its |J_k| judges' deviations on candidate k, each of SD τ_j)
plus the truth rater's (SD τ_0). ``rank`` is then the rank of E_k + δ_k.

How the τ are learnt (a two-stage, "cut" model: the deviations are estimated from the fitted model's
residuals and do not feed back into π and θ, so the posterior of the simplex model is unchanged):

- For every fitted (judge, candidate) pair, the residual r_jk = observed mean score − the model's
  posterior mean of it (γ_jk · levels); under the model r_jk ~ N(0, (1 − h_jk)(τ_j² + v_jk)), with v_jk
  the sampling variance of a mean of n_jk scores and h_jk = 1/|J_k| the share of the pair's residual
  the fit absorbs (E_k is fitted from the same |J_k| judges). Pairs of a candidate with one judge carry
  no evidence (h = 1) and are left out.
- τ_j has a HalfNormal prior of scale ``PRIOR_SCALE_SHARE`` × the true scale's range (fixed before
  any data was seen: a tenth of the scale), and its posterior is computed exactly on a grid.
- The truth rater is taken to be a typical rater: τ_0² is the median over judges of τ_j². This is the
  assumption that cannot be checked without labels: that the humans' candidate-specific deviation
  from the judges' consensus is no larger than a typical judge's — judges that share their errors
  (deviate together) make the panel's consensus move away from the truth in a way no judge's
  disagreement reveals.
- With one judge everywhere nothing is learnt: τ comes from the prior alone, and the intervals say
  how little one judge can tell.

A fit with gold labels keeps δ = 0: its labelled answers tie E_k to the human truth directly.

Owns: :func:`score_distributions` (γ_jk, the model's score distribution per judge and candidate, from
arrays), :func:`judge_deviations` (τ_j's grid posteriors), :func:`rater_deviation` (δ draws and a
record), :func:`add_rater_deviation` (adds ``rater_deviation`` and the truth's ``rank`` to a
posterior, keeping the panel's rank as ``expected_rank``), :func:`without_rater_deviation`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from simplex_core.data.views import OWN_FAMILY_SUFFIX

#: τ_j ~ HalfNormal(PRIOR_SCALE_SHARE × (highest − lowest true level)): a judge's candidate-specific
#: deviation is a priori about a tenth of the scale or less; chosen before looking at any dataset.
PRIOR_SCALE_SHARE = 0.1
#: Points of the grid on which each τ_j's posterior is computed (exact up to the grid).
GRID_POINTS = 400
#: Posterior draws of γ read for the residuals (evenly spaced): only their mean is used.
RESIDUAL_DRAWS = 500
#: Seed of the δ draws (the fit's own seed is added: a fit and its reload give the same draws).
SEED_OFFSET = 7_919


def score_distributions(pi: np.ndarray, theta: np.ndarray, R: np.ndarray | None = None,
                        W: np.ndarray | None = None, Z: np.ndarray | None = None) -> np.ndarray:
    """γ_jk = π_k^(j) θ_j, the model's score distribution for every (judge, candidate) pair, per draw.

    ``pi`` [S, K, T], ``theta`` [S, J, T, M]; with random effects (R [S, J], W [S, K], Z [S, K, T])
    the judge sees π_k^(j) = (1 − R_j W_k) π_k + R_j W_k Z_k. Returns [S, J, K, M].
    """
    if R is not None and W is not None and Z is not None:
        mix = (R[:, :, None] * W[:, None, :])[..., None]  # [S, J, K, 1]
        pi_jk = (1.0 - mix) * pi[:, None] + mix * Z[:, None]  # [S, J, K, T]
    else:
        pi_jk = np.broadcast_to(pi[:, None], (pi.shape[0], theta.shape[1]) + pi.shape[1:])
    return np.einsum("sjkt,sjtm->sjkm", pi_jk, theta)


def _grid_posterior(residual: np.ndarray, noise_var: np.ndarray, absorbed: np.ndarray, prior_scale: float,
                    grid: np.ndarray) -> np.ndarray:
    """Posterior weights of τ on ``grid``: residual ~ N(0, (1 − absorbed)(τ² + noise_var)), τ ~ HalfNormal."""
    s2 = (1.0 - absorbed)[None, :] * (grid[:, None] ** 2 + noise_var[None, :])  # [G, n]
    log_lik = -0.5 * (np.log(s2) + residual[None, :] ** 2 / s2).sum(axis=1)
    log_post = log_lik - 0.5 * (grid / prior_scale) ** 2
    w = np.exp(log_post - log_post.max())
    return w / w.sum()


@dataclass(frozen=True)
class RaterDeviation:
    """δ draws [S, K] and what they came from (posterior means of τ_j and τ_0, the evidence)."""

    draws: np.ndarray
    judge_tau: np.ndarray  # posterior mean of τ_j, [J]
    judge_pairs: np.ndarray  # pairs that informed τ_j (0: prior only), [J]
    truth_tau: float  # posterior mean of τ_0
    prior_scale: float
    reason: str = ""  # why δ is zero, when it is

    def to_record(self, judges: tuple[str, ...] | list[str]) -> dict[str, Any]:
        return {
            "truth_tau": float(self.truth_tau),
            "prior_scale": float(self.prior_scale),
            "judges": {str(j): {"tau": float(t), "pairs": int(n)}
                       for j, t, n in zip(judges, self.judge_tau, self.judge_pairs)},
            "reason": self.reason,
        }


def judge_deviations(residual: np.ndarray, noise_var: np.ndarray, evidence: np.ndarray, absorbed: np.ndarray,
                     prior_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Each judge's τ posterior on a grid: returns (grid [G], weights [J, G]).

    ``residual``, ``noise_var``, ``absorbed`` are [J, K]; ``evidence`` [J, K] marks the pairs that
    inform τ_j. A judge with no such pair gets its prior.
    """
    used = residual[evidence]
    top = 4.0 * prior_scale + (4.0 * float(np.sqrt(np.mean(used ** 2))) if used.size else 0.0)
    grid = np.linspace(0.0, top, GRID_POINTS)
    weights = np.empty((residual.shape[0], grid.size))
    for j in range(residual.shape[0]):
        sel = evidence[j]
        weights[j] = _grid_posterior(residual[j, sel], noise_var[j, sel], absorbed[j, sel], prior_scale, grid)
    return grid, weights


def rater_deviation(gamma: np.ndarray, counts_N: np.ndarray, included: np.ndarray, values: np.ndarray,
                    true_values: np.ndarray, n_draws: int, seed: int) -> RaterDeviation:
    """δ draws for ``n_draws`` posterior draws, from the fitted γ [S', J, K, M] and the counts N [J, K, M]."""
    N = np.asarray(counts_N, dtype=float)
    n = N.sum(axis=-1)
    fitted = np.asarray(included, dtype=bool) & (n > 0)
    J, K = fitted.shape
    values = np.asarray(values, dtype=float)
    prior_scale = PRIOR_SCALE_SHARE * float(np.ptp(np.asarray(true_values, dtype=float)))
    mean = gamma @ values  # [S', J, K]
    fitted_mean = mean.mean(axis=0)
    score_var = (gamma @ values ** 2).mean(axis=0) - fitted_mean ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        observed_mean = np.where(n > 0, (N @ values) / np.maximum(n, 1), 0.0)
    judges_per_candidate = fitted.sum(axis=0)  # |J_k|
    absorbed = np.broadcast_to(1.0 / np.maximum(judges_per_candidate, 1), (J, K))
    evidence = fitted & (judges_per_candidate >= 2)[None, :]
    residual = np.where(fitted, observed_mean - fitted_mean, 0.0)
    noise_var = np.maximum(score_var, 0.0) / np.maximum(n, 1)
    grid, weights = judge_deviations(residual, noise_var, evidence, absorbed, prior_scale)
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(weights, axis=1)
    u = rng.uniform(size=(n_draws, J))
    tau = np.stack([grid[np.minimum(np.searchsorted(cdf[j], u[:, j]), grid.size - 1)] for j in range(J)], axis=1)
    tau2 = tau ** 2
    truth2 = np.median(tau2, axis=1)  # τ_0²: a typical rater
    panel2 = (tau2 @ fitted.astype(float)) / np.maximum(judges_per_candidate, 1) ** 2  # [S, K]
    sd = np.sqrt(truth2[:, None] + panel2)
    draws = rng.standard_normal((n_draws, K)) * sd
    return RaterDeviation(draws=draws, judge_tau=weights @ grid, judge_pairs=evidence.sum(axis=1),
                          truth_tau=float(np.sqrt(truth2).mean()), prior_scale=prior_scale)


def _flat(post: Any, name: str) -> np.ndarray:
    a = np.asarray(post[name].values, dtype=float)
    return a.reshape((-1,) + a.shape[2:])


def add_rater_deviation(idata: Any, seed: int = 0, gold_labels: int = 0) -> None:
    """Add ``rater_deviation`` (δ draws) to a fit's posterior, make ``rank`` the truth's (of E + δ)
    and keep the panel's as ``expected_rank``; the record goes to the attribute ``rater_deviation``.
    Does nothing when the posterior has it already."""
    import xarray as xr

    from simplex_core.data.scale import Scale
    from simplex_core.model.ranks import ranks_from_scores

    post = idata.posterior
    if "rater_deviation" in post:
        return
    e = np.asarray(post["expected_score"].values, dtype=float)  # [C, D, K]
    chains, draws_per_chain, K = e.shape
    judges = [str(j) for j in post["judge"].values]
    scale = Scale.from_dict(json.loads(post.attrs["scale"]))
    const = idata.constant_data
    N = np.asarray(const["counts"].values)
    included = np.asarray(const["included"].values, dtype=bool)
    if gold_labels:
        dev = RaterDeviation(draws=np.zeros((chains * draws_per_chain, K)), judge_tau=np.zeros(len(judges)),
                             judge_pairs=np.zeros(len(judges), dtype=int), truth_tau=0.0, prior_scale=0.0,
                             reason="gold labels tie E_k to the human truth")
    else:
        S = chains * draws_per_chain
        idx = np.unique(np.linspace(0, S - 1, min(S, RESIDUAL_DRAWS)).round().astype(int))
        re = [(_flat(post, v)[idx] if v in post else None) for v in ("R", "W", "Z")]
        gamma = score_distributions(_flat(post, "pi")[idx], _flat(post, "theta")[idx], *re)
        dev = rater_deviation(gamma, N, included, np.asarray(scale.values), np.asarray(scale.true_values),
                              S, SEED_OFFSET + int(seed))
    dims = ("chain", "draw", "candidate")
    delta = dev.draws.reshape(chains, draws_per_chain, K)
    if "rank" in post:
        post["expected_rank"] = post["rank"]
    else:
        post["expected_rank"] = xr.DataArray(ranks_from_scores(e), dims=dims)
    post["rater_deviation"] = xr.DataArray(delta, dims=dims)
    post["rank"] = xr.DataArray(ranks_from_scores(e + delta), dims=dims)
    post.attrs["rater_deviation"] = json.dumps(dev.to_record(judges))


def ensure_rater_deviation(idata: Any, counts: Any, seed: int) -> None:
    """:func:`add_rater_deviation` for a fit of ``counts`` (new, or read back from a cache or the
    shipped fits, which may predate δ): the same draws every time, seeded by the fit's seed."""
    post = getattr(idata, "posterior", None)
    if post is None or "rater_deviation" in post or not ("pi" in post and "theta" in post):
        return
    if not hasattr(idata, "constant_data"):
        return
    patterns = getattr(counts, "patterns", None)
    gold = 0 if patterns is None else int((np.asarray(patterns.truth) >= 0).sum())
    add_rater_deviation(idata, seed=int(seed), gold_labels=gold)


def without_rater_deviation(idata: Any) -> Any:
    """A copy of ``idata`` whose ``rank`` is the panel's (the paper's estimand, the rank of E_k), δ set
    to zero; the fit itself (perhaps shared by a cache) is left as it is."""
    out = idata.copy()
    post = out.posterior
    if "rater_deviation" in post:
        post["rank"] = post["expected_rank"]
        post["rater_deviation"] = post["rater_deviation"] * 0.0
        record = json.loads(post.attrs.get("rater_deviation", "{}") or "{}")
        record["reason"] = "turned off: ranks of E_k, the paper's estimand"
        post.attrs["rater_deviation"] = json.dumps(record)
    return out


def rater_deviation_record(fit: Any) -> dict[str, Any] | None:
    """The record :func:`add_rater_deviation` stored (τ_0, each τ_j, the prior, why zero), or None."""
    post = getattr(fit, "idata", fit).posterior
    text = post.attrs.get("rater_deviation")
    return json.loads(text) if text else None


def rater_deviation_text(record: dict[str, Any] | None) -> str:
    """One sentence on what the rank intervals include, for beside a ranking (app, command line)."""
    if not record:
        return "ranks of E_k (no rater deviation recorded for this posterior)."
    if record.get("reason"):
        return f"ranks of E_k, without rater deviation ({record['reason']})."
    informed = [name for name, j in record["judges"].items() if j["pairs"]]
    apart = sum(name.endswith(OWN_FAMILY_SUFFIX) for name in informed)
    who = f"{len(informed)} judges" if not apart else f"{len(informed)} raters ({len(informed) - apart} judges, {apart} kept apart for their own family)"
    source = (f"learnt from how {who} disagree per candidate" if informed else
              "from the prior alone: with one judge per candidate, disagreement cannot be measured")
    return (f"the truth is ranked as one more rater: each candidate's score may deviate from the judges' view by "
            f"SD ≈ {record['truth_tau']:.2g} (plus the panel's own deviation), {source}.")
