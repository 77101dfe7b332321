"""The identity of a fit: which data, which model settings, which sampler settings.

This module owns the hashes every cache and job queue uses, so that one fit has one key on disk
(:mod:`simplex_core.inference.fit_cache`), in the job book (:mod:`simplex_core.jobs`), in the study memos
(:mod:`simplex_core.studies.experiments`) and in the app's memory; the shipped default fit
(``assets/precomputed/``) is found by the same keys.

* :func:`data_hash` — the hash of the table the counts were made from (provenance; ``""`` for
  counts built by hand).
* :func:`counts_hash` — what the model sees: counts, included mask, names, scale.
* :func:`patterns_hash` — the score patterns (the shared-truth likelihood's data, gold included).
* :func:`data_key` — the data as any likelihood sees it (counts and patterns): fits of one data set
  share it (a background grid, the "last shown" fit, the shipped fits' data check).
* :func:`fit_key` — one fit: the data the likelihood reads and every setting. Two shared-truth fits
  whose counts are equal but whose patterns or gold labels differ get different keys.
* :func:`model_key` — like :func:`fit_key` but over the model's settings only (not the sampler's
  sizes or seed): the shipped default fit stands in for any sampler size.

Pure: numpy and hashlib only, imported by the core and the app, importing neither.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from simplex_core.model.definition import CountsLike, FitSettings

__all__ = ["KEY_FORMAT", "MODEL_FIELDS", "counts_hash", "data_hash", "data_key", "fit_key", "model_fields",
           "model_key", "patterns_hash"]

#: Bump when what a key covers changes (every cached fit is then fitted again).
KEY_FORMAT = 1

#: The settings that define the model and the data view it reads (the rest say how long, with which
#: seed and engine it was sampled): ``model.MODEL_FIELDS + model.DATA_VIEW_FIELDS``, written out so
#: that this module imports nothing of the project (a test holds the two equal).
MODEL_FIELDS = ("omega", "beta_max", "integrated", "prior", "delta", "likelihood", "self_exclusion")


def _update(h: Any, a: np.ndarray, dtype: Any) -> None:
    a = np.ascontiguousarray(np.asarray(a, dtype=dtype))
    h.update(str(a.shape).encode())
    h.update(a.tobytes())


def data_hash(counts: CountsLike) -> str:
    """sha256 of the table the counts came from (``Counts.data_hash``); ``""`` for counts built
    another way (they have no table)."""
    from simplex_core.data.views import Counts

    return counts.data_hash if isinstance(counts, Counts) else ""


def counts_hash(counts: CountsLike) -> str:
    """sha256 of what the model sees: the counts, the included mask, names and the scale."""
    h = hashlib.sha256()
    _update(h, counts.N, np.int64)
    h.update(np.ascontiguousarray(np.asarray(counts.included, dtype=bool)).tobytes())
    h.update(json.dumps([list(counts.judges), list(counts.candidates), counts.scale.to_dict()]).encode())
    return h.hexdigest()


def patterns_hash(counts: CountsLike) -> str:
    """sha256 of the score patterns (the shared-truth likelihood's data, gold labels included);
    empty when the counts carry none."""
    patterns = counts.patterns
    if patterns is None:
        return ""
    h = hashlib.sha256()
    for a in (patterns.candidate, patterns.scores, patterns.truth, patterns.weight):
        _update(h, a, np.int64)
    return h.hexdigest()


def data_key(counts: CountsLike) -> str:
    """The data part of every fit of these counts (24 hex digits): counts and patterns."""
    return hashlib.sha256(f"{counts_hash(counts)}|{patterns_hash(counts)}".encode()).hexdigest()[:24]


def _likelihood_data(counts: CountsLike, settings: FitSettings) -> str:
    # The per-judge likelihood reads the counts only: two data sets with equal counts share its fit.
    payload = counts_hash(counts)
    if settings.likelihood == "shared-truth":
        payload += f"|{patterns_hash(counts)}"
    return payload


def fit_key(counts: CountsLike, settings: FitSettings) -> str:
    """One fit's key (32 hex digits): the data its likelihood reads and every setting. The name of
    the fit's folder in the fit cache."""
    data = _likelihood_data(counts, settings).split("|")  # (the order of the parts is the stored one)
    payload = "|".join([str(KEY_FORMAT), data[0], settings.key(), *data[1:]])
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def model_fields(settings: FitSettings | dict) -> dict[str, Any]:
    """The settings that define the model, as a dict (``delta`` as a list when given as values)."""
    d = settings.to_dict() if hasattr(settings, "to_dict") else dict(settings)
    out = {k: d.get(k) for k in MODEL_FIELDS}
    if isinstance(out["delta"], tuple):
        out["delta"] = list(out["delta"])
    return out


def model_key(counts: CountsLike, settings: FitSettings) -> str:
    """A fit's key over the model only (32 hex digits): equal for any sampler size, seed or engine."""
    payload = f"{KEY_FORMAT}|model|{_likelihood_data(counts, settings)}|{json.dumps(model_fields(settings), sort_keys=True)}"
    return hashlib.sha256(payload.encode()).hexdigest()[:32]
