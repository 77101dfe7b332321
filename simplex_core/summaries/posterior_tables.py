"""Tidy tables from a posterior: candidate summary, rank probabilities, pairwise, judge matrices,
posterior predictive check, and the ``result.json`` document.

Every table function takes a :class:`~simplex_core.inference.fit_result.FitResult` or its ArviZ
``InferenceData`` (the posterior made by :func:`simplex_core.inference.fitting.fit_model` is
self-describing: its ``constant_data`` group holds the counts and the included mask, and its
attributes the scale). The tables are the inputs of :mod:`simplex_core.figures` and the app (see
``docs/ARCHITECTURE.md``).
"""

from __future__ import annotations

import json
import math
import platform
from importlib import metadata
from typing import Any, Sequence

import numpy as np
import pandas as pd

from simplex_core.data.views import OWN_FAMILY_SUFFIX, own_family_rater
from simplex_core.model.ranks import INTERVAL_TAILS, rank_quantile
from simplex_core.inference.fit_identity import counts_hash, data_hash
from simplex_core.summaries.leaderboard import summary_columns
from simplex_core.inference.rater_deviation import rater_deviation_record, score_distributions

CANDIDATE_COLUMNS = (
    "candidate",
    "expected_score_mean",
    "expected_score_lo",
    "expected_score_hi",
    "rank_median",
    "rank_lo",
    "rank_hi",
    "p_best",
)


def _idata(fit: Any) -> Any:
    return getattr(fit, "idata", fit)


def flat_draws(fit: Any, name: str) -> np.ndarray:
    """A posterior variable's draws with chains and draws flattened into one axis ``[S, ...]``."""
    arr = np.asarray(_idata(fit).posterior[name].values)
    return arr.reshape((-1,) + arr.shape[2:])


def coordinate_names(fit: Any, dim: str) -> list[str]:
    """The names along a posterior dimension (``candidate``, ``judge``) as strings."""
    return [str(v) for v in _idata(fit).posterior[dim].values]


def counts_of(fit: Any, counts: Any = None) -> Any:
    """The counts behind a fit: ``counts`` if given, else ``fit.counts``, else rebuilt from the
    InferenceData (``constant_data`` counts/included and the scale in the posterior attributes)."""
    if counts is not None:
        return counts
    if getattr(fit, "counts", None) is not None:
        return fit.counts
    from simplex_core.data.scale import Scale

    idata = _idata(fit)
    if not hasattr(idata, "constant_data") or "counts" not in idata.constant_data:
        raise ValueError("This posterior does not carry its counts: pass counts= (a Counts from count_tensor).")
    cd = idata.constant_data
    attrs = idata.posterior.attrs
    scale = Scale.from_dict(json.loads(attrs["scale"])) if "scale" in attrs else Scale(
        tuple(float(i) for i in range(cd.sizes["level"])), tuple(str(v) for v in cd["level"].values))
    judges = tuple(str(v) for v in cd["judge"].values)
    cands = tuple(str(v) for v in cd["candidate"].values)
    included = np.asarray(cd["included"].values, dtype=bool)
    from simplex_core.data.views import Counts

    return Counts(
        N=np.asarray(cd["counts"].values, dtype=np.int64), included=included, judges=judges, candidates=cands,
        # the pairs left out of a judge's vertices with judgments in them (an own-family rater is
        # not included on the other candidates, which it never scored)
        scale=scale, excluded_pairs=tuple((judges[j], cands[k]) for j, k in
                                          zip(*np.nonzero(~included & (np.asarray(cd["counts"].values).sum(axis=-1) > 0)))),
        families=json.loads(attrs.get("families", "{}")), data_hash=attrs.get("data_hash", ""),
    )


def _rank_quantile(ranks: np.ndarray, q: float) -> np.ndarray:
    return rank_quantile(ranks, q).astype(int)  # a rank that occurred: an integer


def point_ranking(expected_score_mean: np.ndarray) -> np.ndarray:
    """The Bayesian point ranking: ranks of the posterior means of E_k (1 = best, ties share)."""
    e = np.asarray(expected_score_mean, dtype=float)
    return 1 + (e[None, :] > e[:, None]).sum(axis=1)


def candidate_summary(fit: Any, sort: bool = True) -> pd.DataFrame:
    """One row per candidate: E_k mean and 95% interval, rank median and 95% interval, P(best).

    Parameters
    ----------
    fit
        A :class:`FitResult` or its InferenceData.
    sort
        Order rows best first (by posterior mean of E_k); otherwise in the data's candidate order.

    Returns
    -------
    pd.DataFrame
        Columns ``candidate, expected_score_mean, expected_score_lo, expected_score_hi,
        rank_median, rank_lo, rank_hi, p_best``, then ``point_rank`` (rank of the posterior mean,
        the Bayesian point ranking). Rank columns are integers: the median rank draw and the 95%
        rank interval of :func:`simplex_core.model.ranks.rank_interval` (the rule of every method;
        the interval includes both ends).
    """
    columns = summary_columns(flat_draws(fit, "expected_score"), flat_draws(fit, "rank"))
    table = pd.DataFrame({"candidate": coordinate_names(fit, "candidate"), **columns,
                          "point_rank": point_ranking(columns["expected_score_mean"])})
    if sort:
        table = table.sort_values(["point_rank", "candidate"], kind="stable").reset_index(drop=True)
    return table


def ranking_sentence(table: pd.DataFrame, top: int = 5, name: Any = str) -> str:
    """The ranking in one line of Markdown, from :func:`candidate_summary`'s table: the ``top``
    best candidates (by posterior mean, as the leaderboard) with their median rank and 95% rank
    interval, e.g. ``**a** (rank 1, 95%: 1–2) · **b** (rank 2.5, 95%: 1–3) · … and 3 more``. No list
    numbers: beside the median rank, a place in the list ("3. … rank 4") read as a second rank.
    The page shows it before the figures load. ``name`` renders a candidate's name (the app passes its
    Markdown escaping, so that only the names are escaped, not the bold around them)."""
    rows = table.sort_values(["expected_score_mean"], ascending=False, kind="stable").head(top)
    parts = []
    for row in rows.itertuples(index=False):
        lo, hi = int(row.rank_lo), int(row.rank_hi)
        med = round(float(row.rank_median) * 2) / 2  # a median of ranks is a whole or a half
        interval = f"{lo}" if lo == hi else f"{lo}–{hi}"
        parts.append(f"**{name(row.candidate)}** (rank {med:g}, 95%: {interval})")
    rest = len(table) - len(rows)
    return " · ".join(parts) + (f" · … and {rest} more" if rest > 0 else "")


def rank_probabilities(fit: Any) -> pd.DataFrame:
    """P(rank = r): rows candidates (data order), columns ranks 1..K; each row sums to 1."""
    r = flat_draws(fit, "rank")
    K = r.shape[1]
    probs = np.stack([(r == k).mean(axis=0) for k in range(1, K + 1)], axis=1)
    out = pd.DataFrame(probs, index=pd.Index(coordinate_names(fit, "candidate"), name="candidate"),
                       columns=pd.Index(range(1, K + 1), name="rank"))
    return out


def truth_score_draws(fit: Any) -> np.ndarray:
    """Draws ``[S, K]`` of the truth's score, E_k + δ_k (:mod:`simplex_core.inference.rater_deviation`;
    E_k alone for a posterior without δ): what ``rank`` ranks."""
    e = flat_draws(fit, "expected_score")
    post = _idata(fit).posterior
    return e + flat_draws(fit, "rater_deviation") if "rater_deviation" in post else e


def pairwise_probabilities(fit: Any) -> pd.DataFrame:
    """P(row ahead of col) for every pair of candidates (data order), of the truth's scores E + δ
    (those the ranks rank); the diagonal is NaN."""
    from simplex_core.summaries.leaderboard import weighted_pairwise  # the tiers' own rule: one computation of P(E_a > E_b)

    p = weighted_pairwise(truth_score_draws(fit))
    names = pd.Index(coordinate_names(fit, "candidate"), name="candidate")
    return pd.DataFrame(p, index=names, columns=names.rename("versus"))


def judge_matrices(fit: Any) -> dict[str, pd.DataFrame]:
    """Posterior mean confusion matrix Θ_j per judge: rows true levels, columns observed levels
    (labels of the scale); each row sums to 1."""
    theta = flat_draws(fit, "theta").mean(axis=0)  # [J, T, M]
    true_labels, labels = coordinate_names(fit, "true_level"), coordinate_names(fit, "level")
    return {
        judge: pd.DataFrame(theta[j], index=pd.Index(true_labels, name="true_level"),
                            columns=pd.Index(labels, name="level"))
        for j, judge in enumerate(coordinate_names(fit, "judge"))
    }


def fitted_score_distributions(fit: Any, max_draws: int | None = None) -> np.ndarray:
    """Draws of γ_jk, the model's score distribution for every (judge, candidate) pair.

    Returns ``[S, J, K, M]``; uses ``π_k^(j)`` with the random effects when the model has them.
    Excluded pairs get the distribution the model implies for them (they did not inform it).
    """
    pi = flat_draws(fit, "pi")  # [S, K, T]
    theta = flat_draws(fit, "theta")  # [S, J, T, M]
    S = pi.shape[0]
    idx = np.arange(S)
    if max_draws is not None and S > max_draws:
        idx = np.linspace(0, S - 1, max_draws).round().astype(int)
    pi, theta = pi[idx], theta[idx]
    post = _idata(fit).posterior
    re = [flat_draws(fit, v)[idx] for v in ("R", "W", "Z")] if all(v in post for v in ("R", "W", "Z")) else []
    return score_distributions(pi, theta, *re)


def posterior_predictive_check(fit: Any, counts: Any = None, seed: int = 0, max_draws: int = 1000) -> pd.DataFrame:
    """Observed vs fitted score distribution per (judge, candidate), with a plain verdict.

    For each pair, replicated count vectors are drawn from the posterior predictive
    (Multinomial(n_jk, γ_jk) per posterior draw). Per level, the 95% posterior predictive interval
    of the count is reported and ``outside`` flags an observed count outside it. Per pair, the
    verdict uses the posterior predictive p-value of the chi-square discrepancy
    ``Σ_m (N_m − n γ_m)² / (n γ_m)``: the pair *disagrees* when p < 0.05, and the verdict names the
    level that deviates most.

    Parameters
    ----------
    fit
        A :class:`FitResult` or its InferenceData.
    counts
        The counts (default: the fit's own, see :func:`counts_of`).
    seed
        Seed of the replicated data (the result is deterministic given the fit and the seed).
    max_draws
        Posterior draws used (evenly spaced).

    Returns
    -------
    pd.DataFrame
        Long table, one row per (judge, candidate, level): ``judge, candidate, level, n, observed,
        observed_share, fitted_share, predicted_lo, predicted_hi, outside, included, p_value,
        agrees, verdict`` (``p_value``, ``agrees`` and ``verdict`` repeat over a pair's levels).
        Excluded (self-family) pairs are checked too — they did not inform the fit, so a
        disagreement there is what self-preference looks like — and say so in the verdict.
    """
    rng = np.random.default_rng(seed)
    counts = counts_of(fit, counts)
    N = np.asarray(counts.N, dtype=np.int64)  # [J, K, M]
    n = N.sum(axis=-1)
    gamma = fitted_score_distributions(fit, max_draws=max_draws)  # [S, J, K, M]
    gamma = np.clip(gamma, 0.0, None)
    gamma = gamma / gamma.sum(axis=-1, keepdims=True)
    S = gamma.shape[0]
    rep = rng.multinomial(np.broadcast_to(n, (S,) + n.shape), gamma)  # [S, J, K, M]
    lo = np.quantile(rep, INTERVAL_TAILS[0], axis=0, method="inverted_cdf")
    hi = np.quantile(rep, INTERVAL_TAILS[1], axis=0, method="inverted_cdf")
    expected = n[None, :, :, None] * gamma
    with np.errstate(divide="ignore", invalid="ignore"):
        d_obs = np.nansum(np.where(expected > 0, (N[None] - expected) ** 2 / expected, 0.0), axis=-1)
        d_rep = np.nansum(np.where(expected > 0, (rep - expected) ** 2 / expected, 0.0), axis=-1)
    p_value = (d_rep >= d_obs).mean(axis=0)  # [J, K]
    fitted_share = gamma.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed_share = np.where(n[..., None] > 0, N / np.maximum(n[..., None], 1), np.nan)
    included = np.asarray(counts.included, dtype=bool)
    scale = counts.scale
    rows = []
    apart = {judge for judge in counts.judges if judge.endswith(OWN_FAMILY_SUFFIX)}
    for j, judge in enumerate(counts.judges):
        for k, cand in enumerate(counts.candidates):
            if judge in apart and n[j, k] == 0 and not included[j, k]:
                continue  # an own-family rater exists only on its family's candidates
            if n[j, k] == 0 and not included[j, k] and own_family_rater(judge) in apart:
                agrees, verdict = True, f"self-family: kept apart, scored by the rater '{own_family_rater(judge)}'."
            elif n[j, k] == 0:
                agrees, verdict = True, "no judgments for this pair."
            else:
                dev = np.abs(observed_share[j, k] - fitted_share[j, k])
                m = int(np.argmax(dev))
                agrees = bool(p_value[j, k] >= 0.05)
                lo_share, hi_share = lo[j, k, m] / n[j, k], hi[j, k, m] / n[j, k]
                detail = (
                    f"observed {observed_share[j, k, m]:.0%} '{scale.labels[m]}' vs fitted "
                    f"{fitted_share[j, k, m]:.0%} (95% predictive range {lo_share:.0%}–{hi_share:.0%})"
                )
                if agrees:
                    verdict = f"agrees (p = {p_value[j, k]:.2f})."
                else:
                    # a p of 0 is "none of the S replicates as far off": below 1/S, not zero
                    shown = f"p < {max(1.0 / S, 0.001):.3g}" if p_value[j, k] < 1.0 / S else f"p = {p_value[j, k]:.3f}"
                    verdict = f"disagrees ({shown}): {detail}."
                if not included[j, k]:
                    verdict = "excluded from the fit (self-family); " + verdict
            for m, label in enumerate(scale.labels):
                rows.append({
                    "judge": judge,
                    "candidate": cand,
                    "level": label,
                    "n": int(n[j, k]),
                    "observed": int(N[j, k, m]),
                    "observed_share": float(observed_share[j, k, m]),
                    "fitted_share": float(fitted_share[j, k, m]),
                    "predicted_lo": int(lo[j, k, m]),
                    "predicted_hi": int(hi[j, k, m]),
                    "outside": bool(N[j, k, m] < lo[j, k, m] or N[j, k, m] > hi[j, k, m]),
                    "included": bool(included[j, k]),
                    "p_value": float(p_value[j, k]) if n[j, k] else float("nan"),
                    "agrees": agrees,
                    "verdict": verdict,
                })
    return pd.DataFrame(rows)


def misfit_sentence(ppc: pd.DataFrame, *, integrated: bool = False, level: float = 0.05) -> str | None:
    """One sentence for beside the ranking when the posterior predictive check says the model misfits,
    or None when it does not.

    Only the fitted (judge, candidate) pairs count. At ``level`` = 0.05 about one pair in twenty
    disagrees by chance even when the model is right, so the sentence is said only when more pairs
    disagree than a Binomial(pairs, level) count reaches 95% of the time; it names the judge (and the
    candidate) with the most misfits, since a judge that treats candidates differently is what a
    per-judge confusion matrix cannot absorb, and says what to try.
    """
    from scipy import stats

    pairs = ppc.drop_duplicates(["judge", "candidate"])
    fitted = pairs[pairs["included"].astype(bool) & (pairs["n"] > 0)]
    bad = fitted[~fitted["agrees"].astype(bool)]
    n_pairs = len(fitted)
    if n_pairs == 0 or len(bad) <= stats.binom.ppf(0.95, n_pairs, level):
        return None
    by_judge = bad["judge"].value_counts()
    judge, n_judge = str(by_judge.index[0]), int(by_judge.iloc[0])
    of_judge = int((fitted["judge"] == judge).sum())
    by_cand = bad["candidate"].value_counts()
    cand, n_cand = str(by_cand.index[0]), int(by_cand.iloc[0])
    remedy = ("even with the judges' deviations by candidate integrated (ω learnt): read the ranking of those "
              "candidates with care, or leave that judge out" if integrated else
              "integrated mode (ω and β_max learnt from the data) lets a judge deviate by candidate")
    return (f"The model misfits {len(bad)} of {n_pairs} judge–candidate pairs, more than chance explains "
            f"(most: judge {judge}, on {n_judge} of its {of_judge} candidates; candidate {cand}, by {n_cand} "
            f"judge{'s' if n_cand != 1 else ''}), so a judge scores some candidates differently from the others and the ranking may lean "
            f"there; {remedy}.")


# -- result.json ---------------------------------------------------------------------------------

def _finite(x: Any) -> Any:
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.bool_,)):
        return bool(x)
    return x


def candidates_records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The ``candidates`` list of result.json from :func:`candidate_summary` (contract columns only)."""
    out = []
    for row in table.to_dict("records"):
        rec = {c: _finite(row[c]) for c in CANDIDATE_COLUMNS}
        for c in ("rank_median", "rank_lo", "rank_hi"):
            rec[c] = int(rec[c])
        out.append(rec)
    return out


def package_versions(extra: Sequence[str] = ()) -> dict[str, str]:
    """Versions of Python and the packages that shape a fit, then those of ``extra`` (e.g. the
    app's ``streamlit`` and ``plotly``); packages not installed are left out."""
    out = {"python": platform.python_version()}
    for name in ("simplex-judge", "numpy", "pymc", "pytensor", "nutpie", "arviz", "pandas", "scipy", *extra):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def data_record(table: Any, dataset: str | None = None, collapsed: bool = False) -> dict[str, Any]:
    """Where a fit's data came from (``settings.data`` of :func:`settings_record`): the built-in
    ``dataset``'s name (None for a file), the table's ``source`` and ``criterion``, and whether its
    levels were ``collapsed`` before the fit."""
    return {"dataset": dataset, "source": getattr(table, "source", None), "criterion": getattr(table, "criterion", None),
            "collapsed": bool(collapsed)}


def settings_record(fit: Any = None, command_line: str | None = None, counts: Any = None,
                    selection: dict[str, list[str]] | None = None, *, settings: Any = None,
                    data: dict[str, Any] | None = None, extra_versions: Sequence[str] = ()) -> dict[str, Any]:
    """Everything needed to reproduce a fit, the one record that ``fit``'s result.json (``settings``), the
    app's result.json and its Settings JSON all write: where the data came from (``data``:
    :func:`data_record`; null fields when not given), data and counts hashes, scale, families, the
    (judge, candidate) pairs left out of the likelihood, the fit's settings (``options``), seed, package
    versions (plus ``extra_versions``, e.g. the app's), the command line, and the candidates and judges
    left out of the file (``selection``: :func:`simplex_core.data.selection.selection_record` of the table
    fitted; empty lists when not given).

    Without a ``fit`` (a fit not yet run), ``counts`` and ``settings`` describe the fit to be."""
    if fit is None and (counts is None or settings is None):
        raise ValueError("settings_record needs a fit, or the counts and the settings of the fit to come.")
    counts = counts_of(fit, counts)
    if settings is None:
        settings = getattr(fit, "settings", None)
    options = settings.to_dict() if settings is not None else json.loads(
        _idata(fit).posterior.attrs.get("settings", "{}"))
    return {
        "data": {**data_record(None), **(data or {})},
        "data_hash": data_hash(counts) or None,
        "counts_hash": counts_hash(counts),
        "scale": counts.scale.to_dict(),
        "families": dict(getattr(counts, "families", {}) or {}),
        "excluded_pairs": [{"judge": j, "candidate": k} for j, k in counts.excluded_pairs],
        "options": options,
        "seed": options.get("seed"),
        "package_versions": package_versions(extra_versions),
        "command_line": command_line,
        "selection": dict(selection) if selection else {"candidates_left_out": [], "judges_left_out": []},
    }


def _diagnostics_dict(fit: Any) -> dict[str, Any]:
    d: Any = getattr(fit, "diagnostics", None)  # Diagnostics, or a mapping from a stored record
    if d is None:
        from simplex_core.inference.fit_result import diagnose

        d = diagnose(_idata(fit))
    return d.to_dict() if hasattr(d, "to_dict") else dict(d)


def result_json(fit: Any, command_line: str | None = None, *, counts: Any = None,
                selection: dict[str, list[str]] | None = None, data: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``result.json`` document of ``python -m simplex_core fit`` (its contract).

    Parameters
    ----------
    fit
        A :class:`FitResult` (or anything with ``idata`` and optionally ``diagnostics``,
        ``timing``, ``settings``, ``counts``).
    command_line
        The command that produced the fit, recorded under ``settings``.
    counts
        The counts, when ``fit`` does not carry them.
    selection
        The candidates and judges left out of the file (:func:`simplex_core.data.selection.selection_record`),
        recorded under ``settings.selection``.
    data
        Where the data came from (:func:`data_record`), recorded under ``settings.data``.

    Returns
    -------
    dict
        Keys: ``candidates`` (list of candidate-summary records, best first), ``leaderboard``
        (per candidate, best first: ``tier``, E and rank intervals, ``p_best``, ``p_top3``,
        ``p_ahead_of_next``; the tier rule of :mod:`simplex_core.summaries.leaderboard`), ``pairwise``
        (``{"candidates": names, "matrix": P}`` with ``P[i][j] = P(E_i + δ_i > E_j + δ_j)``, diagonal null),
        ``judges`` (per judge ``true_levels``, ``levels`` and the posterior mean ``theta_mean``,
        rows = true levels), ``excluded_pairs`` (list of ``{judge, candidate}``), ``notes`` (what the
        reader must know about the data's power: :func:`simplex_core.model.data_notes.data_notes`), ``diagnostics``,
        ``settings`` (:func:`settings_record`: the data's origin, data hash, scale, families, excluded
        pairs, options, seed, package versions, command line, ``selection``: the candidates and judges left out),
        ``hyperparameters`` (integrated mode: ω and β_max's posterior mean and 95% interval,
        :func:`hyperparameter_records`; ``{}`` at a fixed setting), ``judge_panel`` (per judge accuracy,
        leniency and information, the panel's ``effective_judges`` and ``least_informative_judge``:
        :func:`simplex_core.summaries.judge_panel.judge_panel`), ``rater_deviation`` (τ_0 of the truth
        as one more rater, each judge's τ_j and how many pairs informed it, the prior's scale, and why δ is
        zero when it is: :mod:`simplex_core.inference.rater_deviation`; null for a posterior without
        it) and ``timing`` (``compile_s``,
        ``sample_s``, ``sampler``, ``rounds``, and the posterior's ``chains`` and ``draws_per_chain``).
        Every value is JSON-able (NaN becomes null).
    """
    from simplex_core.summaries.leaderboard import leaderboard_from_fit, leaderboard_records
    from simplex_core.model.data_notes import data_notes
    from simplex_core.summaries.judge_panel import judge_panel

    counts = counts_of(fit, counts)
    table = candidate_summary(fit)
    pair = pairwise_probabilities(fit)
    judges = {
        judge: {
            "true_levels": list(m.index),
            "levels": list(m.columns),
            "theta_mean": [[_finite(v) for v in row] for row in m.to_numpy()],
        }
        for judge, m in judge_matrices(fit).items()
    }
    timing = dict(getattr(fit, "timing", None) or {})
    return {
        "candidates": candidates_records(table),
        "leaderboard": leaderboard_records(leaderboard_from_fit(fit)),
        "pairwise": {
            "candidates": list(pair.index),
            "matrix": [[_finite(v) for v in row] for row in pair.to_numpy()],
        },
        "judges": judges,
        "excluded_pairs": [{"judge": j, "candidate": k} for j, k in counts.excluded_pairs],
        "notes": data_notes(counts, getattr(fit, "settings", None)),
        "diagnostics": _diagnostics_dict(fit),
        "settings": settings_record(fit, command_line, counts, selection, data=data),
        "hyperparameters": hyperparameter_records(fit),
        "timing": {**{k: _finite(float(timing[k])) if k in timing else None for k in ("compile_s", "sample_s")},
                   **_sampled(fit, timing)},
        "judge_panel": _finite_tree(judge_panel(fit, counts)),
        "rater_deviation": rater_deviation_record(fit),
    }


def _finite_tree(value: Any) -> Any:
    """``value`` with every non-finite float, at any depth, as None (JSON has no NaN)."""
    if isinstance(value, dict):
        return {k: _finite_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite_tree(v) for v in value]
    return _finite(value) if isinstance(value, float) else value


def _sampled(fit: Any, timing: dict) -> dict[str, Any]:
    """What was sampled in the end: the sampler, the rounds run and the posterior's chains × draws
    (after extra rounds, the draws per chain are 2^(rounds−1) × ``settings.options.draws``)."""
    sizes = fit.idata.posterior.sizes
    rounds = timing.get("rounds")
    return {"sampler": timing.get("sampler"), "rounds": None if rounds is None else int(rounds),
            "chains": int(sizes["chain"]), "draws_per_chain": int(sizes["draw"])}


def hyperparameter_records(fit: Any) -> dict[str, dict[str, float | None]]:
    """Posterior mean and central 95% interval of ω and β_max where the fit sampled them (integrated
    mode; then ``settings.options``' ``omega`` and ``beta_max`` are unused); ``{}`` for a fixed setting."""
    post = _idata(fit).posterior
    out = {}
    for name in ("omega", "beta_max"):
        if name in post:
            x = np.asarray(post[name]).ravel()
            lo, hi = np.quantile(x, INTERVAL_TAILS)  # as the E_k intervals
            out[name] = {"mean": _finite(float(x.mean())), "lo": _finite(float(lo)), "hi": _finite(float(hi))}
    return out
