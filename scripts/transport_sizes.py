"""What the forms of ``scripts/transport.py`` weigh, and what a warm restart from int8 loses.

    PYTHONPATH=src python scripts/transport_sizes.py --prepared data/prepared --windows 24

(a) Sizes: the shipped ``medium`` folder and a ``large`` initialised at random (seeded), packed
    by ``scripts/transport.py`` in fp32 (a plain safetensors file), bf16 and int8
    (per-row scales), with the number of ≤ 15 MiB parts each needs.
(b) Loss: bits per character (:func:`~apollo_restore.evaluate.harness.window_bits`, mode
    ``prefix``: the every-position loss the shipped model trains with; ``--mode middle``: the
    windows read as FIM middles) of the shipped model on
    held-out validation windows of every source, with its weights as shipped (read into fp32) and
    after an int8 round trip (and a bf16 one, exact for bf16 weights), the same windows for
    each. Windows are drawn seeded, ``--windows`` per source (500 characters, cut at spaces);
    the difference is given with its paired standard error over windows. Neural model alone,
    CPU, ``--threads`` threads.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save
from transport import PART_BYTES, pack, unpack  # scripts/transport.py, beside this file

from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.harness import window_bits, windows_of
from apollo_restore.model.builders import build_model
from apollo_restore.model.checkpoint import load_model

DEFAULT = Path(__file__).resolve().parents[1] / "src" / "apollo_restore" / "models" / "default"


def sizes(folder: Path, tok) -> list[dict]:
    """Bytes and ≤ 15 MiB parts of each form, for the shipped folder and a random ``large``."""
    rows = []
    model, _, _ = load_model(folder)
    large = build_model("large", tok, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        for name, m in (("medium (shipped)", model), ("large (random)", large)):
            state = {k: v.contiguous() for k, v in m.state_dict().items() if k != "lm_head.weight"}  # tied
            params = sum(v.numel() for v in state.values())
            row = {"model": name, "parameters": params, "fp32": len(save({k: v.float() for k, v in state.items()}))}
            for form in ("bf16", "int8"):
                written = pack(state, Path(tmp) / form, form)
                row[form] = sum(p.stat().st_size for p in written[1:])
                row[f"{form} parts"] = len(written) - 1
            row["fp32 parts"] = math.ceil(row["fp32"] / PART_BYTES)
            rows.append(row)
    return rows


def sample_windows(prepared: Path, per_source: int, seed: int) -> list[tuple[str, str]]:
    """``(source, window)`` pairs: ``per_source`` validation windows of each source, seeded."""
    table = load_documents(prepared, "validation")
    pools: dict[str, list[str]] = {}
    for text, source in zip(table.column("text").to_pylist(), table.column("source").to_pylist()):
        pools.setdefault(source, []).extend(windows_of(text, 500))
    rng = np.random.default_rng(seed)
    out = []
    for source, pool in sorted(pools.items()):
        pick = rng.choice(len(pool), size=min(per_source, len(pool)), replace=False)
        out += [(source, pool[int(i)]) for i in sorted(pick)]
    return out


def loss(folder: Path, windows: list[tuple[str, str]], mode: str = "prefix") -> dict:
    """bpc per source and overall for the weights as shipped and after int8 and bf16 round trips."""
    model, tok, _ = load_model(folder)
    variants = {"as shipped (fp32)": model}
    with tempfile.TemporaryDirectory() as tmp:
        for form in ("int8", "bf16"):
            pack(folder, Path(tmp) / form, form)
            state, _ = unpack(Path(tmp) / form)
            twin = copy.deepcopy(model)
            twin.load_state_dict(state, strict=False)  # lm_head is tied to the embedding
            variants[f"{form} round trip"] = twin.eval()
    bits: dict[str, np.ndarray] = {}
    chars = np.array([0] * len(windows))
    for name, m in variants.items():
        start, per = time.perf_counter(), []
        for i, (_, w) in enumerate(windows):
            b, c = window_bits(m, tok, [w], mode)
            per.append(b)
            chars[i] = c
        bits[name] = np.array(per)
        print(f"  {name}: {time.perf_counter() - start:.0f} s", flush=True)
    sources = sorted({s for s, _ in windows})
    result = {}
    for name, b in bits.items():
        entry = {}
        for s in sources:
            mine = [i for i, (t, _) in enumerate(windows) if t == s]
            entry[s] = float(b[mine].sum() / chars[mine].sum())
        entry["all"] = float(b.sum() / chars.sum())
        result[name] = entry
    base = bits["as shipped (fp32)"]
    for name in variants:
        if name != "as shipped (fp32)":
            d = (bits[name] - base) / chars  # paired, per window, bits per character
            result[name]["delta_mean"] = float(d.mean())
            result[name]["delta_se"] = float(d.std(ddof=1) / math.sqrt(len(d)))
            result[name]["windows_worse"] = int((d > 0).sum())
    return {"windows": len(windows), "characters": int(chars.sum()), "bpc": result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=DEFAULT)
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--windows", type=int, default=24, help="validation windows per source")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", choices=("prefix", "middle"), default="prefix", help="bpc mode (window_bits)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, help="write the numbers as JSON here too")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    _, tok, _ = load_model(args.model)
    report = {"sizes": sizes(args.model, tok)}
    mib = 2**20
    print("| model | parameters | fp32 MiB (parts) | bf16 MiB (parts) | int8 + scales MiB (parts) |")
    print("|---|---|---|---|---|")
    for r in report["sizes"]:
        cells = [f"{r[f] / mib:.1f} ({r[f + ' parts']})" for f in ("fp32", "bf16", "int8")]
        print(f"| {r['model']} | {r['parameters'] / 1e6:.2f} M | " + " | ".join(cells) + " |")
    if (args.prepared / "documents.parquet").is_file():
        start = time.perf_counter()
        windows = sample_windows(args.prepared, args.windows, args.seed)
        report["loss"] = loss(args.model, windows, args.mode)
        report["loss"]["seconds"] = round(time.perf_counter() - start)
        lo = report["loss"]
        print(
            f"\nbits per character ({args.mode}), {lo['windows']} validation windows, {lo['characters']:,} characters:"
        )
        for name, entry in lo["bpc"].items():
            cells = ", ".join(
                f"{k} {v:.4f}" for k, v in entry.items() if k not in ("delta_mean", "delta_se", "windows_worse")
            )
            extra = ""
            if "delta_mean" in entry:
                extra = f"; Δ {entry['delta_mean']:+.4f} ± {entry['delta_se']:.4f} (s.e.)"
                extra += f", worse on {entry['windows_worse']}/{lo['windows']}"
            print(f"  {name}: {cells}{extra}")
    else:
        print(f"no prepared corpus at {args.prepared}: the loss comparison is skipped")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
