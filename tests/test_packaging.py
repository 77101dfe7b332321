"""The core installs as a package: pyproject.toml's discovery finds every subpackage, the files the core
reads (built-in datasets, precomputed fits) ship as package data, and the core finds them through the
package, not through a path relative to a checkout."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

from setuptools import find_packages

REPO = Path(__file__).resolve().parent.parent
CORE = REPO / "simplex_core"


def _setuptools_config() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_package_discovery_finds_every_subpackage():
    include = _setuptools_config()["packages"]["find"]["include"]
    found = set(find_packages(where=str(REPO), include=include))
    on_disk = {"simplex_core"} | {"simplex_core." + p.parent.relative_to(CORE).as_posix().replace("/", ".")
                                  for p in CORE.rglob("__init__.py") if p.parent != CORE}
    assert found == on_disk
    assert "simplex_core.jobs" in found  # once left out of the listing


def test_every_asset_the_core_reads_ships_as_package_data():
    from simplex_core.data.assets import ASSETS_DIR, DATASETS_DIR, PRECOMPUTED_DIR

    patterns = _setuptools_config()["package-data"]["simplex_core"]
    assert (CORE / "assets").resolve() == ASSETS_DIR == (REPO / "assets").resolve()
    shipped = [p for folder in (DATASETS_DIR, PRECOMPUTED_DIR) for p in folder.rglob("*") if p.is_file()]
    assert len(shipped) > 10 and any(p.suffix == ".nc" for p in shipped)
    for path in shipped:
        name = "assets/" + path.relative_to(ASSETS_DIR).as_posix()
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), f"{name} is not package data"
    assert not any(fnmatch.fnmatch("assets/favicon.png", pattern) for pattern in patterns)  # the app's, not the core's


def test_the_core_finds_its_assets_only_through_the_package():
    from simplex_core.data import datasets
    from simplex_core.inference.fit_cache import SHIPPED_DIR

    assert datasets.DATASETS_DIR.is_dir() and SHIPPED_DIR.is_dir()
    reaching_out = [p.relative_to(CORE).as_posix() for p in CORE.rglob("*.py")
                    if '"assets"' in p.read_text() and p.name != "assets.py"]
    assert not reaching_out, f"modules locating assets/ themselves: {reaching_out}"
