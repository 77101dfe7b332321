"""Tests of simplex_core/inference/fitting.py (fitting, ranks, diagnostics, compiled-model reuse,
determinism, recovery on simulated data) and the ``fit``/``sensitivity`` command line."""

from __future__ import annotations

import dataclasses
import json

import arviz as az
import numpy as np
import pandas as pd
import pytest

from simplex_core.inference import warm_up
from simplex_core.cli import main
from simplex_core.model.ranks import ranks_from_scores
from simplex_core.inference.compiled_models import clear_compiled_cache
from simplex_core.inference.fit_result import diagnose
from simplex_core.inference.fitting import fit_model
from simplex_core.inference.rater_deviation import without_rater_deviation
from simplex_core.model.settings import FitSettings
from simplex_core.model.priors import stochastically_dominates
from simplex_core.data.scale import Scale
from simplex_core.model.simulate import scenario, simulate
from simplex_core.summaries.posterior_tables import candidate_summary, pairwise_probabilities
from tests.fixtures.fit_fixtures import SMALL_RUN, counts_from_simulation

# -- ranks and diagnostics (no sampling) ---------------------------------------------------------

def test_ranks_from_scores_rank_one_is_the_largest_and_ties_share():
    assert ranks_from_scores(np.array([0.1, 0.5, 0.3])).tolist() == [3, 1, 2]
    assert ranks_from_scores(np.array([[0.5, 0.5, 0.1], [0.0, -1.0, 2.0]])).tolist() == [[1, 1, 3], [2, 3, 1]]


def _idata(expected_score: np.ndarray, diverging: np.ndarray | None = None):
    chains, draws, K = expected_score.shape
    groups = {"posterior": {"expected_score": expected_score, "pi": np.stack([1 - expected_score, expected_score], -1)}}
    kwargs = dict(coords={"candidate": [f"c{k}" for k in range(K)], "true_level": ["lo", "hi"]},
                  dims={"expected_score": ["candidate"], "pi": ["candidate", "true_level"]})
    if diverging is not None:
        groups["sample_stats"] = {"diverging": diverging}
    return az.from_dict(**groups, **kwargs)


def test_diagnose_well_mixed_chains_converge():
    rng = np.random.default_rng(0)
    d = diagnose(_idata(rng.normal(size=(4, 1000, 3)), np.zeros((4, 1000), bool)))
    assert d.converged and d.divergences == 0
    assert d.max_rhat <= 1.01 and d.min_ess_bulk >= 400
    assert d.message.startswith("converged")
    assert set(d.to_dict()) == {"max_rhat", "min_ess_bulk", "min_ess_tail", "divergences", "max_rhat_all",
                                "converged", "message"}


def test_diagnose_names_the_failures_in_plain_words():
    rng = np.random.default_rng(1)
    e = rng.normal(size=(4, 1000, 3))
    e[0, :, 2] += 3.0  # one chain of candidate c2 is elsewhere
    div = np.zeros((4, 1000), bool)
    div[1, :3] = True
    d = diagnose(_idata(e, div))
    assert not d.converged
    assert d.divergences == 3
    assert d.worst_rhat_candidate == "c2"
    assert d.message.startswith("not converged: R-hat ")
    assert "on candidate c2 (needs ≤ 1.01)" in d.message
    assert "3 divergent transitions" in d.message and "--draws" not in d.message  # the front ends add the action
    walk = np.cumsum(rng.normal(size=(2, 300, 2)), axis=1) * 0.01 + rng.normal(size=(2, 1, 2)) * 0.0
    low = diagnose(_idata(walk))
    assert not low.converged and "bulk ESS" in low.message


def _words(text: str) -> list[str]:
    return [w.strip(".,:;()").lower() for w in text.split() if len(w.strip(".,:;()")) > 3]


def convergence_free(d):
    """``d`` with R-hat fine and no divergences (the ESS alone then decides)."""
    return dataclasses.replace(d, max_rhat=1.001, max_rhat_all=1.001, divergences=0)


def test_convergence_problem_is_one_sentence_and_each_front_end_adds_one_new_action():
    import re

    from simplex_core.cli.fit_commands import convergence_note
    from simplex_core.inference.fit_result import convergence_problem

    rng = np.random.default_rng(1)
    e = rng.normal(size=(4, 1000, 3))
    e[0, :, 2] += 3.0
    div = np.zeros((4, 1000), bool)
    div[1, :3] = True
    d = diagnose(_idata(e, div))
    problem = convergence_problem(d)
    assert len(re.findall(r"[.!?](\s|$)", problem)) == 1  # one sentence
    assert "R-hat" in problem and "c2" in problem and "3 divergent transitions" in problem
    words = _words(problem)
    assert len(words) == len(set(words)), problem  # no word said twice ("not converged ... not converged")
    # the command line's action is the next step from the settings used, never the one already taken
    # (engine fast's two extra rounds may already have run chains of 4 × 2000: the advice goes beyond)
    note = convergence_note(d, FitSettings(draws=2000, tune=2000, extra_rounds=2))
    assert note.startswith(problem) and "--draws 16000 --tune 16000" in note and "--draws 8000 " not in note
    note = convergence_note(d, FitSettings(draws=2000, tune=2000, extra_rounds=0))
    assert "--draws 4000 --tune 4000" in note and "--draws 2000 " not in note
    # only the bulk ESS short (71 of 400 after chains 8 × 1000 long): ESS grows with the draws, so the
    # advice asks for enough of them, 1.25 × 400 / 71 × 8 = 56.3 → 64 × 1000, not a doubling that falls short
    slow = dataclasses.replace(convergence_free(d), min_ess_bulk=71.0, converged=False, message="not converged")
    assert "--draws 64000 --tune 64000" in convergence_note(slow, FitSettings(draws=1000, tune=1000, extra_rounds=3))
    assert convergence_problem(diagnose(_idata(rng.normal(size=(4, 1000, 3)), np.zeros((4, 1000), bool)))) is None
    # chains in separate modes under a prior that allows flipped judges: the action is the prior, in
    # both front ends, since longer chains do not join such modes; under weight propagation, or without
    # separate modes, it stays the longer run
    from app_support.sidebar import PRIOR_NAMES, convergence_action as app_action

    tempered = {"tempered_s": 21.7}
    for prior in ("diagonal", "mixing"):
        note = convergence_note(d, FitSettings(prior=prior), tempered)
        assert "--prior weight-propagation" in note and "--draws" not in note and f"the {prior} prior" in note
        words = _words(note.removeprefix(problem))
        assert len(words) == len(set(words)), note
        app = app_action(FitSettings(prior=prior), tempered)
        assert "“Judge prior”" in app and PRIOR_NAMES["weight-propagation"] in app
    assert "--draws" in convergence_note(d, FitSettings(prior="diagonal"), {"tempered_s": 0.0})
    assert "--draws" in convergence_note(d, FitSettings(), tempered)
    # tempered chains that never crossed between modes (R-hat above the extra rounds' limit): longer
    # chains are not the answer; integrated mode is, and inside integrated mode gold answers
    uncrossed = {"tempered_s": 29.0, "uncrossed_modes": True}
    note = convergence_note(d, FitSettings(), uncrossed)
    assert "--integrated" in note and "--draws" not in note
    words = _words(note.removeprefix(problem))
    assert len(words) == len(set(words)), note
    note = convergence_note(d, FitSettings(integrated=True), uncrossed)
    assert "gold" in note and "--integrated" not in note and "--draws" not in note
    app = app_action(FitSettings(), uncrossed)
    assert "“Integrated: average over ω and β_max”" in app and "Draws" not in app
    assert "Integrated" not in app_action(FitSettings(integrated=True), uncrossed)


# -- fits -----------------------------------------------------------------------------------------

def test_three_level_fit_has_the_contract_variables(three_level_fit, three_level_counts):
    fit = three_level_fit
    post = fit.idata.posterior
    for name, dims in {"pi": ("candidate", "true_level"), "expected_score": ("candidate",), "rank": ("candidate",),
                       "theta": ("judge", "true_level", "level"), "rho": ("judge",)}.items():
        assert post[name].dims == ("chain", "draw") + dims, name
    assert not {"Z", "R", "W"} & set(post.data_vars)
    assert post.sizes["chain"] == SMALL_RUN["chains"] and post.sizes["draw"] == SMALL_RUN["draws"]
    assert [str(c) for c in post["candidate"].values] == list(three_level_counts.candidates)
    # E_k = Σ_m v_m π_k[m] in every draw, and every draw's ranks are a permutation of 1..K
    np.testing.assert_allclose(post["expected_score"].values, post["pi"].values @ np.array([1.0, 2.0, 3.0]))
    ranks = np.sort(fit.draws("rank"), axis=1)
    assert (ranks == np.arange(1, 7)).all()
    assert stochastically_dominates(fit.draws("theta"))
    np.testing.assert_array_equal(fit.idata.constant_data["counts"].values, three_level_counts.N)
    assert set(fit.timing) >= {"compile_s", "sample_s"} and fit.timing["sample_s"] > 0
    assert isinstance(fit.diagnostics.converged, bool) and fit.diagnostics.message


def test_binary_fit_with_random_effects_and_exclusions(binary_fit, binary_counts):
    post = binary_fit.idata.posterior
    assert {"Z", "R", "W"} <= set(post.data_vars)
    assert post["Z"].dims == ("chain", "draw", "candidate", "true_level")
    assert set(binary_counts.excluded_pairs) == {("alpha-judge", "alpha-big"), ("alpha-judge", "alpha-small"),
                                                 ("beta-judge", "beta-big"), ("beta-judge", "beta-small")}
    included = binary_fit.idata.constant_data["included"].values
    # the four self-family pairs leave their judge's vertices and are the own-family raters' (kept apart)
    assert list(post["judge"].values) == ["alpha-judge", "beta-judge", "alpha-judge · own family", "beta-judge · own family"]
    assert included[:2].sum() == 2 * 5 - 4 and included[2:].sum() == 4
    assert (~included[:2] == included[2:]).all()
    assert list(post["level"].values) == ["incorrect", "unsure", "correct"]
    assert list(post["true_level"].values) == ["incorrect", "correct"]


def _assert_reproducible(same, again, other_seed, other_omega, messages) -> None:
    """Same seed: identical draws; another seed or another ω: other draws; progress rises to 1, ends 'done'."""
    for name in ("expected_score", "theta", "R", "rank"):
        np.testing.assert_array_equal(same.idata.posterior[name].values, again.idata.posterior[name].values)
    assert not np.array_equal(other_seed.idata.posterior["expected_score"].values, same.idata.posterior["expected_score"].values)
    assert not np.array_equal(other_omega.idata.posterior["R"].values, same.idata.posterior["R"].values)
    fractions = [f for _, f in messages]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and messages[-1][0].startswith("done")


def test_nutpie_engine_swaps_data_into_the_compiled_model_and_equals_a_fresh_compile(binary_counts, binary_settings):
    """Engine 'nutpie' (the PyMC graph, the reference of the fast engine): a refit after an ω change
    reuses the compiled model (no compile time) and gives exactly what a freshly compiled model
    gives with the same seed; another seed gives other draws."""
    base = binary_settings.replace(engine="nutpie", draws=100, tune=100)
    first = fit_model(binary_counts, base)  # ω = 1: compiles this structure
    settings = base.replace(omega=2.0)
    messages = []
    swapped = fit_model(binary_counts, settings, progress_callback=lambda m, f: messages.append((m, f)))
    assert swapped.timing["reused_compiled"] and swapped.timing["compile_s"] == 0.0
    assert swapped.timing["engine_used"] == "nutpie"
    clear_compiled_cache()
    fresh = fit_model(binary_counts, settings)
    assert not fresh.timing["reused_compiled"] and fresh.timing["compile_s"] > 0
    other = fit_model(binary_counts, settings.replace(seed=settings.seed + 1))
    # the swapped model equals a fresh compile; a different ω is a different posterior, not a cached copy
    _assert_reproducible(fresh, swapped, other, first, messages)


def test_fast_engine_same_seed_same_output_and_progress(binary_counts, binary_settings, binary_fit):
    """The default engine 'fast': same data, settings and seed give identical draws (chains run in
    threads); another seed or another ω gives other draws; progress rises to 1 and ends with 'done'."""
    assert binary_fit.timing["engine_used"] == "fast"
    settings = binary_settings.replace(omega=2.0)
    messages = []
    a = fit_model(binary_counts, settings, progress_callback=lambda m, f: messages.append((m, f)))
    b = fit_model(binary_counts, settings)
    assert a.timing["reused_compiled"] and a.timing["modes"] >= 1 and 1 <= a.timing["start_modes"] <= settings.chains
    assert a.idata.posterior.sizes["chain"] == settings.chains and a.idata.posterior.sizes["draw"] == settings.draws
    other = fit_model(binary_counts, settings.replace(seed=settings.seed + 1))
    _assert_reproducible(a, b, other, binary_fit, messages)
    assert any("sampling" in m for m, _ in messages)


def test_fast_engine_runs_longer_chains_until_converged(binary_sim, binary_settings):
    """Too few draws to converge: each extra round runs chains twice as long as the last (warm-up
    and draws, new seeds) and replaces them; with none it stops after one."""
    short = binary_settings.replace(omega=1.0, chains=2, draws=60, tune=150, likelihood="per-judge")
    # the per-judge likelihood leaves self-family judgments out: its counts are built that way
    binary_counts = counts_from_simulation(binary_sim, self_exclusion=short.self_exclusion)
    once = fit_model(binary_counts, short.replace(extra_rounds=0))
    assert not once.diagnostics.converged, "the test needs a first round that does not converge"
    assert once.timing["rounds"] == 1 and once.idata.posterior.sizes["chain"] == 2
    more = fit_model(binary_counts, short.replace(extra_rounds=2))
    rounds = more.timing["rounds"]
    assert rounds in (2, 3)
    assert more.idata.posterior.sizes["draw"] == 2 ** (rounds - 1) * short.draws  # the last, longest chains only
    assert more.idata.posterior.sizes["chain"] == 2
    assert not np.array_equal(more.idata.posterior["expected_score"].values[:2, :60], once.idata.posterior["expected_score"].values)
    assert more.diagnostics.min_ess_bulk > once.diagnostics.min_ess_bulk
    with pytest.raises(ValueError, match="extra_rounds must be between 0 and 10"):
        FitSettings(extra_rounds=11)


@pytest.mark.slow
def test_pymc_engine_runs_the_same_model(three_level_counts):
    """The reference engine (PyMC's NUTS, sequential chains) fits the same model and ranks alike."""
    fit = fit_model(three_level_counts, FitSettings(engine="pymc", chains=1, draws=100, tune=100, seed=2))
    assert fit.idata.posterior["rank"].dims == ("chain", "draw", "candidate")
    assert not any(v.endswith("__") for v in fit.idata.posterior.data_vars)
    assert fit.timing["sample_s"] > 0


# -- recovery (paper's claims on simulated data) -------------------------------------------------

@pytest.mark.slow
def test_rank_intervals_cover_the_population_ranks_over_replicates():
    """20 replicates of the three-level scenario (6 candidates, 3 judges): the 95% rank intervals
    cover the population rank of ≥ 85% of candidates, and candidates whose population expected
    scores differ by ≥ 0.5 are ordered right by the point ranking in every replicate."""
    covered, total, misordered = 0, 0, []
    for rep in range(20):
        sim = scenario("three-level", seed=1000 + rep, n_items=120)
        counts = counts_from_simulation(sim)
        fit = fit_model(counts, FitSettings(chains=2, draws=150, tune=150, seed=rep, extra_rounds=0))
        table = candidate_summary(fit, sort=False)
        truth = sim.ranks
        covered += int(((table["rank_lo"] <= truth) & (truth <= table["rank_hi"])).sum())
        total += len(truth)
        e_true, e_hat = sim.expected_scores, table["expected_score_mean"].to_numpy()
        for a in range(len(e_true)):
            for b in range(len(e_true)):
                if e_true[a] - e_true[b] >= 0.5 and not e_hat[a] > e_hat[b]:
                    misordered.append((rep, sim.candidates[a], sim.candidates[b]))
    assert covered / total >= 0.85, f"coverage {covered}/{total}"
    assert not misordered


@pytest.mark.slow
def test_two_levels_strong_constancy_large_n_recovers_the_true_order():
    """Theorem 1 (i): 2 levels, one judge with strong constancy and better than random (but far from
    perfect): with many items the posterior orders the candidates correctly with near certainty."""
    accuracy = np.array([0.35, 0.8, 0.2, 0.6])
    sim = simulate(scale=Scale((0.0, 1.0)), n_items=1000, candidates=["w", "x", "y", "z"], judges=["solo"],
                   pi=np.stack([1 - accuracy, accuracy], axis=1), theta=np.array([[0.7, 0.3], [0.35, 0.65]]),
                   omega=0.0, rng=7)
    fit = fit_model(counts_from_simulation(sim), FitSettings(chains=2, draws=150, tune=150, seed=1, extra_rounds=0))
    table = candidate_summary(fit, sort=False).set_index("candidate")
    assert table["point_rank"].tolist() == [3, 1, 4, 2]
    # The theorem is about the simplex posterior of E_k: with one judge the truth's rater deviation
    # comes from its prior alone and rightly keeps the truth's ranks uncertain, however many items.
    pairwise = pairwise_probabilities(without_rater_deviation(fit.idata))
    order = ["x", "z", "w", "y"]
    for better, worse in zip(order, order[1:]):
        assert pairwise.loc[better, worse] > 0.95, (better, worse)


# -- command line ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def three_level_csv(three_level_sim, tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "three.csv"
    three_level_sim.frame.to_csv(path, index=False)
    return path


def test_cli_leaderboard_csv_cannot_run_formulas_and_the_json_keeps_the_names(tmp_path):
    # names come from other people's files; a report opened in a spreadsheet must not run them
    rng = np.random.default_rng(3)
    names = ["=HYPERLINK(\"http://x\")", "-minus", "@at", "plain"]
    rows = [{"item": f"q{i}", "candidate": c, "judge": "j", "score": int(rng.random() < 0.3 + 0.1 * k)}
            for k, c in enumerate(names) for i in range(40)]
    data, out, lb = tmp_path / "names.csv", tmp_path / "result.json", tmp_path / "leaderboard.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    code = main(["fit", str(data), "--out", str(out), "--leaderboard", str(lb), "--chains", "2", "--draws", "60",
                 "--tune", "60", "--seed", "1", "--extra-rounds", "0", "--quiet"])
    assert code == 0
    board = pd.read_csv(lb)
    assert set(board["candidate"]) == {"'" + n for n in names[:3]} | {"plain"}
    assert {r["candidate"] for r in json.loads(out.read_text())["leaderboard"]} == set(names)


def test_cli_fit_writes_the_result_json(three_level_csv, three_level_fit, tmp_path, capsys):
    out, nc, lb = tmp_path / "result.json", tmp_path / "posterior.nc", tmp_path / "leaderboard.csv"
    code = main(["fit", str(three_level_csv), "--out", str(out), "--idata", str(nc), "--leaderboard", str(lb), "--chains", "2",
                 "--draws", "60", "--tune", "60", "--seed", "1", "--extra-rounds", "0", "--quiet"])
    assert code == 0
    doc = json.loads(out.read_text())
    assert set(doc) == {"candidates", "leaderboard", "pairwise", "judges", "excluded_pairs", "notes", "diagnostics",
                        "settings", "hyperparameters", "timing", "judge_panel", "rater_deviation"}
    assert doc["hyperparameters"] == {}  # a fixed setting samples neither ω nor β_max
    assert doc["rater_deviation"]["truth_tau"] > 0 and set(doc["rater_deviation"]["judges"]) == set(doc["judges"])
    eff = doc["judge_panel"]["effective_judges"]
    assert 1 <= eff["lo"] <= eff["mean"] <= eff["hi"] <= len(doc["judges"])
    assert doc["notes"] == []  # three judges score every candidate
    assert [c["candidate"] for c in doc["candidates"]][0] in {"model-F", "model-E"}
    board = pd.read_csv(lb)
    assert list(board["candidate"]) == [r["candidate"] for r in doc["leaderboard"]]
    assert board["tier"].iloc[0] == 1 and board["tier"].is_monotonic_increasing
    for c in doc["candidates"]:
        assert isinstance(c["rank_lo"], int) and isinstance(c["rank_hi"], int) and c["rank_lo"] <= c["rank_hi"]
    assert doc["settings"]["options"]["draws"] == 60 and doc["settings"]["seed"] == 1
    assert doc["settings"]["command_line"].startswith("python -m simplex_core fit ")
    assert "--draws=60" in doc["settings"]["command_line"] and "--extra-rounds=0" in doc["settings"]["command_line"]
    assert doc["settings"]["data_hash"] and doc["settings"]["scale"]["values"] == [1.0, 2.0, 3.0]
    # a file, not a built-in: no dataset name; the table's source is the file it was read from
    assert doc["settings"]["data"] == {"dataset": None, "source": str(three_level_csv), "criterion": None, "collapsed": False}
    assert set(doc["timing"]) == {"compile_s", "sample_s", "sampler", "rounds", "chains", "draws_per_chain"}
    assert doc["timing"]["draws_per_chain"] == 60 * 2 ** (doc["timing"]["rounds"] - 1)
    assert doc["judges"]["judge-1"]["levels"] == ["1", "2", "3"]
    assert len(doc["pairwise"]["matrix"]) == 6 and doc["pairwise"]["matrix"][0][0] is None
    assert az.from_netcdf(nc).posterior["rank"].shape == (2, 60, 6)
    assert "wrote" in capsys.readouterr().out


def test_cli_fit_without_rater_deviation_ranks_e_alone(three_level_csv, tmp_path):
    out, nc = tmp_path / "result.json", tmp_path / "posterior.nc"
    code = main(["fit", str(three_level_csv), "--out", str(out), "--idata", str(nc), "--chains", "2", "--draws", "60",
                 "--tune", "60", "--seed", "1", "--extra-rounds", "0", "--quiet", "--no-rater-deviation"])
    assert code == 0
    doc = json.loads(out.read_text())
    assert "turned off" in doc["rater_deviation"]["reason"]
    assert "--no-rater-deviation" in doc["settings"]["command_line"]
    post = az.from_netcdf(nc).posterior
    np.testing.assert_array_equal(post["rank"].values, post["expected_rank"].values)


def test_cli_fit_says_when_fewer_than_three_judges_score_the_answers(three_level_sim, tmp_path, capsys):
    path, out = tmp_path / "two-judges.csv", tmp_path / "result.json"
    three_level_sim.frame[three_level_sim.frame["judge"] != "judge-3"].to_csv(path, index=False)
    code = main(["fit", str(path), "--out", str(out), "--chains", "1", "--draws", "30", "--tune", "30", "--seed", "1",
                 "--extra-rounds", "0", "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    note = json.loads(out.read_text())["notes"]
    assert len(note) == 1 and "of any candidate" in note[0] and f"Note: {note[0]}" in printed


@pytest.mark.parametrize("options, message", [
    (["--delta", "1,2"], "--delta '1,2': it has 2 values but the scale has 3 true levels"),
    (["--omega", "-1"], "omega must be ≥ 0"),
    (["--chains", "0"], "chains must be between 1 and 64"),
    (["--draws", "1000000000000"], "--draws must be between 1 and 1,000,000"),  # the sampler aborted asking for TBs
    (["--chains", "8", "--draws", "900000"], "chains × draws, must be at most 2,000,000"),
    (["--integrated", "--omega", "2"], "--integrated puts priors on ω and β_max"),
])
def test_cli_fit_bad_options_exit_2_with_the_message(three_level_csv, tmp_path, capsys, options, message):
    code = main(["fit", str(three_level_csv), "--out", str(tmp_path / "r.json"), *options])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_cli_fit_missing_data_exits_2(tmp_path, capsys):
    assert main(["fit", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "r.json")]) == 2
    assert "neither a file nor a built-in dataset" in capsys.readouterr().err


def test_cli_sensitivity_writes_the_sweep(three_level_csv, three_level_fit, tmp_path):
    out = tmp_path / "sens.json"
    code = main(["sensitivity", str(three_level_csv), "--out", str(out), "--omegas", "0", "--beta-maxes", "0,5",
                 "--chains", "2", "--draws", "50", "--tune", "50", "--extra-rounds", "0", "--quiet",
                 "--workers", "0"])  # in this process; tests/test_distributed.py runs a sweep on Dask
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["base"]["omega"] == 0.0 and doc["base"]["beta_max"] == 5.0
    rows = doc["settings"]
    assert [(r["sweep"], r["omega"], r["beta_max"]) for r in rows] == [("omega", 0.0, 5.0), ("beta_max", 0.0, 0.0),
                                                                       ("beta_max", 0.0, 5.0)]
    assert rows[0]["spearman_vs_base"] == 1.0 and rows[2]["spearman_vs_base"] == 1.0
    assert set(rows[1]) >= {"omega", "beta_max", "spearman_vs_base", "candidates", "diagnostics"}
    # the base fit's own convergence, also when the grids leave the base out
    assert doc["base_diagnostics"] == rows[0]["diagnostics"]
    assert main(["sensitivity", "x.csv", "--out", str(out), "--omegas", "0,-1"]) == 2


def test_cli_figures_writes_every_figure_and_fits_the_base_setting_once(three_level_csv, tmp_path, monkeypatch, capsys):
    from simplex_core.inference import fitting as inference

    fitted = []
    real = inference.fit_model

    def counting(counts, settings, **kw):
        fitted.append((settings.omega, settings.beta_max))
        return real(counts, settings, **kw)

    monkeypatch.setattr(inference, "fit_model", counting)
    out = tmp_path / "figs"
    code = main(["figures", str(three_level_csv), "--out", str(out), "--size", "16:9", "--formats", "html",
                 "--omegas", "0,1", "--beta-maxes", "5", "--chains", "2", "--draws", "60", "--tune", "60",
                 "--extra-rounds", "0", "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["rank-distributions-16x9.html", "sensitivity-16x9.html",
                                                      "simplex-judges-16x9.html"]
    # the base (ω = 0, β_max = 5) once, the sweep's other point once: the sweep reuses the base fit
    assert sorted(fitted) == [(0.0, 5.0), (1.0, 5.0)]


def test_figures_draw_the_setting_asked_for_and_mark_an_unconverged_fit(three_level_csv, tmp_path, capsys):
    """--omega/--beta-max reach the fit and the caption (they were once ignored: ω = 0, β_max = 5 drawn);
    a fit too short to converge is marked on its figures; --integrated beside --beta-max is refused."""
    out = tmp_path / "figs"
    code = main(["figures", str(three_level_csv), "--out", str(out), "--size", "16:9", "--formats", "html",
                 "--no-sensitivity", "--omega", "1", "--beta-max", "2", "--chains", "2", "--draws", "20", "--tune", "20",
                 "--extra-rounds", "0", "--quiet"])
    assert code == 0, capsys.readouterr().err
    page = (out / "rank-distributions-16x9.html").read_text()
    assert "\\u03c9 = 1, \\u03b2_max = 2" in page and "fit NOT converged: " in page
    # a second run into the folder: a file it did not write (an earlier run's PNG) is named, not left unsaid
    (out / "rank-distributions-paper.png").write_bytes(b"an earlier run's figure")
    capsys.readouterr()
    assert main(["figures", str(three_level_csv), "--out", str(out), "--size", "16:9", "--formats", "html",
                 "--no-sensitivity", "--chains", "2", "--draws", "20", "--tune", "20", "--extra-rounds", "0"]) == 0
    said = capsys.readouterr().out
    assert "Note: 1 other file in" in said and "not written by this run" in said and "rank-distributions-paper.png" in said
    code = main(["figures", str(three_level_csv), "--out", str(out), "--integrated", "--beta-max", "2", "--quiet"])
    assert code == 2 and "--integrated puts priors on ω and β_max" in capsys.readouterr().err


def test_fit_writes_side_outputs_into_new_folders_and_advises_chains_for_one_chain(three_level_csv, tmp_path, capsys):
    """--leaderboard and --idata into folders that do not exist yet are created, as --out's; one chain has
    no R-hat: the advice is more chains, not longer ones, and no extra round runs."""
    out = tmp_path / "r.json"
    code = main(["fit", str(three_level_csv), "--out", str(out), "--leaderboard", str(tmp_path / "new" / "l.csv"),
                 "--idata", str(tmp_path / "new2" / "p.nc"), "--chains", "1", "--draws", "30", "--tune", "30", "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert (tmp_path / "new" / "l.csv").stat().st_size > 0 and (tmp_path / "new2" / "p.nc").stat().st_size > 0
    assert "R-hat compares chains: fit with --chains 4" in printed and "Sample longer" not in printed
    assert json.loads(out.read_text())["timing"]["rounds"] == 1


def test_the_figures_command_line_parses():
    import shlex

    from simplex_core.cli import build_parser
    from simplex_core.summaries.command_lines import figures_command_line

    args = build_parser().parse_args(shlex.split(figures_command_line("hanna", "coherence"))[3:])
    assert (args.command, args.data, args.criterion, args.size, args.formats) == ("figures", "hanna", "coherence", "both", "png,svg")


@pytest.mark.parametrize("settings", [
    FitSettings(),
    FitSettings(omega=1.5, beta_max=0, prior="mixing", delta=(1.0, 2.5, 1.0), self_exclusion=False,
                likelihood="per-judge", chains=2, draws=300, tune=200, seed=7, extra_rounds=0),
    FitSettings(integrated=True, delta="central"),
])
def test_the_fit_command_line_reads_back_as_the_same_settings(settings):
    import shlex

    from simplex_core.cli import build_parser
    from simplex_core.summaries.command_lines import fit_command_line

    argv = shlex.split(fit_command_line("mtbench", settings, criterion="overall"))
    assert argv[:4] == ["python", "-m", "simplex_core", "fit"]
    # as the Export page shows it (one option a line) and with a criterion a shell would split
    shown = fit_command_line("my data.csv", settings, criterion="answer quality", one_option_per_line=True)
    assert all(line.lstrip().startswith(("python", "--")) for line in shown.splitlines())
    shown_args = build_parser().parse_args(shlex.split(shown.replace("\\\n", ""))[3:])  # as bash joins the lines
    assert (shown_args.data, shown_args.criterion) == ("my data.csv", "answer quality")
    args = build_parser().parse_args(argv[3:])
    assert (args.data, args.criterion) == ("mtbench", "overall")
    assert {k: v for k, v in vars(shown_args).items() if k not in ("data", "criterion")} == \
        {k: v for k, v in vars(args).items() if k not in ("data", "criterion")}
    delta = args.delta if args.delta in ("inflation", "deflation", "central", "uniform") else tuple(map(float, args.delta.split(",")))
    read = FitSettings(omega=args.omega, beta_max=args.beta_max, integrated=args.integrated, prior=args.prior, delta=delta,
                       self_exclusion=not args.no_self_exclusion, likelihood=args.likelihood, chains=args.chains,
                       draws=args.draws, tune=args.tune, seed=args.seed, extra_rounds=args.extra_rounds)
    assert read == settings


def test_progress_counts_only_the_iterations_chains_have_run():
    """A nutpie snapshot pads every chain with NaN to the longest one; with 4 chains on 2 cores, two
    have not started halfway through. The progress count is what was run, not draw × chain."""
    import arviz as az

    from simplex_core.inference.sampling import iterations_done

    step = np.full((4, 100), np.nan)
    step[0, :100] = 0.5  # chains 0 and 1 have finished their warm-up, 2 and 3 have not started
    step[1, :100] = 0.4
    draws = np.full((4, 30), np.nan)
    draws[0, :30] = 0.5  # chain 0 has kept 30 draws, chain 1 is on its first
    snapshot = az.from_dict(posterior={"x": np.zeros((4, 30))}, sample_stats={"step_size": draws},
                            warmup_posterior={"x": np.zeros((4, 100))}, warmup_sample_stats={"step_size": step},
                            save_warmup=True)
    assert iterations_done(snapshot) == 230
    assert iterations_done(az.from_dict(posterior={"x": np.zeros((2, 5))})) == 0  # no stats yet


# -- the fit workers' warm-up ------------------------------------------------------------------------

def test_only_one_process_at_a_time_compiles_a_stage_of_the_numba_code():
    # a file lock: a second holder (another open file, as another worker process has) waits for the first
    import threading
    import time

    order: list[str] = []
    held = threading.Event()

    def first() -> None:
        with warm_up._one_compiler_at_a_time("test-stage"):
            held.set()
            time.sleep(0.5)
            order.append("first done")

    thread = threading.Thread(target=first)
    thread.start()
    assert held.wait(10)
    with warm_up._one_compiler_at_a_time("test-stage"):
        order.append("second in")
    thread.join()
    assert order == ["first done", "second in"]
    with warm_up._one_compiler_at_a_time("another-stage"):  # stages do not wait for each other
        with warm_up._one_compiler_at_a_time("test-stage"):
            pass


def test_a_fit_waiting_for_the_tempered_kernels_of_the_warm_up_reports_and_can_be_cancelled(monkeypatch):
    import threading

    monkeypatch.setattr(warm_up, "_TEMPERING_WARMING", threading.Event())
    monkeypatch.setattr(warm_up, "_TEMPERING_LOADED", threading.Event())
    warm_up._TEMPERING_WARMING.set()  # the warm-up's child process is compiling them
    reports: list[str] = []

    class Cancelled(Exception):
        pass

    def cb(message: str, fraction: float) -> None:
        reports.append(message)
        if len(reports) == 2:
            raise Cancelled  # as the worker's progress callback does once the fit is cancelled

    with pytest.raises(Cancelled):
        warm_up.tempering_kernels_ready(cb)
    assert all("tempered sampler" in r for r in reports)
    warm_up._TEMPERING_LOADED.set()  # compiled: the fit goes on at once
    warm_up.tempering_kernels_ready(cb)
    assert len(reports) == 2
