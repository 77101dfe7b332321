"""User text on the page is text: names, file names, notes and echoed cell values never become
Markdown, HTML, links, images, LaTeX or Streamlit directives.

Streamlit renders ``st.markdown``, captions, alert boxes, subheaders and widget labels as Markdown;
a candidate named ``![t](http://host/x.png)`` would make every visitor's browser fetch that address.
:func:`md` backslash-escapes every ASCII punctuation character (CommonMark shows an escaped
character as itself), which defuses ``$…$`` maths, ``:red[…]`` and ``:material/…:`` shortcodes;
line breaks become spaces so a name cannot start a new block. GFM turns ``http://…``, ``www.…``
and ``a@b.c`` into links even when escaped, so an invisible word joiner (U+2060) is put after
``:``, ``www`` and ``@``: the text reads the same and no link is made.
"""

from __future__ import annotations

import re
import string
from typing import Any

_PUNCT = re.compile("([" + re.escape(string.punctuation) + "])")
_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")


_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(:|(?i:www)|@)")


def md(value: Any) -> str:
    """``value`` as Markdown that renders as the text ``str(value)`` (with invisible word joiners
    that stop automatic links)."""
    text = _AUTOLINK.sub(lambda m: m.group(1) + _JOINER, _BREAKS.sub(" ", str(value)))
    return _PUNCT.sub(r"\\\1", text)
