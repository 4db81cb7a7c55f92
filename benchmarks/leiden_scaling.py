"""Parsing and context building scale linearly (issue #13): Leiden text of growing size, texts
with a growing number of gaps.

    python benchmarks/leiden_scaling.py

Prints a Markdown table: seconds to parse Leiden text of 250 KB to 1 MB (a papyrus-like mix of
words, supplements, underdots and line breaks), and seconds to parse a text of 1,000 to 4,000
gaps and build the context of every gap left to right (each earlier gap filled), as
:func:`apollo_restore.restoration.driver.restore_text` does. Best of two runs.
"""

from __future__ import annotations

import time

from apollo_restore.data.readers.leiden import parse_leiden
from apollo_restore.restoration.context import GapContexts

LINE = "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι χαίρειν. ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν α̣β̣ [ἐπι]τηρηταὶ\n"


def best_of_two(work) -> float:
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def contexts_of_every_gap(text: str) -> None:
    contexts, fills = GapContexts(parse_leiden(text).segments), []
    for i in range(len(contexts)):
        contexts.context(i, fills)
        fills.append("αβγ")


def main() -> None:
    print("| input | size | seconds |")
    print("|---|---:|---:|")
    for chars in (250_000, 500_000, 1_000_000):
        text = (LINE * (chars // len(LINE) + 1))[:chars]
        print(
            f"| parse Leiden text | {chars / 1e6:.2f} M chars "
            f"| {best_of_two(lambda text=text: parse_leiden(text)):.2f} |"
        )
    for gaps in (1000, 2000, 4000):
        text = " ".join(f"λόγος ἐστὶν [.{i % 9 + 1}] ἐν ἀρχῇ" for i in range(gaps))
        print(
            f"| parse + context of every gap | {gaps:,} gaps "
            f"| {best_of_two(lambda text=text: contexts_of_every_gap(text)):.2f} |"
        )


if __name__ == "__main__":
    main()
