"""Why NUTS takes long trajectories on a posterior (the K = 50 speed target): the local
curvature at posterior draws, measured against what a mass matrix can know. Prints figures; asserts
nothing.

A short fit of the engine ``fast`` (nutpie, 2 chains) keeps its unconstrained draws. At a few draws
the Hessian of the log density (central differences of the kernel's gradient) is whitened two ways:
by the draws' standard deviations (what nutpie's diagonal mass matrix can learn at best) and by their
full covariance (what a dense mass matrix could learn at best). NUTS's step size must resolve the
largest whitened eigenvalue λ (ε of order 1/√λ), while its trajectories must span directions of
whitened scale 1: so the number of leapfrog steps grows like √λ. Negative eigenvalues mark regions
that are not log-concave. The stiffest direction is read off by the parameter blocks it loads on
(``pi``, ``rho``, the judges' ``first`` rows, the weight-propagation ``edge`` weights).

Usage (repo root, project venv)::

    .venv/bin/python -m bench.posterior_geometry                 # K = 50, J = 5, M = 5, 2000 items
    .venv/bin/python -m bench.posterior_geometry --case triviaqa-v1
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.shared_truth_speed import CASES


def block_labels(J: int, K: int, M: int, T: int, G: int, n: int) -> np.ndarray:
    """The parameter block of each unconstrained coordinate (:func:`simplex_core.model.fast_density.coordinate_offsets`)."""
    from simplex_core.model.fast_density import coordinate_offsets

    o_pi, o_rho, o_first, o_edge, o_z, _, _ = coordinate_offsets(J, K, M, T, G, 1)
    labels = np.full(n, "random effects", dtype=object)
    for name, start, stop in (("pi", o_pi, o_rho), ("rho", o_rho, o_first), ("first", o_first, o_edge),
                              ("edge", o_edge, o_z)):
        labels[start:stop] = name
    return labels


def main(argv: list[str] | None = None) -> None:
    import nutpie

    from simplex_core.model.fast_density import build_buffer, sizes
    from simplex_core.inference.fast_engine import compile_fast, find_modes, negative_hessian
    from simplex_core.model.settings import FitSettings

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", default="k50", choices=sorted(CASES))
    p.add_argument("--points", type=int, default=4, help="draws at which the Hessian is taken")
    args = p.parse_args(argv)
    counts = CASES[args.case][0]()
    settings = FitSettings()
    buf = build_buffer(counts, settings.model)
    J, K, M, T, P, use_re, G, n = sizes(buf)
    print(f"# bench.posterior_geometry  {time.strftime('%Y-%m-%d %H:%M:%S')}  case {args.case}: "
          f"{n} unconstrained coordinates (J = {J}, K = {K}, M = {M}, T = {T})")
    modes = find_modes(counts, settings.model, seed=0)
    t0 = time.perf_counter()
    trace = nutpie.sample(compile_fast(counts, settings.model, start=modes[0].point), chains=2, draws=300, tune=500,
                          seed=1, cores=2, progress_bar=False, store_unconstrained=True)
    stats = trace.sample_stats
    print(f"2 chains × (500 + 300): {time.perf_counter() - t0:.1f} s, {float(stats['n_steps'].mean()):.0f} leapfrog "
          f"steps per draw, step size {float(stats['step_size'].mean()):.3f}")
    draws = stats["unconstrained_draw"].values.reshape(-1, n)
    sd = draws.std(axis=0)
    chol = np.linalg.cholesky(np.cov(draws.T) + 1e-12 * np.eye(n))
    labels = block_labels(J, K, M, T, G, n)

    print("\n| draw | diagonal-whitened λ max | directions with λ > 100 | λ > 10 | stiffest direction's blocks | "
          "covariance-whitened λ max | λ min |")
    print("|---|---|---|---|---|---|---|")
    for i in np.random.default_rng(0).choice(len(draws), args.points, replace=False):
        hess = negative_hessian(draws[i], buf)
        w_diag, vec = np.linalg.eigh(sd[:, None] * hess * sd[None, :])
        w_dense = np.linalg.eigvalsh(chol.T @ hess @ chol)
        load = vec[:, -1] ** 2
        blocks = ", ".join(f"{b} {load[labels == b].sum():.2f}" for b in dict.fromkeys(labels) if load[labels == b].sum() >= 0.01)
        print(f"| {i} | {w_diag[-1]:.0f} | {(w_diag > 100).sum()} | {(w_diag > 10).sum()} | {blocks} | "
              f"{w_dense[-1]:.0f} | {w_dense[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
