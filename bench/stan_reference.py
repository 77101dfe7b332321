"""The Stan reference fit for the speed benchmark (the paper's engine), run through pystan.

pystan lives only in ``bench/.venv-stan`` (``bench/requirements-stan.txt``; never in the app's
requirements). This file has two halves:

* imported from the project's venv (``bench/speed.py``): :func:`stan_data` turns the counts and
  fit settings into the data of ``bench/stan/simplex_judge.stan``, and :func:`run_stan` runs this
  file as a script under the Stan venv in a child process and returns the draws and timings;
* run as a script under ``bench/.venv-stan/bin/python``: read the data JSON, compile (httpstan caches
  the compiled program on disk; ``--cold`` points the cache at an empty folder), sample, and write
  ``expected_score`` draws ``[chains, draws, K]``, divergences and timings to an ``.npz``.

Setup::

    python3 -m venv bench/.venv-stan
    bench/.venv-stan/bin/pip install -r bench/requirements-stan.txt

httpstan compiles with the system C++ compiler (g++), and writes a ``build/`` folder in the working
directory: the child runs with ``bench/`` as its working directory (``bench/build/`` is git-ignored)
in its own process group, which is killed if the parent stops early, so no Stan worker outlives it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
STAN_PROGRAM = BENCH_DIR / "stan" / "simplex_judge.stan"
STAN_PYTHON = BENCH_DIR / ".venv-stan" / "bin" / "python"


# -- project side (imported from the project's venv) ----------------------------------------------

def stan_available() -> tuple[bool, str]:
    """Whether the Stan venv exists and imports pystan; otherwise why not."""
    if not STAN_PYTHON.exists():
        return False, (f"{STAN_PYTHON} does not exist: python3 -m venv bench/.venv-stan && "
                       "bench/.venv-stan/bin/pip install -r bench/requirements-stan.txt")
    probe = subprocess.run([str(STAN_PYTHON), "-c", "import stan, httpstan; print(stan.__version__ if hasattr(stan, '__version__') else 'ok')"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return False, "pystan does not import in bench/.venv-stan: " + probe.stderr.strip().splitlines()[-1]
    return True, "ok"


def stan_data(counts, settings) -> dict:
    """Data of ``simplex_judge.stan`` for a :class:`simplex_core.data.views.Counts` and ``FitSettings``.

    Only the weight-propagation prior with fixed ω and β_max (not integrated mode) is programmed.
    """
    from simplex_core.model.definition import included_pairs
    from simplex_core.model.priors import parse_delta

    if settings.prior != "weight-propagation" or settings.integrated:
        raise ValueError("the Stan reference implements the weight-propagation prior with fixed omega and beta_max only.")
    scale = counts.scale
    N = np.asarray(counts.N, dtype=np.int64)
    J, K, M = N.shape
    jj, kk = included_pairs(counts)
    T = scale.n_true
    use_re = settings.omega > 0
    return {
        "J": J, "K": K, "M": M, "T": T, "P": int(len(jj)),
        "pair_j": (jj + 1).tolist(), "pair_k": (kk + 1).tolist(),
        "counts": N[jj, kk].tolist(),
        "true_values": [float(v) for v in scale.true_values],
        "correct": [int(i) + 1 for i in scale.true_index],
        "beta_max": float(settings.beta_max),
        "omega": float(settings.omega),
        "delta": [float(x) for x in parse_delta(settings.delta, T)],
        "use_re": int(use_re),
    }


def run_stan(counts, settings, *, cold: bool = False, timeout: float | None = None) -> dict:
    """Fit the Stan program in a child process under the Stan venv.

    Parameters
    ----------
    counts, settings
        As for :func:`simplex_core.inference.fitting.fit_model` (chains, draws, tune, seed are used).
    cold
        Compile into an empty httpstan cache (the cold compile figure).
    timeout
        Seconds before the child (and its Stan workers) are killed; the result then says so.

    Returns
    -------
    dict
        ``expected_score`` ``[chains, draws, K]``, ``divergences``, ``compile_s``, ``sample_s``,
        ``timed_out`` (bool).
    """
    ok, why = stan_available()
    if not ok:
        raise RuntimeError(why)
    with tempfile.TemporaryDirectory(prefix="stanref-") as tmp:
        data_path = Path(tmp) / "data.json"
        out_path = Path(tmp) / "out.npz"
        data_path.write_text(json.dumps({
            "data": stan_data(counts, settings),
            "chains": settings.chains, "draws": settings.draws, "tune": settings.tune,
            "seed": settings.seed, "target_accept": settings.target_accept,
        }))
        env = dict(os.environ)
        if cold:
            env["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        proc = subprocess.Popen([str(STAN_PYTHON), str(Path(__file__).resolve()), str(data_path), str(out_path)],
                                cwd=BENCH_DIR, env=env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {"timed_out": True}
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        finally:
            try:  # any Stan worker left in the group
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if proc.returncode != 0:
            raise RuntimeError(f"Stan run failed (exit {proc.returncode}):\n{stderr[-3000:]}")
        out = np.load(out_path)
        return {
            "expected_score": out["expected_score"],
            "divergences": int(out["divergences"]),
            "compile_s": float(out["compile_s"]),
            "sample_s": float(out["sample_s"]),
            "timed_out": False,
        }


# -- Stan side (run under bench/.venv-stan/bin/python) --------------------------------------------

def _main(data_path: str, out_path: str) -> None:
    import stan  # noqa: PLC0415  (only in the Stan venv)

    spec = json.loads(Path(data_path).read_text())
    program = STAN_PROGRAM.read_text()
    t0 = time.perf_counter()
    model = stan.build(program, data=spec["data"], random_seed=int(spec["seed"]) + 1)
    t1 = time.perf_counter()
    fit = model.sample(num_chains=int(spec["chains"]), num_samples=int(spec["draws"]),
                       num_warmup=int(spec["tune"]), delta=float(spec["target_accept"]))
    t2 = time.perf_counter()
    es = np.asarray(fit["expected_score"])  # [K, draws * chains]: index = draw * chains + chain
    K = es.shape[0]
    chains, draws = int(spec["chains"]), int(spec["draws"])
    es = es.reshape(K, draws, chains).transpose(2, 1, 0)  # [chains, draws, K]
    div = int(np.asarray(fit["divergent__"]).sum())
    np.savez(out_path, expected_score=es, divergences=div, compile_s=t1 - t0, sample_s=t2 - t1)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: stan_reference.py DATA.json OUT.npz   (run under bench/.venv-stan/bin/python)")
    _main(sys.argv[1], sys.argv[2])
