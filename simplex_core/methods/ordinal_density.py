"""The ordinal many-facet model's log density and gradient in numba (engine ``'numba'`` of
:mod:`simplex_core.methods.ordinal`), compiled once per machine and cached on disk.

The unconstrained vector holds, in this order (PyMC's order of creation in
:func:`simplex_core.methods.ordinal.build_ordinal_model`): ``quality_raw`` [K]; when there are item effects,
``log sigma_item`` and ``z_item`` [I]; when there are answer effects, ``log sigma_answer`` and
``z_answer`` [K, I] (row-major); ``severity`` [J] (each judge's lowest cutpoint); ``log_gap``
[rows, M - 2] with rows = J (per-judge cutpoints) or 1 (shared). The density equals the PyMC
model's up to a constant (HalfStudentT priors with the log transform's Jacobian).
"""

from __future__ import annotations

import math

import numpy as np
import numba
from numba import njit

PRIOR_SD = 2.5
NU = 3.0


@njit(cache=True, error_model="numpy")
def log_sigmoid_pair(a):
    """(log sigmoid(a), sigmoid(-a)) from one exponential: a log term and its derivative in a."""
    if a >= 0:
        ea = math.exp(-a)
        return -math.log1p(ea), ea / (1.0 + ea)
    ea = math.exp(a)
    return a - math.log1p(ea), 1.0 / (1.0 + ea)


@njit(cache=True, error_model="numpy")
def half_t(x, grad, pos, lp):
    # HalfStudentT(nu, s) on sigma = exp(x[pos]), with the log transform's Jacobian
    sig = math.exp(x[pos])
    t = sig * sig / (NU * PRIOR_SD * PRIOR_SD)
    grad[pos] += -(NU + 1.0) * t / (1.0 + t) + 1.0
    return lp - 0.5 * (NU + 1.0) * math.log1p(t) + x[pos], sig


# nogil: nutpie runs the chains in threads of this process, so each chain's gradient runs beside the others
@njit(cache=True, error_model="numpy", nogil=True)
def logp_grad(x, item, cand, judge, level, K, I, J, M, item_fx, answer_fx, gap_rows):
    grad = np.zeros_like(x)
    lp = 0.0
    o = 0
    q_raw = x[o:o + K]
    oq = o
    o += K
    q = q_raw - q_raw.mean()
    for k in range(K):
        lp -= 0.5 * (q_raw[k] / PRIOR_SD) ** 2
        grad[oq + k] -= q_raw[k] / (PRIOR_SD * PRIOR_SD)
    u = np.zeros(I)
    s_i = 0.0
    osi = -1
    if item_fx:
        osi = o
        lp, s_i = half_t(x, grad, o, lp)
        o += 1
        z = x[o:o + I]
        for i in range(I):
            lp -= 0.5 * z[i] * z[i]
            grad[o + i] -= z[i]
        u = s_i * (z - z.mean())
        o += I
    e = np.zeros((K, I))
    s_e = 0.0
    ose = -1
    if answer_fx:
        ose = o
        lp, s_e = half_t(x, grad, o, lp)
        o += 1
        for k in range(K):
            zk = x[o + k * I:o + (k + 1) * I]
            zbar = zk.mean()
            for i in range(I):
                lp -= 0.5 * zk[i] * zk[i]
                grad[o + k * I + i] -= zk[i]
                e[k, i] = s_e * (zk[i] - zbar)
        o += K * I
    ofirst = o
    n_cut = M - 1
    cut = np.empty((J, n_cut))
    for j in range(J):
        cut[j, 0] = x[o + j]
        lp -= 0.5 * (x[o + j] / PRIOR_SD) ** 2
        grad[o + j] -= x[o + j] / (PRIOR_SD * PRIOR_SD)
    o += J
    og = o
    n_gap = M - 2
    for r in range(gap_rows * n_gap):
        lp -= 0.5 * x[o + r] * x[o + r]
        grad[o + r] -= x[o + r]
    for j in range(J):
        row = j if gap_rows > 1 else 0
        for m in range(1, n_cut):
            cut[j, m] = cut[j, m - 1] + math.exp(x[og + row * n_gap + m - 1])
    g_ans = np.zeros((K, I))
    g_cut = np.zeros((J, n_cut))
    for n in range(level.shape[0]):
        k = int(cand[n])  # int(): the C callback passes the codes as doubles in its data buffer
        i = int(item[n])
        j = int(judge[n])
        y = int(level[n])
        eta = q[k] + u[i] + e[k, i]
        if y == 0:
            lsa, sna = log_sigmoid_pair(cut[j, 0] - eta)
            lp += lsa
            g_cut[j, 0] += sna
            g_ans[k, i] -= sna
        elif y == n_cut:
            # log sigmoid(-b), b = c - eta, and its derivative in b, -sigmoid(b)
            lsb, sb = log_sigmoid_pair(eta - cut[j, n_cut - 1])
            lp += lsb
            g_cut[j, n_cut - 1] -= sb
            g_ans[k, i] += sb
        else:
            a = cut[j, y] - eta
            b = cut[j, y - 1] - eta
            # log(sigmoid(a) - sigmoid(b)) = log sigmoid(a) + log sigmoid(-b) + log(1 - exp(-(a - b)))
            lsa, sna = log_sigmoid_pair(a)
            lsb, sb = log_sigmoid_pair(-b)
            t = -math.expm1(b - a)  # 1 - exp(-(a - b)), in (0, 1]
            lp += lsa + lsb + math.log(t)
            # derivative of log(1 - exp(b - a)) in a; a float named like the int gap index above, which numba allows
            r = (1.0 - t) / t  # type: ignore[assignment]
            da = sna + r
            db = -sb - r
            g_cut[j, y] += da
            g_cut[j, y - 1] += db
            g_ans[k, i] -= da + db
    g_q = g_ans.sum(axis=1)
    gq_bar = g_q.mean()
    for k in range(K):
        grad[oq + k] += g_q[k] - gq_bar
    if item_fx:
        g_u = g_ans.sum(axis=0)
        gu_bar = g_u.mean()
        acc = 0.0
        for i in range(I):
            grad[osi + 1 + i] += s_i * (g_u[i] - gu_bar)
            acc += g_u[i] * u[i]
        grad[osi] += acc
    if answer_fx:
        acc = 0.0
        for k in range(K):
            gbar = g_ans[k].mean()
            for i in range(I):
                grad[ose + 1 + k * I + i] += s_e * (g_ans[k, i] - gbar)
                acc += g_ans[k, i] * e[k, i]
        grad[ose] += acc
    for j in range(J):
        row = j if gap_rows > 1 else 0
        tail = 0.0
        for m in range(n_cut - 1, 0, -1):
            tail += g_cut[j, m]
            grad[og + row * n_gap + m - 1] += math.exp(x[og + row * n_gap + m - 1]) * tail
        grad[ofirst + j] += tail + g_cut[j, 0]
    return lp, grad


# -- the C callbacks nutpie calls (as the simplex model's fast engine: no Python per gradient) ------

HEADER = 9  # buffer: [HEADER, K, I, J, M, item effects, answer effects, gap rows, N], then item, candidate, judge, level


def build_buffer(item, cand, judge, level, K, I, J, M, item_fx, answer_fx, gap_rows) -> np.ndarray:
    """Every input of :func:`logp_grad` but the point, in one float64 buffer (nutpie's user data)."""
    n = len(level)
    head = np.array([HEADER, K, I, J, M, float(item_fx), float(answer_fx), gap_rows, n], dtype=np.float64)
    return np.concatenate([head, np.asarray(item, float), np.asarray(cand, float), np.asarray(judge, float),
                           np.asarray(level, float)])


@njit(cache=True, error_model="numpy", nogil=True)
def logp_grad_buffer(x, buf):
    K = int(buf[1])
    I = int(buf[2])
    J = int(buf[3])
    M = int(buf[4])
    n = int(buf[8])
    o = HEADER
    return logp_grad(x, buf[o:o + n], buf[o + n:o + 2 * n], buf[o + 2 * n:o + 3 * n], buf[o + 3 * n:o + 4 * n],
                     K, I, J, M, buf[5] > 0.5, buf[6] > 0.5, int(buf[7]))


_C_SIG = numba.types.int64(numba.types.uint64, numba.types.CPointer(numba.types.double),
                           numba.types.CPointer(numba.types.double), numba.types.CPointer(numba.types.double),
                           numba.types.CPointer(numba.types.double))


@numba.cfunc(_C_SIG, cache=True, error_model="numpy")
def logp_c(dim, x_, out_, logp_, ud_):
    head = numba.carray(ud_, (HEADER,))
    n_buf = HEADER + 4 * int(head[8])
    buf = numba.carray(ud_, (n_buf,))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (dim,))
    lp, grad = logp_grad_buffer(x, buf)
    logp_[0] = lp
    if not math.isfinite(lp):
        return 4
    for i in range(dim):
        out[i] = grad[i]
        if not math.isfinite(grad[i]):
            return 3
    return 0


@njit(cache=True, error_model="numpy")
def expand(x, out, buf):
    """The stored values of a point: quality [K] (centred), severity [J], then sigma_item and
    sigma_answer when the model has them."""
    K = int(buf[1])
    I = int(buf[2])
    J = int(buf[3])
    item_fx = buf[5] > 0.5
    answer_fx = buf[6] > 0.5
    mean = 0.0
    for k in range(K):
        mean += x[k]
    mean /= K
    for k in range(K):
        out[k] = x[k] - mean
    o = K
    w = K
    s_item = 0.0
    s_answer = 0.0
    if item_fx:
        s_item = math.exp(x[o])
        o += 1 + I
    if answer_fx:
        s_answer = math.exp(x[o])
        o += 1 + K * I
    for j in range(J):
        out[w + j] = x[o + j]
    w += J
    if item_fx:
        out[w] = s_item
        w += 1
    if answer_fx:
        out[w] = s_answer
        w += 1
    return w


_E_SIG = numba.types.int64(numba.types.uint64, numba.types.uint64, numba.types.CPointer(numba.types.double),
                           numba.types.CPointer(numba.types.double), numba.types.CPointer(numba.types.double))


@numba.cfunc(_E_SIG, cache=True, error_model="numpy")
def expand_c(dim, n_exp, x_, out_, ud_):
    head = numba.carray(ud_, (HEADER,))
    buf = numba.carray(ud_, (HEADER + 4 * int(head[8]),))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_exp,))
    expand(x, out, buf)
    return 0
