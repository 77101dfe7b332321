"""The code passes the linter configured in pyproject.toml (ruff: pyflakes' unused and undefined
names and imports, syntax errors), so a name left behind by a change fails the suite, not a reader."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _ruff() -> list[str]:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("ruff is not installed in this environment (requirements-test.txt pins it)")
    return [exe]


def test_the_tree_passes_ruff():
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "."], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_finds_an_unused_import(tmp_path):
    """The rules are live: a file with an unused import fails them."""
    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text("import os\n")
    done = subprocess.run([*_ruff(), "check", "--no-cache", "bad.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and "F401" in done.stdout
