"""One identity per fit: the keys the fit cache, the job book and the shipped default share."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd

from simplex_core.inference import fit_identity as fid
from simplex_core.data.views import count_tensor
from simplex_core.data.table import load_table
from simplex_core.data.gold import mark_gold
from simplex_core.model.settings import FitSettings


def _table(flip: bool = False):
    rows = []
    for i in range(4):
        for c in ("a", "b"):
            for j in ("x", "y"):
                score = (i + (j == "x")) % 2
                if flip and c == "a" and i in (0, 1):  # (1, 0), (0, 1) become (1, 1), (0, 0): same counts
                    score = 1 - i
                rows.append({"item": f"q{i}", "candidate": c, "judge": j, "score": score, "true_score": 1})
    return load_table(pd.DataFrame(rows))


def test_equal_counts_with_other_patterns_or_gold_are_other_shared_truth_fits_but_one_per_judge_fit():
    base, flipped = count_tensor(_table()), count_tensor(_table(flip=True))
    np.testing.assert_array_equal(base.N, flipped.N)  # the construction keeps the counts
    assert fid.counts_hash(base) == fid.counts_hash(flipped)
    gold = count_tensor(mark_gold(_table(), [("q0", "a")]))
    shared, per_judge = FitSettings(), FitSettings(likelihood="per-judge")
    keys = {fid.fit_key(c, shared) for c in (base, flipped, gold)}
    assert len(keys) == 3
    assert len({fid.fit_key(c, per_judge) for c in (base, flipped)}) == 1
    assert fid.data_key(base) != fid.data_key(flipped)


def test_the_fit_key_covers_every_setting_and_the_model_key_only_the_model():
    counts = count_tensor(_table())
    s = FitSettings()
    assert fid.fit_key(counts, s) == fid.fit_key(count_tensor(_table()), FitSettings())  # stable
    assert fid.fit_key(counts, s) != fid.fit_key(counts, s.replace(draws=2000))
    assert fid.model_key(counts, s) == fid.model_key(counts, s.replace(draws=2000, seed=5, chains=2))
    assert fid.model_key(counts, s) != fid.model_key(counts, s.replace(omega=1.0))
    assert len(fid.fit_key(counts, s)) == 32 and len(fid.data_key(counts)) == 24


def test_data_hash_is_the_tables_and_empty_for_hand_built_counts():
    table = _table()
    counts = count_tensor(table)
    assert fid.data_hash(counts) == table.data_hash()
    from types import SimpleNamespace

    assert fid.data_hash(SimpleNamespace(**{k: getattr(counts, k) for k in ("N", "included")})) == ""


def test_the_shipped_default_fit_is_found_by_its_model_key():
    from simplex_core.data import datasets
    from simplex_core.inference.fit_cache import READ_ONLY_META, SHIPPED_DIR

    meta = json.loads((SHIPPED_DIR / READ_ONLY_META.format(stem="default")).read_text())
    counts = count_tensor(datasets.load_dataset(meta["dataset"]))
    app_default = FitSettings(draws=1000, tune=1000, chains=2)  # other sampler sizes than the shipped fit
    assert meta["model_key"] == fid.model_key(counts, app_default)
    assert meta["data_key"] == fid.data_key(counts)


def test_identity_imports_nothing_of_the_caches_jobs_or_app():
    code = ("import sys, simplex_core.inference.fit_identity; "
            "print(sorted(m for m in sys.modules if m.startswith(('simplex_core', 'app_support', 'streamlit'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # its package's __init__ is a docstring: it loads nothing more
    assert eval(out) == ["simplex_core", "simplex_core.inference", "simplex_core.inference.fit_identity"]


def test_identity_model_fields_are_the_models_own():
    from simplex_core.inference import fit_identity
    from simplex_core.model import settings as model

    assert fit_identity.MODEL_FIELDS == model.MODEL_FIELDS + model.DATA_VIEW_FIELDS
