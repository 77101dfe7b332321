"""Shared test configuration: small shared fits live in tests/fixtures/ (compiled once per session)."""

import os

# Keep test fits and the app's on-disk cache out of the user's cache directory.
os.environ.setdefault("SIMPLEX_JUDGE_CACHE", os.path.join(os.path.dirname(__file__), "..", ".cache", "test-fits"))

pytest_plugins = ["tests.fixtures.fit_fixtures"]
