"""Posterior slices the figures draw, read from a fit's InferenceData alone (so a fit loaded from the
cache or the app's precomputed posterior works as well as a fresh :class:`~simplex_core.inference.fit_result.FitResult`).

- :func:`rank_draws`: posterior rank draws, long (for box plots and CSV), thinned or all;
- :func:`bayesian_method_result`: the fit as a :class:`~simplex_core.methods.method_base.MethodResult`, so the
  Bayesian ranking sits beside the baselines in the rankings figure and the evaluation (the one
  implementation: the app, the ``figures`` command and :mod:`simplex_core.studies.experiments` use it);
- :func:`ppc_figure_table`: the posterior predictive check in the shares the PPC figure draws;
- :func:`simplex_parts`: per judge, evenly spaced posterior draws of its matrix Θ_j, their mean and
  the candidates' posterior positions γ_jk (the simplex figures' inputs);
- :func:`judge_simplex_data`: those parts joined with the observed shares as
  :class:`~simplex_core.figures.JudgeSimplex` (one per judge).

The app (``app_support/results.py``, cached per fit), the ``figures`` command and the evaluation
(:mod:`simplex_core.studies.experiments`) use these.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from simplex_core.methods.method_base import MethodResult
from simplex_core.model.ranks import rank_interval, rank_scores
from simplex_core.summaries.posterior_tables import flat_draws, coordinate_names, fitted_score_distributions


def _even(n: int, max_draws: int | None) -> np.ndarray:
    """At most ``max_draws`` evenly spaced indices into ``n`` draws (deterministic: no sampling);
    None = every draw."""
    if max_draws is None:
        return np.arange(n)
    if max_draws < 1:
        raise ValueError(f"max_draws must be at least 1; got {max_draws}.")
    return np.unique(np.linspace(0, n - 1, min(max_draws, n)).round().astype(int))


def rank_draws(fit: Any, max_draws: int | None) -> pd.DataFrame:
    """Posterior rank draws (1 = best), long: ``replicate, candidate, rank`` (candidate by
    candidate), evenly thinned to at most ``max_draws`` draws per candidate (None = all draws)."""
    ranks = np.asarray(flat_draws(fit, "rank"), dtype=float)  # [S, K]
    ranks = ranks[_even(ranks.shape[0], max_draws)]
    frame = pd.DataFrame(ranks, columns=coordinate_names(fit, "candidate"))
    long = frame.melt(var_name="candidate", value_name="rank")
    long.insert(0, "replicate", long.groupby("candidate").cumcount())
    return long


def bayesian_method_result(fit: Any, *, max_draws: int | None, method: str = "bayesian",
                           uses_labels: bool = False) -> MethodResult:
    """The fit as a ranking method: scores = posterior means of E_k, point ranks = their ranks,
    the 95% rank interval of :func:`~simplex_core.model.ranks.rank_interval` over all draws (the
    rule of every method), replicate ranks = :func:`rank_draws` thinned to ``max_draws`` (None =
    all draws: the evaluation keeps them all; the app's figures and downloads thin to 1,000).
    ``uses_labels`` marks a fit with gold labels. No ``details`` or ``notes``: the evaluation adds
    its own (:func:`simplex_core.studies.experiments.fit_method_result`)."""
    expected = np.asarray(flat_draws(fit, "expected_score"), dtype=float)
    ranks = np.asarray(flat_draws(fit, "rank"), dtype=float)
    index = pd.Index(coordinate_names(fit, "candidate"), name="candidate")
    mean = expected.mean(axis=0)
    lo, hi = rank_interval(ranks)
    return MethodResult(method=method, uses_labels=uses_labels, scores=pd.Series(mean, index=index, name="expected_score"),
                        ranks=pd.Series(rank_scores(mean), index=index, name="rank").astype(float),
                        rank_lo=pd.Series(lo, index=index, name="rank_lo").astype(float),
                        rank_hi=pd.Series(hi, index=index, name="rank_hi").astype(float),
                        rank_draws=rank_draws(fit, max_draws))


def ppc_figure_table(ppc: pd.DataFrame) -> pd.DataFrame:
    """The check of :func:`~simplex_core.summaries.posterior_tables.posterior_predictive_check` in the shares the PPC
    figure draws: ``judge, candidate, level, label, observed, fitted_mean, fitted_lo, fitted_hi,
    misfit`` (observed and fitted shares, the 95% predictive range as shares, ``misfit`` = observed
    count outside that range)."""
    n = ppc["n"].where(ppc["n"] > 0)
    return pd.DataFrame({
        "judge": ppc["judge"], "candidate": ppc["candidate"], "level": ppc["level"], "label": ppc["level"],
        "observed": ppc["observed_share"], "fitted_mean": ppc["fitted_share"],
        "fitted_lo": ppc["predicted_lo"] / n, "fitted_hi": ppc["predicted_hi"] / n, "misfit": ppc["outside"],
    })


def simplex_parts(fit: Any, max_draws: int = 60, judges: Sequence[str] | None = None) -> dict[str, dict]:
    """Per judge (all, or ``judges``): ``theta_draws`` [S, M_true, M_obs] (at most ``max_draws``
    evenly spaced draws), ``theta_mean`` [M_true, M_obs] (over all draws), ``candidate_posterior``
    [S, K, M_obs] (γ_jk = Σ_m π_k^(j)[m] Θ_j[m, ·] at the same draws, random effects included) and
    ``candidates`` (names, in the order of the K axis)."""
    theta = np.asarray(flat_draws(fit, "theta"), dtype=float)  # [S, J, T, M]
    names = coordinate_names(fit, "judge")
    wanted = list(names) if judges is None else [str(j) for j in judges]
    unknown = [j for j in wanted if j not in names]
    if unknown:
        raise ValueError(f"judge(s) {', '.join(map(repr, unknown))} not in this fit; its judges: {', '.join(names)}.")
    idx = _even(theta.shape[0], max_draws)
    gamma = fitted_score_distributions(fit, max_draws=len(idx))  # [S', J, K, M], the same even spacing
    candidates = coordinate_names(fit, "candidate")
    out = {}
    for judge in wanted:
        j = names.index(judge)
        out[judge] = {"theta_draws": theta[idx, j], "theta_mean": theta[:, j].mean(axis=0),
                      "candidate_posterior": gamma[:, j], "candidates": candidates}
    return out


def judge_simplex_data(fit: Any, distribution: pd.DataFrame, max_draws: int = 40,
                       judges: Sequence[str] | None = None) -> dict[str, Any]:
    """Per judge, a :class:`~simplex_core.figures.JudgeSimplex`: observed shares and counts from
    ``distribution`` (:func:`simplex_core.data.views.score_distribution` of the fitted table) with the
    posterior parts of :func:`simplex_parts`, candidates in the fit's order (those a judge never
    scored are left out of its view)."""
    from simplex_core.figures import JudgeSimplex, judge_observed_table

    out = {}
    if judges is None:  # the table's judges: an own-family rater (kept-apart judgments) has no row in it
        scored = set(distribution["judge"].astype(str))
        judges = [j for j in coordinate_names(fit, "judge") if j in scored]
    for judge, p in simplex_parts(fit, max_draws, judges).items():
        observed, counts = judge_observed_table(distribution, judge, p["candidates"])
        rows = [p["candidates"].index(c) for c in observed.index]
        out[judge] = JudgeSimplex(observed, counts, p["theta_draws"], p["theta_mean"], p["candidate_posterior"][:, rows, :])
    return out
