"""What runs on a Dask worker: one fit, its progress events, its cancel flag, saving it to the store.

:func:`run_fit` is the task the manager submits. It fits (``fit(counts, settings,
progress_callback=...)``, the function named ``"module:attribute"``), writes the result to the
store (the on-disk fit cache, which every worker and the app share) and returns ``(stored,
result)``: the manager keeps the last results in memory, so that the page that asked for a fit
shows it without reading it back from disk, and keeps a result the store could not keep (a
read-only cache folder). Progress goes to the
manager as worker events on a topic (``Worker.log_event``), throttled; a cancel arrives as a flag
set in the worker process by :func:`mark_cancelled` (run there by ``Client.run``) and stops the fit
at its next progress report. :func:`warm`, run on each worker at its start, also starts the fit
module's own warm-up (``warm_up_worker``: numba compiling the sampler on a new machine, which
nothing can interrupt); a fit that comes while it runs waits for it where a cancel can stop it.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from simplex_core.jobs.status import progress_numbers

#: The default fit function, as "module:attribute" (imported in the worker only).
DEFAULT_FIT_FUNCTION = "simplex_core.inference.fitting:fit_model"

# Progress events per second per job (the scheduler relays them; the pages redraw at most every second).
_PROGRESS_PER_SECOND = 4.0

#: The stage a fit reports while its worker's warm-up is still loading (or compiling) the sampler.
WARMING_UP = "loading the sampler's compiled code (compiled once per machine: about 20 s the first time)"

_CANCELLED: set[str] = set()
_CANCEL_LOCK = threading.Lock()
_NICED = [False]
_WARM_UPS: dict[str, threading.Event] = {}  # module of a fit function -> its warm-up's "ready for fits"
_WARM_LOCK = threading.Lock()
log = logging.getLogger(__name__)


class FitStore(Protocol):
    """Where finished fits live between processes and restarts (the on-disk fit cache).

    Implementations must be picklable: the workers receive the store and save into it.
    """

    def contains(self, counts: Any, settings: Any) -> bool:
        """Whether a finished fit of these counts and settings is stored."""

    def load(self, counts: Any, settings: Any) -> Any | None:
        """The stored fit result, or ``None``."""

    def save(self, counts: Any, settings: Any, result: Any) -> bool | None:
        """Store a finished fit (called on a worker). ``False`` = it could not be stored where other
        processes find it (the worker then returns the result itself)."""


@dataclass(frozen=True)
class FitCacheStore:
    """The project's on-disk fit cache (:class:`simplex_core.inference.fit_cache.FitCache`) as a :class:`FitStore`.

    ``directory=None`` uses the fit cache's default (``SIMPLEX_JUDGE_CACHE`` or
    ``~/.cache/simplex_judge``), read where the store is used, in each process. ``read_only``:
    folders of read-only fits searched after it (the app's: ``fit_cache.SHIPPED_DIR``).
    """

    directory: str | None = None
    read_only: tuple[str, ...] = ()

    def _cache(self) -> Any:
        from simplex_core.inference.fit_cache import FitCache

        return FitCache(self.directory, read_only=self.read_only)

    def contains(self, counts: Any, settings: Any) -> bool:
        return self._cache().contains(counts, settings)

    def load(self, counts: Any, settings: Any) -> Any | None:
        return self._cache().get(counts, settings)

    def posterior_file(self, counts: Any, settings: Any) -> Any | None:
        """The stored fit's NetCDF file, for readers of a few variables (:meth:`simplex_core.inference.fit_cache.FitCache.posterior_file`)."""
        return self._cache().posterior_file(counts, settings)

    def read_only_fits(self, counts: Any) -> list[Any]:
        """The read-only fits of these data (:meth:`simplex_core.inference.fit_cache.FitCache.read_only_fits`)."""
        return self._cache().read_only_fits(counts)

    def save(self, counts: Any, settings: Any, result: Any) -> bool:
        return self._cache().put(result).exists()  # a read-only folder keeps it in memory instead


@dataclass(frozen=True)
class ResultFileStore:
    """A :class:`FitStore` for the results of another model (small, picklable objects such as a ranking
    method's result): one file ``<directory>/<key>.pkl`` per fit, ``key`` = the function named by
    ``key_function`` (``"module:function"``, called with ``(counts, settings)``), written through a
    temporary file so a reader never sees half of one. ``directory=None``: ``results/`` in the fit
    cache's folder, read where the store is used. Only this program writes these files: they are
    read back with pickle, as trusted as the code."""

    key_function: str
    directory: str | None = None

    def _path(self, counts: Any, settings: Any) -> Any:
        from pathlib import Path

        if self.directory is None:
            from simplex_core.inference.fit_cache import default_cache_dir

            folder = Path(default_cache_dir()) / "results"
        else:
            folder = Path(self.directory)
        return folder / f"{resolve(self.key_function)(counts, settings)}.pkl"

    def contains(self, counts: Any, settings: Any) -> bool:
        return self._path(counts, settings).exists()

    def load(self, counts: Any, settings: Any) -> Any | None:
        import pickle

        path = self._path(counts, settings)
        try:
            with open(path, "rb") as fh:
                return pickle.load(fh)
        except FileNotFoundError:
            return None
        except Exception:  # noqa: BLE001 — a broken file is a miss (and is fitted again)
            log.warning("stored result %s unreadable; removed", path, exc_info=True)
            path.unlink(missing_ok=True)
            return None

    def save(self, counts: Any, settings: Any, result: Any) -> bool:
        import pickle
        import tempfile

        path = self._path(counts, settings)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.stem}.", delete=False) as fh:
                pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(fh.name, path)
            return True
        except OSError:
            log.warning("could not store result %s", path, exc_info=True)
            return False


@dataclass(frozen=True)
class JobKind:
    """A kind of fit the manager runs beside its default one (the simplex model's): the function a
    worker calls, ``fit(counts, settings, progress_callback=cb)`` (``"module:function"``), the store its
    results go to, and the function (``"module:function"``) that names one fit, ``key(counts, settings)``
    (the job book's key: one job per key, shared by every page that asks). ``counts`` and ``settings``
    are whatever that function reads (e.g. the ordinal model's long judgments and its settings)."""

    fit_function: str
    key_function: str
    store: Any


class FitCancelled(Exception):
    """Raised inside a fit whose job was cancelled (at its next progress report)."""


def resolve(path: str) -> Callable[..., Any]:
    """The object named ``"module:attribute.attribute"``."""
    module, _, attr = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def mark_cancelled(run: str) -> None:
    """Run in each worker process (``Client.run``): the fit run ``run`` (``"<job id>.<attempt>"``)
    stops at its next report."""
    with _CANCEL_LOCK:
        _CANCELLED.add(run)
        while len(_CANCELLED) > 1000:
            _CANCELLED.pop()


def _lower_priority(nice: int) -> None:
    """Once per worker process: fits and their imports must not starve the process that serves the
    pages. Linux keeps a niceness per thread (os.nice changes only the caller's; new threads inherit
    their creator's), so every thread of the process is lowered, and threads made later inherit it.
    (SCHED_IDLE was tried: the worker then starved while pages were busy in the tail of a fit, after
    its posterior was written and before the pages heard of it: stored → shown rose from 2.7–5.7 s
    to 6.8–13 s in bench.app_load.)"""
    if nice and not _NICED[0]:
        _NICED[0] = True
        try:
            tids = [int(t) for t in os.listdir("/proc/self/task")]
        except OSError:  # not Linux: the process-wide call is the right one there
            tids = [0]
        for tid in tids:
            try:
                os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
            except OSError:
                pass


def _warm_up(fit_function: str) -> threading.Event | None:
    """The event set when this process is ready for fits of ``fit_function``, whose module's
    ``warm_up_worker(ready)`` (if it has one: :func:`simplex_core.inference.fitting.warm_up_worker`) is
    started once per process, in a thread, on the first call. ``None``: nothing to wait for."""
    module = importlib.import_module(fit_function.partition(":")[0])
    hook = getattr(module, "warm_up_worker", None)
    if hook is None:
        return None
    with _WARM_LOCK:
        ready = _WARM_UPS.get(module.__name__)
        if ready is None:
            ready = _WARM_UPS[module.__name__] = threading.Event()

            def run() -> None:
                try:
                    hook(ready)
                except Exception:  # noqa: BLE001 — the fit, which then loads the code itself, reports it
                    log.warning("the fit worker's warm-up failed", exc_info=True)
                finally:
                    ready.set()

            threading.Thread(target=run, name="fit-warm-up", daemon=True).start()
    return ready


def warm(fit_function: str, nice: int = 0) -> str:
    """Run in each worker process at start (``Client.run``, on the worker's event loop, so it must
    return at once): import the fit's code (seconds of CPU, at the fits' lower priority) and start
    its warm-up in a thread (:func:`_warm_up`), so the first fit does not wait for either."""
    _lower_priority(nice)
    resolve(fit_function)
    _warm_up(fit_function)
    return fit_function


def _event(topic: str, msg: dict) -> None:
    from distributed import get_worker

    try:
        get_worker().log_event(topic, msg)
    except ValueError:  # not on a Dask worker (a direct call): nobody listens
        pass


def plain_failure(exc: BaseException) -> str:
    """A fit's exception in plain words, with what to do."""
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, MemoryError):
        return "The fit ran out of memory. Try fewer draws or chains, or collapse the scale to fewer levels."
    if isinstance(exc, ValueError):
        return f"The fit could not start: {text}"
    if isinstance(exc, (ImportError, AttributeError)):
        return (f"The fit worker could not load the model code ({type(exc).__name__}: {text}). "
                "The model may not be installed on the workers; try again later.")
    return (f"The fit failed ({type(exc).__name__}: {text.splitlines()[0]}). Try again; if it keeps "
            "failing, try other settings or report the problem.")


def run_fit(run: str, counts: Any, settings: Any, store: FitStore, fit_function: str, topic: str,
            nice: int = 0) -> Any:
    """The Dask task of one run of a fit (``run``: the job id and its attempt; a preempted job runs again
    under a new one): returns ``(whether the store kept the result, the result)``."""
    _lower_priority(nice)
    _event(topic, {"job": run, "kind": "started"})
    fit = resolve(fit_function)
    last = [0.0]

    def progress(message: str, fraction: float) -> None:
        if run in _CANCELLED:
            raise FitCancelled(run)
        nums = progress_numbers(message, fraction)
        now = time.monotonic()
        if nums is None or (nums[2] < 1.0 and now - last[0] < 1.0 / _PROGRESS_PER_SECOND):
            return
        last[0] = now
        done, total, frac, stage = nums
        _event(topic, {"job": run, "kind": "progress", "done": done, "total": total, "fraction": frac, "stage": stage})

    ready = _warm_up(fit_function)  # started by warm(); here too for a worker that did not run it
    if ready is not None and not ready.is_set():
        progress(WARMING_UP, 0.0)
        while not ready.wait(0.1):  # the warm-up cannot be interrupted; waiting for it can
            if run in _CANCELLED:
                raise FitCancelled(run)
    if run in _CANCELLED:
        raise FitCancelled(run)
    result = fit(counts, settings, progress_callback=progress)
    _event(topic, {"job": run, "kind": "saving"})
    stored = store.save(counts, settings, result) is not False
    # handed over either way: reading a fit back from disk took 0.1-0.3 s of the page's own thread
    # when a slider landed on a setting just fitted; not stored, it would be lost
    return stored, result
