"""The benchmark cases: the same synthetic data for every engine.

Data are drawn from the model itself with ω = 2, β_max = 5, every ρ_j = 0.8 and δ uniform (the
fitted δ, so the fitted model is the generating model), using :mod:`simplex_core.model.simulate`; the
self-family pairs are excluded from the fit by :func:`simplex_core.data.views.count_tensor`. Fits use
δ uniform, β_max = 5 and 4 chains × 1000 + 1000 unless ``--quick``.

Cases
-----
``gpqa``          GPQA-like, ω = 2: the ``gpqa-like`` scenario (19 candidates of 8 families, 2 judges
                  of 2 of those families, binary truth −1/1 observed as −1/0/1 = abstain, 448 items).
``gpqa-omega0``   the same data fitted with ω = 0 (no random effects).
``mtbench``       MTBench-like, ω = 2: 6 candidates, 2 judges, 5 levels 1..5, 160 items; each judge's
                  family owns one candidate.
``stress``        K = 50, J = 5, M = 5, 2000 items, ω = 2; each judge's family owns 2 candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from simplex_core.data.views import Counts, count_tensor
from simplex_core.data.table import load_table
from simplex_core.model.settings import FitSettings
from simplex_core.data.scale import Scale
from simplex_core.model.simulate import ordinal_prevalences, scenario, simulate

DATA_OMEGA = 2.0
DATA_BETA_MAX = 5.0
DATA_RHO = 0.8

CASES: tuple[str, ...] = ("gpqa", "gpqa-omega0", "mtbench", "stress")


@dataclass(frozen=True)
class Case:
    name: str
    counts: object            # simplex_core.data.views.Counts
    settings: FitSettings     # fit settings (engine filled in by the caller)
    true_ranks: np.ndarray    # population ranks (1 = best)
    description: str


def _counts(sim, via_loader: bool = False):
    """The count tensor of a simulated table, self-family pairs excluded.

    ``load_table`` validates every row (34 s for the stress case's 500 000 rows), so by default
    the counts are built directly from the frame; ``via_loader=True`` goes through the loader
    (the two agree: checked in ``tests/test_speed_equivalence.py``).
    """
    if via_loader:
        table = load_table(sim.frame, scale=sim.scale, families=sim.families)
        return count_tensor(table, self_exclusion=True)
    frame = sim.frame
    judges, cands = tuple(sim.judges), tuple(sim.candidates)
    J, K, M = len(judges), len(cands), sim.scale.n_levels
    j_idx = pd.Categorical(frame["judge"], categories=judges).codes
    k_idx = pd.Categorical(frame["candidate"], categories=cands).codes
    m_idx = np.searchsorted(np.asarray(sim.scale.values), frame["score"].to_numpy(dtype=float))
    N = np.zeros((J, K, M), dtype=np.int64)
    np.add.at(N, (j_idx, k_idx, m_idx), 1)
    fam = sim.families
    included = np.array([[not (fam.get(j) is not None and fam.get(j) == fam.get(k)) for k in cands] for j in judges])
    excluded = tuple((j, k) for a, j in enumerate(judges) for b, k in enumerate(cands) if not included[a, b])
    return Counts(N=N, included=included, judges=judges, candidates=cands, scale=sim.scale,
                  excluded_pairs=excluded, families=dict(fam))


def simulate_gpqa(seed: int):
    """One GPQA-like data set (ω = 2, β_max = 5, ρ = 0.8, δ uniform)."""
    return scenario("gpqa-like", seed, rho=DATA_RHO, omega=DATA_OMEGA, beta_max=DATA_BETA_MAX, delta="uniform")


def simulate_mtbench(seed: int):
    names = ["gpt-4", "claude-v1", "gpt-3.5-turbo", "vicuna-13b", "alpaca-13b", "llama-13b"]
    fam = {"gpt-4": "openai", "gpt-3.5-turbo": "openai", "claude-v1": "anthropic",
           "vicuna-13b": "lmsys", "alpaca-13b": "stanford", "llama-13b": "meta"}
    # each judge's family owns one candidate: the OpenAI judge excludes gpt-4 only if gpt-3.5 is not
    # also OpenAI, so give gpt-3.5-turbo its own family label here
    fam["gpt-3.5-turbo"] = "openai-legacy"
    pi = ordinal_prevalences([1.1, 0.8, 0.5, 0.1, -0.4, -0.8], 5)
    return simulate(scale=Scale((1, 2, 3, 4, 5)), n_items=160, candidates=names,
                    judges=["gpt-4-judge", "claude-judge"], pi=pi, beta_max=DATA_BETA_MAX, rho=DATA_RHO,
                    omega=DATA_OMEGA, delta="uniform", candidate_families=fam,
                    judge_families={"gpt-4-judge": "openai", "claude-judge": "anthropic"},
                    self_preference=0.8, rng=seed)


def simulate_stress(seed: int):
    K, J = 50, 5
    names = [f"cand{i + 1:02d}" for i in range(K)]
    judges = [f"judge{j + 1}" for j in range(J)]
    # the first 10 candidates belong to the judges' 5 families, 2 each; the rest have own families
    cfam = {n: (f"fam{i // 2 + 1}" if i < 10 else f"other{i}") for i, n in enumerate(names)}
    jfam = {j: f"fam{i + 1}" for i, j in enumerate(judges)}
    qualities = np.linspace(-1.2, 1.2, K)[np.random.default_rng(12345).permutation(K)]
    pi = ordinal_prevalences(qualities, 5)
    return simulate(scale=Scale((1, 2, 3, 4, 5)), n_items=2000, candidates=names, judges=judges, pi=pi,
                    beta_max=DATA_BETA_MAX, rho=DATA_RHO, omega=DATA_OMEGA, delta="uniform",
                    candidate_families=cfam, judge_families=jfam, self_preference=0.8, rng=seed)


def make_case(name: str, *, seed: int = 0, chains: int = 4, draws: int = 1000, tune: int = 1000,
              engine: str = "nutpie") -> Case:
    """Build a benchmark case (data drawn with ``seed``; fit settings as in the speed benchmark)."""
    if name in ("gpqa", "gpqa-omega0"):
        sim = simulate_gpqa(seed)
        desc = "GPQA-like: 19 cand., 2 judges, binary truth + abstain, 448 items"
    elif name == "mtbench":
        sim = simulate_mtbench(seed)
        desc = "MTBench-like: 6 cand., 2 judges, 5 levels, 160 items"
    elif name == "stress":
        sim = simulate_stress(seed)
        desc = "stress: K = 50, J = 5, M = 5, 2000 items"
    else:
        raise ValueError(f"unknown case {name!r}; expected one of {', '.join(CASES)}")
    omega = 0.0 if name == "gpqa-omega0" else 2.0
    settings = FitSettings(likelihood="per-judge", omega=omega, beta_max=5.0, delta="uniform", chains=chains, draws=draws, tune=tune,
                           seed=seed, engine=engine)
    return Case(name=name, counts=_counts(sim), settings=settings, true_ranks=np.asarray(sim.ranks),
                description=desc + (", fitted with ω = 0" if omega == 0 else ", ω = 2"))
