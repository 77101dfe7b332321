"""Why a ranking from judges misses the truth: judge-level diagnostics on data with ground truth.

Pure functions over an item view (:func:`simplex_core.data.views.item_view`: index (item, candidate),
one column per judge, plus ``true_score``) and, for the posterior parts, a fit's E_k and Θ_j. They
feed ``bench/diagnose_real.py`` and ``docs/DIAGNOSIS-real-data.md``:

- :func:`judge_errors`: each judge's mean error (score − true score) per candidate, over the answers
  it scored; :func:`error_decomposition` splits it into the judge's overall leniency and the
  candidate-dependent part (judge × candidate bias), and measures whether judges share that part;
- :func:`conditional_dependence`: whether judges err together answer by answer, given the truth
  (the shared-truth likelihood assumes they do not);
- :func:`truth_rank_intervals`: how sure the truth itself is of its ranking (items resampled);
- :func:`modal_share`: how near-constant each judge is;
- :func:`empirical_confusion`: a judge's confusion matrix against the (rounded) truth, to set beside
  the posterior's Θ_j (:func:`balanced_accuracy` reads either);
- :func:`shrinkage`: where the posterior E_k sits against the true means (slope, offset, coverage);
- :func:`follows`: which judge's candidate means the posterior ranking is closest to.

Nothing here fits a model; every figure is a plain summary of data (and of a posterior mean).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

TRUE_SCORE = "true_score"


def _judges(view: pd.DataFrame) -> list[str]:
    return [c for c in view.columns if c != TRUE_SCORE]


def truth_means(view: pd.DataFrame) -> pd.Series:
    """Mean true score per candidate over its answers (the true ranking's scores), in view order."""
    cands = list(pd.unique(view.index.get_level_values("candidate")))
    return view[TRUE_SCORE].astype(float).groupby(level="candidate", sort=False).mean().reindex(cands)


def judge_means(view: pd.DataFrame) -> pd.DataFrame:
    """Mean score per judge (rows) and candidate (columns); NaN where the judge scored none of the
    candidate's answers (e.g. self-family pairs set to NaN by ``item_view(..., self_exclusion=True)``)."""
    cands = list(pd.unique(view.index.get_level_values("candidate")))
    return view[_judges(view)].astype(float).groupby(level="candidate", sort=False).mean().reindex(cands).T


def judge_errors(view: pd.DataFrame) -> pd.DataFrame:
    """Mean of (score − true score) per judge (rows) and candidate (columns), over the answers the
    judge scored. Meaningful when scores and truth share a scale (observed levels = true levels)."""
    cands = list(pd.unique(view.index.get_level_values("candidate")))
    err = view[_judges(view)].astype(float).sub(view[TRUE_SCORE].astype(float), axis=0)
    return err.groupby(level="candidate", sort=False).mean().reindex(cands).T


def error_decomposition(errors: pd.DataFrame) -> dict[str, object]:
    """Split judge errors ``e_jk`` (judges x candidates) into leniency and judge x candidate bias.

    ``leniency[j]`` = mean over candidates of e_jk; ``interaction`` = e_jk − leniency[j] (the part
    that depends on the candidate, which a per-judge confusion matrix cannot absorb);
    ``interaction_sd[j]`` its spread over candidates; ``shared_corr`` = mean Pearson correlation,
    over pairs of judges, of their interaction rows (on candidates both scored): near 1 when judges
    err on the same candidates (errors no weighting of judges can cancel), near 0 when independent;
    ``consensus`` = the judges' mean interaction per candidate (what the simple average inherits).
    """
    e = errors.astype(float)
    leniency = e.mean(axis=1)
    inter = e.sub(leniency, axis=0)
    judges = list(e.index)
    corrs = []
    for a in range(len(judges)):
        for b in range(a + 1, len(judges)):
            x, y = inter.iloc[a], inter.iloc[b]
            ok = x.notna() & y.notna()
            if ok.sum() >= 3 and x[ok].std() > 0 and y[ok].std() > 0:
                corrs.append(float(np.corrcoef(x[ok], y[ok])[0, 1]))
    return {
        "leniency": leniency,
        "interaction": inter,
        "interaction_sd": inter.std(axis=1, ddof=0),
        "shared_corr": float(np.mean(corrs)) if corrs else float("nan"),
        "consensus": inter.mean(axis=0),
    }


def conditional_dependence(view: pd.DataFrame, true_levels: Sequence[float]) -> float:
    """Mean correlation of two judges' scores over answers of the same (rounded) true level.

    The shared-truth likelihood assumes judges err independently given an answer's true level
    (Dawid–Skene): then this is near 0. Positive values mean judges share errors answer by answer
    (they agree with each other more than the truth explains), which the model reads as evidence
    about the truth. Per pair of judges and true level: Pearson correlation over the answers both
    scored (skipped when fewer than 10 or either side is constant); averaged with weights = answers.
    """
    judges = _judges(view)
    t = pd.Series(round_to_levels(view[TRUE_SCORE].to_numpy(dtype=float), true_levels), index=view.index)
    total, weight = 0.0, 0
    for a in range(len(judges)):
        for b in range(a + 1, len(judges)):
            pair = view[[judges[a], judges[b]]].astype(float)
            for tv in true_levels:
                sub = pair[np.isclose(t, tv)].dropna()
                if len(sub) < 10 or sub.iloc[:, 0].std() == 0 or sub.iloc[:, 1].std() == 0:
                    continue
                total += len(sub) * float(np.corrcoef(sub.iloc[:, 0], sub.iloc[:, 1])[0, 1])
                weight += len(sub)
    return total / weight if weight else float("nan")


def truth_rank_intervals(view: pd.DataFrame, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """How sure the truth itself is of its ranking: 95% intervals of each candidate's true rank when
    the items are resampled (with replacement; a candidate's mean over its resampled answers).

    A truth measured on few items, or by noisy raters, cannot rank candidates whose true means are
    closer than its own error: a method's interval "missing" such a true rank says little. Columns
    ``rank_lo, rank_hi`` (rank 1 = best, ties averaged), in view order.
    """
    cands = list(pd.unique(view.index.get_level_values("candidate")))
    grid = view[TRUE_SCORE].astype(float).unstack("candidate").reindex(columns=cands)  # items x candidates
    vals = grid.to_numpy()
    has = ~np.isnan(vals)
    filled = np.where(has, vals, 0.0)
    rng = np.random.default_rng(seed)
    w = rng.multinomial(len(grid), np.full(len(grid), 1.0 / len(grid)), size=n_boot).astype(float)  # [B, items]
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (w @ filled) / (w @ has)  # [B, K]
    ranks = np.apply_along_axis(lambda m: stats.rankdata(-np.nan_to_num(m, nan=-np.inf)), 1, means)
    lo, hi = np.quantile(ranks, [0.025, 0.975], axis=0)
    return pd.DataFrame({"rank_lo": lo, "rank_hi": hi}, index=pd.Index(cands, name="candidate"))


def modal_share(view: pd.DataFrame) -> pd.Series:
    """Per judge, the share of its scores on its most used level (1.0 = a constant judge)."""
    out = {}
    for j in _judges(view):
        s = view[j].dropna()
        out[j] = float(s.value_counts(normalize=True).iloc[0]) if len(s) else float("nan")
    return pd.Series(out, name="modal_share")


def round_to_levels(values: np.ndarray, levels: Sequence[float]) -> np.ndarray:
    """Each value to the nearest level, exact halves upwards (a mean of raters of 2.5 -> 3)."""
    lv = np.asarray(levels, dtype=float)
    v = np.asarray(values, dtype=float)[..., None]
    d = np.abs(v - lv)
    best = d.min(axis=-1, keepdims=True)
    # among equally near levels take the highest: halves go up
    idx = np.where(np.isclose(d, best), np.arange(len(lv)), -1).max(axis=-1)
    return lv[idx]


def empirical_confusion(view: pd.DataFrame, judge: str, true_levels: Sequence[float],
                        levels: Sequence[float]) -> pd.DataFrame:
    """P(score = m | true level t) of one judge against the truth rounded to the true levels.

    Rows true levels, columns observed levels; a true level with no answer is a row of NaN.
    """
    rows = view[[judge, TRUE_SCORE]].dropna()
    t = round_to_levels(rows[TRUE_SCORE].to_numpy(), true_levels)
    s = rows[judge].to_numpy(dtype=float)
    out = np.full((len(true_levels), len(levels)), np.nan)
    for a, tv in enumerate(true_levels):
        sel = s[np.isclose(t, tv)]
        if len(sel):
            out[a] = [np.mean(np.isclose(sel, mv)) for mv in levels]
    return pd.DataFrame(out, index=list(true_levels), columns=list(levels))


def balanced_accuracy(confusion: pd.DataFrame | np.ndarray) -> float:
    """Mean over true levels of P(score = that level | true level) (square matrices; NaN rows skipped)."""
    c = np.asarray(confusion, dtype=float)
    n = min(c.shape)
    return float(np.nanmean(np.diag(c[:n, :n])))


def shrinkage(estimate: pd.Series, truth: pd.Series, lo: pd.Series | None = None,
              hi: pd.Series | None = None) -> dict[str, float]:
    """Where estimates of the candidates' mean true score sit against the true means.

    ``slope``: OLS slope of estimate on truth (1 = right spread, < 1 = shrunk together, e.g. by the
    prior); ``offset``: mean of estimate − truth (> 0 = too high); ``pearson``; ``covered``: share of
    true means inside [lo, hi] when an interval is given.
    """
    truth = truth.astype(float)
    est = estimate.reindex(truth.index).astype(float)
    ok = est.notna() & truth.notna()
    x, y = truth[ok].to_numpy(), est[ok].to_numpy()
    slope = float(np.polyfit(x, y, 1)[0]) if ok.sum() >= 2 and np.std(x) > 0 else float("nan")
    out = {
        "slope": slope,
        "offset": float(np.mean(y - x)) if ok.any() else float("nan"),
        "pearson": float(np.corrcoef(x, y)[0, 1]) if ok.sum() >= 2 and np.std(x) > 0 and np.std(y) > 0 else float("nan"),
        "covered": float("nan"),
    }
    if lo is not None and hi is not None:
        lo_, hi_ = lo.reindex(truth.index)[ok].to_numpy(), hi.reindex(truth.index)[ok].to_numpy()
        out["covered"] = float(np.mean((lo_ <= x) & (x <= hi_)))
    return out


def spearman_with(scores: pd.Series, truth: pd.Series) -> float:
    """Spearman correlation of two score vectors matched by candidate (NaN entries dropped; NaN when
    fewer than 3 candidates remain or either side is constant)."""
    s = scores.reindex(truth.index).astype(float)
    ok = s.notna() & truth.notna()
    if ok.sum() < 3 or s[ok].nunique() < 2 or truth[ok].nunique() < 2:
        return float("nan")
    return float(stats.spearmanr(s[ok], truth[ok]).statistic)


def follows(posterior_scores: pd.Series, means: pd.DataFrame) -> pd.Series:
    """Spearman of the posterior's candidate scores with each judge's candidate means (rows of
    ``means``): the judge the posterior ranking is closest to has the highest value."""
    return pd.Series({j: spearman_with(means.loc[j], posterior_scores) for j in means.index}, name="follows")
