"""``ppi_<pct>``: prediction-powered inference (appendix E) of each candidate's mean true score from a
seeded labelled share of the items, the judges' mean as predictor (or another one), with bootstrap rank
intervals at a fixed partition (Hesterberg's expanded percentile intervals optional; a moderated rectifier
variance for candidates with few labels optional). Uses gold labels: never a label-free competitor."""

from __future__ import annotations

from typing import Collection

import numpy as np
import pandas as pd
from scipy import stats

from simplex_core.data.scale import Scale
from simplex_core.model.ranks import rank_scores
from simplex_core.methods.method_base import (TRUE_SCORE, MethodResult, RngLike, as_generator, item_resample_weights, missing_note,
                                             nanmean_last, ranked_result, score_array)


# -- prediction-powered inference -----------------------------------------------------------------

def ppi_mean_estimate(
    labels: np.ndarray,
    pred_labelled: np.ndarray,
    pred_unlabelled: np.ndarray,
    *,
    power_tuning: bool = False,
) -> float:
    """Prediction-powered point estimate of a mean (one candidate).

    With lambda = 1 (default, the original PPI of Angelopoulos et al. 2023):
    ``mean(pred_unlabelled) + mean(labels - pred_labelled)`` -- ppi_py's
    ``ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled, lam=1)``.
    With ``power_tuning=True`` (PPI++), lambda = cov(Y, Yhat) / ((1 + n/N) var(Yhat)) clipped to
    [0, 1], where cov uses 1/n over the labelled rows and var is the ddof=1 variance of all
    predictions, labelled and unlabelled -- ppi_py's ``lam=None`` default; the estimate is
    ``lambda mean(pred_unlabelled) + mean(labels - lambda pred_labelled)``.
    """
    y, yh, yu = (np.asarray(x, dtype=float).ravel() for x in (labels, pred_labelled, pred_unlabelled))
    if len(y) != len(yh):
        raise ValueError(f"{len(y)} labels but {len(yh)} predictions for the labelled rows: give one of each.")
    if len(y) == 0 or len(yu) == 0:
        raise ValueError("PPI needs at least one labelled and one unlabelled row.")
    lam = 1.0
    if power_tuning:
        lam = power_tuning_lambda(
            *(np.array([v], dtype=float) for v in (
                y.sum(), yh.sum(), (y * yh).sum(), (yh**2).sum(), yu.sum(), (yu**2).sum(), len(y), len(yu)
            ))
        )[0]
    return float(lam * yu.mean() + (y - lam * yh).mean())


def expanded_percentile(est: np.ndarray, boot: np.ndarray, n_labels: np.ndarray, level: float,
                        extra_df: float = 0.0) -> np.ndarray:
    """Hesterberg's expanded percentile bootstrap: the draws ``boot`` [B, K] spread around ``est`` [K] by
    sqrt(n / (n − 1)) · t_{n−1} / z per candidate (``n_labels`` labels each), so that intervals from few
    labels have the width of a t interval rather than a normal one. ``extra_df``: degrees of freedom the
    variance borrows elsewhere (the prior's d₀ of :func:`moderated_rectifier_noise`: the t is then
    t_{n−1+d₀}, the moderated t's)."""
    n = np.asarray(n_labels, dtype=float)
    q = (1.0 + level) / 2.0
    df = np.maximum(n - 1.0, 1.0)
    factor = np.sqrt(n / df) * stats.t.ppf(q, df + extra_df) / stats.norm.ppf(q)
    return est + factor * (boot - est)


#: Prior degrees of freedom of the pooled rectifier variance in :func:`moderated_rectifier_noise`: a
#: candidate with n labels weighs its own variance by n − 1 against this many pooled ones. On simulated
#: binary labels, 4 per candidate (tests/test_model_ppi.py), any of 1–8 lifts rank coverage from 0.88 to
#: 0.96–0.97 (with the t on n − 1 degrees of freedom; 0.96 with the moderated t's n − 1 + 4, 0.4 rank
#: narrower); 4 is outweighed by a candidate's own variance from about 20 labels on.
RECTIFIER_PRIOR_DF = 4.0


def moderated_rectifier_noise(rectifiers: np.ndarray, n_resamples: int, rng: np.random.Generator,
                              prior_df: float = RECTIFIER_PRIOR_DF) -> np.ndarray:
    """``[B, K]`` zero-mean normal noise that lifts each candidate's bootstrap variance of its labelled mean
    to a moderated one (Smyth 2004's empirical-Bayes variance, pooled over candidates).

    ``rectifiers`` ``[n, K]``: each candidate's labelled (label − λ ŷ), NaN where it has no label. With a
    handful of labels the sample variance s_k² is often far too small, and zero whenever every label is
    the same (4 binary labels of a candidate right 80% of the time: 41%); PPI++ then sets λ = 0 and the
    bootstrap has nothing to resample, so the interval is a point. The moderated variance
    s̃_k² = (d₀ s₀² + (n_k − 1) s_k²) / (d₀ + n_k − 1), s₀² the pooled within-candidate variance, borrows
    from the other candidates what a few labels cannot say. The noise has variance max(0, s̃_k² − s_k²) / n_k,
    so it only ever widens, and less the more labels a candidate has. Its intervals then take the moderated
    t's d₀ + n_k − 1 degrees of freedom (``extra_df`` of :func:`expanded_percentile`): never narrower than
    Smyth's moderated-t interval, as a candidate whose own variance is the larger keeps it.
    """
    _, n, own, moderated = moderated_variances(rectifiers, prior_df)
    extra = np.where(n > 0, np.maximum(moderated - own, 0.0) / np.maximum(n, 1), 0.0)
    return rng.standard_normal((n_resamples, len(n))) * np.sqrt(extra)


def moderated_variances(rectifiers: np.ndarray, prior_df: float = RECTIFIER_PRIOR_DF
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per candidate ``[K]`` of ``rectifiers`` ``[n, K]`` (NaN = no label): the mean, the number of labels
    n_k, the own variance s_k² (ddof 1; 0 with one label) and Smyth's moderated variance
    s̃_k² = (d₀ s₀² + (n_k − 1) s_k²) / (d₀ + n_k − 1), s₀² pooled within candidates."""
    r = np.asarray(rectifiers, dtype=float)
    ok = ~np.isnan(r)
    n = ok.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, r, 0.0).sum(axis=0) / n
    ss = (np.where(ok, r - mean, 0.0) ** 2).sum(axis=0)
    df = np.maximum(n - 1, 0)
    own = np.where(df > 0, ss / np.maximum(df, 1), 0.0)
    pooled = ss.sum() / df.sum() if df.sum() > 0 else 0.0
    return mean, n, own, (prior_df * pooled + df * own) / (prior_df + df)


#: Grid points of the between-candidate spread τ in :func:`pooled_rectifier_draws` (its posterior is
#: computed exactly on the grid, as for the hierarchical normal model of Gelman et al., BDA3 §5.4).
POOLED_TAU_GRID = 200


def pooled_rectifier_draws(rectifiers: np.ndarray, n_draws: int, rng: np.random.Generator,
                           prior_df: float = RECTIFIER_PRIOR_DF, prior_var: np.ndarray | None = None) -> np.ndarray:
    """``[n_draws, K]`` posterior draws of each candidate's mean rectifier when the candidates' rectifiers
    are pooled: the predictor's bias on candidate k is μ + η_k, η_k ~ N(0, τ²), one μ and τ for all.

    Why: with a few labels per candidate (5% of 100 items: 5), each candidate's rectifier mean is mostly
    noise, and adding it to every candidate's estimate, as PPI does, can leave the ranking worse than the
    label-free one (on the built-ins, Spearman 0.90 → 0.37 on SummHay at 5%). Whether the predictor's
    bias differs between candidates is itself learnt from the labels: when the rectifiers spread no more
    than their noise, τ is near 0 and they shrink to their common mean (the label-free ranking,
    re-centred); when they spread more (judges biased on some candidates), τ is large and each candidate
    keeps its own (PPI's estimate). This is the normal hierarchical model of BDA3 §5.4 (eight schools):
    uniform prior on μ and on τ ∈ [0, τ_max], τ's posterior exact on a grid, then μ | τ and η | μ, τ.

    ``rectifiers`` ``[n, K]``: each candidate's labelled (label − ŷ), NaN where it has no label. Each
    candidate's sampling variance of its rectifier mean is its moderated variance over n_k
    (:func:`moderated_rectifier_noise`'s s̃_k²), drawn per replicate from its scaled inverse-χ² with
    n_k − 1 + ``prior_df`` degrees of freedom, so a few labels give t-like tails.

    ``prior_var`` ``[K]`` (default zeros): what the predictor itself says of how far the truth's mean of
    candidate k may lie from its prediction (the label-free posterior variance of E_k + δ_k), added to
    τ²: η_k ~ N(0, τ² + prior_var_k). A candidate the predictor knows little about (one judge) then keeps
    its own labels' word; τ is what the labels show beyond it.
    """
    mean, n, _, moderated = moderated_variances(rectifiers, prior_df)
    if np.any(n < 1):
        raise ValueError("pooled rectifiers need at least one label per candidate.")
    n = n.astype(float)
    extra = np.zeros(len(n)) if prior_var is None else np.nan_to_num(np.asarray(prior_var, dtype=float))
    dof = prior_df + np.maximum(n - 1.0, 0.0)
    moderated = np.maximum(moderated, 1e-12)
    # noise variance of each rectifier mean, one draw per replicate: s̃² · dof / χ²_dof / n  [B, K]
    v = moderated * dof / rng.chisquare(dof, size=(n_draws, len(n))) / n
    spread = float(np.ptp(mean)) + 4.0 * float(np.sqrt(moderated / n).max())
    tau = np.linspace(0.0, max(spread, 1e-6), POOLED_TAU_GRID)  # [G]
    total = v[:, :, None] + extra[None, :, None] + tau[None, None, :] ** 2  # [B, K, G]
    w = 1.0 / total
    mu_hat = (w * mean[None, :, None]).sum(axis=1) / w.sum(axis=1)  # [B, G]
    v_mu = 1.0 / w.sum(axis=1)
    log_post = (0.5 * np.log(v_mu) - 0.5 * np.log(total).sum(axis=1)
                - 0.5 * (w * (mean[None, :, None] - mu_hat[:, None, :]) ** 2).sum(axis=1))  # [B, G]
    prob = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    cum = np.cumsum(prob, axis=1)
    pick = (cum < rng.uniform(size=(n_draws, 1)) * cum[:, -1:]).sum(axis=1)  # one τ per replicate
    rows = np.arange(n_draws)
    spread2 = tau[pick][:, None] ** 2 + extra[None, :]  # [B, K]: the prior variance of η_k
    mu = mu_hat[rows, pick] + np.sqrt(v_mu[rows, pick]) * rng.standard_normal(n_draws)
    free = spread2 > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = 1.0 / v + np.where(free, 1.0 / spread2, 0.0)  # [B, K]
        centre = np.where(free, (mean[None, :] / v + mu[:, None] / spread2) / prec, mu[:, None])
        sd = np.where(free, np.sqrt(1.0 / prec), 0.0)
    return centre + sd * rng.standard_normal((n_draws, len(n)))


def alike_labels_note(y: np.ndarray, candidates, name: str) -> tuple[str, ...]:
    """The note for candidates whose labelled answers (``y`` ``[n, K]``, NaN = none) all carry the same
    label: their own labels show no spread, so their interval's width comes from the other candidates'."""
    alike = [str(c) for c, col in zip(candidates, np.asarray(y, dtype=float).T)
             if np.unique(col[~np.isnan(col)]).size == 1 and (~np.isnan(col)).sum() > 1]
    if not alike:
        return ()
    one = len(alike) == 1
    return (f"{name}: the labels of {', '.join(alike)} are all alike{'' if one else ' (each its own)'}, so they "
            f"cannot say how far {'its' if one else 'their'} estimate may be off; the interval takes its spread "
            f"from the other candidates' labels (a moderated variance). More labels of {'it' if one else 'them'} "
            "narrow it honestly.",)


def point_lambda(y: np.ndarray, yh: np.ndarray, yu: np.ndarray, power_tuning: bool) -> np.ndarray:
    """Per-candidate λ ``[K]`` of the point estimate: labelled ``y``, ``yh`` ``[n, K]``, unlabelled ``yu``
    ``[N, K]``, NaN = not there (a labelled row counts when both exist); ones without power tuning."""
    lab_ok = ~np.isnan(y) & ~np.isnan(yh)
    if not power_tuning:
        return np.ones(y.shape[1])
    y0, yh0 = np.where(lab_ok, y, 0.0), np.where(lab_ok, yh, 0.0)
    u_ok = ~np.isnan(yu)
    yu0 = np.where(u_ok, yu, 0.0)
    return power_tuning_lambda(y0.sum(0), yh0.sum(0), (y0 * yh0).sum(0), (yh0**2).sum(0), yu0.sum(0),
                               (yu0**2).sum(0), lab_ok.sum(0).astype(float), u_ok.sum(0).astype(float))


def power_tuning_lambda(
    sy: np.ndarray, syh: np.ndarray, syyh: np.ndarray, syh2: np.ndarray,
    su: np.ndarray, su2: np.ndarray, n: np.ndarray, big_n: np.ndarray,
) -> np.ndarray:
    """PPI++ lambda from (weighted) sums, vectorised; matches ppi_py's ``_calc_lam_glm`` for d = 1."""
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = (syyh - sy * syh / n) / n  # 1/n covariance of labels and predictions on labelled rows
        tot = n + big_n
        mean_all = (syh + su) / tot
        var = (syh2 + su2 - tot * mean_all**2) / (tot - 1.0)  # ddof=1 over all predictions
        lam = cov / ((1.0 + n / big_n) * var)
    # When every prediction is equal the estimate does not depend on lambda; any value will do.
    lam = np.where(np.isfinite(lam), lam, 1.0)
    return np.clip(lam, 0.0, 1.0)


def ppi_labelled_items(n_items: int, labelled_fraction: float, rng: RngLike | None) -> np.ndarray:
    """Boolean mask ``[I]`` of the labelled items: ``max(1, round(fraction * I))`` items chosen by
    ``rng.permutation(n_items)`` (the first ones). The draw lives in
    :func:`simplex_core.data.gold.labelled_item_mask`, shared with the Bayesian gold methods."""
    from simplex_core.data.gold import labelled_item_mask

    return labelled_item_mask(n_items, labelled_fraction, as_generator(rng))


def _ppi_estimates(
    y: np.ndarray,
    yh: np.ndarray,
    yu: np.ndarray,
    lab_w: np.ndarray,
    unl_w: np.ndarray,
    power_tuning: bool,
) -> np.ndarray:
    """PPI means ``[B, K]`` from labelled labels ``y`` and predictions ``yh`` (``[n, K]``) and
    unlabelled predictions ``yu`` (``[N, K]``).

    ``lab_w`` ``[B, n]`` and ``unl_w`` ``[B, N]`` are item multiplicities (all ones = the data once).
    A labelled row counts when both its label and prediction exist; an unlabelled row when its
    prediction exists.
    """
    lab_ok = (~np.isnan(y) & ~np.isnan(yh)).astype(float)
    unl_ok = (~np.isnan(yu)).astype(float)
    y0, yh0, yu0 = (np.where(np.isnan(x), 0.0, x) for x in (y, yh, yu))
    n = lab_w @ lab_ok
    big_n = unl_w @ unl_ok
    sy, syh = lab_w @ (y0 * lab_ok), lab_w @ (yh0 * lab_ok)
    su = unl_w @ (yu0 * unl_ok)
    if power_tuning:
        syyh, syh2 = lab_w @ (y0 * yh0 * lab_ok), lab_w @ (yh0**2 * lab_ok)
        lam = power_tuning_lambda(sy, syh, syyh, syh2, su, unl_w @ (yu0**2 * unl_ok), n, big_n)
    else:
        lam = np.ones_like(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = lam * su / big_n + (sy - lam * syh) / n
    return np.where((n > 0) & (big_n > 0), est, np.nan)


def rectifier_prior_var(prediction_sd: pd.Series | None, candidates, unit: float = 1.0) -> np.ndarray | None:
    """``prior_var`` of :func:`pooled_rectifier_draws` ``[K]`` from a predictor's sd per candidate
    (``unit``: the width of the scale the rectifiers are on, in the sd's units), None without one."""
    if prediction_sd is None:
        return None
    return (prediction_sd.reindex(list(candidates)).to_numpy(dtype=float) / unit) ** 2


def pooled_ppi_estimates(y: np.ndarray, yh: np.ndarray, yu: np.ndarray, unl_w: np.ndarray,
                         gen: np.random.Generator, prior_var: np.ndarray | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Point estimates ``[K]`` and replicates ``[B, K]`` of :func:`ppi_mean_ranks` with ``pooled``: mean
    unlabelled prediction (bootstrapped by item with ``unl_w`` ``[B, N]``) plus the pooled rectifier
    (``prior_var``: :func:`pooled_rectifier_draws`'s)."""
    ok = (~np.isnan(yu)).astype(float)
    yu0 = np.where(np.isnan(yu), 0.0, yu)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = (yu0 * ok).sum(axis=0) / ok.sum(axis=0)
        boot_centre = (unl_w @ (yu0 * ok)) / (unl_w @ ok)
    draws = pooled_rectifier_draws(y - yh, unl_w.shape[0], gen, prior_var=prior_var)
    return centre + draws.mean(axis=0), boot_centre + draws


def ppi_mean_ranks(
    view: pd.DataFrame,
    scale: Scale,
    labelled_fraction: float = 0.10,
    n_resamples: int = 300,
    rng: RngLike | None = None,
    *,
    excluded: Collection[tuple[str, str]] = (),
    power_tuning: bool = False,
    level: float = 0.95,
    predictions: pd.Series | None = None,
    name: str | None = None,
    expanded: bool = False,
    moderated: bool = False,
    pooled: bool = False,
    prediction_sd: pd.Series | None = None,
) -> MethodResult:
    """Prediction-powered ranking (methods ``ppi_5``, ``ppi_10``; uses gold labels).

    1. A random ``labelled_fraction`` of the items is labelled (:func:`ppi_labelled_items`, drawn
       first from ``rng``); the rest are unlabelled. The partition is the same for every candidate.
    2. The prediction for an answer is the mean over the non-excluded judges that scored it of
       ``scale.rescale(score)`` (observed range mapped to [0, 1]; an abstain level counts as its
       position on the scale); the label is ``scale.rescale(true_score)``.
    3. Per candidate, the PPI point estimate of its mean label (:func:`ppi_mean_estimate`; lambda = 1
       by default, PPI++ power tuning with ``power_tuning=True``). Answers without any prediction are
       left out (and labelled answers without a true score).
    4. Rank intervals: ``n_resamples`` bootstrap replicates that resample the labelled items and the
       unlabelled items separately, with replacement (the partition stays fixed), recompute every
       candidate's estimate and re-rank; :func:`~simplex_core.model.ranks.rank_interval`.

    Parameters
    ----------
    view
        Item view with a ``true_score`` column.
    scale
        The table's scale (for the rescaling).
    labelled_fraction
        Share of items labelled (0.05 -> ``ppi_5``, 0.10 -> ``ppi_10``).
    predictions
        Another predictor instead of the judges' mean (step 2): one value per (item, candidate) on the
        scale of ``true_score`` (rescaled here like the labels), NaN or absent = no prediction. It must
        not have seen the labels, or the rectifier no longer corrects its bias
        (:mod:`simplex_core.studies.model_ppi` passes the label-free model's posterior mean true score).
    name
        Method name (default ``ppi_<pct>``).
    expanded
        Widen each candidate's bootstrap deviations from its estimate by Hesterberg's (2015)
        expanded-percentile factor ``sqrt(n / (n - 1)) t_{n-1} / z`` (n = its labelled answers), before
        ranking: the percentile bootstrap of a mean over a handful of labelled items is too narrow
        (with 3 items it sees 10 distinct resamples); the factor is ~1.2 at n = 10 and ~1.05 at n = 40.
    moderated
        Before the expansion, lift each candidate's bootstrap variance of its labelled mean to the
        moderated variance of its rectifiers (:func:`moderated_rectifier_noise`): with a handful of
        labels per candidate, all alike more often than not, the bootstrap alone can be a point.
    pooled
        Pool the candidates' rectifiers (:func:`pooled_rectifier_draws`, λ = 1): each candidate's
        estimate is the mean prediction over its unlabelled answers (bootstrapped by item) plus a draw of
        its rectifier from the hierarchical posterior, which shrinks the rectifiers to their common mean
        as far as the labels show no real difference between candidates. Replaces ``power_tuning``,
        ``moderated`` and ``expanded`` (the posterior carries the few labels' uncertainty itself).
    prediction_sd
        With ``pooled``: per candidate, how far the predictor says the truth's mean may lie from its
        prediction (on the scale of ``true_score``; the label-free posterior sd of E_k + δ_k), the
        rectifiers' prior spread beyond the learnt τ. None: τ alone.
    """
    if TRUE_SCORE not in view.columns:
        raise ValueError(
            "PPI needs ground truth: the item view has no 'true_score' column. Load data with a "
            "true_score column, or leave the PPI methods out."
        )
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1; got {n_resamples}.")
    gen = as_generator(rng)
    arr = score_array(view, excluded)
    name = name or f"ppi_{int(round(labelled_fraction * 100))}"
    labelled = ppi_labelled_items(len(arr.items), labelled_fraction, gen)
    if predictions is None:
        preds = nanmean_last(scale.rescale(arr.scores))  # [I, K]
    else:
        full = pd.MultiIndex.from_product([arr.items, arr.candidates], names=["item", "candidate"])
        given = predictions.reindex(full).to_numpy(dtype=float)
        preds = scale.rescale(given).reshape(len(arr.items), len(arr.candidates))
    assert arr.truth is not None  # the view has a true_score column (checked above)
    labels = scale.rescale(arr.truth)  # [I, K]
    y_l, yh_l, yh_u = labels[labelled], preds[labelled], preds[~labelled]
    n_lab, n_unl = int(labelled.sum()), int((~labelled).sum())
    est = _ppi_estimates(y_l, yh_l, yh_u, np.ones((1, n_lab)), np.ones((1, n_unl)), power_tuning)[0]
    no_label = [c for c, ok in zip(arr.candidates, (~np.isnan(y_l) & ~np.isnan(yh_l)).any(axis=0)) if not ok]
    if no_label:
        who = (f"candidates {', '.join(map(str, no_label))} have" if len(no_label) > 1 else f"candidate {no_label[0]} has")
        raise ValueError(
            f"{name}: {who} no labelled answer with both a true score and a judge score "
            f"among the {n_lab} labelled items, so PPI cannot correct their predictions. Use a larger "
            "labelled fraction or data where these candidates have true scores."
        )
    lab_w = item_resample_weights(n_lab, n_resamples, gen)
    unl_w = item_resample_weights(n_unl, n_resamples, gen)
    if pooled:
        prior_var = rectifier_prior_var(prediction_sd, arr.candidates, unit=scale.values[-1] - scale.values[0])
        est, boot = pooled_ppi_estimates(y_l, yh_l, yh_u, unl_w, gen, prior_var=prior_var)
        power_tuning = moderated = expanded = False
    else:
        boot = _ppi_estimates(y_l, yh_l, yh_u, lab_w, unl_w, power_tuning)
    if moderated:
        lam = point_lambda(y_l, yh_l, yh_u, power_tuning)
        boot = boot + moderated_rectifier_noise(y_l - lam * yh_l, n_resamples, gen)
    if expanded:
        boot = expanded_percentile(est, boot, (~np.isnan(y_l) & ~np.isnan(yh_l)).sum(axis=0), level,
                                   extra_df=RECTIFIER_PRIOR_DF if moderated else 0.0)
    draws = rank_scores(boot, nan_last=True)
    return ranked_result(
        name, arr.candidates, est, draws,
        uses_labels=True,
        level=level,
        details={
            "labelled_fraction": float(labelled_fraction),
            "n_labelled_items": float(n_lab),
            "power_tuning": float(power_tuning),
            "n_resamples": float(n_resamples),
            "expanded": float(expanded),
            "moderated": float(moderated),
            "pooled": float(pooled),
        },
        notes=missing_note(est, arr.candidates, name) + (alike_labels_note(y_l, arr.candidates, name)
                                                         if moderated else ()),
    )


