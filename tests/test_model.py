"""Tests of simplex_core/model/definition.py: settings, the model's structure, its likelihood against a
hand-computed multinomial, self-family exclusion, and the judge priors as built in PyTensor.

No sampling here: everything is evaluated at fixed points with FAST_COMPILE functions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pymc as pm
import pytensor
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multinomial

from simplex_core.model import priors
from simplex_core.data.table import load_table
from simplex_core.data.views import Counts, count_tensor
from simplex_core.model.settings import MODEL_FIELDS, SAMPLER_FIELDS, FitSettings, ModelSettings, SamplerSettings
from simplex_core.model.definition import build_model, model_data, structure_key, weight_propagation_groups
from simplex_core.model.priors import delta_setting, parse_delta
from simplex_core.data.scale import Scale

THREE = Scale((1.0, 2.0, 3.0))
BINARY_ABSTAIN = Scale((-1.0, 0.0, 1.0), ("incorrect", "unsure", "correct"), (-1.0, 1.0))
FIVE_OF_THREE = Scale((1.0, 2.0, 3.0, 4.0, 5.0), (), (1.0, 3.0, 5.0))


def make_counts(scale: Scale, J: int = 2, K: int = 4, seed: int = 0, excluded=((0, 0),), n: int = 30) -> Counts:
    rng = np.random.default_rng(seed)
    N = rng.multinomial(n, np.full(scale.n_levels, 1 / scale.n_levels), size=(J, K)).astype(np.int64)
    included = np.ones((J, K), dtype=bool)
    judges = tuple(f"judge{j}" for j in range(J))
    cands = tuple(f"cand{k}" for k in range(K))
    for j, k in excluded:
        included[j, k] = False
    pairs = tuple((judges[j], cands[k]) for j, k in excluded)
    return Counts(N=N, included=included, judges=judges, candidates=cands, scale=scale, excluded_pairs=pairs)


def evaluator(model: pm.Model, names: list[str]):
    """FAST_COMPILE function: point (transformed values) -> [values of names...]; ``__logp`` is the
    joint log density, ``__loglik`` the likelihood term. Data are read at call time (pm.set_data)."""
    exprs = {}
    wanted = [n for n in names if not n.startswith("__")]
    if wanted:
        exprs.update({v.name: v for v in model.unobserved_value_vars if v.name in wanted})
    if "__logp" in names:
        exprs["__logp"] = model.logp()
    if "__loglik" in names:
        exprs["__loglik"] = model.logp(vars=[model["y"]])
    fn = pytensor.function(model.value_vars, [exprs[n] for n in names], mode="FAST_COMPILE",
                           on_unused_input="ignore")
    order = [v.name for v in model.value_vars]
    return lambda point: fn(*[point[n] for n in order])


def random_point(model: pm.Model, seed: int) -> dict:
    """A point in the transformed space away from the initial point (so the test is not special)."""
    rng = np.random.default_rng(seed)
    shape_fn = pytensor.function([], [rv.shape for rv in model.free_RVs], mode="FAST_COMPILE")
    point = {}
    for rv, shape in zip(model.free_RVs, shape_fn()):
        value = model.rvs_to_values[rv]
        shape = tuple(int(s) for s in shape)
        if value.name.endswith("_simplex__"):  # K - 1 free coordinates per simplex
            shape = shape[:-1] + (shape[-1] - 1,)
        point[value.name] = rng.normal(scale=0.7, size=shape)
    return point


# -- settings ------------------------------------------------------------------------------------

def test_settings_defaults_round_trip_and_key():
    s = FitSettings()
    assert (s.omega, s.beta_max, s.integrated, s.prior, s.delta) == (0.0, 5.0, False, "ordered", "inflation")
    assert (s.chains, s.draws, s.tune, s.seed, s.self_exclusion) == (4, 1000, 1000, 0, True)
    assert not s.has_random_effects and FitSettings(omega=0.5).has_random_effects
    assert FitSettings(integrated=True).has_random_effects
    assert FitSettings.from_dict(s.to_dict()) == s
    assert FitSettings(omega=2).key() == FitSettings(omega=2.0).key()
    assert FitSettings(omega=2).key() != FitSettings(omega=1).key()
    assert FitSettings(delta=(1, 2, 3)).to_dict()["delta"] == [1.0, 2.0, 3.0]
    assert FitSettings(delta="1,4,10").delta == (1.0, 4.0, 10.0)
    assert s.replace(omega=3).omega == 3.0


def test_settings_split_into_model_sampler_and_data_view_with_the_same_keys():
    # the keys of cached fits: they change only when a default does (last: the judge prior weight-propagation
    # -> ordered; before it extra_rounds 2 -> 3; the shipped fits are found by model_key, which reads the model
    # settings only)
    assert FitSettings().key() == "3e06a8f8c07dfee4"
    assert FitSettings(integrated=True).key() == "4fab03f00ac82751"
    assert FitSettings(prior="weight-propagation").key() == "fb0c7a6bf8b93efd"  # the keys before that change
    assert FitSettings(prior="weight-propagation", integrated=True).key() == "f4c43c7964888ad8"
    odd = FitSettings(omega=1.5, beta_max=0, prior="mixing", delta=(1.0, 2.5, 1.0), self_exclusion=False,
                      likelihood="per-judge", chains=2, draws=300, tune=200, seed=7, extra_rounds=0, engine="pymc",
                      target_accept=0.9)
    assert odd.key() == "bcb9b6ebc1fb9513"
    assert odd.model == ModelSettings(omega=1.5, beta_max=0, prior="mixing", delta="1,2.5,1", likelihood="per-judge")
    assert odd.sampler == SamplerSettings(chains=2, draws=300, tune=200, seed=7, extra_rounds=0, engine="pymc",
                                          target_accept=0.9)
    # every field is in exactly one part, self_exclusion (the data view) in neither
    assert sorted(MODEL_FIELDS + SAMPLER_FIELDS + ("self_exclusion",)) == sorted(odd.to_dict())
    assert FitSettings.from_parts(odd.model, odd.sampler, self_exclusion=False) == odd
    assert list(odd.to_dict()) == ["omega", "beta_max", "integrated", "prior", "delta", "self_exclusion", "chains", "draws",
                                   "tune", "seed", "engine", "target_accept", "extra_rounds", "likelihood"]  # JSON outputs
    assert odd.model.to_dict()["delta"] == [1.0, 2.5, 1.0] and odd.model.has_random_effects
    # a sampler change leaves the model (and so the compiled structure) alone, and the reverse
    assert odd.replace(draws=50).model == odd.model and odd.replace(omega=3).sampler == odd.sampler
    with pytest.raises(ValueError, match="Invalid model settings:\n- omega must be ≥ 0"):
        ModelSettings(omega=-1)
    with pytest.raises(ValueError, match="Invalid sampler settings:\n- chains must be between 1 and 64"):
        SamplerSettings().replace(chains=0)


def test_the_model_builders_read_the_model_part_only():
    counts = make_counts(THREE)
    a = FitSettings(likelihood="per-judge", omega=1.0, chains=1, seed=5)
    assert structure_key(counts, a) == structure_key(counts, a.model)
    data, data_m = model_data(counts, a), model_data(counts, a.model)
    assert data.keys() == data_m.keys() and all(np.array_equal(data[k], data_m[k]) for k in data)
    assert set(build_model(counts, a.model).named_vars) == set(build_model(counts, a).named_vars)


def test_settings_collect_every_problem():
    with pytest.raises(ValueError) as info:
        FitSettings(omega=-1, beta_max=float("nan"), prior="flat", chains=0, draws=2.5, engine="stan", delta="wild")
    text = str(info.value)
    for needle in ("omega must be ≥ 0", "beta_max must be finite", "prior must be one of ordered, weight-propagation",
                   "chains must be between 1 and 64", "draws must be a whole number", "engine must be one of",
                   "delta must be one of inflation"):
        assert needle in text
    with pytest.raises(ValueError, match="one positive finite number per true level"):
        FitSettings(delta=(1.0, -2.0))
    with pytest.raises(ValueError, match="target_accept must be strictly between 0 and 1"):
        FitSettings(target_accept=1.0)


def test_delta_resolution_checks_the_number_of_true_levels():
    assert parse_delta("inflation", 3).tolist() == [1.0, 4.0, 10.0]
    assert parse_delta((2.0, 3.0), 2).tolist() == [2.0, 3.0]
    with pytest.raises(ValueError, match="it has 3 values but the scale has 2 true levels"):
        parse_delta((1.0, 2.0, 3.0), 2)
    with pytest.raises(ValueError, match=r"item 2 \('-1.0'\) is not a positive finite number"):
        parse_delta((1.0, -1.0), 2)  # numbers follow the rule of the text of them


def test_delta_is_read_one_way_into_settings_and_into_the_model():
    assert delta_setting(" Inflation ") == "inflation"
    assert delta_setting("1, 4;10") == (1.0, 4.0, 10.0)
    assert delta_setting([2, 3]) == (2.0, 3.0)
    with pytest.raises(ValueError):
        delta_setting("inflate")
    # the settings hold δ as delta_setting reads it, and the model's data read it back as parse_delta does
    settings = FitSettings(delta="1,4,10", omega=1.0)  # δ is data of the model with random effects
    assert settings.delta == (1.0, 4.0, 10.0)
    assert FitSettings(delta="Central").delta == "central"
    scale = Scale((1.0, 2.0, 3.0), ("a", "b", "c"))
    counts = count_tensor(load_table(pd.DataFrame({"item": ["i"] * 4, "candidate": ["x", "x", "y", "y"],
                                                   "judge": ["j", "k"] * 2, "score": [1, 2, 3, 2]}), scale=scale))
    np.testing.assert_array_equal(model_data(counts, settings)["delta"], parse_delta("1,4,10", 3))


# -- structure -----------------------------------------------------------------------------------

def test_structure_without_random_effects():
    counts = make_counts(THREE)
    model = build_model(counts, FitSettings(likelihood="per-judge", omega=0.0))
    names = set(model.named_vars)
    assert {"pi", "expected_score", "theta", "rho", "y", "counts_obs", "beta_max"} <= names
    assert not names & {"Z", "R", "W", "omega", "delta"}  # ω = 0: a second structure, nothing degenerate
    assert model.named_vars_to_dims["pi"] == ("candidate", "true_level")
    assert model.named_vars_to_dims["expected_score"] == ("candidate",)
    assert model.named_vars_to_dims["theta"] == ("judge", "true_level", "level")
    assert model.named_vars_to_dims["rho"] == ("judge",)
    assert list(model.coords["candidate"]) == list(counts.candidates)
    assert list(model.coords["judge"]) == list(counts.judges)
    assert list(model.coords["level"]) == ["1", "2", "3"]
    assert [v.name for v in model.observed_RVs] == ["y"]
    assert "beta_max" in {v.name for v in model.data_vars}


def test_structure_with_random_effects_and_integrated_mode():
    counts = make_counts(BINARY_ABSTAIN)
    re_model = build_model(counts, FitSettings(likelihood="per-judge", omega=2.0))
    assert {"Z", "R", "W"} <= {v.name for v in re_model.free_RVs}
    assert {"omega", "delta", "beta_max"} <= {v.name for v in re_model.data_vars}
    assert re_model.named_vars_to_dims["Z"] == ("candidate", "true_level")
    assert re_model.named_vars_to_dims["R"] == ("judge",)
    assert re_model.named_vars_to_dims["W"] == ("candidate",)
    assert list(re_model.coords["true_level"]) == ["incorrect", "correct"]

    integrated = build_model(counts, FitSettings(likelihood="per-judge", integrated=True))
    free = {v.name for v in integrated.free_RVs}
    assert {"omega", "beta_max", "Z", "V_R", "E_R", "V_W", "E_W"} <= free
    assert not {"omega", "beta_max"} & {v.name for v in integrated.data_vars}
    # R and W are functions of the augmentation's V and E, with the same names and dims as above
    assert not {"R", "W"} & free and {"R", "W"} <= {v.name for v in integrated.deterministics}
    assert integrated.named_vars_to_dims["R"] == ("judge",) and integrated.named_vars_to_dims["W"] == ("candidate",)


@pytest.mark.parametrize("prior, own", [("weight-propagation", {"theta_first_row", "edge_weights_2", "edge_weights_3"}),
                                        ("diagonal", {"theta_rows"}),
                                        ("mixing", {"theta_first_row", "innovation", "mixing_weight"})])
def test_alternative_priors_share_the_interface(prior, own):
    model = build_model(make_counts(THREE), FitSettings(likelihood="per-judge", prior=prior))
    assert own <= {v.name for v in model.free_RVs}
    assert model.named_vars_to_dims["theta"] == ("judge", "true_level", "level")


@pytest.mark.parametrize("scale, variant", [
    (THREE, dict()), (BINARY_ABSTAIN, dict()), (FIVE_OF_THREE, dict()), (Scale((0.0, 1.0)), dict()),
    (BINARY_ABSTAIN, dict(omega=1.5)), (FIVE_OF_THREE, dict(integrated=True)), (THREE, dict(prior="diagonal")),
    (BINARY_ABSTAIN, dict(prior="mixing", omega=1.0)),
], ids=lambda v: v.describe() if isinstance(v, Scale) else str(v))
def test_logp_is_finite_at_the_initial_point(scale, variant):
    model = build_model(make_counts(scale), FitSettings(likelihood="per-judge", **variant))
    point = model.initial_point()
    logp, = evaluator(model, ["__logp"])(point)
    assert np.isfinite(logp)


def test_build_model_rejects_bad_counts():
    good = make_counts(THREE)
    bad_shape = Counts(N=good.N[:, :, :2], included=good.included, judges=good.judges, candidates=good.candidates,
                       scale=THREE)
    with pytest.raises(ValueError, match=r"counts.N has shape \(2, 4, 2\); expected .* = \(2, 4, 3\)"):
        build_model(bad_shape, FitSettings(likelihood="per-judge"))
    none_included = Counts(N=good.N, included=np.zeros((2, 4), bool), judges=good.judges, candidates=good.candidates,
                           scale=THREE)
    with pytest.raises(ValueError, match="every \\(judge, candidate\\) pair is excluded"):
        build_model(none_included, FitSettings(likelihood="per-judge"))
    with pytest.raises(ValueError, match="self_exclusion is False but the counts exclude some pairs"):
        build_model(good, FitSettings(likelihood="per-judge", self_exclusion=False))


# -- the likelihood ------------------------------------------------------------------------------

@pytest.mark.parametrize("omega", [0.0, 2.0])
def test_likelihood_is_the_multinomial_of_gamma_over_included_pairs(omega):
    """log p(N | params) = Σ over included (j, k) of log Multinomial(N_jk; n_jk, γ_jk), computed with
    scipy from the model's own π, Θ (and R, W, Z) at a random point."""
    counts = make_counts(BINARY_ABSTAIN, J=2, K=3, excluded=((1, 2),), seed=3)
    model = build_model(counts, FitSettings(likelihood="per-judge", omega=omega, delta="uniform"))
    names = ["pi", "theta", "__loglik"] + (["R", "W", "Z"] if omega else [])
    values = dict(zip(names, evaluator(model, names)(random_point(model, 1))))
    pi, theta = values["pi"], values["theta"]
    expected = 0.0
    for j in range(2):
        for k in range(3):
            if not counts.included[j, k]:
                continue
            p = pi[k]
            if omega:
                w = values["R"][j] * values["W"][k]
                p = (1 - w) * pi[k] + w * values["Z"][k]
            gamma = p @ theta[j]
            expected += multinomial.logpmf(counts.N[j, k], counts.N[j, k].sum(), gamma)
    assert values["__loglik"] == pytest.approx(expected, rel=1e-9)


def test_excluded_pairs_do_not_enter_the_likelihood():
    counts = make_counts(THREE, excluded=((0, 1), (1, 3)))
    changed_excluded = Counts(N=counts.N.copy(), included=counts.included, judges=counts.judges,
                              candidates=counts.candidates, scale=THREE, excluded_pairs=counts.excluded_pairs)
    changed_excluded.N[0, 1] = [100, 0, 0]
    changed_excluded.N[1, 3] = [0, 7, 50]
    changed_included = Counts(N=counts.N.copy(), included=counts.included, judges=counts.judges,
                              candidates=counts.candidates, scale=THREE, excluded_pairs=counts.excluded_pairs)
    changed_included.N[0, 2] = [100, 0, 0]
    settings_ = FitSettings(likelihood="per-judge", omega=1.0)
    model = build_model(counts, settings_)
    logp = evaluator(model, ["__logp"])
    point = random_point(model, 2)
    logps = []
    for c in (counts, changed_excluded, changed_included):  # the data swap a compiled sampler does
        pm.set_data(model_data(c, settings_), model=model)
        logps.append(logp(point)[0])
    assert logps[0] == logps[1]
    assert logps[0] != pytest.approx(logps[2])
    # and a model built from the changed counts directly agrees
    rebuilt = build_model(changed_excluded, settings_)
    assert evaluator(rebuilt, ["__logp"])(point)[0] == pytest.approx(logps[0], rel=1e-12)


def test_structure_key_ignores_data_and_hyperparameters_only():
    a = make_counts(THREE, seed=1)
    b = make_counts(THREE, seed=2, excluded=((1, 1),))
    assert structure_key(a, FitSettings(likelihood="per-judge", omega=1)) == structure_key(b, FitSettings(likelihood="per-judge", omega=4, beta_max=10, delta="central"))
    assert structure_key(a, FitSettings(likelihood="per-judge", omega=0)) != structure_key(a, FitSettings(likelihood="per-judge", omega=1))
    assert structure_key(a, FitSettings(likelihood="per-judge")) != structure_key(a, FitSettings(likelihood="per-judge", prior="diagonal"))
    assert structure_key(a, FitSettings(likelihood="per-judge", omega=1)) != structure_key(a, FitSettings(likelihood="per-judge", integrated=True))
    assert structure_key(a, FitSettings(likelihood="per-judge")) != structure_key(make_counts(BINARY_ABSTAIN), FitSettings(likelihood="per-judge"))
    data = model_data(b, FitSettings(likelihood="per-judge", omega=4, beta_max=10, delta="central"))
    assert set(data) == {"counts_obs", "omega", "beta_max", "delta"}
    assert data["counts_obs"][1, 1].tolist() == [0, 0, 0] and data["counts_obs"][0, 0].tolist() == b.N[0, 0].tolist()
    assert float(data["omega"]) == 4.0 and float(data["beta_max"]) == 10.0 and data["delta"].tolist() == [1, 10, 1]
    assert set(model_data(a, FitSettings(likelihood="per-judge"))) == {"counts_obs", "beta_max"}
    assert set(model_data(a, FitSettings(likelihood="per-judge", integrated=True))) == {"counts_obs", "delta"}


# -- the judge priors in PyTensor ----------------------------------------------------------------

@pytest.mark.parametrize("scale", [THREE, BINARY_ABSTAIN, FIVE_OF_THREE], ids=lambda s: s.describe())
def test_weight_propagation_theta_is_priors_propagate(scale):
    """The PyTensor construction gives exactly priors.propagate of the same first row and edge weights."""
    model = build_model(make_counts(scale), FitSettings(likelihood="per-judge", prior="weight-propagation"))
    groups = weight_propagation_groups(scale)
    names = ["theta", "theta_first_row"] + [f"edge_weights_{d}" for d in groups.groups]
    values = dict(zip(names, evaluator(model, names)(random_point(model, 5))))
    J, M, T = 2, scale.n_levels, scale.n_true
    dense = np.zeros((J, T - 1, M, M))
    dense[:, :, M - 1, M - 1] = 1.0  # the last observed level passes all its mass
    for d, (nodes, _) in groups.groups.items():
        for i, (m1, m2) in enumerate(nodes):
            dense[:, m1, m2, m2:] = values[f"edge_weights_{d}"][:, i, :]
    expected = priors.propagate(values["theta_first_row"], dense, priors.weight_propagation_graph(scale))
    np.testing.assert_allclose(values["theta"], expected, rtol=1e-12)


def test_weight_propagation_boosts_the_paper_cells_for_three_levels():
    """Appendix B: node (1,1) → [1, 1+ρβ, 1]; (1,2) → [1+ρβ, 1]; (2,1) → [1, 1, 1+ρβ]; (2,2) → [1, 1+ρβ]."""
    groups = weight_propagation_groups(THREE)
    nodes3, boost3 = groups.groups[3]
    nodes2, boost2 = groups.groups[2]
    assert dict(zip(nodes3, boost3.tolist())) == {(0, 0): [0, 1, 0], (1, 0): [0, 0, 1]}
    assert dict(zip(nodes2, boost2.tolist())) == {(0, 1): [1, 0], (1, 1): [0, 1]}
    assert groups.first_row_boost.tolist() == [1, 0, 0]


@pytest.mark.parametrize("scale", [THREE, BINARY_ABSTAIN, FIVE_OF_THREE], ids=lambda s: s.describe())
def test_model_prior_on_theta_matches_the_numpy_sampler(scale):
    """Prior draws of Θ from the PyMC model have the moments of priors.sample_weight_propagation
    (two independent implementations of the same prior), every row dominating the previous one."""
    model = build_model(make_counts(scale, J=1, K=2, excluded=()),
                        FitSettings(likelihood="per-judge", beta_max=5.0, prior="weight-propagation"))
    draws = pm.draw(model["theta"], draws=3000, random_seed=1, mode="FAST_COMPILE")[:, 0]
    assert priors.stochastically_dominates(draws)
    np.testing.assert_allclose(draws.sum(axis=-1), 1.0)
    reference = priors.sample_weight_propagation(scale, 5.0, None, np.random.default_rng(2), size=3000)
    # 3000 draws of entries in [0, 1]: standard error < 0.01, so 0.035 is > 3.5 SE.
    np.testing.assert_allclose(draws.mean(axis=0), reference.mean(axis=0), atol=0.035)
    np.testing.assert_allclose(draws.std(axis=0), reference.std(axis=0), atol=0.035)


@st.composite
def scales(draw) -> Scale:
    n_obs = draw(st.integers(2, 6))
    values = tuple(float(i) for i in range(n_obs))
    idx = draw(st.lists(st.integers(0, n_obs - 1), min_size=2, max_size=n_obs, unique=True))
    return Scale(values, (), tuple(values[i] for i in sorted(idx)))


@settings(max_examples=8, deadline=None)
@given(scale=scales(), seed=st.integers(0, 10_000))
def test_weight_propagation_rows_are_distributions_ordered_by_dominance(scale, seed):
    """At arbitrary points of the unconstrained space (not only prior draws), every Θ row sums to 1
    and stochastically dominates the previous one: no label flipping is representable."""
    model = build_model(make_counts(scale, J=2, K=2, excluded=()),
                        FitSettings(likelihood="per-judge", beta_max=3.0, prior="weight-propagation"))
    (theta,) = evaluator(model, ["theta"])(random_point(model, seed))
    np.testing.assert_allclose(theta.sum(axis=-1), 1.0, rtol=1e-12)
    assert (theta >= 0).all()
    assert priors.stochastically_dominates(theta)


def test_the_alternative_priors_can_flip_labels_and_weight_propagation_cannot():
    """Appendix E's failure mode: diagonal and mixing priors put mass on non-monotone judges."""
    share = {}
    for prior in ("weight-propagation", "diagonal", "mixing"):
        model = build_model(make_counts(THREE, J=1, K=2, excluded=()), FitSettings(likelihood="per-judge", prior=prior, beta_max=1.0))
        draws = pm.draw(model["theta"], draws=500, random_seed=3, mode="FAST_COMPILE")[:, 0]
        np.testing.assert_allclose(draws.sum(axis=-1), 1.0)
        share[prior] = np.mean([not priors.stochastically_dominates(t) for t in draws])
    assert share["weight-propagation"] == 0.0
    assert share["diagonal"] > 0.1 and share["mixing"] > 0.1


def test_the_identification_note_names_the_candidates_with_fewer_than_three_judges_and_no_gold():
    """Two judges for every candidate: a note about every candidate. A third judge: none. A candidate
    with two judges (self-family exclusion takes the third away) is settled by judges that score other
    candidates with a third judge, not by judges that score only in twos. A labelled answer of a
    candidate settles it even with two judges."""
    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.model.data_notes import identification_note
    from simplex_core.model.simulate import simulate

    scale = Scale((0.0, 1.0), ("incorrect", "correct"))
    sim = simulate(scale=scale, n_items=20, candidates=["a", "b", "c"], judges=["j1", "j2", "j3"], rng=3)
    three = load_table(sim.frame.drop(columns=["true_score"]), scale=scale)
    assert identification_note(count_tensor(three)) is None
    two = load_table(sim.frame[sim.frame["judge"] != "j3"].drop(columns=["true_score"]), scale=scale)
    note = identification_note(count_tensor(two))
    assert note is not None and "of any candidate" in note and "judge prior" in note
    own = load_table(sim.frame.drop(columns=["true_score"]), scale=scale, families={"j3": "fam", "b": "fam"})
    assert identification_note(count_tensor(own)) is None  # j1, j2 are learnt on a and c with j3
    assert identification_note(count_tensor(own, self_exclusion=False)) is None
    # d is scored by j4 and j5 only, who score nothing else: named alone
    extra = pd.DataFrame([{"item": f"q{i}", "candidate": "d", "judge": j, "score": float((i + len(j)) % 2)}
                          for i in range(20) for j in ("j4", "j5")])
    alone = load_table(pd.concat([sim.frame.drop(columns=["true_score"]), extra], ignore_index=True), scale=scale)
    note = identification_note(count_tensor(alone))
    assert note is not None and "of d," in note and "any candidate" not in note
    frame = sim.frame[sim.frame["judge"] != "j3"].copy()
    frame["gold"] = (frame["candidate"] == "a") & (frame["item"] == frame["item"].iloc[0])
    gold = load_table(frame, scale=scale)
    assert gold.n_gold > 0
    note = identification_note(count_tensor(gold))
    assert note is not None and "of b, c," in note


def test_the_scale_end_note_names_candidates_scored_only_at_an_end_of_a_square_scale():
    """Every score of a at the top, every score of c at the bottom: both named, with the conjugate
    pull M/(n + M) for n = 10 answers on 5 levels (33.3%); one answer of a moved off the top: only c.
    A binary scale with an abstention level (observed ≠ true levels): no note."""
    import pandas as pd

    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.model.data_notes import data_notes, judge_prior_note, scale_end_note

    rows = []
    for judge in ("j1", "j2", "j3"):
        for item in range(10):
            rows += [{"judge": judge, "candidate": "a", "item": item, "score": 5},
                     {"judge": judge, "candidate": "b", "item": item, "score": 1 + item % 5},
                     {"judge": judge, "candidate": "c", "item": item, "score": 1}]
    frame = pd.DataFrame(rows)
    scale = Scale((1.0, 2.0, 3.0, 4.0, 5.0))
    note = scale_end_note(count_tensor(load_table(frame, scale=scale)))
    assert note is not None
    assert "answers of a received is the top level (for a, 10 answers on 5 levels: at least 33.3% of the way" in note
    assert "answers of c received is the bottom level" in note and "of b" not in note
    # three judges: no identification note; 5 levels, no labelled answer: under weight propagation, its lean
    counts = count_tensor(load_table(frame, scale=scale))
    wp = FitSettings(prior="weight-propagation")
    assert data_notes(counts) == [note] and data_notes(counts, wp) == [note, judge_prior_note(counts, wp)]
    frame.loc[0, "score"] = 4
    note = scale_end_note(count_tensor(load_table(frame, scale=scale)))
    assert note is not None and "of a" not in note and "answers of c" in note
    abstain = Scale((-1.0, 0.0, 1.0), ("wrong", "abstain", "right"), true_values=(-1.0, 1.0))
    binary = pd.DataFrame([{"judge": j, "candidate": k, "item": i, "score": 1} for j in ("j1", "j2", "j3")
                           for k in ("a", "b") for i in range(5)])
    assert scale_end_note(count_tensor(load_table(binary, scale=abstain))) is None


def test_the_judge_prior_note_on_square_scales_of_five_levels_or_more_without_labelled_answers():
    """Under the weight-propagation prior, 5 levels, no gold: the note gives the mean judge's lean from the
    prior (+0.88 at β_max = 5, the bench's figure); 3 levels, or the same data with one answer's true level
    given, or the default (centred, ordered) prior: no note."""
    import pandas as pd

    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.model.data_notes import judge_prior_note
    from simplex_core.model.priors import mean_judge_offset

    rows = [{"judge": j, "candidate": k, "item": i, "score": 1 + (i + len(k)) % 5}
            for j in ("j1", "j2", "j3") for k in ("a", "bb") for i in range(10)]
    frame = pd.DataFrame(rows)
    five = Scale((1.0, 2.0, 3.0, 4.0, 5.0))
    wp = FitSettings(prior="weight-propagation")
    note = judge_prior_note(count_tensor(load_table(frame, scale=five)), wp)
    assert judge_prior_note(count_tensor(load_table(frame, scale=five))) is None  # the default prior is centred
    assert note is not None and "On this 5-level scale" in note
    assert f"scores answers {mean_judge_offset(five, 5.0):.2f} above their true score" in note and "0.88" in note
    # the note follows the model asked for: its β_max, integrated mode's range, no note under another prior
    counts = count_tensor(load_table(frame, scale=five))
    assert "β_max = 20) expects" in judge_prior_note(counts, FitSettings(prior="weight-propagation", beta_max=20.0))
    assert f"{mean_judge_offset(five, 20.0):.2f} above" in judge_prior_note(counts, FitSettings(prior="weight-propagation", beta_max=20.0))
    assert "a larger β_max" in judge_prior_note(counts, FitSettings(prior="weight-propagation", beta_max=5.0))
    assert "a larger β_max" not in judge_prior_note(counts, FitSettings(prior="weight-propagation", beta_max=20.0))  # the top of its range
    integrated = judge_prior_note(counts, FitSettings(prior="weight-propagation", integrated=True))
    assert "integrated over 0–20" in integrated and "integrated mode" not in integrated
    assert f"{mean_judge_offset(five, 20.0):.2f} to {mean_judge_offset(five, 0.0):.2f} above" in integrated
    assert judge_prior_note(counts, FitSettings(prior="diagonal")) is None
    three = frame.assign(score=1 + frame["score"] % 3)
    assert judge_prior_note(count_tensor(load_table(three, scale=Scale((1.0, 2.0, 3.0)))), wp) is None
    gold = frame.assign(true_score=float("nan"), gold=False)
    gold.loc[gold["item"] == 0, ["true_score", "gold"]] = [3.0, True]
    labelled = load_table(gold, scale=five)
    assert labelled.n_gold > 0 and judge_prior_note(count_tensor(labelled), wp) is None


def test_the_crowded_scale_note_speaks_when_judgments_crowd_into_two_end_levels_of_a_long_scale():
    """9 of every 10 scores at 4 or 5 on a 1–5 scale: the note, with the share, the end and the prior to
    try; under that diagonal prior, the same scores spread evenly, the same crowding on a 3-level scale,
    or one labelled answer: no note."""
    import pandas as pd

    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.model.data_notes import crowded_scale_note, data_notes

    crowded = [5, 4, 5, 5, 4, 5, 4, 5, 5, 2]
    rows = [{"judge": j, "candidate": k, "item": i, "score": crowded[(i + len(k)) % 10]}
            for j in ("j1", "j2", "j3") for k in ("a", "bb") for i in range(10)]
    frame = pd.DataFrame(rows)
    five = Scale((1.0, 2.0, 3.0, 4.0, 5.0))
    counts = count_tensor(load_table(frame, scale=five))
    note = crowded_scale_note(counts)
    assert note is not None and note.startswith("90% of the judgments are in the top two levels of this 5-level scale")
    assert note in data_notes(counts) and "try the diagonal prior" in note
    assert crowded_scale_note(counts, FitSettings(prior="weight-propagation")) == note  # the paper's prior too
    assert crowded_scale_note(counts, FitSettings(prior="diagonal")) is None  # the prior it advises
    assert note not in data_notes(counts, FitSettings(prior="diagonal"))
    low = frame.assign(score=6 - frame["score"])
    assert "in the bottom two levels" in crowded_scale_note(count_tensor(load_table(low, scale=five)))
    spread = frame.assign(score=1 + frame["item"] % 5)
    assert crowded_scale_note(count_tensor(load_table(spread, scale=five))) is None
    three = frame.assign(score=frame["score"].clip(3, 5) - 2)
    assert crowded_scale_note(count_tensor(load_table(three, scale=Scale((1.0, 2.0, 3.0))))) is None
    labelled = frame.assign(true_score=frame["score"].astype(float),
                            gold=(frame["candidate"] == "a") & (frame["item"] == 0))
    assert crowded_scale_note(count_tensor(load_table(labelled, scale=five))) is None
