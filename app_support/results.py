"""Cached tables from a fit result, through :mod:`simplex_core.summaries.posterior_tables` and
:mod:`simplex_core.studies.sensitivity` (the app never computes posterior summaries itself).

Every wrapper takes the result (not hashed) and a key naming the fit (hashed), so a table is
computed once per fit and server process. A result is a :class:`simplex_core.inference.fitting.FitResult`
(fitted, or the shipped default read from the fit cache's read-only layer).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st


def candidate_table_with_truth(result: Any, key: str, truth: pd.Series | None) -> pd.DataFrame:
    """:func:`candidate_table` with a ``true_rank`` column when the data have one (the Rankings table
    and the Export CSV, one rule)."""
    table = candidate_table(result, key)
    return table if truth is None else table.assign(true_rank=table["candidate"].map(truth))


@st.cache_data(show_spinner=False, max_entries=64)
def candidate_table(_result: Any, key: str) -> pd.DataFrame:
    """Per candidate, best first: E_k mean and 95% interval, rank median and 95% interval, P(best),
    and the point rank (rank of the posterior mean of E_k)."""
    from simplex_core.summaries import posterior_tables as summaries

    return summaries.candidate_summary(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def leaderboard_table(_result: Any, key: str) -> pd.DataFrame:
    """The presenting leaderboard, best first: tier, E and rank intervals, P(best), P(top 3)
    (:func:`simplex_core.summaries.leaderboard.leaderboard_from_fit`)."""
    from simplex_core.summaries.leaderboard import leaderboard_from_fit

    return leaderboard_from_fit(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def rank_probability_table(_result: Any, key: str) -> pd.DataFrame:
    """Candidate × rank → P(rank = r)."""
    from simplex_core.summaries import posterior_tables as summaries

    return summaries.rank_probabilities(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def pairwise_table(_result: Any, key: str) -> pd.DataFrame:
    """Candidate × candidate → P(E_row > E_col) (diagonal empty)."""
    from simplex_core.summaries import posterior_tables as summaries

    return summaries.pairwise_probabilities(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def judge_matrix_table(_result: Any, key: str) -> pd.DataFrame:
    """Every judge's posterior mean confusion matrix, stacked: rows (judge, true level), columns
    the observed levels."""
    from simplex_core.summaries import posterior_tables as summaries

    mats = summaries.judge_matrices(_result)
    return pd.concat(mats, names=["judge"]).reset_index()


@st.cache_data(show_spinner=False, max_entries=32)
def judge_panel(_result: Any, key: str, _counts: Any) -> tuple[pd.DataFrame, dict]:
    """The judge panel (:func:`simplex_core.summaries.judge_panel.judge_panel`): its per-judge table
    (accuracy, leniency, information alone and added, with intervals) and the whole record."""
    from simplex_core.summaries.judge_panel import judge_panel as panel, judge_panel_table

    record = panel(_result, _counts)
    return judge_panel_table(record), record


@st.cache_data(show_spinner=False, max_entries=32)
def ppc_table(_result: Any, key: str, _counts: Any) -> pd.DataFrame:
    """The posterior predictive check (long: judge, candidate, level, …, agrees, verdict)."""
    from simplex_core.summaries import posterior_tables as summaries

    return summaries.posterior_predictive_check(_result, counts=_counts)


@st.cache_data(show_spinner=False, max_entries=32)
def rank_draws(_result: Any, key: str, max_draws: int | None = None) -> pd.DataFrame:
    """Posterior rank draws, long: ``method, candidate, rank`` (every draw unless ``max_draws`` thins
    them: a thinned set put the figure's 95% whisker inside the interval the tables state):
    :func:`simplex_core.summaries.posterior_views.rank_draws`."""
    from simplex_core.summaries.posterior_views import rank_draws as draws

    long = draws(_result, max_draws).drop(columns="replicate")
    long.insert(0, "method", "bayesian")
    return long


@st.cache_data(show_spinner=False, max_entries=32)
def bayesian_method_result(_result: Any, key: str, max_draws: int | None = None) -> Any:
    """The Bayesian fit as a :class:`simplex_core.methods.baselines.MethodResult` (for the rankings figure and
    the evaluation table), with every rank draw (unless ``max_draws`` thins them):
    :func:`simplex_core.summaries.posterior_views.bayesian_method_result`."""
    from simplex_core.summaries.posterior_views import bayesian_method_result as method_result

    return method_result(_result, max_draws=max_draws)


@st.cache_data(show_spinner="Ranking with the file's labels…", max_entries=16)
def labelled_ranking(_result: Any, key: str, _table: Any, table_key: str, _counts: Any, self_exclusion: bool) -> tuple[Any, str | None]:
    """The product's labelled ranking of a table with gold answers, from the label-free fit ``_result``
    of its answers (:func:`simplex_core.studies.labelled_ranking.labelled_ranking_from_fit`): (MethodResult,
    None), or (None, why it cannot be made from these labels)."""
    from simplex_core.studies.labelled_ranking import labelled_ranking_from_fit

    try:
        return labelled_ranking_from_fit(_result, _table, _counts, self_exclusion=self_exclusion), None
    except ValueError as exc:
        return None, str(exc)


def evaluation_methods(bayes: Any, baselines: dict, labelled: Any = None, ordinal: Any = None) -> dict:
    """The methods the Rankings page's figure and evaluation table show, in its order (the labelled
    ranking, the Bayesian fit, the baselines, the ordinal model), those that are there (not None): the
    Export page's evaluation CSV offers the same rows."""
    from simplex_core.studies.labelled_ranking import LABELLED_METHOD

    return (({LABELLED_METHOD: labelled} if labelled is not None else {}) | ({"bayesian": bayes} if bayes is not None else {})
            | dict(baselines) | ({"ordinal": ordinal} if ordinal is not None else {}))


@st.cache_data(show_spinner=False, max_entries=64)
def judge_simplex_parts(_result: Any, key: str, judge: str, max_draws: int = 60) -> dict:
    """One judge's posterior draws for its simplex view (``theta_draws``, ``theta_mean``,
    ``candidate_posterior``, ``candidates``): :func:`simplex_core.summaries.posterior_views.simplex_parts`."""
    from simplex_core.summaries.posterior_views import simplex_parts

    return simplex_parts(_result, max_draws, [judge])[judge]


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
    from simplex_core.inference.fit_result import Diagnostics, convergence_problem as problem

    d = getattr(result, "diagnostics", None)
    return problem(d) if isinstance(d, Diagnostics) else None


def result_json(result: Any, key: str, counts: Any, command_line: str | None = None,
                selection: dict[str, list[str]] | None = None, data: dict[str, Any] | None = None) -> dict:
    """The command line's ``result.json`` for this fit (``selection``: the candidates and judges left
    out, :func:`simplex_core.data.selection.selection_record`; ``data``: where the data came from,
    :func:`simplex_core.summaries.posterior_tables.data_record`)."""
    from simplex_core.summaries import posterior_tables as summaries

    return summaries.result_json(result, command_line=command_line, counts=counts, selection=selection, data=data)


def sweep(fits: dict[tuple[float, float], Any], base: Any, counts: Any) -> Any:
    """The paper's sensitivity sweep over the settings already fitted (``{(ω, β_max): result}``,
    base included): :func:`simplex_core.studies.sensitivity.summarize_sweep` of those fits. Returns its :class:`~simplex_core.studies.sensitivity.SensitivityResult`."""
    from simplex_core.studies.sensitivity import summarize_sweep

    if (base.omega, base.beta_max) not in fits:
        raise KeyError("the base fit is not available")
    omegas = sorted(o for (o, b) in fits if b == base.beta_max)
    betas = sorted(b for (o, b) in fits if o == base.omega)
    return summarize_sweep(counts, base, fits, omegas, betas)
