"""A fit by engine ``'fast'`` (:func:`fit_fast`), as named steps: load the numba kernels, find the
posterior's modes and the chains' starts, sample a round, restart chains stuck in modes without mass,
longer rounds, parallel tempering (and tempering towards a reference) for modes NUTS cannot cross, and
fresh runs with smaller steps after divergent transitions."""

from __future__ import annotations

import math
import time

import numpy as np

from simplex_core.model.definition import CountsLike, FitSettings, structure_key
from simplex_core.inference.fit_result import ESS_MIN, Diagnostics, FitResult, ProgressCallback, diagnose, first_failure
from simplex_core.inference.sampling import finish_idata, report_progress, sample_nutpie
from simplex_core.inference.warm_up import FAST_LOADED, tempering_kernels_ready



def fit_fast(counts: CountsLike, settings: FitSettings, cb: ProgressCallback | None,
             started: float | None = None) -> FitResult:
    """The ``'fast'`` engine: mode search, then nutpie over the numba log density, one sampling run
    per starting mode (chains of different runs have different seeds), concatenated over chains.

    When the chains have not converged and some of them explored a mode holding a negligible share
    of the posterior mass (less than e^-NEGLIGIBLE_LOG_MASS of the heaviest mode's, by bridge
    sampling, :mod:`simplex_core.inference.mode_mass`: the optimiser's best maximum is not always the
    posterior's), every chain starts afresh from the modes that hold the mass (``timing
    ['restarted_chains']`` = how many chains were in light modes); the posterior is unchanged.
    When chains started at different modes of comparable mass have not converged, the posterior is
    sampled again by parallel tempering (:mod:`simplex_core.inference.tempering`; ``timing['sampler']``),
    whose chains cross between modes. When chains from a single start have not converged and more
    draws can help (no divergences), up to ``settings.extra_rounds`` more rounds of
    ``settings.chains`` chains are sampled from the same start with new seeds, each round's chains
    twice as long (warm-up and draws) as the last's and replacing them: after r extra rounds the
    posterior has the chains asked for with 2^r times the draws (``timing['rounds']`` says how many
    rounds ran; :func:`~simplex_core.inference.sampling.longest_chains_factor` the most it can be). Divergent transitions make it
    sample afresh with smaller steps (:data:`DIVERGENCE_RETRY_ACCEPT`); a retry free of them that
    has still not converged gets the extra rounds, at the retry's acceptance target."""
    fit = _FastFit(counts, settings, cb, started)
    fit.load_kernels()
    fit.find_starts()
    fit.sample_round(0, 0.05, 0.90 if len(fit.groups) == 1 else 0.30, "")
    fit.pool()
    if not fit.diagnostics.converged and fit.diagnostics.divergences == 0 and fit.diagnostics.max_rhat > SEPARATE_MODES_RHAT:
        fit.restart_in_heavy_modes()
    fit.tempered_starts = [start for start, _ in fit.groups] if len(fit.groups) > 1 else fit.mode_starts
    if not fit.diagnostics.converged and len(fit.tempered_starts) > 1:
        fit.temper()
    else:
        fit.longer_rounds(settings)
    fit.retry_divergences()
    return fit.result()


class _FastFit:
    """One fit by engine ``'fast'``, step by step: what the steps share (the starting modes and their
    compiled models, the current round's runs, the posterior and its diagnostics so far, the timings)."""

    def __init__(self, counts: CountsLike, settings: FitSettings, cb: ProgressCallback | None, started: float | None):
        self.counts, self.settings, self.cb = counts, settings, cb
        self.t0 = time.perf_counter() if started is None else started  # from the import of fast_density on
        self.runs: list = []  # round by round, one sampling run per starting mode
        self.unconstrained: list = []  # the runs' draws in unconstrained coordinates, [chain, draw, n] each
        self.rounds, self.tempered_s, self.tempering_load_s, self.restarted = 1, 0.0, 0.0, 0
        self.reference_thin = 0  # > 0: the posterior comes from tempering towards a reference, at this thinning
        self.mode_starts: list[np.ndarray] = []  # one point per mode the chains sat in, when they sat in several
        self.tempered_starts: list[np.ndarray] = []
        self.last = settings  # the settings of the last round sampled (its chain lengths)
        self.n_modes, self.nuts_note = 0, ""  # set when the posterior is tempered
        self.target_accept_used = float(settings.target_accept)

    def load_kernels(self) -> None:
        self.reused = FAST_LOADED.is_set()
        report_progress(self.cb, "preparing the model" if self.reused else
                        "loading the compiled log density (first fit in this process; compiled once per machine)", 0.0)
        from simplex_core.model import fast_density

        fast_density.warm_up()  # loads (or, the first time on a machine, compiles) the numba functions
        FAST_LOADED.set()
        self.compile_s = time.perf_counter() - self.t0

    def find_starts(self) -> None:
        """The posterior's modes (optimiser) and the chains each starts, with a compiled model per start."""
        from simplex_core.inference import fast_engine

        self.t1 = time.perf_counter()
        report_progress(self.cb, "locating the posterior's modes (optimiser)", 0.02)
        self.modes = fast_engine.find_modes(self.counts, self.settings.model, seed=self.settings.seed)
        self.groups = fast_engine.chain_starts(self.modes, self.settings.chains)
        self.modes_s = time.perf_counter() - self.t1
        self.models = [fast_engine.compile_fast(self.counts, self.settings.model, start=start) for start, _ in self.groups]

    def new_round(self) -> None:  # a round's runs replace the last round's
        self.runs.clear()
        self.unconstrained.clear()

    def sample_round(self, r: int, lo: float, hi: float, note: str, base: FitSettings | None = None) -> None:
        settings, cb = self.settings, self.cb
        base = settings if base is None else base
        done_chains = 0
        for g, ((_, n_chains), model) in enumerate(zip(self.groups, self.models)):
            a = lo + (hi - lo) * done_chains / settings.chains
            width = (hi - lo) * n_chains / settings.chains

            def scaled(message: str, fraction: float, a=a, width=width, g=g) -> None:
                where = f" (mode {g + 1} of {len(self.groups)})" if len(self.groups) > 1 else ""
                report_progress(cb, note + message + where, a + width * (fraction - 0.05) / 0.9)

            scaled(f"sampling {n_chains} chain{'s' if n_chains > 1 else ''}", 0.05)
            seed = settings.seed + 7919 * g + 104729 * r
            run = sample_nutpie(model, base.sampler.replace(chains=n_chains, seed=seed), {},
                                scaled if cb is not None else None, store_unconstrained=True)
            self.unconstrained.append(np.asarray(run.sample_stats["unconstrained_draw"].values))
            self.runs.append(_with_boost_log(run, self.counts, settings.model.prior))
            done_chains += n_chains

    def pool(self) -> None:
        """The current round's runs as the posterior, and its diagnostics."""
        self.idata = _pooled(self.runs)
        self.diagnostics = diagnose(self.idata, tuple(self.counts.candidates))

    def restart_in_heavy_modes(self) -> None:
        # Chains that disagree may sit in a mode without mass (the optimiser's best maximum is not
        # always the posterior's: see simplex_core.inference.mode_mass): weigh the region each chain explored
        # and start every chain afresh where the mass is. Same posterior; only the starts change.
        from simplex_core.inference import fast_engine

        counts, settings = self.counts, self.settings
        self.mode_starts, self.restarted = _heavy_modes(counts, settings, np.concatenate(self.unconstrained, axis=0),
                                                        np.asarray(self.idata.posterior["expected_score"].values))
        if not self.restarted:
            return
        report_progress(self.cb, f"{self.restarted} chain(s) sat in a mode holding under "
                                 f"{math.exp(-fast_engine.NEGLIGIBLE_LOG_MASS):.1%} "
                                 "of the posterior mass (bridge sampling): sampling again from the modes that hold it", 0.30)
        self.groups = fast_engine.deal_chains(self.mode_starts, int(settings.chains))
        self.models = [fast_engine.compile_fast(counts, settings.model, start=start) for start, _ in self.groups]
        self.new_round()
        self.sample_round(RESTART_SEED_ROUND, 0.30, 0.90 if len(self.groups) == 1 else 0.50, "")
        self.pool()
        self.mode_starts = [] if self.diagnostics.converged else _mode_starts(
            np.concatenate(self.unconstrained, axis=0), np.asarray(self.idata.posterior["expected_score"].values))

    def longer_rounds(self, base: FitSettings) -> None:
        # Each extra round runs chains twice as long as the last (warm-up and draws) and replaces
        # them: a posterior that mixes slowly needs longer chains more than more of them (measured on
        # WildBench: 12 pooled chains of 1000 gave R-hat 1.013, 4 chains of 2000 after 2000 of
        # warm-up 1.007; pooling a round with shorter chains held R-hat at 1.012), and short chains
        # kept alongside would hold R-hat up.
        settings = self.settings
        # one chain has no R-hat however long it runs: no extra rounds for it
        while (not self.diagnostics.converged and self.rounds <= settings.extra_rounds
               and self.diagnostics.divergences == 0 and settings.chains >= 2):
            rounds = self.rounds
            step = 0.1 / settings.extra_rounds
            self.new_round()
            self.last = base.replace(draws=2**rounds * settings.draws, tune=2**rounds * settings.tune)
            self.sample_round(rounds, 0.9 + step * (rounds - 1), 0.9 + step * rounds,
                              f"not converged yet ({first_failure(self.diagnostics.message)}): "
                              f"chains {2**rounds} times as long, ", base=self.last)
            self.rounds += 1
            self.pool()

    def tempered_progress(self, lo: float, hi: float, note: str = "") -> ProgressCallback | None:
        # the tempered chains report about once a second; a cancel raised here stops them
        cb = self.cb
        if cb is None:
            return None
        return lambda message, fraction: report_progress(cb, note + message, lo + (hi - lo) * fraction)

    def tempered_diagnostics(self, idata) -> Diagnostics:
        return _explain_tempering(diagnose(idata, tuple(self.counts.candidates)), self.n_modes, self.nuts_note)

    def temper(self) -> None:
        # Modes of comparable mass and chains that disagree (started in separate modes, or drifted
        # into them from one start): NUTS cannot cross between them (more rounds make it worse,
        # measured on GPQA-like replicates); parallel tempering can.
        from simplex_core.inference.tempering import TEMPERED_THIN, sample_tempered

        counts, settings, cb = self.counts, self.settings, self.cb
        self.nuts_note = self.diagnostics.message
        self.n_modes = len(self.tempered_starts)
        report_progress(cb, f"the posterior has {self.n_modes} separate modes that NUTS chains cannot cross: sampling them "
                            "together by parallel tempering (slower: about 15 s on GPQA-size data)", 0.30)
        t2 = time.perf_counter()
        tempering_kernels_ready(cb)
        self.tempering_load_s = time.perf_counter() - t2
        t2 = time.perf_counter()
        tempered_draws: list[np.ndarray] = []  # the last likelihood-tempered run's, for a reference
        self.idata = sample_tempered(counts, settings, self.tempered_starts, thin=TEMPERED_THIN,
                                     progress_callback=self.tempered_progress(0.30, 0.90), unconstrained_out=tempered_draws)
        self.tempered_s = time.perf_counter() - t2
        self.diagnostics = self.tempered_diagnostics(self.idata)
        # Tempered chains that cross between the modes too rarely yet: chains twice as long, as the
        # extra rounds of NUTS (measured: HANNA empathy at ω = 4, β_max = 0, R-hat 1.014 after one run),
        # but only when they came close: chains that never cross (HANNA coherence at ω = 0, β_max = 0:
        # R-hat 1.384 after one run, 1.109 after three more rounds, 703 s) do not get there by length.
        while (not self.diagnostics.converged and self.rounds <= settings.extra_rounds
               and self.diagnostics.divergences == 0 and self.diagnostics.max_rhat <= TEMPERED_ROUNDS_RHAT):
            rounds = self.rounds
            note = (f"not converged yet ({first_failure(self.diagnostics.message)}): "
                    f"tempered chains {2**rounds} times as long, ")
            report_progress(cb, note.removesuffix(", "), 0.9)
            self.last = settings.replace(draws=2**rounds * settings.draws, tune=2**rounds * settings.tune)
            t2 = time.perf_counter()
            step = 0.1 / max(1, settings.extra_rounds)
            tempered_draws.clear()
            self.idata = sample_tempered(counts, self.last, self.tempered_starts, thin=TEMPERED_THIN,
                                         progress_callback=self.tempered_progress(0.9 + step * (rounds - 1), 0.9 + step * rounds, note),
                                         unconstrained_out=tempered_draws)
            self.tempered_s += time.perf_counter() - t2
            self.rounds += 1
            self.diagnostics = self.tempered_diagnostics(self.idata)
        if not self.diagnostics.converged and self.diagnostics.divergences == 0 and self.unconstrained:
            t2 = time.perf_counter()
            found = _reference_tempering(counts, settings, self.tempered_starts,
                                         np.concatenate(self.unconstrained + tempered_draws, axis=0),
                                         self.diagnostics, self.n_modes, self.nuts_note, cb)
            self.tempered_s += time.perf_counter() - t2
            if found is not None:
                self.idata, self.diagnostics, self.reference_thin = found

    def retry_divergences(self) -> None:
        settings = self.settings
        for retry_accept in DIVERGENCE_RETRY_ACCEPT:
            if not self.diagnostics.divergences or retry_accept <= self.target_accept_used:
                continue
            # Divergent transitions: the leapfrog steps were too long for a region of high curvature
            # (measured: single-judge binary posteriors, whose non-identified ridge ends in a funnel where
            # a candidate's π reaches 0 or 1). Draws next to a divergence are biased, so the posterior is
            # sampled afresh with a higher acceptance target (smaller steps), never pooled with them.
            first = first_failure(self.diagnostics.message)
            report_progress(self.cb, f"{first}: sampling again with smaller steps (target acceptance {retry_accept:g})", 0.9)
            retry = self.last.replace(target_accept=retry_accept)
            if self.tempered_s:
                from simplex_core.inference.tempering import TEMPERED_THIN, sample_tempered

                t2 = time.perf_counter()
                again = sample_tempered(self.counts, retry, self.tempered_starts, thin=TEMPERED_THIN,
                                        progress_callback=self.tempered_progress(0.9, 0.95, f"{first}: smaller steps, "))
                self.tempered_s += time.perf_counter() - t2
                again_diagnostics = self.tempered_diagnostics(again)
            else:
                self.new_round()
                self.sample_round(0, 0.9, 0.95, "", base=retry)
                again = _pooled(self.runs)
                again_diagnostics = diagnose(again, tuple(self.counts.candidates))
            if again_diagnostics.divergences < self.diagnostics.divergences:
                self.idata, self.diagnostics, self.target_accept_used = again, again_diagnostics, retry_accept
        if not self.tempered_s and self.target_accept_used > settings.target_accept:
            # the smaller steps removed the divergences but the chains may still be short (measured:
            # per-judge TriviaQA V1 integrated, R-hat 1.011 after the retry): the extra rounds, at the
            # retry's acceptance target
            self.longer_rounds(settings.replace(target_accept=self.target_accept_used))

    def result(self) -> FitResult:
        counts, settings, diagnostics = self.counts, self.settings, self.diagnostics
        compile_s = self.compile_s + self.tempering_load_s
        sample_s = time.perf_counter() - self.t1 - self.tempering_load_s
        finish_idata(self.idata, counts, settings, structure_key(counts, settings.model))
        report_progress(self.cb, "done: " + diagnostics.message, 1.0)
        tempered_s, reference_thin = self.tempered_s, self.reference_thin
        return FitResult(
            idata=self.idata,
            diagnostics=diagnostics,
            timing={"compile_s": float(compile_s), "sample_s": float(sample_s), "reused_compiled": bool(self.reused),
                    "engine_used": "fast", "modes_s": float(self.modes_s), "modes": len(self.modes),
                    "start_modes": len(self.groups), "rounds": self.rounds, "tempered_s": float(tempered_s),
                    "restarted_chains": self.restarted,
                    "target_accept": self.target_accept_used,
                    "sampler": ("parallel tempering with a reference" if reference_thin else
                                "parallel tempering" if tempered_s else "nuts"),
                    "reference_thin": reference_thin,
                    # after tempering towards a reference too, longer runs are not the remedy either
                    "uncrossed_modes": bool(tempered_s and not diagnostics.converged
                                            and (reference_thin or not diagnostics.max_rhat <= TEMPERED_ROUNDS_RHAT))},
            settings=settings,
            counts=counts,
        )



def _reference_tempering(counts: CountsLike, settings: FitSettings, starts: list[np.ndarray], chain_draws: np.ndarray,
                         diagnostics: Diagnostics, n_modes: int, nuts_note: str, cb: ProgressCallback | None):
    """Tempering towards a reference fitted to the chains so far (:func:`simplex_core.inference.tempering.
    reference_from_draws` of ``chain_draws``: the NUTS chains and the likelihood-tempered ones), for
    modes that tempering the likelihood did not cross (``diagnostics``: that run's). Each run keeps
    ``settings.draws`` draws a chain and is longer than the last, by what its bulk ESS says a
    converged run needs (at least twice, at most ``REFERENCE_GROWTH`` times, every
    ``REFERENCE_MAX_THIN``-th iteration at most), for up to ``settings.extra_rounds`` more runs.
    Returns ``(idata, diagnostics, thin)`` of the last run when it has no divergences and a lower
    R-hat than ``diagnostics``, else None (the likelihood-tempered run stands)."""
    from simplex_core.inference.tempering import REFERENCE_REPLICAS, reference_from_draws, sample_tempered

    reference = reference_from_draws(chain_draws)
    best = None
    thin = REFERENCE_THIN
    found = diagnostics
    for r in range(int(settings.extra_rounds) + 1):
        iterations = f"{thin * settings.draws} iterations a chain"
        note = (f"tempered chains did not cross between the modes ({first_failure(diagnostics.message)}): "
                f"tempering towards a reference fitted to the chains so far ({REFERENCE_REPLICAS} replicas, "
                f"{iterations}), " if r == 0 else
                f"not converged yet ({first_failure(found.message)}): tempering towards the reference again, "
                f"{iterations}, ")
        report_progress(cb, note.removesuffix(", "), 0.9)
        step = 0.1 / (int(settings.extra_rounds) + 1)

        def progress(message: str, fraction: float, lo: float = 0.9 + step * r, note: str = note) -> None:
            report_progress(cb, note + message, lo + step * fraction)

        idata = sample_tempered(counts, settings, starts, replicas=REFERENCE_REPLICAS, thin=thin,
                                progress_callback=progress if cb is not None else None, reference=reference)
        found = _explain_tempering(diagnose(idata, tuple(counts.candidates)), n_modes, nuts_note)
        if found.divergences:
            break
        best = (idata, found, thin)
        if found.converged or thin >= REFERENCE_MAX_THIN:
            break
        # ESS grows about with the run's length, but a short run of chains that switch modes slowly
        # reads it low (HANNA engagement: a first run's ESS asked for every 58th iteration, and got
        # ESS 917 where 400 was needed): at most 8 times as long at a time
        needed = math.ceil(thin * ESS_MIN / max(found.min_ess_bulk, 1.0))
        thin = int(min(REFERENCE_MAX_THIN, max(2 * thin, min(needed, REFERENCE_GROWTH * thin))))
    if best is None or not best[1].max_rhat < diagnostics.max_rhat:
        return None
    return best


def _heavy_modes(counts: CountsLike, settings: FitSettings, draws: np.ndarray,
                 expected: np.ndarray) -> tuple[list[np.ndarray], int]:
    """``(starts, light chains)`` for the chains of ``draws`` (``[chain, draw, n]``, unconstrained),
    grouped into the modes they sat in by their ``expected`` scores (``[chain, draw, K]``,
    :mod:`simplex_core.inference.mode_mass`). ``starts``: a point of each mode that holds mass (its first
    chain's last draw; [] when all chains sat in one mode). ``light chains``: how many chains sat in
    modes holding less than e^-NEGLIGIBLE_LOG_MASS of the heaviest one's mass (0: none)."""
    from simplex_core.model import fast_density
    from simplex_core.inference import fast_engine
    from simplex_core.inference.mode_mass import chain_log_masses, heavy_modes, mode_log_masses, same_mode_clusters

    clusters = same_mode_clusters(expected)
    if len(clusters) < 2:
        return [], 0
    starts = _first_draws(draws, clusters)
    buf = fast_density.build_buffer(counts, settings.model)
    grad = np.zeros(draws.shape[-1])

    def log_density(x: np.ndarray) -> float:
        return float(fast_density.logp_grad(np.ascontiguousarray(x), grad, buf))

    log_mass, error = mode_log_masses(*chain_log_masses(draws, log_density, seed=settings.seed), clusters)
    heavy = heavy_modes(log_mass, error, fast_engine.NEGLIGIBLE_LOG_MASS)
    if heavy is None:
        return starts, 0
    return [starts[h] for h in heavy], sum(len(m) for i, m in enumerate(clusters) if i not in set(heavy))


def _mode_starts(draws: np.ndarray, expected: np.ndarray) -> list[np.ndarray]:
    """:func:`_first_draws` of the modes the chains sat in (grouped by their ``expected`` scores,
    :func:`simplex_core.inference.mode_mass.same_mode_clusters`); [] for one mode."""
    from simplex_core.inference.mode_mass import same_mode_clusters

    clusters = same_mode_clusters(expected)
    return _first_draws(draws, clusters) if len(clusters) > 1 else []


def _first_draws(draws: np.ndarray, clusters: list[list[int]]) -> list[np.ndarray]:
    """Per cluster of chains, a point of its mode to start chains from: its first chain's last draw."""
    return [draws[members[0], -1].copy() for members in clusters]


def _pooled(runs: list):
    """The sampling runs as one posterior, their chains side by side."""
    import arviz as az

    return runs[0] if len(runs) == 1 else az.concat(runs, dim="chain", reset_dim=True)

#: Chains disagree by sitting in separate modes, not by mixing slowly, only beyond this R-hat (measured
#: after the first round: chains in separate modes 1.29-1.5 on HANNA and TriviaQA V2; chains mixing
#: slowly in one mode 1.019, HANNA relevance at ω = 1, β_max = 0); divergent runs go to the divergence
#: retry instead.
SEPARATE_MODES_RHAT = 1.1
#: Tempered chains get the extra rounds only when their R-hat is at most this (see fit_fast).
TEMPERED_ROUNDS_RHAT = 1.05
#: Tempering towards a reference (see _reference_tempering): the first run keeps every
#: REFERENCE_THIN-th iteration, later ones up to every REFERENCE_MAX_THIN-th. Measured on HANNA
#: coherence at ω = 0, β_max = 0 (4 chains of 1000 kept draws, 24 replicas, two cores): the first
#: run converged at seed 0 (71 s in all); seed 1 needed every 31st of 31,000 iterations (313 s).
#: With a reference from the NUTS chains alone, every 32nd gave R-hat 1.002 or 1.023 by seed (ESS
#: 684 / 198): the modes' shares mix slowly, so the longest run may be twice that.
REFERENCE_THIN = 4
REFERENCE_MAX_THIN = 64
REFERENCE_GROWTH = 8
#: The round number that seeds the chains restarted in the heavy modes (apart from the extra rounds').
RESTART_SEED_ROUND = 1000

#: Acceptance targets of the fresh runs after divergent transitions (engine ``'fast'``), tried in turn
#: while divergences remain; the run with the fewest divergences is kept.
DIVERGENCE_RETRY_ACCEPT = (0.95, 0.99)


def _with_boost_log(idata, counts: CountsLike, prior: str):
    """Add ``boost_log`` (judge) to a fast-engine posterior from its unconstrained draws, and drop
    those draws: the judge prior's β_max statistic that :mod:`simplex_core.inference.reweighting` needs (the
    prior's Dirichlets themselves are not stored)."""
    import xarray as xr

    from simplex_core.inference.reweighting import boost_log_from_unconstrained

    x = np.asarray(idata.sample_stats["unconstrained_draw"].values)  # [chain, draw, n]
    J, K, M = np.asarray(counts.N).shape
    scale = counts.scale
    boost = boost_log_from_unconstrained(x, J, K, M, scale.n_true, scale.true_index, prior)
    idata.posterior["boost_log"] = xr.DataArray(boost, dims=("chain", "draw", "judge"),
                                                coords={"judge": list(counts.judges)})
    idata.sample_stats = idata.sample_stats.drop_vars("unconstrained_draw")
    return idata


def _explain_tempering(diagnostics: Diagnostics, n_modes: int, nuts_note: str) -> Diagnostics:
    """Say that the posterior was sampled by parallel tempering because NUTS chains started in its
    ``n_modes`` modes disagreed (``nuts_note``: NUTS's own diagnostics)."""
    import dataclasses

    why = (f"the posterior has {n_modes} separate modes (often: which judge is the noisy one) and NUTS chains "
           f"could not cross between them ({first_failure(nuts_note)}), so it was "
           "sampled by parallel tempering, whose chains visit every mode in proportion to its mass")
    if diagnostics.converged:
        message = diagnostics.message.rstrip(".") + f"; {why}."
    elif diagnostics.max_rhat <= TEMPERED_ROUNDS_RHAT:
        message = diagnostics.message.rstrip(".") + f". Note: {why}; more draws give its chains more crossings."
    else:
        message = diagnostics.message.rstrip(".") + f". Note: {why}; here they did not cross between them."
    return dataclasses.replace(diagnostics, message=message)

