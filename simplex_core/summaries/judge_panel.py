"""The judge panel explained: how good each judge is, and how many independent judges the panel is worth.

Everything is computed from the posterior draws of a shared-truth fit (Θ_j, π_k and, with ω > 0, the
random effects, through :class:`simplex_core.methods.labelling.LabelDraws`) and, for the information
measures, from the answers' score patterns (:attr:`simplex_core.data.views.Counts.patterns`). Each
figure has a posterior mean and a central 95% interval over the draws.

Per judge j:

- ``accuracy``: the mean over true levels t of Θ_j[t, t] (the diagonal mass, each true level counted
  once: a balanced accuracy that does not depend on how common each level is);
- ``leniency``: Σ_t p̄[t] Σ_m Θ_j[t, m] (v_m − v_t), the judge's mean score minus the true score, in
  score units, with p̄ the panel's true-level distribution (π_k averaged over candidates, weighted by
  their answers); > 0 = lenient;
- ``info_alone``: I(T; S_j | K) in bits, the information judge j's score alone gives about an
  answer's true level T (given its candidate K, whose π_k is the prior on T);
- ``info_added``: I(T; S | K) − I(T; S_−j | K), what judge j adds to the rest of the panel.

The panel: ``info_panel`` = I(T; S | K), the information all judges' scores of an answer give about its
true level, and

    effective_judges = I(T; S | K) / max_j I(T; S_j | K),

the panel's information in units of its most informative judge. Under the model's conditional
independence of judges given T, I(T; S) ≥ max_j I(T; S_j) and I(T; S) ≤ Σ_j I(T; S_j) ≤ J max_j I(T; S_j),
so it lies in [1, J]: 1 when one judge settles what the others could tell (a perfect judge, or the
others noise), J only for J equally informative judges whose information adds up without overlap; J
accurate judges saturate below J because they tell the same truth. It is a number of *best* judges
(the sense of "six judges amount to about 1.9 effective judges"). ``least_informative_judge`` is the
judge with the smallest posterior mean ``info_added``: the one the panel loses least without.

The mutual informations are averages over the data's non-gold answers of the Kullback–Leibler
divergence from π_k to the answer's posterior over T (that average is I(T; S | K) when the answers
follow the model); an answer a judge did not score adds nothing for it. Because the average runs over
the observed answers, a draw's ratio can leave [1, J] by sampling error; it is clipped there. A panel
with no information at all (every judge noise) has effective_judges 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from simplex_core.data.patterns import NO_SCORE
from simplex_core.methods.labelling import LabelDraws
from simplex_core.model.ranks import INTERVAL

__all__ = ["PanelInformation", "judge_panel", "judge_panel_sentence", "judge_panel_table", "judge_quality",
           "panel_information"]

_CHUNK = 64  # patterns per block: [P, J, S, T] terms
_LOG2 = np.log(2.0)


def _interval(x: np.ndarray) -> tuple[float, float, float]:
    x = np.asarray(x, dtype=float)
    lo, hi = np.quantile(x, [(1 - INTERVAL) / 2, 1 - (1 - INTERVAL) / 2], axis=0)
    return x.mean(axis=0), lo, hi


def _kl_bits(logq: np.ndarray, log_pi: np.ndarray) -> np.ndarray:
    """KL(q ‖ π) in bits over the last axis, q given by unnormalised log weights."""
    with np.errstate(invalid="ignore"):
        logq = logq - logq.max(axis=-1, keepdims=True)
    logq = logq - np.log(np.exp(logq).sum(axis=-1, keepdims=True))
    q = np.exp(logq)
    with np.errstate(invalid="ignore"):
        terms = np.where(q > 0, q * (logq - log_pi), 0.0)
    # a pattern a draw gives probability 0 (possible only with a Θ of exact zeros) tells nothing
    return np.maximum(np.nan_to_num(terms.sum(axis=-1), nan=0.0), 0.0) / _LOG2


class PanelInformation:
    """Per-draw information measures (bits): ``alone`` and ``added`` ``[S, J]``, ``panel`` ``[S]``,
    ``effective`` ``[S]`` (in [1, J])."""

    def __init__(self, alone: np.ndarray, added: np.ndarray, panel: np.ndarray):
        self.alone, self.added, self.panel = alone, added, panel
        J = alone.shape[1]
        best = alone.max(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(best > 0, panel / np.where(best > 0, best, 1.0), 1.0)
        self.effective = np.clip(ratio, 1.0, float(J))


def panel_information(draws: LabelDraws, candidate: np.ndarray, scores: np.ndarray,
                      weight: np.ndarray) -> PanelInformation:
    """The information measures of the module docstring from draws and answer patterns.

    ``candidate`` ``[P]``, ``scores`` ``[P, J]`` (observed-level index, :data:`NO_SCORE` where none),
    ``weight`` ``[P]`` (answers per pattern).
    """
    log_L = draws.log_emission()  # [S, J, K', T, M]
    S, J, Kl, T, _ = log_L.shape
    log_L = np.ascontiguousarray(log_L.transpose(1, 2, 4, 0, 3))  # [J, K', M, S, T]
    with np.errstate(divide="ignore"):
        log_pi_all = np.log(draws.pi).transpose(1, 0, 2)  # [K, S, T]
    candidate = np.asarray(candidate, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.int64)
    w = np.asarray(weight, dtype=float)
    total = w.sum()
    alone = np.zeros((S, J))
    minus = np.zeros((S, J))
    panel = np.zeros(S)
    if total <= 0:
        return PanelInformation(alone, minus, panel)
    for start in range(0, candidate.size, _CHUNK):
        c = candidate[start:start + _CHUNK]
        sc = scores[start:start + _CHUNK]
        wc = w[start:start + _CHUNK] / total
        kl = c if Kl > 1 else np.zeros_like(c)
        has = sc != NO_SCORE
        terms = log_L[np.arange(J)[None, :], kl[:, None], np.maximum(sc, 0)]  # [P, J, S, T]
        terms = np.where(has[:, :, None, None], terms, 0.0)
        log_pi = log_pi_all[c]  # [P, S, T]
        # the others' sum from prefix and suffix sums, not summed − terms[j]: a term can be −inf
        before = np.concatenate([np.zeros_like(terms[:, :1]), np.cumsum(terms, axis=1)], axis=1)
        after = np.concatenate([np.cumsum(terms[:, ::-1], axis=1)[:, ::-1], np.zeros_like(terms[:, :1])], axis=1)
        summed = before[:, J]  # [P, S, T]
        kl_all = _kl_bits(summed + log_pi, log_pi)  # [P, S]
        panel += wc @ kl_all
        for j in range(J):
            kl_alone = _kl_bits(terms[:, j] + log_pi, log_pi)
            kl_minus = _kl_bits(before[:, j] + after[:, j + 1] + log_pi, log_pi)
            alone[:, j] += wc @ np.where(has[:, j, None], kl_alone, 0.0)
            minus[:, j] += wc @ kl_minus
    return PanelInformation(alone, panel[:, None] - minus, panel)


def judge_quality(draws: LabelDraws, true_index: np.ndarray, values: np.ndarray,
                  answers_per_candidate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-draw ``accuracy`` and ``leniency`` ``[S, J]`` (module docstring)."""
    theta = np.asarray(draws.theta, dtype=float)  # [S, J, T, M]
    true_index = np.asarray(true_index, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    T = true_index.size
    diag = theta[:, :, np.arange(T), true_index]  # [S, J, T]
    accuracy = diag.mean(axis=2)
    n = np.asarray(answers_per_candidate, dtype=float)
    n = n / n.sum() if n.sum() > 0 else np.full(n.size, 1.0 / n.size)
    p_bar = np.einsum("k,skt->st", n, draws.pi)  # [S, T]
    error = values[None, :] - values[true_index][:, None]  # [T, M]: v_m − v_t
    mean_error = np.einsum("sjtm,tm->sjt", theta, error)  # [S, J, T]
    leniency = np.einsum("st,sjt->sj", p_bar, mean_error)
    return accuracy, leniency


def _answers_per_candidate(counts: Any) -> np.ndarray:
    patterns = getattr(counts, "patterns", None)
    K = len(counts.candidates)
    if patterns is not None:
        return np.bincount(patterns.candidate, weights=patterns.weight, minlength=K)
    return np.asarray(counts.N, dtype=float).sum(axis=2).max(axis=0)  # the judge that scored most


def _record(x: np.ndarray) -> dict[str, float]:
    mean, lo, hi = _interval(x)
    return {"mean": float(mean), "lo": float(lo), "hi": float(hi)}


def judge_panel(fit: Any, counts: Any, *, max_draws: int = 500, seed: int = 0) -> dict[str, Any]:
    """The ``judge_panel`` section of result.json.

    Keys: ``judges`` (one record per judge: ``judge``, ``accuracy``, ``leniency``, ``info_alone``,
    ``info_added``, each ``{mean, lo, hi}``), ``info_panel`` (bits), ``effective_judges`` ``{mean, lo,
    hi}`` in [1, J], ``least_informative_judge``, ``n_judges``, ``answers`` (the answers the information
    averages over), ``definition`` (one sentence). ``counts``: the fit's data
    (:func:`simplex_core.summaries.posterior_tables.counts_of`); without answer patterns (counts rebuilt
    from a posterior file) the information keys are null.
    """
    draws = LabelDraws.from_fit(fit, max_draws=max_draws, seed=seed)
    scale = counts.scale
    accuracy, leniency = judge_quality(draws, np.asarray(scale.true_index), np.asarray(scale.values),
                                       _answers_per_candidate(counts))
    judges = list(counts.judges)
    patterns = getattr(counts, "patterns", None)
    info = None
    n_answers = 0
    if patterns is not None:
        free = patterns.truth == NO_SCORE  # gold answers' true level is known: nothing to learn
        n_answers = int(patterns.weight[free].sum())
        if n_answers:
            info = panel_information(draws, patterns.candidate[free], patterns.scores[free], patterns.weight[free])
    records = []
    for j, name in enumerate(judges):
        rec = {"judge": name, "accuracy": _record(accuracy[:, j]), "leniency": _record(leniency[:, j]),
               "info_alone": None, "info_added": None}
        if info is not None:
            rec["info_alone"] = _record(info.alone[:, j])
            rec["info_added"] = _record(info.added[:, j])
        records.append(rec)
    least = None
    if info is not None and len(judges) > 1:
        least = judges[int(np.argmin(info.added.mean(axis=0)))]
    return {
        "judges": records,
        "n_judges": len(judges),
        "answers": n_answers,
        "info_panel": None if info is None else _record(info.panel),
        "effective_judges": None if info is None else _record(info.effective),
        "least_informative_judge": least,
        "definition": ("effective_judges = I(T; all scores | candidate) / max_j I(T; score_j | candidate): "
                       "the panel's information about an answer's true level in units of its most informative "
                       "judge, in [1, J]; accuracy = mean of diag Θ_j; leniency = mean score − true score."),
    }


def judge_panel_table(panel: dict[str, Any]) -> pd.DataFrame:
    """The per-judge records of :func:`judge_panel` as a flat table (one row per judge; ``_lo``/``_hi``
    columns), for the app and CSV."""
    rows = []
    for rec in panel["judges"]:
        row: dict[str, Any] = {"judge": rec["judge"]}
        for key in ("accuracy", "leniency", "info_alone", "info_added"):
            r = rec.get(key) or {"mean": np.nan, "lo": np.nan, "hi": np.nan}
            row[key] = r["mean"]
            row[f"{key}_lo"] = r["lo"]
            row[f"{key}_hi"] = r["hi"]
        rows.append(row)
    return pd.DataFrame(rows)


def judge_panel_sentence(panel: dict[str, Any]) -> str:
    """One sentence on the panel as a whole (the app's Judges section, beside its table)."""
    e = panel.get("effective_judges")
    if e is None:
        return (f"{panel['n_judges']} judges; the answers' score patterns are not at hand, so the panel's "
                "information cannot be measured (accuracy and leniency below).")
    text = (f"The {panel['n_judges']} judges are worth {e['mean']:.2f} (95% interval {e['lo']:.2f}–{e['hi']:.2f}) "
            "of the most informative one: the information all their scores of an answer give about its true level, "
            "over what the best judge alone gives (1 = the others add nothing; "
            f"{panel['n_judges']} = each adds as much as the best, without overlap).")
    if panel.get("least_informative_judge") is not None:
        text += f" The panel would lose least without {panel['least_informative_judge']}."
    return text + " Accuracy: mean of the posterior P(score = true level); leniency: mean score − true score; information in bits."
