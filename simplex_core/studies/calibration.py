"""Simulation-based calibration (SBC; Talts et al. 2018, "Validating Bayesian inference algorithms
with simulation-based calibration").

This module owns :func:`calibrate`: N cycles of draw the parameters from the prior → simulate data
from them → fit → rank of each true parameter value among L posterior draws. When the fit is
correct (model, sampler and simulator agree), each rank is uniform on 0..L; a histogram that
sags in the middle means posteriors too narrow, one that bulges means too wide, a slope means bias.

What is drawn from the prior: a scenario (a name in :data:`simplex_core.model.simulate.SCENARIOS`, or a
:class:`~simplex_core.model.simulate.Scenario` of one's own, e.g. a 7-level square scale) fixes the
shape (scale, candidates, judges, items) and the hyperparameters (ω, β_max, δ); every replicate
then draws π_k ~ Dirichlet(1), ρ_j ~ Beta(1, 1), Θ_j from the fitted judge prior (the default: ordered) and, when
ω > 0, the random effects -- the model's own prior (:mod:`simplex_core.model.definition`). The scenario's
fixed π and ρ, its families and its self-preference are not used: the model has no
self-preference, so data with it would fail calibration by design.

The simulator must generate data the way the likelihood reads it: ``shared-truth`` uses one true
level per answer seen by every judge (``latent_coupling="shared"``), which matches the model only
at ω = 0; ``per-judge`` draws every judge's latent level independently (``"independent"``), its
own assumption, at any ω.

Parameters ranked: the expected scores E_k, the judges' ρ_j and the diagonal of each Θ_j (the
probability of scoring a true level as itself). Uniformity: a chi-square test of the ranks binned
into ``bins`` groups (:func:`uniformity_test`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from simplex_core.model.simulate import Scenario

__all__ = [
    "CalibrationSettings",
    "CalibrationResult",
    "calibrate",
    "calibration_replicate",
    "default_bins",
    "uniformity_test",
    "rank_of",
]

PARAMETER_GROUPS: tuple[str, ...] = ("expected_score", "rho", "theta_diagonal")


@dataclass(frozen=True)
class CalibrationSettings:
    """One SBC run.

    ``scenario``: a name in :data:`~simplex_core.model.simulate.SCENARIOS` or a
    :class:`~simplex_core.model.simulate.Scenario` (frozen, so it travels to Dask workers with the settings).
    ``rank_draws`` is L: posterior draws kept (evenly spaced over all chains) to rank the true value
    among, so ranks lie in 0..L. ``n_items`` None: the scenario's.
    """

    scenario: "str | Scenario" = "three-level"
    replicates: int = 100
    n_items: int | None = None
    likelihood: str = "shared-truth"
    chains: int = 2
    draws: int = 500
    tune: int = 500
    seed: int = 0
    rank_draws: int = 99

    @property
    def spec(self) -> "Scenario":
        """The scenario itself (KeyError for an unknown name: :meth:`check` says it first)."""
        from simplex_core.model.simulate import SCENARIOS, Scenario

        return self.scenario if isinstance(self.scenario, Scenario) else SCENARIOS[self.scenario]

    def check(self) -> None:
        """ValueError naming every bad field."""
        from simplex_core.model.settings import LIKELIHOODS
        from simplex_core.model.simulate import SCENARIOS, Scenario

        problems = []
        if not isinstance(self.scenario, Scenario) and self.scenario not in SCENARIOS:
            problems.append(f"unknown scenario {self.scenario!r} (known: {', '.join(SCENARIOS)})")
        if self.replicates < 1:
            problems.append(f"replicates must be at least 1; got {self.replicates}")
        if self.n_items is not None and self.n_items < 1:
            problems.append(f"items must be at least 1; got {self.n_items}")
        if self.likelihood not in LIKELIHOODS:
            problems.append(f"likelihood must be one of {', '.join(LIKELIHOODS)}; got {self.likelihood!r}")
        if self.chains < 1 or self.draws < 1 or self.tune < 0:
            problems.append(f"chains and draws must be at least 1 and tune 0 or more; got {self.chains}, "
                            f"{self.draws}, {self.tune}")
        if not 0 <= self.seed < 2**32:
            problems.append(f"seed must be between 0 and 2**32 - 1; got {self.seed}")
        if self.rank_draws < 1 or self.rank_draws > self.chains * self.draws:
            problems.append(f"rank draws L must be between 1 and chains × draws = {self.chains * self.draws}; "
                            f"got {self.rank_draws}")
        if not problems and self.likelihood == "shared-truth" and self.spec.omega > 0:
            problems.append(
                f"scenario {self.spec.name!r} has ω = {self.spec.omega:g}: the simulator's random "
                "effects with one shared true level differ from how the shared-truth model reads them, so the "
                "ranks would not test the fit. Use an ω = 0 scenario (three-level) or the per-judge likelihood")
        if problems:
            raise ValueError("Cannot calibrate: " + "; ".join(problems) + ".")

    def fit_settings(self, replicate: int):
        """The :class:`~simplex_core.model.definition.FitSettings` of a replicate: the scenario's hyperparameters."""
        from simplex_core.model.settings import FitSettings

        spec = self.spec
        return FitSettings(omega=spec.omega, beta_max=spec.beta_max, delta=spec.delta, likelihood=self.likelihood,
                           chains=self.chains, draws=self.draws, tune=self.tune, seed=self.seed * 1_000_003 + replicate,
                           extra_rounds=0)  # a fixed draw count per replicate: SBC ranks what one fit gives


def rank_of(draws: np.ndarray, truth: np.ndarray, rank_draws: int) -> np.ndarray:
    """Rank of each true value among ``rank_draws`` posterior draws evenly spaced over ``draws``
    (``[S, ...]``, chains stacked): the number of kept draws below it, 0..L. Evenly spaced draws
    thin the chains so that the kept ones are nearly independent (Talts et al., section 4.1)."""
    draws = np.asarray(draws, dtype=float)
    keep = np.linspace(0, draws.shape[0] - 1, rank_draws).round().astype(int)
    return (draws[keep] < np.asarray(truth, dtype=float)[None]).sum(axis=0)


def calibration_replicate(task: tuple) -> dict[str, Any]:
    """One SBC cycle: ``task`` is ``(settings, replicate)``. Module-level so a Dask worker can run it.

    Returns ``{"replicate", "ranks": DataFrame, "diagnostics": dict}``.
    """
    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.inference.fitting import fit_model

    settings, r = task
    spec = settings.spec
    rng = np.random.default_rng([settings.seed, r])
    # the judges come from the fitted model's own judge prior (SBC checks the fit against its own prior)
    overrides: dict[str, Any] = dict(pi=None, rho=None, self_preference=0.0, candidate_families={},
                                     judge_families={}, judge_prior=settings.fit_settings(r).prior,
                                     latent_coupling="shared" if settings.likelihood == "shared-truth" else "independent")
    if settings.n_items is not None:
        overrides["n_items"] = settings.n_items
    sim = spec.simulate(rng, **overrides)
    counts = count_tensor(load_table(sim.frame, scale=sim.scale), self_exclusion=False)
    t0 = time.perf_counter()
    fit = fit_model(counts, settings.fit_settings(r))
    seconds = time.perf_counter() - t0
    L = settings.rank_draws
    scale = sim.scale
    correct = list(scale.true_index)
    rows = []

    def add(group: str, names: list[str], draws: np.ndarray, truth: np.ndarray) -> None:
        ranks = rank_of(draws, truth, L)
        means = np.asarray(draws, dtype=float).mean(axis=0)
        for name, rank, t, m in zip(names, ranks.ravel(), np.ravel(truth), means.ravel()):
            rows.append({"replicate": r, "group": group, "parameter": name, "rank": int(rank),
                         "true_value": float(t), "posterior_mean": float(m)})

    add("expected_score", [f"E[{c}]" for c in sim.candidates], fit.draws("expected_score"), sim.expected_scores)
    add("rho", [f"rho[{j}]" for j in sim.judges], fit.draws("rho"), sim.rho)
    theta = fit.draws("theta")  # [S, J, M_true, M_obs]
    levels = [f"{v:g}" for v in scale.true_values]
    add("theta_diagonal", [f"theta[{j}][{lv}→{lv}]" for j in sim.judges for lv in levels],
        theta[:, :, np.arange(len(correct)), correct], sim.theta[:, np.arange(len(correct)), correct])
    d = fit.diagnostics
    return {"replicate": r, "ranks": pd.DataFrame(rows),
            "diagnostics": {"replicate": r, "converged": bool(d.converged), "max_rhat": float(d.max_rhat),
                            "min_ess_bulk": float(d.min_ess_bulk), "divergences": int(d.divergences),
                            "seconds": float(seconds)}}


def default_bins(replicates: int, n_ranks: int) -> int:
    """Histogram bins: about 10 expected ranks per bin (the chi-square approximation wants ≥ 5),
    at least 2, at most 20 and never more than the rank values."""
    return int(min(n_ranks, 20, max(2, replicates // 10)))


def uniformity_test(ranks: np.ndarray, n_ranks: int, bins: int) -> tuple[float, int, float]:
    """Chi-square test that ``ranks`` (integers 0..n_ranks-1) are uniform: the ranks are grouped into
    ``bins`` consecutive bins of (as nearly as possible) equal width, each expected to hold its
    share of the rank values. Returns (statistic, degrees of freedom, p-value)."""
    from scipy import stats

    ranks = np.asarray(ranks, dtype=int)
    if ranks.size == 0:
        raise ValueError("no ranks to test.")
    if ranks.min() < 0 or ranks.max() >= n_ranks:
        raise ValueError(f"ranks must lie in 0..{n_ranks - 1}; got {ranks.min()}..{ranks.max()}.")
    if not 2 <= bins <= n_ranks:
        raise ValueError(f"bins must be between 2 and {n_ranks}; got {bins}.")
    groups = np.array_split(np.arange(n_ranks), bins)
    edges = np.array([g[0] for g in groups])
    observed = np.bincount(np.searchsorted(edges, ranks, side="right") - 1, minlength=bins)
    expected = ranks.size * np.array([len(g) for g in groups]) / n_ranks
    res = stats.chisquare(observed, expected)
    return float(res.statistic), bins - 1, float(res.pvalue)


@dataclass
class CalibrationResult:
    """Ranks (long table: replicate, group, parameter, rank, true_value, posterior_mean), per-replicate
    diagnostics, and the uniformity test per parameter."""

    settings: CalibrationSettings
    ranks: pd.DataFrame
    diagnostics: pd.DataFrame
    bins: int
    seconds: float

    @property
    def n_ranks(self) -> int:
        return self.settings.rank_draws + 1

    def tests(self) -> pd.DataFrame:
        """Per parameter (in the order ranked): group, parameter, replicates, chi2, dof, p_value."""
        rows = []
        for (group, name), part in self.ranks.groupby(["group", "parameter"], sort=False):
            chi2, dof, p = uniformity_test(part["rank"].to_numpy(), self.n_ranks, self.bins)
            rows.append({"group": group, "parameter": name, "replicates": len(part), "chi2": chi2, "dof": dof,
                         "p_value": p})
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """The ``sbc.json`` document (ranks themselves go to CSV)."""

        def clean(x: Any) -> Any:
            return None if isinstance(x, float) and not math.isfinite(x) else x

        diag = self.diagnostics
        spec = self.settings.spec
        settings = {f.name: getattr(self.settings, f.name) for f in fields(self.settings)}
        settings["scenario"] = spec.name
        return {
            "settings": settings,
            # the scenario's sizes and scale; its fixed parameter values (ρ, π) are not used: every
            # replicate draws them from the prior ("prior" below)
            "scenario": {"name": spec.name, "description": spec.description,
                         "parameters": "drawn from the prior in every replicate (see 'prior'); the description's fixed values are not used",
                         "levels": [float(v) for v in spec.scale.true_values], "candidates": len(spec.candidates),
                         "judges": len(spec.judges), "items": self.settings.n_items or spec.n_items},
            "prior": {"omega": spec.omega, "beta_max": spec.beta_max, "delta": spec.delta,
                      "pi": "Dirichlet(1)", "rho": "Beta(1, 1)", "judge_prior": self.settings.fit_settings(0).prior},
            "rank_values": self.n_ranks,
            "bins": self.bins,
            "seconds": self.seconds,
            "converged_share": float(diag["converged"].mean()) if len(diag) else None,
            "replicates_with_divergences": int((diag["divergences"] > 0).sum()) if len(diag) else 0,
            "tests": [{k: clean(v) for k, v in row.items()} for row in self.tests().to_dict("records")],
        }


def calibrate(settings: CalibrationSettings, *, client: Any = None, bins: int | None = None,
              progress: Callable[[str], None] | None = None) -> CalibrationResult:
    """Run SBC: ``settings.replicates`` simulate → fit cycles (on Dask when ``client`` is given, see
    :mod:`simplex_core.inference.distributed`; the result does not depend on where they ran), then the
    uniformity tests. ``progress(message)`` gets a line per finished replicate."""
    from simplex_core.inference.distributed import map_tasks
    from simplex_core.inference.fit_result import format_rhat

    settings.check()
    n_ranks = settings.rank_draws + 1
    bins = default_bins(settings.replicates, n_ranks) if bins is None else int(bins)
    if not 2 <= bins <= n_ranks:
        raise ValueError(f"Cannot calibrate: bins must be between 2 and {n_ranks} (the rank values); got {bins}.")
    done = [0]

    def report(i: int, out: dict) -> None:
        done[0] += 1
        if progress is not None:
            d = out["diagnostics"]
            progress(f"replicate {out['replicate']} ({done[0]} of {settings.replicates} done): "
                     f"{'converged' if d['converged'] else 'NOT converged'} (R-hat {format_rhat(d['max_rhat'])}, "
                     f"ESS {d['min_ess_bulk']:.0f}, {d['divergences']} divergent), {d['seconds']:.1f} s")

    t0 = time.perf_counter()
    outs = map_tasks(calibration_replicate, [(settings, r) for r in range(settings.replicates)], client=client,
                     labels=[f"replicate {r}" for r in range(settings.replicates)], on_result=report)
    return CalibrationResult(
        settings=settings,
        ranks=pd.concat([o["ranks"] for o in outs], ignore_index=True),
        diagnostics=pd.DataFrame([o["diagnostics"] for o in outs]),
        bins=bins,
        seconds=time.perf_counter() - t0,
    )
