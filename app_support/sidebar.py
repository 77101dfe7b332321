"""The shared sidebar (dataset, criterion, self-family exclusion, model settings) and the analysis
context every page reads.

``app.py`` calls :func:`render_sidebar` on every run, before the page; it stores the resulting
:class:`AnalysisContext` in the session (:func:`context`), so pages never rebuild the table or the
settings themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import streamlit as st

from simplex_core.data.table import JudgmentTable
from simplex_core.data.datasets import DatasetInfo
from simplex_core.model.settings import DELTA_PRESETS, LIKELIHOODS, PRIORS, FitSettings

from . import data_access as da
from .state import DRAWS_CHOICES, SLIDER_BETA_MAXES, SLIDER_OMEGAS, UPLOAD, K, UrlChoices, fast_mode, load_url_state, write_url_state

PRIOR_NAMES = {
    "weight-propagation": "weight propagation (the paper's)",
    "diagonal": "diagonal-heavy rows",
    "mixing": "mixing",
    "ordered": "ordered thresholds (centred)",
}
LIKELIHOOD_NAMES = {
    "shared-truth": "shared truth: one true score per answer, seen by every judge",
    "per-judge": "per judge: the paper's, each judge's counts independent",
}
DELTA_NAMES = {
    "inflation": "inflation [1, 4, 10]: judges score too high",
    "deflation": "deflation [10, 4, 1]: judges score too low",
    "central": "central tendency [1, 10, 1]",
    "uniform": "uniform [1, 1, 1]",
    "custom": "custom values…",
}


@dataclass
class AnalysisContext:
    """Everything a page needs to know about the current choice of data and model settings.

    Attributes
    ----------
    dataset
        The built-in dataset, or ``None`` for an uploaded file.
    source_label
        How the page names the data (e.g. ``"TriviaQA V1"`` or the file name).
    loaded_table
        The table as read, every candidate and judge (the Data page's choices are among its names).
    raw_table
        The loaded table without the candidates and judges left out on the Data page, before any
        analysis-wide level collapsing (``None`` when loading failed or nothing is uploaded yet).
    table
        The table the analysis uses (collapsed when the Data page says so).
    fit_table
        The table the Bayesian fits read (property): ``table`` without its gold labels, on every page.
    table_error
        Why there is no table (an exception, rendered in plain words by the pages).
    settings
        The fit settings from the sidebar (``None`` with ``settings_error`` when invalid).
    """

    dataset: DatasetInfo | None
    criterion: str | None
    source_label: str
    loaded_table: JudgmentTable | None = None
    raw_table: JudgmentTable | None = None
    table: JudgmentTable | None = None
    table_error: BaseException | None = None
    settings: FitSettings | None = None
    settings_error: str | None = None
    self_exclusion: bool = True
    collapsed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return self.table is not None and self.settings is not None

    @property
    def table_key(self) -> str:
        return da.table_key(self.table) if self.table is not None else ""

    @property
    def fit_table(self) -> JudgmentTable | None:
        """``table`` without its gold labels. Every page shows this label-free fit: the labels enter the
        Rankings page's labelled ranking (prediction-powered, built on this fit's predictions), which
        covers better than observing them in the posterior, and one fit per file serves every page."""
        if self.table is None or not self.table.n_gold:
            return self.table
        return da.label_free(self.table, self.table_key)

    @property
    def licence_warning(self) -> str | None:
        return self.dataset.licence_warning if self.dataset is not None else None


def context() -> AnalysisContext:
    """The context ``app.py`` built for this run."""
    ctx = st.session_state.get(K.CONTEXT)
    if ctx is None:  # a page run on its own (e.g. in a test): build it without drawing widgets
        ctx = build_context()
    return ctx


def sampler_sizes() -> dict[str, int]:
    """Chains, draws and warm-up of the app's fits (small with ``SIMPLEX_JUDGE_FAST=1``, and then
    without the extra rounds of chains that a non-converged fit would otherwise get)."""
    if fast_mode():
        return {"chains": 2, "draws": 200, "tune": 200, "extra_rounds": 0}
    draws = int(st.session_state.get(K.DRAWS, DRAWS_CHOICES[0]))
    return {"chains": 4, "draws": draws, "tune": draws}


DRAWS_LABEL = "Draws per chain"
INTEGRATED_LABEL = "Integrated: average over ω and β_max"


def convergence_action(settings: Any = None, timing: dict | None = None) -> str:
    """The one thing to do in the app about a fit that has not converged: under a judge prior whose
    chains sat in flipped-judge modes (:func:`simplex_core.inference.fitting.flipped_judge_modes`), the judge
    prior control; tempered chains that crossed between modes too rarely
    (:func:`simplex_core.inference.fitting.uncrossed_modes`), the integrated-mode toggle; otherwise the next step of the draws control beyond what was tried (the engine's
    extra rounds may already have run chains several times as long as the value chosen), or, at its
    end, where to read about it."""
    from simplex_core.inference.fit_result import flipped_judge_modes, uncrossed_modes
    from simplex_core.inference.sampling import longest_chains_factor
    from simplex_core.model.settings import FitSettings

    if flipped_judge_modes(settings, timing):
        return (f"Its chains sit in separate modes, as this judge prior allows (one judge read as flipped or not): "
                f"choose “{PRIOR_NAMES['weight-propagation']}” as “Judge prior” under Advanced model settings in the "
                "sidebar, which rules such judges out.")
    if uncrossed_modes(timing):
        if not getattr(settings, "integrated", False):
            return ("Its chains move between separate modes too rarely for longer runs to settle: "
                    f"switch on “{INTEGRATED_LABEL}” under Advanced model settings in the sidebar, which lets the "
                    "data weigh β_max and ω.")
        return "Its chains move between separate modes too rarely for longer runs to settle. The Guide explains when to distrust such a fit."

    current = int(st.session_state.get(K.DRAWS, DRAWS_CHOICES[0]))
    factor = longest_chains_factor(FitSettings(**sampler_sizes()))
    longer = [d for d in DRAWS_CHOICES if d > factor * current]
    if fast_mode() or not longer:
        return "The Guide explains when to distrust such a fit."
    return f"Set “{DRAWS_LABEL}” to {longer[0]:,} under Advanced model settings in the sidebar."


def _reset_criterion() -> None:
    st.session_state.pop(K.CRITERION, None)
    for key in (K.DROP_CANDIDATES, K.DROP_JUDGES):  # names of another dataset
        st.session_state[key] = []


def render_sidebar() -> AnalysisContext:
    """Draw the shared controls and return (and remember) the analysis context."""
    ss = st.session_state
    catalogue = da.dataset_catalogue()
    names = [d.name for d in catalogue] + [UPLOAD]
    load_url_state(UrlChoices(datasets=tuple(names), priors=PRIORS, deltas=DELTA_PRESETS))
    if ss.get(K.DATASET) not in names:
        ss[K.DATASET] = names[0]
    titles = {d.name: d.title.split(":")[0] for d in catalogue}

    with st.sidebar:
        for note in ss.get(K.URL_NOTES, []):  # first, where a visitor who followed the link looks
            st.caption(note)
        st.markdown("#### Data")
        st.selectbox("Dataset", names, key=K.DATASET, on_change=_reset_criterion,
                     format_func=lambda n: "Your file (upload on the Data page)" if n == UPLOAD else titles.get(n, n),
                     help="A built-in dataset, or your own file in the data contract (Data page).")
        dataset = da.dataset_choice(ss[K.DATASET])
        criteria: list[str] = []
        default_criterion = None
        if dataset is not None:
            criteria = [c.name for c in dataset.criteria]
            default_criterion = dataset.default_criterion
        elif ss.get(K.UPLOAD_BYTES):
            criteria = da.upload_criteria(ss[K.UPLOAD_BYTES], ss.get(K.UPLOAD_NAME, "upload.csv"), str(ss.get(K.COLUMNS) or ""))
            default_criterion = criteria[0] if criteria else None
        if criteria:
            if ss.get(K.CRITERION) not in criteria:
                ss[K.CRITERION] = default_criterion if default_criterion in criteria else criteria[0]
            crit_titles = {c.name: c.title for c in dataset.criteria} if dataset is not None else {}
            if len(criteria) > 1:
                st.selectbox("Criterion", criteria, key=K.CRITERION, format_func=lambda c: crit_titles.get(c, c),
                             help="Which criterion (aspect) the judges scored.")
        criterion = ss.get(K.CRITERION) if criteria else None
        if dataset is not None and dataset.licence_warning:
            st.warning(dataset.licence_warning, icon=":material/gavel:")
        st.toggle("Keep self-family judgments apart", key=K.SELF_EXCLUSION,
                  help="A judge scoring a candidate of its own model family may favour it (self-preference). On: "
                       "the model keeps those judgments apart, as a rater of their own ('<judge> · own family') with "
                       "vertices of their own, so they cannot tilt the judge's other scores; the baselines leave them "
                       "out. Off: they count as the judge's ordinary judgments everywhere.")

        st.markdown("#### Model")
        integrated = bool(ss.get(K.INTEGRATED))
        off_grid = bool(ss.get(K.OFF_GRID))
        omega_help = ("0 = judges behave the same for every candidate; larger = more room for candidate-specific "
                      "behaviour (8: random effects expected to carry ~90% of the weight). After a move the Rankings page "
                      "shows at once an approximate answer reweighted from fits already done (when one of the same "
                      "structure exists), until the real fit lands. See the Guide.")
        beta_help = ("0 = no belief that judges are good; larger = stronger belief that judges mostly give the true "
                     "score. After a move the Rankings page shows at once an approximate answer reweighted from fits "
                     "already done, until the real fit lands.")
        if off_grid:
            st.slider("ω — constancy violation", 0.0, 8.0, step=0.05, key=K.OMEGA_FREE, persist_state="session", disabled=integrated, help=omega_help)
            st.slider("β_max — judge quality prior", 0.0, 20.0, step=0.1, key=K.BETA_MAX_FREE, persist_state="session", disabled=integrated,
                      help=beta_help)
        else:
            st.select_slider("ω — constancy violation", options=list(SLIDER_OMEGAS), key=K.OMEGA, disabled=integrated,
                             format_func=lambda v: f"{v:g}", help=omega_help)
            st.select_slider("β_max — judge quality prior", options=list(SLIDER_BETA_MAXES), key=K.BETA_MAX,
                             disabled=integrated, format_func=lambda v: f"{v:g}", help=beta_help)
        st.selectbox("Likelihood", list(LIKELIHOODS), key=K.LIKELIHOOD, format_func=lambda v: LIKELIHOOD_NAMES.get(v, v),
                     help="Shared truth (default): all judges score the same answers, so an answer's scores are one "
                          "observation of its one true score; more judges never count the same answers twice. "
                          "Per judge: the paper's likelihood, each judge's counts an independent sample (with many "
                          "accurate judges its intervals are too narrow). See the Guide.")
        with st.expander("Advanced model settings"):
            st.toggle("Any ω and β_max", key=K.OFF_GRID,
                      help="Continuous sliders (ω in steps of 0.05, β_max of 0.1) instead of the 33 × 41 values of the "
                           "sliders above; every value is answered the same way (reweighted at once, fitted live).")
            st.selectbox("Judge prior", list(PRIORS), key=K.PRIOR, format_func=lambda p: PRIOR_NAMES.get(p, p))
            st.selectbox("δ — direction of random effects", list(DELTA_PRESETS) + ["custom"], key=K.DELTA,
                         format_func=lambda d: DELTA_NAMES.get(d, d))
            if ss.get(K.DELTA) == "custom":
                st.text_input("δ values (one per true level, comma-separated)", key=K.DELTA_CUSTOM, persist_state="session", placeholder="1, 4, 10")
            st.toggle(INTEGRATED_LABEL, key=K.INTEGRATED,
                      help="Hyperpriors ω ~ Uniform(0, 8), β_max ~ Uniform(0, 20): one fit that marginalises the "
                           "epistemic uncertainty (the paper's Table 1 setting). The sliders are ignored.")
            st.select_slider(DRAWS_LABEL, options=list(DRAWS_CHOICES), key=K.DRAWS, format_func=lambda v: f"{v:,}",
                             help="Kept draws of each of the 4 chains, after as many warm-up iterations. Longer runs "
                                  "help a fit that has not converged; they take proportionally longer.")
        slot = st.container()  # fit progress is drawn here by the pages

    with slot:  # the loaders' spinners ("Checking your file…") here, not over the page's stale title
        ctx = build_context(dataset=dataset, criterion=criterion)
    st.session_state[K.CONTEXT] = ctx
    st.session_state[K.FIT_SLOT] = slot
    write_url_state({
        "data": ss.get(K.DATASET),
        "criterion": criterion,
        "omega": ctx.settings.omega if ctx.settings and not ctx.settings.integrated else None,
        "beta_max": ctx.settings.beta_max if ctx.settings and not ctx.settings.integrated else None,
        "prior": ss.get(K.PRIOR) if ss.get(K.PRIOR) != FitSettings().prior else None,
        "delta": (ss.get(K.DELTA_CUSTOM) if ss.get(K.DELTA) == "custom" else ss.get(K.DELTA)) if ss.get(K.DELTA) != "inflation" else None,
        "integrated": True if ss.get(K.INTEGRATED) else None,
        "likelihood": ss.get(K.LIKELIHOOD) if ss.get(K.LIKELIHOOD, FitSettings().likelihood) != FitSettings().likelihood else None,
        "self_exclusion": False if not ss.get(K.SELF_EXCLUSION, True) else None,
        "columns": (str(ss.get(K.COLUMNS) or "").strip() or None) if ss.get(K.DATASET) == UPLOAD else None,
        "drop_candidates": list(ss.get(K.DROP_CANDIDATES) or []) or None,
        "drop_judges": list(ss.get(K.DROP_JUDGES) or []) or None,
    })
    return ctx


def fit_slot() -> Any:
    """The sidebar container where pages draw fit progress."""
    return st.session_state.get(K.FIT_SLOT) or st.sidebar


def build_context(dataset: DatasetInfo | None = None, criterion: str | None = None,
                  state: Mapping[str, Any] | None = None) -> AnalysisContext:
    """Load the table and build the settings from the session state (no widgets drawn); ``state``
    replaces the session state (the server's warm-up builds a new visitor's context without one)."""
    ss = st.session_state if state is None else state
    if dataset is None and ss.get(K.DATASET) not in (None, UPLOAD):
        dataset = da.dataset_choice(ss.get(K.DATASET))
        if dataset is not None and criterion is None:
            criterion = ss.get(K.CRITERION) or dataset.default_criterion
    self_exclusion = bool(ss.get(K.SELF_EXCLUSION, True))
    if dataset is not None:
        label = dataset.title.split(":")[0] + (f" · {criterion}" if criterion and len(dataset.criteria) > 1 else "")
    else:
        label = ss.get(K.UPLOAD_NAME) or "your file"
    ctx = AnalysisContext(dataset=dataset, criterion=criterion, source_label=label, self_exclusion=self_exclusion)
    prefilled = ss.get(K.LEVELS_PREFILLED)
    if state is None and prefilled and prefilled[2] == ss.get(K.LEVELS) and prefilled[:2] != (ss.get(K.UPLOAD_NAME), criterion):
        # levels the Data page read from another criterion's scores, left as they were: read this one's afresh
        ss[K.LEVELS] = ""
    levels, true_levels, families = (str(ss.get(K.LEVELS, "")), str(ss.get(K.TRUE_LEVELS, "")), str(ss.get(K.FAMILIES, "")))
    if prefilled and prefilled[2] == levels:
        # the levels the Data page wrote out from the scores, unedited: read the file as before (with
        # the loader's notes on levels that look like typos, which a declared scale would not get)
        levels = ""
    try:
        if dataset is not None:
            ctx.raw_table = da.load_builtin(dataset.name, criterion)
        elif ss.get(K.UPLOAD_BYTES) is not None:  # an empty upload too: it gets its message
            ctx.raw_table = da.load_uploaded(ss[K.UPLOAD_BYTES], ss.get(K.UPLOAD_NAME, "upload.csv"), criterion,
                                             levels, true_levels, families, str(ss.get(K.COLUMNS) or ""))
        elif ss.get(K.DATASET) == UPLOAD:
            ctx.table_error = None
        else:
            ctx.table_error = ModuleNotFoundError("No built-in datasets are available in this build: upload a file on the Data page.")
    except Exception as exc:  # noqa: BLE001 — shown in plain words by the pages
        ctx.table_error = exc
    if ctx.raw_table is not None:
        ctx.loaded_table = ctx.raw_table
        _apply_selection(ctx, ss, mutable=state is None)
    if ctx.raw_table is not None:
        ctx.table = ctx.raw_table
        raw_key = da.table_key(ctx.raw_table)
        if ss.get(K.COLLAPSE_ON) and ctx.raw_table.scale.n_levels > 2:
            mapping = ss.get(K.COLLAPSE_MAP, {}).get(raw_key)
            if mapping is None:
                crit = dataset.criterion(criterion) if dataset is not None else None
                mapping, labels, _ = da.default_three_level_mapping(ctx.raw_table, crit)
                mapping = {"mapping": mapping, "labels": labels}
            try:
                ctx.table = da.collapse(ctx.raw_table, raw_key, tuple(mapping["mapping"]), tuple(mapping.get("labels", ())))
                ctx.collapsed = True
            except Exception as exc:  # noqa: BLE001
                ctx.notes.append(f"The level mapping could not be applied ({exc}); the full scale is used.")
    # settings
    try:
        ctx.settings = settings_from_state(ctx.table, ss)
    except ValueError as exc:
        ctx.settings_error = str(exc)
    return ctx


def _apply_selection(ctx: AnalysisContext, ss: Any, mutable: bool) -> None:
    """Leave out the candidates and judges chosen on the Data page (or by a link). Names that are no
    candidate (judge) of this table are not used: a link's are said in a note; the widgets keep only
    names of this table (a multiselect refuses values not among its options)."""
    from simplex_core.data.selection import selection_text

    table = ctx.loaded_table
    chosen = {}
    for key, present, what in ((K.DROP_CANDIDATES, table.candidates, "drop_candidates"),
                               (K.DROP_JUDGES, table.judges, "drop_judges")):
        asked = list(ss.get(key) or [])
        kept = [n for n in asked if n in present]
        unknown = [n for n in asked if n not in present]
        from_link = (ss.get(K.URL_SELECTION) or {}).get(key, [])
        said = [n for n in unknown if n in from_link]
        if said:
            note = (f"The link's {what} names {', '.join(repr(n) for n in said)}, not "
                    f"{'a candidate' if key == K.DROP_CANDIDATES else 'a judge'} of this table: not left out.")
            ctx.notes.append(note)
            if mutable:  # with the link's other notes, at the top of the sidebar on every page from now on
                ss[K.URL_NOTES] = list(ss.get(K.URL_NOTES) or []) + [note]
        if unknown and mutable:
            ss[key] = kept
        chosen[key] = tuple(kept)
    if mutable and ss.get(K.URL_SELECTION):
        ss[K.URL_SELECTION] = {}  # said once
    if not any(chosen.values()):
        return
    try:
        ctx.raw_table = da.select(table, da.table_key(table), chosen[K.DROP_CANDIDATES], chosen[K.DROP_JUDGES])
    except Exception as exc:  # noqa: BLE001 — e.g. a choice leaving one candidate: said on every page
        ctx.raw_table, ctx.table_error = None, exc
        return
    ctx.source_label = f"{ctx.source_label} ({selection_text(ctx.raw_table)})"


def settings_from_state(table: JudgmentTable | None, state: Mapping[str, Any] | None = None) -> FitSettings:
    """The FitSettings the sidebar describes (ValueError in plain words when invalid)."""
    ss = st.session_state if state is None else state
    off_grid = bool(ss.get(K.OFF_GRID))
    omega = float(ss.get(K.OMEGA_FREE if off_grid else K.OMEGA, 0.0))
    beta_max = float(ss.get(K.BETA_MAX_FREE if off_grid else K.BETA_MAX, 5.0))
    delta: Any = ss.get(K.DELTA, "inflation")
    if delta == "custom":
        text = str(ss.get(K.DELTA_CUSTOM, "")).strip().replace(";", ",")
        if not text:
            raise ValueError("Give the custom δ values (one per true level), or pick a preset.")
        from simplex_core.model.priors import delta_setting, parse_delta

        try:  # the core's one reading of δ: it names the value at fault and what is expected
            delta = (tuple(float(v) for v in parse_delta(text, table.scale.n_true)) if table is not None
                     else delta_setting(text))
        except ValueError as exc:
            raise ValueError(f"Custom δ: {exc}") from None
    return FitSettings(omega=omega, beta_max=beta_max, integrated=bool(ss.get(K.INTEGRATED)),
                       prior=str(ss.get(K.PRIOR, FitSettings().prior)), delta=delta,
                       likelihood=str(ss.get(K.LIKELIHOOD, FitSettings().likelihood)),
                       self_exclusion=bool(ss.get(K.SELF_EXCLUSION, True)), seed=0, **sampler_sizes())
