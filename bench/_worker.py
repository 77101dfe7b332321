"""Child process of the bench scripts: fit one case with one engine, several seeds, in a fresh process.

Run as ``python -m bench._worker SPEC.json OUT.npz``; SPEC holds ``case``, ``engine``, ``data_seed``,
``chains``, ``draws``, ``tune``, ``seeds`` and optional ``omega``/``beta_max`` overrides (a list,
one per seed: the refit benchmark changes them between fits). Writes the E_k draws of every fit
(``es_<i>`` ``[chains, draws, K]``) and a JSON ``runs`` list with ``compile_s``, ``sample_s``,
``wall_s`` (the whole ``fit_model`` call), ``divergences`` and ``reused``; ``process_start_s`` is
the time from the process start to the first fit's start (imports and data).

A fresh process per (case, engine) is the point: it shows what a new app process pays (compile
times with or without filled on-disk caches, whatever ``PYTENSOR_FLAGS``/``NUMBA_CACHE_DIR`` say).
"""

from __future__ import annotations

import json
import sys
import time

T_START = time.perf_counter()


def main(spec_path: str, out_path: str) -> None:
    import numpy as np

    from bench.cases import make_case
    from simplex_core.inference.fitting import fit_model

    spec = json.loads(open(spec_path).read())
    engine = spec["engine"]
    case = make_case(spec["case"], seed=spec["data_seed"], chains=spec["chains"], draws=spec["draws"],
                     tune=spec["tune"], engine=engine)
    overrides = spec.get("overrides") or [{}] * len(spec["seeds"])
    runs, arrays = [], {}
    first_start = None
    for i, (seed, extra) in enumerate(zip(spec["seeds"], overrides)):
        settings = case.settings.replace(seed=int(seed), **extra)
        t0 = time.perf_counter()
        if first_start is None:
            first_start = t0 - T_START
        result = fit_model(case.counts, settings)
        wall = time.perf_counter() - t0
        es = np.asarray(result.idata.posterior["expected_score"].values)
        timing = {"compile_s": float(result.timing["compile_s"]), "sample_s": float(result.timing["sample_s"]),
                  "divergences": int(result.diagnostics.divergences),
                  "reused": bool(result.timing.get("reused_compiled", False)),
                  "engine_used": result.timing.get("engine_used", settings.engine)}
        arrays[f"es_{i}"] = es
        runs.append({"seed": int(seed), **{k: v for k, v in extra.items()}, **timing, "wall_s": wall})
        print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    np.savez(out_path, runs=json.dumps({"runs": runs, "process_start_s": first_start}), **arrays)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
