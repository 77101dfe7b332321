"""Turning exceptions into plain messages on the page (never a traceback).

Every page body runs inside :func:`guard` (``app.py`` wraps the page as a whole too). Validation
problems are listed one per line with their fix; anything unexpected is logged with its traceback
to the server log and shown as one sentence saying what failed and what to try.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Iterator

import streamlit as st
from .safe_text import md

log = logging.getLogger("simplex_judge.app")

#: How to fix a problem in the app, after the core's words of what is wrong and expected (keys:
#: ``Problem.setting`` / ``ScaleError.setting``).
ADVICE = {
    "levels": "Use the 'Observed levels' box of the upload on the Data page.",
    "true_levels": "Use the 'True levels' box of the upload on the Data page.",
    "criterion": "Use the 'Criterion' selector in the sidebar.",
    "families": "Use the 'Families (optional JSON)' box on the Data page.",
    "columns": "Use the 'Columns' box under “How to read the file” on the Data page, e.g. item=question_id, candidate=model.",
    "candidates": "Change 'Candidates left out' on the Data page.",
    "drop_candidates": "Change 'Candidates left out' on the Data page.",
    "judges": "Change 'Judges left out' on the Data page.",
    "drop_judges": "Change 'Judges left out' on the Data page.",
    "self_exclusion": "Use the 'Keep self-family judgments apart' switch in the sidebar.",
}


#: The Data page's box for each setting a core suggestion names.
BOXES = {"levels": "Observed levels", "true_levels": "True levels", "columns": "Columns"}


def suggested_boxes(suggestion) -> str:
    """A core suggestion (``(setting, value)`` pairs) in the app's words: the boxes to fill and with what."""
    parts = [f"'{BOXES.get(name, name)}' to {value}" for name, value in suggestion]
    return "Set " + " and ".join(parts) + " under “How to read the file” on the Data page."


def plain_message(exc: BaseException, doing: str = "") -> tuple[str, list[str]]:
    """A headline and a list of details for an exception, in plain words."""
    from simplex_core.data.problems import ValidationError
    from simplex_core.data.scale import ScaleError

    context = f" while {doing}" if doing else ""
    if isinstance(exc, ValidationError):
        n = len(exc.problems)
        head = f"The data have {n} problem{'s' if n != 1 else ''}. Fix {'them' if n != 1 else 'it'} and try again:"
        return head, [p.describe(ADVICE, suggested_boxes) for p in exc.problems]
    if isinstance(exc, ScaleError):
        advice = (suggested_boxes(exc.suggestion) if exc.suggestion else ADVICE.get(exc.setting))
        return f"The scale is not valid{context}.", [str(exc)] + ([advice] if advice else [])
    if isinstance(exc, (ValueError, KeyError)):
        text = str(exc).strip().strip("'\"")
        lines = [ln.lstrip("- ").strip() for ln in text.splitlines() if ln.strip()]
        if len(lines) > 1:
            return lines[0], lines[1:]
        return (lines[0] if lines else f"Invalid input{context}."), []
    if isinstance(exc, MemoryError):
        return f"Out of memory{context}.", ["Try a smaller dataset, fewer draws, or collapse the scale to fewer levels."]
    if isinstance(exc, (ModuleNotFoundError, ImportError)):
        return f"Part of the app is not available yet{context}.", [f"Missing module: {getattr(exc, 'name', None) or exc}."]
    first = (str(exc).strip().splitlines() or [""])[0]
    detail = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return (f"Something went wrong{context} ({detail}).",
            ["Try again, or change the settings. If it keeps happening, the server log has the details."])


def show_error(exc: BaseException, doing: str = "") -> None:
    """Render an exception as a plain ``st.error`` box (and log the traceback server-side)."""
    from simplex_core.data.problems import ValidationError
    from simplex_core.data.scale import ScaleError

    if not isinstance(exc, (ValidationError, ScaleError)):
        log.error("error%s", f" while {doing}" if doing else "", exc_info=exc)
    head, details = plain_message(exc, doing)
    # The messages quote the user's names, values and file names: shown as text, never Markdown.
    body = md(head) + ("\n" + "\n".join(f"- {md(d)}" for d in details) if details else "")
    st.error(body, icon=":material/error:")


@contextmanager
def guard(doing: str = "") -> Iterator[None]:
    """Run a block; an exception becomes a plain error box instead of a traceback.

    Streamlit's own control flow (``st.rerun``, ``st.stop``) derives from ``BaseException`` and
    passes through untouched.
    """
    try:
        yield
    except Exception as exc:  # noqa: BLE001 — the point is to catch everything the page raises
        show_error(exc, doing)
