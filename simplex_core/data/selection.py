"""Choosing the candidates and judges an analysis uses: a study file's row that is no competitor (a
human reference answer), a judge the researcher leaves out (one that says "correct" to nearly
everything), without editing the file.

:func:`select_models` narrows a :class:`~simplex_core.data.table.JudgmentTable` to the names kept, checks
every name given (an unknown one is an error naming it and its close matches), and records what was
left out, in words (``notes``, which every command and the app show) and as data (``left_out``,
which result records carry: :func:`selection_record`). With nothing chosen it returns the table
itself, so the data hash, and the fits keyed by it, do not change.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence

from simplex_core.data.table import JudgmentTable
from simplex_core.data.problems import Problem, ValidationError
from simplex_core.data.text import shorten

#: The four choices, as the settings a problem names (each front end words them as its flags or boxes).
SETTINGS = ("candidates", "drop_candidates", "judges", "drop_judges")


def split_names(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """Names from a comma-separated text (or several such texts), spaces around each trimmed, blanks
    and repeats dropped; ``None`` or an empty text gives no names."""
    if text is None:
        return ()
    parts = [text] if isinstance(text, str) else list(text)
    names = (n.strip() for part in parts for n in str(part).split(","))
    return tuple(dict.fromkeys(n for n in names if n))


def _unknown(name: str, role: str, present: Sequence[str], other: Sequence[str], setting: str) -> Problem:
    """An unknown name: said with its close matches (case aside first), or the names there are."""
    folded = [p for p in present if p.casefold() == name.casefold()]
    close = folded or difflib.get_close_matches(name, list(present), n=3, cutoff=0.6)
    if name in other:
        hint = f" {name!r} is a {'judge' if role == 'candidate' else 'candidate'} of the table, not a {role}."
    elif close:
        hint = f" Close match{'es' if len(close) > 1 else ''}: {', '.join(repr(c) for c in close)}."
    else:
        hint = ""
    listed = ", ".join(repr(shorten(p, 60)) for p in present[:12]) + (f" and {len(present) - 12} more" if len(present) > 12 else "")
    return Problem(role, f"no {role} named {shorten(name, 200, say_how_many=True)!r}.{hint}", value=name,
                   expected=f"a {role} of the table: {listed}", fix=f"write the {role}'s name as the file has it.",
                   setting=setting)


def _chosen(present: Sequence[str], keep: Sequence[str], drop: Sequence[str]) -> list[str]:
    keep_set, drop_set = set(keep), set(drop)  # built once: a comprehension's condition runs per element
    kept = [p for p in present if p in keep_set] if keep else list(present)
    return [p for p in kept if p not in drop_set]


def select_models(table: JudgmentTable, *, candidates: Iterable[str] = (), drop_candidates: Iterable[str] = (),
                  judges: Iterable[str] = (), drop_judges: Iterable[str] = ()) -> JudgmentTable:
    """The table narrowed to the candidates and judges chosen.

    Parameters
    ----------
    candidates, judges
        Names to keep (empty: all of them).
    drop_candidates, drop_judges
        Names to leave out (after the kept ones are taken).

    Raises
    ------
    ValidationError
        A name that is no candidate (judge) of the table, each with its close matches; a choice that
        leaves fewer than two candidates or no judge; a kept candidate no kept judge scored, or a
        kept judge who scored no kept candidate.
    """
    asked = {"candidates": tuple(candidates), "drop_candidates": tuple(drop_candidates),
             "judges": tuple(judges), "drop_judges": tuple(drop_judges)}
    if not any(asked.values()):
        return table
    problems: list[Problem] = []
    for setting, names in asked.items():
        role = "candidate" if "candidate" in setting else "judge"
        present, other = (table.candidates, table.judges) if role == "candidate" else (table.judges, table.candidates)
        problems += [_unknown(n, role, present, other, setting) for n in names if n not in present]
    if problems:
        raise ValidationError(problems)

    kept_c = _chosen(table.candidates, asked["candidates"], asked["drop_candidates"])
    kept_j = _chosen(table.judges, asked["judges"], asked["drop_judges"])
    if len(kept_c) < 2:
        problems.append(Problem("candidate", f"the choice keeps {len(kept_c)} candidate{'s' if len(kept_c) != 1 else ''}"
                                             f"{' (' + ', '.join(repr(c) for c in kept_c) + ')' if kept_c else ''}.",
                                expected="at least two candidates to rank", fix="keep more candidates.",
                                setting="candidates"))
    if not kept_j:
        problems.append(Problem("judge", "the choice keeps no judge.", expected="at least one judge",
                                fix="keep at least one judge.", setting="judges"))
    if problems:
        raise ValidationError(problems)

    frame = table.frame
    rows = frame["candidate"].isin(kept_c) & frame["judge"].isin(kept_j)
    new = frame[rows].reset_index(drop=True)
    scored, active = set(new["candidate"]), set(new["judge"])
    unscored = [c for c in kept_c if c not in scored]
    idle = [j for j in kept_j if j not in active]
    if unscored:
        problems.append(Problem("candidate", f"no kept judge scored {', '.join(repr(c) for c in unscored)}.",
                                expected="every kept candidate scored by a kept judge",
                                fix="keep a judge who scored it, or leave the candidate out too.", setting="drop_candidates"))
    if idle:
        problems.append(Problem("judge", f"{', '.join(repr(j) for j in idle)} scored none of the kept candidates.",
                                expected="every kept judge with a score of a kept candidate",
                                fix="leave that judge out too, or keep a candidate it scored.", setting="drop_judges"))
    if problems:
        raise ValidationError(problems)

    left_c = [c for c in table.candidates if c not in kept_c]
    left_j = [j for j in table.judges if j not in kept_j]
    said = []
    for role, left in (("candidate", left_c), ("judge", left_j)):
        if left:
            n_rows = {name: int((frame[role] == name).sum()) for name in left}
            said.append(f"{role}{'s' if len(left) > 1 else ''} "
                        + ", ".join(f"{shorten(n, 80)} ({n_rows[n]:,} judgment{'s' if n_rows[n] != 1 else ''})" for n in left))
    left_items = set(new["item"])
    items = tuple(i for i in table.items if i in left_items)
    lost_items = len(table.items) - len(items)
    note = (f"Left out as chosen: {'; '.join(said)}. Everything here is over the other {len(kept_c)} candidates and "
            f"{len(kept_j)} judge{'s' if len(kept_j) != 1 else ''}"
            + (f"; {lost_items} item{'s' if lost_items != 1 else ''} with no judgment left went too." if lost_items else "."))
    models = set(kept_c) | set(kept_j)
    return dataclasses.replace(
        table, frame=new, candidates=tuple(kept_c), judges=tuple(kept_j), items=items,
        families={m: f for m, f in table.families.items() if m in models},
        notes=tuple(table.notes) + (note,),
        left_out=tuple(table.left_out) + tuple(("candidate", c) for c in left_c) + tuple(("judge", j) for j in left_j),
    )


def selection_record(table: JudgmentTable) -> dict[str, list[str]]:
    """What a result record says was left out: ``{"candidates_left_out": [...], "judges_left_out": [...]}``
    (empty lists when nothing was)."""
    return {"candidates_left_out": [n for role, n in table.left_out if role == "candidate"],
            "judges_left_out": [n for role, n in table.left_out if role == "judge"]}


def selection_text(table: JudgmentTable) -> str:
    """One line for captions and figure subtitles: ``"without candidates a, b; judge c"``, or ``""``."""
    record = selection_record(table)
    parts = [f"{what}{'s' if len(names) > 1 else ''} {', '.join(shorten(n, 40) for n in names)}"
             for what, names in (("candidate", record["candidates_left_out"]), ("judge", record["judges_left_out"])) if names]
    return ("without " + "; ".join(parts)) if parts else ""
