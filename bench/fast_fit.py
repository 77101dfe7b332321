"""Bench-only adapter: fit with the fast path (``simplex_core.fast_density`` + nutpie) when the
installed ``simplex_core.inference`` does not offer engine ``'fast'`` yet. Returns what the bench
scripts read from a ``FitResult``."""

from __future__ import annotations

import time

import numpy as np

_IMPORTED = {}


def fit_fast(counts, settings, low_rank: bool = False, mode_starts: bool = True) -> dict:
    t0 = time.perf_counter()
    reused = "fd" in _IMPORTED
    if not reused:
        from simplex_core import fast_density

        _IMPORTED["fd"] = fast_density
    fd = _IMPORTED["fd"]
    compile_s = time.perf_counter() - t0
    import arviz as az
    import nutpie

    t1 = time.perf_counter()
    if mode_starts:
        modes = fd.find_modes(counts, settings, seed=settings.seed)
        groups = fd.chain_starts(modes, settings.chains)
    else:
        modes, groups = [], [(None, settings.chains)]
    t_init = time.perf_counter() - t1
    parts = []
    for g, (start, n_chains) in enumerate(groups):
        model = fd.compile_fast(counts, settings, start=start)
        parts.append(nutpie.sample(model, chains=n_chains, draws=settings.draws, tune=settings.tune,
                                   seed=settings.seed + 7919 * g, cores=min(n_chains, 2), progress_bar=False,
                                   save_warmup=False, target_accept=settings.target_accept,
                                   low_rank_modified_mass_matrix=low_rank))
    idata = parts[0] if len(parts) == 1 else az.concat(parts, dim="chain")
    sample_s = time.perf_counter() - t1
    return {"es": np.asarray(idata.posterior["expected_score"].values), "compile_s": compile_s, "sample_s": sample_s,
            "init_s": t_init, "divergences": int(idata.sample_stats["diverging"].values.sum()), "reused": reused,
            "n_modes": len(groups), "modes": [(m.logp, m.log_mass, m.hits) for m in modes]}
