"""What a user's ``pip install .`` (no extras) brings, before and after the light install: the
packages installed, the venv's size on disk, and the time of ``import apollo_restore`` and of
``import apollo_restore`` + the first ``restore()`` of the README's example (O.Claud. 3.420) in a
fresh process (median of ``--runs``, the two venvs interleaved; the text index already built).

    python benchmarks/install_size.py [--before ad0ff3a] [--runs 3]

Each tree (``--before``: a commit, by default the last one before the light install; after: this
checkout's working tree, as committed or not) is copied to a temporary folder and installed,
non-editable, into a fresh venv: CPU torch first (``torch==2.13.0``, as ``scripts/setup.sh``),
then the package. Prints a Markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "ad0ff3a"  # the last commit whose base install carried transformers, tokenizers, matplotlib, pyyaml
EXAMPLE = ROOT / "examples" / "o.claud.3.420.txt"
TIMED = """
import sys, time
t = time.perf_counter()
import apollo_restore
t1 = time.perf_counter()
apollo_restore.restore(open(sys.argv[1], encoding="utf-8").read())
print(f"{t1 - t:.3f} {time.perf_counter() - t:.3f}")
"""
TRAINING = ("transformers", "tokenizers", "matplotlib", "pyyaml")


def tree(ref: str | None, into: Path) -> Path:
    """The source tree of commit ``ref`` (``None``: this checkout's working tree) under ``into``."""
    src = into / "src-tree"
    if ref is None:
        files = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout.decode().split("\0")  # fmt: skip
        for name in filter(None, files):
            if (ROOT / name).is_file():
                (src / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, src / name)
    else:
        src.mkdir()
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    return src


def install(src: Path, venv: Path) -> dict:
    """A fresh venv with CPU torch and the package at ``src``; what it holds."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-qq"]
    subprocess.run([*pip, "torch==2.13.0"], check=True)
    subprocess.run([*pip, str(src)], check=True)
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze", "--exclude", "pip"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    names = {line.split("==")[0].lower().replace("_", "-") for line in listed}
    du = subprocess.run(["du", "-sm", str(venv)], capture_output=True, text=True, check=True).stdout.split()[0]
    return {
        "packages": len(names), "mib": int(du), "training": sorted(names & set(TRAINING)),
        "install_s": time.perf_counter() - started,
    }  # fmt: skip


def timed(venv: Path) -> tuple[float, float]:
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", TIMED, str(EXAMPLE)], capture_output=True, text=True, check=True,
        cwd=venv,  # away from any source tree: the installed package runs
    ).stdout.split()  # fmt: skip
    return float(out[-2]), float(out[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="Commit of the tree before (default: %(default)s).")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        venvs, facts = {}, {}
        for label, ref in (("before", args.before), ("after", None)):
            folder = Path(tmp) / label
            folder.mkdir()
            venvs[label] = folder / "venv"
            facts[label] = install(tree(ref, folder), venvs[label])
            timed(venvs[label])  # warm-up, untimed: the page cache, the text index
        times = {label: [] for label in venvs}
        for _ in range(args.runs):
            for label, venv in venvs.items():
                times[label].append(timed(venv))
    print(f"`pip install .` (no extras) after CPU torch, fresh venv; median of {args.runs} fresh processes\n")
    print("| install | packages | venv | training stack | `import apollo_restore` | + first `restore()` |")
    print("|---|---:|---:|---|---:|---:|")
    for label in venvs:
        f, runs = facts[label], times[label]
        name = f"before (`{args.before}`)" if label == "before" else "after"
        print(
            f"| {name} | {f['packages']} | {f['mib']:,} MiB | {', '.join(f['training']) or 'none'} "
            f"| {statistics.median(r[0] for r in runs):.2f} s | {statistics.median(r[1] for r in runs):.2f} s |"
        )


if __name__ == "__main__":
    main()
