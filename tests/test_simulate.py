"""Tests of simplex_core/model/simulate.py and the ``simulate`` command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simplex_core.data.table import load_table
from simplex_core.model.priors import stochastically_dominates
from simplex_core.data.scale import Scale
from simplex_core.model.simulate import SCENARIOS, ordinal_prevalences, scenario, simulate

BINARY_ABSTAIN = Scale((-1.0, 0.0, 1.0), ("incorrect", "unsure", "correct"), (-1.0, 1.0))


def empirical_frequencies(data) -> np.ndarray:
    """[J, K, M_obs] share of each observed level per (judge, candidate), from the frame."""
    f = data.frame
    j = f["judge"].map({n: i for i, n in enumerate(data.judges)}).to_numpy()
    k = f["candidate"].map({n: i for i, n in enumerate(data.candidates)}).to_numpy()
    m = np.searchsorted(np.asarray(data.scale.values), f["score"].to_numpy(dtype=float))
    counts = np.zeros((len(data.judges), len(data.candidates), data.scale.n_levels))
    np.add.at(counts, (j, k, m), 1)
    return counts / counts.sum(axis=-1, keepdims=True)


# -- the table ------------------------------------------------------------------------------------

def test_frame_follows_the_data_contract():
    data = scenario("gpqa-like", 1, n_items=30)
    f = data.frame
    assert list(f.columns) == ["item", "candidate", "judge", "score", "true_score", "candidate_family", "judge_family"]
    assert len(f) == 30 * 19 * 2
    assert not f.duplicated(["item", "candidate", "judge"]).any()
    for col in ("item", "candidate", "judge"):
        assert all(isinstance(x, str) for x in f[col])
    assert set(f["score"]) <= {-1, 0, 1}
    assert set(f["true_score"]) <= {-1, 1}                 # truth lives on the true levels only
    # true_score is one value per (item, candidate), whatever the judge
    assert (f.groupby(["item", "candidate"])["true_score"].nunique() == 1).all()
    # families columns agree with the families mapping and the self pairs
    assert (f["candidate_family"] == f["candidate"].map(data.families)).all()
    assert (f["judge_family"] == f["judge"].map(data.families)).all()
    same = f[f["candidate_family"] == f["judge_family"]][["judge", "candidate"]].drop_duplicates()
    assert set(map(tuple, same.to_numpy())) == set(data.self_pairs)
    # the loader accepts it as is, with nothing excluded or normalised
    table = load_table(f, scale=data.scale)
    assert table.has_truth
    assert table.notes == ()
    assert set(table.self_family_pairs) == set(data.self_pairs)


def test_no_families_no_family_columns():
    data = scenario("three-level", 0, n_items=5)
    assert "candidate_family" not in data.frame.columns and data.families == {}
    assert data.self_pairs == ()


def test_same_seed_same_frame_different_seed_different_frame():
    a = scenario("five-level-nonconstant", 42, n_items=40)
    b = scenario("five-level-nonconstant", 42, n_items=40)
    c = scenario("five-level-nonconstant", 43, n_items=40)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    np.testing.assert_array_equal(a.theta, b.theta)
    assert not a.frame["score"].equals(c.frame["score"])
    assert a.settings.seed == 42 and a.settings.scenario == "five-level-nonconstant"


# -- the truth ----------------------------------------------------------------------------------

def test_expected_scores_and_ranks_by_hand():
    data = simulate(
        scale=BINARY_ABSTAIN, n_items=3, candidates=["a", "b", "c"], judges=1,
        pi=[[0.5, 0.5], [0.2, 0.8], [0.2, 0.8]], beta_max=5.0, rho=0.5, rng=0,
    )
    np.testing.assert_allclose(data.expected_scores, [0.0, 0.6, 0.6])  # -1·π[-1] + 1·π[1]
    np.testing.assert_array_equal(data.ranks, [3.0, 1.5, 1.5])         # 1 = best, ties averaged
    assert data.population_ranking == ["b", "c", "a"]


def test_omega_zero_has_no_random_effects():
    data = scenario("three-level", 3, n_items=5)
    assert data.settings.omega == 0
    np.testing.assert_array_equal(data.perturbed_pi, np.broadcast_to(data.pi, data.perturbed_pi.shape))
    assert not data.R.any() and not data.W.any() and not data.Z.any()


def test_perfect_judges_with_constancy_see_the_true_score():
    """ω = 0 and shared latents: every judge's latent level is the (item, candidate) true level, so a
    judge with Θ = identity reports exactly the true score."""
    scale = Scale((1.0, 2.0, 3.0))
    data = simulate(scale=scale, n_items=50, candidates=4, judges=2, theta=np.eye(3), rng=9)
    assert (data.frame["score"] == data.frame["true_score"]).all()
    assert np.isnan(data.rho).all() and data.settings.beta_max is None


def test_generated_judges_come_from_the_weight_propagation_prior():
    data = scenario("five-level-nonconstant", 5, n_items=5)
    assert stochastically_dominates(data.theta)
    np.testing.assert_allclose(data.theta.sum(axis=-1), 1.0)
    np.testing.assert_allclose(data.rho, [0.9, 0.8, 0.6, 0.4])


@pytest.mark.parametrize("coupling", ["shared", "independent"])
def test_score_frequencies_approach_gamma_like_one_over_sqrt_n(coupling):
    """Empirical shares per (judge, candidate) vs γ_jk = π_k^(j) @ Θ_j with random effects on (ω = 4).
    Each share is a binomial proportion with SD sqrt(γ(1−γ)/n); over 160 cells a 5-SD bound fails with
    probability < 1e-4, and it shrinks like 1/sqrt(n) as n grows 100-fold."""
    errors = []
    for n in (100, 10_000):
        data = scenario("five-level-nonconstant", 21, n_items=n, latent_coupling=coupling)
        assert data.R.all() and data.W.all()                 # the random effects are on
        freq = empirical_frequencies(data)
        gamma = data.gamma
        sd = np.sqrt(gamma * (1 - gamma) / n)
        assert np.all(np.abs(freq - gamma) <= 5 * sd + 1e-12)
        errors.append(np.abs(freq - gamma).max())
        # and the true_score column follows the base prevalences π_k, not the perturbed ones
        truth = data.frame.drop_duplicates(["item", "candidate"])
        share = pd.crosstab(truth["candidate"], truth["true_score"], normalize="index")
        share = share.reindex(index=list(data.candidates), columns=[1, 2, 3, 4, 5], fill_value=0).to_numpy()
        assert np.all(np.abs(share - data.pi) <= 5 * np.sqrt(data.pi * (1 - data.pi) / n) + 1e-12)
    assert errors[1] < errors[0] / 3          # 1/sqrt(100-fold) = 1/10; a factor 3 leaves room


def test_self_preference_moves_only_self_pair_scores_below_the_top_to_the_top():
    """Same seed with p = 0 and p = 0.8: the draws before the injection are the same, so the frames
    differ exactly where a self-pair score below the top was moved to the top."""
    kwargs = dict(
        scale=BINARY_ABSTAIN, n_items=4000, candidates=["own", "other"], judges=["j"],
        pi=[[0.6, 0.4], [0.6, 0.4]], beta_max=5.0, rho=0.5,
        candidate_families={"own": "fam", "other": "else"}, judge_families={"j": "fam"}, rng=17,
    )
    clean = simulate(self_preference=0.0, **kwargs)
    biased = simulate(self_preference=0.8, **kwargs)
    assert biased.self_pairs == (("j", "own"),)
    changed = clean.frame["score"] != biased.frame["score"]
    assert (clean.frame.loc[changed, "candidate"] == "own").all()
    assert (clean.frame.loc[changed, "score"] < 1).all() and (biased.frame.loc[changed, "score"] == 1).all()
    # the expected share of "correct" for the self pair: γ_top + p(1 − γ_top); others unchanged
    g = clean.gamma[0, 0, 2]
    expected = g + 0.8 * (1 - g)
    assert biased.score_probabilities[0, 0, 2] == pytest.approx(expected)
    np.testing.assert_allclose(biased.score_probabilities[0, 1], clean.gamma[0, 1])
    own = biased.frame[biased.frame["candidate"] == "own"]
    share = (own["score"] == 1).mean()
    assert abs(share - expected) <= 5 * np.sqrt(expected * (1 - expected) / 4000)
    # and the moved share is about p of what was below the top
    below = (clean.frame.loc[clean.frame["candidate"] == "own", "score"] < 1).sum()
    assert abs(changed.sum() / below - 0.8) <= 5 * np.sqrt(0.8 * 0.2 / below)


@given(st.lists(st.floats(-3, 3), min_size=2, max_size=6, unique=True), st.integers(2, 7))
@settings(max_examples=40, deadline=None)
def test_ordinal_prevalences_order_candidates_by_quality(qualities, n_true):
    pi = ordinal_prevalences(qualities, n_true)
    np.testing.assert_allclose(pi.sum(axis=1), 1.0)
    expected = pi @ np.arange(n_true)
    order = np.argsort(qualities)
    gaps = np.diff(expected[order])
    assert np.all(gaps >= -1e-12)  # qualities equal up to rounding give expectations equal up to rounding
    # strict where the qualities are not within rounding of each other
    assert np.all(gaps[np.diff(np.sort(qualities)) > 1e-6] > 0)


# -- inputs are checked ---------------------------------------------------------------------------

def test_bad_inputs_are_named():
    base = dict(scale=BINARY_ABSTAIN, n_items=10, candidates=3, judges=2, rng=0)
    with pytest.raises(ValueError, match=r"pi row \[1\] sums to 0\.9; every row must sum to 1"):
        simulate(pi=[[0.5, 0.5], [0.5, 0.4], [0.5, 0.5]], **base)
    with pytest.raises(ValueError, match=r"pi has shape \(2, 2\); expected \(3, 2\)"):
        simulate(pi=[[0.5, 0.5], [0.5, 0.5]], **base)
    with pytest.raises(ValueError, match=r"theta has shape \(2, 3, 3\); expected \(2, 2, 3\)"):
        simulate(theta=np.eye(3), **base)
    with pytest.raises(ValueError, match=r"omega = -1; expected a finite number >= 0.*self_preference = 2; expected a probability"):
        simulate(omega=-1, self_preference=2, **base)
    with pytest.raises(ValueError, match=r"1 candidate\(s\); expected at least 2"):
        simulate(**{**base, "candidates": ["only"]})
    with pytest.raises(ValueError, match=r"Candidate names must be distinct; repeated: \['a'\]"):
        simulate(**{**base, "candidates": ["a", "a", "b"]})
    with pytest.raises(ValueError, match=r"rho has 3 values for 2 judges"):
        simulate(rho=[0.1, 0.2, 0.3], **base)
    with pytest.raises(ValueError, match="it has 3 values but the scale has 2 true levels"):
        simulate(omega=1.0, delta=[1, 2, 3], **base)
    with pytest.raises(ValueError, match="Unknown scenario 'gpqa'; expected one of gpqa-like, three-level, five-level-nonconstant"):
        scenario("gpqa", 0)


# -- scenarios ----------------------------------------------------------------------------------------

def test_scenarios_match_their_specification():
    gpqa = scenario("gpqa-like", 0)
    s = gpqa.settings
    assert (len(s.candidates), len(s.judges), s.n_items) == (19, 2, 448)
    assert gpqa.scale.values == (-1.0, 0.0, 1.0) and gpqa.scale.true_values == (-1.0, 1.0)
    assert gpqa.scale.labels == ("incorrect", "unsure", "correct")
    assert (s.omega, s.beta_max, s.self_preference) == (2.0, 5.0, 0.8)
    by_judge = pd.Series([j for j, _ in gpqa.self_pairs]).value_counts()
    assert {gpqa.families[j] for j in gpqa.judges} == {"anthropic", "openai"}
    assert by_judge.between(2, 3).all() and len(by_judge) == 2

    three = scenario("three-level", 0)
    assert three.scale.values == (1.0, 2.0, 3.0) and three.settings.omega == 0.0
    assert 2 <= len(three.judges) <= 3 and len(three.candidates) >= 4

    five = scenario("five-level-nonconstant", 0)
    assert five.scale.n_levels == 5 and five.settings.omega == 4.0
    # constancy is violated: the judges' perceived prevalences differ from the base ones
    assert np.abs(five.perturbed_pi - five.pi[None]).max() > 0.05

    for spec in SCENARIOS.values():
        assert spec.description
    # population truth is fixed per scenario: replicates share their ranking
    np.testing.assert_array_equal(scenario("gpqa-like", 1, n_items=5).ranks, gpqa.ranks)


# -- the command ----------------------------------------------------------------------------------

def test_simulate_command_writes_the_scenario(tmp_path, capsys):
    from simplex_core.cli import main

    out = tmp_path / "sim.csv"
    assert main(["simulate", "three-level", "--seed", "4", "--out", str(out), "--items", "20"]) == 0
    line = capsys.readouterr().out.strip()
    expected = scenario("three-level", 4, n_items=20)
    assert line.endswith("population ranking (best first): " + " > ".join(expected.population_ranking))
    assert "6 candidates x 3 judges x 20 items" in line
    written = pd.read_csv(out, dtype={"item": str, "candidate": str, "judge": str})
    pd.testing.assert_frame_equal(written, expected.frame, check_dtype=False)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["simulate", "nope", "--out", "x.csv"], "Unknown scenario 'nope': choose one of gpqa-like"),
        (["simulate", "three-level", "--seed", "-3", "--out", "x.csv"], "--seed '-3' is negative"),
        (["simulate", "three-level", "--seed", "abc", "--out", "x.csv"], "--seed 'abc' is not an integer"),
        (["simulate", "three-level", "--items", "0", "--out", "x.csv"], "--items '0' is too small: give a whole number >= 1"),
        (["simulate", "three-level", "--items", "-5", "--out", "x.csv"], "--items '-5' is negative: give a whole number >= 1"),
        (["simulate", "three-level", "--out", "/no/such/dir/x.csv"], "the folder '/no/such/dir' does not exist"),
    ],
)
def test_simulate_command_bad_options_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    from simplex_core.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in capsys.readouterr().err
