"""What ``calibration.json`` costs: the shipped folder with and without it, same gaps, one process.

    python benchmarks/calibration_speed.py --gaps gaps.jsonl --limit 40 [--neural-only]

Loads the shipped restorer twice (``load_restorer``: presented; ``--neural-only`` its neural member
alone): from the embedded model folder, and from a copy of it without ``calibration.json``. Each
gap of the set (the first ``--limit``; ``apollo-restore gaps`` writes one) is restored by both, in
turn, each going first in turn, on one torch thread, so that the load of a shared machine falls on
both alike. Prints CPU ms per gap of each (mean, median, median ratio), how often the calibration
ran (once per gap), its share of the calibrated restorations' time under cProfile (a second pass,
so that the profiler's overhead stays out of the timings), and what it adds to a load: the
fingerprint of the weights (:func:`~apollo_restore.model.folder.fingerprint`, hashed once a
process) that shows it was fitted on them.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from apollo_restore.data.formats import GapExample
from apollo_restore.evaluate.gapsets import load_gaps
from apollo_restore.model.folder import fingerprint
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.ranking.calibration import CALIBRATION_FILE, Calibration


def copy_without_calibration(out: Path) -> Path:
    """The embedded model folder copied to ``out``, less its ``calibration.json``."""
    for path in DEFAULT_MODEL.iterdir():
        if path.is_file() and path.name != CALIBRATION_FILE:
            shutil.copy2(path, out / path.name)
    return out


def restore(restorer, gap: GapExample, k: int) -> tuple[float, list]:
    """CPU milliseconds of one gap's restoration, and its readings."""
    cpu = time.process_time()
    cands = restorer.candidates(gap.prefix, gap.suffix, gap.hint, k)
    return (time.process_time() - cpu) * 1000, cands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gaps", type=Path, required=True, help="gap-set JSONL (apollo-restore gaps)")
    parser.add_argument("--limit", type=int, default=40, help="the first this many gaps")
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--neural-only", action="store_true", help="the neural member alone")
    args = parser.parse_args()
    torch.set_num_threads(1)
    gaps = load_gaps(args.gaps)[: args.limit]
    with tempfile.TemporaryDirectory() as tmp:
        copy = copy_without_calibration(Path(tmp))
        cpu = time.process_time()
        fingerprint(copy)  # a path not seen yet: hashed afresh, as in a new process
        check = time.process_time() - cpu
        restorers = {
            name: load_restorer(folder, neural_only=args.neural_only)
            for name, folder in (("with", DEFAULT_MODEL), ("without", copy))
        }
        assert restorers["with"].calibration is not None and restorers["without"].calibration is None
        for restorer in restorers.values():  # first-call costs (the index opened, tables read) out of the timings
            restore(restorer, gaps[0], args.k)
        calls = 0
        apply = Calibration.apply

        def counted(self, *a, **kw):
            nonlocal calls
            calls += 1
            return apply(self, *a, **kw)

        Calibration.apply = counted
        ms: dict[str, list[float]] = {"with": [], "without": []}
        for i, gap in enumerate(gaps):
            for name in ("with", "without") if i % 2 == 0 else ("without", "with"):
                ms[name].append(restore(restorers[name], gap, args.k)[0])
        profile = cProfile.Profile()
        profile.enable()
        for gap in gaps:
            restore(restorers["with"], gap, args.k)
        profile.disable()
        Calibration.apply = apply
    w, wo = np.array(ms["with"]), np.array(ms["without"])
    stats = pstats.Stats(profile)
    applied = sum(v[3] for f, v in stats.stats.items() if f[2] == "counted")  # cumulative seconds
    print(
        f"{len(gaps)} gaps ({restorers['with'].name}), CPU ms per gap with / without: "
        f"mean {w.mean():.0f} / {wo.mean():.0f}, median {np.median(w):.0f} / {np.median(wo):.0f}, "
        f"median ratio {np.median(w / wo):.3f}; the calibration ran {calls} times "
        f"({2 * len(gaps)} calibrated restorations): {1000 * applied / len(gaps):.2f} ms a gap, "
        f"{100 * applied / stats.total_tt:.2f} % of their time; at load, the check that it was fitted on "
        f"these weights (their fingerprint, once a process): {1000 * check:.0f} CPU ms"
    )


if __name__ == "__main__":
    main()
