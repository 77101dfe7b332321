"""The script a fit worker's warm-up runs in a child process to compile the tempered sampler's
kernels works as it is written: a failure there is only logged (the first tempered fit then compiles
inside the fit, where a cancel cannot reach), so nothing else would notice a broken import in it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from simplex_core.inference.warm_up import _COMPILE_TEMPERING

REPO = Path(__file__).resolve().parent.parent


def test_the_tempering_warm_up_script_runs():
    done = subprocess.run([sys.executable, "-c", _COMPILE_TEMPERING], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
