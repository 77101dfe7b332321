"""Fault tests of the on-disk fit cache: broken entries are quarantined and refitted once,
incomplete folders replaced, leftover temporaries removed, the size bounded (LRU), and a cache
folder that cannot be written keeps fits in memory with a warning."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

from simplex_core.inference import fit_cache
from simplex_core.jobs import FitCacheStore
from tests.test_summaries import make_counts, make_fit


@pytest.fixture
def fake_fits(monkeypatch):
    calls = []

    def fake_fit_model(counts, settings, progress_callback=None):
        calls.append(settings)
        return make_fit(settings=settings, counts=counts)

    monkeypatch.setattr("simplex_core.inference.fitting.fit_model", fake_fit_model)
    return calls


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _drop_field(path):
    doc = json.loads(path.read_text())
    del doc["diagnostics_full"]
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("damage", [
    pytest.param(lambda p: _truncate(p / "posterior.nc"), id="truncated-posterior"),
    pytest.param(lambda p: _truncate(p / "summary.json"), id="truncated-summary"),
    pytest.param(lambda p: _drop_field(p / "summary.json"), id="summary-missing-field"),
    pytest.param(lambda p: (p / "posterior.nc").unlink(), id="posterior-deleted"),
])
def test_a_broken_entry_is_quarantined_and_refitted_once(tmp_path, fake_fits, damage):
    cache = fit_cache.FitCache(tmp_path)
    fit = make_fit()
    entry = cache.put(fit)
    damage(entry)
    with pytest.warns(RuntimeWarning, match="is broken .*the fit will run again"):
        assert not cache.contains(fit.counts, fit.settings)
    assert not entry.exists() and len(list(cache.quarantine_dir.iterdir())) == 1
    refit = fit_cache.fit_cached(fit.counts, fit.settings, cache=cache)
    assert len(fake_fits) == 1 and not refit.timing.get("from_cache")
    again = fit_cache.fit_cached(fit.counts, fit.settings, cache=cache)
    assert len(fake_fits) == 1 and again.timing["from_cache"]


def test_get_quarantines_an_entry_that_does_not_read_back(tmp_path):
    cache = fit_cache.FitCache(tmp_path)
    fit = make_fit()
    entry = cache.put(fit)
    nc = entry / "posterior.nc"
    size = nc.stat().st_size
    nc.write_bytes(b"\0" * size)  # same size, garbage: only reading it tells
    with pytest.warns(RuntimeWarning, match="does not read back"):
        assert cache.get(fit.counts, fit.settings) is None
    assert not entry.exists()


def test_an_incomplete_folder_is_replaced_by_the_next_write(tmp_path):
    cache = fit_cache.FitCache(tmp_path)
    fit = make_fit()
    entry = cache.path(fit.counts, fit.settings)
    entry.mkdir(parents=True)
    (entry / "summary.json").write_text("{")  # a half-written folder from an older version
    with pytest.warns(RuntimeWarning):
        cache.put(fit)
    assert cache.get(fit.counts, fit.settings) is not None


def test_leftover_temporary_folders_are_removed_at_start(tmp_path):
    fits = tmp_path / "fits"
    stale, fresh = fits / ".abc.1234.x", fits / ".def.5678.y"
    for d in (stale, fresh):
        d.mkdir(parents=True)
        (d / "posterior.nc").write_bytes(b"partial")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    fit_cache.FitCache(tmp_path)
    assert not stale.exists() and fresh.exists()  # a fresh one may belong to a writer at work


def test_the_size_limit_evicts_the_least_recently_used(tmp_path):
    fits = [make_fit(settings=make_fit().settings.replace(seed=s)) for s in range(3)]
    probe = fit_cache.FitCache(tmp_path / "probe")
    one = sum(f.stat().st_size for f in probe.put(fits[0]).iterdir())
    cache = fit_cache.FitCache(tmp_path / "c", max_bytes=int(2.5 * one))
    a, b = cache.put(fits[0]), cache.put(fits[1])
    old = time.time() - 100
    os.utime(a / "summary.json", (old, old))
    os.utime(b / "summary.json", (old - 50, old - 50))
    assert cache.get(fits[0].counts, fits[0].settings) is not None  # a is used again: b is now the oldest
    cache.put(fits[2])
    assert a.exists() and not b.exists() and cache.path(fits[2].counts, fits[2].settings).exists()


def test_a_cache_folder_that_cannot_be_written_keeps_fits_in_memory(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    root = blocker / "cache"  # every write under it fails (as a read-only folder would)
    cache = fit_cache.FitCache(root)
    fit = make_fit()
    with pytest.warns(RuntimeWarning, match="kept in memory"):
        cache.put(fit)
    assert cache.contains(fit.counts, fit.settings)
    assert cache.get(fit.counts, fit.settings) is fit
    store = FitCacheStore(str(root))
    other = make_fit(settings=fit.settings.replace(seed=5))
    with pytest.warns(RuntimeWarning):
        assert store.save(other.counts, other.settings, other) is False  # the worker then sends it back


def test_a_read_that_fails_while_the_process_exits_leaves_the_entry_alone(tmp_path, monkeypatch):
    # at exit h5py unregisters its converters while other threads may still read healthy files
    cache = fit_cache.FitCache(tmp_path)
    fit = make_fit()
    entry = cache.put(fit)

    def failing_read(path):
        raise AssertionError("h5netcdf: chunks of a scalar")

    monkeypatch.setattr(fit_cache, "read_netcdf", failing_read)
    monkeypatch.setattr(fit_cache, "_process_exiting", lambda: True)
    assert cache.get(fit.counts, fit.settings) is None
    assert entry.exists() and not cache.quarantine_dir.exists()
    monkeypatch.setattr(fit_cache, "_process_exiting", lambda: False)  # the same failure otherwise: broken
    with pytest.warns(RuntimeWarning, match="does not read back \\(AssertionError: h5netcdf"):
        assert cache.get(fit.counts, fit.settings) is None
    assert not entry.exists()


# -- read-only layers (the fits shipped with the app) ---------------------------------------------

def _shipped(tmp_path, fit, **kw):
    folder = tmp_path / "shipped"
    fit_cache.write_read_only(fit, folder, "default", about={"what": "a test fit"}, **kw)
    return folder


def test_a_read_only_entry_stands_in_for_any_sampler_size_and_is_never_written(tmp_path):
    fit = make_fit()
    folder = _shipped(tmp_path, fit)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir())
    cache = fit_cache.FitCache(tmp_path / "c", read_only=[folder])
    other_sizes = fit.settings.replace(draws=999, chains=3, seed=11)
    assert cache.contains(fit.counts, other_sizes)
    got = cache.get(fit.counts, other_sizes)
    assert got.timing["read_only"] and got.timing["from_cache"] and got.settings == fit.settings
    np.testing.assert_array_equal(got.idata.posterior["rank"].values, fit.idata.posterior["rank"].values)
    assert cache.get(fit.counts, fit.settings.replace(omega=1.0)) is None  # other model settings
    assert fit_cache.FitCache(tmp_path / "c").get(fit.counts, other_sizes) is None  # only where asked for
    # a fit of the same settings goes to the writable cache and is preferred from then on
    refit = make_fit(settings=other_sizes)
    assert cache.put(refit).parent == cache.fits_dir
    assert not cache.get(fit.counts, other_sizes).timing.get("read_only")
    cache.max_bytes = 0
    cache.evict()
    cache.clear()
    assert sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir()) == before  # never evicted nor cleared


def test_a_reweighting_only_entry_is_never_a_fit_but_is_a_source(tmp_path):
    fit = make_fit()
    folder = _shipped(tmp_path, fit, reweighting_only=True, variables=("expected_score",), keep_draws=2)
    cache = fit_cache.FitCache(tmp_path / "c", read_only=[folder])
    assert not cache.contains(fit.counts, fit.settings) and cache.get(fit.counts, fit.settings) is None
    (source,) = cache.read_only_fits(fit.counts)
    assert list(source.idata.posterior.data_vars) == ["expected_score"]
    assert source.idata.posterior.sizes["draw"] <= 2 and source.settings == fit.settings
    other_counts = make_counts(N=make_counts().N + 1)
    assert cache.read_only_fits(other_counts) == []  # another data set: no source


def test_a_broken_read_only_entry_is_a_miss_with_a_warning_and_is_left_alone(tmp_path):
    fit = make_fit()
    folder = _shipped(tmp_path, fit)
    nc = folder / "default_posterior.nc"
    nc.write_bytes(b"\0" * nc.stat().st_size)
    cache = fit_cache.FitCache(tmp_path / "c", read_only=[folder])
    with pytest.warns(RuntimeWarning, match="read-only fit default_posterior.nc is not usable"):
        assert cache.get(fit.counts, fit.settings) is None
    assert nc.exists() and not cache.quarantine_dir.exists()
    assert cache.read_only_fits(fit.counts) == []
