"""The command lines that reproduce what a front end shows: :func:`fit_command_line` (a fit of a
dataset with given settings) and :func:`figures_command_line` (the figure files of a dataset), with
:func:`drop_flags` for the candidates and judges left out. They live below the command line, so the
app's Export page writes them without importing :mod:`simplex_core.cli`; the command line's parser
reads every flag they write (``tests/test_inference.py`` reads them back)."""

from __future__ import annotations

import shlex

from simplex_core.model.settings import FitSettings


def drop_flags(left_out: dict[str, list[str]] | None) -> list[str]:
    """``--drop-candidates A,B`` / ``--drop-judges J`` for what a selection record
    (:func:`simplex_core.data.selection.selection_record`) left out."""
    left_out = left_out or {}
    return [f"{flag} {shlex.quote(','.join(left_out[key]))}"
            for flag, key in (("--drop-candidates", "candidates_left_out"), ("--drop-judges", "judges_left_out"))
            if left_out.get(key)]


def fit_command_line(data: str, settings: FitSettings, criterion: str | None = None,
                     one_option_per_line: bool = False, left_out: dict[str, list[str]] | None = None) -> str:
    """The ``fit`` command that reproduces a fit of ``data`` (a built-in dataset name or a path) with
    ``settings``: the flags of every setting that differs from this command's defaults, plus the
    sampler sizes and seed (the app's Export page shows it, ``one_option_per_line``: a page wrapping
    the line would break "--omega" at its hyphens); ``left_out`` (:func:`simplex_core.data.selection.selection_record`)
    adds ``--drop-candidates`` / ``--drop-judges``."""
    d = FitSettings()
    parts = [f"python -m simplex_core fit {shlex.quote(data)}", "--out result.json", "--idata posterior.nc"]
    if criterion:
        parts.append(f"--criterion {shlex.quote(criterion)}")
    parts += drop_flags(left_out)
    if settings.integrated:
        parts.append("--integrated")
    else:
        parts += [f"--omega {settings.omega:g}", f"--beta-max {settings.beta_max:g}"]
    if settings.likelihood != d.likelihood:
        parts.append(f"--likelihood {settings.likelihood}")
    if settings.prior != d.prior:
        parts.append(f"--prior {settings.prior}")
    if settings.delta != d.delta:
        delta = settings.delta
        parts.append(f"--delta {delta if isinstance(delta, str) else ','.join(f'{x:g}' for x in delta)}")
    if not settings.self_exclusion:
        parts.append("--no-self-exclusion")
    elif settings.self_exclusion == "drop":
        parts.append("--drop-self-family")
    parts += [f"--chains {settings.chains}", f"--draws {settings.draws}", f"--tune {settings.tune}", f"--seed {settings.seed}"]
    if settings.extra_rounds != d.extra_rounds:
        parts.append(f"--extra-rounds {settings.extra_rounds}")
    return (" \\\n    " if one_option_per_line else " ").join(parts)


def figures_command_line(data: str, criterion: str | None = None, left_out: dict[str, list[str]] | None = None) -> str:
    """The ``figures`` command for ``data`` (a built-in dataset name or a path), both page sizes as PNG
    and SVG (the app's Export page shows it); ``left_out`` adds ``--drop-candidates`` / ``--drop-judges``."""
    return (f"python -m simplex_core figures {data}" + (f" --criterion {criterion}" if criterion else "")
            + "".join(f" {flag}" for flag in drop_flags(left_out)) + " --out figures/ --size both --formats png,svg")
