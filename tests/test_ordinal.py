"""The ordinal many-facet model (``simplex_core.methods.ordinal``): the numba density equals PyMC's
``OrderedLogistic`` model, known qualities are recovered from data simulated from the model, the
self-family exclusion is respected, and a binary scale is the same model with one cutpoint."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from simplex_core.methods.simple_average import simple_average
from simplex_core.methods.ordinal import OrdinalMethod, OrdinalSettings, build_ordinal_model, ordinal_data, ordinal_logp_grad, ordinal_method
from simplex_core.data.scale import Scale

SMALL = OrdinalSettings(chains=2, draws=600, tune=600, seed=1)


def simulate_view(quality, n_items, n_levels, *, n_judges=3, sigma_item=0.8, sigma_answer=0.0, seed=0):
    """An item view simulated from the ordinal model: eta = q_k + u_i + e_ik, each judge with its
    own severity and spread of cutpoints; levels 1..M."""
    rng = np.random.default_rng(seed)
    q = np.asarray(quality, dtype=float)
    K = len(q)
    u = rng.normal(0, sigma_item, n_items)
    e = rng.normal(0, sigma_answer, (n_items, K))
    base = np.linspace(-1.5, 1.5, n_levels - 1) if n_levels > 2 else np.array([0.0])
    rows = []
    judges = [f"j{j}" for j in range(n_judges)]
    cuts = [base * (0.8 + 0.4 * j / max(1, n_judges - 1)) + rng.normal(0, 0.7) for j in range(n_judges)]
    for i in range(n_items):
        for k in range(K):
            eta = q[k] + u[i] + e[i, k]
            row = {"item": f"i{i}", "candidate": f"c{k}"}
            for j, name in enumerate(judges):
                p_above = special.expit(eta - cuts[j])  # P(y > m) for each cutpoint m
                row[name] = 1.0 + float((rng.random() < p_above).sum()) if n_levels > 2 else float(rng.random() < p_above[0])
            rows.append(row)
    view = pd.DataFrame(rows).set_index(["item", "candidate"])
    return view, judges


def _pymc_point(model, rng):
    return {v.name: rng.normal(size=np.shape(model.initial_point()[v.name])) * 0.7 for v in model.value_vars}


@pytest.mark.parametrize("n_levels,cutpoints,answers,items", [
    (5, "judge", True, "centred"), (5, "judge", False, "non-centred"), (4, "shared", True, "non-centred"),
    (2, "judge", False, "centred"), (2, "judge", True, "non-centred")])
@pytest.mark.parametrize("far", [False, True])
def test_numba_density_equals_the_pymc_model(n_levels, cutpoints, answers, items, far):
    """Equal gradients and log densities up to a constant, at ordinary points and (``far``) where every
    cutpoint is near -103, beyond the kernel's fast bound, so that its stable per-term form answers."""
    view, _ = simulate_view([0.5, 0.0, -0.5], 6, n_levels, seed=3)
    view.iloc[1, 0] = np.nan  # an answer one judge did not score
    scale = Scale(tuple(range(1, n_levels + 1)) if n_levels > 2 else (0, 1))
    settings = OrdinalSettings(cutpoints=cutpoints, answer_effects=answers, item_parametrisation=items)
    data = ordinal_data(view, scale)
    model = build_ordinal_model(data, settings)
    assert ("item_effect" in model.named_vars) == (items == "centred")
    # FAST_COMPILE: no C compilation of the model variants (minutes on a busy machine)
    logp, dlogp = model.compile_logp(mode="FAST_COMPILE"), model.compile_dlogp(mode="FAST_COMPILE")
    rng = np.random.default_rng(0)
    values = []
    for _ in range(2):
        point = _pymc_point(model, rng)
        if far:
            point["severity"] = point["severity"] - 103.0
        x = np.concatenate([np.ravel(point[v.name]) for v in model.value_vars])
        lp, grad = ordinal_logp_grad(x, data, settings)
        np.testing.assert_allclose(grad, dlogp(point), rtol=1e-8, atol=1e-8)
        values.append((float(logp(point)), lp))
    # equal up to a constant: the difference between two points agrees
    assert values[0][0] - values[1][0] == pytest.approx(values[0][1] - values[1][1], abs=1e-8)


@pytest.mark.parametrize("n_levels", [2, 5])
def test_fast_and_stable_likelihoods_agree(n_levels):
    """The kernel's two forms of the likelihood (exponentials made once per answer and cutpoint; the
    stable per-term form) give the same value and gradients, repeated judgments counted once each."""
    from simplex_core.methods.ordinal_density import _events_fast, _groups_stable, pack

    rng = np.random.default_rng(n_levels)
    K, I, J, n = 4, 7, 3, 300
    item, cand, judge = rng.integers(0, I, n), rng.integers(0, K, n), rng.integers(0, J, n)
    level = rng.integers(0, n_levels, n)
    p = pack(item, cand, judge, level, K, J, n_levels)
    assert p.g_w.sum() == n and p.g_w.max() > 1  # some (answer, judge, level) repeated: one group, a count
    assert p.ev_w.sum() == (level < n_levels - 1).sum() + (level > 0).sum()
    eta = rng.normal(0, 3, len(p.ans_k))
    cut = np.sort(rng.normal(0, 3, (J, n_levels - 1)), axis=1)
    out = []
    for fast in (True, False):
        g_eta, g_cut = np.zeros(len(p.ans_k)), np.zeros((J, n_levels - 1))
        if fast:
            lp = _events_fast(eta, np.exp(eta), cut, p.ev_ptr, p.ev_jm, p.ev_w, p.n_pos, p.w_jy, g_eta, g_cut)
        else:
            lp = _groups_stable(eta, cut, p.g_a, p.g_j, p.g_y, p.g_w, n_levels - 1, g_eta, g_cut)
        out.append((lp, g_eta, g_cut))
    assert out[0][0] == pytest.approx(out[1][0], rel=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-9, atol=1e-12)


def test_item_effects_are_centred_when_items_have_many_judgments():
    from simplex_core.methods.ordinal import CENTRED_MIN_PER_ITEM, _layout

    many, _ = simulate_view([0.5, 0.0, -0.5], 8, 3, n_judges=4, seed=1)  # 12 judgments per item
    few = many.copy()
    few.iloc[:, 1:] = np.nan  # 3 per item
    auto = OrdinalSettings()
    assert 3 < CENTRED_MIN_PER_ITEM <= 12
    assert _layout(ordinal_data(many, Scale((1, 2, 3))), auto).item_centred
    assert not _layout(ordinal_data(few, Scale((1, 2, 3))), auto).item_centred
    forced = OrdinalSettings(item_parametrisation="non-centred")
    assert not _layout(ordinal_data(many, Scale((1, 2, 3))), forced).item_centred
    with pytest.raises(ValueError, match="item_parametrisation must be one of auto, centred, non-centred"):
        OrdinalSettings(item_parametrisation="centered")


def test_recovers_simulated_qualities_and_its_intervals_cover():
    quality = np.array([1.2, 0.6, 0.0, -0.6, -1.2])
    view, _ = simulate_view(quality, 40, 5, seed=11)
    result = ordinal_method(view, Scale((1, 2, 3, 4, 5)), settings=SMALL)
    true_rank = stats.rankdata(-quality)
    assert result.details["converged"] == 1.0, result.notes
    assert stats.spearmanr(result.scores.to_numpy(), quality).statistic >= 0.9
    assert np.all((result.rank_lo.to_numpy() <= true_rank) & (true_rank <= result.rank_hi.to_numpy()))
    # qualities are on the simulated logit scale (sum to zero): close to the truth
    np.testing.assert_allclose(result.scores.to_numpy(), quality - quality.mean(), atol=0.5)
    best = [result.details[f"p_best:c{k}"] for k in range(5)]
    assert sum(best) == pytest.approx(1.0) and int(np.argmax(best)) == 0
    draws = result.rank_draws
    assert set(draws.columns) == {"replicate", "candidate", "rank"} and len(draws) == 5 * 1200


def test_binary_scale_is_one_cutpoint_per_judge():
    quality = np.array([1.5, 0.5, -0.5, -1.5])
    view, _ = simulate_view(quality, 60, 2, n_judges=4, seed=5)
    scale = Scale((0, 1))
    data = ordinal_data(view, scale)
    assert data.n_levels == 2
    model = build_ordinal_model(data, SMALL)
    assert "log_gap" not in model.named_vars  # one cutpoint: a judge's severity only
    result = ordinal_method(view, scale, settings=SMALL)
    assert result.details["converged"] == 1.0, result.notes
    assert list(result.ranks.to_numpy()) == [1.0, 2.0, 3.0, 4.0]


def test_self_family_exclusion_drops_exactly_those_judgments():
    view, judges = simulate_view([0.5, 0.0, -0.5], 10, 5, seed=2)
    scale = Scale((1, 2, 3, 4, 5))
    excluded = frozenset({("j0", "c0"), ("j1", "c2")})
    data = ordinal_data(view, scale, excluded)
    by_hand = view.copy()
    by_hand.loc[(slice(None), "c0"), "j0"] = np.nan
    by_hand.loc[(slice(None), "c2"), "j1"] = np.nan
    same = ordinal_data(by_hand, scale)
    assert data.n_judgments == 10 * 3 * 3 - 2 * 10
    for name in ("item", "candidate", "judge", "level"):
        np.testing.assert_array_equal(getattr(data, name), getattr(same, name))
    # the excluded judge's scores of its own family do not move the fit: a self-preferring judge
    flattering = view.copy()
    flattering.loc[(slice(None), "c0"), "j0"] = 5.0
    key = OrdinalMethod(scale, excluded, SMALL)._keyed
    assert key(flattering)[0] == key(view)[0]


def test_candidate_with_every_judgment_excluded_has_no_rank():
    view, judges = simulate_view([0.5, 0.0, -0.5], 15, 4, seed=4)
    excluded = frozenset((j, "c1") for j in judges)
    result = ordinal_method(view, Scale((1, 2, 3, 4)), excluded=excluded, settings=SMALL)
    assert np.isnan(result.scores["c1"]) and np.isnan(result.ranks["c1"]) and np.isnan(result.rank_lo["c1"])
    assert any("c1" in n and "no judgments" in n for n in result.notes)
    assert (result.rank_draws.query("candidate == 'c1'")["rank"] == 3).all()  # ranked last in the draws
    assert simple_average(view, excluded=excluded).scores.isna()["c1"]  # as the baselines


def test_score_off_the_scale_is_named():
    view, _ = simulate_view([0.5, -0.5], 4, 3, seed=1)
    view.loc[("i2", "c1"), "j1"] = 2.5
    with pytest.raises(ValueError, match=r"judge 'j1' gave 2.5 to candidate 'c1' on item 'i2'"):
        ordinal_data(view, Scale((1, 2, 3)))


def test_method_memoises_and_keeps_history():
    view, _ = simulate_view([0.5, 0.0, -0.5], 12, 3, seed=8)
    method = OrdinalMethod(Scale((1, 2, 3)), settings=SMALL)
    first = method(view, None)
    assert method(view, None) is first and len(method.history) == 2 and len(method.memo) == 1
    assert method.fit_tasks([view]) == []
    assert first.uses_labels is False and first.method == "ordinal"


def _long_csv(path, n_items=40, seed=6):
    """A binary table with truth as a file: 4 candidates well apart, 3 judges."""
    quality = np.array([1.5, 0.5, -0.5, -1.5])
    view, judges = simulate_view(quality, n_items, 2, n_judges=3, seed=seed)
    truth = pd.Series((view[judges].mean(axis=1) >= 0.5).astype(float), index=view.index)
    frame = view.reset_index().melt(id_vars=["item", "candidate"], var_name="judge", value_name="score")
    frame["true_score"] = truth.reindex(pd.MultiIndex.from_frame(frame[["item", "candidate"]])).to_numpy()
    frame.to_csv(path, index=False)
    return path


CLI_FIT = ["--chains", "2", "--draws", "300", "--tune", "300", "--extra-rounds", "0"]


def test_evaluate_runs_ordinal_beside_the_baselines(tmp_path):
    from simplex_core.cli import main

    out = tmp_path / "eval.csv"
    rc = main(["evaluate", str(_long_csv(tmp_path / "t.csv")), "--out", str(out), "--methods", "ordinal,simple_average",
               "--ci-resamples", "2", "--bayes-ci-resamples", "1", "--quiet", "--workers", "0", *CLI_FIT])
    assert rc == 0
    table = pd.read_csv(out).set_index("method")
    row = table.loc["ordinal"]
    assert not bool(row["uses_labels"]) and row["resamples"] == 1
    assert row["converged"] in (True, False) and row["resamples_converged"] in (0.0, 1.0)
    assert row["spearman"] >= 0.8 and 0 <= row["coverage"] <= 1
    assert pd.isna(table.loc["simple_average", "converged"])


def test_fit_ordinal_adds_its_ranking_to_result_json(tmp_path):
    import json

    from simplex_core.cli import main

    out = tmp_path / "result.json"
    rc = main(["fit", str(_long_csv(tmp_path / "t.csv")), "--out", str(out), "--ordinal", "--quiet", *CLI_FIT])
    assert rc == 0
    doc = json.loads(out.read_text())
    ordinal = doc["ordinal"]
    assert ordinal["uses_labels"] is False and ordinal["method"] == "ordinal"
    assert [r["candidate"] for r in ordinal["candidates"]] == ["c0", "c1", "c2", "c3"]  # best first
    assert all(r["rank_lo"] <= r["rank"] <= r["rank_hi"] for r in ordinal["candidates"])
    assert sum(r["p_best"] for r in ordinal["candidates"]) == pytest.approx(1.0)
    assert "--ordinal" in doc["settings"]["command_line"]


def test_a_run_that_has_not_converged_is_followed_by_longer_ones():
    """Too few draws to reach a bulk ESS of 400 (2 chains × 40): each extra round doubles draws and
    warm-up, and the fit returned is the last run's, with its settings; no extra round, no change."""
    from simplex_core.methods.ordinal import fit_ordinal

    view, _ = simulate_view(np.array([1.0, 0.0, -1.0]), 20, 3, seed=3)
    data = ordinal_data(view, Scale((1, 2, 3)))
    tiny = OrdinalSettings(chains=2, draws=40, tune=40, seed=2, extra_rounds=0)
    alone = fit_ordinal(data, tiny)
    assert not alone.converged and alone.settings.draws == 40
    longer = fit_ordinal(data, OrdinalSettings(chains=2, draws=40, tune=40, seed=2, extra_rounds=2))
    assert longer.settings.draws in (80, 160) and longer.settings.tune == longer.settings.draws
    assert longer.converged or longer.settings.draws == 160  # stops at the first converged run, else after two
    with pytest.raises(ValueError, match="extra_rounds must be a whole number of at least 0"):
        OrdinalSettings(extra_rounds=-1)
