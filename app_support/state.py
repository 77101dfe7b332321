"""Session-state keys, their defaults, and the URL sync: defined here and nowhere else.

Widgets shared across pages live in ``app.py`` (the sidebar) and keep their value by key. State that
must survive a page switch but is not a widget (the uploaded file's bytes, the level mappings, the
fit owner id) lives under the non-widget keys below. Widgets drawn on one page only
(the Data page's levels, families and collapse switch; the Simplex and Geometry lab controls) and the
sidebar's conditional ones keep their value with Streamlit's ``persist_state="session"``: Streamlit
drops the state of a widget that is not drawn in a run, and the older trick of re-assigning the key at
the start of every run (``keep_widget_state()``, still used for the Geometry lab's tabs, which have no
``persist_state``) lost a declared scale on the second page switch.

The page URL carries the dataset and the fit settings (``st.query_params``), so a link reproduces
the view: :func:`load_url_state` reads it once per session, :func:`write_url_state` writes it on
every run.
"""

from __future__ import annotations

import math
import os
import uuid
from dataclasses import dataclass
from typing import Any

import streamlit as st

from simplex_core.model.settings import LIKELIHOODS, FitSettings
from simplex_core.studies.sensitivity import BASE_BETA_MAX, BASE_OMEGA, DEFAULT_BETA_MAXES, DEFAULT_OMEGAS  # noqa: F401 — BASE_*: for pages

UPLOAD = "__upload__"  # the dataset choice meaning "the user's file"

#: The paper's grid and base setting (section 5): owned by simplex_core.studies.sensitivity.
OMEGA_GRID: tuple[float, ...] = DEFAULT_OMEGAS
BETA_MAX_GRID: tuple[float, ...] = DEFAULT_BETA_MAXES
#: The sidebar sliders' values: a fine grid, 33 values of ω and 41 of β_max, that holds
#: the paper's grid; a move is answered at once by reweighting the nearest fits already done.
#: Values between these come from a link or the continuous sliders ("Any ω and β_max").
SLIDER_OMEGAS: tuple[float, ...] = tuple(i * 0.25 for i in range(33))
SLIDER_BETA_MAXES: tuple[float, ...] = tuple(i * 0.5 for i in range(41))
#: Draws per chain the app offers (warm-up as long): the first is the default.
DRAWS_CHOICES: tuple[int, ...] = (1000, 2000, 4000, 8000)


class K:
    """Session-state keys (widget keys and non-widget keys)."""

    # sidebar widgets (drawn by app.py on every page)
    DATASET = "w_dataset"
    CRITERION = "w_criterion"
    SELF_EXCLUSION = "w_self_exclusion"
    OMEGA = "w_omega"  # fine-grid slider (select_slider over SLIDER_OMEGAS)
    BETA_MAX = "w_beta_max"
    OFF_GRID = "w_off_grid"  # "advanced": continuous sliders (any value, step 0.05 / 0.1)
    OMEGA_FREE = "w_omega_free"
    BETA_MAX_FREE = "w_beta_max_free"
    DELTA = "w_delta"
    DELTA_CUSTOM = "w_delta_custom"
    PRIOR = "w_prior"
    INTEGRATED = "w_integrated"
    LIKELIHOOD = "w_likelihood"
    DRAWS = "w_draws"  # draws per chain (and warm-up iterations) of the app's fits
    # Data page widgets (persist_state="session": kept across page switches)
    UPLOADER = "w_uploader"
    LEVELS = "w_levels"
    TRUE_LEVELS = "w_true_levels"
    FAMILIES = "w_families"
    COLUMNS = "w_columns"  # which of the upload's columns are the contract's: item=question_id, ...
    COLLAPSE_ON = "w_collapse_on"
    DROP_CANDIDATES = "w_drop_candidates"  # names left out of the analysis (multiselect)
    DROP_JUDGES = "w_drop_judges"
    # Simplex page widgets
    SIMPLEX_JUDGES = "w_simplex_judges"
    SIMPLEX_LAYOUT = "w_simplex_layout"
    SIMPLEX_DRAWS = "w_simplex_draws"
    # Geometry lab widgets
    LAB_POINT_A = "w_lab_a"
    LAB_POINT_B = "w_lab_b"
    LAB_H = "w_lab_h"
    LAB_SEG_T1 = "w_lab_t1"
    LAB_SEG_T2 = "w_lab_t2"
    LAB_TAB = "w_lab_tab"
    # non-widget state
    UPLOAD_BYTES = "upload_bytes"
    UPLOAD_NAME = "upload_name"
    COLUMNS_GUESSED = "columns_guessed"  # (file name, guess): the column box is filled with a guess once per file
    LEVELS_PREFILLED = "levels_prefilled"  # (file name, criterion, text) the 'Observed levels' box was filled with from the data
    COLLAPSE_MAP = "collapse_map"  # {str(table key): {old value: new value}} for the analysis
    SIMPLEX_MAP = "simplex_map"  # {str(table key): {old value: new value}} for the Simplex page
    URL_LOADED = "url_loaded"
    URL_NOTES = "url_notes"
    URL_SELECTION = "url_selection"  # {widget key: names} a link chose, checked against the table once it is loaded
    FIT_OWNER = "fit_owner"
    SHOWN_FITS = "shown_fits"  # {(data key): settings key} of the last fit shown per dataset
    GRIDS_STARTED = "grids_started"  # set of grid group names this session started
    CANCELLED = "cancelled_fits"  # fit keys this user cancelled (not resubmitted automatically)
    WAITING_FITS = "waiting_fits"  # fit keys a page of this session asked for before they were fitted
    CONTEXT = "analysis_context"  # the AnalysisContext app.py built for this run
    FIT_SLOT = "sidebar_fit_slot"  # the sidebar container where pages draw background-fit progress


# Widgets drawn on only one page, with no ``persist_state``, whose values must survive a visit to another page.
_PAGE_WIDGETS = (K.LAB_TAB,)

DEFAULTS: dict[str, Any] = {
    K.SELF_EXCLUSION: True,
    K.OMEGA: BASE_OMEGA,
    K.BETA_MAX: BASE_BETA_MAX,
    K.OFF_GRID: False,
    K.OMEGA_FREE: BASE_OMEGA,
    K.BETA_MAX_FREE: BASE_BETA_MAX,
    K.DELTA: "inflation",
    K.DELTA_CUSTOM: "",
    K.PRIOR: FitSettings().prior,
    K.INTEGRATED: False,
    K.LIKELIHOOD: FitSettings().likelihood,
    K.DRAWS: 1000,
    K.LEVELS: "",
    K.TRUE_LEVELS: "",
    K.FAMILIES: "",
    K.COLUMNS: "",
    K.COLLAPSE_ON: False,
    K.DROP_CANDIDATES: [],
    K.DROP_JUDGES: [],
}


def init_state(default_dataset: str) -> None:
    """Set defaults for keys not yet in the session (never overrides a user's choice)."""
    ss = st.session_state
    ss.setdefault(K.DATASET, default_dataset)
    for key, value in DEFAULTS.items():
        ss.setdefault(key, list(value) if isinstance(value, list) else value)  # a list of one's own per session
    ss.setdefault(K.COLLAPSE_MAP, {})
    ss.setdefault(K.SIMPLEX_MAP, {})
    ss.setdefault(K.SHOWN_FITS, {})
    ss.setdefault(K.GRIDS_STARTED, set())
    ss.setdefault(K.FIT_OWNER, uuid.uuid4().hex[:12])


def keep_widget_state() -> None:
    """Keep page-local widget values across page switches (re-assign them before any widget)."""
    ss = st.session_state
    for key in _PAGE_WIDGETS:
        if key in ss:
            ss[key] = ss[key]


def fast_mode() -> bool:
    """``SIMPLEX_JUDGE_FAST=1``: small fits (2 chains × 200 draws) for tests and demos."""
    return os.environ.get("SIMPLEX_JUDGE_FAST", "").strip() not in ("", "0", "false", "no")


# -- URL ------------------------------------------------------------------------------------------

# URL parameter -> session key. Values are validated when read; a bad value is reported, not used.
_URL_KEYS = {
    "data": K.DATASET,
    "criterion": K.CRITERION,
    "omega": K.OMEGA,
    "beta_max": K.BETA_MAX,
    "prior": K.PRIOR,
    "delta": K.DELTA,
    "integrated": K.INTEGRATED,
    "likelihood": K.LIKELIHOOD,
    "self_exclusion": K.SELF_EXCLUSION,
    "columns": K.COLUMNS,
    "drop_candidates": K.DROP_CANDIDATES,
    "drop_judges": K.DROP_JUDGES,
}


@dataclass(frozen=True)
class UrlChoices:
    """What a URL may choose: used to validate its parameters."""

    datasets: tuple[str, ...]
    priors: tuple[str, ...]
    deltas: tuple[str, ...]


def _parse_bool(text: str) -> bool | None:
    t = text.strip().lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off"):
        return False
    return None


def parse_number(text: str, lo: float, hi: float) -> float | None:
    """``text`` as a finite number in [lo, hi], else None."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) and lo <= v <= hi else None


def load_url_state(choices: UrlChoices) -> None:
    """Once per session: copy valid URL parameters into the session; note the invalid ones."""
    ss = st.session_state
    if ss.get(K.URL_LOADED):
        return
    ss[K.URL_LOADED] = True
    notes: list[str] = []
    params = st.query_params
    for name, key in _URL_KEYS.items():
        if name not in params:
            continue
        raw = params.get(name, "")
        value: Any = None
        if name == "data":
            value = raw if raw in choices.datasets else None
        elif name == "criterion":
            value = raw or None
        elif name in ("omega", "beta_max"):
            num = parse_number(raw, 0.0, 8.0 if name == "omega" else 20.0)
            if num is not None:
                grid = SLIDER_OMEGAS if name == "omega" else SLIDER_BETA_MAXES
                # The continuous slider gets the value too: when the link's other value is off the
                # grid the continuous sliders are used, and they must show this one as well.
                ss[K.OMEGA_FREE if name == "omega" else K.BETA_MAX_FREE] = num
                if num in grid:
                    value = num
                else:  # an off-grid link turns the advanced sliders on
                    ss[K.OFF_GRID] = True
                    ss[K.OMEGA_FREE if name == "omega" else K.BETA_MAX_FREE] = num
                    continue
        elif name == "prior":
            value = raw if raw in choices.priors else None
        elif name == "likelihood":
            value = raw if raw in LIKELIHOODS else None
        elif name == "delta":
            if raw in choices.deltas:
                value = raw
            elif raw:
                ss[K.DELTA_CUSTOM] = raw
                value = "custom"
        elif name in ("integrated", "self_exclusion"):
            value = _parse_bool(raw)
        elif name == "columns":
            value = raw  # checked when the file is read, with every problem said there
        elif name in ("drop_candidates", "drop_judges"):
            from simplex_core.data.selection import split_names

            # names are checked against the table once it is loaded (AnalysisContext), not here
            value = list(split_names(raw))
            ss.setdefault(K.URL_SELECTION, {})[key] = value
        if value is None:
            notes.append(f"The link's {name}={raw!r} is not valid here and was ignored.")
        else:
            ss[key] = value
    ss[K.URL_NOTES] = notes


def write_url_state(values: dict[str, Any]) -> None:
    """Make the URL carry these values (only the ones that changed are written)."""
    params = st.query_params
    for name, value in values.items():
        if value is None:
            if name in params:
                del params[name]
            continue
        if isinstance(value, bool):
            text = "1" if value else "0"
        elif isinstance(value, (list, tuple)):
            text = ",".join(str(v) for v in value)
        elif isinstance(value, float):
            text = f"{value:g}"
        else:
            text = str(value)
        if params.get(name) != text:
            params[name] = text
