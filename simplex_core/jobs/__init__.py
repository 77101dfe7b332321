"""Fits run for a long-lived program (the app): the job book, the Dask dispatch, the status types.

* :mod:`.status` — priorities, :class:`JobStatus`, :class:`GroupProgress`, the progress shape;
* :mod:`.book` — :class:`JobBook`: queue, priorities, dedupe, supersede, owners (no processes);
* :mod:`.worker` — what runs on a Dask worker: :func:`run_fit`, the stores, the cancel flag;
* :mod:`.manager` — :class:`FitManager`: the book dispatched to a Dask cluster.
"""

from simplex_core.jobs.book import JobBook
from simplex_core.jobs.manager import FitManager, default_fit_workers
from simplex_core.jobs.status import BACKGROUND, FINAL_STATES, INTERACTIVE, GroupProgress, JobStatus, ProgressCallback, format_duration, progress_numbers
from simplex_core.jobs.worker import DEFAULT_FIT_FUNCTION, FitCacheStore, FitStore, JobKind, ResultFileStore

__all__ = ["BACKGROUND", "DEFAULT_FIT_FUNCTION", "FINAL_STATES", "INTERACTIVE", "FitCacheStore", "FitManager", "FitStore",
           "GroupProgress", "JobBook", "JobKind", "ResultFileStore", "JobStatus", "ProgressCallback", "default_fit_workers", "format_duration",
           "progress_numbers"]
