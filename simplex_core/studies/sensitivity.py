"""The sensitivity analysis of section 5 ("Conducting sensitivity analyses"): sweep ω and β_max.

Protocol: fit the base (ω = 0, β_max = 5); sweep ω ∈ {0, 1, 2, 4, 8} at the base β_max, and
β_max ∈ {0, 1, 5, 10, 20} at the base ω (grids configurable). For each setting report the Spearman
correlation of its point ranking (ranks of the posterior means of E_k) with the base's, its
candidate table (rank intervals) and diagnostics. Each distinct setting is fitted once; fits that
differ from the base only in ω or β_max reuse the compiled model (see :mod:`simplex_core.inference.fitting`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from simplex_core.summaries.evaluation import rank_correlation
from simplex_core.inference.fit_result import Diagnostics, FitResult, ProgressCallback
from simplex_core.inference.fitting import fit_model
from simplex_core.model.definition import CountsLike, FitSettings
from simplex_core.summaries.posterior_tables import candidate_summary, candidates_records

if TYPE_CHECKING:  # pragma: no cover
    from simplex_core.inference.reweighting import PriorDraws

DEFAULT_OMEGAS: tuple[float, ...] = (0.0, 1.0, 2.0, 4.0, 8.0)
DEFAULT_BETA_MAXES: tuple[float, ...] = (0.0, 1.0, 5.0, 10.0, 20.0)
#: The base setting of the protocol (and the app's default).
BASE_OMEGA, BASE_BETA_MAX = 0.0, 5.0


def base_settings(settings: FitSettings) -> FitSettings:
    """The protocol's base (ω = 0, β_max = 5, not integrated), other fields as in ``settings``."""
    return settings.replace(omega=BASE_OMEGA, beta_max=BASE_BETA_MAX, integrated=False)


def sweep_settings(settings: FitSettings, omegas: Sequence[float] = DEFAULT_OMEGAS,
                   beta_maxes: Sequence[float] = DEFAULT_BETA_MAXES) -> list[FitSettings]:
    """The distinct settings of the two sweeps around the base (the ω sweep, then the rest of the
    β_max sweep), other fields as in ``settings``: what :func:`sensitivity_sweep` fits."""
    anchor = base_settings(settings)
    out = [anchor.replace(omega=float(o)) for o in omegas]
    out += [anchor.replace(beta_max=float(b)) for b in beta_maxes]
    return list(dict.fromkeys(out))


def grid_settings(base: FitSettings, omegas: Sequence[float] = DEFAULT_OMEGAS,
                  beta_maxes: Sequence[float] = DEFAULT_BETA_MAXES) -> list[FitSettings]:
    """Every (ω, β_max) of the grid, other fields as in ``base``, the settings nearest the base first
    (they are the likeliest next clicks; the app fills the grid in the background in this order)."""
    omegas, beta_maxes = list(omegas), list(beta_maxes)
    out = [base.replace(omega=float(o), beta_max=float(b), integrated=False) for o in omegas for b in beta_maxes]

    def distance(s: FitSettings) -> float:
        oi = omegas.index(s.omega) - (omegas.index(base.omega) if base.omega in omegas else 0)
        bi = beta_maxes.index(s.beta_max) - (beta_maxes.index(base.beta_max) if base.beta_max in beta_maxes else 0)
        return math.hypot(oi, bi)

    return sorted(out, key=distance)


@dataclass
class SensitivityRow:
    """One setting of the sweep.

    ``sweep`` is ``'omega'`` or ``'beta_max'`` (the base setting appears in both sweeps, fitted once).
    ``candidates`` is :func:`~simplex_core.summaries.posterior_tables.candidate_summary` of its fit.
    """

    sweep: str
    omega: float
    beta_max: float
    spearman_vs_base: float
    candidates: pd.DataFrame
    diagnostics: Diagnostics
    timing: dict[str, Any]
    fit: FitResult | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        rho = self.spearman_vs_base
        return {
            "sweep": self.sweep,
            "omega": self.omega,
            "beta_max": self.beta_max,
            "spearman_vs_base": None if not math.isfinite(rho) else float(rho),
            "candidates": candidates_records(self.candidates),
            "diagnostics": self.diagnostics.to_dict(),
            "timing": {k: float(v) for k, v in self.timing.items() if k in ("compile_s", "sample_s")},
        }


@dataclass
class SensitivityResult:
    base: FitSettings
    rows: list[SensitivityRow]
    #: The base fit's diagnostics: every Spearman is measured against it, and it is not among the rows
    #: when the grids leave the base out.
    base_diagnostics: Diagnostics | None = None

    def table(self) -> pd.DataFrame:
        """One line per row: sweep, omega, beta_max, spearman_vs_base, converged."""
        return pd.DataFrame([
            {"sweep": r.sweep, "omega": r.omega, "beta_max": r.beta_max,
             "spearman_vs_base": r.spearman_vs_base, "converged": r.diagnostics.converged}
            for r in self.rows
        ])

    def to_dict(self) -> dict[str, Any]:
        """The ``sens.json`` document: ``{"base": settings, "base_diagnostics": …, "settings": [rows]}``."""
        return {"base": self.base.to_dict(),
                "base_diagnostics": None if self.base_diagnostics is None else self.base_diagnostics.to_dict(),
                "settings": [r.to_dict() for r in self.rows]}


def _point_ranks_in_data_order(summary: pd.DataFrame, candidates: Sequence[str]) -> np.ndarray:
    return summary.set_index("candidate")["point_rank"].reindex(list(candidates)).to_numpy()


def _fit_setting(task: tuple) -> FitResult:
    """One setting's fit on a Dask worker: ``task`` is ``(fit_fn, counts, settings)``."""
    fit_fn, counts, settings = task
    return fit_fn(counts, settings)


def sensitivity_sweep(
    counts: CountsLike,
    base: FitSettings = FitSettings(omega=0.0, beta_max=5.0),
    omegas: Sequence[float] = DEFAULT_OMEGAS,
    beta_maxes: Sequence[float] = DEFAULT_BETA_MAXES,
    progress_callback: ProgressCallback | None = None,
    keep_fits: bool = False,
    fit_fn: Callable[..., FitResult] | None = None,
    client: Any = None,
) -> SensitivityResult:
    """Fit the ω sweep (at the base β_max) and the β_max sweep (at the base ω).

    Parameters
    ----------
    counts
        The count tensor.
    base
        Base settings (the paper: ω = 0, β_max = 5); every other field is shared by the sweep.
        Must not be integrated.
    omegas, beta_maxes
        The grids.
    progress_callback
        ``callback(message, fraction)`` over the whole sweep.
    keep_fits
        Keep each :class:`FitResult` on its row (memory grows with the grid).
    fit_fn
        ``fit_fn(counts, settings, progress_callback=...)`` used to fit (default
        :func:`~simplex_core.inference.fitting.fit_model`; e.g. :func:`simplex_core.inference.fit_cache.fit_cached`).
    client
        A ``distributed.Client`` (:func:`simplex_core.inference.distributed.open_client`): the settings are
        fitted side by side on its workers (``fit_fn`` must then be a module-level function), and
        the callback gets a line per finished fit. None: one after another in this process.

    Returns
    -------
    SensitivityResult
        Rows in order: the ω sweep, then the β_max sweep.
    """
    if base.integrated:
        raise ValueError("The sensitivity sweep fixes ω and β_max: use a base with integrated=False.")
    bad = [v for v in list(omegas) + list(beta_maxes) if not (math.isfinite(float(v)) and float(v) >= 0)]
    if bad:
        raise ValueError(f"Sweep values must be finite numbers ≥ 0; got {bad}.")
    fit_fn = fit_fn or fit_model
    plan: list[tuple[str, float, float]] = [("omega", float(o), base.beta_max) for o in omegas]
    plan += [("beta_max", base.omega, float(b)) for b in beta_maxes]
    distinct = list(dict.fromkeys([(base.omega, base.beta_max)] + [(o, b) for _, o, b in plan]))
    fits: dict[tuple[float, float], FitResult] = {}
    if client is None:
        for i, (o, b) in enumerate(distinct):
            def sub(message: str, fraction: float, i: int = i, o: float = o, b: float = b) -> None:
                if progress_callback is not None:
                    progress_callback(f"setting {i + 1} of {len(distinct)} (ω = {o:g}, β_max = {b:g}): {message}",
                                      (i + fraction) / len(distinct))

            fits[(o, b)] = fit_fn(counts, base.replace(omega=o, beta_max=b), progress_callback=sub)
    else:  # every setting at once on Dask; a line per finished fit
        from simplex_core.inference.distributed import map_tasks

        finished = [0]

        def done(i: int, fit: FitResult) -> None:
            finished[0] += 1
            if progress_callback is not None:
                o, b = distinct[i]
                progress_callback(f"ω = {o:g}, β_max = {b:g} done: {fit.diagnostics.message}",
                                  finished[0] / len(distinct))

        results = map_tasks(_fit_setting, [(fit_fn, counts, base.replace(omega=o, beta_max=b)) for o, b in distinct],
                            client=client, labels=[f"ω = {o:g}, β_max = {b:g}" for o, b in distinct], on_result=done)
        fits = dict(zip(distinct, results))
    result = summarize_sweep(counts, base, fits, omegas, beta_maxes, keep_fits=keep_fits)
    if progress_callback is not None:
        progress_callback("sensitivity sweep done", 1.0)
    return result


def summarize_sweep(counts: CountsLike, base: FitSettings, fits: dict[tuple[float, float], FitResult],
                    omegas: Sequence[float], beta_maxes: Sequence[float], keep_fits: bool = False) -> SensitivityResult:
    """The sweep's summary from fits already made (``{(ω, β_max): fit}``, the base and every point of
    the ω sweep at the base β_max and of the β_max sweep at the base ω): Spearman of each setting's
    point ranks with the base's, and its candidate summary. The app calls this with the fits of its
    background grid; :func:`sensitivity_sweep` with the fits it made.

    Raises
    ------
    KeyError
        When a fit the plan needs is missing (naming the setting).
    """
    plan: list[tuple[str, float, float]] = [("omega", float(o), base.beta_max) for o in omegas]
    plan += [("beta_max", base.omega, float(b)) for b in beta_maxes]
    missing = [(o, b) for o, b in [(base.omega, base.beta_max)] + [(o, b) for _, o, b in plan] if (o, b) not in fits]
    if missing:
        raise KeyError(f"the sweep has no fit at ω = {missing[0][0]:g}, β_max = {missing[0][1]:g}")
    summaries = {key: candidate_summary(fits[key]) for key in dict.fromkeys([(base.omega, base.beta_max)] + [(o, b) for _, o, b in plan])}
    base_ranks = _point_ranks_in_data_order(summaries[(base.omega, base.beta_max)], counts.candidates)
    rows = []
    for sweep, o, b in plan:
        fit = fits[(o, b)]
        rows.append(SensitivityRow(
            sweep=sweep,
            omega=o,
            beta_max=b,
            spearman_vs_base=rank_correlation(_point_ranks_in_data_order(summaries[(o, b)], counts.candidates), base_ranks),
            candidates=summaries[(o, b)],
            diagnostics=fit.diagnostics,
            timing=dict(fit.timing),
            fit=fit if keep_fits else None,
        ))
    return SensitivityResult(base=base, rows=rows, base_diagnostics=fits[(base.omega, base.beta_max)].diagnostics)


def reweighted_sweep(sources: Sequence["PriorDraws"], base_expected: np.ndarray, base: Any, omegas: Iterable[float],
                     beta_maxes: Iterable[float], nearest: int = 2) -> pd.DataFrame:
    """The paper's two sensitivity sweeps on a fine grid, by reweighting the fits in ``sources``.

    For each target (ω along the ω sweep at the base β_max, β_max along the β_max sweep at the base
    ω) the ``nearest`` sources of the same structure (closest in the swept coordinate, on the sweep's
    line when possible) are reweighted and the one with the lowest k̂ is kept.

    Returns
    -------
    pd.DataFrame
        ``sweep, omega, beta_max, spearman_vs_base`` (of the reweighted posterior means of E with
        ``base_expected``, the base fit's means), ``khat``, ``ess``, ``source_omega``,
        ``source_beta_max``; NaN where no source has the target's structure.
    """
    from simplex_core.inference.reweighting import best_source, structure_problem

    rows = []
    for which, grid in (("omega", omegas), ("beta_max", beta_maxes)):
        for v in grid:
            target = base.replace(**{which: float(v)})
            fixed = "beta_max" if which == "omega" else "omega"
            usable = [d for d in sources if structure_problem(d.settings, target) is None]
            usable.sort(key=lambda d: (getattr(d.settings, fixed) != getattr(target, fixed),
                                       abs(getattr(d.settings, which) - float(v))))
            found = best_source(((i, d) for i, d in enumerate(usable[:nearest])), target)
            row = {"sweep": which, "omega": target.omega, "beta_max": target.beta_max, "spearman_vs_base": np.nan,
                   "khat": np.nan, "ess": np.nan, "source_omega": np.nan, "source_beta_max": np.nan}
            if found is not None:
                i, rw = found
                d = usable[i]
                row.update(spearman_vs_base=rank_correlation(rw.weights @ d.expected_score, base_expected), khat=rw.khat,
                           ess=rw.ess, source_omega=d.settings.omega, source_beta_max=d.settings.beta_max)
            rows.append(row)
    return pd.DataFrame(rows)
