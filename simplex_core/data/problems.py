"""What is wrong with an input, said once for every front end: :class:`Problem` (the column, rows,
value, what was expected, how to fix it, and the setting that can fix it) and :class:`ValidationError`,
which carries every problem found at once. Front ends add their own words through ``describe(advice)``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from simplex_core.data.text import shorten


MAX_LISTED = 8  # rows/values quoted per problem before "and N more"


# -- problems ------------------------------------------------------------------------------------

def rows_text(rows: Iterable[int]) -> str:
    rows = list(rows)
    shown = ", ".join(str(r) for r in rows[:MAX_LISTED])
    more = f" and {len(rows) - MAX_LISTED} more" if len(rows) > MAX_LISTED else ""
    return ("row " if len(rows) == 1 else "rows ") + shown + more


def values_text(values: Iterable[Any]) -> str:
    vals = list(dict.fromkeys(values))
    shown = ", ".join(repr(v) if isinstance(v, str) else number_text(v) for v in vals[:MAX_LISTED])
    more = f" and {len(vals) - MAX_LISTED:,} more" if len(vals) > MAX_LISTED else ""
    return shown + more


def number_text(v: Any) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return repr(v)
    return str(int(f)) if f.is_integer() else f"{f:g}"


#: The longest problem message shown: the start and the end of a longer one, with the count cut
MAX_MESSAGE_CHARS = 1500


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, said precisely enough to fix it.

    ``rows`` are the 1-based data rows concerned (the first row after the header is row 1) and
    ``value`` the offending value(s) (a tuple of the distinct ones), when known. ``fix`` says what
    to change in words of the data; ``setting`` names the input setting that can also fix it
    (``'data'``, ``'levels'``, ``'true_levels'``, ``'criterion'``, ``'families'``,
    ``'self_exclusion'``), which each front end phrases in its own words (a flag, a widget) through
    :meth:`describe`. ``suggestion``, when known, is the declaration that fixes it, as
    ``(setting, value)`` pairs in the settings' syntax (e.g. ``(("levels", "1,2,3,4,5"),)``).
    """

    column: str | None
    message: str
    rows: tuple[int, ...] = ()
    value: Any = None
    expected: str | None = None
    fix: str | None = None
    setting: str | None = None
    suggestion: tuple[tuple[str, str], ...] = ()

    def describe(self, advice: Mapping[str, str] | None = None,
                 suggest: Callable[[tuple[tuple[str, str], ...]], str] | None = None) -> str:
        """The problem in one paragraph, with the front end's ``advice[setting]`` after the fix (or,
        with a ``suggestion``, ``suggest(suggestion)``: the front end's words for that declaration); an
        echoed name or value of any length is cut to :data:`MAX_MESSAGE_CHARS` (a 100 MB cell must not
        become a 100 MB message)."""
        message = shorten(self.message, MAX_MESSAGE_CHARS, say_how_many=True)
        parts = [f"The '{shorten(self.column, 200, say_how_many=True)}' column: {message}" if self.column else message]
        if self.expected:
            parts.append(f"Expected {self.expected}.")
        if self.fix:
            parts.append(f"Fix: {self.fix}")
        if self.suggestion and suggest is not None:
            parts.append(suggest(self.suggestion))
        elif advice and self.setting is not None and self.setting in advice:
            parts.append(advice[self.setting])
        return " ".join(parts)

    def __str__(self) -> str:
        return self.describe()


class ValidationError(ValueError):
    """Raised with every problem found in the input at once."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        super().__init__(self.describe())

    def describe(self, advice: Mapping[str, str] | None = None,
                 suggest: Callable[[tuple[tuple[str, str], ...]], str] | None = None) -> str:
        """Every problem, one per line (:meth:`Problem.describe` with the front end's ``advice``)."""
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in the input:"
        return "\n".join([head] + [f"- {p.describe(advice, suggest)}" for p in self.problems])


# -- the validated table ---------------------------------------------------------------------------

