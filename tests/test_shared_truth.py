"""The shared-truth likelihood: one latent true level per answer, seen by every judge.

Checked here: the score patterns are the sufficient statistics (they give back the count tensor);
each judge's marginal is the paper's γ_jk exactly; the PyMC graph equals a brute-force sum over the
latent true levels; with one judge it is the per-judge likelihood; gold answers keep only their true
level; and the numba kernel of the fast engine equals the PyMC graph point by point, value and
gradient, for every scale shape, with and without random effects, in integrated mode, with missing
scores, excluded pairs and gold labels.
"""

from __future__ import annotations


import numpy as np
import pytest

from simplex_core.data.views import Counts, count_tensor
from simplex_core.data.table import load_table
from simplex_core.model.settings import FitSettings
from simplex_core.model.definition import build_model, shared_truth_emission
from simplex_core.data.patterns import NO_SCORE, patterns_from_answers
from simplex_core.data.scale import Scale
from simplex_core.model.simulate import simulate

fast_density = pytest.importorskip("simplex_core.model.fast_density")
from tests.test_speed_equivalence import pymc_reference  # noqa: E402  (PyMC's density in the fast coordinates)

BINARY_ABSTAIN = Scale((-1.0, 0.0, 1.0), ("incorrect", "unsure", "correct"), (-1.0, 1.0))


def _answers_counts(scale: Scale, J: int, K: int, n: int, seed: int, exclude=(), missing=0.1, gold=0.0) -> Counts:
    """Counts with score patterns from random answers (some scores missing, some answers gold)."""
    rng = np.random.default_rng(seed)
    M, T = scale.n_levels, scale.n_true
    cand = np.repeat(np.arange(K), n)
    scores = rng.integers(0, M, size=(K * n, J))
    scores[rng.random(scores.shape) < missing] = NO_SCORE
    truth = np.where(rng.random(K * n) < gold, rng.integers(0, T, size=K * n), NO_SCORE)
    included = np.ones((J, K), dtype=bool)
    for j, k in exclude:
        included[j, k] = False
    patterns = patterns_from_answers(cand, scores, truth, included)
    judges = tuple(f"judge{j}" for j in range(J))
    cands = tuple(f"cand{k}" for k in range(K))
    return Counts(N=patterns.count_tensor(J, K, M), included=included, judges=judges, candidates=cands, scale=scale,
                  excluded_pairs=tuple((judges[j], cands[k]) for j, k in exclude), patterns=patterns)


def _evaluate(model, names, point):
    """Values of model variables (deterministics, potentials) at a point of the value variables."""
    outs = model.replace_rvs_by_values([model[n] for n in names])
    return model.compile_fn(outs, inputs=model.value_vars, point_fn=True, on_unused_input="ignore")(point)


def test_patterns_give_back_the_count_tensor_and_skip_empty_answers():
    sim = simulate(n_items=60, candidates=3, judges=4, scale=Scale((1.0, 2.0, 3.0)), rng=2)
    # knock out some scores: those answers keep their other judges' scores
    frame = sim.frame.drop(index=sim.frame.index[::7]).reset_index(drop=True)
    table = load_table(frame, scale=sim.scale)
    counts = count_tensor(table, self_exclusion=False)
    p = counts.patterns
    np.testing.assert_array_equal(p.count_tensor(*counts.N.shape), counts.N)
    assert p.n_answers == frame.groupby(["item", "candidate"]).ngroups
    assert len({tuple(r) for r in np.column_stack([p.candidate, p.truth, p.scores])}) == p.n_patterns
    # an answer with no score and no label carries nothing
    empty = patterns_from_answers(np.array([0, 0]), np.array([[NO_SCORE, NO_SCORE], [1, NO_SCORE]]))
    assert empty.n_answers == 1


def test_excluded_pairs_drop_out_of_the_patterns():
    patterns = patterns_from_answers(np.array([0, 1]), np.array([[1, 0], [1, 1]]),
                                     included=np.array([[True, False], [True, True]]))
    rows = {(int(c), tuple(int(s) for s in sc)) for c, sc in zip(patterns.candidate, patterns.scores)}
    assert rows == {(0, (1, 0)), (1, (NO_SCORE, 1))}


@pytest.mark.parametrize("use_re", [False, True])
def test_each_judge_marginal_is_the_papers_gamma(use_re):
    rng = np.random.default_rng(0)
    J, K, T, M = 3, 4, 3, 5
    pi = rng.dirichlet(np.ones(T), size=K)
    theta = rng.dirichlet(np.ones(M), size=(J, T))
    Z = rng.dirichlet(np.ones(T), size=K) if use_re else None
    mix = rng.uniform(size=(J, K)) if use_re else None
    L = shared_truth_emission(theta, mix, Z)
    marginal = np.einsum("kt,jktm->jkm", pi, np.broadcast_to(L, (J, K, T, M)))
    pi_jk = pi[None] if not use_re else (1 - mix[..., None]) * pi[None] + mix[..., None] * Z[None]
    gamma = np.einsum("jkt,jtm->jkm", np.broadcast_to(pi_jk, (J, K, T)), theta)
    np.testing.assert_allclose(marginal, gamma, rtol=1e-12)


@pytest.mark.parametrize("omega", [0.0, 1.5])
def test_pymc_graph_equals_a_brute_force_sum_over_true_levels(omega):
    scale = Scale((1.0, 2.0, 3.0))
    counts = _answers_counts(scale, J=3, K=2, n=12, seed=4, exclude=((2, 1),), gold=0.2)
    settings = FitSettings(omega=omega, likelihood="shared-truth", delta="uniform")
    model = build_model(counts, settings)
    point = {k: v + np.random.default_rng(1).normal(0, 0.7, np.shape(v)) for k, v in model.initial_point().items()}
    values = _evaluate(model, ["pi", "theta", "shared_truth_loglik"] + (["Z", "R", "W"] if omega else []), point)
    pi, theta, potential = values[:3]
    L = shared_truth_emission(theta, *( (np.outer(values[4], values[5]), values[3]) if omega else ()))
    p = counts.patterns
    total = 0.0
    for k, t_gold, w, scores in zip(p.candidate, p.truth, p.weight, p.scores):
        kl = k if omega else 0
        terms = []
        for t in range(scale.n_true):
            if t_gold >= 0 and t != t_gold:
                continue
            prob = pi[k, t]
            for j, s in enumerate(scores):
                if s >= 0:
                    prob *= L[j, kl, t, s]
            terms.append(prob)
        total += w * np.log(sum(terms))
    assert potential == pytest.approx(total, rel=1e-10)


def test_one_judge_shared_truth_is_the_per_judge_likelihood():
    """With one judge there is nothing to share: both likelihoods differ by a constant only."""
    counts = _answers_counts(Scale((0.0, 1.0, 2.0)), J=1, K=3, n=30, seed=5, missing=0.0)
    diffs = []
    shared = build_model(counts, FitSettings(omega=2.0, likelihood="shared-truth", delta="uniform"))
    per_judge = build_model(counts, FitSettings(omega=2.0, likelihood="per-judge", delta="uniform"))
    a, b = shared.compile_logp(), per_judge.compile_logp()
    rng = np.random.default_rng(3)
    for _ in range(4):
        point = {k: v + rng.normal(0, 1.0, np.shape(v)) for k, v in shared.initial_point().items()}
        diffs.append(float(a(point)) - float(b(point)))
    assert np.ptp(diffs) < 1e-8


def test_counts_without_patterns_get_a_clear_error():
    counts = _answers_counts(Scale((0.0, 1.0)), J=2, K=2, n=5, seed=0)
    bare = Counts(N=counts.N, included=counts.included, judges=counts.judges, candidates=counts.candidates,
                  scale=counts.scale)
    with pytest.raises(ValueError, match="needs each answer's scores from every judge"):
        build_model(bare, FitSettings(likelihood="shared-truth"))
    with pytest.raises(ValueError, match="needs each answer's scores from every judge"):
        fast_density.build_buffer(bare, FitSettings(likelihood="shared-truth"))


CASES = [
    ("binary+abstain, omega 2, gold", BINARY_ABSTAIN, 3, 4, FitSettings(omega=2.0, delta="uniform"), 0.2),
    ("binary+abstain, omega 0", BINARY_ABSTAIN, 3, 4, FitSettings(omega=0.0), 0.0),
    ("square 2 levels, omega 1", Scale((0.0, 1.0)), 4, 3, FitSettings(omega=1.0, beta_max=0.0), 0.1),
    ("square 3 levels, omega 4", Scale((1.0, 2.0, 3.0)), 2, 3, FitSettings(omega=4.0, beta_max=10.0, delta="central"), 0.0),
    ("square 5 levels, omega 0, gold", Scale((1.0, 2.0, 3.0, 4.0, 5.0)), 3, 3, FitSettings(omega=0.0), 0.3),
    # ω = 0: the kernel's per-distinct-pattern path (no random effects), with a non-square truth
    ("5 observed, 3 true, omega 0, gold", Scale((1.0, 2.0, 3.0, 4.0, 5.0), true_values=(1.0, 3.0, 5.0)), 4, 3,
     FitSettings(omega=0.0, beta_max=20.0, delta=(1.0, 2.0, 3.0)), 0.2),
    ("5 observed, 3 true, omega 2", Scale((1.0, 2.0, 3.0, 4.0, 5.0), true_values=(1.0, 3.0, 5.0)), 2, 3,
     FitSettings(omega=2.0, beta_max=20.0, delta=(1.0, 2.0, 3.0)), 0.1),
    ("binary+abstain, integrated, gold", BINARY_ABSTAIN, 3, 4, FitSettings(integrated=True), 0.1),
    ("5 observed, 3 true, integrated", Scale((1.0, 2.0, 3.0, 4.0, 5.0), true_values=(1.0, 3.0, 5.0)), 3, 3,
     FitSettings(integrated=True, delta="deflation"), 0.0),
    ("ordered, square 5 levels, omega 0, gold", Scale((1.0, 2.0, 3.0, 4.0, 5.0)), 3, 3,
     FitSettings(prior="ordered", omega=0.0), 0.3),
    ("ordered, square 2 levels, omega 1", Scale((0.0, 1.0)), 4, 3, FitSettings(prior="ordered", omega=1.0), 0.1),
    ("ordered, binary+abstain, integrated", BINARY_ABSTAIN, 3, 4, FitSettings(prior="ordered", integrated=True), 0.1),
]


@pytest.mark.parametrize("name, scale, J, K, base, gold", CASES, ids=[c[0] for c in CASES])
def test_fast_kernel_equals_pymc_graph(name, scale, J, K, base, gold):
    settings = base.replace(likelihood="shared-truth")
    counts = _answers_counts(scale, J, K, n=15, seed=len(name), exclude=((0, 0),), gold=gold)
    model = build_model(counts, settings)
    reference = pymc_reference(model, counts, settings)
    rng = np.random.default_rng(1)
    offsets = []
    for _ in range(4):
        point = {k: v + rng.normal(0.0, 1.5, size=np.shape(v)) for k, v in model.initial_point().items()}
        x = fast_density.flat_from_pymc_point(point, counts, settings)
        lp, grad = fast_density.logp_and_grad(counts, settings, x)
        ref, expected = reference(point)
        offsets.append(lp - ref)
        np.testing.assert_allclose(grad, expected, rtol=1e-8, atol=1e-8)
    assert np.ptp(offsets) < 1e-7 * max(1.0, abs(offsets[0]))


OMEGA0_CASES = [c for c in CASES if c[4].omega == 0.0 and not c[4].integrated]


@pytest.mark.parametrize("name, scale, J, K, base, gold", OMEGA0_CASES, ids=[c[0] for c in OMEGA0_CASES])
def test_dense_and_row_kernels_agree(name, scale, J, K, base, gold):
    """Without random effects ``build_buffer`` picks the dense per-candidate kernel or the row-by-row
    one by cost (header slot 15); both give the same value and gradient at random points."""
    settings = base.replace(likelihood="shared-truth")
    counts = _answers_counts(scale, J, K, n=15, seed=len(name), exclude=((0, 0),), gold=gold)
    dense = fast_density.build_buffer(counts, settings)
    rowwise = dense.copy()
    dense[15], rowwise[15] = 1.0, 0.0
    rng = np.random.default_rng(2)
    n = fast_density.n_unconstrained(counts, settings)
    for _ in range(4):
        x = rng.normal(0.0, 1.5, size=n)
        g_dense, g_rows = np.zeros(n), np.zeros(n)
        lp_dense = fast_density.tempered_logp_grad(x, g_dense, dense, 0.7)
        lp_rows = fast_density.tempered_logp_grad(x, g_rows, rowwise, 0.7)
        np.testing.assert_allclose(lp_dense, lp_rows, rtol=1e-12)
        np.testing.assert_allclose(g_dense, g_rows, rtol=1e-9, atol=1e-9)


def _forty_judges_mostly_sure(gold: float):
    """Binary answers scored by forty judges who say 0 with probability 1e-30 (half of them 0.3 when the
    truth is 1): the kernels' pattern rows and distinct patterns, π and Θ, and the generator used."""
    scale = Scale((0.0, 1.0))
    J, K = 40, 3
    counts = _answers_counts(scale, J, K, n=6, seed=4, missing=0.0, gold=gold)
    buf = fast_density.build_buffer(counts, FitSettings(omega=0.0, likelihood="shared-truth"))
    Q, U = int(buf[fast_density.BUF_PATTERN_ROWS]), int(buf[fast_density.BUF_DISTINCT_PATTERNS])
    rows_at = buf.size - (Q * (fast_density.ROW_SCORES + J) + U * J + Q + K + 1)
    rng = np.random.default_rng(0)
    pi = rng.dirichlet(np.ones(2), size=K)
    theta = np.empty((J, 2, 2))
    theta[:, :, 0], theta[:, :, 1] = 1e-30, 1.0 - 1e-30
    theta[: J // 2, 1, 0], theta[: J // 2, 1, 1] = 0.3, 0.7
    return J, K, buf[rows_at:], Q, buf[rows_at + Q * (fast_density.ROW_SCORES + J):], U, pi, theta, rng


def test_dense_kernel_goes_through_logs_where_products_would_underflow():
    """Forty judges who give the score 0 with probability 1e-30: a pattern's products would underflow,
    so the dense kernel takes those patterns through logs and still equals the row-by-row kernel (which
    sums logs)."""
    J, K, rows, Q, distinct, U, pi, theta, _ = _forty_judges_mostly_sure(gold=0.0)
    patterns = distinct[:U * J].reshape(U, J).astype(int)
    log_products = np.array([[np.log(theta[np.arange(J), t, p]).sum() for t in range(2)] for p in patterns])
    assert (log_products.max(axis=1) < np.log(1e-280)).any()  # the case this test is about occurs
    out = []
    for kernel in ("dense", "distinct"):
        gpi, gtheta = np.zeros((K, 2)), np.zeros((J, 2, 2))
        if kernel == "dense":
            lik = fast_density._shared_truth_loglik_dense(rows, Q, distinct, U, J, K, 2, pi, theta, 1.0, gpi, gtheta)
        else:
            lik = fast_density._shared_truth_loglik_distinct(rows, Q, distinct, U, J, 2, 2, pi, theta, 1.0, gpi, gtheta)
        out.append((lik, gpi, gtheta))
    assert np.isfinite(out[0][0])
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    for dense, rowwise in zip(out[0][1:], out[1][1:]):  # terms 1e-175 below the rest may round to 0
        np.testing.assert_allclose(dense, rowwise, rtol=1e-9, atol=1e-12 * np.abs(rowwise).max())


def test_random_effects_kernel_goes_through_logs_where_products_would_underflow():
    """The random-effects kernel multiplies each row's probabilities; with forty judges at 1e-30 the
    products underflow and it must take those rows through logs. With R = 0 (no judge mixes) its L is
    Θ, so it must equal the row-by-row kernel without random effects, which sums logs."""
    J, K, rows, Q, distinct, U, pi, theta, rng = _forty_judges_mostly_sure(gold=0.2)
    Z, R, W = rng.dirichlet(np.ones(2), size=K), np.zeros(J), rng.uniform(0.2, 0.8, K)
    gpi, gtheta = np.zeros((K, 2)), np.zeros((J, 2, 2))
    g_re = [np.zeros((K, 2)), np.zeros(J), np.zeros(K)]
    lik = fast_density._shared_truth_loglik(rows, Q, distinct, U, J, K, 2, 2, pi, theta, True, False, Z, R, W, 1.0,
                                            gpi, gtheta, *g_re)
    ref_gpi, ref_gtheta = np.zeros((K, 2)), np.zeros((J, 2, 2))
    ref = fast_density._shared_truth_loglik_distinct(rows, Q, distinct, U, J, 2, 2, pi, theta, 1.0, ref_gpi, ref_gtheta)
    assert np.isfinite(lik)
    np.testing.assert_allclose(lik, ref, rtol=1e-12)
    for got, want in ((gpi, ref_gpi), (gtheta, ref_gtheta)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())


def test_vectorised_log_matches_libm():
    """The dense kernel's batch log: within 4 units in the last place of NumPy's log over the whole
    range, and libm's own answer for zero, subnormals, infinity and NaN."""
    rng = np.random.default_rng(5)
    x = np.concatenate([np.exp(rng.uniform(-708.0, 709.0, 20000)), rng.uniform(0.5, 2.0, 20000),
                        1.0 + rng.normal(0.0, 1e-9, 1000), [1.0, 2.0, 0.5, np.sqrt(2.0), 2.2250738585072014e-308]])
    out = np.empty_like(x)
    fast_density._log_array(x, out)
    np.testing.assert_array_less(np.abs(out - np.log(x)), 4 * np.spacing(np.abs(np.log(x))) + 1e-300)
    special = np.array([0.0, 5e-324, 1e-310, np.inf, np.nan, -1.0])
    got = np.empty_like(special)
    fast_density._log_array(special, got)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(got, np.log(special))


def test_gold_answers_keep_only_their_true_level():
    """A gold answer's term is log π_k[t] + Σ_j log L[j, k, t, s_j]: changing π_k at other levels
    moves it only through the simplex constraint."""
    scale = Scale((0.0, 1.0))
    pat = patterns_from_answers(np.array([0, 1]), np.array([[1, 1], [0, 1]]), truth=np.array([1, NO_SCORE]))
    counts = Counts(N=pat.count_tensor(2, 2, 2), included=np.ones((2, 2), bool), judges=("a", "b"),
                    candidates=("x", "y"), scale=scale, patterns=pat)
    model = build_model(counts, FitSettings(likelihood="shared-truth"))
    pi, theta, potential = _evaluate(model, ["pi", "theta", "shared_truth_loglik"], model.initial_point())
    gold_term = np.log(pi[0, 1] * theta[0, 1, 1] * theta[1, 1, 1])
    free_term = np.log(sum(pi[1, t] * theta[0, t, 0] * theta[1, t, 1] for t in range(2)))
    assert potential == pytest.approx(gold_term + free_term, rel=1e-12)
