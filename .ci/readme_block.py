"""Print the N-th fenced code block of README.md (1-based), so CI runs exactly what users run."""

import re
import sys
from pathlib import Path

n = int(sys.argv[1])
text = Path(__file__).resolve().parent.parent.joinpath("README.md").read_text()
blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
if len(blocks) < n:
    sys.exit(f"README.md has {len(blocks)} fenced code blocks; block {n} was asked for")
print(blocks[n - 1])
