"""The command line: ``python -m simplex_core SUBCOMMAND ...``.

This module owns the parser, the data options shared by every subcommand (``--levels``,
``--true-levels``, ``--families``, ``--criterion``) and the error contract: a bad file or option
exits with status 2 and the precise messages, never a traceback. Each command group lives in its
own module exposing ``register(subparsers)``; a handler is ``fn(args) -> int``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence

from simplex_core.data.table import JudgmentTable, load_table
from simplex_core.data.problems import ValidationError
from simplex_core.data.scale import ScaleError, levels_text, parse_true_levels, scale_from_options


class UsageError(Exception):
    """A bad file or option: printed without a traceback, exit status 2."""


#: The flag of each input setting a core message can name (``Problem.setting``, ``ScaleError.setting``).
FLAGS = {"levels": "--levels", "true_levels": "--true-levels", "criterion": "--criterion", "families": "--families",
         "self_exclusion": "--no-self-exclusion", "candidates": "--candidates", "drop_candidates": "--drop-candidates",
         "judges": "--judges", "drop_judges": "--drop-judges", "columns": "--columns"}

#: How to fix a problem on the command line, after the core's words of what is wrong and expected.
ADVICE = {
    "data": "`python -m simplex_core datasets` lists the built-in datasets.",
    "levels": "Use --levels, e.g. --levels=1,2,3,4,5 or --levels=0:incorrect,1:correct (the = form for negative values).",
    "true_levels": "Use --true-levels, e.g. --true-levels=1,3,5.",
    "criterion": "Use --criterion C.",
    "families": "Use --families FILE.json.",
    "self_exclusion": "Use --no-self-exclusion.",
    "columns": "Use --columns, e.g. --columns item=question_id,candidate=model,judge=grader,score=rating.",
    "candidates": "Check --candidates (names as `describe` lists them, comma-separated).",
    "drop_candidates": "Check --drop-candidates (names as `describe` lists them, comma-separated).",
    "judges": "Check --judges (names as `describe` lists them, comma-separated).",
    "drop_judges": "Check --drop-judges (names as `describe` lists them, comma-separated).",
}


#: The flag of each fit setting (``FitSettings`` field) that a settings error names.
SETTING_FLAGS = {"omega": "--omega", "beta_max": "--beta-max", "chains": "--chains", "draws": "--draws",
                 "tune": "--tune", "seed": "--seed", "extra_rounds": "--extra-rounds"}


def suggested_flags(suggestion: Sequence[tuple[str, str]]) -> str:
    """A core suggestion (``(setting, value)`` pairs) as the flags to add: ``Use --levels=1,2,3,4,5.``"""
    return "Use " + " ".join(f"{FLAGS.get(name, '--' + name.replace('_', '-'))}={value}" for name, value in suggestion) + "."


def usage_message(exc: BaseException, setting_flags: dict[str, str] | None = None) -> str:
    """A core error in the command line's words: validation problems with the flag that fixes them,
    a scale error with the flag it came from, a fit setting (``- seed must …``) by its flag
    (``setting_flags`` overrides, e.g. ``{"seed": "--fit-seed"}`` where ``--seed`` means another seed)."""
    if isinstance(exc, ValidationError):
        return exc.describe(ADVICE, suggested_flags)
    if isinstance(exc, ScaleError) and exc.suggestion:
        return f"{exc} {suggested_flags(exc.suggestion)}"
    if isinstance(exc, ScaleError) and exc.setting in FLAGS:
        return f"{exc} ({FLAGS[exc.setting]})"
    text = str(exc)
    if isinstance(exc, ValueError) and text.startswith("Invalid ") and " settings:\n- " in text:
        flags = {**SETTING_FLAGS, **(setting_flags or {})}

        def by_flag(problem: str) -> str:  # "seed must be …" -> "--fit-seed must be …"
            name, _, rest = problem.partition(" ")
            return f"{flags[name]} {rest}" if name in flags else problem

        return " ".join(by_flag(line.removeprefix("- ")) for line in text.splitlines()[1:])
    return text


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own errors also exit 2, with our prefix
        self.print_usage(sys.stderr)
        raise UsageError(message)


def add_data_options(parser: argparse.ArgumentParser, with_data: bool = True) -> None:
    """DATA and the options that say how to read it."""
    if with_data:
        parser.add_argument("data", metavar="DATA", help="a CSV/JSONL/Parquet file in the data contract, or a built-in dataset NAME")
    parser.add_argument("--levels", metavar="V[:LABEL],...", help="ordered observed levels, e.g. --levels=-1:incorrect,0:unsure,1:correct (use the = form for negative values)")
    parser.add_argument("--true-levels", metavar="V,...", help="ordered true levels, a subset of the observed ones, e.g. --true-levels=-1,1")
    parser.add_argument("--families", metavar="FILE.json", help="flat JSON object {model name: family} for self-family exclusion")
    parser.add_argument("--criterion", metavar="C", help="criterion/aspect of a multi-criterion dataset (see `datasets`)")
    parser.add_argument("--columns", metavar="item=COL,candidate=COL,...",
                        help="which of the file's columns are the contract's, e.g. --columns item=question_id,candidate=model,"
                             "judge=grader,score=rating[,true_score=human] (others: gold, candidate_family, judge_family, criterion)")
    g = parser.add_argument_group("choosing candidates and judges (names as `describe` lists them, comma-separated)")
    g.add_argument("--candidates", metavar="A,B,...", help="keep only these candidates")
    g.add_argument("--drop-candidates", metavar="A,B,...", help="leave these candidates out (e.g. a human reference answer)")
    g.add_argument("--judges", metavar="J,K,...", help="keep only these judges")
    g.add_argument("--drop-judges", metavar="J,K,...", help="leave these judges out (e.g. a near-constant one)")


def selection_options(args: argparse.Namespace) -> dict[str, tuple[str, ...]]:
    """The four choice flags as :func:`simplex_core.data.selection.select_models`' keywords."""
    from simplex_core.data.selection import SETTINGS, split_names

    return {name: split_names(getattr(args, name, None)) for name in SETTINGS}


def selection_flags(args: argparse.Namespace) -> list[str]:
    """The choice flags given, as a command line writes them (``--drop-judges=a,b``)."""
    from simplex_core.data.selection import SETTINGS

    return [f"{FLAGS[name]}={getattr(args, name)}" for name in SETTINGS if getattr(args, name, None)]


def load_data_from_args(args: argparse.Namespace) -> JudgmentTable:
    """Resolve DATA (a file, or a built-in name) with the data options, narrowed to the candidates and
    judges chosen; UsageError on any problem."""
    from simplex_core.data.selection import select_models

    try:
        table = _load_file_or_builtin(args)
        return select_models(table, **selection_options(args))
    except ValidationError as exc:
        raise UsageError(usage_message(exc)) from None


def _load_file_or_builtin(args: argparse.Namespace) -> JudgmentTable:
    from simplex_core.data import datasets

    data = args.data
    from simplex_core.data.column_mapping import parse_columns

    try:
        # --true-levels alone: the loader completes it with the observed levels it reads from the scores
        alone = bool(args.true_levels and not args.levels)
        scale = None if alone else scale_from_options(args.levels, args.true_levels)
        true_levels = parse_true_levels(args.true_levels) if alone else None
        columns = parse_columns(getattr(args, "columns", None)) or None
    except ScaleError as exc:
        raise UsageError(usage_message(exc)) from None
    except ValidationError as exc:
        raise UsageError(usage_message(exc)) from None

    try:
        if Path(data).exists():
            return load_table(data, scale=scale, families=_families_path(args), criterion=args.criterion,
                              true_levels=true_levels, columns=columns)
        names = [d.name for d in datasets.list_datasets()]
        if data in names:
            options: dict[str, Any] = {"columns": columns} if columns else {}
            if scale is not None:
                options["scale"] = scale
            elif true_levels is not None:  # the built-in's declared scale, with these true levels
                base = datasets.load_dataset(data, criterion=args.criterion).scale
                options["scale"] = scale_from_options(levels_text(base.values, base.labels), args.true_levels)
            if args.families:
                options["families"] = _families_path(args)
            return datasets.load_dataset(data, criterion=args.criterion, **options)
        raise UsageError(f"DATA {data!r} is neither a file nor a built-in dataset. Built-ins: {', '.join(names)}.")
    except ValidationError as exc:
        raise UsageError(usage_message(exc)) from None
    except ScaleError as exc:
        raise UsageError(usage_message(exc)) from None
    except ValueError as exc:  # e.g. unknown criterion of a built-in
        raise UsageError(usage_message(exc)) from None


def load_data_for_fit(args: argparse.Namespace) -> JudgmentTable:
    """:func:`load_data_from_args` for a command that fits: a scale too large to fit is a UsageError
    at once (naming --levels), not an error after the loading."""
    from simplex_core.model.settings import check_fit_size

    table = load_data_from_args(args)
    try:
        check_fit_size(table.scale)
    except ValueError as exc:
        raise UsageError(f"{exc} (--levels)") from None
    for note in table.notes:  # rows left out, names ignored, a licence: said by every command, not only describe
        print(f"data: {note}", file=sys.stderr)
    return table


def _families_path(args: argparse.Namespace) -> Path | None:
    """--families names a file (the loader reads a ``str`` as JSON text, a ``Path`` as a file)."""
    return Path(args.families) if args.families else None


def out_folder(path: str, option: str = "--out") -> Path:
    """The output folder ``path``, created if missing; a UsageError when it cannot be (a file there,
    no permission)."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        what = "it is a file; give a folder" if out.exists() and not out.is_dir() else (exc.strerror or str(exc))
        raise UsageError(f"cannot create {option} {path}: {what}.") from None
    return out


def check_output_path(path: str, option: str = "--out") -> None:
    """Fail before a long computation, not after it, when ``path`` cannot be written."""
    import os
    import tempfile

    if not str(path).strip():
        raise UsageError(f"{option} is empty; give a file name.")
    out = Path(path)
    if out.is_dir():
        raise UsageError(f"{option} {path!r} is a folder; give a file name.")
    parent = out.parent if str(out.parent) else Path(".")
    existing = parent
    while not existing.exists() and existing != existing.parent:  # the folder is created on writing
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{option} {path!r}: {str(existing)!r} is not a folder.")
    # a real attempt, not os.access: permission bits say yes to root on read-only file systems (/sys)
    try:
        if out.exists():
            with open(out, "ab"):  # opens for writing without truncating what is there
                pass
        else:
            tempfile.TemporaryFile(dir=existing).close()
    except OSError as exc:
        why = exc.strerror or (os.strerror(exc.errno) if exc.errno else "it cannot be written")
        raise UsageError(f"{option} {path!r}: cannot write there ({why.lower()}); pick another path.") from None


#: File-name endings that name a format, for the outputs' check (an ending not listed names none).
_FORMAT_OF_SUFFIX = {".json": "JSON", ".csv": "CSV", ".tsv": "TSV", ".nc": "NetCDF", ".nc4": "NetCDF",
                     ".netcdf": "NetCDF", ".parquet": "Parquet", ".jsonl": "JSON Lines", ".ndjson": "JSON Lines",
                     ".png": "PNG", ".svg": "SVG", ".html": "HTML", ".pdf": "PDF", ".xlsx": "Excel"}


def check_outputs(args: argparse.Namespace, *options: str) -> None:
    """Check every output file a command was given (``options``: attribute names such as ``"out"``,
    ``"idata"``, each optionally with the format the command writes there, ``"out:JSON"``) before
    the work: each writable, named for the format written (``--out x.json`` written as CSV was
    read as broken JSON), none the input DATA file (writing there would overwrite the user's data),
    no two the same file (one would silently replace the other)."""
    given: list[tuple[str, Path]] = []
    misnamed: list[str] = []
    for option in options:
        name, _, written = option.partition(":")
        path = getattr(args, name, None)
        if path is None:
            continue
        flag = "--" + name.replace("_", "-")
        named = _FORMAT_OF_SUFFIX.get(Path(str(path)).suffix.lower())
        if written and named and named != written:
            misnamed.append(f"{flag} {str(path)!r} names a {named} file, but {written} is written there: give it a "
                            f"name ending in {next(s for s, f in _FORMAT_OF_SUFFIX.items() if f == written)}.")
        check_output_path(path, flag)
        given.append((flag, Path(path).resolve()))
    data = getattr(args, "data", None)
    if data and Path(data).is_file():
        for flag, path in given:
            if path == Path(data).resolve():
                raise UsageError(f"{flag} {str(path)!r} is the input file DATA: writing there would overwrite your data; "
                                 "pick another path.")
    for i, (flag_a, path_a) in enumerate(given):
        for flag_b, path_b in given[i + 1:]:
            if path_a == path_b:
                raise UsageError(f"{flag_a} and {flag_b} name the same file {str(path_a)!r}: one would replace the other; "
                                 "give each its own path.")
    if misnamed:
        raise UsageError(misnamed[0])


def add_dask_options(parser: argparse.ArgumentParser) -> None:
    """Where a study's independent fits run (see :mod:`simplex_core.inference.distributed`)."""
    from simplex_core.inference.distributed import default_workers

    g = parser.add_argument_group("where the fits run (Dask)")
    g.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run the fits on an existing Dask cluster (default: a local cluster on this machine)")
    g.add_argument("--workers", type=int, metavar="N",
                   help=f"worker processes of the local cluster (default: one per core, here {default_workers()}); "
                        "0 = no cluster, the fits run one after another in this process")


@contextlib.contextmanager
def study_client(args: argparse.Namespace):
    """The Dask client of ``--scheduler`` / ``--workers`` (None for ``--workers 0``), closed on exit."""
    if args.scheduler and args.workers is not None:
        raise UsageError("--workers sizes the local cluster: do not give it with --scheduler.")
    if args.workers is not None and args.workers < 0:
        raise UsageError(f"--workers must be 0 or more; got {args.workers}.")
    if args.workers == 0:
        yield None
        return
    with contextlib.ExitStack() as stack:
        try:
            from simplex_core.inference.distributed import open_client

            client = stack.enter_context(open_client(args.scheduler, args.workers))
        except ImportError as exc:
            raise UsageError(f"{exc.name or 'dask'} is not installed (pip install -r requirements.txt), or run "
                             "without a cluster: --workers 0.") from None
        except ValueError as exc:  # an unreachable --scheduler: the core's words (with what to do), then the flag
            raise UsageError(f"{usage_message(exc)} (--scheduler)") from None
        yield client


# Command modules, each with register(subparsers). Order = order in --help.
_COMMAND_MODULES = ("data_commands", "simulate_command", "fit_commands", "evaluate_commands", "calibrate_command",
                    "figure_commands", "label_commands", "judge_commands")


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = _Parser(prog="python -m simplex_core", description="Simplex Judge: rank LLM candidates from LLM-judge scores with honest uncertainty.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in _COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    import os

    if sys.stdout is None:  # started with stdout closed (`... >&-`): the printed lines go nowhere
        sys.stdout = open(os.devnull, "w")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        status = int(args.handler(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler below, not at exit
        return status
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``describe ... | head``): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as exc:
        if exc.errno is None or not _stdout_failed():
            raise
        # stdout cannot take the output (`> /dev/full`, a full disk): say so once, without a traceback
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        print(f"error: the output could not be written to standard output ({exc.strerror or exc}).", file=sys.stderr)
        return 1


def _stdout_failed() -> bool:
    """Whether standard output refuses a write now (the OSError came from printing, not from a file)."""
    try:
        sys.stdout.write("\n")
        sys.stdout.flush()
        return False
    except OSError:
        return True
