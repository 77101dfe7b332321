"""What a fit returns and how it is judged: :class:`FitResult` (posterior, diagnostics, timing),
:class:`Diagnostics` and :func:`diagnose` (R-hat and bulk ESS over the expected scores, divergences),
and the plain sentences about convergence every front end shows (:func:`convergence_problem`,
:func:`flipped_judge_modes`, :func:`uncrossed_modes`)."""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from simplex_core.model.settings import CountsLike, FitSettings

if TYPE_CHECKING:  # pragma: no cover
    import arviz as az


#: ``progress_callback(message, fraction)``: a plain-words stage and the overall fraction done [0, 1].
ProgressCallback = Callable[[str, float], None]

#: Convergence thresholds over the expected scores E_k.
RHAT_MAX = 1.01
ESS_MIN = 400


# -- results -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Diagnostics:
    """Convergence diagnostics over the expected scores E_k (and R-hat over every parameter).

    ``converged`` is True when max R-hat ≤ 1.01, min bulk ESS ≥ 400 and there are no divergent
    transitions; ``message`` says so, or says what failed in plain words.
    """

    max_rhat: float
    min_ess_bulk: float
    min_ess_tail: float
    divergences: int
    max_rhat_all: float
    converged: bool
    message: str
    worst_rhat_candidate: str | None = None
    worst_ess_candidate: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The result.json ``diagnostics`` object (NaN becomes None)."""

        def clean(x: float) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            "max_rhat": clean(self.max_rhat),
            "min_ess_bulk": clean(self.min_ess_bulk),
            "min_ess_tail": clean(self.min_ess_tail),
            "divergences": int(self.divergences),
            "max_rhat_all": clean(self.max_rhat_all),
            "converged": bool(self.converged),
            "message": self.message,
        }


@dataclass
class FitResult:
    """One fit: the posterior, its diagnostics, timing, and what produced it.

    Attributes
    ----------
    idata
        ArviZ InferenceData; ``posterior`` holds ``pi``, ``expected_score``, ``rank`` (int, 1 =
        best), ``theta``, ``rho`` (and ``Z``, ``R``, ``W``, ``omega``, ``beta_max`` when present)
        with dims ``chain, draw`` plus ``candidate``, ``judge``, ``true_level``, ``level``;
        ``sample_stats`` holds ``diverging``.
    diagnostics
        :class:`Diagnostics`.
    timing
        ``compile_s`` (building and compiling; ~0 when a compiled model was reused), ``sample_s``
        (warm-up plus draws; for the ``'fast'`` engine it includes the mode search, also given alone
        as ``modes_s``, with ``modes`` found and ``start_modes`` used), ``reused_compiled`` (bool),
        ``engine_used`` (the engine that ran).
    settings, counts
        The inputs.
    """

    idata: "az.InferenceData"
    diagnostics: Diagnostics
    timing: dict[str, Any]
    settings: FitSettings
    counts: CountsLike

    @property
    def candidates(self) -> tuple[str, ...]:
        return tuple(self.counts.candidates)

    def draws(self, name: str) -> np.ndarray:
        """Posterior draws of ``name`` stacked over chains: shape ``(chains * draws, ...)``."""
        arr = np.asarray(self.idata.posterior[name].values)  # type: ignore[attr-defined]  # InferenceData sets its groups at run time
        return arr.reshape((-1,) + arr.shape[2:])


# -- ranks and diagnostics -----------------------------------------------------------------------

def _drop_shape_validation(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Shape validation failed")


def diagnose(idata: "az.InferenceData", candidates: tuple[str, ...] | None = None) -> Diagnostics:
    """Convergence diagnostics of a posterior (see :class:`Diagnostics`)."""
    import arviz as az

    post = idata.posterior  # type: ignore[attr-defined]  # InferenceData sets its groups at run time
    n_chains = post.sizes.get("chain", 1)
    # ArviZ logs "Shape validation failed" for one chain on its own logger (az._log, not registered with
    # logging), not as a warning: the diagnostics' own message says what one chain cannot tell
    arviz_log = getattr(az, "_log", None)
    if isinstance(arviz_log, logging.Logger):
        arviz_log.addFilter(_drop_shape_validation)
    with warnings.catch_warnings():
        # R-hat/ESS of short or single chains warn; the numbers (NaN) speak for themselves.
        warnings.simplefilter("ignore", category=RuntimeWarning)
        warnings.simplefilter("ignore", category=UserWarning)
        es = post[["expected_score"]]
        params = [v for v in post.data_vars if v not in ("rank", "rater_deviation") and np.issubdtype(post[v].dtype, np.floating)]
        rhat_all_ds = az.rhat(post[params])  # expected_score is among the params: one R-hat pass
        rhat = np.asarray(rhat_all_ds["expected_score"].values, dtype=float)
        ess_bulk = np.asarray(az.ess(es, method="bulk")["expected_score"].values, dtype=float)
        ess_tail = np.asarray(az.ess(es, method="tail")["expected_score"].values, dtype=float)
        rhat_all = [np.asarray(rhat_all_ds[v].values, dtype=float).ravel() for v in params]
    rhat_all_flat = np.concatenate(rhat_all) if rhat_all else np.array([np.nan])
    max_rhat = float(np.nanmax(rhat)) if np.isfinite(rhat).any() else float("nan")
    max_rhat_all = float(np.nanmax(rhat_all_flat)) if np.isfinite(rhat_all_flat).any() else float("nan")
    min_bulk = float(np.nanmin(ess_bulk)) if np.isfinite(ess_bulk).any() else float("nan")
    min_tail = float(np.nanmin(ess_tail)) if np.isfinite(ess_tail).any() else float("nan")
    divergences = 0
    if hasattr(idata, "sample_stats") and "diverging" in idata.sample_stats:
        divergences = int(np.asarray(idata.sample_stats["diverging"].values).sum())
    names = list(candidates) if candidates is not None else [str(c) for c in post["candidate"].values]
    worst_rhat = names[int(np.nanargmax(rhat))] if np.isfinite(rhat).any() else None
    worst_ess = names[int(np.nanargmin(ess_bulk))] if np.isfinite(ess_bulk).any() else None

    failures: list[str] = []
    if not (math.isfinite(max_rhat) and max_rhat <= RHAT_MAX):
        if n_chains < 2:
            failures.append("R-hat needs at least 2 chains")
        else:
            failures.append(f"R-hat {format_rhat(max_rhat)} on candidate {worst_rhat} (needs ≤ {RHAT_MAX})")
    if not (math.isfinite(min_bulk) and min_bulk >= ESS_MIN):
        shown = f"{min_bulk:.0f}" if math.isfinite(min_bulk) else "unknown"
        failures.append(f"bulk ESS {shown} on candidate {worst_ess} (needs ≥ {ESS_MIN})")
    if divergences:
        failures.append(f"{divergences} divergent transition{'s' if divergences != 1 else ''}")
    if failures:  # what failed only: the front ends add the action available where the user is
        message = "not converged: " + "; ".join(failures) + "."
    else:
        message = (
            f"converged: max R-hat {max_rhat:.3f}, min bulk ESS {min_bulk:.0f}, no divergent transitions."
        )
    return Diagnostics(
        max_rhat=max_rhat,
        min_ess_bulk=min_bulk,
        min_ess_tail=min_tail,
        divergences=divergences,
        max_rhat_all=max_rhat_all,
        converged=not failures,
        message=message,
        worst_rhat_candidate=worst_rhat,
        worst_ess_candidate=worst_ess,
    )


def format_rhat(rhat: float) -> str:
    """R-hat to 3 decimals, or 4 when 3 would round a failing value onto the limit (1.0104 read
    "NOT converged (R-hat 1.010)" beside a converged 1.010)."""
    text = f"{rhat:.3f}"
    return f"{rhat:.4f}" if rhat > RHAT_MAX and float(text) <= RHAT_MAX else text


def first_failure(message: str) -> str:
    """The first check an unconverged fit failed, from :func:`diagnose`'s message (``"not converged: R-hat
    1.02 on a (needs ≤ 1.01); …. Note: …"`` → ``"R-hat 1.02 on a (needs ≤ 1.01)"``), for progress
    lines that quote it inside a sentence of their own."""
    return message.removeprefix("not converged: ").split(";")[0].split(". Note")[0].rstrip(".")


def convergence_problem(d: Diagnostics) -> str | None:
    """One plain sentence of what went wrong with a fit (None when it converged), for every front
    end to show as is and follow with the one action available there (the app: a control; the
    command line: flags)."""
    if d.converged:
        return None
    parts = []
    rhat_failed = not (math.isfinite(d.max_rhat) and d.max_rhat <= RHAT_MAX)
    if rhat_failed:
        parts.append(f"R-hat {format_rhat(d.max_rhat)} on {d.worst_rhat_candidate} (limit {RHAT_MAX})"
                     if math.isfinite(d.max_rhat) else "R-hat unavailable with one chain")
    if not (math.isfinite(d.min_ess_bulk) and d.min_ess_bulk >= ESS_MIN):
        shown = f"{d.min_ess_bulk:.0f}" if math.isfinite(d.min_ess_bulk) else "unknown"
        same = rhat_failed and d.worst_ess_candidate == d.worst_rhat_candidate
        parts.append(f"bulk ESS {shown}{'' if same else f' on {d.worst_ess_candidate}'} (minimum {ESS_MIN})")
    if d.divergences:
        parts.append(f"{d.divergences} divergent transition{'s' if d.divergences != 1 else ''}")
    joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"This fit has not converged, so its intervals may be wrong: {joined}."


#: Judge priors that do not rule out label-switched judges (appendix E of the paper); under them an
#: unconverged fit whose chains sat in separate modes is usually "this judge is flipped or not".
PRIORS_WITH_FLIPPED_JUDGES = ("diagonal", "mixing")


def flipped_judge_modes(settings: Any, timing: Mapping[str, Any] | None) -> bool:
    """Whether a fit's chains sat in separate modes (it was sampled by parallel tempering) under a
    judge prior that allows label-switched judges: there longer chains do not help (measured on the
    HANNA criteria under the diagonal prior: R-hat 1.29–2.69 after tempering), while the
    weight-propagation prior, which rules such judges out, does (the same fits converge)."""
    prior = getattr(settings, "prior", None)
    return prior in PRIORS_WITH_FLIPPED_JUDGES and float((timing or {}).get("tempered_s") or 0.0) > 0.0


def uncrossed_modes(timing: Mapping[str, Any] | None) -> bool:
    """Whether a fit's parallel-tempering chains ended far from agreeing (R-hat above
    ``TEMPERED_ROUNDS_RHAT``), or still disagreed after tempering towards a reference too: they crossed
    between the posterior's modes too rarely, and longer chains are not the remedy (measured: HANNA
    coherence at ω = 0, β_max = 0, R-hat 1.384 after one tempered run, 1.109 after three rounds twice
    as long each, 703 s; the engine gives such chains no extra rounds of likelihood tempering).
    The modes then come from the setting, not the sampler: the paper's integrated mode, which lets the
    data weigh β_max and ω, converged on every built-in dataset (bench/results/convergence-table-integrated-20261128.log)."""
    return bool((timing or {}).get("uncrossed_modes"))


