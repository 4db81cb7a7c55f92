"""Wall time of a CLI restore of a short text, end to end, and where it goes.

    python benchmarks/cli_latency.py [--runs 5]

Runs ``python -m apollo_restore restore TEXT`` ``--runs`` times (a fresh process each time,
as a user would) and reports the median and best wall seconds; then, in one process, the
seconds of each stage: importing the CLI, importing torch, loading the filler, restoring.
Prints a Markdown section for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = "ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου"
STAGES = r"""
import time, sys
t = time.perf_counter()
import apollo_restore.cli.app
t1 = time.perf_counter()
from apollo_restore.restore.driver import restore_text
from apollo_restore.restore.load import load_filler
t2 = time.perf_counter()
filler = load_filler()
t3 = time.perf_counter()
restore_text(filler, sys.argv[1], k=20)
t4 = time.perf_counter()
print(f"{t1 - t:.2f} {t2 - t1:.2f} {t3 - t2:.2f} {t4 - t3:.2f} {int('torch' in sys.modules)}")
"""


def wall(args: list[str], env: dict[str, str]) -> float:
    """Seconds for one fresh process to run ``args``."""
    started = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "apollo_restore", "restore", TEXT]
    times = [wall(cmd, env) for _ in range(args.runs)]
    stages = subprocess.run([sys.executable, "-c", STAGES, TEXT], env=env, check=True, capture_output=True, text=True)
    cli, load_code, load, restore, torch = stages.stdout.split()
    print(f'`apollo-restore restore "{TEXT}"`, {args.runs} fresh processes:\n')
    print(
        "| median s | best s | import CLI s | import restore code s | load model folder s | restore s "
        "| torch imported |"
    )
    print("|---:|---:|---:|---:|---:|---:|:---:|")
    print(
        f"| {statistics.median(times):.2f} | {min(times):.2f} | {cli} | {load_code} | {load} | {restore} "
        f"| {'yes' if torch == '1' else 'no'} |"
    )


if __name__ == "__main__":
    main()
