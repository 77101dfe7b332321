"""Text cut to a length: one rule for a figure's labels and for the names and values a message echoes.

No plotting and no pandas here: the data layer's messages use it on the command line's path."""

from __future__ import annotations


def shorten(text: object, n: int, middle: bool = False, say_how_many: bool = False) -> str:
    """``text`` cut to at most ``n`` characters, an ellipsis marking the cut: at the end, or in the
    middle (names that differ only at their end, "Nucleus Decoding (p = 0.3)", "…-70B", stay apart).
    ``say_how_many``: the mark says how many characters it stands for (a message echoing a 100 MB
    cell), and the kept start and end are about ``n`` characters together."""
    text = str(text)
    if len(text) <= n:
        return text
    if say_how_many:
        head, tail = (2 * n) // 3, n // 4
        return f"{text[:head]} … [{len(text) - head - tail:,} characters not shown] … {text[len(text) - tail:]}"
    if middle:
        tail = (n - 1) // 2
        return text[: n - 1 - tail] + "…" + text[len(text) - tail:]
    return text[: max(n - 1, 1)] + "…"
