"""Making the fast engine's numba code ready: a fit worker's warm-up (:func:`warm_up_worker`), one
process compiling at a time (a file lock), and a fit waiting for the tempered sampler's kernels while a
warm-up compiles them (:func:`tempering_kernels_ready`)."""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from simplex_core.inference.fit_result import ProgressCallback
from simplex_core.inference.sampling import report_progress


log = logging.getLogger(__name__)


FAST_LOADED = threading.Event()
_TEMPERING_WARMING = threading.Event()  # a worker's warm-up is loading (or compiling) the tempered sampler's kernels
_TEMPERING_LOADED = threading.Event()


@contextmanager
def _one_compiler_at_a_time(stage: str) -> Iterator[None]:
    """Held while a process loads or compiles one stage of the numba code: the fit workers start
    together, and two compiling the same code at once on a new machine take twice the CPU (about
    40 s each here) for nothing; the second waits and then loads what the first wrote to numba's
    on-disk cache, in about a second. The lock is a file lock (``fcntl.flock``), released by the
    kernel when a holder dies; without ``fcntl`` (not POSIX) there is no lock."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    import hashlib
    import tempfile

    where = hashlib.sha1(str(Path(__file__).resolve().parent).encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"simplex-judge-numba-{where}-{stage}.lock"
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_COMPILE_TEMPERING = ("import os\ntry:\n    os.setpriority(os.PRIO_PROCESS, 0, 19)\nexcept (AttributeError, OSError):\n"
                      "    pass\nfrom simplex_core.model import fast_density\nfast_density.warm_up_tempering()\n")


def warm_up_worker(ready: threading.Event) -> None:
    """The fit workers' warm-up (:mod:`simplex_core.jobs.worker` runs it in a thread at a worker's
    start): make the fast engine's numba code ready before a fit asks for it, and set ``ready`` as
    soon as fits can start; the tempered sampler's kernels follow, compiled in a child process.

    Why: loading takes about a second, but on a new machine (or a new clone: numba caches next to
    the code) the first fit compiled for about 20 s, and the first tempered fit 17 s more, inside
    the fit, where a cancel cannot reach (it is checked at progress reports). A background grid fit
    caught compiling when a visitor asked for a setting could not give way: its worker was
    restarted and the new one compiled again (an off-grid link on a new clone: 54 s to the fit).
    Done here, the compilation starts when the server does, the worker waits for it cancellably
    (:func:`simplex_core.jobs.worker.run_fit`), and one process compiles while the others wait to
    load its result (:func:`_one_compiler_at_a_time`).

    The tempered kernels compile in a child process, not in this thread: numba compiles under one
    lock per process, which ArviZ's import also takes (its numba ufuncs), so a fit that started
    while this thread compiled them waited 20 s for ``import arviz``."""
    with _one_compiler_at_a_time("density"):
        import arviz  # noqa: F401  (its import compiles numba ufuncs, under numba's lock)

        from simplex_core.model import fast_density

        fast_density.warm_up()
    FAST_LOADED.set()
    ready.set()
    _TEMPERING_WARMING.set()
    try:
        with _one_compiler_at_a_time("tempering"):
            import subprocess
            import sys

            # cached: about a second of the child's imports; not: the compilation. At the lowest
            # priority, so that it takes what the fits leave of the CPU
            done = subprocess.run([sys.executable, "-c", _COMPILE_TEMPERING], cwd=Path(__file__).resolve().parents[2],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=900)
            if done.returncode:
                log.warning("compiling the tempered sampler's kernels failed: %s", done.stderr.strip()[-2000:])
    finally:
        _TEMPERING_LOADED.set()


def tempering_kernels_ready(cb: ProgressCallback | None) -> None:
    """Make the tempered sampler's kernels ready in this process. While a worker's warm-up is
    compiling them, wait with a progress report every half second (where a cancel can stop the
    fit) instead of compiling them a second time, then load them from numba's cache."""
    from simplex_core.model import fast_density

    if _TEMPERING_WARMING.is_set():
        while not _TEMPERING_LOADED.wait(0.5):
            report_progress(cb, "loading the tempered sampler's compiled code (compiled once per machine: about 20 s the "
                        "first time)", 0.30)
    fast_density.warm_up_tempering()  # loads (or compiles, once per machine) on first use; at once if warm

