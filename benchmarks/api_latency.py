"""The README's Python example against the CLI, and the cost of k, for this tree and another.

    python benchmarks/api_latency.py [--runs 3] [--against /path/to/other/checkout/src]

Two measures, each for this tree and (``--against``) another, runs interleaved so that both see
the same machine load:

* **Fresh processes** (what a user waits for; ``OMP_NUM_THREADS`` unset, so each picks its own
  torch threads): wall seconds of the README's Python example (``apollo_restore.restore(TEXT,
  k=20)`` and printing its readings) and of ``apollo-restore restore TEXT``; median and best.
* **One call** (the model loaded, ``OMP_NUM_THREADS`` unset): seconds of a further
  ``apollo_restore.restore(TEXT, k=20)`` in the same process, and the torch threads it ran on.
* **The cost of k** (one process per tree, one torch thread, the model loaded once): seconds per
  restoration of each of :data:`TEXTS` for k = 5, 20, 50, 200 (median of ``--runs``), and the
  top reading with its probability, which must not change with k.

Prints Markdown for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = "Κόμων Μουσαίου [.4] χαίρειν"  # the README's example
TEXTS = (TEXT, "Ἀπολλώνιος Ἡρακλείδῃ τῷ φιλτάτῳ πλεῖστα [.7] καὶ διὰ παντὸς ὑγιαίνειν")
KS = (5, 20, 50, 200)
README = f"""
import apollo_restore
result = apollo_restore.restore({TEXT!r}, k=20)
for cand in result.gaps[0].candidates[:5]:
    print(cand.display, cand.text, f"{{cand.prob:.0%}}")
"""
CALL = f"""
import statistics, sys, time
import torch
import apollo_restore
apollo_restore.restore({TEXT!r}, k=20)  # load and warm
times = []
for _ in range(int(sys.argv[1])):
    started = time.perf_counter()
    apollo_restore.restore({TEXT!r}, k=20)
    times.append(time.perf_counter() - started)
print(statistics.median(times), min(times), torch.get_num_threads())
"""
BY_K = f"""
import json, statistics, sys, time
import torch
torch.set_num_threads(1)
from apollo_restore.restoration.driver import restore_text
try:
    from apollo_restore.restoration.load import load_restorer
except ImportError:  # a tree from before load_filler was renamed load_restorer
    from apollo_restore.restoration.load import load_filler as load_restorer
restorer = load_restorer()
restore_text(restorer, {TEXT!r}, k=20)  # warm: the text index and the first prompt
out = {{}}
for text in {TEXTS!r}:
    for k in {KS!r}:
        times = []
        for _ in range(int(sys.argv[1])):
            started = time.perf_counter()
            best = restore_text(restorer, text, k=k).gaps[0].candidates[0]
            times.append(time.perf_counter() - started)
        out[f"{{text}}|{{k}}"] = [statistics.median(times), best.text, best.prob]
print(json.dumps(out))
"""


def wall(args: list[str], env: dict[str, str]) -> float:
    """Wall seconds for one fresh process to run ``args``."""
    started = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, default=None, help="another source tree to time the same way")
    args = parser.parse_args()
    trees = {"this tree": ROOT / "src"} | ({f"`{args.against}`": args.against} if args.against else {})
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    envs = {name: base | {"PYTHONPATH": str(src)} for name, src in trees.items()}
    commands = {
        "README Python example": [sys.executable, "-c", README],
        "CLI `apollo-restore restore`": [sys.executable, "-m", "apollo_restore", "restore", TEXT],
    }
    for env in envs.values():  # warm the file cache and the text index once per tree
        wall(commands["CLI `apollo-restore restore`"], env)
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.runs):
        for what, command in commands.items():
            for name, env in envs.items():
                times.setdefault((name, what), []).append(wall(command, env))
    load = os.getloadavg()[0]
    print(f"Fresh processes, {args.runs} interleaved runs each (load average {load:.1f} at the end):\n")
    print("| tree | command | median s | best s |\n|---|---|---:|---:|")
    for (name, what), seconds in times.items():
        print(f"| {name} | {what} | {statistics.median(seconds):.2f} | {min(seconds):.2f} |")
    calls: dict[str, list[list[float]]] = {}
    for _ in range(args.runs):
        for name, env in envs.items():
            out = subprocess.run(
                [sys.executable, "-c", CALL, str(args.runs)], env=env, check=True, capture_output=True, text=True
            )
            calls.setdefault(name, []).append([float(x) for x in out.stdout.split()])
    print(f"\nOne further `apollo_restore.restore(..., k=20)` call, model loaded ({args.runs} processes):\n")
    print("| tree | median s | best s | torch threads |\n|---|---:|---:|---|")
    for name, rows in calls.items():
        threads = sorted({int(r[2]) for r in rows})
        median, best = statistics.median(r[0] for r in rows), min(r[1] for r in rows)
        print(f"| {name} | {median:.2f} | {best:.2f} | {', '.join(map(str, threads))} |")
    by_k = {
        name: json.loads(
            subprocess.run(
                [sys.executable, "-c", BY_K, str(args.runs)], env=env, check=True, capture_output=True, text=True
            ).stdout
        )
        for name, env in envs.items()
    }
    print(f"\nSeconds per restoration (one torch thread, median of {args.runs}) and the top reading:\n")
    print("| text | k | " + " | ".join(f"{name} s | {name} top" for name in trees) + " |")
    print("|---|---:|" + "---:|---|" * len(trees))
    for text in TEXTS:
        for k in KS:
            cells = [by_k[name][f"{text}|{k}"] for name in trees]
            row = " | ".join(f"{s:.2f} | {best} {p:.0%}" for s, best, p in cells)
            print(f"| {text[:24]}… | {k} | {row} |")


if __name__ == "__main__":
    main()
