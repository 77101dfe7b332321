"""Where the files the core ships are found: ``simplex_core/assets``, which in a checkout is a link to the
repository's ``assets/`` folder and in an installed package its copy (package data, see pyproject.toml),
so the core runs installed as it runs from a checkout. The built-in datasets are in
:data:`DATASETS_DIR`, the precomputed fits in :data:`PRECOMPUTED_DIR`."""

from __future__ import annotations

from pathlib import Path

ASSETS_DIR = (Path(__file__).resolve().parents[1] / "assets").resolve()
DATASETS_DIR = ASSETS_DIR / "datasets"
PRECOMPUTED_DIR = ASSETS_DIR / "precomputed"
