"""The precomputed default result shipped in ``assets/precomputed/`` (written by
``scripts/precompute_default.py``), so that opening the app shows a fitted ranking at once.

Each shipped fit is a read-only entry found by :mod:`simplex_core.fit_identity`: its metadata
records the ``model_key`` (data and model settings; the sampler sizes and seed may differ from the
app's) and ``data_key`` it was made with, and :func:`match` asks for exactly that key — the default
dataset and criterion, self-family exclusion on, ω = 0, β_max = 5, the default prior, δ and
likelihood. Any other choice fits live.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import streamlit as st

from simplex_core.fit_identity import data_key, model_key

ASSETS = Path(__file__).resolve().parent.parent / "assets" / "precomputed"
META_FILE = "default_fit.json"
POSTERIOR_FILE = "default_posterior.nc"


@dataclass
class PrecomputedResult:
    """A fit result read back from the assets: the same attributes pages use on a FitResult."""

    idata: Any
    diagnostics: Any  # simplex_core.inference.Diagnostics
    timing: dict = field(default_factory=dict)
    settings: Any = None
    meta: dict = field(default_factory=dict)


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


def match(counts: Any, settings: Any) -> PrecomputedResult | None:
    """The precomputed result when it was computed for exactly this data and model settings."""
    pre = load()
    if pre is None or pre.meta.get("model_key") != model_key(counts, settings):
        return None
    return pre
