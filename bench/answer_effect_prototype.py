"""Prototype: the shared-truth likelihood with an answer-level random effect (PyMC, not the product).

Judges who read the same answer err together because its quality varies within a level
(:mod:`bench.latent_quality_robustness`). The latent class model with a continuous random effect
(Qu, Tan & Kutner 1996) says so: given the answer's true level *and* a shared answer effect b_a, the
judges err independently. Here the effect tilts every judge's confusion row the same way::

    t_a ~ Categorical(π_k),   b_a = σ_b z_a,   z_a ~ N(0, 1),   σ_b ~ HalfNormal(1)
    P(judge j scores m | t, b) = Θ_j[t, m] exp(b s_m) / Σ_m' Θ_j[t, m'] exp(b s_m'),
    s_m = (m − (M − 1)/2) / (M − 1)   (the level's centred position, −½ .. ½)

π_k ~ Dirichlet(1), Θ_j from the product's judge prior (any of them; the product's default until 2026-12-08, weight propagation, was measured), t_a
marginalised per answer by logsumexp, b_a sampled (non-centred). Ranking quantity E_k = Σ_t π_kt v_t, as
the product's. With σ_b = 0 the log density is the product's shared-truth one (checked in
``tests/test_answer_effect_prototype.py``).

The comparison (every setting fixed before the first run, none tuned): scenarios ``skewed`` (seeds 0, 1, 2)
and ``latent`` (seed 0) of :func:`bench.latent_quality_robustness.simulate_case`; the prototype (nutpie,
4 chains × 1000 draws after 1000 warm-up), the product's default fit and the plain mean, each scored by
the bench's own evaluation (Spearman with the true ranking, coverage and width of the 95% rank
intervals). Prints Markdown; asserts nothing.

Usage (repo root, project venv)::

    nice -n 19 .venv/bin/python -m bench.answer_effect_prototype --cases skewed:0,skewed:1,skewed:2,latent:0
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from simplex_core.model.settings import CountsLike, FitSettings, ModelSettings, model_settings

if TYPE_CHECKING:  # pragma: no cover
    import pymc as pm

    from simplex_core.methods.method_base import MethodResult

SIGMA_B_SCALE = 1.0  # σ_b ~ HalfNormal(1): the task's prior, fixed before the first run


def level_positions(n_levels: int) -> np.ndarray:
    """s_m = (m − (M − 1)/2) / (M − 1): each observed level's centred position in −½ .. ½."""
    m = np.arange(n_levels, dtype=float)
    return (m - (n_levels - 1) / 2.0) / (n_levels - 1)


def answer_rows(counts: CountsLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One row per answer (candidate, scores [A, J], gold truth), expanded from the score patterns.

    Answers of the same pattern are exchangeable, but each needs its own b_a, so the patterns are
    repeated by their weight (exact, not an approximation)."""
    from simplex_core.model.definition import require_patterns

    p = require_patterns(counts)
    w = np.asarray(p.weight, dtype=np.int64)
    return np.repeat(p.candidate, w), np.repeat(p.scores, w, axis=0), np.repeat(p.truth, w)


def build_answer_effect_model(counts: CountsLike, settings: ModelSettings | FitSettings = ModelSettings(),
                              sigma_b: float | None = None) -> "pm.Model":
    """The PyMC graph of the prototype (no sampling).

    ``sigma_b`` None samples σ_b ~ HalfNormal(1); a number fixes it (0 gives the product's
    shared-truth density plus the z_a's N(0, 1) prior). Only the model part of ``settings`` is read:
    the judge prior and β_max (fixed; no random effects ω, no integrated mode)."""
    import pymc as pm
    import pytensor.tensor as pt

    from simplex_core.model.definition import _judge_prior, _ordered_judge_prior
    from simplex_core.model.priors import judge_prior_on

    settings = model_settings(settings)
    if settings.integrated or settings.has_random_effects:
        raise ValueError("the answer-effect prototype takes fixed β_max and ω = 0 (no integrated mode, no random effects).")
    scale = counts.scale
    J, K, M = len(counts.judges), len(counts.candidates), scale.n_levels
    T = scale.n_true
    cand, scores, truth = answer_rows(counts)
    A = cand.size
    s = level_positions(M)
    coords = {"candidate": list(counts.candidates), "judge": list(counts.judges), "true_level": list(scale.true_labels),
              "level": list(scale.labels), "answer": np.arange(A)}
    with pm.Model(coords=coords) as model:
        pi = pm.Dirichlet("pi", a=np.ones((K, T)), dims=("candidate", "true_level"))
        pm.Deterministic("expected_score", pt.dot(pi, np.asarray(scale.true_values, dtype=float)), dims="candidate")
        rho = pm.Beta("rho", 1.0, 1.0, dims="judge")
        prior = judge_prior_on(settings.prior, M)
        if prior == "ordered":
            theta = _ordered_judge_prior(rho, float(settings.beta_max), J, T, M, np.asarray(scale.true_index))
        else:
            theta = _judge_prior(prior, scale, rho * float(settings.beta_max), J, T, M, np.asarray(scale.true_index))
        sig = pm.HalfNormal("sigma_b", SIGMA_B_SCALE) if sigma_b is None else pt.as_tensor_variable(float(sigma_b))
        z = pm.Normal("z", 0.0, 1.0, dims="answer")
        b = sig * z  # [A]
        pm.Potential("answer_loglik", answer_effect_loglik(pt.log(pi), pt.log(theta), b, cand, scores, truth, s))
    return model


def answer_effect_loglik(log_pi, log_theta, b, cand, scores, truth, s):
    """Σ_a log Σ_t π_k[t] Π_j P(s_aj | t, b_a) with the tilted rows (pytensor; data arrays are numpy).

    log P(m | t, b) = log Θ_j[t, m] + b s_m − logsumexp_m'(log Θ_j[t, m'] + b s_m'); judges with no
    score drop out; a gold answer keeps only its true level.

    Shapes: log_pi [K, T], log_theta [J, T, M], b [A]; cand [A], scores [A, J] (−1 = no score),
    truth [A] (−1 = not gold), s [M]."""
    import pytensor.tensor as pt

    J = scores.shape[1]
    scored = (scores >= 0).astype(float)
    safe = np.maximum(scores, 0)
    s = np.asarray(s, dtype=float)
    tilt = b[:, None] * s[None, :]  # [A, M]
    log_norm = pt.logsumexp(log_theta[None, :, :, :] + tilt[:, None, None, :], axis=-1)  # [A, J, T]
    picked = log_theta.dimshuffle(0, 2, 1)[np.arange(J)[None, :], safe]  # [A, J, T]
    per_judge = picked + (b[:, None] * s[safe])[:, :, None] - log_norm
    per_level = (per_judge * scored[:, :, None]).sum(axis=1) + log_pi[cand]  # [A, T]
    if (truth >= 0).any():
        keep = pt.or_(pt.as_tensor_variable((truth < 0)[:, None]), pt.eq(pt.arange(log_pi.shape[1])[None, :], truth[:, None]))
        per_level = pt.switch(keep, per_level, -np.inf)
    return pt.logsumexp(per_level, axis=1).sum()


def sample_expected_scores(model, n_candidates: int, seed: int, draws: int = 1000, tune: int = 1000,
                           chains: int = 4) -> tuple[np.ndarray, dict[str, float], object]:
    """Sample a PyMC ``model`` with an ``expected_score`` variable by nutpie: E_k draws [chains·draws, K],
    E_k's convergence (max R-hat, min bulk ESS), divergences and the seconds (compile + sample), and the trace."""
    import arviz as az
    import nutpie

    t0 = time.perf_counter()
    compiled = nutpie.compile_pymc_model(model)
    t1 = time.perf_counter()
    trace = nutpie.sample(compiled, draws=draws, tune=tune, chains=chains, cores=2, seed=seed, progress_bar=False)
    t2 = time.perf_counter()
    E = trace.posterior["expected_score"].values.reshape(-1, n_candidates)
    diag = {"rhat": float(az.rhat(trace, var_names=["expected_score"])["expected_score"].max()),
            "ess_bulk": float(az.ess(trace, var_names=["expected_score"], method="bulk")["expected_score"].min()),
            "divergences": int(trace.sample_stats["diverging"].sum()), "compile_s": t1 - t0, "sample_s": t2 - t1}
    return E, diag, trace


def fit_answer_effect(counts: CountsLike, seed: int, draws: int = 1000, tune: int = 1000,
                      chains: int = 4) -> tuple[np.ndarray, dict[str, float]]:
    """Sample the prototype (:func:`sample_expected_scores`), with σ_b's posterior mean in the diagnostics."""
    E, diag, trace = sample_expected_scores(build_answer_effect_model(counts), len(counts.candidates), seed,
                                            draws, tune, chains)
    return E, diag | {"sigma_b": float(trace.posterior["sigma_b"].mean())}


def draws_method_result(E: np.ndarray, candidates, method: str = "answer_effect") -> "MethodResult":
    """E_k draws as a ranking method, by the rule of ``bayesian_method_result``: scores = posterior
    means, 95% rank interval of ``rank_interval`` over the draws' ranks (1 = best)."""
    from simplex_core.methods.method_base import MethodResult
    from simplex_core.model.ranks import rank_interval, rank_scores, ranks_from_scores

    index = pd.Index(list(candidates), name="candidate")
    mean = E.mean(axis=0)
    lo, hi = rank_interval(ranks_from_scores(E))
    return MethodResult(method=method, uses_labels=False, scores=pd.Series(mean, index=index),
                        ranks=pd.Series(rank_scores(mean), index=index).astype(float),
                        rank_lo=pd.Series(lo, index=index).astype(float), rank_hi=pd.Series(hi, index=index).astype(float))


def main(argv: list[str] | None = None) -> None:
    from bench.latent_quality_robustness import LEVELS, print_table, simulate_case
    from bench.speed import uptime
    from simplex_core.data.scale import Scale
    from simplex_core.data.table import load_table
    from simplex_core.data.views import count_tensor, item_view
    from simplex_core.inference.fitting import fit_model
    from simplex_core.methods.baselines import run_methods, table_baseline_methods
    from simplex_core.summaries.evaluation import evaluate_results, true_ranks
    from simplex_core.summaries.posterior_views import bayesian_method_result

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default="skewed:0,skewed:1,skewed:2,latent:0", help="scenario:seed, comma-separated")
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    args = p.parse_args(argv)
    print(f"# bench.answer_effect_prototype  {time.strftime('%Y-%m-%d %H:%M:%S')}  cases={args.cases} "
          f"prototype: nutpie 4 chains x {args.draws} + {args.tune}, sigma_b ~ HalfNormal({SIGMA_B_SCALE}), "
          f"weight-propagation judge prior, beta_max 5")
    print(f"# load before: {uptime()}", flush=True)
    scale = Scale(tuple(float(v) for v in range(1, LEVELS + 1)))
    rows = []
    for case in args.cases.split(","):
        scenario, seed = case.split(":")
        seed = int(seed)
        table = load_table(simulate_case(scenario, seed), scale=scale)
        counts = count_tensor(table)
        truth = true_ranks(item_view(table))
        t0 = time.perf_counter()
        fit = fit_model(counts, FitSettings(seed=seed))
        default_s = time.perf_counter() - t0
        results = {"default": bayesian_method_result(fit, max_draws=None)}
        methods = table_baseline_methods(table, ppi_fractions=(), single_judges=False)
        results |= run_methods(item_view(table), {"simple_average": methods["simple_average"]}, rng=0)
        E, diag = fit_answer_effect(counts, seed, draws=args.draws, tune=args.tune)
        results["answer_effect"] = draws_method_result(E, counts.candidates)
        ev = evaluate_results(results, truth).set_index("method")
        d = fit.diagnostics
        for method, e in ev.iterrows():
            rows.append({"scenario": scenario, "seed": seed, "method": method, "spearman": e["spearman"],
                         "coverage": e["coverage"], "width": e["width"]})
        print(f"  {scenario} s{seed}: ρ answer_effect {ev.loc['answer_effect', 'spearman']:.3f} default "
              f"{ev.loc['default', 'spearman']:.3f} mean {ev.loc['simple_average', 'spearman']:.3f}; answer_effect "
              f"coverage {ev.loc['answer_effect', 'coverage']:.2f} width {ev.loc['answer_effect', 'width']:.1f}, "
              f"E_k R-hat ≤ {diag['rhat']:.3f} bulk ESS ≥ {diag['ess_bulk']:.0f} divergences {diag['divergences']}, "
              f"σ_b {diag['sigma_b']:.2f}, compile {diag['compile_s']:.0f} s sample {diag['sample_s']:.0f} s; "
              f"default: {d.message} ({default_s:.0f} s)", flush=True)
    print_table(pd.DataFrame(rows), per="seed", digits=3)
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
