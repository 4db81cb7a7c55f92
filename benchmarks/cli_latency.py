"""Wall time of a CLI restore of a short text, end to end, and where it goes.

    python benchmarks/cli_latency.py [--runs 5] [--against /path/to/other/checkout/src]

Runs ``python -m apollo_restore restore TEXT`` ``--runs`` times (a fresh process each time,
as a user would) and reports the median and best wall seconds and the median CPU seconds;
then, in one process, the CPU seconds of each stage: importing the CLI, importing the restore code, loading the
restorer, restoring. With ``--against``, the same for another source tree (e.g. the main branch's),
the runs interleaved so that both see the same machine load, and the ratio of medians.
Prints a Markdown section for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = "ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου"
STAGES = r"""
import time, sys
t = time.process_time()
import apollo_restore.cli.app
t1 = time.process_time()
from apollo_restore.restoration.driver import restore_text
try:
    from apollo_restore.restoration.load import load_restorer
except ImportError:  # a tree from before load_filler was renamed load_restorer
    from apollo_restore.restoration.load import load_filler as load_restorer
t2 = time.process_time()
restorer = load_restorer()
t3 = time.process_time()
restore_text(restorer, sys.argv[1], k=20)
t4 = time.process_time()
loaded = [int(name in sys.modules) for name in ("torch", "transformers")]
print(f"{t1 - t:.2f} {t2 - t1:.2f} {t3 - t2:.2f} {t4 - t3:.2f}", *loaded)
"""


def wall(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds for one fresh process to run ``args``, and the CPU seconds (user + system)
    it used: on a shared machine the CPU seconds say what the run costs, the wall seconds also
    how long it waited for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, default=None, help="another source tree to time the same way")
    args = parser.parse_args()
    trees = {"this tree": ROOT / "src"} | ({f"`{args.against}`": args.against} if args.against else {})
    envs = {name: {**os.environ, "PYTHONPATH": str(src)} for name, src in trees.items()}
    cmd = [sys.executable, "-m", "apollo_restore", "restore", TEXT]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for _ in range(args.runs):  # interleaved: both trees see the same load
        for name, env in envs.items():
            times[name].append(wall(cmd, env))
    print(f'`apollo-restore restore "{TEXT}"`, {args.runs} fresh processes each:\n')
    print(
        "| tree | median s | best s | median CPU s | import CLI CPU s | import restore code CPU s "
        "| load model folder CPU s | restore CPU s | torch imported | transformers imported |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|:---:|:---:|")
    for name, env in envs.items():
        stages = subprocess.run([sys.executable, "-c", STAGES, TEXT], env=env, capture_output=True, text=True)
        # a tree from before restoration/load.py has no stages to report
        cli, load_code, load, restore, torch, hf = stages.stdout.split() if stages.returncode == 0 else ["–"] * 6
        print(
            f"| {name} | {statistics.median(w for w, _ in times[name]):.2f} | {min(w for w, _ in times[name]):.2f} "
            f"| {statistics.median(c for _, c in times[name]):.2f} | {cli} | {load_code} | {load} "
            f"| {restore} | {'yes' if torch == '1' else 'no'} | {'yes' if hf == '1' else 'no'} |"
        )
    if args.against:
        (base_wall, other_wall), (base_cpu, other_cpu) = (
            [statistics.median(run[i] for run in t) for t in times.values()] for i in (0, 1)
        )
        print(
            f"\nThis tree / the other: median wall {base_wall / other_wall:.2f}, median CPU {base_cpu / other_cpu:.2f}"
        )


if __name__ == "__main__":
    main()
