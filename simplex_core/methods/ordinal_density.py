"""The ordinal many-facet model's log density and gradient in numba (engine ``'numba'`` of
:mod:`simplex_core.methods.ordinal`), compiled once per machine and cached on disk.

The unconstrained vector holds, in this order (PyMC's order of creation in
:func:`simplex_core.methods.ordinal.build_ordinal_model`): ``quality`` [K - 1] (PyMC's zero-sum
transform of a ``ZeroSumNormal``); when there are item effects, ``log sigma_item`` and the item
effects [I - 1] (zero-sum coordinates: centred, ``u = extend(z)``, or non-centred,
``u = sigma_item * extend(z)``); when there are answer effects, ``log sigma_answer`` and
``z_answer`` [K, I - 1] (row-major, non-centred); ``severity`` [J] (each judge's lowest cutpoint);
``log_gap`` [rows, M - 2] with rows = J (per-judge cutpoints) or 1 (shared). The density equals the
PyMC model's up to a constant (HalfStudentT priors with the log transform's Jacobian).

The likelihood runs over *groups* of judgments: the distinct (answer, judge, level) triples with
their counts (:func:`pack`), so repeated judgments cost one term. Where the linear predictors and
cutpoints are moderate (every ``|eta| + |c| <= FAST_BOUND``) it is computed from exponentials made
once per answer and per cutpoint: ``exp(eta - c) = exp(eta) * exp(-c)``; the ``log(1 + e)`` terms
are multiplied together and logged once per many judgments, and the linear parts come from counts,
so a judgment costs a few multiplications and a division instead of several ``exp``/``log`` calls. Elsewhere (far in the
tails, e.g. early warm-up) each group takes the numerically stable per-term form.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numba
from numba import njit

PRIOR_SD = 2.5
NU = 3.0
FAST_BOUND = 100.0  # |eta| + |c| <= 100: each factor 1 + exp(eta - c) < 3e43, products stay finite
_PROD_FLUSH = 1e200  # log the running product before it can overflow

ITEM_NONE, ITEM_NONCENTRED, ITEM_CENTRED = 0, 1, 2


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


@njit(cache=True, error_model="numpy")
def zero_sum_extend(z, out):
    """PyMC's ``ZeroSumTransform.extend_axis``: n - 1 free coordinates -> n values summing to zero
    (an isometry: ``sum(out**2) == sum(z**2)``)."""
    m = z.shape[0]
    n = m + 1.0
    s = 0.0
    for t in range(m):
        s += z[t]
    norm = s / (math.sqrt(n) + n)
    for t in range(m):
        out[t] = z[t] - norm
    out[m] = -s / math.sqrt(n)


@njit(cache=True, error_model="numpy")
def zero_sum_pullback(g, grad, o, scale):
    """Add ``scale *`` the transpose of :func:`zero_sum_extend`'s Jacobian times ``g`` [n] to
    ``grad[o:o + n - 1]``."""
    m = g.shape[0] - 1
    n = m + 1.0
    head = 0.0
    for t in range(m):
        head += g[t]
    a = head / (math.sqrt(n) + n) + g[m] / math.sqrt(n)
    for t in range(m):
        grad[o + t] += scale * (g[t] - a)


# nogil: nutpie runs the chains in threads of this process, so each chain's gradient runs beside the others
@njit(cache=True, error_model="numpy", nogil=True)
def logp_grad(x, ans_k, ans_i, g_a, g_j, g_y, g_w, w_jy, ev_ptr, ev_jm, ev_w, n_pos, K, I, J, M, item_mode,
              answer_fx, gap_rows):
    """Log density and gradient at ``x``, over the judgments as :func:`pack` gives them. Codes may
    arrive as doubles (the C callback's buffer)."""
    grad = np.zeros_like(x)
    lp = 0.0
    o = 0
    var0 = PRIOR_SD * PRIOR_SD
    oq = o
    q = np.empty(K)
    zero_sum_extend(x[o:o + K - 1], q)
    for t in range(K - 1):
        lp -= 0.5 * x[o + t] * x[o + t] / var0
        grad[o + t] -= x[o + t] / var0
    o += K - 1
    u = np.zeros(I)
    s_i = 0.0
    osi = -1
    if item_mode != ITEM_NONE:
        osi = o
        lp, s_i = half_t(x, grad, o, lp)
        o += 1
        zero_sum_extend(x[o:o + I - 1], u)
        if item_mode == ITEM_CENTRED:  # u ~ ZeroSumNormal(sigma_item): I - 1 degrees of freedom
            ss = 0.0
            for t in range(I - 1):
                ss += x[o + t] * x[o + t]
                grad[o + t] -= x[o + t] / (s_i * s_i)
            lp -= 0.5 * ss / (s_i * s_i) + (I - 1) * x[osi]
            grad[osi] += ss / (s_i * s_i) - (I - 1)
        else:
            for t in range(I - 1):
                lp -= 0.5 * x[o + t] * x[o + t]
                grad[o + t] -= x[o + t]
            for i in range(I):
                u[i] *= s_i
        o += I - 1
    e = np.zeros((K if answer_fx else 1, I if answer_fx else 1))  # no K x I work without answer effects
    s_e = 0.0
    ose = -1
    if answer_fx:
        ose = o
        lp, s_e = half_t(x, grad, o, lp)
        o += 1
        for k in range(K):
            zk = x[o + k * (I - 1):o + (k + 1) * (I - 1)]
            zero_sum_extend(zk, e[k])
            for t in range(I - 1):
                lp -= 0.5 * zk[t] * zk[t]
                grad[o + k * (I - 1) + t] -= zk[t]
            for i in range(I):
                e[k, i] *= s_e
        o += K * (I - 1)
    ofirst = o
    n_cut = M - 1
    cut = np.empty((J, n_cut))
    for j in range(J):
        cut[j, 0] = x[o + j]
        lp -= 0.5 * x[o + j] * x[o + j] / var0
        grad[o + j] -= x[o + j] / var0
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

    A = ans_k.shape[0]
    eta = np.empty(A)
    for a in range(A):
        k = int(ans_k[a])
        i = int(ans_i[a])
        eta[a] = q[k] + u[i]
        if answer_fx:
            eta[a] += e[k, i]
    # a bound on every |eta| + |c| from the parts, so that exp(eta) can be made from K + I exponentials
    big = np.abs(q).max() + np.abs(u).max() + np.abs(cut).max()
    if answer_fx:
        big += np.abs(e).max()
    g_eta = np.zeros(A)
    g_cut = np.zeros((J, n_cut))
    if big <= FAST_BOUND:
        P = np.empty(A)
        exp_q = np.exp(q)
        exp_u = np.exp(u)
        for a in range(A):
            k = int(ans_k[a])
            i = int(ans_i[a])
            P[a] = exp_q[k] * exp_u[i]
            if answer_fx:
                P[a] *= math.exp(e[k, i])
        lp += _events_fast(eta, P, cut, ev_ptr, ev_jm, ev_w, n_pos, w_jy, g_eta, g_cut)
    else:
        lp += _groups_stable(eta, cut, g_a, g_j, g_y, g_w, n_cut, g_eta, g_cut)

    g_q = np.zeros(K)
    g_u = np.zeros(I)
    g_e = np.zeros((K if answer_fx else 1, I if answer_fx else 1))
    for a in range(A):
        k = int(ans_k[a])
        i = int(ans_i[a])
        g_q[k] += g_eta[a]
        g_u[i] += g_eta[a]
        if answer_fx:
            g_e[k, i] += g_eta[a]
    zero_sum_pullback(g_q, grad, oq, 1.0)
    if item_mode == ITEM_CENTRED:
        zero_sum_pullback(g_u, grad, osi + 1, 1.0)
    elif item_mode == ITEM_NONCENTRED:
        zero_sum_pullback(g_u, grad, osi + 1, s_i)
        acc = 0.0
        for i in range(I):
            acc += g_u[i] * u[i]
        grad[osi] += acc
    if answer_fx:
        acc = 0.0
        for k in range(K):
            zero_sum_pullback(g_e[k], grad, ose + 1 + k * (I - 1), s_e)
            for i in range(I):
                acc += g_e[k, i] * e[k, i]
        grad[ose] += acc
    for j in range(J):
        row = j if gap_rows > 1 else 0
        tail = 0.0
        for m in range(n_cut - 1, 0, -1):
            tail += g_cut[j, m]
            grad[og + row * n_gap + m - 1] += math.exp(x[og + row * n_gap + m - 1]) * tail
        grad[ofirst + j] += tail + g_cut[j, 0]
    return lp, grad


@njit(cache=True, error_model="numpy", nogil=True)
def _events_fast(eta, P, cut, ev_ptr, ev_jm, ev_w, n_pos, w_jy, g_eta, g_cut):
    """The likelihood from exponentials made once per answer and cutpoint (every
    ``|eta| + |c| <= FAST_BOUND``; ``P = exp(eta)``). With e_m = exp(eta - c_m) = P * C_m, a judgment at level y is
    -log(1 + e_y) (y below the top) - log(1 + e_(y-1)) (y above the lowest) + a linear part: eta when
    y > 0, plus log D_y = log(exp(-c_(y-1)) - exp(-c_y)) between two cutpoints, or -c_top at the top.
    The softplus terms are the *events* (answer, cutpoint, count); the linear parts need only counts."""
    J = cut.shape[0]
    n_cut = cut.shape[1]
    M = n_cut + 1
    C = np.empty(J * n_cut)
    lp = 0.0
    for j in range(J):
        for m in range(n_cut):
            C[j * n_cut + m] = math.exp(-cut[j, m])
        for y in range(1, n_cut):  # log D of the levels between two cutpoints, once per (judge, level)
            w = w_jy[j * M + y]
            if w == 0.0:
                continue
            gap = cut[j, y] - cut[j, y - 1]
            one_minus = -math.expm1(-gap)
            r = math.exp(-gap) / one_minus  # d log(1 - exp(-gap)) / d gap
            lp += w * (math.log(one_minus) - cut[j, y - 1])
            g_cut[j, y] += w * r
            g_cut[j, y - 1] -= w * (1.0 + r)
        w_top = w_jy[j * M + n_cut]
        lp -= w_top * cut[j, n_cut - 1]
        g_cut[j, n_cut - 1] -= w_top
    g_c = np.zeros(J * n_cut)
    prod = 1.0
    for a in range(eta.shape[0]):
        lp += n_pos[a] * eta[a]
        acc = 0.0
        for t in range(int(ev_ptr[a]), int(ev_ptr[a + 1])):
            jm = int(ev_jm[t])
            w = ev_w[t]
            ev = P[a] * C[jm]
            f = 1.0 + ev
            s = w * ev / f
            acc += s
            g_c[jm] += s
            if w == 1.0:
                prod *= f
                if prod > _PROD_FLUSH:
                    lp -= math.log(prod)
                    prod = 1.0
            else:
                lp -= w * math.log(f)
        g_eta[a] += n_pos[a] - acc
    for j in range(J):
        for m in range(n_cut):
            g_cut[j, m] += g_c[j * n_cut + m]
    return lp - math.log(prod)


@njit(cache=True, error_model="numpy", nogil=True)
def _groups_stable(eta, cut, g_a, g_j, g_y, g_w, n_cut, g_eta, g_cut):
    """The same likelihood term by term in the numerically stable form (any eta and cutpoints)."""
    lp = 0.0
    for n in range(g_a.shape[0]):
        a = int(g_a[n])
        j = int(g_j[n])
        y = int(g_y[n])
        w = g_w[n]
        if y == 0:
            lsa, sna = log_sigmoid_pair(cut[j, 0] - eta[a])
            lp += w * lsa
            g_cut[j, 0] += w * sna
            g_eta[a] -= w * sna
        elif y == n_cut:
            # log sigmoid(-b), b = c - eta, and its derivative in b, -sigmoid(b)
            lsb, sb = log_sigmoid_pair(eta[a] - cut[j, n_cut - 1])
            lp += w * lsb
            g_cut[j, n_cut - 1] -= w * sb
            g_eta[a] += w * sb
        else:
            hi = cut[j, y] - eta[a]
            lo = cut[j, y - 1] - eta[a]
            # log(sigmoid(hi) - sigmoid(lo)) = log sigmoid(hi) + log sigmoid(-lo) + log(1 - exp(-(hi - lo)))
            lsa, sna = log_sigmoid_pair(hi)
            lsb, sb = log_sigmoid_pair(-lo)
            t = -math.expm1(lo - hi)  # in (0, 1]
            lp += w * (lsa + lsb + math.log(t))
            r = (1.0 - t) / t  # derivative of log(1 - exp(lo - hi)) in hi
            d_hi = sna + r
            d_lo = -sb - r
            g_cut[j, y] += w * d_hi
            g_cut[j, y - 1] += w * d_lo
            g_eta[a] -= w * (d_hi + d_lo)
    return lp


class Packed(NamedTuple):
    """The judgments as :func:`logp_grad` reads them."""

    ans_k: np.ndarray  # [A] each answer's candidate
    ans_i: np.ndarray  # [A] each answer's item
    g_a: np.ndarray  # [G] each group's answer (groups: distinct (answer, judge, level), by level then answer)
    g_j: np.ndarray  # [G] its judge
    g_y: np.ndarray  # [G] its level
    g_w: np.ndarray  # [G] its count of judgments
    w_jy: np.ndarray  # [J * M] judgments per (judge, level)
    ev_ptr: np.ndarray  # [A + 1] answer a's events are ev_ptr[a]:ev_ptr[a + 1]
    ev_jm: np.ndarray  # [E] each event's cutpoint, j * (M - 1) + m
    ev_w: np.ndarray  # [E] its count
    n_pos: np.ndarray  # [A] judgments of each answer above the lowest level


def pack(item, cand, judge, level, K, J, M) -> Packed:
    """The judgments as groups (the stable form's terms) and as events (the fast form's): see :class:`Packed`."""
    item = np.asarray(item, dtype=np.int64)
    cand = np.asarray(cand, dtype=np.int64)
    judge = np.asarray(judge, dtype=np.int64)
    level = np.asarray(level, dtype=np.int64)
    answer_key = item * K + cand
    answers, ans_code = np.unique(answer_key, return_inverse=True)
    ans_code = ans_code.ravel()
    A = len(answers)
    # level first: the stable form branches on the level, and a sorted run of levels predicts each branch
    group_key = (level * A + ans_code) * J + judge
    groups, counts = np.unique(group_key, return_counts=True)
    g_j = groups % J
    g_a = (groups // J) % A
    g_y = groups // (J * A)
    w_jy = np.bincount(judge * M + level, minlength=J * M).astype(np.float64)
    n_cut = M - 1
    below_top, above_low = level < n_cut, level > 0
    ev_a = np.concatenate([ans_code[below_top], ans_code[above_low]])
    ev_cut = np.concatenate([judge[below_top] * n_cut + level[below_top], judge[above_low] * n_cut + level[above_low] - 1])
    events, ev_w = np.unique(ev_a * (J * n_cut) + ev_cut, return_counts=True)
    ev_ptr = np.searchsorted(events // (J * n_cut), np.arange(A + 1))
    n_pos = np.bincount(ans_code[above_low], minlength=A).astype(np.float64)
    return Packed(answers % K, answers // K, g_a, g_j, g_y, counts.astype(np.float64), w_jy, ev_ptr,
                  events % (J * n_cut), ev_w.astype(np.float64), n_pos)


# -- the C callbacks nutpie calls (as the simplex model's fast engine: no Python per gradient) ------

# the buffer: a header (positions named here), then the arrays of :class:`Packed` in its order
H_LEN, H_K, H_I, H_J, H_M, H_ITEM_MODE, H_ANSWER_FX, H_GAP_ROWS, H_A, H_G, H_E = range(11)
HEADER = 11


def build_buffer(item, cand, judge, level, K, I, J, M, item_mode, answer_fx, gap_rows) -> np.ndarray:
    """Every input of :func:`logp_grad` but the point, in one float64 buffer (nutpie's user data)."""
    packed = pack(item, cand, judge, level, K, J, M)
    head = np.zeros(HEADER)
    head[[H_LEN, H_K, H_I, H_J, H_M, H_ITEM_MODE, H_ANSWER_FX, H_GAP_ROWS, H_A, H_G, H_E]] = (
        HEADER, K, I, J, M, item_mode, float(answer_fx), gap_rows, len(packed.ans_k), len(packed.g_a), len(packed.ev_jm))
    return np.concatenate([head, *(np.asarray(v, dtype=np.float64) for v in packed)])


@njit(cache=True, error_model="numpy")
def _buffer_size(head):
    A = int(head[H_A])
    return HEADER + 4 * A + 1 + 4 * int(head[H_G]) + 2 * int(head[H_E]) + int(head[H_J]) * int(head[H_M])


@njit(cache=True, error_model="numpy", nogil=True)
def logp_grad_buffer(x, buf):
    J = int(buf[H_J])
    M = int(buf[H_M])
    A = int(buf[H_A])
    G = int(buf[H_G])
    E = int(buf[H_E])
    o = HEADER
    ans_k = buf[o:o + A]
    ans_i = buf[o + A:o + 2 * A]
    o += 2 * A
    g_a, g_j, g_y, g_w = buf[o:o + G], buf[o + G:o + 2 * G], buf[o + 2 * G:o + 3 * G], buf[o + 3 * G:o + 4 * G]
    o += 4 * G
    w_jy = buf[o:o + J * M]
    o += J * M
    ev_ptr = buf[o:o + A + 1]
    o += A + 1
    ev_jm, ev_w = buf[o:o + E], buf[o + E:o + 2 * E]
    o += 2 * E
    n_pos = buf[o:o + A]
    return logp_grad(x, ans_k, ans_i, g_a, g_j, g_y, g_w, w_jy, ev_ptr, ev_jm, ev_w, n_pos, int(buf[H_K]),
                     int(buf[H_I]), J, M, int(buf[H_ITEM_MODE]), buf[H_ANSWER_FX] > 0.5, int(buf[H_GAP_ROWS]))


_C_SIG = numba.types.int64(numba.types.uint64, numba.types.CPointer(numba.types.double),
                           numba.types.CPointer(numba.types.double), numba.types.CPointer(numba.types.double),
                           numba.types.CPointer(numba.types.double))


@numba.cfunc(_C_SIG, cache=True, error_model="numpy")
def logp_c(dim, x_, out_, logp_, ud_):
    head = numba.carray(ud_, (HEADER,))
    buf = numba.carray(ud_, (_buffer_size(head),))
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
    """The stored values of a point: quality [K] (sum to zero), severity [J], then sigma_item and
    sigma_answer when the model has them."""
    K = int(buf[H_K])
    I = int(buf[H_I])
    J = int(buf[H_J])
    item_mode = int(buf[H_ITEM_MODE])
    answer_fx = buf[H_ANSWER_FX] > 0.5
    zero_sum_extend(x[0:K - 1], out[0:K])
    o = K - 1
    w = K
    s_item = 0.0
    s_answer = 0.0
    if item_mode != ITEM_NONE:
        s_item = math.exp(x[o])
        o += I
    if answer_fx:
        s_answer = math.exp(x[o])
        o += 1 + K * (I - 1)
    for j in range(J):
        out[w + j] = x[o + j]
    w += J
    if item_mode != ITEM_NONE:
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
    buf = numba.carray(ud_, (_buffer_size(head),))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_exp,))
    expand(x, out, buf)
    return 0
