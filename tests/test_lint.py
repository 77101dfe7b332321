"""The code passes the linter and the type checker configured in pyproject.toml (ruff: pyflakes' unused
and undefined names and imports, syntax errors; mypy on the core), so a name left behind or a value of
the wrong type fails the suite, not a reader."""

from __future__ import annotations

import os
import re
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


def _mypy() -> list[str]:
    exe = shutil.which("mypy", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("mypy is not installed in this environment (requirements-test.txt pins it)")
    # no cache: every run checks the code as it is now (about 20 s)
    return [exe, "--cache-dir", os.devnull]


def test_the_core_passes_mypy():
    done = subprocess.run(_mypy(), cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_a_type_error_in_an_unannotated_function(tmp_path):
    """The settings are live: the core's package is checked, and so are the bodies of functions
    without annotations (check_untyped_defs)."""
    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    (tmp_path / "simplex_core").mkdir()
    (tmp_path / "simplex_core" / "__init__.py").write_text("")
    (tmp_path / "simplex_core" / "bad.py").write_text("def f():\n    return len(3)\n")
    done = subprocess.run(_mypy(), cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and "bad.py:2" in done.stdout and "[arg-type]" in done.stdout, done.stdout + done.stderr


TRACKER_NUMBER = re.compile(r"\b[Ii]ssues? #?\d+")


def tracker_numbers(root: Path) -> list[str]:
    """``path:line: text`` of every line of the code (core, app, tests, bench, scripts) that names a tracker
    number: comments and docstrings say why, the tracker says when."""
    files = [root / "app.py", root / "serve.py"]
    for folder in ("simplex_core", "app_support", "pages", "tests", "bench", "scripts"):
        files += sorted((root / folder).rglob("*.py"))
    found = []
    for path in files:
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if TRACKER_NUMBER.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def test_the_code_names_no_tracker_number():
    assert tracker_numbers(REPO) == []


def test_a_tracker_number_in_a_comment_is_found(tmp_path):
    (tmp_path / "bench").mkdir()
    numbered = "x = 1  # slow before (" + "issue " + "13)"  # in parts, so this file names no number itself
    (tmp_path / "bench" / "x.py").write_text(numbered + "\ny = 2  # an issue of scale\n")
    assert tracker_numbers(tmp_path) == [f"bench/x.py:1: {numbered}"]
