"""``bradley_terry``: Bradley-Terry with ties (Rao & Kupper 1967) on the pairwise outcomes of each item
and judge, fitted by maximum likelihood (a small ridge), with bootstrap (over items) rank intervals."""

from __future__ import annotations

import math
from typing import Collection

import numpy as np
import pandas as pd
from scipy import optimize, special

from simplex_core.model.ranks import INTERVAL, rank_scores
from simplex_core.methods.method_base import MethodResult, RngLike, as_generator, item_resample_weights, ranked_result, score_array


# -- Bradley-Terry with ties (Rao & Kupper 1967) --------------------------------------------------

def _per_item_pairwise(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-item win and tie counts ``[I, K, K]`` summed over judges.

    ``wins[i, k, l]`` counts the judges that scored both k and l on item i and gave k the higher
    score; ``ties[i, k, l]`` those that gave equal scores (symmetric, zero diagonal).
    """
    a = scores[:, :, None, :]
    b = scores[:, None, :, :]
    wins = (a > b).sum(axis=-1).astype(float)  # NaN comparisons are False
    ties = (a == b).sum(axis=-1).astype(float)
    k = scores.shape[1]
    ties[:, np.arange(k), np.arange(k)] = 0.0
    return wins, ties


def pairwise_counts(
    view: pd.DataFrame, *, excluded: Collection[tuple[str, str]] = ()
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Aggregated pairwise outcomes: every pair of candidates scored by the same judge on the same item.

    Returns
    -------
    wins, ties
        Candidate x candidate DataFrames: ``wins.loc[k, l]`` = number of (item, judge) where k scored
        higher than l; ``ties.loc[k, l]`` = number where they scored equal (symmetric, zero diagonal).
    """
    arr = score_array(view, excluded)
    w, t = _per_item_pairwise(arr.scores)
    idx = pd.Index(arr.candidates, name="candidate")
    return pd.DataFrame(w.sum(0), index=idx, columns=idx), pd.DataFrame(t.sum(0), index=idx, columns=idx)


def rao_kupper_loglik(log_ability: np.ndarray, theta: float, wins: np.ndarray, ties: np.ndarray) -> float:
    """Rao-Kupper log-likelihood of aggregated win / tie counts.

    P(k beats l) = pi_k / (pi_k + theta pi_l);
    P(k ties l) = (theta^2 - 1) pi_k pi_l / ((pi_k + theta pi_l)(pi_l + theta pi_k)), theta > 1.

    Parameters
    ----------
    log_ability
        ``[K]`` log pi.
    theta
        Tie parameter (> 1; exactly 1 is allowed only when there are no ties).
    wins
        ``[K, K]`` wins of row over column.
    ties
        ``[K, K]`` symmetric tie counts (each tie of the pair counted once in [k, l] and once in
        [l, k]); the diagonal is ignored.
    """
    beta = np.asarray(log_ability, dtype=float)
    wins = np.asarray(wins, dtype=float)
    ties = np.asarray(ties, dtype=float).copy()
    np.fill_diagonal(ties, 0.0)
    pi = np.exp(beta)
    denom = pi[:, None] + theta * pi[None, :]  # pi_k + theta pi_l
    off = ~np.eye(len(beta), dtype=bool)
    ll_wins = np.sum(wins[off] * (beta[:, None] - np.log(denom))[off])
    n_ties = ties[np.triu_indices(len(beta), 1)].sum()
    ll_ties = 0.0
    if n_ties > 0:
        tie_logp = np.log(theta**2 - 1.0) + beta[:, None] + beta[None, :] - np.log(denom) - np.log(denom.T)
        ll_ties = np.sum(np.triu(ties, 1) * np.where(np.triu(off, 1), tie_logp, 0.0))
    return float(ll_wins + ll_ties)


# Bounds on eta (theta = 1 + exp(eta)) used only when the unbounded fit runs away: without ties the
# maximum is at theta -> 1, with only ties at theta -> infinity.
_ETA_MIN, _ETA_MAX = -20.0, 20.0
_LOG2 = math.log(2.0)


def _rk_objective(params: np.ndarray, outcomes: np.ndarray, n_ties: float, ridge: float) -> tuple[float, np.ndarray]:
    """Negative penalised log-likelihood and gradient in (beta_1..K, eta), theta = 1 + exp(eta).

    With C = wins + ties (ordered pairs) and L_kl = log(pi_k + theta pi_l), the log-likelihood is
    sum_k beta_k C_k. - sum_{k,l} C_kl L_kl + n_ties log(theta^2 - 1)
    (each tie contributes beta_k + beta_l - L_kl - L_lk + log(theta^2 - 1)). Everything is computed
    in log space (logaddexp), so extreme abilities met during the line search cannot overflow.
    The ridge term 0.5 ridge sum beta^2 pins the shift (sum-to-zero at the optimum) and keeps the
    abilities finite when a candidate wins or loses every comparison.
    """
    k = outcomes.shape[0]
    beta, eta = params[:k], float(params[k])
    log_theta = float(np.logaddexp(0.0, eta))  # log(1 + e^eta), safe for any eta
    sig = float(special.expit(eta))  # d log(theta) / d eta = (theta - 1) / theta
    log_denom = np.logaddexp(beta[:, None], log_theta + beta[None, :])  # L_kl
    share_row = np.exp(beta[:, None] - log_denom)  # pi_k / (pi_k + theta pi_l)
    share_col = 1.0 - share_row  # theta pi_l / (pi_k + theta pi_l)
    ll = float(beta @ outcomes.sum(axis=1) - np.sum(outcomes * log_denom))
    grad_beta = outcomes.sum(axis=1) - (outcomes * share_row).sum(axis=1) - (outcomes * share_col).sum(axis=0)
    # dL_kl/d(theta) = pi_l / a_kl = share_col / theta, and d(theta)/d(eta) = theta - 1.
    grad_eta = -float(np.sum(outcomes * share_col)) * sig
    if n_ties > 0:
        # log(theta^2 - 1) = eta + log(2 + e^eta); its derivative is 1 + e^eta / (2 + e^eta)
        ll += n_ties * (eta + float(np.logaddexp(_LOG2, eta)))
        grad_eta += n_ties * (1.0 + float(special.expit(eta - _LOG2)))
    ll -= 0.5 * ridge * float(beta @ beta)
    grad_beta = grad_beta - ridge * beta
    return -ll, -np.concatenate([grad_beta, [grad_eta]])


def _rk_hessian(params: np.ndarray, outcomes: np.ndarray, n_ties: float, ridge: float) -> np.ndarray:
    """Hessian of :func:`_rk_objective` (the negative penalised log-likelihood).

    L_kl = logaddexp(beta_k, log theta + beta_l) has Hessian u (e_k - e_l + e_theta)(...)^T in
    (beta_k, beta_l, log theta) terms with u = p q (p = pi_k / a_kl, q = 1 - p); the chain rule
    through log theta = log(1 + e^eta) adds the curvature of that map.
    """
    k = outcomes.shape[0]
    beta, eta = params[:k], float(params[k])
    log_theta = float(np.logaddexp(0.0, eta))
    log_denom = np.logaddexp(beta[:, None], log_theta + beta[None, :])
    share_row = np.exp(beta[:, None] - log_denom)
    share_col = 1.0 - share_row
    v = outcomes * share_row * share_col
    sym = v + v.T
    sig = float(special.expit(eta))  # d log(theta) / d eta
    tie_sig = float(special.expit(eta - _LOG2))  # e^eta / (2 + e^eta)
    hess = np.empty((k + 1, k + 1))
    hess[:k, :k] = np.diag(sym.sum(axis=1)) - sym + ridge * np.eye(k)
    hess[:k, k] = hess[k, :k] = (v.sum(axis=0) - v.sum(axis=1)) * sig
    hess[k, k] = (
        v.sum() * sig**2
        + float(np.sum(outcomes * share_col)) * sig * (1.0 - sig)
        - n_ties * tie_sig * (1.0 - tie_sig)
    )
    return hess


def fit_rao_kupper(
    wins: np.ndarray, ties: np.ndarray, *, ridge: float = 1e-6, start: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """Maximum-likelihood Rao-Kupper abilities and tie parameter from aggregated counts.

    Parameters
    ----------
    wins, ties
        ``[K, K]`` counts as in :func:`rao_kupper_loglik`.
    ridge
        Tiny L2 penalty on the log-abilities (see the objective); 1e-6 changes nothing measurable
        on real counts and only matters when the unpenalised maximum is at infinity (a candidate
        that wins, or loses, every comparison).
    start
        Optional starting ``(beta_1..K, eta)``.

    Returns
    -------
    log_ability, theta
        ``[K]`` log pi centred to sum to zero, and theta (> 1; near 1 when there are no ties).
    """
    wins = np.asarray(wins, dtype=float)
    ties = np.asarray(ties, dtype=float).copy()
    np.fill_diagonal(ties, 0.0)
    k = wins.shape[0]
    outcomes = wins + ties
    np.fill_diagonal(outcomes, 0.0)
    n_ties = float(ties[np.triu_indices(k, 1)].sum())
    if start is None:
        total = outcomes.sum()
        # outcomes counts each tie twice (once per ordering), each win once
        tie_share = n_ties / (total - n_ties) if total > 0 else 0.0
        # theta from the tie share of two equal candidates: P(tie) = (theta - 1) / (theta + 1).
        theta0 = (1.0 + tie_share) / max(1.0 - tie_share, 1e-3)
        start = np.concatenate([np.zeros(k), [math.log(max(theta0 - 1.0, math.exp(_ETA_MIN)))]])
    args = (outcomes, n_ties, ridge)
    # Newton trust region with the exact Hessian: a handful of iterations for K + 1 parameters.
    # The gradient grows with the counts, so tolerances are relative to the number of comparisons;
    # near the optimum trust-exact may stop at floating-point precision with success=False.
    grad_tol = 1e-8 * max(float(outcomes.sum()), 1.0)
    res = optimize.minimize(
        _rk_objective, start, args=args, jac=True, hess=_rk_hessian, method="trust-exact",
        options={"gtol": grad_tol},
    )
    converged = np.all(np.isfinite(res.x)) and (res.success or np.max(np.abs(res.jac)) <= 100 * grad_tol)
    if not converged or not _ETA_MIN <= res.x[k] <= _ETA_MAX:
        # No ties (theta -> 1) or only ties (theta -> infinity) push eta to infinity: bound it.
        bounds = [(None, None)] * k + [(_ETA_MIN, _ETA_MAX)]
        res = optimize.minimize(
            _rk_objective, start, args=args, jac=True, method="L-BFGS-B", bounds=bounds,
            options={"maxiter": 2000},
        )
    beta = res.x[:k] - res.x[:k].mean()
    return beta, 1.0 + math.exp(res.x[k])


def bradley_terry(
    view: pd.DataFrame,
    n_resamples: int = 200,
    rng: RngLike | None = None,
    *,
    excluded: Collection[tuple[str, str]] = (),
    level: float = INTERVAL,
    ridge: float = 1e-6,
) -> MethodResult:
    """Bradley-Terry with ties (Rao & Kupper 1967), ranks from the abilities, bootstrap intervals.

    Pairwise outcomes are taken from every pair of candidates scored by the same (non-excluded) judge
    on the same item: higher score wins, equal scores tie. Abilities (log pi, sum to zero) and the
    tie parameter theta > 1 are fitted by maximum likelihood (:func:`fit_rao_kupper`:
    ``scipy.optimize.minimize``, trust-exact with the analytic gradient and Hessian, on the aggregated
    win / tie count matrices). Intervals: resample items with replacement
    (``rng.integers(0, n_items, size=(n_resamples, n_items))``), refit (warm-started at the full-data
    fit), re-rank, and take :func:`~simplex_core.model.ranks.rank_interval`. ``details["theta"]`` holds the fitted tie
    parameter.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1; got {n_resamples}.")
    gen = as_generator(rng)
    arr = score_array(view, excluded)
    wins_i, ties_i = _per_item_pairwise(arr.scores)
    n_cand = len(arr.candidates)
    played = (wins_i + ties_i).sum(axis=0)
    played = played + played.T
    unplayed = [c for c, n in zip(arr.candidates, played.sum(axis=1)) if n == 0]
    if unplayed:
        raise ValueError(
            f"bradley_terry: candidates {unplayed} are never compared with another candidate by the same "
            "judge on the same item, so they cannot be ranked by pairwise comparison. Give them scores "
            "on items the other candidates answered, or leave them out."
        )
    beta, theta = fit_rao_kupper(wins_i.sum(0), ties_i.sum(0), ridge=ridge)
    start = np.concatenate([beta, [math.log(max(theta - 1.0, math.exp(_ETA_MIN)))]])
    weights = item_resample_weights(len(arr.items), n_resamples, gen)
    flat_w = weights @ wins_i.reshape(len(arr.items), -1)
    flat_t = weights @ ties_i.reshape(len(arr.items), -1)
    draws = np.empty((n_resamples, n_cand))
    for b in range(n_resamples):
        beta_b, _ = fit_rao_kupper(
            flat_w[b].reshape(n_cand, n_cand), flat_t[b].reshape(n_cand, n_cand), ridge=ridge, start=start
        )
        draws[b] = rank_scores(beta_b, nan_last=True)
    return ranked_result("bradley_terry", arr.candidates, beta, draws, score_name="log_ability", level=level,
                         details={"theta": theta, "n_resamples": float(n_resamples)})


