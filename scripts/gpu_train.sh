#!/usr/bin/env bash
# Train the GPU recipe for both character layouts side by side on one GPU (same config, same
# token budget), then pack each best/ model folder (bf16 weights) into $OUT in <16 MiB parts.
#   bash scripts/gpu_train.sh [SECONDS] [extra key=value overrides...]
# Needs data/gpu/prepared (scripts/pack_training_text.py) and data/gpu/val_gaps.jsonl.
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_BUDGET=${1:-420}; shift || true
OUT=${OUT:-runs/gpu-out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
PY=${PY:-python3}
nvidia-smi --query-gpu=name,memory.used --format=csv || true
compile=${COMPILE:-true}
for layout in join sentinel; do
  timeout $((SECONDS_BUDGET + 150)) $PY -m apollo_restore train --quiet --config configs/gpu_medium.yaml layout=$layout out=runs/gpu-$layout \
    compile=$compile max_seconds=$SECONDS_BUDGET val_gaps=data/gpu/val_gaps.jsonl "$@" > "$OUT/train-$layout.log" 2>&1 &
done
wait
for layout in join sentinel; do
  tail -2 "$OUT/train-$layout.log"; grep val_loss runs/gpu-$layout/metrics.jsonl | tail -3
  $PY - "$layout" <<'PY'
import sys, torch
from pathlib import Path
from apollo_restore.model.checkpoint import load_model, save_model
layout = sys.argv[1]
run = Path(f"runs/gpu-{layout}")
model, tok, meta = load_model(run / "best" if (run / "best").exists() else run / "checkpoint")
save_model(model.to(torch.bfloat16), tok, Path(f"runs/export-{layout}"), meta)
PY
  cp runs/gpu-$layout/metrics.jsonl runs/export-$layout/metrics.jsonl
  tar -C runs -cf - export-$layout | split -b 15M - "$OUT/$layout.tar.part-"
done
ls -la "$OUT"
