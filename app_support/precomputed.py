"""The precomputed default result shipped in ``assets/precomputed/`` (written by
``scripts/precompute_default.py``), so that opening the app shows a fitted ranking at once.

It is used for exactly the data and model settings it was computed with (the default dataset and
criterion, self-family exclusion on, ω = 0, β_max = 5, the default prior and δ); the sampler sizes
and seed may differ from the app's. Any other choice fits live.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import streamlit as st

from simplex_core.fit_jobs import data_key

from . import data_access as da

ASSETS = Path(__file__).resolve().parent.parent / "assets" / "precomputed"
META_FILE = "default_fit.json"
POSTERIOR_FILE = "default_posterior.nc"

# Fields that define the model (the rest: how long and with which seed it was sampled).
MODEL_FIELDS = ("omega", "beta_max", "integrated", "prior", "delta", "self_exclusion", "likelihood")


@dataclass
class PrecomputedResult:
    """A fit result read back from the assets: the same attributes pages use on a FitResult."""

    idata: Any
    diagnostics: Any  # simplex_core.inference.Diagnostics
    timing: dict = field(default_factory=dict)
    settings: Any = None
    meta: dict = field(default_factory=dict)


def model_fields(settings: Any) -> dict:
    d = settings.to_dict() if hasattr(settings, "to_dict") else dict(settings)
    return {k: d.get(k) for k in MODEL_FIELDS}


def _read(meta_path: Path, post_path: Path) -> PrecomputedResult | None:
    if not (meta_path.exists() and post_path.exists()):
        return None
    try:
        import arviz as az

        from simplex_core.inference import Diagnostics
        from simplex_core.model import FitSettings

        meta = json.loads(meta_path.read_text())
        with az.rc_context({"data.load": "eager"}):  # read fully, close the file
            idata = az.from_netcdf(str(post_path))
        known = {f.name for f in fields(Diagnostics)}
        diag = Diagnostics(**{k: (float("nan") if v is None else v) for k, v in meta["diagnostics"].items() if k in known})
        return PrecomputedResult(idata=idata, diagnostics=diag, timing=meta.get("timing", {}),
                                 settings=FitSettings.from_dict(meta["settings"]), meta=meta)
    except Exception:  # noqa: BLE001 — a broken asset only costs the head start; log and fit live
        import logging

        logging.getLogger("simplex_judge.app").warning("precomputed result %s unreadable", post_path.name, exc_info=True)
        return None


@st.cache_resource(show_spinner=False)
def load() -> PrecomputedResult | None:
    """The shipped result, or ``None`` when the assets are missing or unreadable."""
    return _read(ASSETS / META_FILE, ASSETS / POSTERIOR_FILE)


@st.cache_resource(show_spinner=False)
def _extra_sources() -> list[PrecomputedResult]:
    """The other shipped fits (``<stem>_fit.json`` + ``<stem>_posterior.nc``, e.g. ω = 1): never
    shown as a fit, only reweighted (the default at ω = 0 cannot stand in for ω > 0)."""
    out = []
    for meta_path in sorted(ASSETS.glob("*_fit.json")):
        if meta_path.name == META_FILE:
            continue
        pre = _read(meta_path, meta_path.with_name(meta_path.name.replace("_fit.json", "_posterior.nc")))
        if pre is not None:
            out.append(pre)
    return out


def reweighting_sources(counts: Any) -> list[PrecomputedResult]:
    """Every shipped fit of these counts (the default one included), as reweighting sources."""
    key = data_key(counts)
    return [p for p in [load(), *_extra_sources()] if p is not None and p.meta.get("data_key") == key]


def match(table: Any, counts: Any, settings: Any) -> PrecomputedResult | None:
    """The precomputed result when it was computed for exactly this data and model settings."""
    pre = load()
    if pre is None:
        return None
    meta = pre.meta
    if meta.get("data_hash") != da.table_key(table) or meta.get("data_key") != data_key(counts):
        return None
    if model_fields(pre.settings) != model_fields(settings):
        return None
    return pre
