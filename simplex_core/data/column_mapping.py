"""Which of a file's columns are the contract's: the command line's ``--columns
item=question_id,candidate=model,judge=grader,score=rating[,true_score=human]`` and the app's
column-mapping box (guessed from the header, editable).

:func:`parse_columns` reads the text into the ``{contract name: file column}`` mapping that
:func:`simplex_core.data.table.load_table` takes as ``columns=``; :func:`guess_columns` proposes one from a
header whose required columns are missing (names other tools use, ``data.COLUMN_HINTS``);
:func:`columns_text` writes a mapping back as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from simplex_core.data.reading import COLUMN_HINTS, OPTIONAL_COLUMNS, REQUIRED_COLUMNS
from simplex_core.data.problems import Problem, ValidationError


def parse_columns(text: str | None) -> dict[str, str]:
    """``"item=question_id, score=rating"`` → ``{"item": "question_id", "score": "rating"}`` (spaces
    around names trimmed; an empty text is no mapping). A pair without ``=``, a name that is no
    contract column or a contract column given twice is a :class:`ValidationError` naming it."""
    out: dict[str, str] = {}
    problems: list[Problem] = []
    known = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
    for part in (p.strip() for p in str(text or "").split(",")):
        if not part:
            continue
        want, sep, col = (x.strip() for x in part.partition("="))
        if not sep or not want or not col:
            problems.append(Problem(None, f"The column mapping's {part!r} is not a contract=column pair.", value=part,
                                    expected="pairs such as item=question_id, separated by commas",
                                    fix="write each pair as contract=column.", setting="columns"))
        elif want.lower() not in known:
            problems.append(Problem(None, f"The column mapping names {want!r}, which is no column of the contract.", value=want,
                                    expected=f"one of {', '.join(known)}", fix="put the contract's name before the '='.",
                                    setting="columns"))
        elif want.lower() in out:
            problems.append(Problem(None, f"The column mapping gives {want.lower()} twice.", value=want,
                                    expected="each contract column once", fix="keep one pair for it.", setting="columns"))
        else:
            out[want.lower()] = col
    if problems:
        raise ValidationError(problems)
    return out


def columns_text(mapping: Mapping[str, str]) -> str:
    """The text :func:`parse_columns` reads back: ``"item=question_id,score=rating"``."""
    return ",".join(f"{want}={col}" for want, col in mapping.items())


def guess_columns(header: Iterable[object]) -> dict[str, str]:
    """For each required column the header lacks, the first column named as other tools name it
    (``question_id`` → item, ``model`` → candidate, ``grader`` → judge, ``rating`` → score), each
    column used once; an empty mapping when the header has them all or nothing looks like them."""
    names = [str(c) for c in header]
    folded = {n.strip().lower() for n in names}
    out: dict[str, str] = {}
    for want in REQUIRED_COLUMNS:
        if want in folded:
            continue
        like = [n for n in names if n.strip().lower().replace(" ", "_").replace("-", "_") in COLUMN_HINTS[want]
                and n.strip().lower() not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS and n not in out.values()]
        if like:
            out[want] = like[0]
    return out
