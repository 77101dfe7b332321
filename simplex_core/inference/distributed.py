"""Independent fits of a study dispatched through ``dask.distributed``.

This module owns how a study (``evaluate``, ``experiment``, ``sensitivity``, ``calibrate``) runs its
independent fits: :func:`open_client` gives a Dask client, either on a ``LocalCluster`` sized to
the machine (one single-threaded worker process per core: a fit is CPU-bound Python/numba, and
separate processes keep the compiled-model caches apart) or on an existing cluster at
``tcp://HOST:PORT`` (:func:`start_client` for a long-lived client: the app's fit manager,
:mod:`simplex_core.jobs`); :func:`map_tasks` runs ``fn(item)`` for every item and returns the results in
input order, calling ``progress`` once per finished task. Without a client it runs the tasks one
after another in this process (the app and library callers that want no cluster).

Results do not depend on where a task ran: every fit takes its seed from its settings, never from
the scheduling, so a distributed run equals a serial one (``tests/test_distributed.py``).

Workers of an existing cluster must be able to import ``simplex_core`` (same version) and, with a
fit cache, see its folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from typing import Any, Callable, Iterator, Sequence, TypeVar

__all__ = ["default_workers", "start_client", "check_cluster", "open_client", "map_tasks", "describe"]

T = TypeVar("T")
R = TypeVar("R")

#: Tries to start a LocalCluster before giving up (see start_client).
START_ATTEMPTS = 2
_IMPORT_LOCK = threading.Lock()

#: ``progress(message)``: one line per finished task.
TaskProgress = Callable[[str], None]


def default_workers() -> int:
    """Worker processes of the default ``LocalCluster``: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def start_client(scheduler: str | None = None, n_workers: int | None = None,
                 config: dict[str, Any] | None = None) -> tuple[Any, Any]:
    """``(client, cluster)``: a client of the existing cluster at ``scheduler`` (``cluster`` is
    ``None``), or of a new ``LocalCluster`` of ``n_workers`` single-threaded processes (default
    :func:`default_workers`). The caller closes both. ``config`` is Dask configuration the new
    cluster's scheduler is started with (e.g. ``{"distributed.scheduler.allowed-failures": 0}``).

    Raises
    ------
    ValueError
        When the scheduler cannot be reached (naming the address), or ``n_workers < 1``.
    """
    with _IMPORT_LOCK:  # two threads importing Dask for the first time at once can half-initialise it
        import dask
        from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise ValueError(f"cannot reach the Dask scheduler at {scheduler}: {exc}. Start one with "
                             "`dask scheduler` (and `dask worker ADDRESS` on each machine), or give no scheduler "
                             "to use this machine.") from None
        try:
            check_cluster(client, scheduler)
        except BaseException:
            client.close()
            raise
        return client, None
    n = default_workers() if n_workers is None else int(n_workers)
    if n < 1:
        raise ValueError(f"a local cluster needs at least 1 worker; got {n}.")
    # The scheduler's HTTP server (dashboard, health checks) on a free port: two studies at once, or
    # another Dask program, would otherwise clash on 8787. Worker warnings and errors at shutdown (a
    # worker still inside a compiled sampler gets killed; a worker's heartbeat caught by the
    # scheduler's close logs "Failed to communicate with scheduler" with a traceback, seen after a
    # 200-replicate `calibrate`, dask/distributed#9032) are not the user's business: a task's own
    # error and a lost worker reach the client as exceptions.
    # On a busy machine (measured: the test suite beside a browser) starting the worker processes can
    # overrun distributed's start-up waits; the start is then cancelled inside distributed.utils.sync,
    # which surfaces as "cannot access local variable 'result'". Longer waits and a second attempt.
    settings = {"distributed.comm.timeouts.connect": "90s", **(config or {})}
    for attempt in range(START_ATTEMPTS):
        cluster = None
        try:
            with dask.config.set(settings):
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       silence_logs=logging.CRITICAL)
                return Client(cluster, timeout="90s"), cluster
        except (Exception, asyncio.CancelledError):
            if cluster is not None:
                try:
                    cluster.close()
                except Exception:  # noqa: BLE001 — a half-started cluster may not close cleanly
                    pass
            if attempt + 1 == START_ATTEMPTS:
                raise
            time.sleep(2.0)
    raise AssertionError("unreachable")


#: Seconds an existing cluster may take to show its first worker before a study gives up on it.
WORKER_WAIT_S = 30.0
_CLUSTER_SETUP = ("start the scheduler and every worker where `import simplex_core` works (from the project folder "
                  "with PYTHONPATH set to it, e.g. `PYTHONPATH=$PWD .venv/bin/dask worker ADDRESS`, or with the "
                  "package installed), or give no scheduler to use this machine.")


def check_cluster(client: Any, address: str, wait_s: float | None = None) -> None:
    """Refuse an existing cluster that cannot run a study, before any task is sent: no worker within
    ``wait_s`` seconds (default :data:`WORKER_WAIT_S`), or a scheduler or worker that cannot import
    ``simplex_core`` (the tasks would otherwise wait for ever, or fail as an unreadable
    "deserialization" traceback; both measured).

    Raises
    ------
    ValueError
        Naming the address, the process at fault and what to do.
    """
    def probe() -> str:  # nested, so it travels by value to processes that cannot import this module
        try:
            import simplex_core  # noqa: F401
        except Exception as exc:  # noqa: BLE001 — the words go back to the caller
            return f"{type(exc).__name__}: {exc}"
        return ""

    wait_s = WORKER_WAIT_S if wait_s is None else wait_s
    try:
        client.wait_for_workers(1, timeout=wait_s)
    except (TimeoutError, asyncio.TimeoutError):
        raise ValueError(f"the Dask scheduler at {address} has no worker (waited {wait_s:g} s): start one with "
                         f"`dask worker {address}`; " + _CLUSTER_SETUP) from None
    problems = []
    try:
        on_scheduler = client.run_on_scheduler(probe)
    except Exception as exc:  # noqa: BLE001 — a scheduler that cannot even run the probe
        on_scheduler = f"{type(exc).__name__}: {exc}"
    if on_scheduler:
        problems.append(f"the scheduler cannot import simplex_core ({on_scheduler})")
    for worker, outcome in sorted(client.run(probe, on_error="return").items()):
        if isinstance(outcome, BaseException):
            outcome = f"{type(outcome).__name__}: {outcome}"
        if outcome:
            problems.append(f"worker {worker} cannot import simplex_core ({outcome})")
    if problems:
        more = f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        raise ValueError(f"the Dask cluster at {address} cannot run these fits: {'; '.join(problems[:3])}{more}. "
                         + _CLUSTER_SETUP[0].upper() + _CLUSTER_SETUP[1:])


@contextlib.contextmanager
def open_client(scheduler: str | None = None, n_workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` (:func:`start_client`): on an existing cluster at ``scheduler``
    (e.g. ``tcp://10.0.0.5:8786``), or on a new ``LocalCluster``, closed on exit."""
    client, cluster = start_client(scheduler, n_workers)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def describe(client: Any) -> str:
    """Plain words for the log: where the tasks run."""
    if client is None:
        return "in this process, one after another"
    workers = client.scheduler_info().get("workers", {})
    threads = sum(w.get("nthreads", 1) for w in workers.values())
    return f"on Dask ({client.scheduler.address}): {len(workers)} worker(s), {threads} thread(s)"


def map_tasks(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    client: Any = None,
    labels: Sequence[str] | None = None,
    progress: TaskProgress | None = None,
    on_result: Callable[[int, R], None] | None = None,
) -> list[R]:
    """``[fn(item) for item in items]``, on the client's workers when a client is given.

    Parameters
    ----------
    fn
        A module-level function (workers import it by name).
    items
        Its arguments, one task each.
    client
        A ``distributed.Client`` (from :func:`open_client`), or None to run here, in order.
    labels
        Plain-words names of the tasks for progress and errors (default ``task N``).
    progress
        Called with ``"N of M done: LABEL"`` after each task finishes.
    on_result
        Called with ``(index, result)`` after each task finishes (in completion order).

    Returns
    -------
    list
        The results in the order of ``items``, whatever order the tasks finished in.

    Raises
    ------
    Exception
        The first task's error, with a note naming the task; the other tasks are cancelled.
    """
    items = list(items)
    names = list(labels) if labels is not None else [f"task {i + 1}" for i in range(len(items))]
    if len(names) != len(items):
        raise ValueError(f"{len(names)} labels for {len(items)} tasks.")
    results: list[Any] = [None] * len(items)

    def finished(i: int, result: Any, done: int) -> None:
        results[i] = result
        if on_result is not None:
            on_result(i, result)
        if progress is not None:
            progress(f"{done} of {len(items)} done: {names[i]}")

    if client is None:
        for i, item in enumerate(items):
            try:
                result = fn(item)
            except Exception as err:
                err.add_note(f"(in {names[i]})")
                raise
            finished(i, result, i + 1)
        return results

    from distributed import as_completed

    futures = client.map(fn, items, pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    try:
        for done, future in enumerate(as_completed(futures), start=1):
            i = index[future.key]
            try:
                result = future.result()
            except Exception as err:
                err.add_note(f"(in {names[i]}, on a Dask worker)")
                raise
            finished(i, result, done)
    except BaseException:
        client.cancel(futures)
        raise
    return results
