"""The product's labelled ranking: what a file's own gold labels make of the label-free ranking.

Which labelled method the product shows is decided here, not in a front end:
:data:`LABELLED_METHOD` = ``bayesian_ppi``, prediction-powered ranking with the **label-free**
shared-truth fit's posterior mean true score per answer as predictor
(:mod:`simplex_core.studies.model_ppi`). Why this one, not the fit with the labels observed
(``bayesian_gold_<pct>``): on the 15 built-in dataset-criteria with truth it kept coverage ≥ 0.90
and ≥ PPI's with 5% and 10% labelled items on 15 of 15, where the gold fit fell below 0.90 on five
(0.75–0.88) and its coverage could drop as labels were added (``bench/labels_vs_ppi.py``,
``bench/results/labels-vs-ppi-all15.log``; docs/RESULTS-shared-truth.md). The rectifier, a mean of
(label − λ ŷ) over the labelled answers, keeps each candidate's estimate unbiased whatever the model gets wrong,
provided the labelled answers are a random sample of the candidate's answers.

The candidates' rectifiers are **pooled** (a normal hierarchical model, BDA3 §5.4): each candidate's bias
of the predictor is a common offset plus its own deviation, whose prior spread is what the label-free
fit says of that candidate (its sd of E_k + δ_k) plus a τ the labels show beyond it. With a handful of
labels per candidate, adding each candidate's own noisy rectifier (plain PPI) left the ranking worse
than the label-free one on most built-in sets (SummHay at 5%: Spearman 0.37 against 0.90 without labels);
pooled, a rectifier moves its candidate as far as its labels stand out from the others' noise
(``bench/labels_vs_ppi.py``, ``bench/results/labels-vs-ppi-pooled-20261207.log``).

The evaluation's ``bayesian_ppi_<pct>`` labels whole items drawn at random; a user's file marks
single answers (``gold`` column), any number per candidate. So here the labelled answers are each
candidate's own; the unlabelled answers are resampled by item, together for every candidate, as the
evaluation's PPI does, and each candidate's rectifier variance is its moderated one (a candidate with a
few labels, all alike, borrows the others' spread instead of claiming a point). Unpooled
(``pooled=False``), the labelled answers are bootstrapped per candidate and the deviations widened by
Hesterberg's expanded-percentile factor.

- :func:`gold_answers`: the table's labelled answers; :func:`without_labels`: the table without its
  gold column (the label-free fit's data).
- :func:`labelled_ranking`: the ranking from the labels and a label-free predictor;
  :func:`labelled_ranking_from_fit`: with the label-free fit's posterior mean true score as predictor.
- :func:`rank_moves`: what the labels changed, per candidate ("rank 3 → 1"), as a table.
- :func:`labels_used_sentence`, :func:`labelled_ranking_sentence`: the page's and the report's lines.
- :func:`label_free_notes`: what the data cannot settle, said of the label-free fit of a file with labels.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from simplex_core.data.table import JudgmentTable
from simplex_core.data.views import item_view
from simplex_core.methods.method_base import MethodResult, item_resample_weights, ranked_result, score_array
from simplex_core.methods.ppi import (RECTIFIER_PRIOR_DF, alike_labels_note, expanded_percentile,
                                     moderated_rectifier_noise, point_lambda, pooled_ppi_estimates,
                                     power_tuning_lambda, rectifier_prior_var)
from simplex_core.model.ranks import rank_scores

__all__ = ["LABELLED_METHOD", "MIN_LABELS_PER_CANDIDATE", "gold_answers", "without_labels", "labelled_ranking",
           "labelled_ranking_from_fit",
           "rank_moves", "labels_used_sentence", "labelled_ranking_sentence", "label_free_notes"]

#: The product's labelled ranking (the method family of :mod:`simplex_core.studies.model_ppi`).
LABELLED_METHOD = "bayesian_ppi"

#: Labelled answers a candidate needs: with one, its rectifier has no spread to resample and the
#: interval would claim a certainty one label cannot give.
MIN_LABELS_PER_CANDIDATE = 2


def gold_answers(table: JudgmentTable) -> pd.MultiIndex:
    """The (item, candidate) answers the table marks gold, in table order (empty without a gold column)."""
    frame = table.frame
    if "gold" not in frame.columns:
        return pd.MultiIndex.from_tuples([], names=["item", "candidate"])
    marked = frame.loc[frame["gold"].to_numpy(dtype=bool), ["item", "candidate"]].drop_duplicates()
    return pd.MultiIndex.from_frame(marked.astype(str))


def without_labels(table: JudgmentTable) -> JudgmentTable:
    """The table with its gold column dropped: every answer unlabelled (the true scores stay, for the
    evaluation against the truth). The same table when nothing is gold. A table made by adding a gold
    column to another gets that table's rows back, so the label-free fit is that table's fit."""
    if "gold" not in table.frame.columns:
        return table
    n = len(gold_answers(table))
    return dataclasses.replace(table, frame=table.frame.drop(columns="gold"),
                               notes=tuple(table.notes) + (f"label-free: the {n} gold label{'s' if n != 1 else ''} "
                                                           "of the file left out.",))


def labelled_ranking(table: JudgmentTable, predictions: pd.Series, *, self_exclusion: bool = True,
                     n_resamples: int = 1000, seed: int = 0, level: float = 0.95,
                     method: str = LABELLED_METHOD, pooled: bool = True,
                     prediction_sd: pd.Series | None = None) -> MethodResult:
    """Prediction-powered ranking of the table's candidates from its gold answers.

    Per candidate k, with labelled answers A_k (gold, with a true score and a prediction) and
    unlabelled answers U_k (not gold, with a prediction), pooled (the default):

        θ_k = mean_{U_k}(ŷ) + r_k,   r_k the posterior of the rectifier mean_{A_k}(y − ŷ) pooled over
        candidates (:func:`~simplex_core.methods.ppi.pooled_rectifier_draws`);

    unpooled (``pooled=False``): θ_k = λ_k mean_{U_k}(ŷ) + mean_{A_k}(y − λ_k ŷ), λ_k the PPI++ power
    tuning (clipped to [0, 1]). Scores are estimated mean true scores, on the scale of the true levels.

    Parameters
    ----------
    table
        A table with a ``gold`` column (the labels are the gold answers' ``true_score``).
    predictions
        ŷ per (item, candidate) from a fit that saw no label (:func:`without_labels`;
        :func:`simplex_core.studies.model_ppi.answer_predictions`). Answers without one are left out.
    self_exclusion
        Leave out self-family judgments, as the fit did (an answer whose every judge is excluded has
        no prediction).
    n_resamples
        Bootstrap replicates: labelled answers resampled per candidate, unlabelled ones by item.
    pooled
        Pool the candidates' rectifiers (λ = 1; :func:`~simplex_core.methods.ppi.pooled_rectifier_draws`):
        the default, as in the evaluation's ``bayesian_ppi``. False: each candidate's own PPI++ rectifier,
        bootstrapped, with the moderated variance and the expanded percentile.
    prediction_sd
        With ``pooled``: per candidate, the label-free fit's sd of E_k + δ_k
        (:func:`~simplex_core.studies.model_ppi.truth_mean_sd`), each rectifier's prior spread beyond the
        learnt τ. None: τ alone.
    seed
        Seed of the bootstrap.

    Raises
    ------
    ValueError
        No gold answer, or a candidate with fewer than :data:`MIN_LABELS_PER_CANDIDATE` labelled
        answers or no unlabelled one (each named, with what to do).
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1; got {n_resamples}.")
    gold = gold_answers(table)
    if len(gold) == 0:
        raise ValueError("The labelled ranking needs gold labels: this table marks no answer gold (a gold column "
                         "with true for the answers whose true_score is a known label).")
    excluded = frozenset(table.self_family_pairs) if self_exclusion else frozenset()
    view = item_view(table)
    arr = score_array(view, excluded)
    items, cands = arr.items, arr.candidates
    full = pd.MultiIndex.from_product([items, cands], names=["item", "candidate"])
    is_gold = full.isin(gold).reshape(len(items), len(cands))
    pred = predictions.reindex(full).to_numpy(dtype=float).reshape(len(items), len(cands))
    has_pred = ~np.isnan(pred) & ~np.all(np.isnan(arr.scores), axis=2)  # excluded-only answers: no prediction
    truth = arr.truth if arr.truth is not None else np.full(pred.shape, np.nan)
    labelled = is_gold & has_pred & ~np.isnan(truth)
    unlabelled = ~is_gold & has_pred
    n_lab, n_unl = labelled.sum(axis=0), unlabelled.sum(axis=0)
    short = [f"{c} ({int(n)})" for c, n in zip(cands, n_lab) if n < MIN_LABELS_PER_CANDIDATE]
    if short:
        raise ValueError(
            f"The labelled ranking needs at least {MIN_LABELS_PER_CANDIDATE} labelled answers (gold, with a judge's "
            f"score) per candidate; {', '.join(short)} {'has' if len(short) == 1 else 'have'} fewer. Label more of "
            "their answers (the Rankings page's 'What to label next' suggests which), or read the label-free ranking.")
    none_left = [c for c, n in zip(cands, n_unl) if n == 0]
    if none_left:
        raise ValueError(f"Every answer of {', '.join(none_left)} is labelled: prediction-powered ranking needs "
                         "unlabelled answers too. Read the labels' own mean instead, or add unlabelled answers.")
    # labelled answers, each candidate's in the first n_k rows of a [n_max, K] block
    n_max = int(n_lab.max())
    y = np.full((n_max, len(cands)), np.nan)
    yh = np.full((n_max, len(cands)), np.nan)
    for k in range(len(cands)):
        rows = np.flatnonzero(labelled[:, k])
        y[: len(rows), k], yh[: len(rows), k] = truth[rows, k], pred[rows, k]
    yu = np.where(unlabelled, pred, np.nan)  # [I, K]
    gen = np.random.default_rng(seed)
    if pooled:
        est, boot = pooled_ppi_estimates(y, yh, yu, item_resample_weights(len(items), n_resamples, gen), gen,
                                         prior_var=rectifier_prior_var(prediction_sd, cands))
    else:
        once_lab = np.where(np.isnan(y), 0.0, 1.0)[None]  # [1, n_max, K]
        est = _estimates(y, yh, yu, once_lab, np.ones((1, len(items))))[0]
        lab_w = _labelled_weights(n_lab, n_max, n_resamples, gen)
        unl_w = item_resample_weights(len(items), n_resamples, gen)
        boot = _estimates(y, yh, yu, lab_w, unl_w)
        lam = point_lambda(y, yh, yu, power_tuning=True)
        boot = boot + moderated_rectifier_noise(y - lam * yh, n_resamples, gen)
        boot = expanded_percentile(est, boot, n_lab, level, extra_df=RECTIFIER_PRIOR_DF)
    draws = rank_scores(boot, nan_last=True)
    return ranked_result(
        method, cands, est, draws, uses_labels=True, level=level,
        details={"n_labelled_answers": float(n_lab.sum()), "n_labelled_items": float(labelled.any(axis=1).sum()),
                 "min_labels_per_candidate": float(n_lab.min()), "n_resamples": float(n_resamples),
                 "pooled": float(pooled),
                 **{f"labels:{c}": float(n) for c, n in zip(cands, n_lab)}},
        notes=alike_labels_note(y, cands, method),
    )


def labelled_ranking_from_fit(fit, table: JudgmentTable, counts, *, max_draws: int | None = 2000,
                              self_exclusion: bool = True, **options) -> MethodResult:
    """:func:`labelled_ranking` with the predictions of a label-free shared-truth ``fit`` of
    :func:`without_labels` ``(table)``, ``counts`` its count tensor (posterior means over at most
    ``max_draws`` draws; ``options`` go to :func:`labelled_ranking`). A fit that saw labels is refused:
    the rectifier corrects a predictor only when the predictor has not seen them."""
    from simplex_core.methods.labelling import LabelDraws
    from simplex_core.studies.model_ppi import answer_predictions, truth_mean_sd

    patterns = getattr(counts, "patterns", None)
    if patterns is not None and bool((np.asarray(patterns.truth) >= 0).any()):
        raise ValueError("The labelled ranking's predictor must come from a label-free fit: these counts hold gold "
                         "labels. Fit without_labels(table) instead.")
    free = without_labels(table)
    predictions = answer_predictions(LabelDraws.from_fit(fit, max_draws=max_draws), free, counts)
    options.setdefault("prediction_sd", truth_mean_sd(fit))
    return labelled_ranking(table, predictions, self_exclusion=self_exclusion, **options)


def _labelled_weights(n_lab: np.ndarray, n_max: int, n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    """``[B, n_max, K]`` multiplicities: each candidate's n_k labelled answers resampled with replacement."""
    out = np.zeros((n_resamples, n_max, len(n_lab)))
    for k, n in enumerate(n_lab):
        idx = gen.integers(0, int(n), size=(n_resamples, int(n)))
        flat = (np.arange(n_resamples)[:, None] * n_max + idx).ravel()
        out[:, :, k] = np.bincount(flat, minlength=n_resamples * n_max).reshape(n_resamples, n_max)
    return out


def _estimates(y: np.ndarray, yh: np.ndarray, yu: np.ndarray, lab_w: np.ndarray, unl_w: np.ndarray) -> np.ndarray:
    """PPI++ means ``[B, K]``: labelled ``y``, ``yh`` ``[n, K]`` weighted by ``lab_w`` ``[B, n, K]``,
    unlabelled ``yu`` ``[I, K]`` (NaN = not there) weighted by item multiplicities ``unl_w`` ``[B, I]``."""
    ok = ~np.isnan(y)
    y0, yh0 = np.where(ok, y, 0.0), np.where(ok, yh, 0.0)
    w = lab_w * ok[None]
    n = w.sum(axis=1)
    sy, syh = np.einsum("bak,ak->bk", w, y0), np.einsum("bak,ak->bk", w, yh0)
    syyh, syh2 = np.einsum("bak,ak->bk", w, y0 * yh0), np.einsum("bak,ak->bk", w, yh0**2)
    u_ok = ~np.isnan(yu)
    yu0 = np.where(u_ok, yu, 0.0)
    big_n, su, su2 = unl_w @ u_ok.astype(float), unl_w @ yu0, unl_w @ yu0**2
    lam = power_tuning_lambda(sy, syh, syyh, syh2, su, su2, n, big_n)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = lam * su / big_n + (sy - lam * syh) / n
    return np.where((n > 0) & (big_n > 0), est, np.nan)


def _rank_text(rank: float) -> str:
    return "–" if rank != rank else f"{rank:g}"


def rank_moves(label_free: MethodResult, labelled: MethodResult) -> pd.DataFrame:
    """What the labels changed, one row per candidate, in the labelled ranking's order (best first):
    ``candidate``, ``label_free_rank``, ``label_free_lo``, ``label_free_hi``, ``labelled_rank``,
    ``labelled_lo``, ``labelled_hi``, ``moved_up`` (label-free rank − labelled rank: > 0 = up) and
    ``move`` in words ("rank 3 → 1", "unchanged (rank 2)"). Ranks are the point ranks (ties averaged)."""
    cands = [c for c in labelled.candidates if c in set(label_free.candidates)]
    if not cands:
        raise ValueError("The two rankings share no candidate.")

    def column(series: pd.Series | None) -> np.ndarray:
        return np.full(len(cands), np.nan) if series is None else series.reindex(cands).to_numpy(dtype=float)

    free, lab = column(label_free.ranks), column(labelled.ranks)
    out = pd.DataFrame({
        "candidate": cands,
        "label_free_rank": free, "label_free_lo": column(label_free.rank_lo), "label_free_hi": column(label_free.rank_hi),
        "labelled_rank": lab, "labelled_lo": column(labelled.rank_lo), "labelled_hi": column(labelled.rank_hi),
        "moved_up": free - lab,
    })
    out["move"] = [f"unchanged (rank {_rank_text(b)})" if a == b else f"rank {_rank_text(a)} → {_rank_text(b)}"
                   for a, b in zip(free, lab)]
    return out.sort_values("labelled_rank", kind="stable").reset_index(drop=True)


def labels_used_sentence(labelled: MethodResult, table: JudgmentTable) -> str:
    """One line: how many labels the labelled ranking used, of how many answers, and the fewest per candidate."""
    d = labelled.details
    n, items = int(d["n_labelled_answers"]), int(d["n_labelled_items"])
    answers = int(table.frame[["item", "candidate"]].drop_duplicates().shape[0])
    return (f"{n} labelled answer{'s' if n != 1 else ''} ({n / answers:.0%} of {answers}, on {items} "
            f"item{'s' if items != 1 else ''}; at least {int(d['min_labels_per_candidate'])} per candidate).")


def labelled_ranking_sentence(labelled: MethodResult, top: int = 5, name=str) -> str:
    """The labelled ranking in one line of Markdown, best first: ``**a** (rank 1, 95%: 1–2) · …``
    (``name`` renders a candidate's name: the app passes its Markdown escaping)."""
    order = labelled.ranks.sort_values(kind="stable").index
    rank_lo = labelled.rank_lo if labelled.rank_lo is not None else labelled.ranks  # no interval: the point rank
    rank_hi = labelled.rank_hi if labelled.rank_hi is not None else labelled.ranks
    parts = []
    for c in list(order)[:top]:
        lo, hi = int(rank_lo[c]), int(rank_hi[c])
        parts.append(f"**{name(c)}** (rank {_rank_text(float(labelled.ranks[c]))}, 95%: {lo if lo == hi else f'{lo}–{hi}'})")
    rest = len(order) - top
    return " · ".join(parts) + (f" · … and {rest} more" if rest > 0 else "")


def label_free_notes(counts, settings=None, n_labels: int = 0) -> list[str]:
    """:func:`simplex_core.model.data_notes.data_notes` of the label-free fit (``counts`` built from
    :func:`without_labels`) of a file with ``n_labels`` gold answers. The notes that close by
    proposing labelled answers (too few judges; the judge prior's lean) are about this fit, which has
    none, but the file has them: their closing remedy becomes what the file's labels do here. The
    same notes as ``data_notes`` when ``n_labels`` is 0."""
    from simplex_core.model.data_notes import data_notes

    notes = data_notes(counts, settings)
    if not n_labels:
        return notes
    labels = f"{n_labels} gold label{'s' if n_labels != 1 else ''}"
    told = (f"This fit is label-free: the file's {labels} are left out of it, and the ranking with labels "
            f"({LABELLED_METHOD}) uses them to correct its predictions' bias, candidate by candidate.")
    out = []
    for note in notes:
        body, _, remedy = note.removesuffix(".").rpartition(". ")
        out.append(f"{body}. {told}" if body and "labelled" in remedy else note)
    return out
