"""Shared test configuration: small shared fits live in tests/fixtures/ (compiled once per session)."""

import os

# Keep test fits and the app's on-disk cache out of the user's cache directory; with pytest-xdist
# each worker process has a cache of its own (a cache sweeps leftover temporary folders when it
# starts, which must not be another worker's save in progress).
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
os.environ.setdefault("SIMPLEX_JUDGE_CACHE",
                      os.path.join(os.path.dirname(__file__), "..", ".cache", "test-fits" + (f"-{_worker}" if _worker else "")))

pytest_plugins = ["tests.fixtures.fit_fixtures"]
