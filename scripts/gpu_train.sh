#!/usr/bin/env bash
# The GPU recipe, end to end, inside the device limits (≤ 10 min a call, ~30 device-minutes a
# session, 64 MiB carried, files back ≤ 16 MiB). Training accumulates: every session continues
# from the best weights so far (the shipped model, or a folder brought back: INIT=path) and the
# model folder records each session (training.history: steps, tokens, seconds; config: data mix).
#
#   here, once (~3 min):  bash scripts/gpu_train.sh pack                 # → gpu-pack/ (git-ignored)
#   a 15-device-minute session, one call (~9 min; carry ["gpu-pack"]):
#       TOTAL_SECONDS=420 bash scripts/gpu_train.sh session 420         # train, then export to $OUT
#   a longer session: `train 450` calls back to back (issue each at once: the machine goes back
#   after 30 s idle and takes runs/gpu/checkpoint with it), TOTAL_SECONDS their sum, then
#   `export` (≤ 15 MiB parts of the bf16 folder → $OUT)
#   here (~20 min):         bash scripts/gpu_train.sh receive FILES_AT  # reassemble, validate on CPU
# Only the shipped size can continue in a later session (INIT must travel with the tree, ≤ 64 MiB
# in all with the 49 MiB tracked tree): a `large` folder (57 MB bf16) cannot, so a `large` run
# lives within one session (its runs and their numbers: docs/notes/2026-11-training-runs.md; the
# recipe: docs/gpu-training.md).
#
# `train SECONDS` runs the training loop for SECONDS more of wall time, its validation passes
# included and the last one fitted inside (the call is killed at SECONDS + MARGIN, default 120 s,
# for loading the data and the model; the LR schedule runs on all calls together, TOTAL_SECONDS,
# default 900 = 2 × 450) and then writes runs/gpu/best (by validation accuracy). CONFIG picks the
# recipe: by default configs/gpu_medium_middle.yaml, the shipped weights continued with the loss on
# the middle only (the untried candidate at today's CPU cost: a `large` default costs 2.25×
# the CPU time per gap and cannot continue across sessions); configs/gpu_large.yaml (~28 M
# parameters) and configs/gpu_medium.yaml (today's size, every-position loss) for the size
# comparison; extra key=value arguments override it. `receive` compares the new folder with the
# shipped model on the same validation gaps (neural alone): the pack's ddb gaps, and literary and
# inscription gaps of the prepared corpus here (PREPARED, default data/prepared), 80 of each.
# Tested end to end on CPU with a tiny config: tests/train/test_gpu_recipe.py.
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
PY=${PY:-python3}
CONFIG=${CONFIG:-configs/gpu_medium_middle.yaml}
RUN=${RUN:-runs/gpu}
PACK=${PACK:-gpu-pack}
# the folder to continue from: the shipped model when it has the config's size, else none (scratch)
INIT=${INIT-auto}
if [ "$INIT" = auto ]; then
  INIT=$($PY -c "import json,sys,yaml; m='src/apollo_restore/models/default'
print(m if json.load(open(m+'/apollo_restore.json')).get('size') == yaml.safe_load(open(sys.argv[1]))['size'] else '')" "$CONFIG")
fi
OUT=${OUT:-runs/gpu-out}
DATA=${DATA:-data/gpu/prepared}  # the unpacked training text (on the GPU's disk)
verb=${1:?usage: gpu_train.sh pack|train SECONDS|session SECONDS|export|receive FOLDER}
shift

case "$verb" in
pack)
  $PY scripts/gpu_data.py pack --prepared "${PREPARED:-data/prepared}" --out "$PACK" ${INIT:+--model "$INIT"} "$@"
  ;;
train)
  seconds=${1:?train needs SECONDS}; shift
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.used --format=csv
  [ -f "$DATA/documents.parquet" ] || $PY scripts/gpu_data.py unpack --pack "$PACK" --out "$DATA"
  # the schedule runs on all calls together (TOTAL_SECONDS); this call stops after SECONDS
  timeout $((seconds + ${MARGIN:-120})) $PY -m apollo_restore train --quiet --config "$CONFIG" out="$RUN" \
    prepared="$DATA" val_gaps="$PACK/val_gaps.jsonl" init_from="$INIT" \
    max_seconds="${TOTAL_SECONDS:-900}" call_seconds="$seconds" "$@"
  tail -3 "$RUN/metrics.jsonl"
  ;;
session)
  # a device session in one call: train, then export whatever the training saved (best/, else
  # the checkpoint), even when the training stopped early
  bash "$self" train "$@" || echo "train stopped (exit $?): exporting what it saved" >&2
  bash "$self" export
  ;;
export)
  mkdir -p "$OUT"
  folder=$RUN/best; [ -d "$folder" ] || folder=$RUN/checkpoint
  $PY - "$folder" "$RUN/export" <<'PY'
import sys
from pathlib import Path
import torch
from apollo_restore.model.checkpoint import load_model, save_model
model, tok, meta = load_model(Path(sys.argv[1]))
save_model(model.to(torch.bfloat16), tok, Path(sys.argv[2]), meta)
PY
  cp "$RUN/metrics.jsonl" "$RUN/export/metrics.jsonl"
  tar -C "$RUN" -cf - export | split -b 15M - "$OUT/export.tar.part-"
  ls -la "$OUT"
  ;;
receive)
  from=${1:?receive needs the folder the parts came back to}
  rm -rf "$RUN/export" && mkdir -p "$RUN"
  cat "$from"/export.tar.part-* | tar -C "$RUN" -xf -
  # neural alone, the same gaps for both folders: the pack's ddb validation gaps, then (where a
  # prepared corpus is here, PREPARED) literary and inscription validation gaps, 2 a length and hint
  prepared=${PREPARED:-data/prepared}
  for model in ${INIT:+"$INIT"} "$RUN/export"; do
    report=$RUN/validate-$(basename "$model")
    fast=(--model "$model" --neural-only --workers 2 --bpc-windows 0)
    $PY -m apollo_restore evaluate --gaps "$PACK/val_gaps.jsonl" "${fast[@]}" --out "$report" >/dev/null
    reports=("$report/metrics.json")
    if [ -f "$prepared/documents.parquet" ]; then
      $PY -m apollo_restore evaluate --prepared "$prepared" --split validation --source literary \
        --source inscription --per-length 2 --conditions exact,none "${fast[@]}" --out "$report-other" >/dev/null
      reports+=("$report-other/metrics.json")
    else
      echo "no prepared corpus at $prepared (PREPARED): literary and inscription validation skipped" >&2
    fi
    $PY - "$model" "${reports[@]}" <<'PY'
import json, sys
for path in sys.argv[2:]:
    groups = json.load(open(path))["groups"]["synthetic"]["included"]
    cells = [(f"{source} {cond}", by_source[source]["uniform"]) for cond, by_source in groups.items() for source in by_source]
    print(sys.argv[1], "neural alone, validation:", ", ".join(f"{c} W.Top-1 {m['top1']:.3f} / W.Top-20 {m['top20']:.3f}" for c, m in cells))
PY
  done
  ;;
*)
  echo "unknown step $verb: pack | train SECONDS | session SECONDS | export | receive FOLDER" >&2; exit 2
  ;;
esac
