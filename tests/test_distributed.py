"""Studies on dask.distributed: a run on a local cluster equals the serial run with the same seed.

One LocalCluster of 2 single-threaded worker processes is shared by the module (starting one costs a
few seconds, and every worker loads the fast engine once). Fits are tiny.
"""

from __future__ import annotations

import json
import operator

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from simplex_core.cli import main  # noqa: E402
from simplex_core.data.views import count_tensor  # noqa: E402
from simplex_core.data.table import load_table  # noqa: E402
from simplex_core.inference import distributed  # noqa: E402
from simplex_core.inference.distributed import check_cluster, map_tasks, open_client, start_client  # noqa: E402
from simplex_core.studies.experiments import bayesian_methods, evaluate_table  # noqa: E402
from simplex_core.model.definition import FitSettings  # noqa: E402
from simplex_core.data.scale import Scale  # noqa: E402
from simplex_core.studies.sensitivity import sensitivity_sweep  # noqa: E402
from simplex_core.model.simulate import simulate  # noqa: E402

SCALE = Scale((1.0, 2.0, 3.0))
TINY = dict(chains=2, draws=100, tune=100, extra_rounds=0)


@pytest.fixture(scope="module")
def client():
    with open_client(n_workers=2) as c:
        yield c


@pytest.fixture(scope="module")
def table():
    sim = simulate(scale=SCALE, n_items=40, candidates=3, judges=2,
                   pi=[[0.1, 0.3, 0.6], [0.3, 0.4, 0.3], [0.6, 0.3, 0.1]], rng=3)
    return load_table(sim.frame, scale=SCALE)


def test_map_tasks_keeps_input_order_and_reports_each_task(client):
    lines: list[str] = []
    items = list(range(12))
    out = map_tasks(operator.neg, items, client=client, labels=[f"n{i}" for i in items], progress=lines.append)
    assert out == [-i for i in items] == map_tasks(operator.neg, items)
    assert len(lines) == 12 and lines[-1].startswith("12 of 12 done: n")


def test_map_tasks_names_the_failing_task(client):
    with pytest.raises(TypeError) as info:
        map_tasks(operator.neg, [1, "x", 3], client=client, labels=["one", "two", "three"])
    assert any("two" in note for note in info.value.__notes__)


def test_bayesian_ppi_fits_on_dask_once_for_both_shares_and_equals_serial(table, client):
    """bayesian_ppi_5 and bayesian_ppi_10 share one label-free fit per view: the prefetch runs it on
    the workers through the method's own task runner, once per view, and the table equals a serial run's."""
    from simplex_core.methods.baselines import baseline_methods
    from simplex_core.data.views import item_view
    from simplex_core.summaries.evaluation import resampled_views
    from simplex_core.studies.experiments import prefetch_fits
    from simplex_core.studies.model_ppi import model_ppi_methods

    def run(c):
        ours = model_ppi_methods(table, ("bayesian_ppi_5", "bayesian_ppi_10"), **TINY)
        ppi = baseline_methods(item_view(table), table.scale, single_judges=False, ppi_fractions=(0.05, 0.10))
        if c is not None:
            assert prefetch_fits([(ours.values(), resampled_views(item_view(table), 2, 5), 5)], client=c) == 3
        out = evaluate_table(table, {**ppi, **ours}, ci_resamples=2, expensive=ours, seed=5, client=c)
        return out, ours

    serial, _ = run(None)
    dask, ours = run(client)
    pd.testing.assert_frame_equal(serial, dask)
    assert len(ours["bayesian_ppi_10"].memo) == 3 and ours["bayesian_ppi_5"].memo is ours["bayesian_ppi_10"].memo
    assert len(ours["bayesian_ppi_10"].history) == 3 and all(r.uses_labels for r in ours["bayesian_ppi_10"].history)


@pytest.mark.slow
def test_evaluate_on_dask_equals_serial(table, client):
    def run(c):
        methods = bayesian_methods(table, ("bayesian",), **TINY)
        return evaluate_table(table, methods, ci_resamples=2, expensive=methods, seed=5, client=c), methods["bayesian"]

    serial, m_serial = run(None)
    dask, m_dask = run(client)
    pd.testing.assert_frame_equal(serial, dask)
    assert len(m_dask.memo) == 3  # the full data and 2 resamples, each fitted once, on the workers
    for key, res in m_serial.memo.items():  # the posterior rank draws themselves are identical
        pd.testing.assert_frame_equal(res.rank_draws, m_dask.memo[key].rank_draws)
    assert serial.loc[0, "converged"] in (True, False)
    assert 0.0 <= serial.loc[0, "resamples_converged"] <= 1.0


@pytest.mark.slow
def test_gold_evaluation_fits_on_dask_and_equals_serial(table, client):
    """bayesian_gold_<pct>'s labelled items come from PPI's stream as the evaluation goes: the
    prefetch draws the same ones up front, so every gold fit runs on the workers and the evaluation
    finds each one done; the table equals a serial run's."""
    from simplex_core.methods.baselines import baseline_methods
    from simplex_core.data.views import item_view
    from simplex_core.summaries.evaluation import resampled_views
    from simplex_core.studies.experiments import prefetch_fits

    def run(c):
        bayes = bayesian_methods(table, ("bayesian_gold_10",), **TINY)
        gold = bayes["bayesian_gold_10"]
        ppi = baseline_methods(item_view(table), table.scale, single_judges=False, ppi_fractions=(0.10,))
        if c is not None:  # the full data and 2 resamples, fitted on the workers before the evaluation
            assert prefetch_fits([([gold], resampled_views(item_view(table), 2, 5), 5)], client=c) == 3
        out = evaluate_table(table, {"ppi_10": ppi["ppi_10"], **bayes}, ci_resamples=2, expensive=bayes, seed=5,
                             client=c)
        return out, gold

    serial, m_serial = run(None)
    dask, m_dask = run(client)
    pd.testing.assert_frame_equal(serial, dask)
    # every run of the evaluation found its prefetched fit: labelled items drawn otherwise would be
    # other data, fitted anew, and more memo entries
    assert len(m_dask.memo) == 3 and len(m_dask.history) == 3
    assert all(r.uses_labels for r in m_dask.history)
    for key, res in m_serial.memo.items():
        pd.testing.assert_frame_equal(res.rank_draws, m_dask.memo[key].rank_draws)


@pytest.mark.slow
def test_sensitivity_on_dask_equals_serial(table, client):
    counts = count_tensor(table)
    base = FitSettings(omega=0.0, beta_max=5.0, **TINY)
    lines = []
    serial = sensitivity_sweep(counts, base, omegas=(0.0, 1.0), beta_maxes=(5.0,))
    dask = sensitivity_sweep(counts, base, omegas=(0.0, 1.0), beta_maxes=(5.0,), client=client,
                             progress_callback=lambda m, f: lines.append((m, f)))
    assert serial.to_dict()["settings"] == [
        {**row, "timing": serial.to_dict()["settings"][i]["timing"]} for i, row in enumerate(dask.to_dict()["settings"])
    ]
    fitted = [m for m, _ in lines if " done: " in m]
    assert len(fitted) == 2 and lines[-1][1] == 1.0  # a line per distinct setting fitted


@pytest.mark.slow
def test_cli_sensitivity_on_a_local_cluster(table, tmp_path, capsys):
    data = tmp_path / "t.csv"
    table.frame.to_csv(data, index=False)
    out = tmp_path / "sens.json"
    rc = main(["sensitivity", str(data), "--out", str(out), "--omegas", "0", "--beta-maxes", "1,5",
               "--chains", "2", "--draws", "100", "--tune", "100", "--extra-rounds", "0", "--workers", "1"])
    assert rc == 0
    err = capsys.readouterr().err
    assert "on Dask" in err and "1 worker(s)" in err and "done:" in err
    doc = json.loads(out.read_text())
    assert [r["beta_max"] for r in doc["settings"]] == [5.0, 1.0, 5.0]
    assert np.isfinite(doc["settings"][1]["spearman_vs_base"])


def test_check_cluster_accepts_workers_that_import_the_package(client):
    check_cluster(client, "the test cluster", wait_s=10)  # raises when a worker or the scheduler cannot


def test_a_scheduler_without_workers_is_refused_with_what_to_do(monkeypatch):
    from distributed import LocalCluster

    monkeypatch.setattr(distributed, "WORKER_WAIT_S", 1.0)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        with pytest.raises(ValueError) as info:
            start_client(empty.scheduler_address)
    message = str(info.value)
    assert f"the Dask scheduler at {empty.scheduler_address} has no worker (waited 1 s)" in message
    assert f"`dask worker {empty.scheduler_address}`" in message and "PYTHONPATH" in message


def test_cli_rejects_workers_with_scheduler(table, tmp_path, capsys):
    data = tmp_path / "t.csv"
    table.frame.to_csv(data, index=False)
    rc = main(["sensitivity", str(data), "--out", str(tmp_path / "s.json"),
               "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"])
    assert rc == 2
    assert "--workers sizes the local cluster: do not give it with --scheduler" in capsys.readouterr().err
