"""``python -m simplex_core``: the command line."""

from simplex_core.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
