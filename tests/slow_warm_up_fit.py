"""A stand-in fit whose worker warm-up takes long, as numba's compilation does on a new machine
(imported by name on the Dask workers of ``tests/test_fit_jobs.py``)."""

from __future__ import annotations

import os
import threading
from typing import Any

#: Seconds the warm-up holds the worker's "ready for fits" back (it ends sooner if the process does).
WARM_UP_SECONDS = 90.0

_NEVER = threading.Event()


def warm_up_worker(ready: threading.Event) -> None:
    """Not ready for fits for :data:`WARM_UP_SECONDS`, and nothing can interrupt it."""
    _NEVER.wait(WARM_UP_SECONDS)


def fit(counts: Any, settings: Any, progress_callback=None) -> dict:
    return {"pid": os.getpid()}
