"""On-disk cache of fits, keyed by the data hash and the settings key.

One directory per fit under the cache root (default ``~/.cache/simplex_judge``, or the environment
variable ``SIMPLEX_JUDGE_CACHE``)::

    <root>/fits/<key>/posterior.nc    the InferenceData (NetCDF)
    <root>/fits/<key>/summary.json    settings, diagnostics, timing, candidate summary

An entry is written into a temporary directory next to its final place and then renamed, so a
reader never sees a half-written entry and concurrent writers of the same key are safe (the first
rename wins; the others discard their copy).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simplex_core.model import CountsLike, FitSettings

if TYPE_CHECKING:  # pragma: no cover
    from simplex_core.inference import FitResult, ProgressCallback

ENV_VAR = "SIMPLEX_JUDGE_CACHE"
_FORMAT = 1  # bump when the stored layout changes


def default_cache_dir() -> Path:
    """``$SIMPLEX_JUDGE_CACHE`` if set, else ``~/.cache/simplex_judge``."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "simplex_judge"


def counts_hash(counts: CountsLike) -> str:
    """sha256 of what the model sees: the counts, the included mask, names and the scale."""
    h = hashlib.sha256()
    N = np.ascontiguousarray(np.asarray(counts.N, dtype=np.int64))
    h.update(str(N.shape).encode())
    h.update(N.tobytes())
    h.update(np.ascontiguousarray(np.asarray(counts.included, dtype=bool)).tobytes())
    h.update(json.dumps([list(counts.judges), list(counts.candidates), counts.scale.to_dict()]).encode())
    return h.hexdigest()


def patterns_hash(counts: CountsLike) -> str:
    """sha256 of the score patterns (the shared-truth likelihood's data, gold labels included);
    empty when the counts carry none."""
    patterns = getattr(counts, "patterns", None)
    if patterns is None:
        return ""
    h = hashlib.sha256()
    for a in (patterns.candidate, patterns.scores, patterns.truth, patterns.weight):
        a = np.ascontiguousarray(np.asarray(a, dtype=np.int64))
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def fit_key(counts: CountsLike, settings: FitSettings) -> str:
    """Cache key: the data (counts hash, which the data hash determines) and the settings key; for the
    shared-truth likelihood also the score patterns (two data sets with equal counts can differ in
    their patterns or gold labels)."""
    payload = f"{_FORMAT}|{counts_hash(counts)}|{settings.key()}"
    if getattr(settings, "likelihood", "per-judge") == "shared-truth":
        payload += f"|{patterns_hash(counts)}"
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


class FitCache:
    """A directory of cached fits.

    Parameters
    ----------
    root
        Cache root; defaults to :func:`default_cache_dir`.
    """

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()

    @property
    def fits_dir(self) -> Path:
        return self.root / "fits"

    def path(self, counts: CountsLike, settings: FitSettings) -> Path:
        return self.fits_dir / fit_key(counts, settings)

    def contains(self, counts: CountsLike, settings: FitSettings) -> bool:
        p = self.path(counts, settings)
        return (p / "posterior.nc").exists() and (p / "summary.json").exists()

    def get(self, counts: CountsLike, settings: FitSettings) -> "FitResult | None":
        """The cached fit for these counts and settings, or None (also None for an unreadable entry)."""
        import arviz as az

        from simplex_core.inference import Diagnostics, FitResult

        p = self.path(counts, settings)
        try:
            summary = json.loads((p / "summary.json").read_text())
            with az.rc_context({"data.load": "eager"}):  # read fully, close the file
                idata = az.from_netcdf(str(p / "posterior.nc"))
        except (OSError, ValueError, KeyError):
            return None
        if summary.get("format") != _FORMAT or summary.get("settings") != settings.to_dict():
            return None
        diag = Diagnostics(**summary["diagnostics_full"])
        timing = dict(summary["timing"])
        timing["from_cache"] = True
        return FitResult(idata=idata, diagnostics=diag, timing=timing, settings=settings, counts=counts)

    def put(self, fit: "FitResult") -> Path:
        """Store a fit (atomically); returns its directory. An existing entry is kept as is."""
        from dataclasses import asdict

        from simplex_core.summaries import candidate_summary

        final = self.path(fit.counts, fit.settings)
        if final.exists():
            return final
        self.fits_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.{uuid.uuid4().hex[:8]}.", dir=self.fits_dir))
        try:
            fit.idata.to_netcdf(str(tmp / "posterior.nc"))
            summary: dict[str, Any] = {
                "format": _FORMAT,
                "counts_hash": counts_hash(fit.counts),
                "data_hash": getattr(fit.counts, "data_hash", "") or None,
                "settings": fit.settings.to_dict(),
                "diagnostics": fit.diagnostics.to_dict(),
                "diagnostics_full": asdict(fit.diagnostics),
                "timing": {k: v for k, v in fit.timing.items() if k != "from_cache"},
                "candidates": json.loads(candidate_summary(fit).to_json(orient="records")),
            }
            (tmp / "summary.json").write_text(json.dumps(summary, indent=1))
            try:
                os.rename(tmp, final)
            except OSError:  # another writer got there first: theirs is as good as ours
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return final

    def clear(self) -> None:
        """Delete every cached fit."""
        shutil.rmtree(self.fits_dir, ignore_errors=True)


def fit_cached(
    counts: CountsLike,
    settings: FitSettings,
    cache: FitCache | None = None,
    progress_callback: "ProgressCallback | None" = None,
) -> "FitResult":
    """The cached fit if there is one, else fit, store and return it.

    A fit loaded from the cache has ``timing["from_cache"] = True``.
    """
    from simplex_core.inference import fit_model

    cache = cache or FitCache()
    hit = cache.get(counts, settings)
    if hit is not None:
        if progress_callback is not None:
            progress_callback("loaded from the cache", 1.0)
        return hit
    fit = fit_model(counts, settings, progress_callback=progress_callback)
    try:
        cache.put(fit)
    except OSError as exc:  # a read-only or full disk must not lose the fit; say so
        import warnings

        warnings.warn(f"could not store the fit in the cache at {cache.root}: {exc}", RuntimeWarning, stacklevel=2)
    return fit
