"""Figures the bench scripts compute from E_k draws: convergence (the project's definition) and agreement
with a reference posterior."""

from __future__ import annotations

import math
import warnings

import numpy as np

RHAT_MAX = 1.01
ESS_MIN = 400
AGREE_SD = 0.15     # E_k means within 0.15 reference posterior SD
AGREE_RANK = 1      # rank-interval ends within 1


def convergence(es: np.ndarray) -> dict:
    """Max R-hat and min bulk ESS over E_k for draws ``[chains, draws, K]`` (ArviZ's rank-normalised
    split R-hat and bulk ESS, the definitions of ``simplex_core.inference.fit_result.diagnose``)."""
    import arviz as az

    es = np.asarray(es, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = az.convert_to_dataset({"expected_score": es})
        rhat = np.asarray(az.rhat(ds)["expected_score"].values)
        ess = np.asarray(az.ess(ds, method="bulk")["expected_score"].values)
    max_rhat, min_ess = float(np.nanmax(rhat)), float(np.nanmin(ess))
    return {"max_rhat": max_rhat, "min_ess": min_ess,
            "converged": bool(max_rhat <= RHAT_MAX and min_ess >= ESS_MIN)}


def ranks(es: np.ndarray) -> np.ndarray:
    """Rank draws (1 = best) from E_k draws ``[..., K]``, flattened to ``[S, K]``."""
    from simplex_core.model.ranks import ranks_from_scores

    es = np.asarray(es, dtype=float)
    return ranks_from_scores(es.reshape(-1, es.shape[-1]))


def rank_intervals(es: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from simplex_core.model.ranks import rank_interval

    return rank_interval(ranks(es))


def agreement(es: np.ndarray, ref: np.ndarray) -> dict:
    """How far a posterior is from the reference: the largest |Δ mean E_k| in reference posterior
    SDs and the largest difference of 95% rank-interval ends; ``agrees`` when within 0.15 SD and 1."""
    es = np.asarray(es, dtype=float).reshape(-1, np.shape(es)[-1])
    ref = np.asarray(ref, dtype=float).reshape(-1, np.shape(ref)[-1])
    sd = ref.std(axis=0)
    dmean = float(np.max(np.abs(es.mean(axis=0) - ref.mean(axis=0)) / sd))
    lo1, hi1 = rank_intervals(es)
    lo2, hi2 = rank_intervals(ref)
    dend = float(max(np.max(np.abs(lo1 - lo2)), np.max(np.abs(hi1 - hi2))))
    return {"mean_sd": dmean, "rank_end": dend, "agrees": bool(dmean <= AGREE_SD and dend <= AGREE_RANK)}


def coverage(es: np.ndarray, true_ranks: np.ndarray) -> float:
    """Share of candidates whose population rank lies in their 95% rank interval."""
    lo, hi = rank_intervals(es)
    t = np.asarray(true_ranks, dtype=float)
    return float(np.mean((lo <= t) & (t <= hi)))


def median(values) -> float:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return float(np.median(vals)) if vals else float("nan")
