"""The closing line of scripts/check.sh: the JUnit XML files of its pytest runs (each test folder
alone, then the slow tier) summed into one line in pytest's words, the one CI reads::

    python scripts/tally.py RESULTS/*.xml     # e.g. "1577 passed, 21 skipped in 312.4s"; exit 1 on a failure

Each test ran once, in one of the runs: the sum is the suite's count, with no test run twice.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def tally(paths: list[Path]) -> tuple[str, bool]:
    """``(line, all passed)``: the counts of every ``<testsuite>`` in ``paths`` and the seconds
    they took, summed; ``all passed`` is false when a test failed or errored, or nothing ran."""
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    seconds = 0.0
    for path in paths:
        root = ET.parse(path).getroot()
        for suite in [root] if root.tag == "testsuite" else root.iter("testsuite"):
            tests, failed, errors, skipped = (
                int(suite.get(key, 0)) for key in ("tests", "failures", "errors", "skipped")
            )
            counts["passed"] += tests - failed - errors - skipped
            counts["failed"] += failed
            counts["errors"] += errors
            counts["skipped"] += skipped
            seconds += float(suite.get("time", 0.0))
    words = [f"{n} {name}" for name, n in counts.items() if n or name == "passed"]
    ok = counts["passed"] > 0 and not counts["failed"] and not counts["errors"]
    return f"{', '.join(words)} in {seconds:.1f}s", ok


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python scripts/tally.py RESULTS.xml [...]", file=sys.stderr)
        return 2
    line, ok = tally([Path(arg) for arg in argv])
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
