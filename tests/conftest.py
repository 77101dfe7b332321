"""Shared test configuration: small shared fits live in tests/fixtures/ (compiled once per session)."""

import os

# Keep test fits and the app's on-disk cache out of the user's cache directory; with pytest-xdist
# each worker process has a cache of its own (a cache sweeps leftover temporary folders when it
# starts, which must not be another worker's save in progress).
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
os.environ.setdefault("SIMPLEX_JUDGE_CACHE",
                      os.path.join(os.path.dirname(__file__), "..", ".cache", "test-fits" + (f"-{_worker}" if _worker else "")))

pytest_plugins = ["tests.fixtures.fit_fixtures"]

# Property tests check behaviour, not speed (speed is bench/'s): Hypothesis's default 200 ms deadline
# per example failed a projection test whose first call took 396 ms on a loaded 2-core machine.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("simplex-judge", deadline=None)
_hypothesis_settings.load_profile("simplex-judge")
