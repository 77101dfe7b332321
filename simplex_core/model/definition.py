"""The Bayesian model: fit settings and the PyMC graph (the definition of the model).

This module owns the settings of a fit (:class:`FitSettings` = :class:`ModelSettings` +
:class:`SamplerSettings` + the data-view flag ``self_exclusion``) and :func:`build_model`. It builds the model of the paper's
section 5 and appendix B from the sufficient statistics of the data (the count tensor) and never
samples; :mod:`simplex_core.inference.fitting` compiles and samples it.

The model, for every judge ``j`` and candidate ``k`` whose pair is included (not excluded as
self-family)::

    N[j, k, ·] ~ Multinomial(n_jk, γ_jk),   γ_jk = Σ_m π_k^(j)[m] Θ_j[m, ·]

The graph is dense over all (j, k); an excluded pair enters with zero counts, and a multinomial with
zero trials contributes exactly 0 to the log density (see :func:`model_data`). That is the paper's
likelihood, ``likelihood='per-judge'``: each judge's counts are an independent sample, so the same
answers are counted once per judge, and a large panel of good judges makes π_k far too certain.

``likelihood='shared-truth'`` reads the same model per answer. Each answer (item i, candidate k)
has one latent true level t_ik ~ Categorical(π_k), shared by every judge who scored it; judge j's
score comes from Θ_j[t_ik, ·] with probability 1 − W_k R_j and, with probability W_k R_j, from
Θ_j[z, ·] with z ~ Z_k drawn for that judgment (the random effects read per judgment), so that each
judge's marginal is exactly the paper's γ_jk. Marginalising t_ik::

    log p(data) = Σ_answers log Σ_t π_k[t] Π_j L[j, k, t, s_ij],
    L[j, k, t, ·] = (1 − W_k R_j) Θ_j[t, ·] + W_k R_j Σ_z Z_k[z] Θ_j[z, ·]

(judges with no score — missing, or an excluded self-family pair — drop out of the product; a gold
answer keeps only its known t). Answers with the same scores are summed once with a weight: the
score patterns of :mod:`simplex_core.data.patterns` are the sufficient statistics. Joint score patterns
of three or more judges identify the confusion matrices (Dawid–Skene; Kruskal), which the
per-judge marginals cannot (the paper's theorem 2).

* ``π_k ~ Dirichlet(1)`` over the true levels (**our choice**; the paper does not state it).
* Random effects (only when ω > 0 or in integrated mode; ω = 0 builds a second structure with no
  random-effect variables at all)::

      Z_k ~ Dirichlet(δ),  R_j ~ Beta(ωJ, J),  W_k ~ Beta(ωK, K),
      π_k^(j) = (1 − W_k R_j) π_k + W_k R_j Z_k

* Judge confusion matrices Θ_j (rows = true levels, columns = observed levels) from one of three
  priors, all driven by ``ρ_j ~ Beta(1, 1)`` and ``β_max``:

  - ``weight-propagation`` (default, the paper's): the graph of
    :func:`simplex_core.model.priors.weight_propagation_graph`. The first row is
    ``Dirichlet(1 + ρ_j β_max on its correct cell)`` (**our choice**); every node ``(m1, m2)`` with
    several outgoing edges to ``(m1 + 1, m2' ≥ m2)`` draws its edge weights from a Dirichlet with
    concentration 1, plus ``ρ_j β_max`` on the edge into the correct cell of row ``m1 + 1``; a node
    with one edge passes all its mass. Each row stochastically dominates the previous one.
  - ``diagonal``: independent rows ``Θ_j[m, ·] ~ Dirichlet(1 + ρ_j β_max on the correct cell)``
    (appendix E's diagonal-heavy prior; no coupling between rows).
  - ``mixing``: first row as above; ``Θ_j[m, ·] = (1 − λ_jm) Θ_j[m−1, ·] + λ_jm ε_jm`` with
    innovations ``ε_jm ~ Dirichlet(1 + ρ_j β_max on the correct cell of row m)`` and
    ``λ_jm ~ Beta(1, 1)`` (appendix E's mixing prior in the form of
    :func:`simplex_core.model.priors.sample_mixing`, **our reading**; it does not enforce monotonicity).

* Integrated mode (**our choice** of hyperpriors): ``ω ~ Uniform(0, 8)`` and
  ``β_max ~ Uniform(0, 20)`` become random so one fit marginalises over them (the paper's setting
  of its Table 1). Small ω makes R_j, W_k ~ Beta(ωJ, J), Beta(ωK, K) pile up at 0: with PyMC's
  log-odds of R_j the prior's scale grows like 1/ω, a funnel with ω (divergent transitions on
  single-judge data, where the mix W_k R_j is not identified). So integrated mode writes each of
  them by an exact augmentation (no floor, the same distribution)::

      logit R_j = logit V_j − E_j/(ωJ),   V_j ~ Beta(1 + ωJ, J),   E_j ~ Exponential(1)

  (W_k likewise with K): for a = ωJ, Gamma(a) = Gamma(a + 1)·U^{1/a} with U ~ Uniform(0, 1), so
  R_j = X/(X + Y) with X ~ Gamma(a), Y ~ Gamma(J) is Beta(ωJ, J). V's prior is well-conditioned at
  every ω ≥ 0 and E's does not depend on ω. ``V_R``, ``E_R``, ``V_W``, ``E_W`` are the free
  variables; R and W are Deterministics of the same names and dims as with fixed ω. Fixed-ω fits
  keep ``R ~ Beta(ωJ, J)``, ``W ~ Beta(ωK, K)`` as they are.

Hyperparameters ω, β_max and δ and the observed counts are ``pm.Data`` so that a compiled model can
be reused when only their values change (see :func:`model_data` and :func:`structure_key`).

Posterior variable names (the contract): ``pi`` (candidate, true_level), ``expected_score``
(candidate), ``theta`` (judge, true_level, level), ``rho`` (judge), random effects ``Z``
(candidate, true_level), ``R`` (judge), ``W`` (candidate); in integrated mode ``omega``, ``beta_max``
(and the augmentation's ``V_R``, ``E_R``, ``V_W``, ``E_W`` in a PyMC-engine trace). ``rank`` is added after sampling by
:mod:`simplex_core.inference.fitting` (rank 1 = best = largest expected score).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pymc as pm

    from simplex_core.data.patterns import ScorePatterns
    from simplex_core.data.scale import Scale

PRIORS: tuple[str, ...] = ("weight-propagation", "diagonal", "mixing")
DELTA_PRESETS: tuple[str, ...] = ("inflation", "deflation", "central", "uniform")
ENGINES: tuple[str, ...] = ("fast", "nutpie", "nutpie-numba", "pymc")
LIKELIHOODS: tuple[str, ...] = ("shared-truth", "per-judge")

#: Integrated-mode hyperprior bounds (our choice, see the module docstring).
OMEGA_UPPER = 8.0
BETA_MAX_UPPER = 20.0


class CountsLike(Protocol):
    """What the model needs from :class:`simplex_core.data.views.Counts`."""

    N: np.ndarray
    included: np.ndarray
    judges: tuple[str, ...]
    candidates: tuple[str, ...]
    scale: "Scale"
    excluded_pairs: tuple[tuple[str, str], ...]
    patterns: "ScorePatterns | None"


# -- settings ------------------------------------------------------------------------------------
#
# One fit = data view + model + sampler. The model (ModelSettings) is what build_model, model_data,
# structure_key and the fast density read; the sampler (SamplerSettings) is how long, with which
# engine and seed it is sampled (pymc-marketing's model_config / sampler_config split). The third
# part, self_exclusion, is neither: it says how the count tensor was built from the table (which
# (judge, candidate) pairs are in it), a choice of data view made by data.count_tensor; FitSettings
# keeps it so that a fit records it and its key tells such fits apart.

MODEL_FIELDS: tuple[str, ...] = ("omega", "beta_max", "integrated", "prior", "delta", "likelihood")
"""The fields of :class:`ModelSettings` (the model), as named in :class:`FitSettings`."""
SAMPLER_FIELDS: tuple[str, ...] = ("chains", "draws", "tune", "seed", "engine", "target_accept", "extra_rounds")
"""The fields of :class:`SamplerSettings` (how the model is sampled), as named in :class:`FitSettings`."""
DATA_VIEW_FIELDS: tuple[str, ...] = ("self_exclusion",)
"""The fields of :class:`FitSettings` that describe the data view (how the counts were built)."""


def _number(problems: list[str], name: str, value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        problems.append(f"{name} must be a number; got {value!r}.")
        return None
    if not math.isfinite(out):
        problems.append(f"{name} must be finite; got {value!r}.")
        return None
    return out


def _model_values(s: Any, problems: list[str]) -> dict[str, Any]:
    """Check the model fields of ``s``; append what is wrong to ``problems``; return the normalised
    values (floats, δ as a preset name or a tuple)."""
    omega = _number(problems, "omega", s.omega)
    if omega is not None and omega < 0:
        problems.append(f"omega must be ≥ 0 (0 = no random effects); got {s.omega!r}.")
    beta_max = _number(problems, "beta_max", s.beta_max)
    if beta_max is not None and beta_max < 0:
        problems.append(f"beta_max must be ≥ 0 (0 = uniform judge prior); got {s.beta_max!r}.")
    if s.prior not in PRIORS:
        problems.append(f"prior must be one of {', '.join(PRIORS)}; got {s.prior!r}.")
    if s.likelihood not in LIKELIHOODS:
        problems.append(f"likelihood must be one of {', '.join(LIKELIHOODS)}; got {s.likelihood!r}.")
    delta = s.delta
    if isinstance(delta, str):
        if delta not in DELTA_PRESETS:
            try:
                delta = tuple(float(x) for x in delta.split(","))
            except ValueError:
                problems.append(
                    f"delta must be one of {', '.join(DELTA_PRESETS)} or positive numbers "
                    f"'V,V,...' (one per true level); got {s.delta!r}."
                )
                delta = "uniform"
    if not isinstance(delta, str):
        try:
            delta = tuple(float(x) for x in delta)
        except (TypeError, ValueError):
            problems.append(f"delta values must be numbers; got {s.delta!r}.")
            delta = "uniform"
        else:
            if len(delta) < 2 or any(not (math.isfinite(x) and x > 0) for x in delta):
                problems.append(
                    f"delta needs one positive finite number per true level (at least 2); got {s.delta!r}."
                )
    return {"omega": omega, "beta_max": beta_max, "delta": delta, "integrated": bool(s.integrated)}


#: Sampler sizes past which a request is refused before anything runs (a typo of a few digits made the
#: sampler ask for terabytes and abort): far past any useful fit of this model
MAX_CHAINS = 64
MAX_DRAWS = 1_000_000
MAX_TOTAL_DRAWS = 2_000_000


def _sampler_values(s: Any, problems: list[str]) -> dict[str, Any]:
    """Check the sampler fields of ``s`` (as :func:`_model_values` does the model's)."""
    if s.engine not in ENGINES:
        problems.append(f"engine must be one of {', '.join(ENGINES)}; got {s.engine!r}.")
    whole = ("chains", "draws", "tune", "seed", "extra_rounds")
    for name in whole:
        value = getattr(s, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            problems.append(f"{name} must be a whole number; got {value!r}.")
    if isinstance(s.chains, (int, np.integer)) and not (1 <= s.chains <= MAX_CHAINS):
        problems.append(f"chains must be between 1 and {MAX_CHAINS}; got {s.chains}.")
    if isinstance(s.draws, (int, np.integer)) and not (1 <= s.draws <= MAX_DRAWS):
        problems.append(f"draws must be between 1 and {MAX_DRAWS:,}; got {s.draws:,}.")
    elif (isinstance(s.draws, (int, np.integer)) and isinstance(s.chains, (int, np.integer))
          and 1 <= s.chains <= MAX_CHAINS and s.chains * s.draws > MAX_TOTAL_DRAWS):
        problems.append(f"the kept draws, chains × draws, must be at most {MAX_TOTAL_DRAWS:,} (the posterior is kept "
                        f"in memory); got {s.chains} × {s.draws:,}.")
    if isinstance(s.extra_rounds, (int, np.integer)) and not (0 <= s.extra_rounds <= 10):
        problems.append(f"extra_rounds must be between 0 and 10; got {s.extra_rounds}.")
    if isinstance(s.tune, (int, np.integer)) and not (0 <= s.tune <= MAX_DRAWS):
        problems.append(f"tune must be between 0 and {MAX_DRAWS:,}; got {s.tune:,}.")
    if isinstance(s.seed, (int, np.integer)) and not (0 <= s.seed < 2**32):
        problems.append(f"seed must be between 0 and 2**32 - 1; got {s.seed}.")
    ta = _number(problems, "target_accept", s.target_accept)
    if ta is not None and not (0 < ta < 1):
        problems.append(f"target_accept must be strictly between 0 and 1; got {s.target_accept!r}.")
    out: dict[str, Any] = {"target_accept": ta}
    for name in whole:
        value = getattr(s, name)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            out[name] = int(value)
    return out


def _settle(obj: Any, what: str, *checks: Any) -> None:
    """Run ``checks`` on a frozen settings object: raise every problem at once, else store the
    normalised values."""
    problems: list[str] = []
    values: dict[str, Any] = {}
    for check in checks:
        values.update(check(obj, problems))
    if problems:
        raise ValueError(f"Invalid {what} settings:\n- " + "\n- ".join(problems))
    for name, value in values.items():
        object.__setattr__(obj, name, value)


def _plain(d: dict[str, Any]) -> dict[str, Any]:
    if isinstance(d.get("delta"), tuple):
        d["delta"] = list(d["delta"])
    return d


@dataclass(frozen=True)
class ModelSettings:
    """The model's settings (see :class:`FitSettings` for each field): what :func:`build_model`,
    :func:`model_data`, :func:`structure_key` and :mod:`simplex_core.model.fast_density` read."""

    omega: float = 0.0
    beta_max: float = 5.0
    integrated: bool = False
    prior: str = "weight-propagation"
    delta: str | tuple[float, ...] = "inflation"
    likelihood: str = "shared-truth"

    def __post_init__(self) -> None:
        _settle(self, "model", _model_values)

    @property
    def has_random_effects(self) -> bool:
        """Whether the model contains the random effects Z, R, W (ω > 0 or integrated)."""
        return self.integrated or self.omega > 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (δ as a name or a list)."""
        return _plain(asdict(self))


@dataclass(frozen=True)
class SamplerSettings:
    """How a model is sampled (see :class:`FitSettings` for each field): what the engines of
    :mod:`simplex_core.inference.fitting` and :mod:`simplex_core.inference.tempering` read."""

    chains: int = 4
    draws: int = 1000
    tune: int = 1000
    seed: int = 0
    engine: str = "fast"
    target_accept: float = 0.8
    extra_rounds: int = 3

    def __post_init__(self) -> None:
        _settle(self, "sampler", _sampler_values)

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (validated again), of the same class."""
        return type(self)(**{**asdict(self), **changes})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: The order of :meth:`FitSettings.to_dict` (the fields' order before the split; JSON outputs keep it).
_FIT_FIELD_ORDER = ("omega", "beta_max", "integrated", "prior", "delta", "self_exclusion", "chains", "draws", "tune",
                    "seed", "engine", "target_accept", "extra_rounds", "likelihood")


@dataclass(frozen=True)
class FitSettings(ModelSettings, SamplerSettings):
    """Everything that defines one fit besides the data: the model (:attr:`model`), the sampler
    (:attr:`sampler`) and the data-view flag ``self_exclusion``, flat (it inherits both parts'
    fields) so that the keywords, the JSON of :meth:`to_dict` and :meth:`key` stay those of every
    fit cached and shipped so far.

    Parameters
    ----------
    omega
        Constancy-violation strength ω ≥ 0; 0 means no random effects (strong constancy among
        included pairs). Ignored in integrated mode.
    beta_max
        Judge-quality prior strength β_max ≥ 0. Ignored in integrated mode.
    integrated
        Put hyperpriors on ω and β_max (``Uniform(0, 8)``, ``Uniform(0, 20)``) instead of fixing them.
    prior
        Judge prior: ``'weight-propagation'`` (default), ``'diagonal'`` or ``'mixing'``.
    delta
        Direction prior δ of the random effects: a preset name (``'inflation'``, ``'deflation'``,
        ``'central'``, ``'uniform'``), a tuple of positive numbers (one per true level), or a string
        ``"V,V,..."``.
    self_exclusion
        The data view, not the model: whether self-family pairs were excluded when the counts were
        built (``data.count_tensor(table, self_exclusion=...)``; the counts carry the resulting
        ``included`` mask, which the model reads). Recorded here for reproducibility and the fit
        key; :func:`check_data_view` checks that counts and flag agree.
    chains, draws, tune
        MCMC chains, kept draws per chain and warm-up iterations per chain.
    seed
        Random seed; the same data, settings and seed give identical output.
    engine
        ``'fast'`` (the default: nutpie's Rust NUTS on the hand-written numba log density of
        :mod:`simplex_core.model.fast_density`, chains started at the posterior's modes), ``'nutpie'``
        (nutpie's Rust NUTS on a PyTensor C-compiled log density, chains in threads), ``'nutpie-numba'`` (nutpie's numba backend: slow to compile) or ``'pymc'``
        (PyMC's own NUTS, chains one after another in this process). See
        :mod:`simplex_core.inference.fitting`.
    target_accept
        Target acceptance rate of the step-size adaptation.
    likelihood
        ``'shared-truth'``: one latent true level per answer (item, candidate), seen by every judge
        (the judges' scores of one answer are one observation, not J); needs item-level data
        (``counts.patterns``). ``'per-judge'``: the paper's likelihood, each judge's counts an
        independent multinomial (counts the same answers once per judge). See the module docstring.
    extra_rounds
        Engine ``'fast'`` only: when the first ``chains`` chains, all started at the posterior's
        one mode, have not converged and more draws can help (no divergences), up to this many
        more rounds of ``chains`` chains are sampled (0 = never), each round's chains twice as long
        as the last's and replacing them. (Chains started at separate modes that
        disagree are replaced by parallel tempering instead.)
    """

    self_exclusion: bool = True

    def __post_init__(self) -> None:
        _settle(self, "fit", _model_values, _sampler_values)
        object.__setattr__(self, "self_exclusion", bool(self.self_exclusion))

    @classmethod
    def from_parts(cls, model: ModelSettings = ModelSettings(), sampler: SamplerSettings = SamplerSettings(),
                   self_exclusion: bool = True) -> "FitSettings":
        """The settings of a fit of ``model`` sampled by ``sampler`` on counts built with
        ``self_exclusion``."""
        return cls(**asdict(model), **asdict(sampler), self_exclusion=self_exclusion)

    @property
    def model(self) -> ModelSettings:
        """The model part (what the model builders read)."""
        return ModelSettings(**{name: getattr(self, name) for name in MODEL_FIELDS})

    @property
    def sampler(self) -> SamplerSettings:
        """The sampler part (what the engines read)."""
        return SamplerSettings(**{name: getattr(self, name) for name in SAMPLER_FIELDS})

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict of every field (δ as a name or a list), in the fields' historical order."""
        d = _plain(asdict(self))
        return {name: d[name] for name in _FIT_FIELD_ORDER}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "FitSettings":
        d = dict(d)
        if isinstance(d.get("delta"), list):
            d["delta"] = tuple(d["delta"])
        return cls(**d)

    def key(self) -> str:
        """A stable hash of the settings, for caches (same settings, same key, in any process).
        Never change what it hashes: cached and shipped fits are found by it."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]


def model_settings(settings: ModelSettings | FitSettings) -> ModelSettings:
    """The model part of ``settings`` (itself when it is one already)."""
    return settings.model if isinstance(settings, FitSettings) else settings


#: Most observed levels a fit takes. Why: each judge's confusion matrix has (true levels) × (levels)
#: cells and the weight-propagation prior about half a square of edges per row; a 20-level scale
#: (3 judges × 6 candidates × 60 items) took 203 s and 2.7 GB, 15 levels 80 s and 1.4 GB, and 101
#: levels had not started sampling after 300 s (1.3 GB and growing).
MAX_FIT_LEVELS = 20


def check_fit_size(scale: "Scale") -> None:
    """A clear error, before anything is compiled, for a scale with more levels than a fit can take."""
    if scale.n_levels > MAX_FIT_LEVELS:
        raise ValueError(
            f"The scale has {scale.n_levels} levels; a fit takes at most {MAX_FIT_LEVELS}: each judge's "
            f"confusion matrix would have {scale.n_true} × {scale.n_levels} cells, too many to sample in "
            f"reasonable time and memory. Map the scores to fewer levels first (e.g. 0–100 to 1–10 by rounding "
            f"score / 10), or collapse levels on the app's Data page."
        )


def check_data_view(counts: "CountsLike", settings: FitSettings) -> None:
    """The counts must be the data view the settings record: without self-exclusion, no pair excluded."""
    if not settings.self_exclusion and not np.asarray(counts.included).all():
        raise ValueError(
            "settings.self_exclusion is False but the counts exclude some pairs: rebuild the counts "
            "with count_tensor(table, self_exclusion=False)."
        )


# -- priors glue ---------------------------------------------------------------------------------

def resolve_delta(delta: str | tuple[float, ...], n_true: int) -> np.ndarray:
    """δ as a positive vector of length ``n_true`` (a preset name or explicit values)."""
    from simplex_core.model import priors

    if isinstance(delta, str):
        values = priors.delta_preset(delta, n_true)
    else:
        values = delta
    out = np.asarray(values, dtype=float)
    if out.shape != (n_true,):
        raise ValueError(
            f"delta has {out.size} values but the scale has {n_true} true levels: give one value per true level."
        )
    return out


@dataclass(frozen=True)
class EdgeGroups:
    """The weight-propagation graph arranged for vectorised sampling.

    Nodes ``(m1, m2)`` of rows ``m1 = 0 .. M_true-2`` with ``d ≥ 2`` outgoing edges share one
    Dirichlet variable of shape ``(J, n_nodes_d, d)``.

    Attributes
    ----------
    groups
        ``d -> (nodes, boost)``: ``nodes`` is a list of ``(m1, m2)``; ``boost`` an ``(n_nodes_d, d)``
        0/1 array marking the boosted edge of each node; the ``i``-th edge of node ``(m1, m2)`` goes
        to ``(m1 + 1, m2 + i)``.
    first_row_boost
        0/1 vector over observed levels marking the correct cell of the first row.
    """

    groups: dict[int, tuple[list[tuple[int, int]], np.ndarray]]
    first_row_boost: np.ndarray


def weight_propagation_groups(scale: "Scale") -> EdgeGroups:
    """Arrange :func:`simplex_core.model.priors.weight_propagation_graph` by out-degree for vectorising.

    Checks that the graph has the shape the vectorised model relies on: the children of node
    ``(m1, m2)`` are the consecutive observed levels ``m2, m2 + 1, ...``.
    """
    from simplex_core.model import priors

    graph = priors.weight_propagation_graph(scale)
    groups_nodes: dict[int, list[tuple[int, int]]] = {}
    groups_boost: dict[int, list[np.ndarray]] = {}
    for tr in graph.transitions:
        for parent, children, boosted in tr.dirichlet_nodes:
            d = len(children)
            if tuple(children) != tuple(range(parent, parent + d)):
                raise ValueError(
                    f"weight-propagation node {(tr.source_row, parent)} has children {children}; "
                    f"expected the consecutive levels from {parent}."
                )
            b = np.zeros(d)
            if boosted >= 0:
                b[boosted] = 1.0
            groups_nodes.setdefault(d, []).append((tr.source_row, parent))
            groups_boost.setdefault(d, []).append(b)
    groups = {d: (groups_nodes[d], np.stack(groups_boost[d])) for d in sorted(groups_nodes)}
    return EdgeGroups(groups=groups, first_row_boost=np.asarray(graph.first_row_boost, dtype=float))


# -- the model -----------------------------------------------------------------------------------

#: Judges who must score a candidate's answers before the data can tell their errors from its quality:
#: three conditionally independent views identify a latent-class model (Kruskal 1977; Dawid & Skene
#: 1979), one or two do not (the paper's theorem 2 for the per-judge marginals).
IDENTIFYING_JUDGES = 3


def identification_note(counts: CountsLike) -> str | None:
    """One sentence when some candidate has fewer than :data:`IDENTIFYING_JUDGES` judges scoring its
    answers (pairs left out as self-family do not count), none of its answers labelled (gold), and no
    judge of its own that scores another candidate together with two more judges (such a judge's
    matrix is learnt there and reads this candidate too): its expected score then rests on the judge
    prior (β_max) rather than on the data. None otherwise.

    Why: on simulated data with one or two judges, fits that converged put E_k far from the truth
    (7 levels, a near-random and a fair judge: E 1.4 for a true 4.3) because the weight-propagation
    prior, not the data, chose how lenient the judges are."""
    scored = (np.asarray(counts.N).sum(axis=2) > 0) & np.asarray(counts.included, dtype=bool)  # [J, K]
    per_candidate = scored.sum(axis=0)
    # A judge's confusion matrix is one for every candidate: a judge that scores some candidate
    # together with two others is pinned there, and then reads any candidate it scores.
    anchored = scored[:, per_candidate >= IDENTIFYING_JUDGES].any(axis=1)  # [J]
    patterns = getattr(counts, "patterns", None)
    gold = set() if patterns is None else set(np.asarray(patterns.candidate)[np.asarray(patterns.truth) >= 0].tolist())
    weak = [k for k in range(len(counts.candidates))
            if per_candidate[k] < IDENTIFYING_JUDGES and k not in gold and not (scored[:, k] & anchored).any()]
    if not weak:
        return None
    if len(weak) == len(counts.candidates):
        who = "any candidate" if len(counts.candidates) > 1 else "the candidate"
    else:
        names = [str(counts.candidates[k]) for k in weak]
        who = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    # "every candidate" read as "some candidate has fewer than three" (the browser probe): say "any".
    return (f"Fewer than {IDENTIFYING_JUDGES} judges scored the answers of {who}, with no answer labelled: the "
            "data cannot tell a judge's errors from a candidate's quality, so these scores and intervals rest "
            "on the judge prior (β_max) as much as on the data. Three or more judges per candidate, or a few "
            "labelled answers, settle them.")


def scale_end_note(counts: CountsLike) -> str | None:
    """One sentence when every score that some candidate's answers received (from the judges whose
    pairs enter the fit) is the scale's top level, or every one its bottom level; square scales only
    (observed levels = true levels). None otherwise.

    Why: such a candidate's expected score is estimated short of that end, and its interval never
    reaches it. A continuous posterior puts no mass on the end itself, and the prior on the candidate's
    score distribution, Dirichlet(1), counts one pseudo-answer at each true level: with n answers and
    perfect judges E_k sits M/(n + M) of the way from the end towards the middle of the scale (the
    conjugate posterior mean), further when the judges may err. Measured on simulated data
    (``bench.unseen_scenarios``, seed 8103: 7 levels, about 28 answers): E 6.00 estimated 5.54."""
    scale = counts.scale
    if scale.n_levels != scale.n_true:
        return None
    N = np.asarray(counts.N, dtype=float) * np.asarray(counts.included, dtype=bool)[:, :, None]
    totals = N.sum(axis=0)  # [K, M]
    answers = N.sum(axis=2).max(axis=0)  # per candidate: the most answers one judge scored
    M = scale.n_levels
    ends = []
    for end, index in (("top", M - 1), ("bottom", 0)):
        at_end = [k for k in range(len(counts.candidates)) if totals[k].sum() > 0 and totals[k, index] == totals[k].sum()]
        if at_end:
            names = [str(counts.candidates[k]) for k in at_end]
            who = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            n = int(answers[at_end[0]])
            ends.append(f"every score that the answers of {who} received is the {end} level (for {names[0]}, "
                        f"{n} answers on {M} levels: at least {M / (n + M):.1%} of the way to the middle)")
    if not ends:
        return None
    text = "; ".join(ends)
    return (text[0].upper() + text[1:] + ". Such expected scores are estimated short of that end of the scale and "
            "their intervals do not reach it: the prior on a candidate's score distribution counts one pseudo-answer "
            "at each level (the share above holds for perfect judges; judges who may err pull further). More answers "
            "shrink the pull.")


#: Square scales from this many true levels on get :func:`judge_prior_note`: the weight-propagation
#: prior's mean judge scores +0.88 levels high at 5 levels (+0.22 at 3; ``bench.judge_prior_bias``).
LEANING_PRIOR_LEVELS = 5


def judge_prior_note(counts: CountsLike, settings: "ModelSettings | None" = None) -> str | None:
    """One sentence when the scale is square with at least :data:`LEANING_PRIOR_LEVELS` true levels, no
    answer is labelled (gold) and the judge prior is weight propagation (``settings``; None = the
    default): how far above the truth its mean judge scores before any data, at the fit's β_max or,
    integrated, over β_max's range (:func:`simplex_core.model.priors.mean_judge_offset`). None otherwise.

    Why: from row to row of Θ the weight-propagation prior moves mass only to higher observed levels,
    and a node has more edges above the correct cell than below it, so on M levels its judges lean
    lenient (+0.88 at 5 levels, +1.80 at 7, +3.33 at 10, β_max = 5). Where the data leave the judges'
    leniency open it moves E_k down: on simulated 7-level data with three symmetric judges
    (``bench.unseen_scenarios`` seed 7003) all 8 estimates sat below the raw mean score and 2 of 8
    intervals missed above; under the centred diagonal prior 8 of 8 covered. Seed 7035 (a symmetric, a
    harsh and a near-random judge, 100 items; converged since tempering towards a reference): every E_k
    at about half its true value (6.00 → 3.2, 1.22 → 0.47), the order of all 7 exact."""
    from simplex_core.model.priors import mean_judge_offset

    settings = settings if settings is not None else FitSettings()
    scale = counts.scale
    if scale.n_levels != scale.n_true or scale.n_true < LEANING_PRIOR_LEVELS or settings.prior != "weight-propagation":
        return None
    patterns = getattr(counts, "patterns", None)
    if patterns is not None and (np.asarray(patterns.truth) >= 0).any():
        return None  # labelled answers pin the judges' leniency
    if settings.integrated:
        low, high = mean_judge_offset(scale, BETA_MAX_UPPER), mean_judge_offset(scale, 0.0)
        expects = (f"the judge prior (weight-propagation, β_max integrated over 0–{BETA_MAX_UPPER:g}) expects, "
                   f"before any data, that a judge scores answers {low:.2f} to {high:.2f} above their true score on "
                   "average")
        remedies = "A few labelled answers or fewer levels lean less."
    else:
        expects = (f"the judge prior (weight-propagation, β_max = {settings.beta_max:g}) expects, before any data, "
                   f"that a judge scores answers {mean_judge_offset(scale, float(settings.beta_max)):.2f} above "
                   "their true score on average")
        larger = " a larger β_max," if float(settings.beta_max) < BETA_MAX_UPPER else ""  # none above the top
        remedies = f"A few labelled answers, integrated mode (which learns β_max),{larger} or fewer levels lean less."
    return (f"On this {scale.n_true}-level scale {expects}: where the data do not settle how lenient the judges are "
            f"(few answers, judges who err alike), expected scores lean low, their order much less. {remedies}")


def data_notes(counts: CountsLike, settings: "ModelSettings | None" = None) -> list[str]:
    """What a reader of the results must know about these data's power: :func:`identification_note`,
    :func:`scale_end_note` and :func:`judge_prior_note` (for the model ``settings``; None = the
    default), those that have something to say."""
    return [note for note in (identification_note(counts), scale_end_note(counts), judge_prior_note(counts, settings))
            if note]


def included_pairs(counts: CountsLike) -> tuple[np.ndarray, np.ndarray]:
    """Judge and candidate indices of the pairs that enter the likelihood (row-major order)."""
    jj, kk = np.nonzero(np.asarray(counts.included, dtype=bool))
    return jj.astype(np.int64), kk.astype(np.int64)


def _check_counts(counts: CountsLike) -> None:
    check_fit_size(counts.scale)
    N = np.asarray(counts.N)
    problems = []
    J, K = len(counts.judges), len(counts.candidates)
    M = counts.scale.n_levels
    if N.shape != (J, K, M):
        problems.append(
            f"counts.N has shape {N.shape}; expected (judges, candidates, levels) = {(J, K, M)}."
        )
    elif (N < 0).any():
        problems.append("counts.N has negative counts.")
    inc = np.asarray(counts.included)
    if inc.shape != (J, K):
        problems.append(f"counts.included has shape {inc.shape}; expected (judges, candidates) = {(J, K)}.")
    elif not inc.any():
        problems.append("every (judge, candidate) pair is excluded: nothing to fit.")
    if K < 2:
        problems.append(f"at least 2 candidates are needed to rank; got {K}.")
    if problems:
        raise ValueError("Cannot build the model:\n- " + "\n- ".join(problems))


def require_patterns(counts: CountsLike) -> "ScorePatterns":
    """The counts' score patterns, or a clear error when they were built without item-level data."""
    patterns = getattr(counts, "patterns", None)
    if patterns is None:
        raise ValueError(
            "the shared-truth likelihood needs each answer's scores from every judge (item-level data), "
            "but these counts carry only per-judge totals: build them with data.count_tensor(table), or "
            "use likelihood='per-judge'."
        )
    if patterns.n_patterns == 0:
        raise ValueError("no answer has a score or a gold label: nothing to fit.")
    return patterns


def model_data(counts: CountsLike, settings: ModelSettings | FitSettings) -> dict[str, np.ndarray]:
    """Values of the model's ``pm.Data`` variables for these counts and model settings (of a
    :class:`FitSettings`, its :attr:`~FitSettings.model` part is read).

    ``counts_obs`` is the count tensor with the excluded pairs' counts set to zero: a multinomial
    with zero trials has probability one, so those pairs contribute exactly nothing to the
    likelihood (and the graph stays dense, without index gathers). Swapping these values into a
    compiled model of the same :func:`structure_key` gives the model :func:`build_model` would build
    for ``(counts, settings)``.
    """
    settings = model_settings(settings)
    if settings.likelihood == "shared-truth":
        patterns = require_patterns(counts)
        data: dict[str, np.ndarray] = {
            "pattern_candidate": patterns.candidate.astype(np.int64),
            "pattern_scores": patterns.scores.astype(np.int64),
            "pattern_truth": patterns.truth.astype(np.int64),
            "pattern_weight": patterns.weight.astype(np.float64),
        }
    else:
        included = np.asarray(counts.included, dtype=bool)
        data = {"counts_obs": np.where(included[:, :, None], np.asarray(counts.N, dtype=np.int64), 0)}
    if not settings.integrated:
        data["beta_max"] = np.asarray(settings.beta_max, dtype=float)
    if settings.has_random_effects:
        data["delta"] = resolve_delta(settings.delta, counts.scale.n_true)
        if not settings.integrated:
            data["omega"] = np.asarray(settings.omega, dtype=float)
    return data


def structure_key(counts: CountsLike, settings: ModelSettings | FitSettings) -> str:
    """A key that is equal exactly when two (counts, settings) build the same graph up to data.

    It covers the scale (shape, true-level positions, labels), the judge and candidate names, the
    prior, whether there are random effects and integrated mode; not the counts, the included mask
    (excluded pairs are zero counts, see :func:`model_data`), ω, β_max or δ.
    """
    settings = model_settings(settings)
    scale = counts.scale
    payload = {
        "levels": scale.n_levels,
        "true_index": list(scale.true_index),
        "true_values": list(scale.true_values),
        "labels": list(scale.labels),
        "judges": list(counts.judges),
        "candidates": list(counts.candidates),
        "prior": settings.prior,
        "random_effects": settings.has_random_effects,
        "integrated": settings.integrated,
        "likelihood": settings.likelihood,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def build_model(counts: CountsLike, settings: ModelSettings | FitSettings) -> "pm.Model":
    """Build the PyMC model for these counts and settings (no sampling, no compilation).

    Parameters
    ----------
    counts
        The count tensor (:class:`simplex_core.data.views.Counts`): ``N`` [J, K, M_obs], ``included``
        [J, K], names and the scale. Excluded pairs do not enter the likelihood.
    settings
        The model settings (:class:`ModelSettings`). Given a :class:`FitSettings`, only its
        :attr:`~FitSettings.model` part is read, after :func:`check_data_view`.

    Returns
    -------
    pm.Model
        With coords ``candidate``, ``judge``, ``true_level``, ``level`` and the variables named in
        the module docstring; the observed ``y`` is the count tensor with excluded pairs zeroed.
    """
    import pymc as pm
    import pytensor.tensor as pt

    _check_counts(counts)
    if isinstance(settings, FitSettings):
        check_data_view(counts, settings)
        settings = settings.model
    scale = counts.scale
    J, K, M = np.asarray(counts.N).shape
    T = scale.n_true
    data = model_data(counts, settings)
    true_values = np.asarray(scale.true_values, dtype=float)
    correct = np.asarray(scale.true_index)  # observed-level position of each true level

    coords = {
        "candidate": list(counts.candidates),
        "judge": list(counts.judges),
        "true_level": list(scale.true_labels),
        "level": list(scale.labels),
    }
    with pm.Model(coords=coords) as model:
        if settings.integrated:
            beta_max = pm.Uniform("beta_max", 0.0, BETA_MAX_UPPER)
        else:
            beta_max = pm.Data("beta_max", data["beta_max"])

        pi = pm.Dirichlet("pi", a=np.ones((K, T)), dims=("candidate", "true_level"))
        pm.Deterministic("expected_score", pt.dot(pi, true_values), dims="candidate")
        rho = pm.Beta("rho", 1.0, 1.0, dims="judge")
        strength = rho * beta_max  # [J]

        theta = _judge_prior(settings.prior, scale, strength, J, T, M, correct)
        theta = pm.Deterministic("theta", theta, dims=("judge", "true_level", "level"))

        if settings.has_random_effects:
            delta = pm.Data("delta", data["delta"], dims="true_level")
            if settings.integrated:
                omega = pm.Uniform("omega", 0.0, OMEGA_UPPER)
            else:
                omega = pm.Data("omega", data["omega"])
            Z = pm.Dirichlet("Z", a=pt.ones((K, 1)) * delta[None, :], dims=("candidate", "true_level"))
            if settings.integrated:
                R = _augmented_beta("R", omega, J, "judge")
                W = _augmented_beta("W", omega, K, "candidate")
            else:
                R = pm.Beta("R", alpha=omega * J, beta=float(J), dims="judge")
                W = pm.Beta("W", alpha=omega * K, beta=float(K), dims="candidate")
            mix = R[:, None] * W[None, :]  # [J, K]
        else:
            Z = mix = None
        if settings.likelihood == "shared-truth":
            pm.Potential("shared_truth_loglik", _shared_truth_loglik(pi, theta, mix, Z, data))
        else:
            if mix is not None:
                m = mix[:, :, None]
                pi_jk = (1.0 - m) * pi[None, :, :] + m * Z[None, :, :]  # [J, K, T]
                gamma = (pi_jk[:, :, :, None] * theta[:, None, :, :]).sum(axis=2)
            else:
                gamma = (pi[None, :, :, None] * theta[:, None, :, :]).sum(axis=2)
            # γ_jk = Σ_m π_k^(j)[m] Θ_j[m, ·] [J, K, M]; excluded pairs have zero counts (n = 0).
            counts_obs = pm.Data("counts_obs", data["counts_obs"], dims=("judge", "candidate", "level"))
            pm.Multinomial(
                "y", n=counts_obs.sum(axis=-1), p=gamma, observed=counts_obs, dims=("judge", "candidate", "level")
            )
    return model


def _augmented_beta(name: str, omega, n: int, dim: str):
    """``name ~ Beta(ωn, n)`` (integrated mode) written exactly as ``logit = logit V − E/(ωn)`` with
    ``V_<name> ~ Beta(1 + ωn, n)`` and ``E_<name> ~ Exponential(1)`` free, ``name`` a Deterministic.

    Why: X ~ Gamma(a) is G·U^{1/a} with G ~ Gamma(a + 1), U ~ Uniform(0, 1) independent, so
    Beta(a, b) = X/(X + Y) has log-odds log(G/Y) − (−log U)/a = logit V − E/a. V's prior stays
    well-conditioned as ω → 0 and E's does not depend on ω: no funnel between ω and the variable."""
    import pymc as pm

    a = omega * n
    V = pm.Beta(f"V_{name}", alpha=1.0 + a, beta=float(n), dims=dim)
    E = pm.Exponential(f"E_{name}", 1.0, dims=dim)
    return pm.Deterministic(name, pm.math.sigmoid(pm.math.logit(V) - E / a), dims=dim)


def shared_truth_emission(theta, mix=None, Z=None):
    """``L[j, k, t, s]``: probability that judge j scores s an answer of candidate k whose true level
    is t, under the shared-truth likelihood (works on numpy arrays and pytensor tensors).

    With random effects, the judge sees the true level with probability ``1 − mix_jk`` (``mix_jk =
    W_k R_j``) and, with probability ``mix_jk``, a level z ~ Z_k drawn afresh for that judgment::

        L[j, k, t, ·] = (1 − mix_jk) Θ_j[t, ·] + mix_jk Σ_z Z_k[z] Θ_j[z, ·]

    so that averaging over t ~ π_k gives the paper's γ_jk exactly. Without random effects L is
    Θ_j[t, ·] for every k (returned as ``[J, 1, T, M]``).
    """
    if mix is None:
        return theta[:, None, :, :]
    zeta = (Z[None, :, :, None] * theta[:, None, :, :]).sum(axis=2)  # [J, K, M]
    m = mix[:, :, None, None]
    return (1.0 - m) * theta[:, None, :, :] + m * zeta[:, :, None, :]


def _shared_truth_loglik(pi, theta, mix, Z, data):
    """Σ over patterns of weight · log Σ_t π_k[t] Π_j L[j, k, t, s_j] (judges with no score drop
    out; a gold answer keeps only its true level t)."""
    import pymc as pm
    import pytensor.tensor as pt

    cand = pm.Data("pattern_candidate", data["pattern_candidate"])
    scores = pm.Data("pattern_scores", data["pattern_scores"])
    truth = pm.Data("pattern_truth", data["pattern_truth"])
    weight = pm.Data("pattern_weight", data["pattern_weight"])
    J = theta.shape[0]
    T = theta.shape[1]
    log_L = pt.log(shared_truth_emission(theta, mix, Z))  # [J, K or 1, T, M]
    log_Lt = log_L.dimshuffle(0, 1, 3, 2)  # [J, K', M, T]
    k_index = cand if mix is not None else pt.zeros_like(cand)
    scored = pt.ge(scores, 0)  # [P, J]
    picked = log_Lt[pt.arange(J)[None, :], k_index[:, None], pt.maximum(scores, 0)]  # [P, J, T]
    per_level = (picked * scored[:, :, None]).sum(axis=1) + pt.log(pi)[cand]  # [P, T]
    gold = pt.ge(truth, 0)[:, None]
    keep = pt.or_(pt.bitwise_not(gold), pt.eq(pt.arange(T)[None, :], truth[:, None]))
    per_level = pt.switch(keep, per_level, -np.inf)
    return (weight * pt.logsumexp(per_level, axis=1)).sum()


def _judge_prior(prior: str, scale: "Scale", strength, J: int, T: int, M: int, correct: np.ndarray):
    """Θ [J, T, M] as a pytensor expression under the chosen judge prior.

    ``strength`` is ρ_j·β_max [J]; ``correct[m]`` the observed position of true level m.
    """
    import pymc as pm
    import pytensor.tensor as pt

    onehots = np.zeros((T, M))
    onehots[np.arange(T), correct] = 1.0
    if prior == "diagonal":
        conc = 1.0 + strength[:, None, None] * onehots[None]
        return pm.Dirichlet("theta_rows", a=conc, dims=("judge", "true_level", "level"))

    first = pm.Dirichlet("theta_first_row", a=1.0 + strength[:, None] * onehots[0][None, :], dims=("judge", "level"))
    if prior == "mixing":
        # Same form as priors.sample_mixing: Θ[m] = (1 − λ_m) Θ[m−1] + λ_m ε_m.
        eps = pm.Dirichlet("innovation", a=1.0 + strength[:, None, None] * onehots[None, 1:])
        lam = pm.Beta("mixing_weight", 1.0, 1.0, shape=(J, T - 1))
        rows = [first]
        for m in range(1, T):
            lm = lam[:, m - 1, None]
            rows.append((1.0 - lm) * rows[-1] + lm * eps[:, m - 1, :])
        return pt.stack(rows, axis=1)

    # weight propagation: one Dirichlet variable per out-degree d, shape [J, n_nodes_d, d]
    wp = weight_propagation_groups(scale)
    edge_weights = {}
    for d, (nodes, boost) in wp.groups.items():
        edge_weights[d] = pm.Dirichlet(f"edge_weights_{d}", a=1.0 + strength[:, None, None] * boost[None])
    position = {node: (d, i) for d, (nodes, _) in wp.groups.items() for i, node in enumerate(nodes)}
    rows = [first]
    for m1 in range(T - 1):
        # Transition matrix A [J, M, M]: row m2 spreads node (m1, m2)'s mass over columns >= m2.
        a_rows = []
        for m2 in range(M):
            if (m1, m2) in position:
                d, i = position[(m1, m2)]
                w = edge_weights[d][:, i, :]
            else:  # single outgoing edge: passes all its mass
                w = pt.ones((J, M - m2))
            a_rows.append(pt.concatenate([pt.zeros((J, m2)), w], axis=1) if m2 else w)
        A = pt.stack(a_rows, axis=1)
        rows.append((rows[-1][:, :, None] * A).sum(axis=1))
    return pt.stack(rows, axis=1)
