"""PNG/SVG export of figures (the optional ``kaleido`` dependency driving Debian's Chromium).

The test requirements install ``kaleido`` and CI installs Chromium, so these run there; on a machine
without either they skip, saying which is missing (the app then offers interactive HTML only).
"""

from __future__ import annotations

import importlib.util
import shutil
import struct

import numpy as np
import pandas as pd
import pytest

from simplex_core import figures as F

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("kaleido") is None,
                       reason="the optional kaleido package is not installed (pip install -r requirements-export.txt)"),
    pytest.mark.skipif(shutil.which("chromium") is None, reason="no Chromium on PATH (apt-get install chromium)"),
]

LEVELS = ["incorrect", "partial", "correct"]


@pytest.fixture(scope="module")
def ternary():
    rng = np.random.default_rng(3)
    counts = pd.DataFrame([[20, 10, 70], [50, 30, 20], [10, 60, 30]], index=["a", "b", "c"], columns=LEVELS)
    base = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]])
    draws = np.stack([[rng.dirichlet(50 * row) for row in base] for _ in range(10)])
    observed = counts.div(counts.sum(axis=1), axis=0)
    return F.ternary_judge_figure(observed, LEVELS, draws, draws.mean(axis=0), counts=counts, judge="j")


def test_the_app_offers_static_export_here():
    from app_support.downloads import static_export_available

    static_export_available.cache_clear()
    assert static_export_available()


def test_a_ternary_figure_exports_as_png_of_the_requested_size(ternary):
    png = ternary.to_image(format="png", width=700, height=500, scale=2)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert (width, height) == (1400, 1000)


def test_a_ternary_figure_exports_as_svg_with_its_level_labels(ternary):
    svg = ternary.to_image(format="svg").decode()
    assert svg.lstrip().startswith("<svg")
    for label in LEVELS:
        assert label in svg
