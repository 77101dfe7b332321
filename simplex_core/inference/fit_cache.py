"""On-disk cache of fits, keyed by :func:`simplex_core.inference.fit_identity.fit_key`.

One directory per fit under the cache root (default ``~/.cache/simplex_judge``, or the environment
variable ``SIMPLEX_JUDGE_CACHE``)::

    <root>/fits/<key>/posterior.nc    the InferenceData (NetCDF)
    <root>/fits/<key>/summary.json    settings, keys, diagnostics, timing

An entry is written into a temporary directory next to its final place and then renamed, so a
reader never sees a half-written entry and concurrent writers of the same key are safe (the first
rename wins; the others discard their copy).

The cache heals itself: an entry that does not read back (a truncated or deleted file, a summary
missing a field) is moved to ``<root>/quarantine/`` with a warning, so that the fit runs again
once; an incomplete folder is replaced by the next complete write; temporary folders left by a
killed writer are removed when a cache is first used; the total size is kept under
``max_bytes`` (``SIMPLEX_JUDGE_CACHE_MAX_MB``, default 2000) by evicting the least recently used
entries. When the folder cannot be written (read-only, full disk) the fit stays in this process's
memory and a warning says so.

Read-only layers (``FitCache(read_only=[folder, ...])``) are searched after the writable cache:
folders of fits shipped with a program (the app's default fit in ``assets/precomputed/``, written
by :func:`write_read_only`, as ``<stem>_fit.json`` + ``<stem>_posterior.nc``). Such an entry stands
in for any fit of the same data and model settings whatever its sampler sizes, seed or engine (it
is found by :func:`simplex_core.inference.fit_identity.model_key`); one marked ``reweighting_only`` (a
posterior thinned to what :mod:`simplex_core.inference.reweighting` reads) is never returned as a fit, only
by :meth:`FitCache.read_only_fits`. Read-only entries are never written, evicted or quarantined: a
broken one is a miss, with a warning.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from simplex_core.data.assets import PRECOMPUTED_DIR
from simplex_core.inference.rater_deviation import ensure_rater_deviation
from simplex_core.inference.fit_identity import counts_hash, data_hash, data_key, fit_key, model_key
from simplex_core.model.settings import CountsLike, FitSettings

if TYPE_CHECKING:  # pragma: no cover
    from simplex_core.inference.fit_result import FitResult, ProgressCallback

ENV_VAR = "SIMPLEX_JUDGE_CACHE"
SIZE_ENV_VAR = "SIMPLEX_JUDGE_CACHE_MAX_MB"
_FORMAT = 1  # bump when the stored layout changes (what a key covers: fit_identity.KEY_FORMAT)
_SUMMARY_FIELDS = ("format", "settings", "diagnostics_full", "timing")
_STALE_TEMP_S = 15 * 60  # a temporary folder older than this belongs to a writer that died
_MEMORY_ENTRIES = 32  # fits kept in memory per process when the folder cannot be written

#: The fits shipped with the project (``scripts/precompute_default.py``): the app's read-only layer.
SHIPPED_DIR = PRECOMPUTED_DIR
#: A read-only entry's two files, by its stem (``default``: the fit the app shows on opening).
READ_ONLY_META, READ_ONLY_POSTERIOR = "{stem}_fit.json", "{stem}_posterior.nc"

log = logging.getLogger(__name__)
_SWEPT: set[str] = set()
_MEMORY: "OrderedDict[tuple[str, str], Any]" = OrderedDict()
_LOCK = threading.Lock()


def read_netcdf(path: str | Path) -> Any:
    """An InferenceData read fully from a NetCDF file (the file is closed on return)."""
    import arviz as az

    with az.rc_context({"data.load": "eager"}):
        return az.from_netcdf(str(path))


def _process_exiting() -> bool:
    # At exit h5py unregisters its type converters (an atexit hook) while a Dask worker's thread may
    # still read: the read then fails ("Failed to find converter", h5netcdf assertions) on a healthy
    # file, which must not be quarantined (seen: ten good entries at once). threading._shutdown has
    # run by then, so the main thread no longer counts as alive.
    return sys.is_finalizing() or not threading.main_thread().is_alive()


# Read-only entries read back, by file and its modification time (they never change under a
# running program; a new shipped file is read again): meta path -> (mtime_ns, meta or None) and
# posterior path -> (mtime_ns, (idata, diagnostics, timing, settings) or None = unreadable).
_READ_ONLY_META: dict[str, tuple[int, dict | None]] = {}
_READ_ONLY_FITS: dict[str, tuple[int, tuple | None]] = {}


class CacheEntryError(Exception):
    """A cache entry that exists but does not read back."""


def default_cache_dir() -> Path:
    """``$SIMPLEX_JUDGE_CACHE`` if set, else ``~/.cache/simplex_judge``."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "simplex_judge"


class FitCache:
    """A directory of cached fits.

    Parameters
    ----------
    root
        Cache root; defaults to :func:`default_cache_dir`.
    max_bytes
        Size limit of the stored fits; least recently used entries are evicted past it
        (default ``SIMPLEX_JUDGE_CACHE_MAX_MB`` MB, else 2000 MB).
    read_only
        Folders of read-only entries searched after the cache (e.g. :data:`SHIPPED_DIR`).
    """

    def __init__(self, root: str | os.PathLike | None = None, max_bytes: int | None = None,
                 read_only: Iterable[str | os.PathLike] = ()):
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()
        self.read_only = tuple(Path(d).expanduser() for d in read_only)
        if max_bytes is None:
            try:
                max_bytes = int(float(os.environ.get(SIZE_ENV_VAR, "2000")) * 1e6)
            except ValueError:
                max_bytes = int(2000e6)
        self.max_bytes = max_bytes
        with _LOCK:
            first = str(self.root) not in _SWEPT
            _SWEPT.add(str(self.root))
        if first:
            self.remove_stale_temporaries()

    @property
    def fits_dir(self) -> Path:
        return self.root / "fits"

    @property
    def quarantine_dir(self) -> Path:
        return self.root / "quarantine"

    def path(self, counts: CountsLike, settings: FitSettings) -> Path:
        return self.fits_dir / fit_key(counts, settings)

    # -- reading ------------------------------------------------------------------------------
    @staticmethod
    def _check(p: Path) -> dict:
        """The entry's summary if the entry is complete; CacheEntryError saying what is wrong."""
        try:
            summary = json.loads((p / "summary.json").read_text())
        except FileNotFoundError:
            raise CacheEntryError("summary.json is missing") from None
        except (OSError, ValueError) as exc:
            raise CacheEntryError(f"summary.json does not read ({type(exc).__name__})") from None
        if not isinstance(summary, dict) or any(f not in summary for f in _SUMMARY_FIELDS):
            raise CacheEntryError("summary.json lacks a field")
        nc = p / "posterior.nc"
        if not nc.is_file():
            raise CacheEntryError("posterior.nc is missing")
        expected = summary.get("posterior_bytes")
        if expected is not None and nc.stat().st_size != expected:
            raise CacheEntryError(f"posterior.nc is {nc.stat().st_size} bytes, {expected} were written")
        return summary

    def contains(self, counts: CountsLike, settings: FitSettings) -> bool:
        """Whether a complete entry (or an in-memory fit) exists; a broken entry is quarantined."""
        key = fit_key(counts, settings)  # hashes the counts and patterns: once
        if (str(self.root), key) in _MEMORY:
            return True
        return self._complete(self.fits_dir / key) or self._stand_in(counts, settings) is not None

    def posterior_file(self, counts: CountsLike, settings: FitSettings) -> Path | None:
        """The ``posterior.nc`` of the complete on-disk entry of these counts and settings, for a
        reader that needs only some of its variables (None when there is no such entry: not fitted,
        in memory only, a read-only stand-in, written for other settings, or broken, which is
        quarantined)."""
        p = self.path(counts, settings)
        if not p.exists():
            return None
        try:
            summary = self._check(p)
        except CacheEntryError as exc:
            self._quarantine(p, str(exc))
            return None
        if summary.get("format") != _FORMAT or summary.get("settings") != settings.to_dict():
            return None  # get() says why and quarantines it
        return p / "posterior.nc"

    def _complete(self, p: Path) -> bool:
        """Whether the entry at ``p`` is there and complete; a broken one is quarantined."""
        if not p.exists():
            return False
        try:
            self._check(p)
            return True
        except CacheEntryError as exc:
            self._quarantine(p, str(exc))
            return False

    def get(self, counts: CountsLike, settings: FitSettings) -> "FitResult | None":
        """The cached fit for these counts and settings, or None. An entry that does not read back
        is quarantined (with a warning), so that the next request fits again."""
        from simplex_core.inference.fit_result import Diagnostics, FitResult

        key = fit_key(counts, settings)
        with _LOCK:
            mem = _MEMORY.get((str(self.root), key))
        if mem is not None:
            return mem
        p = self.fits_dir / key
        if not p.exists():
            return self._get_read_only(counts, settings)
        try:
            summary = self._check(p)
            if summary.get("format") != _FORMAT or summary.get("settings") != settings.to_dict():
                raise CacheEntryError("it was written for other settings or an older format")
            try:
                idata = read_netcdf(p / "posterior.nc")
                diag = Diagnostics(**summary["diagnostics_full"])
                timing = dict(summary["timing"])
            except Exception as exc:  # noqa: BLE001 — any failure to read back means a broken entry
                if _process_exiting():
                    return None  # ... unless this process is going away: the entry may be fine
                log.warning("fit cache entry %s does not read back", key, exc_info=True)
                why = f"{type(exc).__name__}: {exc}".strip().rstrip(":")[:300]
                raise CacheEntryError(f"it does not read back ({why})") from None
        except CacheEntryError as exc:
            self._quarantine(p, str(exc))
            return self._get_read_only(counts, settings)
        timing["from_cache"] = True
        try:
            os.utime(p / "summary.json")  # last use, for the least-recently-used eviction
        except OSError:
            pass
        ensure_rater_deviation(idata, counts, settings.seed)  # an entry written before δ existed
        return FitResult(idata=idata, diagnostics=diag, timing=timing, settings=settings, counts=counts)

    # -- read-only layers -----------------------------------------------------------------------
    def _read_only_entries(self) -> list[tuple[Path, dict]]:
        """``(meta path, meta)`` of every readable read-only entry, layer by layer."""
        out = []
        for folder in self.read_only:
            try:
                paths = sorted(folder.glob(READ_ONLY_META.format(stem="*")))
            except OSError:
                continue
            for meta_path in paths:
                meta = _read_only_meta(meta_path)
                if meta is not None:
                    out.append((meta_path, meta))
        return out

    def _stand_in(self, counts: CountsLike, settings: FitSettings) -> Path | None:
        """The first read-only entry of these data and model settings that may be shown as a fit."""
        if not self.read_only:
            return None
        key = model_key(counts, settings)
        for meta_path, meta in self._read_only_entries():
            if meta.get("model_key") == key and not meta.get("reweighting_only"):
                return meta_path
        return None

    def _get_read_only(self, counts: CountsLike, settings: FitSettings) -> "FitResult | None":
        meta_path = self._stand_in(counts, settings)
        return None if meta_path is None else _read_only_fit(meta_path, counts)

    def read_only_fits(self, counts: CountsLike) -> "list[FitResult]":
        """Every read-only fit of these data (``reweighting_only`` ones included), each with the
        settings it was made with: sources for :mod:`simplex_core.inference.reweighting`."""
        key = data_key(counts)
        fits = (_read_only_fit(p, counts) for p, meta in self._read_only_entries() if meta.get("data_key") == key)
        return [f for f in fits if f is not None]

    def _quarantine(self, p: Path, why: str) -> None:
        """Move a broken entry aside (kept for inspection, out of the way of the refit)."""
        target = self.quarantine_dir / f"{p.name}.{time.strftime('%Y%m%d-%H%M%S')}.{uuid.uuid4().hex[:6]}"
        try:
            self.quarantine_dir.mkdir(parents=True, exist_ok=True)
            os.rename(p, target)
            where = f"moved to {target}"
        except OSError:
            shutil.rmtree(p, ignore_errors=True)
            where = "removed" if not p.exists() else "left in place (the folder is not writable)"
        msg = f"fit cache entry {p.name} is broken ({why}); {where}; the fit will run again"
        log.warning(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)

    # -- writing ------------------------------------------------------------------------------
    def put(self, fit: "FitResult") -> Path:
        """Store a fit (atomically); returns its directory. A complete existing entry is kept as is;
        an incomplete one is replaced. When the folder cannot be written, the fit is kept in memory
        (this process) and a RuntimeWarning says so."""
        final = self.path(fit.counts, fit.settings)
        try:
            return self._put(fit, final)
        except OSError as exc:
            with _LOCK:
                _MEMORY[(str(self.root), final.name)] = fit
                while len(_MEMORY) > _MEMORY_ENTRIES:
                    _MEMORY.popitem(last=False)
            msg = (f"could not store the fit in the cache at {self.root} ({exc.strerror or type(exc).__name__}); "
                   "it is kept in memory while this program runs")
            log.warning(msg)
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
            return final

    def _put(self, fit: "FitResult", final: Path) -> Path:
        from dataclasses import asdict

        if self._complete(final):
            return final
        self.fits_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.{uuid.uuid4().hex[:8]}.", dir=self.fits_dir))
        try:
            fit.idata.to_netcdf(str(tmp / "posterior.nc"))
            summary: dict[str, Any] = {
                "format": _FORMAT,
                "counts_hash": counts_hash(fit.counts),
                "data_hash": data_hash(fit.counts) or None,
                "settings": fit.settings.to_dict(),
                "diagnostics": fit.diagnostics.to_dict(),
                "diagnostics_full": asdict(fit.diagnostics),
                "timing": {k: v for k, v in fit.timing.items() if k != "from_cache"},
                "posterior_bytes": (tmp / "posterior.nc").stat().st_size,
            }
            (tmp / "summary.json").write_text(json.dumps(summary, indent=1))
            try:
                os.rename(tmp, final)
            except OSError:  # another writer got there first: theirs is as good as ours
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.evict(keep=final.name)
        return final

    # -- housekeeping -------------------------------------------------------------------------
    def remove_stale_temporaries(self, older_than_s: float = _STALE_TEMP_S) -> int:
        """Remove ``.<key>.*`` folders that a killed writer left; returns how many."""
        removed = 0
        now = time.time()
        try:
            leftovers = [d for d in self.fits_dir.iterdir() if d.name.startswith(".") and d.is_dir()]
        except OSError:
            return 0
        for d in leftovers:
            try:
                if now - d.stat().st_mtime >= older_than_s:
                    shutil.rmtree(d)
                    removed += 1
            except OSError:
                continue
        if removed:
            log.info("removed %d unfinished fit-cache folder(s) under %s", removed, self.fits_dir)
        return removed

    def evict(self, keep: str | None = None) -> list[str]:
        """Delete the least recently used entries until the cache fits in ``max_bytes``."""
        entries = []
        try:
            for d in self.fits_dir.iterdir():
                if d.name.startswith(".") or not d.is_dir():
                    continue
                try:
                    size = sum(f.stat().st_size for f in d.iterdir())
                    used = (d / "summary.json").stat().st_mtime if (d / "summary.json").exists() else d.stat().st_mtime
                except OSError:
                    continue
                entries.append((used, size, d))
        except OSError:
            return []
        total = sum(size for _, size, _ in entries)
        evicted = []
        for used, size, d in sorted(entries, key=lambda e: e[0]):
            if total <= self.max_bytes:
                break
            if d.name == keep:
                continue
            shutil.rmtree(d, ignore_errors=True)
            total -= size
            evicted.append(d.name)
        if evicted:
            log.info("fit cache over %d MB: evicted %d least recently used fit(s)", self.max_bytes // 10**6, len(evicted))
        return evicted

    def clear(self) -> None:
        """Delete every cached fit."""
        shutil.rmtree(self.fits_dir, ignore_errors=True)
        with _LOCK:
            for k in [k for k in _MEMORY if k[0] == str(self.root)]:
                del _MEMORY[k]


def _read_only_warning(path: Path, why: str) -> None:
    msg = f"read-only fit {path.name} is not usable ({why}); it is skipped (fits of its settings run afresh)"
    log.warning(msg)
    warnings.warn(msg, RuntimeWarning, stacklevel=4)


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _read_only_meta(meta_path: Path) -> dict | None:
    """A read-only entry's metadata (memoised by modification time), None when unreadable."""
    mtime = _mtime(meta_path)
    with _LOCK:
        known = _READ_ONLY_META.get(str(meta_path))
    if known is not None and known[0] == mtime:
        return known[1]
    try:
        meta = json.loads(meta_path.read_text())
        if not isinstance(meta, dict) or any(f not in meta for f in ("model_key", "data_key", "settings", "diagnostics")):
            raise ValueError("a field is missing")
    except (OSError, ValueError) as exc:
        _read_only_warning(meta_path, f"{type(exc).__name__}: {exc}")
        meta = None
    with _LOCK:
        _READ_ONLY_META[str(meta_path)] = (mtime or 0, meta)
    return meta


def _read_only_fit(meta_path: Path, counts: CountsLike) -> "FitResult | None":
    """The read-only entry as a FitResult for ``counts`` (its posterior read once per file version;
    ``timing`` has ``from_cache`` and ``read_only``); None, with a warning once, when unreadable."""
    from simplex_core.inference.fit_result import Diagnostics, FitResult

    meta = _read_only_meta(meta_path)
    post_path = meta_path.with_name(READ_ONLY_POSTERIOR.format(stem=meta_path.name.removesuffix(READ_ONLY_META.format(stem=""))))
    mtime = _mtime(post_path)
    with _LOCK:
        known = _READ_ONLY_FITS.get(str(post_path))
    if known is None or known[0] != mtime:
        parts = None
        if meta is not None:
            try:
                if mtime is None:
                    raise FileNotFoundError(f"{post_path.name} is missing")
                idata = read_netcdf(post_path)
                known_fields = set(Diagnostics.__dataclass_fields__)
                stored: dict[str, Any] = {k: (float("nan") if v is None else v)
                                          for k, v in meta["diagnostics"].items() if k in known_fields}
                diag = Diagnostics(**stored)
                timing = {**meta.get("timing", {}), "from_cache": True, "read_only": True}
                parts = (idata, diag, timing, FitSettings.from_dict(meta["settings"]))
            except Exception as exc:  # noqa: BLE001 — a broken shipped file only costs a head start
                _read_only_warning(post_path, f"{type(exc).__name__}: {exc}")
        with _LOCK:
            _READ_ONLY_FITS[str(post_path)] = known = (mtime or 0, parts)
    if known[1] is None:
        return None
    idata, diag, timing, settings = known[1]
    ensure_rater_deviation(idata, counts, settings.seed)
    return FitResult(idata=idata, diagnostics=diag, timing=dict(timing), settings=settings, counts=counts)


def write_read_only(fit: "FitResult", directory: str | os.PathLike, stem: str, *, keep_draws: int | None = None,
                    variables: Sequence[str] | None = None, reweighting_only: bool = False,
                    about: dict | None = None) -> Path:
    """Write ``fit`` as a read-only entry ``<stem>_fit.json`` + ``<stem>_posterior.nc`` in ``directory``
    (what :class:`FitCache` reads with ``read_only=[directory]``); returns the metadata's path.

    The posterior keeps ``variables`` (default: all) and every k-th draw so that chains × draws ≤
    ``keep_draws``; ``reweighting_only`` marks a posterior too thin to show; ``about`` (what it is,
    the dataset, ...) heads the metadata.
    """
    import arviz as az

    post = fit.idata.posterior  # type: ignore[attr-defined]  # InferenceData sets its groups at run time
    if variables is not None:
        post = post[[v for v in variables if v in post]]
    total = post.sizes["chain"] * post.sizes["draw"]
    step = max(1, -(-total // keep_draws)) if keep_draws else 1
    post = post.isel(draw=slice(None, None, step))
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    az.InferenceData(posterior=post).to_netcdf(str(directory / READ_ONLY_POSTERIOR.format(stem=stem)))
    meta = {
        **(about or {}),
        "data_hash": data_hash(fit.counts) or None,
        "data_key": data_key(fit.counts),
        "model_key": model_key(fit.counts, fit.settings),  # how FitCache finds it
        "reweighting_only": bool(reweighting_only),
        "settings": fit.settings.to_dict(),
        "diagnostics": fit.diagnostics.to_dict(),
        "timing": {k: (v if isinstance(v, str) else float(v)) for k, v in fit.timing.items() if k != "from_cache"},
        "thinning": {"every": step, "kept_draws": int(post.sizes["chain"] * post.sizes["draw"])},
    }
    meta_path = directory / READ_ONLY_META.format(stem=stem)
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return meta_path


def fit_cached(
    counts: CountsLike,
    settings: FitSettings,
    cache: FitCache | None = None,
    progress_callback: "ProgressCallback | None" = None,
) -> "FitResult":
    """The cached fit if there is one, else fit, store and return it.

    A fit loaded from the cache has ``timing["from_cache"] = True``.
    """
    from simplex_core.inference.fitting import fit_model

    cache = cache or FitCache()
    hit = cache.get(counts, settings)
    if hit is not None:
        if progress_callback is not None:
            progress_callback("loaded from the cache", 1.0)
        return hit
    fit = fit_model(counts, settings, progress_callback=progress_callback)
    cache.put(fit)  # a read-only or full disk keeps the fit in memory and warns
    return fit
