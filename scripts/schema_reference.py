"""Write the schema reference (:mod:`apollo_restore.schema.reference`) into docs/model-folders.md,
between its markers; ``--check`` exits 1 when the document differs from what the code declares.

    python scripts/schema_reference.py            # rewrite the generated part
    python scripts/schema_reference.py --check    # what tests/docs/test_schema_reference.py asserts
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from apollo_restore.restoration.members.registry import member_options
from apollo_restore.schema.reference import BEGIN, END, markdown

DOC = Path(__file__).resolve().parent.parent / "docs" / "model-folders.md"


def generated(text: str) -> str:
    """``text`` (the document) with the part between the markers replaced by :func:`markdown` (the
    members' options as their classes declare them)."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n\n{markdown(member_options())}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the document is out of date")
    args = parser.parse_args(argv)
    text = DOC.read_text(encoding="utf-8")
    new = generated(text)
    if args.check:
        if new != text:
            print(f"{DOC} is out of date: run python scripts/schema_reference.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
