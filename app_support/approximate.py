"""The instant answer while a fit runs: the posterior of a fit already done, reweighted to the
settings asked for (:mod:`simplex_core.inference.reweighting`), shown at once and labelled "approximate" with
its k̂ and effective sample size; the real fit keeps running in the background and replaces it.

Sources are the fits of the same data already in memory or in the fit cache: the background
grid's settings, the fits shipped with the app, the fit last shown, and every setting of these data
asked for lately by any session (:func:`note_asked`), so that a fit that lands anywhere is a source
at the next move. The one with the lowest k̂ is used.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from simplex_core.inference.fit_identity import data_key, fit_key, model_fields
from simplex_core.studies.sensitivity import grid_settings
from simplex_core.model.settings import FitSettings

from . import fits
from .lru import Lru
from .state import SLIDER_BETA_MAXES, SLIDER_OMEGAS


@dataclass(frozen=True)
class Approximate:
    """A reweighted answer: the target's posterior of E and rank as resampled draws (``result``, an
    InferenceData that every summary reads as it reads a fit), how it was made, and how far to
    trust it."""

    result: Any  # simplex_core.inference.reweighting.resampled_posterior
    key: str  # names this answer in the page caches (target, source and the source's fit)
    rw: Any  # simplex_core.inference.reweighting.Reweighted
    source: FitSettings

    @property
    def reliable(self) -> bool:
        return bool(self.rw.reliable)

    def label(self) -> str:
        """``Approximate: reweighted from the fit at ω = 1, β_max = 5 (k̂ = 0.31, ESS 1800 of 2000 draws)``."""
        from simplex_core.inference.reweighting import KHAT_OK

        rw = self.rw
        verdict = "" if self.reliable else f"; k̂ > {KHAT_OK}: not to be trusted, the real fit decides"
        return (f"Approximate: reweighted from the fit at ω = {rw.source.omega:g}, β_max = {rw.source.beta_max:g} "
                f"(k̂ = {khat_text(rw.khat)}, ESS {rw.ess:.0f} of {rw.n_draws} draws{verdict})")


#: How many sources (the nearest in ω and β_max) an approximate answer tries.
NEAREST = 4


_MISSING = object()


class _DrawsMemo(Lru):
    """PriorDraws per fit key (small arrays: per draw ρ, boost_log, log R, log W and E)."""

    def __init__(self, size: int = 64) -> None:
        super().__init__(size)

    def get(self, key: str, result: Any) -> Any | None:
        from simplex_core.inference.reweighting import ReweightError, prior_draws

        draws = self.lookup(key, _MISSING)
        if draws is not _MISSING or result is None:
            return None if draws is _MISSING else draws
        try:
            draws = prior_draws(result)
        except (ReweightError, KeyError):
            draws = None
        self.store(key, draws)
        return draws

    def get_stored(self, key: str, counts: Any, settings: FitSettings) -> Any | None:
        """The PriorDraws of the finished fit of ``counts`` at ``settings`` (``key``: its fit key), read from its cache
        entry's file alone where it can be (0.02 s instead of 0.3 s for the whole fit), else from
        the whole fit (in memory, shipped, or a file that does not read: that path quarantines it)."""
        from simplex_core.inference.reweighting import ReweightError, prior_draws_from_file

        draws = self.lookup(key, _MISSING)
        if draws is not _MISSING:
            return draws
        posterior_file = getattr(fits.fit_manager().store, "posterior_file", None)  # not every FitStore has files
        path = posterior_file(counts, settings) if posterior_file is not None else None
        if path is not None:
            try:
                draws = prior_draws_from_file(path, settings, counts.scale)
            except (ReweightError, OSError, KeyError, ValueError, TypeError):
                draws = None
            if draws is not None:
                self.store(key, draws)
                return draws
        return self.get(key, fits.cached_result(counts, settings, key))


@st.cache_resource(show_spinner=False)
def _draws_memo() -> _DrawsMemo:
    return _DrawsMemo()


#: Settings kept per data set by :func:`note_asked` (the most recent first out of reach last).
ASKED_PER_DATA = 32


class _AskedSettings:
    """The settings of each data set (by ``data_key``) that sessions asked for lately, newest last;
    shared by the sessions of the server process."""

    def __init__(self) -> None:
        self._by_data = Lru(16)
        self._lock = threading.Lock()

    def note(self, key: str, settings: FitSettings) -> None:
        with self._lock:
            asked = [s for s in self._by_data.lookup(key, ()) if s != settings] + [settings]
            self._by_data.store(key, tuple(asked[-ASKED_PER_DATA:]))

    def of(self, counts: Any) -> tuple[FitSettings, ...]:
        return self._by_data.lookup(data_key(counts), ())


@st.cache_resource(show_spinner=False)
def _asked() -> _AskedSettings:
    return _AskedSettings()


def note_asked(data: str, settings: FitSettings) -> None:
    """Remember that a session asked for the fit at ``settings`` of the data whose ``data_key`` is
    ``data``: once it has landed
    (in this session or another, interactive or background), it is a reweighting source for every
    later move on these data, not only for the session that shows it."""
    _asked().note(data, settings)


def source_draws(counts: Any, settings: FitSettings, shown: list[tuple[FitSettings, Any]] | None = None,
                 nearest: int | None = None) -> list[tuple[FitSettings, Any, str]]:
    """``(settings, PriorDraws, key)`` of the fits of these data that are available without fitting, have
    the structure of ``settings`` (:func:`simplex_core.inference.reweighting.structure_problem`) and carry what
    reweighting needs: the background grid's fits in the cache, the fits shipped with the app (the
    default at ω = 0 and one at ω = 1, so that a move from ω = 0 to any ω > 0 has a source before
    the grid has fitted anything), and ``shown`` (``(settings, result)`` pairs, e.g. the fit on the
    page). With ``nearest``, only that many, the nearest to ``settings`` first: reading a fit back
    from disk takes ~0.3 s, so the others are not read. ``key`` names the fit the draws come from
    (its fit key, with ``:pre`` for a thinned fit shipped with the app)."""
    from simplex_core.inference.reweighting import structure_problem

    memo = _draws_memo()
    found: list[tuple[FitSettings, Any, str]] = []  # (settings, result or None: read when needed, memo key)
    for s in grid_settings(settings.replace(integrated=False)):
        found.append((s, None, fit_key(counts, s)))
    for s in _asked().of(counts):  # fits that landed since they were asked for (None: not fitted yet)
        if s != settings:
            found.append((s, None, fit_key(counts, s)))
    for s, result in shown or []:
        if result is not None:
            found.append((s, result, fit_key(counts, s) + (":pre" if result.timing.get("read_only") else "")))
    for pre in fits.shipped_fits(counts):
        # shipped fits carry the sampler sizes they were made with: compare the model fields only
        s = settings.replace(omega=pre.settings.omega, beta_max=pre.settings.beta_max)
        if model_fields(pre.settings) == model_fields(s):  # what model_key hashes besides the (same) data
            found.append((s, pre, fit_key(counts, s) + ":pre"))
    found = [f for f in found if structure_problem(f[0], settings) is None]
    # k̂ grows fast with the distance in ω (a ratio of Beta priors), less so in β_max
    found.sort(key=lambda f: abs(f[0].omega - settings.omega) + abs(f[0].beta_max - settings.beta_max) / 10)
    out, seen = [], set()
    for s, result, key in found:
        if key in seen or key.removesuffix(":pre") in seen:  # a real fit of the same settings beats the thinned one
            continue
        if result is None:
            draws = memo.get_stored(key, counts, s)  # None when not fitted: no separate existence check
        else:
            draws = memo.get(key, result)
        if draws is not None:
            seen.add(key)
            out.append((s, draws, key))
            if nearest is not None and len(out) >= nearest:
                break
    return out


_PREFETCHING: set[str] = set()
_PREFETCH_LOCK = threading.Lock()


def prefetch_sources(view: fits.FitView) -> None:
    """Read the draws of every grid fit of the view's data already in the cache (and of every setting asked
    for lately, :func:`note_asked`) on a background thread,
    so that later moves find their sources in memory (0.02 s each from its file, more where the whole
    fit must be read; grid fits land one by one while the user works). One thread per data at a
    time; a no-op when all are read."""
    counts, settings, key = view.counts, view.requested, view.grid_group
    with _PREFETCH_LOCK:
        if key in _PREFETCHING:
            return
        _PREFETCHING.add(key)
    memo = _draws_memo()

    def run() -> None:
        try:
            for s in (*grid_settings(settings.replace(integrated=False)), *_asked().of(counts)):
                k = fit_key(counts, s)
                if not memo.known(k):
                    memo.get_stored(k, counts, s)
        except Exception:  # noqa: BLE001 — only a head start: the page reads what it needs itself
            import logging

            logging.getLogger("simplex_judge.app").warning("prefetching reweighting sources failed", exc_info=True)
        finally:
            with _PREFETCH_LOCK:
                _PREFETCHING.discard(key)

    threading.Thread(target=run, name="reweighting-prefetch", daemon=True).start()


def approximate(view: fits.FitView | None) -> Approximate | None:
    """The reweighted answer for ``view.requested`` (None when no fit of the same structure is
    available, or the requested fit is already shown). Kept per target and sources, so a setting
    visited again is not reweighted again."""
    from simplex_core.inference.reweighting import best_source, resampled_posterior

    if view is None:
        return None
    if not view.requested.integrated:
        note_asked(view.data_key, view.requested)
    if view.current or view.requested.integrated:
        return None
    target = view.requested
    shown = [(view.result_settings, view.result)] if view.result is not None else []
    sources = source_draws(view.counts, target, shown, nearest=NEAREST)
    if not sources:
        return None
    # the sources' keys tell a thinned shipped fit (":pre") from the real fit of the same settings
    memo_key = (view.key, tuple(key for _, _, key in sources))
    answers = _answers()
    found = answers.lookup(memo_key)
    if found is not None:
        return found
    best = best_source(((i, d) for i, (_, d, _) in enumerate(sources)), target)
    if best is None:
        return None
    i, rw = best
    source, draws, source_key = sources[i]
    found = Approximate(resampled_posterior(draws, rw), f"approx:{memo_key[0]}:{source_key}", rw, source)
    answers.store(memo_key, found)
    return found


@st.cache_resource(show_spinner=False)
def _answers() -> Lru:
    """Reweighted answers by (target, sources), shared by sessions: a slider moved back and forth
    finds the answer it had."""
    return Lru(64)


def approximate_notice(view: fits.FitView, approx: Approximate | None) -> None:
    """Say that the page shows a reweighted answer (with k̂ and ESS) and that the real fit replaces
    it; or, at ω = 0 with nothing to reweight, that the page waits for the real fit."""
    if view.current or view.failed:
        return  # a failed fit says so in its own box: no "waiting" beside it
    if approx is None:
        if not view.current:
            st.caption(no_approximation_reason(view.requested))
        return
    from .safe_text import md

    box = st.warning if not approx.reliable else st.info
    box(f"{md(approx.label())}. The Bayesian numbers, figures and downloads below are this approximation; the real "
        f"fit at {fits.settings_label(view.requested)} runs in the background and replaces it when it lands.",
        icon=":material/speed:")


def no_approximation_reason(requested: FitSettings) -> str:
    """One line saying why no reweighted answer stands in for the fit of ``requested``."""
    if requested.integrated:
        return ("No approximate answer for an integrated fit (ω and β_max learnt from the data: no fit at fixed "
                "values stands in for it): waiting for the real fit.")
    if requested.omega == 0.0:
        return ("No fit with ω = 0 is available to reweight from yet (ω = 0 has no random effects, so fits at "
                "ω > 0 cannot stand in): waiting for the real fit.")
    return ("No finished fit of these data with the same judge prior, δ, likelihood and self-family exclusion is "
            "available to reweight from yet (only ω and β_max can be reweighted): waiting for the real fit.")


def khat_text(khat: float) -> str:
    return "—" if not math.isfinite(khat) else f"{khat:.2f}"


#: The Sensitivity page's fine grid (33 values of ω, 41 of β_max).
FINE_OMEGAS, FINE_BETA_MAXES = SLIDER_OMEGAS, SLIDER_BETA_MAXES  # the sliders' values


def fine_sweep_figure(ready: list[fits.FitView], base_view: fits.FitView, fitted: pd.DataFrame, title: str) -> Any | None:
    """The sensitivity curves on the fine grid, reweighted from the sweep's fits (``ready``), with
    the fitted points marked and a band where k̂ > 0.7; None when no fit can be reweighted."""
    from simplex_core.figures import reweighted_sensitivity_figure
    from simplex_core.studies.sensitivity import reweighted_sweep

    base = base_view.requested
    keys = tuple(v.key for v in ready)
    sweeps = _fine_sweeps()
    memo_key = (keys, base_view.key)
    fine = sweeps.lookup(memo_key)
    if fine is None:  # ~1 s of reweighting: once per set of fits, not on every rerun of the page
        memo = _draws_memo()
        sources = [d for d in (memo.get(k, v.result) for k, v in zip(keys, ready)) if d is not None]
        if not sources:
            return None
        base_e = base_view.result.idata.posterior["expected_score"].values
        base_e = base_e.reshape(-1, base_e.shape[-1]).mean(axis=0)
        fine = reweighted_sweep(sources, base_e, base, FINE_OMEGAS, FINE_BETA_MAXES)
        sweeps.store(memo_key, fine)
    return reweighted_sensitivity_figure(fine, fitted, title, base_omega=base.omega, base_beta_max=base.beta_max)


@st.cache_resource(show_spinner=False)
def _fine_sweeps() -> Lru:
    """Reweighted fine sweeps by (fit keys of the sources, fit key of the base), shared by sessions."""
    return Lru(16)
