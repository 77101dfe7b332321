"""Leave-one-judge-out: how the ranking changes without each judge.

For each judge j the table without it (:func:`simplex_core.data.selection.select_models` with
``drop_judges=[j]``) is fitted at the same settings, and compared with the fit of the whole panel:

- ``spearman_vs_full``: Spearman correlation of the candidates' posterior mean E_k without j against
  the full fit's (1 = the same order);
- ``mean_rank_width``: the mean width (hi − lo) of the candidates' 95% rank intervals without j, beside
  ``full_mean_rank_width``; ``width_change`` is their difference (> 0: the ranking is less sure without j);
- ``largest_shift``: the candidate whose point rank moves most, and by how many places (signed: > 0 =
  lower, i.e. worse, without j);
- ``converged``: the fit without j converged (R-hat, ESS, divergences: the fit's own diagnostics).

A judge whose removal leaves some candidate with no judge is not refitted; its row says why. The J
fits (and the full one, unless given) are independent and run through
:func:`simplex_core.inference.distributed.map_tasks` on a Dask client when one is given.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy import stats

from simplex_core.data.selection import select_models
from simplex_core.data.table import JudgmentTable
from simplex_core.data.views import count_tensor
from simplex_core.inference.fitting import fit_model
from simplex_core.model.definition import FitSettings
from simplex_core.summaries.posterior_tables import candidate_summary

__all__ = ["COLUMNS", "leave_one_judge_out"]

COLUMNS = ("judge", "spearman_vs_full", "mean_rank_width", "full_mean_rank_width", "width_change",
           "largest_shift_candidate", "largest_shift", "converged", "note")


def _fit_task(task: tuple) -> Any:
    """One fit on a Dask worker: ``task`` is ``(fit_fn, counts, settings)``."""
    fit_fn, counts, settings = task
    return fit_fn(counts, settings)


def _summary(fit: Any) -> pd.DataFrame:
    return candidate_summary(fit, sort=False).set_index("candidate")


def _row(judge: str, full: pd.DataFrame, fit: Any) -> dict[str, Any]:
    part = _summary(fit).reindex(full.index)
    rho = float(stats.spearmanr(part["expected_score_mean"], full["expected_score_mean"]).statistic)
    width = float((part["rank_hi"] - part["rank_lo"]).mean())
    full_width = float((full["rank_hi"] - full["rank_lo"]).mean())
    shift = (part["point_rank"] - full["point_rank"]).astype(float)
    at = shift.abs().idxmax()
    return {"judge": judge, "spearman_vs_full": rho, "mean_rank_width": width, "full_mean_rank_width": full_width,
            "width_change": width - full_width, "largest_shift_candidate": str(at), "largest_shift": float(shift[at]),
            "converged": bool(fit.diagnostics.converged), "note": ""}


def leave_one_judge_out(table: JudgmentTable, settings: FitSettings, *, full_fit: Any = None, client: Any = None,
                        fit_fn: Callable[..., Any] | None = None,
                        progress_callback: Callable[[str, float], None] | None = None) -> pd.DataFrame:
    """One row per judge (columns :data:`COLUMNS`, in the table's judge order).

    Parameters
    ----------
    table
        The judgment table (every judge of it is left out in turn).
    settings
        The fit settings, shared by every fit.
    full_fit
        The fit of the whole table at ``settings``, when already made (else it is fitted with the others).
    client
        A ``distributed.Client`` (:func:`simplex_core.inference.distributed.open_client`): the fits run side
        by side on its workers; None: one after another here.
    fit_fn
        ``fit_fn(counts, settings)`` (default :func:`simplex_core.inference.fitting.fit_model`; module-level
        for Dask).
    progress_callback
        ``callback(message, fraction)`` after each finished fit.
    """
    from simplex_core.inference.distributed import map_tasks

    if len(table.judges) < 2:
        raise ValueError(f"Leave-one-judge-out needs at least 2 judges; this table has {len(table.judges)}.")
    fit_fn = fit_fn or fit_model
    tasks, labels, notes = [], [], {}
    if full_fit is None:
        tasks.append((fit_fn, count_tensor(table, settings.self_exclusion), settings))
        labels.append("all judges")
    for judge in table.judges:
        try:
            part = select_models(table, drop_judges=[judge])
        except ValueError as exc:  # a candidate only this judge scored: nothing to rank it by
            problems = [p.describe() for p in getattr(exc, "problems", [])]
            notes[judge] = "not refitted: " + ("; ".join(problems) or str(exc))
            continue
        tasks.append((fit_fn, count_tensor(part, settings.self_exclusion), settings))
        labels.append(f"without {judge}")
    done = [0]

    def finished(i: int, fit: Any) -> None:
        done[0] += 1
        if progress_callback is not None:
            progress_callback(f"{labels[i]}: {fit.diagnostics.message}", done[0] / len(tasks))

    fits = dict(zip(labels, map_tasks(_fit_task, tasks, client=client, labels=labels, on_result=finished)))
    full = _summary(full_fit if full_fit is not None else fits["all judges"])
    rows = []
    for judge in table.judges:
        if judge in notes:
            rows.append({**{c: np.nan for c in COLUMNS}, "judge": judge, "largest_shift_candidate": "",
                         "converged": False, "note": notes[judge]})
        else:
            rows.append(_row(judge, full, fits[f"without {judge}"]))
    return pd.DataFrame(rows, columns=list(COLUMNS))
