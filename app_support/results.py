"""Cached tables from a fit result, through :mod:`simplex_core.summaries` and
:mod:`simplex_core.sensitivity` (the app never computes posterior summaries itself).

Every wrapper takes the result (not hashed) and a key naming the fit (hashed), so a table is
computed once per fit and server process. A result is a :class:`simplex_core.inference.FitResult`
or the precomputed default (same attributes: ``idata``, ``diagnostics``, ``settings``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st


def summaries_available() -> bool:
    try:
        import simplex_core.summaries  # noqa: F401
    except ImportError:
        return False
    return True


@st.cache_data(show_spinner=False, max_entries=64)
def candidate_table(_result: Any, key: str) -> pd.DataFrame:
    """Per candidate, best first: E_k mean and 95% interval, rank median and 95% interval, P(best),
    and the point rank (rank of the posterior mean of E_k)."""
    from simplex_core import summaries

    return summaries.candidate_summary(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def leaderboard_table(_result: Any, key: str) -> pd.DataFrame:
    """The presenting leaderboard, best first: tier, E and rank intervals, P(best), P(top 3)
    (:func:`simplex_core.leaderboard.leaderboard_from_fit`)."""
    from simplex_core.leaderboard import leaderboard_from_fit

    return leaderboard_from_fit(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def rank_probability_table(_result: Any, key: str) -> pd.DataFrame:
    """Candidate × rank → P(rank = r)."""
    from simplex_core import summaries

    return summaries.rank_probabilities(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def pairwise_table(_result: Any, key: str) -> pd.DataFrame:
    """Candidate × candidate → P(E_row > E_col) (diagonal empty)."""
    from simplex_core import summaries

    return summaries.pairwise_probabilities(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def judge_matrix_table(_result: Any, key: str) -> pd.DataFrame:
    """Every judge's posterior mean confusion matrix, stacked: rows (judge, true level), columns
    the observed levels."""
    from simplex_core import summaries

    mats = summaries.judge_matrices(_result)
    return pd.concat(mats, names=["judge"]).reset_index()


@st.cache_data(show_spinner=False, max_entries=32)
def ppc_table(_result: Any, key: str, _counts: Any) -> pd.DataFrame:
    """The posterior predictive check (long: judge, candidate, level, …, agrees, verdict)."""
    from simplex_core import summaries

    return summaries.posterior_predictive_check(_result, counts=_counts)


def ppc_figure_table(ppc: pd.DataFrame) -> pd.DataFrame:
    """The check in the shares the PPC figure draws: observed and fitted shares with the 95%
    predictive range as shares, ``misfit`` = observed count outside that range."""
    n = ppc["n"].where(ppc["n"] > 0)
    return pd.DataFrame({
        "judge": ppc["judge"], "candidate": ppc["candidate"], "level": ppc["level"], "label": ppc["level"],
        "observed": ppc["observed_share"], "fitted_mean": ppc["fitted_share"],
        "fitted_lo": ppc["predicted_lo"] / n, "fitted_hi": ppc["predicted_hi"] / n, "misfit": ppc["outside"],
    })


@st.cache_data(show_spinner=False, max_entries=32)
def rank_draws(_result: Any, key: str, max_draws: int = 1000) -> pd.DataFrame:
    """Posterior rank draws, long: ``method, candidate, rank`` (evenly thinned to ``max_draws``)."""
    rank = _result.idata.posterior["rank"]
    flat = rank.stack(sample=("chain", "draw")).transpose("sample", "candidate")
    n = flat.sizes["sample"]
    step = max(1, n // max_draws)
    frame = pd.DataFrame(flat.values[::step], columns=[str(c) for c in flat["candidate"].values])
    long = frame.melt(var_name="candidate", value_name="rank")
    long.insert(0, "method", "bayesian")
    return long


def bayesian_method_result(result: Any, key: str) -> Any:
    """The Bayesian fit as a :class:`simplex_core.baselines.MethodResult` (for the rankings figure and
    the evaluation table): point ranks = ranks of the posterior means of E_k, intervals = the
    summary's 95% rank intervals, replicate ranks = the posterior draws."""
    from simplex_core.baselines import MethodResult

    table = candidate_table(result, key).set_index("candidate")
    draws = rank_draws(result, key).drop(columns="method")
    draws.insert(0, "replicate", draws.groupby("candidate").cumcount())
    return MethodResult(method="bayesian", uses_labels=False, scores=table["expected_score_mean"].astype(float),
                        ranks=table["point_rank"].astype(float), rank_lo=table["rank_lo"].astype(float),
                        rank_hi=table["rank_hi"].astype(float), rank_draws=draws)


@st.cache_data(show_spinner=False, max_entries=64)
def judge_simplex_parts(_result: Any, key: str, judge: str, max_draws: int = 60) -> dict:
    """Posterior draws for one judge's simplex view: ``theta_draws`` [S, M_true, M_obs],
    ``theta_mean`` [M_true, M_obs] and ``candidate_posterior`` [S, K, M_obs] (the candidates'
    positions γ_jk = Σ_m π_k^(j)[m] Θ_j[m, ·], random effects included), with the candidates' names."""
    import numpy as np

    from simplex_core import summaries

    post = _result.idata.posterior
    judges = [str(j) for j in post["judge"].values]
    j = judges.index(judge)
    theta_all = post["theta"].stack(sample=("chain", "draw")).transpose("sample", "judge", "true_level", "level").values
    n = theta_all.shape[0]
    idx = np.unique(np.linspace(0, n - 1, min(max_draws, n)).round().astype(int))
    gamma = summaries.fitted_score_distributions(_result, max_draws=len(idx))  # [S, J, K, M], same spacing
    return {"theta_draws": theta_all[idx, j], "theta_mean": theta_all[:, j].mean(axis=0),
            "candidate_posterior": gamma[:, j], "candidates": [str(c) for c in post["candidate"].values]}


def diagnostics(result: Any) -> dict:
    """The fit's convergence diagnostics (``converged``, ``message``, R-hat, ESS, divergences)."""
    d = getattr(result, "diagnostics", None)
    if d is None:
        return {}
    if hasattr(d, "to_dict"):
        return d.to_dict()
    return dict(d)


def convergence_problem(result: Any) -> str | None:
    """The sentence of what went wrong with this fit (None when it converged or is unknown)."""
    from simplex_core.inference import Diagnostics, convergence_problem as problem

    d = getattr(result, "diagnostics", None)
    return problem(d) if isinstance(d, Diagnostics) else None


def result_json(result: Any, key: str, counts: Any, command_line: str | None = None) -> dict:
    """The command line's ``result.json`` for this fit."""
    from simplex_core import summaries

    return summaries.result_json(result, command_line=command_line, counts=counts)


def sweep(fits: dict[tuple[float, float], Any], base: Any, counts: Any) -> Any:
    """The paper's sensitivity sweep over the settings already fitted (``{(ω, β_max): result}``,
    base included): :func:`simplex_core.sensitivity.sensitivity_sweep` reading those fits instead
    of fitting. Returns its :class:`~simplex_core.sensitivity.SensitivityResult`."""
    from simplex_core.sensitivity import sensitivity_sweep

    base_key = (base.omega, base.beta_max)
    omegas = sorted(o for (o, b) in fits if b == base.beta_max)
    betas = sorted(b for (o, b) in fits if o == base.omega)

    def lookup(_counts: Any, settings: Any, progress_callback: Any = None) -> Any:
        return fits[(settings.omega, settings.beta_max)]

    if base_key not in fits:
        raise KeyError("the base fit is not available")
    return sensitivity_sweep(counts, base, omegas=omegas, beta_maxes=betas, fit_fn=lookup)
