"""The settings of a fit: :class:`ModelSettings` (what the model is: ω, β_max, integrated, the judge
prior, δ, the likelihood), :class:`SamplerSettings` (how it is sampled: chains, draws, warm-up, seed,
engine, acceptance target, extra rounds) and :class:`FitSettings` (both, flat, plus the data-view flag
``self_exclusion``), each checked when made, with ``to_dict()`` and ``key()`` (a stable hash: cached and
shipped fits are found by it). Also the limits of a fit (:func:`check_fit_size`) and the check that the
counts were built as the settings say (:func:`check_data_view`)."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from simplex_core.model.priors import DELTA_PRESETS, JUDGE_PRIORS, delta_setting

if TYPE_CHECKING:  # pragma: no cover
    from simplex_core.data.patterns import ScorePatterns
    from simplex_core.data.scale import Scale


PRIORS: tuple[str, ...] = JUDGE_PRIORS
ENGINES: tuple[str, ...] = ("fast", "nutpie", "nutpie-numba", "pymc")
LIKELIHOODS: tuple[str, ...] = ("shared-truth", "per-judge")

#: Integrated-mode hyperprior bounds (our choice, see the module docstring).
OMEGA_UPPER = 8.0
BETA_MAX_UPPER = 20.0


class CountsLike(Protocol):
    """What the model needs from :class:`simplex_core.data.views.Counts` (read only, so that the
    frozen dataclass matches)."""

    @property
    def N(self) -> np.ndarray: ...
    @property
    def included(self) -> np.ndarray: ...
    @property
    def judges(self) -> tuple[str, ...]: ...
    @property
    def candidates(self) -> tuple[str, ...]: ...
    @property
    def scale(self) -> "Scale": ...
    @property
    def excluded_pairs(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def patterns(self) -> "ScorePatterns | None": ...


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
    try:
        delta = delta_setting(s.delta)
    except (TypeError, ValueError):
        problems.append(f"delta must be one of {', '.join(DELTA_PRESETS)} or positive numbers "
                        f"'V,V,...' (one per true level); got {s.delta!r}." if isinstance(s.delta, str) else
                        f"delta values must be numbers; got {s.delta!r}.")
        delta = "uniform"
    if not isinstance(delta, str) and (len(delta) < 2 or any(not (math.isfinite(x) and x > 0) for x in delta)):
        problems.append(f"delta needs one positive finite number per true level (at least 2); got {s.delta!r}.")
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
    prior: str = "ordered"
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
        Judge prior: ``'ordered'`` (default: latent thresholds, centred and ordered), ``'weight-propagation'``
        (the paper's), ``'diagonal'`` or ``'mixing'``.
    delta
        Direction prior δ of the random effects: a preset name (``'inflation'``, ``'deflation'``,
        ``'central'``, ``'uniform'``), a tuple of positive numbers (one per true level), or a string
        ``"V,V,..."``.
    self_exclusion
        The data view, not the model: how self-family judgments entered the counts
        (``data.count_tensor(table, self_exclusion=...)``): ``True`` kept apart, a rater of their own
        with vertices of their own (the paper's Moderate Constancy; the default), ``"drop"`` left
        out (the paper's practice), ``False`` pooled with the judge's other judgments. The counts
        carry the resulting raters and ``included`` mask, which the model reads. Recorded here for reproducibility and the fit
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

    self_exclusion: bool | str = True

    def __post_init__(self) -> None:
        _settle(self, "fit", _model_values, _sampler_values)
        if self.self_exclusion != "drop":
            object.__setattr__(self, "self_exclusion", bool(self.self_exclusion))
        if self.self_exclusion is True and self.likelihood == "per-judge":
            # Kept apart, an own-family rater's vertices are learnt through the shared truth; the per-judge
            # likelihood has none to learn them from (measured: HANNA engagement did not converge, R-hat
            # 1.03), so with it self-family judgments are left out, as in the paper.
            object.__setattr__(self, "self_exclusion", "drop")

    @classmethod
    def from_parts(cls, model: ModelSettings = ModelSettings(), sampler: SamplerSettings = SamplerSettings(),
                   self_exclusion: bool | str = True) -> "FitSettings":
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
    from simplex_core.data.views import OWN_FAMILY_SUFFIX

    apart = any(str(j).endswith(OWN_FAMILY_SUFFIX) for j in counts.judges)
    if apart and settings.self_exclusion is not True:
        raise ValueError(
            f"the counts keep self-family judgments apart (own-family raters) but settings.self_exclusion is "
            f"{settings.self_exclusion!r}: rebuild the counts with count_tensor(table, self_exclusion=settings.self_exclusion)."
        )

