"""Hand-written log density and gradient of the model, compiled once by numba.

Why one file of 1,500 lines: numba's on-disk cache (``cache=True``) keys each compiled kernel by its
own source file's timestamp and does not see a change in a kernel it calls from another file, nor in
a constant (the buffer offsets ``BUF_*`` / ``ROW_*`` below) defined there: split across files, an edit
could leave stale machine code running. So every kernel, and every constant they compile in, stays
here; the Python around them (mode search, engines) lives in :mod:`simplex_core.inference`.

This module owns the numba kernels of the fast path of :mod:`simplex_core.inference.fitting` (engine
``'fast'``; the engine itself, mode search, chain starts and the nutpie glue, is
:mod:`simplex_core.inference.fast_engine`): the log density of the model that
:func:`simplex_core.model.definition.build_model` defines, with any of its four judge priors, fixed ω and
β_max or integrated mode (both random), written out with its gradient in
plain numba code and exposed as C callbacks that nutpie's Rust NUTS sampler calls directly, from
several threads, with no Python (and no GIL) in the loop.

Why (measured with ``bench/speed.py``): the PyMC graph compiled by nutpie's numba backend
takes about a minute in every new process, and PyTensor's C backend reaches nutpie through a Python
callback per gradient. Here

* the numba functions are compiled once per machine and cached on disk (``cache=True``): a new
  process loads them in about two seconds; nothing depends on the data's shape, so every dataset,
  scale (square or not), ω, β_max and δ reuses the same machine code;
* the data (counts, included pairs, scale, ω, β_max, δ) travel in one float64 buffer handed to the
  callbacks, so changing ω or β_max is a new buffer, never a recompilation; ω = 0 is a flag of the
  buffer that drops the random-effect coordinates (exactly no random effects, as in the PyMC model).

The parameterisation is PyMC's own (every unconstrained coordinate is the value variable PyMC's
default transforms give): Dirichlet variables through PyMC's simplex transform (the centred
softmax ``p = softmax([y, −Σy])``, log-Jacobian ``log N + Σ log p``), Beta variables through the
log-odds transform, Exponential ones through the log. So the log density equals PyMC's
``model.logp()`` up to an additive constant at every point and the posterior is the same
distribution, not an approximation; that is checked point by point (value and gradient) against
the PyMC model in ``tests/test_speed_equivalence.py`` and ``tests/test_shared_truth.py``, with a
Monte Carlo comparison of the two posteriors on top.

Layout of the unconstrained vector ``x`` (J judges, K candidates, M observed levels, T true
levels, E = M(M−1)/2)::

    pi          K × (T−1)        π_k ~ Dirichlet(1)
    rho         J                ρ_j ~ Beta(1, 1)
    first row   J × (M−1)        Θ_j[0, ·] ~ Dirichlet(1 + ρ_j β_max at the correct cell)
    judge block J × G            the rest of judge j's prior (G coordinates per judge, :func:`sizes`):
                (T−1) × E          weight propagation: node (t, m2), m2 = 0..M−2, in that order:
                                   M − m2 − 1 coordinates of its Dirichlet over the edges to
                                   (t+1, m2..M−1)
                (T−1) × (M−1)      diagonal: rows 1..T−1 of Θ_j, each ~ Dirichlet(1 + ρ_j β_max at
                                   its correct cell)
                (T−1) × M          mixing: per row t+1 the M − 1 coordinates of the innovation
                                   ε_t ~ Dirichlet(1 + ρ_j β_max at row t+1's correct cell), then
                                   the log-odds of λ_t ~ Beta(1, 1); Θ[t+1] = (1 − λ_t) Θ[t] + λ_t ε_t
                0                  ordered: none; its first-row slot holds the leniency ℓ_j and the
                                   M − 2 log gaps γ_j of the cut-points, and ρ_j and β_max set the
                                   discrimination (:func:`_ordered_rows`)
    Z           K × (T−1)        (random effects only) Z_k ~ Dirichlet(δ)
    R           J                fixed ω: R_j ~ Beta(ωJ, J) (log-odds)
                2 × J            integrated: log-odds of V_j ~ Beta(1 + ωJ, J), then log of
                                 E_j ~ Exponential(1); R_j = sigmoid(logit V_j − E_j/(ωJ))
    W           K or 2 × K       likewise with K
    ω, β_max    2                (integrated mode only) Uniform(0, 8), Uniform(0, 20), PyMC's interval
                                 transform (value = upper · sigmoid(u))

Integrated mode writes R and W by the exact augmentation of :func:`simplex_core.model.definition.build_model`
(``V_R``, ``E_R``, ``V_W``, ``E_W``): with PyMC's log-odds of R_j ~ Beta(ωJ, J), ω and the J + K
variables it governs form a funnel as ω → 0 (the prior's log-odds scale grows like 1/ω), and on
single-judge data, where W_k R_j is not identified, chains diverged there. V's prior stays
well-conditioned at every ω ≥ 0 and E's does not depend on ω; as ω → 0, R → 0 through the shift
E/(ωJ) (computed with a stable log-sigmoid; the interval transform keeps ω > 0).

Multinomial coefficients and normalising constants that depend on data only are left out; in
integrated mode the Beta(1 + ωn, n) normalisers of V depend on ω and are included (the Dirichlet
normalisers of the judge prior always are, since they depend on ρ_j β_max).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numba
import numpy as np
from numba import njit

if TYPE_CHECKING:  # pragma: no cover
    from simplex_core.model.settings import CountsLike, ModelSettings

__all__ = [
    "build_buffer",
    "flat_from_pymc_point",
    "ladder_logp_grad",
    "logp_and_grad",
    "n_unconstrained",
    "reference_arrays",
    "stored_coords",
    "stored_slices",
    "stored_variables",
    "tempered_logp_grad",
    "supports",
    "warm_up",
]

#: The float64 buffer's header, by named offset (every reader, here and in simplex_core.inference, reads it
#: by these names; numba compiles them in as constants). In integrated mode ω and β_max are coordinates
#: of x, not buffer values; their upper bounds travel in the buffer so that the compiled code never
#: holds a copy of the model's constants.
BUF_LENGTH = 0  # the buffer's length
BUF_J, BUF_K, BUF_M, BUF_T = 1, 2, 3, 4  # judges, candidates, observed levels, true levels
BUF_P = 5  # (judge, candidate) pairs in the per-judge likelihood (0 with shared truth)
BUF_RANDOM_EFFECTS = 6  # 1: Z, R, W are coordinates
BUF_OMEGA, BUF_BETA_MAX = 7, 8  # fixed ω and β_max
BUF_SHARED_TRUTH = 9  # 1: the shared-truth likelihood over pattern rows
BUF_PATTERN_ROWS = 10  # Q, the pattern rows
BUF_DISTINCT_PATTERNS = 11  # U, the distinct score patterns over all candidates
BUF_INTEGRATED = 12  # 1: ω and β_max are coordinates (integrated mode)
BUF_OMEGA_UPPER, BUF_BETA_MAX_UPPER = 13, 14  # their Uniform priors' upper bounds
BUF_DENSE_PASSES = 15  # 1: per-candidate dense passes (see _shared_truth_loglik_dense)
BUF_PRIOR = 16  # the judge prior's code (PRIOR_CODES)
HEADER = 17  # the header's length: δ [T], the true values [T], the true levels' positions [T] follow

#: A shared-truth pattern row: candidate, gold true level (−1: none), weight, then the J judges' scores
#: (−1: no score); a row is ROW_SCORES + J long.
ROW_CANDIDATE, ROW_TRUTH, ROW_WEIGHT, ROW_SCORES = 0, 1, 2, 3

#: The judge priors this path implements, by the code the buffer carries (``simplex_core.model.definition``'s names).
PRIOR_CODES = {"weight-propagation": 0, "diagonal": 1, "mixing": 2, "ordered": 3}

#: The ordered (latent-threshold) judge prior (:func:`_ordered_rows`; docs/DIAGNOSIS-real-data.md, parts
#: 6–8). Judge j's discrimination is s_j = (1 + ORDERED_S_PER_BETA · β_max) · (ρ_j/(1 − ρ_j))^ORDERED_LOG_S_PER_LOGIT
#: with ρ_j ~ Beta(1, 1) as in every prior: log s_j is logistic with sd ≈ 0.5 around log(1 + 0.4 β_max).
#: β_max keeps its meaning, the strength of the belief that judges are good: at 0 the typical judge is
#: near noise (an inner level of 5 scored right 1 time in 4), at the default 5 its median discrimination
#: is 3 (95% range about 1.1–8: right 1 time in 4 to 9 in 10). Leniency ℓ_j ~ Normal(0, ORDERED_LENIENCY_SD);
#: cut-point gaps exp(γ), γ ~ Normal(0, ORDERED_GAP_LOG_SD). Fixed before any fit (the 2026-12-07
#: prototype, bench/results/ordered-judge-prior-prototype-20261207.log), never tuned on a dataset.
ORDERED_S_PER_BETA = 0.4
ORDERED_LOG_S_PER_LOGIT = 0.28
ORDERED_LENIENCY_SD = 0.5
ORDERED_GAP_LOG_SD = 0.3
#: Θ's cells under the ordered prior are differences of logistic CDFs, which underflow (or cancel) far
#: from the judge's mean: they are clipped here, as ``pt.clip`` does in the PyMC reference.
ORDERED_FLOOR = 1e-12

#: :func:`_shared_truth_loglik_dense` works on every (candidate, distinct pattern) cell, the row-by-row
#: kernel on every pattern row; the dense one is used when K · U ≤ this many times Q. Measured on random
#: patterns (2 and 5 levels, K = 9…100): dense is faster up to K · U ≈ 23 Q (46 against 90 µs at 1 Q,
#: 384 against 435 µs at 17 Q, 1217 against 894 µs at 32 Q).
DENSE_PATTERN_RATIO = 20.0

#: Below this, a distinct pattern's largest product Π_j Θ_j[t, s_j] over t is recomputed through logs,
#: so that the products never underflow (their factors are probabilities, so a partial product is never
#: smaller than the whole).
_SMALLEST_PRODUCT = 1e-280


@njit(cache=True, error_model="numpy")
def _simplex(y, out):
    # centred softmax: z = [y, -sum(y)], p = softmax(z); returns sum(log p)
    n = out.shape[0]
    s = 0.0
    for i in range(n - 1):
        s += y[i]
    zmax = -s
    for i in range(n - 1):
        if y[i] > zmax:
            zmax = y[i]
    tot = 0.0
    for i in range(n - 1):
        out[i] = math.exp(y[i] - zmax)
        tot += out[i]
    out[n - 1] = math.exp(-s - zmax)
    tot += out[n - 1]
    lse = zmax + math.log(tot)
    slog = 0.0
    for i in range(n - 1):
        out[i] /= tot
        slog += y[i] - lse
    out[n - 1] /= tot
    slog += -s - lse
    return slog


@njit(cache=True, error_model="numpy")
def _simplex_grad(p, gp, gy):
    # gy[i] += d f / d y_i given gp = d f / d p (p = centred softmax of y)
    n = p.shape[0]
    gbar = 0.0
    for i in range(n):
        gbar += p[i] * gp[i]
    last = p[n - 1] * (gp[n - 1] - gbar)
    for i in range(n - 1):
        gy[i] += p[i] * (gp[i] - gbar) - last


@njit(cache=True, error_model="numpy")
def _sigmoid(u):
    if u >= 0:
        e = math.exp(-u)
        return 1.0 / (1.0 + e)
    e = math.exp(u)
    return e / (1.0 + e)


@njit(cache=True, error_model="numpy")
def _log_sigmoid(u):
    """log sigmoid(u) without overflow or underflow to −inf for large |u|."""
    if u >= 0:
        return -math.log1p(math.exp(-u))
    return u - math.log1p(math.exp(u))


@njit(cache=True, error_model="numpy")
def coordinate_offsets(J, K, M, T, G, per):
    """Where each block of the unconstrained vector starts (the layout of the module docstring);
    ``G``: coordinates per judge after its first row (:func:`sizes`); ``per``: coordinates per
    random-effect variable R_j, W_k (1, or 2 in integrated mode: V and E)."""
    o_pi = 0
    o_rho = o_pi + K * (T - 1)
    o_first = o_rho + J
    o_edge = o_first + J * (M - 1)
    o_Z = o_edge + J * G
    o_R = o_Z + K * (T - 1)
    o_W = o_R + per * J
    return o_pi, o_rho, o_first, o_edge, o_Z, o_R, o_W


@njit(cache=True, error_model="numpy")
def _augmented_prior(u, e, a, b, out, shift):
    """Integrated mode: the log density of the coordinates ``u`` (log-odds of V ~ Beta(1 + a, b)) and
    ``e`` (log of E ~ Exponential(1)), Jacobians included and V's normaliser left out; writes the
    variable ``sigmoid(u − E/a)`` into ``out`` and ``E/a`` into ``shift``."""
    lp = 0.0
    for i in range(u.shape[0]):
        ev = math.exp(e[i])
        lp += (a + 1.0) * _log_sigmoid(u[i]) + b * _log_sigmoid(-u[i]) + e[i] - ev
        shift[i] = ev / a  # a → 0 (ω → 0): the variable → 0, its log-odds → −∞
        out[i] = _sigmoid(u[i] - shift[i])
    return lp


@njit(cache=True, error_model="numpy")
def _augmented_grad(u, e, a, b, val, shift, gval, gu, ge):
    """The gradient of :func:`_augmented_prior`'s coordinates given ``gval`` = d(log density)/d value
    from the likelihood; returns Σ (d log density / d logit value)·E/a, which times (1 − s) is the
    shifts' part of the gradient in ω's coordinate u (ω = upper·s, s = sigmoid(u): dω/du = ω(1 − s))."""
    dshift = 0.0
    for i in range(u.shape[0]):
        v = val[i]
        gz = gval[i] * v * (1.0 - v)  # d / d logit value; 0 when the value underflows to 0
        s = _sigmoid(u[i])
        gu[i] = gz + (a + 1.0) * (1.0 - s) - b * s
        ge[i] = 1.0 - math.exp(e[i])
        if gz != 0.0:
            ge[i] -= gz * shift[i]
            dshift += gz * shift[i]
    return dshift


@njit(cache=True, error_model="numpy")
def _interval(u, upper):
    """PyMC's interval transform of Uniform(0, upper): the value ``upper · sigmoid(u)``, its sigmoid
    and the log density of ``u`` (Uniform density times the transform's Jacobian: log s + log(1 − s))."""
    s = _sigmoid(u)
    return upper * s, s, math.log(s) + math.log1p(-s)


@njit(cache=True, error_model="numpy")
def row_block(M, prior):
    """Coordinates per row 1..T−1 of a judge's block, for judge prior code ``prior`` (:data:`PRIOR_CODES`)."""
    if prior == 1:  # diagonal: the row, a simplex over the M observed levels
        return M - 1
    if prior == 2:  # mixing: the innovation's simplex, then the log-odds of its weight λ
        return M
    if prior == 3:  # ordered: leniency and cut-points sit in the first-row slot; no rows of their own
        return 0
    return M * (M - 1) // 2  # weight propagation: the E edge coordinates of the transition


@njit(cache=True, error_model="numpy")
def _judge_block(M, T, prior):
    """Coordinates per judge after its first row (:func:`row_block` for each of rows 1..T−1)."""
    return (T - 1) * row_block(M, prior)


@njit(cache=True, error_model="numpy")
def sizes(buf):
    """``(J, K, M, T, P, random effects, G, n)``: G the coordinates per judge after its first row
    (:func:`coordinate_offsets`), n the length of the unconstrained vector."""
    J = int(buf[BUF_J]); K = int(buf[BUF_K]); M = int(buf[BUF_M]); T = int(buf[BUF_T]); P = int(buf[BUF_P])
    use_re = buf[BUF_RANDOM_EFFECTS] > 0.5
    G = _judge_block(M, T, int(buf[BUF_PRIOR]))
    per = 2 if buf[BUF_INTEGRATED] > 0.5 else 1
    offsets = coordinate_offsets(J, K, M, T, G, per)
    o_Z, o_W = offsets[4], offsets[6]
    n = o_W + per * K if use_re else o_Z  # without random effects the vector ends where Z would start
    if per == 2:
        n += 2  # integrated mode: ω, β_max after W
    return J, K, M, T, P, use_re, G, n


@njit(cache=True, error_model="numpy")
def _rows_forward(x, base0, M, T, prior, s, correct, lg, dg, theta, rows, grows, lam):
    """Rows 1..T−1 of one judge's Θ (``theta [T, M]``, row 0 set) under the diagonal (``prior`` 1)
    or mixing (2) judge prior, from the judge block's coordinates starting at ``base0``; returns (log
    prior density with Jacobians, its derivative in s = ρ_j β_max). Keeps the diagonal rows or the
    mixing innovations in ``rows [T−1, M]`` with the prior's own gradient in ``grows``, the mixing weights
    in ``lam`` (the weight-propagation prior is written inline in :func:`tempered_logp_grad`, where
    it runs fastest)."""
    lp = 0.0
    ds = 0.0
    per = row_block(M, prior)
    for t in range(T - 1):
        tgt = int(correct[t + 1])
        base = base0 + t * per
        a = rows[t]
        lp += _simplex(x[base: base + M - 1], a)
        la = math.log(a[tgt])
        lp += lg[M - 1] + s * la
        ds += dg[M - 1] + la
        for m in range(M):
            grows[t, m] = 1.0 / a[m]
        grows[t, tgt] += s / a[tgt]
        if prior == 1:  # diagonal: the row itself
            for m in range(M):
                theta[t + 1, m] = a[m]
        else:  # mixing: Θ[t + 1] = (1 − λ_t) Θ[t] + λ_t ε_t, λ_t ~ Beta(1, 1) through its log-odds
            u = x[base + M - 1]
            lm = _sigmoid(u)
            lam[t] = lm
            lp += _log_sigmoid(u) + _log_sigmoid(-u)
            for m in range(M):
                theta[t + 1, m] = (1.0 - lm) * theta[t, m] + lm * a[m]
    return lp, ds


@njit(cache=True, error_model="numpy")
def _rows_backward(base0, M, T, prior, theta, rows, grows, lam, gtheta, g):
    """The gradient of :func:`_rows_forward`'s coordinates (into ``g``) given d(log density)/dΘ in
    ``gtheta``, which it carries back to row 0 (mixing: through the weights)."""
    per = row_block(M, prior)
    for t in range(T - 2, -1, -1):
        base = base0 + t * per
        if prior == 1:
            for m in range(M):
                grows[t, m] += gtheta[t + 1, m]
        else:
            lm = lam[t]
            gl = 0.0
            for m in range(M):
                gc = gtheta[t + 1, m]
                gl += gc * (rows[t, m] - theta[t, m])
                gtheta[t, m] += (1.0 - lm) * gc
                grows[t, m] += lm * gc
            g[base + M - 1] = gl * lm * (1.0 - lm) + (1.0 - 2.0 * lm)
        _simplex_grad(rows[t], grows[t], g[base: base + M - 1])


@njit(cache=True, error_model="numpy")
def ordered_median_discrimination(beta):
    """The ordered prior's median discrimination at β_max = ``beta`` (the constants above)."""
    return 1.0 + ORDERED_S_PER_BETA * beta


@njit(cache=True, error_model="numpy")
def _ordered_rows(u_rho, beta, y, M, T, correct, theta, F, cuts):
    """One judge's Θ ``[T, M]`` under the ordered prior from its ρ coordinate ``u_rho`` (logit ρ_j) and
    its ``M − 1`` coordinates ``y = [ℓ_j, γ_j1 … γ_j(M−2)]``::

        P(score ≤ m | true level t) = F[t, m] = logistic(s_j (c_jm − pos_t − ℓ_j)),  m = 0 … M − 2
        c_j0 = ½,  c_jm = c_j(m−1) + exp(γ_jm),   pos_t = the observed position of true level t

    so every row stochastically dominates the one above (no flipped judge) and, before any data, a
    judge scores each level around itself; s_j = :func:`ordered_median_discrimination` (β_max) ·
    exp(ORDERED_LOG_S_PER_LOGIT · logit ρ_j). Keeps F and the cut-points for :func:`_ordered_grad`;
    returns (the log prior density of ℓ and γ, s_j); ρ_j's Beta(1, 1) term is the caller's."""
    s = ordered_median_discrimination(beta) * math.exp(ORDERED_LOG_S_PER_LOGIT * u_rho)
    lenient = y[0]
    lp = -0.5 * (lenient / ORDERED_LENIENCY_SD) ** 2
    cuts[0] = 0.5
    for m in range(1, M - 1):
        lp -= 0.5 * (y[m] / ORDERED_GAP_LOG_SD) ** 2
        cuts[m] = cuts[m - 1] + math.exp(y[m])
    for t in range(T):
        pos = correct[t]
        prev = 0.0
        for m in range(M - 1):
            f = _sigmoid(s * (cuts[m] - pos - lenient))
            F[t, m] = f
            theta[t, m] = max(f - prev, ORDERED_FLOOR)
            prev = f
        theta[t, M - 1] = max(1.0 - prev, ORDERED_FLOOR)
    return lp, s


@njit(cache=True, error_model="numpy")
def _ordered_grad(y, s, M, T, correct, theta, F, cuts, gtheta, gy):
    """The gradient of :func:`_ordered_rows`'s coordinates given d(log density)/dΘ in ``gtheta``:
    writes ℓ's and γ's (prior terms included) into ``gy`` and returns the derivative in log s_j (a
    clipped cell passes no gradient, as with ``pt.clip``)."""
    gs = 0.0
    gl = 0.0
    gc = np.zeros(M - 1)
    for t in range(T):
        pos = correct[t]
        for m in range(M - 1):
            lo = gtheta[t, m] if theta[t, m] > ORDERED_FLOOR else 0.0
            hi = gtheta[t, m + 1] if theta[t, m + 1] > ORDERED_FLOOR else 0.0
            f = F[t, m]
            gz = (lo - hi) * f * (1.0 - f)
            gs += gz * (cuts[m] - pos - y[0])
            gl -= gz * s
            gc[m] += gz * s
    gy[0] = gl - y[0] / ORDERED_LENIENCY_SD ** 2
    acc = 0.0
    for m in range(M - 2, 0, -1):  # γ_m moves every cut-point from m on
        acc += gc[m]
        gy[m] = acc * math.exp(y[m]) - y[m] / ORDERED_GAP_LOG_SD ** 2
    return gs * s


def logp_grad(x, g, buf):
    """Log density at the unconstrained point ``x``; writes its gradient into ``g``. (A Python
    wrapper, not a numba function: one more compiled copy of the density would cost seconds of
    compilation on a new machine, and every caller of this one is Python.)"""
    return tempered_logp_grad(x, g, buf, 1.0)[0]


@njit(cache=True, error_model="numpy")
def tempered_logp_grad(x, g, buf, power):
    """``(log prior + power · log likelihood, log likelihood)`` at ``x``, the gradient of the first
    into ``g``: the tempered densities of :mod:`simplex_core.inference.tempering` (``power = 1``: the posterior)."""
    J, K, M, T, P, use_re, G, n = sizes(buf)
    omega = buf[BUF_OMEGA]
    beta = buf[BUF_BETA_MAX]
    integrated = buf[BUF_INTEGRATED] > 0.5
    o = HEADER
    delta = buf[o:o + T]; o += T
    o += T  # true values
    correct = buf[o:o + T]; o += T
    pj = buf[o:o + P]; o += P
    pk = buf[o:o + P]; o += P
    counts = buf[o:o + P * M]
    for i in range(n):
        g[i] = 0.0
    lp = 0.0
    lik = 0.0
    # offsets in x
    o_pi, o_rho, o_first, o_edge, o_Z, o_R, o_W = coordinate_offsets(J, K, M, T, G, 2 if integrated else 1)
    o_hyp = n - 2  # integrated mode: ω, β_max are the last two coordinates
    s_om = s_bm = 0.0
    if integrated:  # ω ~ Uniform(0, buf[BUF_OMEGA_UPPER]), β_max ~ Uniform(0, buf[BUF_BETA_MAX_UPPER]), PyMC's interval transform
        omega, s_om, l_om = _interval(x[o_hyp], buf[BUF_OMEGA_UPPER])
        beta, s_bm, l_bm = _interval(x[o_hyp + 1], buf[BUF_BETA_MAX_UPPER])
        lp += l_om + l_bm

    pi = np.empty((K, T))
    gpi = np.zeros((K, T))
    for k in range(K):
        lp += _simplex(x[o_pi + k * (T - 1): o_pi + (k + 1) * (T - 1)], pi[k])
        for t in range(T):
            gpi[k, t] = 1.0 / pi[k, t]  # jacobian sum(log p)
    rho = np.empty(J)
    ds = np.zeros(J)
    for j in range(J):
        r = _sigmoid(x[o_rho + j])
        rho[j] = r
        lp += math.log(r) + math.log1p(-r)
    prior = int(buf[BUF_PRIOR])
    theta = np.zeros((J, T, M))
    gtheta = np.zeros((J, T, M))
    # weight propagation: the transition matrices A; diagonal / mixing: the rows or innovations, and the
    # mixing weights (contiguous, as in expand: one compiled copy of the row kernels serves both)
    A = np.zeros((J, T - 1, M, M) if prior == 0 else (0, 0, 0, 0))
    gA = np.zeros_like(A)
    rows = np.zeros((J, T - 1, M) if prior != 0 else (0, 0, 0))
    grows = np.zeros_like(rows)
    lam = np.zeros((J, T - 1))
    first = np.empty((J, M))
    gfirst = np.zeros((J, M))
    c0 = int(correct[0])
    E = M * (M - 1) // 2
    lg = np.empty(M)
    dg = np.empty(M)
    ordered = prior == 3
    cdf = np.zeros((J, T, M - 1) if ordered else (0, 0, 0))
    cuts = np.zeros((J, M - 1) if ordered else (0, 0))
    sharp = np.zeros(J)
    for j in range(J):
        if ordered:  # ρ_j sets the discrimination; the first-row slot holds leniency and cut-points
            lpj, sharp[j] = _ordered_rows(x[o_rho + j], beta, x[o_first + j * (M - 1): o_first + (j + 1) * (M - 1)], M, T,
                                          correct, theta[j], cdf[j], cuts[j])
            lp += lpj
            continue
        s = rho[j] * beta
        lp += _simplex(x[o_first + j * (M - 1): o_first + (j + 1) * (M - 1)], first[j])
        # lgamma(d + s) - lgamma(1 + s) = sum_{i<d} log(s + i); its s-derivative sum 1/(s + i)
        lg[0] = 0.0
        dg[0] = 0.0
        for i in range(1, M):
            lg[i] = lg[i - 1] + math.log(s + i)
            dg[i] = dg[i - 1] + 1.0 / (s + i)
        lp += lg[M - 1] + s * math.log(first[j, c0])
        ds[j] += dg[M - 1] + math.log(first[j, c0])
        for m in range(M):
            gfirst[j, m] = 1.0 / first[j, m]
        gfirst[j, c0] += s / first[j, c0]
        for m in range(M):
            theta[j, 0, m] = first[j, m]
        if prior != 0:
            lpj, dsj = _rows_forward(x, o_edge + j * G, M, T, prior, s, correct, lg, dg, theta[j], rows[j], grows[j],
                                     lam[j])
            lp += lpj
            ds[j] += dsj
            continue
        for t in range(T - 1):
            base = o_edge + (j * (T - 1) + t) * E
            pos = 0
            tgt = int(correct[t + 1])
            for m2 in range(M - 1):
                d = M - m2
                a = A[j, t, m2, m2:]
                lp += _simplex(x[base + pos: base + pos + d - 1], a)
                pos += d - 1
                for i in range(d):
                    gA[j, t, m2, m2 + i] = 1.0 / a[i]
                if tgt >= m2:
                    b = tgt - m2
                    la = math.log(a[b])
                    lp += lg[d - 1] + s * la
                    ds[j] += dg[d - 1] + la
                    gA[j, t, m2, m2 + b] += s / a[b]
            A[j, t, M - 1, M - 1] = 1.0
            for m2 in range(M):
                v = theta[j, t, m2]
                for c in range(m2, M):
                    theta[j, t + 1, c] += v * A[j, t, m2, c]
    Z = np.zeros((K, T))
    gZ = np.zeros((K, T))
    R = np.zeros(J)
    gR = np.zeros(J)
    W = np.zeros(K)
    gW = np.zeros(K)
    aJ, bJ, aK, bK = 0.0, 0.0, 0.0, 0.0
    dom = 0.0  # d log density / dω at fixed coordinates (integrated mode), completed below
    dom_u = 0.0  # terms of d / d u_ω computed directly (they would need 1/ω through dω)
    cR = np.zeros(J)  # integrated mode: E_j/(ωJ), the shift of logit R_j below logit V_j
    cW = np.zeros(K)
    if use_re:
        for k in range(K):
            lp += _simplex(x[o_Z + k * (T - 1): o_Z + (k + 1) * (T - 1)], Z[k])
            for t in range(T):
                lp += (delta[t] - 1.0) * math.log(Z[k, t])
                gZ[k, t] = delta[t] / Z[k, t]
        aJ, bJ = omega * J, float(J)
        aK, bK = omega * K, float(K)
        if integrated:
            # exact augmentation (see the module docstring): logit R_j = logit V_j − E_j/(ωJ) with
            # V_j ~ Beta(1 + ωJ, J) (log-odds coordinate) and E_j ~ Exponential(1) (log coordinate);
            # likewise W_k with K. R and W are functions of the coordinates, with no density of their own
            lp += _augmented_prior(x[o_R:o_R + J], x[o_R + J:o_R + 2 * J], aJ, bJ, R, cR)
            lp += _augmented_prior(x[o_W:o_W + K], x[o_W + K:o_W + 2 * K], aK, bK, W, cW)
            # the Beta(1 + a, n) normaliser per variable: Γ(1 + a + n)/Γ(1 + a) = Π_{i<n} (1 + a + i)
            # (−log Γ(n) is a constant, left out); its a-derivative Σ_{i<n} 1/(1 + a + i)
            for i in range(J):
                lp += J * math.log(aJ + 1.0 + i)
                dom += J * J / (aJ + 1.0 + i)
            for i in range(K):
                lp += K * math.log(aK + 1.0 + i)
                dom += K * K / (aK + 1.0 + i)
            for j in range(J):
                dom += J * _log_sigmoid(x[o_R + j])  # d/dω of ωJ·log V_j
            for k in range(K):
                dom += K * _log_sigmoid(x[o_W + k])
        else:
            for j in range(J):
                r = _sigmoid(x[o_R + j])
                R[j] = r
                lp += aJ * math.log(r) + bJ * math.log1p(-r)  # Beta + logit jacobian
            for k in range(K):
                w = _sigmoid(x[o_W + k])
                W[k] = w
                lp += aK * math.log(w) + bK * math.log1p(-w)
    if buf[BUF_SHARED_TRUTH] > 0.5:  # shared truth: the answers' score patterns follow the per-pair counts
        Q = int(buf[BUF_PATTERN_ROWS])
        rows_at = o + P * M
        lik += _shared_truth_loglik(buf[rows_at:], Q, buf[rows_at + Q * (ROW_SCORES + J):], int(buf[BUF_DISTINCT_PATTERNS]), J, K, M, T, pi, theta,
                                    use_re, buf[BUF_DENSE_PASSES] > 0.5, Z, R, W, power, gpi, gtheta, gZ, gR, gW)
    q = np.empty(T)
    gq = np.empty(T)
    gam = np.empty(M)
    for p in range(P):
        j = int(pj[p]); k = int(pk[p])
        if use_re:
            mix = W[k] * R[j]
            for t in range(T):
                q[t] = (1.0 - mix) * pi[k, t] + mix * Z[k, t]
        else:
            mix = 0.0
            for t in range(T):
                q[t] = pi[k, t]
        for m in range(M):
            acc = 0.0
            for t in range(T):
                acc += q[t] * theta[j, t, m]
            gam[m] = acc
        for m in range(M):
            nm = counts[p * M + m]
            if nm > 0:
                lik += nm * math.log(gam[m])
                gam[m] = power * nm / gam[m]
            else:
                gam[m] = 0.0
        for t in range(T):
            acc = 0.0
            for m in range(M):
                acc += gam[m] * theta[j, t, m]
                gtheta[j, t, m] += q[t] * gam[m]
            gq[t] = acc
        if use_re:
            gmix = 0.0
            for t in range(T):
                gpi[k, t] += (1.0 - mix) * gq[t]
                gZ[k, t] += mix * gq[t]
                gmix += gq[t] * (Z[k, t] - pi[k, t])
            gW[k] += gmix * R[j]
            gR[j] += gmix * W[k]
        else:
            for t in range(T):
                gpi[k, t] += gq[t]
    # backprop through the propagation
    gbeta = 0.0
    for j in range(J):
        if ordered:  # log s_j = log(1 + ORDERED_S_PER_BETA β_max) + ORDERED_LOG_S_PER_LOGIT logit ρ_j
            glog_s = _ordered_grad(x[o_first + j * (M - 1): o_first + (j + 1) * (M - 1)], sharp[j], M, T, correct,
                                   theta[j], cdf[j], cuts[j], gtheta[j],
                                   g[o_first + j * (M - 1): o_first + (j + 1) * (M - 1)])
            g[o_rho + j] = ORDERED_LOG_S_PER_LOGIT * glog_s + 1.0 - 2.0 * rho[j]
            if integrated:
                gbeta += glog_s * ORDERED_S_PER_BETA / ordered_median_discrimination(beta)
            continue
        if prior != 0:
            _rows_backward(o_edge + j * G, M, T, prior, theta[j], rows[j], grows[j], lam[j], gtheta[j], g)
        else:
            for t in range(T - 2, -1, -1):
                for m2 in range(M):
                    v = theta[j, t, m2]
                    acc = 0.0
                    for c in range(m2, M):
                        gc = gtheta[j, t + 1, c]
                        gA[j, t, m2, c] += v * gc
                        acc += A[j, t, m2, c] * gc
                    gtheta[j, t, m2] += acc
            for t in range(T - 1):
                base = o_edge + (j * (T - 1) + t) * E
                pos = 0
                for m2 in range(M - 1):
                    d = M - m2
                    _simplex_grad(A[j, t, m2, m2:], gA[j, t, m2, m2:], g[base + pos: base + pos + d - 1])
                    pos += d - 1
        for m in range(M):
            gfirst[j, m] += gtheta[j, 0, m]
        _simplex_grad(first[j], gfirst[j], g[o_first + j * (M - 1): o_first + (j + 1) * (M - 1)])
        r = rho[j]
        g[o_rho + j] = beta * r * (1.0 - r) * ds[j] + (1.0 - 2.0 * r)
        if integrated:
            gbeta += r * ds[j]  # the judge prior depends on β_max through s_j = ρ_j β_max
    for k in range(K):
        _simplex_grad(pi[k], gpi[k], g[o_pi + k * (T - 1): o_pi + (k + 1) * (T - 1)])
    if use_re:
        for k in range(K):
            _simplex_grad(Z[k], gZ[k], g[o_Z + k * (T - 1): o_Z + (k + 1) * (T - 1)])
        if integrated:
            dom_u += _augmented_grad(x[o_R:o_R + J], x[o_R + J:o_R + 2 * J], aJ, bJ, R, cR, gR,
                                     g[o_R:o_R + J], g[o_R + J:o_R + 2 * J])
            dom_u += _augmented_grad(x[o_W:o_W + K], x[o_W + K:o_W + 2 * K], aK, bK, W, cW, gW,
                                     g[o_W:o_W + K], g[o_W + K:o_W + 2 * K])
        else:
            for j in range(J):
                r = R[j]
                g[o_R + j] = gR[j] * r * (1.0 - r) + aJ * (1.0 - r) - bJ * r  # d / d logit R_j
            for k in range(K):
                w = W[k]
                g[o_W + k] = gW[k] * w * (1.0 - w) + aK * (1.0 - w) - bK * w
    if integrated:
        # dω/du = ω(1 − s): the shift E/(ωJ) contributes (E/(ωJ))(1 − s) per unit of its gradient
        g[o_hyp] = dom * buf[BUF_OMEGA_UPPER] * s_om * (1.0 - s_om) + (1.0 - 2.0 * s_om) + dom_u * (1.0 - s_om)
        g[o_hyp + 1] = gbeta * buf[BUF_BETA_MAX_UPPER] * s_bm * (1.0 - s_bm) + (1.0 - 2.0 * s_bm)
    return lp + power * lik, lik




@njit(cache=True, error_model="numpy")
def _pattern_row(rows, q, J):
    """Pattern row ``q`` of the shared-truth rows: its offset in ``rows``, candidate, gold true level
    (−1: none) and weight; its J scores follow at offset + ROW_SCORES."""
    base = q * (ROW_SCORES + J)
    return base, int(rows[base + ROW_CANDIDATE]), int(rows[base + ROW_TRUTH]), rows[base + ROW_WEIGHT]


@njit(cache=True, error_model="numpy")
def _pattern_log_products(distinct, u, J, T, logth, b):
    """b[t] = Σ_j log Θ_j[t, s_uj] over the judges who scored distinct pattern u (``logth``: log Θ)."""
    for t in range(T):
        b[t] = 0.0
    for j in range(J):
        s = int(distinct[u * J + j])
        if s >= 0:
            for t in range(T):
                b[t] += logth[j, t, s]


@njit(cache=True, error_model="numpy")
def _shifted_exp(b, out):
    """out[t] = exp(b[t] − max_t b); returns max_t b (``out`` may be ``b``; the shift keeps the product
    of many small probabilities from underflowing)."""
    mx = b[0]
    for t in range(1, b.size):
        if b[t] > mx:
            mx = b[t]
    for t in range(b.size):
        out[t] = math.exp(b[t] - mx)
    return mx


@njit(cache=True, error_model="numpy")
def _shared_truth_loglik_distinct(rows, Q, distinct, U, J, M, T, pi, theta, power, gpi, gtheta):
    """:func:`_shared_truth_loglik` without random effects, where Π_j Θ_j[t, s_j] does not depend on
    the candidate: it is computed once per distinct score pattern (``distinct``: U × J scores, then
    the Q rows' pattern indices), so a row costs T products and one log instead of J × T sums and T
    exponentials. Measured on K = 50, J = 5, M = 5, 2000 items: 7624 rows, 411 distinct patterns.

    Per pattern u, b[u, t] = Σ_j log Θ_j[t, s_uj] and A[u, t] = exp(b[u, t] − max_t b[u, t]) (the
    shift keeps the product of many small probabilities from underflowing); a row of candidate k
    then has log Σ_t π_k[t] A[u, t] + max_t b[u, t], the same value as the log-sum-exp of the
    general kernel."""
    logth = np.log(theta)
    b = np.empty((U, T))
    bmax = np.empty(U)
    A = np.empty((U, T))
    for u in range(U):
        _pattern_log_products(distinct, u, J, T, logth, b[u])
        bmax[u] = _shifted_exp(b[u], A[u])
    gb = np.zeros((U, T))  # gradient wrt b
    index = distinct[U * J:]
    lik = 0.0
    for q in range(Q):
        _, k, tr, w = _pattern_row(rows, q, J)
        pw = power * w
        u = int(index[q])
        if tr >= 0:  # gold: the true level is observed
            lik += w * (math.log(pi[k, tr]) + b[u, tr])
            gpi[k, tr] += pw / pi[k, tr]
            gb[u, tr] += pw
        else:
            tot = 0.0
            for t in range(T):
                tot += pi[k, t] * A[u, t]
            lik += w * (math.log(tot) + bmax[u])
            c = pw / tot
            for t in range(T):
                gpi[k, t] += c * A[u, t]
                gb[u, t] += c * pi[k, t] * A[u, t]
    for u in range(U):
        for j in range(J):
            s = int(distinct[u * J + j])
            if s >= 0:
                for t in range(T):
                    gtheta[j, t, s] += gb[u, t] / theta[j, t, s]
    return lik


_FAST = {"contract", "reassoc", "nsz", "arcp"}  # lets LLVM vectorise the dense passes' sums (order of additions only)


@njit(cache=True, error_model="numpy")
def _log_array(x, out):
    """``out = log(x)`` in a loop LLVM vectorises. Numba here has no SVML, so ``math.log`` is one libm
    call per value (2.8–3 ns); this takes about 1.2 ns (measured on 7624 values). The exponent and
    mantissa come from the bits, m is brought into [√½, √2), and log m = 2 atanh(s), s = (m − 1)/(m + 1)
    (|s| ≤ 0.172), by its odd series to s²³: within a few units in the last place of libm's log.
    Zero, subnormal, infinite and NaN values go to libm."""
    n = x.size
    bits = x.view(np.int64)
    mant = np.empty(n)
    mbits = mant.view(np.int64)
    expo = out.view(np.int64)  # the exponents, then overwritten by the logs
    for i in range(n):
        b = bits[i]
        mbits[i] = (b & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000
        expo[i] = ((b >> 52) & 0x7FF) - 1023
    for i in range(n):
        e = float(expo[i])
        m = mant[i]
        if m > 1.4142135623730951:
            m *= 0.5
            e += 1.0
        s = (m - 1.0) / (m + 1.0)
        z = s * s
        p = 1.0 / 23.0
        p = p * z + 1.0 / 21.0
        p = p * z + 1.0 / 19.0
        p = p * z + 1.0 / 17.0
        p = p * z + 1.0 / 15.0
        p = p * z + 1.0 / 13.0
        p = p * z + 1.0 / 11.0
        p = p * z + 1.0 / 9.0
        p = p * z + 1.0 / 7.0
        p = p * z + 1.0 / 5.0
        p = p * z + 1.0 / 3.0
        # log 2 split in a high part exact in e · ln2_hi and a low part (fdlibm's constants)
        out[i] = e * 6.93147180369123816490e-01 + ((2.0 * s * z * p + e * 1.90821492927058770002e-10) + 2.0 * s)
    for i in range(n):
        v = x[i]
        if not (v >= 2.2250738585072014e-308 and v < np.inf):
            out[i] = math.log(v)


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def _candidate_totals(k, U, T, pi, AT, tot):
    """tot[u] = Σ_t π_k[t] A[t, u] for every distinct pattern u."""
    for u in range(U):
        tot[u] = 0.0
    for t in range(T):
        p = pi[k, t]
        for u in range(U):
            tot[u] += p * AT[t, u]


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def _candidate_grads(k, U, T, pi, AT, c, gpi, GBt):
    """Adds Σ_u c[u] A[t, u] to ∂/∂π_k[t] and c[u] π_k[t] to GBt[t, u] (the gradient wrt A[t, u] before
    its factor A, see :func:`_shared_truth_loglik_dense`)."""
    for t in range(T):
        acc = 0.0
        p = pi[k, t]
        for u in range(U):
            acc += c[u] * AT[t, u]
            GBt[t, u] += c[u] * p
        gpi[k, t] += acc


@njit(cache=True, error_model="numpy")
def _shared_truth_loglik_dense(rows, Q, distinct, U, J, K, T, pi, theta, power, gpi, gtheta):
    """:func:`_shared_truth_loglik_distinct` with each candidate's work done over all U distinct
    patterns at once: the sums over true levels and the gradient's scatter become dense loops that
    LLVM vectorises, and only one division and one log (in a vectorised batch) stay per pattern row.
    Same value and gradient, to rounding. Worth it when the candidates share most patterns
    (``build_buffer`` decides, by :data:`DENSE_PATTERN_RATIO`); K = 50, J = 5, M = 5, 2000 items:
    118 → 71 µs a call.

    A[t, u] = Π_j Θ_j[t, s_uj] / max_t(…), scale exp(bmax[u]) = max_t(…): products, not sums of logs
    and exponentials, except for a pattern whose largest product is below :data:`_SMALLEST_PRODUCT`.
    A row (candidate k, pattern u, weight w) adds w (log Σ_t π_k[t] A[t, u] + bmax[u]); with
    c = power · w / Σ_t π_k[t] A[t, u], its gradient is c A[t, u] wrt π_k[t] and c π_k[t] A[t, u]
    wrt log Π_j Θ_j[t, s_uj], that is c π_k[t] A[t, u] / Θ_j[t, s] wrt each Θ_j[t, s] of the pattern.
    Gold rows (true level observed) add w (log π_k[tr] + Σ_j log Θ_j[tr, s_uj]) directly."""
    index = distinct[U * J:]
    starts = distinct[U * J + Q:]
    logth = np.log(theta)
    AT = np.empty((T, U))
    bmax = np.empty(U)
    for u in range(U):
        mx = 0.0
        for t in range(T):
            prod = 1.0
            for j in range(J):
                s = int(distinct[u * J + j])
                if s >= 0:
                    prod *= theta[j, t, s]
            AT[t, u] = prod
            if prod > mx:
                mx = prod
        if mx >= _SMALLEST_PRODUCT:
            bmax[u] = math.log(mx)
            inv = 1.0 / mx
            for t in range(T):
                AT[t, u] *= inv
        else:  # many small factors: the same numbers through logs, so that nothing underflows (written
            # out, not by _pattern_log_products and _shifted_exp: with those calls here the whole kernel
            # took 8% longer, measured on K = 50)
            for t in range(T):
                AT[t, u] = 0.0
            for j in range(J):
                s = int(distinct[u * J + j])
                if s >= 0:
                    for t in range(T):
                        AT[t, u] += logth[j, t, s]
            mx = AT[0, u]
            for t in range(1, T):
                if AT[t, u] > mx:
                    mx = AT[t, u]
            bmax[u] = mx
            for t in range(T):
                AT[t, u] = math.exp(AT[t, u] - mx)
    GBt = np.zeros((T, U))
    tot = np.empty(U)
    c = np.zeros(U)
    row_tot = np.ones(Q)
    lik = 0.0
    for k in range(K):
        _candidate_totals(k, U, T, pi, AT, tot)
        for u in range(U):
            c[u] = 0.0
        for q in range(int(starts[k]), int(starts[k + 1])):
            u = int(index[q])
            row_tot[q] = tot[u]
            c[u] += power * rows[q * (ROW_SCORES + J) + ROW_WEIGHT] / tot[u]
        _candidate_grads(k, U, T, pi, AT, c, gpi, GBt)
    row_log = np.empty(Q)
    _log_array(row_tot, row_log)
    for q in range(int(starts[0]), Q):
        lik += rows[q * (ROW_SCORES + J) + ROW_WEIGHT] * (row_log[q] + bmax[int(index[q])])
    for q in range(int(starts[0])):  # gold: the true level is observed
        _, k, tr, w = _pattern_row(rows, q, J)
        u = int(index[q])
        lik += w * math.log(pi[k, tr])
        gpi[k, tr] += power * w / pi[k, tr]
        for j in range(J):
            s = int(distinct[u * J + j])
            if s >= 0:
                lik += w * logth[j, tr, s]
                gtheta[j, tr, s] += power * w / theta[j, tr, s]
    inv_theta = 1.0 / theta
    for u in range(U):
        for j in range(J):
            s = int(distinct[u * J + j])
            if s >= 0:
                for t in range(T):
                    gtheta[j, t, s] += GBt[t, u] * AT[t, u] * inv_theta[j, t, s]
    return lik


@njit(cache=True, error_model="numpy")
def _row_responsibilities_in_logs(rows, base, k, J, T, pi, L, a):
    """A pattern row's log Σ_t π_k[t] Π_j L[j, k, s_j, t], with P(t | its scores) into ``a``, by
    log-sum-exp: for the rows whose products would underflow (many judges, small probabilities)."""
    for t in range(T):
        a[t] = math.log(pi[k, t])
    for j in range(J):
        s = int(rows[base + ROW_SCORES + j])
        if s >= 0:
            for t in range(T):
                a[t] += math.log(L[j, k, s, t])
    amax = _shifted_exp(a, a)
    tot = 0.0
    for t in range(T):
        tot += a[t]
    for t in range(T):
        a[t] /= tot
    return amax + math.log(tot)


@njit(cache=True, error_model="numpy")
def _shared_truth_loglik(rows, Q, distinct, U, J, K, M, T, pi, theta, use_re, dense, Z, R, W, power, gpi, gtheta, gZ,
                         gR, gW):
    """The shared-truth log likelihood Σ_q weight_q · log Σ_t π_k[t] Π_j L[j, k, t, s_qj] of the
    ``Q`` pattern rows ``rows`` (each: candidate, gold true level or −1, weight, J scores or −1; see
    :func:`simplex_core.model.definition.shared_truth_emission` for L); adds ``power`` times its gradient into
    the gradient arrays of π, Θ, Z, R and W. ``distinct``: the ``U`` distinct score patterns and
    each row's index among them, then where each candidate's non-gold rows start (gold rows come first,
    then the others by candidate; see :func:`_shared_truth_loglik_distinct` and
    :func:`_shared_truth_loglik_dense`, used without random effects, ``dense`` choosing between them;
    ``build_buffer`` always writes them, so this general form runs with random effects only).

    L and the gradient wrt L are stored as ``[J, K, M, T]``, the true level last, so that the inner
    loops over t read contiguous memory; 1/L is precomputed (a product is cheaper than a division in
    the per-pattern loop, which dominates the cost). A row's Π_j L is a product of probabilities, not
    an exponential of a sum of logs (T exponentials fewer a row), except where it would underflow."""
    if not use_re:  # L does not depend on the candidate
        if dense:
            return _shared_truth_loglik_dense(rows, Q, distinct, U, J, K, T, pi, theta, power, gpi, gtheta)
        return _shared_truth_loglik_distinct(rows, Q, distinct, U, J, M, T, pi, theta, power, gpi, gtheta)
    L = np.empty((J, K, M, T))
    zeta = np.zeros((J, K, M))
    for j in range(J):
        for k in range(K):
            mix = W[k] * R[j]
            for m in range(M):
                z = 0.0
                for t in range(T):
                    z += Z[k, t] * theta[j, t, m]
                zeta[j, k, m] = z
                for t in range(T):
                    L[j, k, m, t] = (1.0 - mix) * theta[j, t, m] + mix * z
    invL = 1.0 / L
    gL = np.zeros((J, K, M, T))
    a = np.empty(T)
    lik = 0.0
    for q in range(Q):
        base, k, tr, w = _pattern_row(rows, q, J)
        if tr >= 0:  # gold: the true level is observed (in logs: gold rows are few)
            ll = math.log(pi[k, tr])
            for j in range(J):
                s = int(rows[base + ROW_SCORES + j])
                if s >= 0:
                    ll += math.log(L[j, k, s, tr])
            for t in range(T):
                a[t] = 0.0
            a[tr] = 1.0
        else:  # responsibilities P(t | the answer's scores), from products (no exponentials)
            for t in range(T):
                a[t] = pi[k, t]
            for j in range(J):
                s = int(rows[base + ROW_SCORES + j])
                if s >= 0:
                    for t in range(T):
                        a[t] *= L[j, k, s, t]
            tot = 0.0
            for t in range(T):
                tot += a[t]
            if tot >= _SMALLEST_PRODUCT:
                ll = math.log(tot)
                inv = 1.0 / tot
                for t in range(T):
                    a[t] *= inv
            else:
                ll = _row_responsibilities_in_logs(rows, base, k, J, T, pi, L, a)
        lik += w * ll
        pw = power * w
        for t in range(T):
            a[t] *= pw
            gpi[k, t] += a[t] / pi[k, t]
        for j in range(J):
            s = int(rows[base + ROW_SCORES + j])
            if s >= 0:
                for t in range(T):
                    gL[j, k, s, t] += a[t] * invL[j, k, s, t]
    for j in range(J):
        for k in range(K):
            mix = W[k] * R[j]
            gmix = 0.0
            for m in range(M):
                gz = 0.0
                for t in range(T):
                    gl = gL[j, k, m, t]
                    gtheta[j, t, m] += (1.0 - mix) * gl
                    gmix += gl * (zeta[j, k, m] - theta[j, t, m])
                    gz += gl
                gz *= mix
                for t in range(T):
                    gZ[k, t] += gz * theta[j, t, m]
                    gtheta[j, t, m] += Z[k, t] * gz
            gW[k] += gmix * R[j]
            gR[j] += gmix * W[k]
    return lik


_C_SIG = numba.types.int64(numba.types.uint64, numba.types.CPointer(numba.types.double),
                           numba.types.CPointer(numba.types.double), numba.types.CPointer(numba.types.double),
                           numba.types.CPointer(numba.types.double))


@numba.cfunc(_C_SIG, cache=True, error_model="numpy")
def logp_c(dim, x_, out_, logp_, ud_):
    head = numba.carray(ud_, (1,))
    buf = numba.carray(ud_, (int(head[BUF_LENGTH]),))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (dim,))
    lp = tempered_logp_grad(x, out, buf, 1.0)[0]
    logp_[0] = lp
    if not math.isfinite(lp):
        return 4
    for i in range(dim):
        if not math.isfinite(out[i]):
            return 3
    return 0


@njit(cache=True, error_model="numpy")
def expand(x, out, buf):
    """The stored values of a point: pi [K,T], expected_score [K], theta [J,T,M], rho [J] and, with
    random effects, Z [K,T], R [J], W [K] and, in integrated mode, omega and beta_max, flattened in
    that order into ``out``."""
    J, K, M, T, P, use_re, G, n = sizes(buf)
    o = HEADER
    o += T
    tv = buf[o:o + T]; o += T
    correct = buf[o:o + T]
    integrated = buf[BUF_INTEGRATED] > 0.5
    beta = buf[BUF_BETA_MAX_UPPER] * _sigmoid(x[n - 1]) if integrated else buf[BUF_BETA_MAX]  # the ordered prior's Θ needs it
    o_pi, o_rho, o_first, o_edge, o_Z, o_R, o_W = coordinate_offsets(J, K, M, T, G, 2 if integrated else 1)
    w = 0
    tmp = np.empty(max(M, T))
    for k in range(K):
        _simplex(x[o_pi + k * (T - 1): o_pi + (k + 1) * (T - 1)], tmp[:T])
        for t in range(T):
            out[w + k * T + t] = tmp[t]
    es_off = w + K * T
    for k in range(K):
        acc = 0.0
        for t in range(T):
            acc += out[w + k * T + t] * tv[t]
        out[es_off + k] = acc
    w = es_off + K
    prior = int(buf[BUF_PRIOR])
    E = M * (M - 1) // 2
    A = np.zeros((M, M))
    theta = np.zeros((T, M))
    rows = np.zeros((T - 1, M))
    grows = np.zeros((T - 1, M))
    lam = np.zeros(T - 1)
    lg = np.zeros(M)  # Θ does not depend on s = ρ_j β_max: the log density computed alongside is unused
    cdf = np.zeros((T, M - 1))
    cuts = np.zeros(M - 1)
    for j in range(J):
        theta[:, :] = 0.0
        if prior == 3:  # ordered: every row from ρ_j, β_max, leniency and cut-points
            _ordered_rows(x[o_rho + j], beta, x[o_first + j * (M - 1): o_first + (j + 1) * (M - 1)], M, T, correct, theta,
                          cdf, cuts)
        elif prior != 0:
            _simplex(x[o_first + j * (M - 1): o_first + (j + 1) * (M - 1)], theta[0])
            _rows_forward(x, o_edge + j * G, M, T, prior, 0.0, correct, lg, lg, theta, rows, grows, lam)
        else:
            _simplex(x[o_first + j * (M - 1): o_first + (j + 1) * (M - 1)], theta[0])
            for t in range(T - 1):
                base = o_edge + (j * (T - 1) + t) * E
                pos = 0
                A[:, :] = 0.0
                for m2 in range(M - 1):
                    d = M - m2
                    _simplex(x[base + pos: base + pos + d - 1], A[m2, m2:])
                    pos += d - 1
                A[M - 1, M - 1] = 1.0
                for m2 in range(M):
                    for c in range(m2, M):
                        theta[t + 1, c] += theta[t, m2] * A[m2, c]
        for t in range(T):
            for m in range(M):
                out[w + (j * T + t) * M + m] = theta[t, m]
    w += J * T * M
    for j in range(J):
        out[w + j] = _sigmoid(x[o_rho + j])
    w += J
    if use_re:
        for k in range(K):
            _simplex(x[o_Z + k * (T - 1): o_Z + (k + 1) * (T - 1)], tmp[:T])
            for t in range(T):
                out[w + k * T + t] = tmp[t]
        w += K * T
        if integrated:  # R and W from the augmentation's V and E (see tempered_logp_grad)
            omega = buf[BUF_OMEGA_UPPER] * _sigmoid(x[n - 2])
            for j in range(J):
                out[w + j] = _sigmoid(x[o_R + j] - math.exp(x[o_R + J + j]) / (omega * J))
            w += J
            for k in range(K):
                out[w + k] = _sigmoid(x[o_W + k] - math.exp(x[o_W + K + k]) / (omega * K))
            w += K
        else:
            for j in range(J):
                out[w + j] = _sigmoid(x[o_R + j])
            w += J
            for k in range(K):
                out[w + k] = _sigmoid(x[o_W + k])
            w += K
    if integrated:
        out[w] = buf[BUF_OMEGA_UPPER] * _sigmoid(x[n - 2])
        out[w + 1] = buf[BUF_BETA_MAX_UPPER] * _sigmoid(x[n - 1])
        w += 2
    return w


_E_SIG = numba.types.int64(numba.types.uint64, numba.types.uint64, numba.types.CPointer(numba.types.double),
                           numba.types.CPointer(numba.types.double), numba.types.CPointer(numba.types.double))


@numba.cfunc(_E_SIG, cache=True, error_model="numpy")
def expand_c(dim, n_exp, x_, out_, ud_):
    head = numba.carray(ud_, (1,))
    buf = numba.carray(ud_, (int(head[BUF_LENGTH]),))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_exp,))
    expand(x, out, buf)
    return 0


# -- parallel tempering kernels (the sampler of simplex_core.inference.tempering) --------------------------------
# They live here, not in tempering.py, because numba's on-disk cache tracks only the source file of a
# function: a kernel in another file would keep running a stale copy of tempered_logp_grad after it
# changes.

#: Longest HMC trajectory, in the units of the adapted mass matrix (about one posterior SD per unit).
TRAJECTORY = 2.5
MAX_LEAPFROG = 128


@njit(cache=True, nogil=True, error_model="numpy")
def reference_log_density(x, gq, ref_mean, ref_prec, ref_lognorm):
    """log q(x) of the tempering reference, a mixture of diagonal normals (component c: mean
    ``ref_mean[c]``, precisions 1/SD ``ref_prec[c]``, ``ref_lognorm[c]`` = its log weight plus its
    log normalising constant, see :func:`reference_arrays`), its gradient into ``gq``."""
    G, n = ref_mean.shape
    lc = np.empty(G)
    for c in range(G):
        s = 0.0
        for i in range(n):
            z = (x[i] - ref_mean[c, i]) * ref_prec[c, i]
            s += z * z
        lc[c] = ref_lognorm[c] - 0.5 * s
    top = lc.max()
    total = 0.0
    for c in range(G):
        total += math.exp(lc[c] - top)
    lq = top + math.log(total)
    for i in range(n):
        gq[i] = 0.0
    for c in range(G):
        w = math.exp(lc[c] - lq)
        for i in range(n):
            gq[i] -= w * (x[i] - ref_mean[c, i]) * ref_prec[c, i] * ref_prec[c, i]
    return lq


def reference_arrays(mean: np.ndarray, sd: np.ndarray,
                     log_weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernels' form of a mixture of diagonal normals: ``(mean, 1/sd, log weight − Σ log sd −
    n log √(2π))`` per component (no logarithm left to take per density call)."""
    mean, sd = np.ascontiguousarray(mean, dtype=np.float64), np.asarray(sd, dtype=np.float64)
    log_norm = np.log(sd).sum(axis=1) + mean.shape[1] * 0.5 * math.log(2 * math.pi)
    return mean, np.ascontiguousarray(1.0 / sd), np.ascontiguousarray(np.asarray(log_weight, dtype=np.float64) - log_norm)


@njit(cache=True, nogil=True, error_model="numpy")
def ladder_logp_grad(x, g, buf, b, ref_mean, ref_prec, ref_lognorm, gq):
    """``(log density of the replica at power b, swap statistic)``, the gradient into ``g``. Without a
    reference (``ref_mean`` has no row): log prior + b · log likelihood, and the log likelihood. With
    one (:func:`reference_arrays`): (1 − b) · log q + b · log posterior, and log posterior − log q (a
    path from the reference q, sampled exactly at b = 0, to the posterior: Surjanovic et al. 2022's
    variational reference)."""
    if ref_mean.shape[0] == 0:
        return tempered_logp_grad(x, g, buf, b)
    lp = tempered_logp_grad(x, g, buf, 1.0)[0]
    lq = reference_log_density(x, gq, ref_mean, ref_prec, ref_lognorm)
    for i in range(x.shape[0]):
        g[i] = (1.0 - b) * gq[i] + b * g[i]
    return (1.0 - b) * lq + b * lp, lp - lq


@njit(cache=True, nogil=True, error_model="numpy")
def reference_weights(ref_prec, ref_lognorm):
    """The reference's component weights (summing to 1), its log normalising constants taken back out
    of ``ref_lognorm``: computed once per chain, for :func:`reference_draw`."""
    G, n = ref_prec.shape
    w = np.empty(G)
    for c in range(G):
        s = ref_lognorm[c] + n * 0.9189385332046727
        for i in range(n):
            s -= math.log(ref_prec[c, i])
        w[c] = s
    top = w.max()
    total = 0.0
    for c in range(G):
        w[c] = math.exp(w[c] - top)
        total += w[c]
    return w / total


@njit(cache=True, nogil=True, error_model="numpy")
def reference_draw(x, ref_mean, ref_prec, weights):
    """An exact draw of the reference into ``x``: a component by its weight, then its normal."""
    G, n = ref_mean.shape
    u = np.random.random()
    c = 0
    cum = weights[0]
    while u > cum and c < G - 1:
        c += 1
        cum += weights[c]
    for i in range(n):
        x[i] = ref_mean[c, i] + np.random.standard_normal() / ref_prec[c, i]


@njit(cache=True, nogil=True, error_model="numpy")
def tempered_hmc_step(x, g, tl, lik, inv_mass, eps, n_steps, b, buf, xn, gn, p, ref_mean, ref_prec, ref_lognorm, gq):
    """One HMC transition of the replica at power ``b`` (in place), diagonal metric ``inv_mass``
    (the variance scale of each coordinate), of the density :func:`ladder_logp_grad` names.
    Returns (acceptance probability, divergent 0/1)."""
    n = x.shape[0]
    kin0 = 0.0
    for i in range(n):
        p[i] = np.random.standard_normal() / math.sqrt(inv_mass[i])
        kin0 += 0.5 * p[i] * p[i] * inv_mass[i]
        xn[i] = x[i]
        gn[i] = g[i]
    tln, likn = tl[0], lik[0]
    for i in range(n):
        p[i] += 0.5 * eps * gn[i]
    for s in range(n_steps):
        for i in range(n):
            xn[i] += eps * inv_mass[i] * p[i]
        tln, likn = ladder_logp_grad(xn, gn, buf, b, ref_mean, ref_prec, ref_lognorm, gq)
        if not math.isfinite(tln):
            return 0.0, 1
        scale = eps if s < n_steps - 1 else 0.5 * eps
        for i in range(n):
            p[i] += scale * gn[i]
    kin1 = 0.0
    for i in range(n):
        if not math.isfinite(gn[i]):
            return 0.0, 1
        kin1 += 0.5 * p[i] * p[i] * inv_mass[i]
    log_a = (tln - kin1) - (tl[0] - kin0)
    if not math.isfinite(log_a):
        return 0.0, 1
    divergent = 1 if log_a < -1000.0 else 0
    acc = 1.0 if log_a >= 0.0 else math.exp(log_a)
    if np.random.random() < acc:
        for i in range(n):
            x[i] = xn[i]
            g[i] = gn[i]
        tl[0] = tln
        lik[0] = likn
    return acc, divergent


@njit(cache=True, nogil=True, error_model="numpy")
def tempering_ladder(betas, rejections):
    """Syed et al.'s schedule update: place the powers at equal steps of the estimated communication
    barrier (cumulative swap rejection rate between neighbours). ``betas`` descend from 1."""
    R = betas.shape[0]
    asc = betas[::-1].copy()          # ascending: B_MIN .. 1
    rej = rejections[::-1].copy()      # rej[i]: between asc[i] and asc[i + 1]
    lam = np.zeros(R)
    for i in range(R - 1):
        lam[i + 1] = lam[i] + max(rej[i], 1e-3)
    out = np.empty(R)
    out[0] = asc[0]
    out[R - 1] = 1.0
    for k in range(1, R - 1):
        target = lam[R - 1] * k / (R - 1)
        i = 0
        while i < R - 2 and lam[i + 1] < target:
            i += 1
        w = (target - lam[i]) / (lam[i + 1] - lam[i])
        out[k] = asc[i] + w * (asc[i + 1] - asc[i])
    return out[::-1].copy()


@njit(cache=True, nogil=True, error_model="numpy")
def tempered_chain(x0, buf, betas0, n_tune, n_draws, seed, target_accept, draws_out, stats_out, swaps_out, betas_out,
                   control, ref_mean, ref_prec, ref_lognorm, thin):
    """One tempered chain. ``x0`` [R, n] start states; every replica's step size is adapted towards
    the acceptance rate ``target_accept``; writes the cold replica's draws [n_draws, n],
    per draw (acceptance, divergent, step size, leapfrog steps) into ``stats_out`` [n_draws, 4], the
    swap acceptance rate of each neighbour pair over the draws into ``swaps_out`` [R − 1], and the
    final ladder into ``betas_out``. ``control`` (int64 [2]) is shared with the caller while the chain
    runs: the chain writes the iterations done into ``control[0]``, and returns at its next iteration
    once ``control[1]`` is non-zero (a cancel; its outputs are then incomplete). ``ref_mean``,
    ``ref_prec``, ``ref_lognorm``: the reference of :func:`ladder_logp_grad`, from
    :func:`reference_arrays` (no row: none); with one, the replica at power 0 is an exact draw of it
    each iteration. After the warm-up the chain runs
    ``n_draws · thin`` iterations and keeps every ``thin``-th cold state (a kept draw's stats are its
    own iteration's, and it is flagged divergent when any transition since the last kept one was)."""
    np.random.seed(seed)
    R, n = x0.shape
    betas = betas0.copy()
    x = x0.copy()
    g = np.zeros((R, n))
    tl = np.zeros((R, 1))
    lik = np.zeros((R, 1))
    gq = np.empty(n)
    for r in range(R):
        tl[r, 0], lik[r, 0] = ladder_logp_grad(x[r], g[r], buf, betas[r], ref_mean, ref_prec, ref_lognorm, gq)
    inv_mass = np.ones((R, n))
    xn = np.empty(n)
    gn = np.empty(n)
    p = np.empty(n)
    # dual averaging of the step size (Hoffman & Gelman 2014, as in Stan)
    log_eps = np.full(R, math.log(0.1))
    mu = np.full(R, math.log(1.0))
    hbar = np.zeros(R)
    log_eps_bar = np.zeros(R)
    da_t = np.zeros(R)
    # Stan's adaptation windows: 15% initial, then doubling windows, 10% terminal (of n_tune)
    init_buf = max(1, int(0.15 * n_tune))
    term_buf = max(1, int(0.1 * n_tune))
    win_end = min(init_buf + 25, n_tune - term_buf)  # a short warm-up gets one window
    win_size = 25
    w_count = 0
    # windowed variances of the position and of the gradient (nutpie's diagonal estimate:
    # sqrt(var x / var ∇), which reads the scale of each coordinate from the curvature too)
    w_mean = np.zeros((R, n))
    w_m2 = np.zeros((R, n))
    wg_mean = np.zeros((R, n))
    wg_m2 = np.zeros((R, n))
    windows_done = 0
    swap_try = np.zeros(R - 1)
    swap_acc = np.zeros(R - 1)
    with_reference = ref_mean.shape[0] > 0
    weights = reference_weights(ref_prec, ref_lognorm) if with_reference else np.zeros(0)
    diverged_since = 0
    for it in range(n_tune + n_draws * thin):
        if control[1] != 0:
            return
        control[0] = it
        tuning = it < n_tune
        for r in range(R):
            if with_reference and betas[r] == 0.0:
                reference_draw(x[r], ref_mean, ref_prec, weights)
                tl[r, 0], lik[r, 0] = ladder_logp_grad(x[r], g[r], buf, 0.0, ref_mean, ref_prec, ref_lognorm, gq)
                continue
            eps = math.exp(log_eps[r])
            lmax = min(MAX_LEAPFROG, max(1, int(math.ceil(TRAJECTORY / eps))))
            n_steps = 1 + int(np.random.random() * lmax)
            acc, div = tempered_hmc_step(x[r], g[r], tl[r], lik[r], inv_mass[r], eps, n_steps, betas[r], buf, xn, gn, p,
                                         ref_mean, ref_prec, ref_lognorm, gq)
            if tuning:
                da_t[r] += 1.0
                t = da_t[r]
                eta = 1.0 / (t + 10.0)
                hbar[r] = (1.0 - eta) * hbar[r] + eta * (target_accept - acc)
                log_eps[r] = mu[r] - math.sqrt(t) / 0.05 * hbar[r]
                k = t ** -0.75
                log_eps_bar[r] = k * log_eps[r] + (1.0 - k) * log_eps_bar[r]
                if init_buf <= it < n_tune - term_buf:  # Welford's variance updates
                    for i in range(n):
                        d = x[r, i] - w_mean[r, i]
                        w_mean[r, i] += d / (w_count + 1)
                        w_m2[r, i] += d * (x[r, i] - w_mean[r, i])
                        d = g[r, i] - wg_mean[r, i]
                        wg_mean[r, i] += d / (w_count + 1)
                        wg_m2[r, i] += d * (g[r, i] - wg_mean[r, i])
            elif r == 0:
                diverged_since = max(diverged_since, div)
                if (it - n_tune + 1) % thin == 0:
                    j = (it - n_tune) // thin
                    draws_out[j] = x[0]
                    stats_out[j, 0] = acc
                    stats_out[j, 1] = diverged_since
                    stats_out[j, 2] = eps
                    stats_out[j, 3] = n_steps
                    diverged_since = 0
        if tuning and init_buf <= it < n_tune - term_buf:
            w_count += 1
        # non-reversible swaps: even pairs on even iterations, odd pairs on odd ones
        for r in range(it % 2, R - 1, 2):
            log_a = (betas[r] - betas[r + 1]) * (lik[r + 1, 0] - lik[r, 0])
            a = 1.0 if log_a >= 0.0 else math.exp(log_a)
            swap_try[r] += 1.0
            swap_acc[r] += a
            if np.random.random() < a:
                for i in range(n):
                    tmp = x[r, i]
                    x[r, i] = x[r + 1, i]
                    x[r + 1, i] = tmp
                tl[r, 0], lik[r, 0] = ladder_logp_grad(x[r], g[r], buf, betas[r], ref_mean, ref_prec, ref_lognorm, gq)
                tl[r + 1, 0], lik[r + 1, 0] = ladder_logp_grad(x[r + 1], g[r + 1], buf, betas[r + 1], ref_mean, ref_prec,
                                                               ref_lognorm, gq)
        # end of an adaptation window: new metrics (and, in the first windows, a new ladder)
        if tuning and it + 1 == win_end and it + 1 <= n_tune - term_buf:
            for r in range(R):
                if w_count < 10:  # too few draws to estimate a metric: keep the one there is
                    break
                for i in range(n):
                    vx = w_m2[r, i] / max(w_count - 1, 1)
                    vg = wg_m2[r, i] / max(w_count - 1, 1)
                    inv_mass[r, i] = min(max(math.sqrt(vx / vg) if vg > 0.0 and vx > 0.0 else 1.0, 1e-10), 1e10)
                mu[r] = math.log(10.0) + log_eps[r]
                hbar[r] = 0.0
                log_eps_bar[r] = 0.0
                da_t[r] = 0.0
            # the ladder moves in the first windows only, never at the last one: the metrics of the
            # last window must belong to the final powers
            if windows_done < 3 and R > 2 and it + 1 < n_tune - term_buf:
                rej = np.empty(R - 1)
                for r in range(R - 1):
                    rej[r] = 1.0 - swap_acc[r] / max(swap_try[r], 1.0)
                betas = tempering_ladder(betas, rej)
                for r in range(R):
                    tl[r, 0], lik[r, 0] = ladder_logp_grad(x[r], g[r], buf, betas[r], ref_mean, ref_prec, ref_lognorm, gq)
            windows_done += 1
            w_count = 0
            w_mean[:, :] = 0.0
            w_m2[:, :] = 0.0
            wg_mean[:, :] = 0.0
            wg_m2[:, :] = 0.0
            swap_try[:] = 0.0
            swap_acc[:] = 0.0
            win_size *= 2
            win_end = it + 1 + win_size
            if win_end + 2 * win_size > n_tune - term_buf:
                win_end = n_tune - term_buf
        if it + 1 == n_tune:
            for r in range(R):
                log_eps[r] = log_eps_bar[r]
            swap_try[:] = 0.0
            swap_acc[:] = 0.0
    control[0] = n_tune + n_draws * thin
    for r in range(R - 1):
        swaps_out[r] = swap_acc[r] / max(swap_try[r], 1.0)
    betas_out[:] = betas


@njit(cache=True, error_model="numpy")
def expand_all(draws, out, buf):
    C, S, _ = draws.shape
    for c in range(C):
        for s in range(S):
            expand(draws[c, s], out[c, s], buf)


# -- Python side -------------------------------------------------------------------------------------

def supports(settings: "ModelSettings") -> bool:
    """Whether this fast path implements the model for these settings: every judge prior of
    :data:`PRIOR_CODES`, fixed or integrated ω and β_max, either likelihood."""
    return settings.prior in PRIOR_CODES


def _tiny_buffer() -> np.ndarray:
    """The data buffer of a one-judge, two-candidate, two-level model: enough to make numba load
    (or compile) a kernel, whatever the data, since the machine code does not depend on them."""
    from types import SimpleNamespace

    from simplex_core.model.settings import FitSettings
    from simplex_core.data.scale import Scale

    tiny = SimpleNamespace(N=np.ones((1, 2, 2)), included=np.ones((1, 2), dtype=bool), scale=Scale((0.0, 1.0)),
                           judges=("j",), candidates=("a", "b"))
    # per-judge: the tiny counts carry no answer patterns, which the (default) shared-truth likelihood needs
    return build_buffer(tiny, FitSettings(omega=1.0, likelihood="per-judge"))


def warm_up() -> None:
    """Make every numba function ready in this process (loaded from the on-disk cache, or compiled
    the first time on a machine) by one call on a tiny model, so the first fit's timing and progress
    say where the time went."""
    buf = _tiny_buffer()
    x = np.zeros(int(sizes(buf)[-1]))
    logp_grad(x, np.zeros_like(x), buf)
    expand(x, np.zeros(64), buf)


def warm_up_tempering() -> None:
    """Load (or, the first time on a machine, compile) the tempered sampler's numba kernels by one
    tiny run, so their cost is counted as compilation, not sampling."""
    buf = _tiny_buffer()
    n = int(sizes(buf)[-1])
    draws = np.zeros((1, 2, n))
    no_reference = np.zeros((0, n))
    tempered_chain(np.zeros((2, n)), buf, np.array([1.0, 0.5]), 2, 2, 1, 0.8, draws[0], np.zeros((2, 4)), np.zeros(1),
                   np.zeros(2), np.zeros(2, dtype=np.int64), no_reference, no_reference, np.zeros(0), 1)
    reference = reference_arrays(np.zeros((1, n)), np.ones((1, n)), np.zeros(1))
    tempered_chain(np.zeros((2, n)), buf, np.array([1.0, 0.0]), 2, 2, 1, 0.8, draws[0], np.zeros((2, 4)), np.zeros(1),
                   np.zeros(2), np.zeros(2, dtype=np.int64), *reference, 1)
    expand_all(draws, np.zeros((1, 2, 64)), buf)


def build_buffer(counts: "CountsLike", settings: "ModelSettings") -> np.ndarray:
    """The float64 data buffer the compiled callbacks read (see the module docstring)."""
    from simplex_core.model.settings import BETA_MAX_UPPER, OMEGA_UPPER
    from simplex_core.model.definition import included_pairs, require_patterns
    from simplex_core.model.priors import judge_prior_on, parse_delta

    if not supports(settings):
        raise ValueError(f"the fast path implements the judge priors {', '.join(PRIOR_CODES)}; got prior {settings.prior!r}.")
    scale = counts.scale
    N = np.asarray(counts.N, dtype=np.float64)
    J, K, M = N.shape
    T = scale.n_true
    head = np.zeros(HEADER)
    if settings.likelihood == "shared-truth":
        patterns = require_patterns(counts)
        jj = kk = np.zeros(0, dtype=np.int64)  # no per-pair multinomials
        # gold rows first, then each candidate's other rows together (the dense kernel's layout)
        gold = np.asarray(patterns.truth) >= 0
        order = np.lexsort((patterns.candidate, ~gold))
        scores = np.asarray(patterns.scores).reshape(patterns.n_patterns, J)[order]
        candidate = np.asarray(patterns.candidate)[order]
        rows = np.column_stack([candidate, patterns.truth[order], patterns.weight[order], scores])
        head[BUF_SHARED_TRUTH], head[BUF_PATTERN_ROWS] = 1.0, patterns.n_patterns
        # the distinct score patterns over all candidates and each row's index among them: without
        # random effects the kernel computes the judges' product once per distinct pattern
        distinct, index = np.unique(scores, axis=0, return_inverse=True)
        head[BUF_DISTINCT_PATTERNS] = distinct.shape[0]
        n_gold = int(gold.sum())  # where each candidate's non-gold rows start; the gold rows end at starts[0]
        starts = n_gold + np.searchsorted(candidate[n_gold:], np.arange(K + 1))
        head[BUF_DENSE_PASSES] = 1.0 if K * distinct.shape[0] <= DENSE_PATTERN_RATIO * patterns.n_patterns else 0.0
        after_rows = np.concatenate([distinct.ravel(), np.ravel(index), starts]).astype(np.float64)
    else:
        jj, kk = included_pairs(counts)
        rows = np.zeros((0, 0))
        after_rows = np.zeros(0)
    head[BUF_J], head[BUF_K], head[BUF_M], head[BUF_T] = J, K, M, T
    head[BUF_P] = len(jj)
    head[BUF_RANDOM_EFFECTS] = 1.0 if settings.has_random_effects else 0.0
    head[BUF_OMEGA] = settings.omega
    head[BUF_BETA_MAX] = settings.beta_max
    if settings.integrated:
        head[BUF_INTEGRATED], head[BUF_OMEGA_UPPER], head[BUF_BETA_MAX_UPPER] = 1.0, OMEGA_UPPER, BETA_MAX_UPPER
    head[BUF_PRIOR] = PRIOR_CODES[judge_prior_on(settings.prior, M)]
    buf = np.concatenate([
        head, parse_delta(settings.delta, T), np.asarray(scale.true_values, dtype=np.float64),
        np.asarray(scale.true_index, dtype=np.float64), jj.astype(np.float64), kk.astype(np.float64),
        N[jj, kk].ravel(), np.asarray(rows, dtype=np.float64).ravel(), after_rows,
    ])
    buf[BUF_LENGTH] = buf.size
    return np.ascontiguousarray(buf)


def n_unconstrained(counts: "CountsLike", settings: "ModelSettings") -> int:
    """Length of the unconstrained vector for these counts and settings."""
    return int(sizes(build_buffer(counts, settings))[-1])


def logp_and_grad(counts: "CountsLike", settings: "ModelSettings", x: np.ndarray) -> tuple[float, np.ndarray]:
    """Log density (up to a constant) and gradient at the unconstrained point ``x`` (for tests)."""
    buf = build_buffer(counts, settings)
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.shape != (int(sizes(buf)[-1]),):
        raise ValueError(f"x has shape {x.shape}; expected ({int(sizes(buf)[-1])},).")
    g = np.zeros_like(x)
    return float(logp_grad(x, g, buf)), g


def flat_from_pymc_point(point: dict[str, np.ndarray], counts: "CountsLike", settings: "ModelSettings") -> np.ndarray:
    """The unconstrained vector of this module for a point of PyMC's value variables (``pi_simplex__``,
    ``rho_logodds__``, ``theta_first_row_simplex__``, ``edge_weights_<d>_simplex__`` (or the diagonal
    prior's ``theta_rows_simplex__``, the mixing prior's ``innovation_simplex__`` and
    ``mixing_weight_logodds__``, the ordered prior's ``leniency`` and ``log_gap``), ``Z_simplex__``,
    ``R_logodds__``, ``W_logodds__`` or, in integrated mode, ``V_R_logodds__``, ``E_R_log__``,
    ``V_W_logodds__``, ``E_W_log__``, then ``omega_interval__``, ``beta_max_interval__``), e.g.
    ``model.initial_point()``; a gradient dict in the same names maps the same way."""
    from simplex_core.model.definition import weight_propagation_groups
    from simplex_core.model.priors import judge_prior_on

    J, K, M = np.asarray(counts.N).shape
    T = counts.scale.n_true
    E = M * (M - 1) // 2
    prior = judge_prior_on(settings.prior, M)
    parts = [np.asarray(point["pi_simplex__"]).ravel(), np.asarray(point["rho_logodds__"]).ravel()]
    if prior == "ordered":  # per judge: leniency, then the log gaps of the cut-points (no judge block)
        lenient = np.asarray(point["leniency"], dtype=float).reshape(J, 1)
        gaps = np.asarray(point["log_gap"], dtype=float).reshape(J, M - 2) if M > 2 else np.zeros((J, 0))
        parts.append(np.concatenate([lenient, gaps], axis=1).ravel())
    elif prior == "diagonal":  # theta_rows [J, T, M − 1]: row 0 is the first row, the rest the judge block
        rows = np.asarray(point["theta_rows_simplex__"])
        parts += [rows[:, 0].ravel(), rows[:, 1:].ravel()]
    elif prior == "mixing":  # per row 1..T−1 the innovation's coordinates, then λ's log-odds
        eps = np.asarray(point["innovation_simplex__"])  # [J, T − 1, M − 1]
        lam = np.asarray(point["mixing_weight_logodds__"])  # [J, T − 1]
        parts += [np.asarray(point["theta_first_row_simplex__"]).ravel(),
                  np.concatenate([eps, lam[..., None]], axis=-1).ravel()]
    else:
        parts.append(np.asarray(point["theta_first_row_simplex__"]).ravel())
        edge = np.zeros((J, T - 1, E))
        for d, (nodes, _) in weight_propagation_groups(counts.scale).groups.items():
            arr = np.asarray(point[f"edge_weights_{d}_simplex__"])  # [J, n_nodes, d - 1]
            for i, (t, m2) in enumerate(nodes):
                pos = sum(M - mm - 1 for mm in range(m2))
                edge[:, t, pos:pos + d - 1] = arr[:, i, :]
        parts.append(edge.ravel())
    if settings.has_random_effects:
        parts.append(np.asarray(point["Z_simplex__"]).ravel())
        if settings.integrated:  # the augmentation's V and E of R, then of W
            parts += [np.asarray(point[f"{v}_{name}{t}"], dtype=float).ravel()
                      for name in ("R", "W") for v, t in (("V", "_logodds__"), ("E", "_log__"))]
        else:
            parts += [np.asarray(point["R_logodds__"], dtype=float).ravel(),
                      np.asarray(point["W_logodds__"], dtype=float).ravel()]
    if settings.integrated:
        parts += [np.asarray(point["omega_interval__"]).ravel(), np.asarray(point["beta_max_interval__"]).ravel()]
    return np.concatenate(parts)


def stored_variables(counts: "CountsLike", settings: "ModelSettings") -> tuple[list[str], list[tuple[int, ...]], dict[str, tuple[str, ...]]]:
    """Names, shapes and dims of the posterior variables the fast path stores (the contract names)."""
    J, K, M = np.asarray(counts.N).shape
    T = counts.scale.n_true
    names = ["pi", "expected_score", "theta", "rho"]
    shapes = [(K, T), (K,), (J, T, M), (J,)]
    dims = {"pi": ("candidate", "true_level"), "expected_score": ("candidate",),
            "theta": ("judge", "true_level", "level"), "rho": ("judge",)}
    if settings.has_random_effects:
        names += ["Z", "R", "W"]
        shapes += [(K, T), (J,), (K,)]
        dims.update({"Z": ("candidate", "true_level"), "R": ("judge",), "W": ("candidate",)})
    if settings.integrated:  # scalars, named as in the PyMC graph
        names += ["omega", "beta_max"]
        shapes += [(), ()]
    return names, shapes, dims


def stored_slices(shapes: list[tuple[int, ...]]) -> list[slice]:
    """Where each stored variable sits in the flat vector that :func:`expand` writes."""
    ends = np.cumsum([int(np.prod(shape)) for shape in shapes])
    return [slice(int(end - np.prod(shape)), int(end)) for shape, end in zip(shapes, ends)]


def stored_coords(counts: "CountsLike") -> dict[str, list[str]]:
    """The coordinates of the stored variables' dimensions."""
    return {"candidate": list(counts.candidates), "judge": list(counts.judges),
            "true_level": list(counts.scale.true_labels), "level": list(counts.scale.labels)}
