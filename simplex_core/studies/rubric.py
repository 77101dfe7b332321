"""The rubric note: does the scale's granularity let the data identify the ranking, and what collapsing
the levels does to the rank intervals (measured by fitting the collapsed tables).

The paper's identifiability results (section 4): with 2 levels, the ranking is identifiable from the
judges' score distributions under constancy and better-than-random judges with one judge, or with
J ≥ 2 judges and K ≥ 4 candidates (theorem 1). With 3 or more levels it is not identifiable in
general, from any number of judges (theorem 2): the judges' confusion matrices can move without
changing what is observed, and the order of E_k moves with them; gold labels, or candidates far apart
on the simplex, settle it. So for M > 2 the note says whether gold answers are there, and measures the
alternative: the table collapsed to 3 and to 2 levels (contiguous groups of the ordered levels, as even
as possible, lower groups taking the extra level; :func:`collapse_mapping`), each fitted at the same
settings, with the mean width of the 95% rank intervals and the Spearman of the collapsed ranking (of
the collapsed E_k, a different quantity: at 2 levels the share of answers in the upper group) against
the full one. Square scales only (observed levels = true levels); others get the conditions alone.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from scipy import stats

from simplex_core.data.table import JudgmentTable, collapse_levels
from simplex_core.data.views import count_tensor
from simplex_core.inference.fitting import fit_model
from simplex_core.model.definition import FitSettings
from simplex_core.summaries.posterior_tables import candidate_summary

__all__ = ["collapse_mapping", "identifiability_text", "rubric_note"]


def collapse_mapping(values: tuple[float, ...], n: int) -> dict[float, float]:
    """The ordered ``values`` in ``n`` contiguous groups as even as possible (lower groups first take
    the extra level), each mapped to its group index 0 … n − 1."""
    groups = np.array_split(np.arange(len(values)), n)
    return {float(values[i]): float(g) for g, idx in enumerate(groups) for i in idx}


def identifiability_text(n_true: int, n_judges: int, n_candidates: int, n_gold: int) -> tuple[bool, str]:
    """Whether the paper's conditions identify the ranking from the scores, and why, in one sentence."""
    if n_true <= 2:
        ok = n_judges == 1 or (n_judges >= 2 and n_candidates >= 4)
        return ok, (f"2 true levels, {n_judges} judge(s), {n_candidates} candidates: "
                    + ("the paper's theorem 1 identifies the ranking (judges constant across candidates and better "
                       "than random)." if ok else "theorem 1 needs 4 candidates or more with 2 judges or more."))
    if n_gold:
        return True, (f"{n_true} true levels: scores alone do not identify the ranking (the paper's theorem 2); the "
                      f"{n_gold} gold answers anchor the judges' confusion matrices.")
    return False, (f"{n_true} true levels and no gold answers: the scores alone do not identify the ranking (the "
                   "paper's theorem 2); the judge prior settles what the data leave open, and the rank intervals "
                   "show how much. Label some answers (gold), or see below what fewer levels do.")


def _fit_task(task: tuple) -> Any:
    fit_fn, counts, settings = task
    return fit_fn(counts, settings)


def _width_and_means(fit: Any) -> tuple[float, Any]:
    s = candidate_summary(fit, sort=False).set_index("candidate")
    return float((s["rank_hi"] - s["rank_lo"]).mean()), s["expected_score_mean"]


def rubric_note(table: JudgmentTable, settings: FitSettings, *, full_fit: Any = None, client: Any = None,
                fit_fn: Callable[..., Any] | None = None) -> dict[str, Any]:
    """The ``rubric`` section of result.json (``fit --rubric-note``).

    Keys: ``levels`` (true levels), ``identified`` (bool), ``conditions`` (sentence), ``mean_rank_width``
    (the full fit's), ``collapsed`` (per collapsed size 3 and 2 below the table's: ``levels``, ``mapping``
    ``{old: new}``, ``mean_rank_width``, ``spearman_vs_full``, ``converged``; empty for 2 levels or a
    scale that is not square).
    """
    from simplex_core.inference.distributed import map_tasks

    scale = table.scale
    ok, text = identifiability_text(scale.n_true, len(table.judges), len(table.candidates), table.n_gold)
    fit_fn = fit_fn or fit_model
    sizes = [n for n in (3, 2) if n < scale.n_true] if scale.is_square else []
    tasks, labels = [], []
    if full_fit is None:
        tasks.append((fit_fn, count_tensor(table, settings.self_exclusion), settings))
        labels.append("all levels")
    mappings = {n: collapse_mapping(scale.values, n) for n in sizes}
    skipped = {}
    for n in sizes:
        try:
            part = collapse_levels(table, mappings[n])
        except ValueError as exc:  # e.g. a gold answer's true score that is no collapsed true level
            skipped[n] = str(exc).splitlines()[-1]
            continue
        tasks.append((fit_fn, count_tensor(part, settings.self_exclusion), settings.replace(delta="inflation")
                      if not isinstance(settings.delta, str) else settings))
        labels.append(f"{n} levels")
    fits = dict(zip(labels, map_tasks(_fit_task, tasks, client=client, labels=labels)))
    width, means = _width_and_means(full_fit if full_fit is not None else fits["all levels"])
    collapsed = []
    for n in sizes:
        mapping = {f"{k:g}": v for k, v in mappings[n].items()}
        if n in skipped:
            collapsed.append({"levels": n, "mapping": mapping, "mean_rank_width": None, "spearman_vs_full": None,
                              "converged": None, "note": f"not fitted: {skipped[n]}"})
            continue
        fit = fits[f"{n} levels"]
        w, m = _width_and_means(fit)
        rho = float(stats.spearmanr(m.reindex(means.index), means).statistic)
        collapsed.append({"levels": n, "mapping": mapping, "mean_rank_width": w,
                          "spearman_vs_full": rho if np.isfinite(rho) else None,  # constant means: no order
                          "converged": bool(fit.diagnostics.converged)})
    return {"levels": scale.n_true, "identified": ok, "conditions": text, "mean_rank_width": width,
            "collapsed": collapsed}
