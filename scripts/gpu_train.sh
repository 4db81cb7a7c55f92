#!/usr/bin/env bash
# The GPU recipe, end to end, inside the device limits (≤ 10 min a call, ~30 device-minutes a
# session, 64 MiB carried, files back ≤ 16 MiB). Training accumulates: every session continues
# from the best weights so far (the shipped model, or a folder brought back: INIT=path) and the
# model folder records each session (training.history: steps, tokens, seconds; config: data mix).
#
#   here, once (~3 min):  bash scripts/gpu_train.sh pack                 # → gpu-pack/ (git-ignored)
#   first on the device (carry ["gpu-pack"]; a setting takes its compilation, not yet timed on a
#   GPU, and SECONDS of steps; the call is cut at PROBE_LIMIT, default 300 s, 5 min):
#       bash scripts/gpu_train.sh probe 12 ["batch_size=128 grad_accum=2" ...]
#       tokens/s, MFU (÷ the GPU's peak dense bf16), data wait and peak memory per setting of the
#       growing model's config (PROBE_CONFIG, default configs/gpu_large.yaml) → $OUT/probe.md;
#       default settings: micro-batches of 64, 128, 256 at 256 rows a step. Then train with the
#       winner as key=value arguments (`session 420 batch_size=128 grad_accum=2`).
#   a 15-device-minute session, one call (~9 min; carry ["gpu-pack"]):
#       TOTAL_SECONDS=420 bash scripts/gpu_train.sh session 420         # train, then export to $OUT
#   a longer session: `train 450` calls back to back (issue each at once: the machine goes back
#   after 30 s idle and takes runs/gpu/checkpoint with it), TOTAL_SECONDS their sum, then
#   `export` (a transport pack of the bf16 folder: ≤ 15 MiB parts + SHA-256 manifest → $OUT/export)
#   here (~20 min):         bash scripts/gpu_train.sh receive FILES_AT  # check parts, reassemble, validate on CPU
# Continuing a folder that is not in the tree (a `large`, any folder brought back), same session:
#   here (~10 s):   bash scripts/gpu_train.sh upload runs/gpu/export    # → gpu-init/ (FORM=int8|bf16), prints the carries
#   here (~5 s):    bash scripts/gpu_train.sh slim on                    # a commit without models/default: tree 49.5 → 29.8 MiB
#   device (~1 min each, the first with the machine's start): carry the parts as printed (large:
#                   one call in int8, 27.2 MiB; two in bf16, 54.1 MiB), `bash scripts/gpu_train.sh stage`
#   device (~9 min): carry ["gpu-pack"], TOTAL_SECONDS=420 bash scripts/gpu_train.sh session 420
#   here:           bash scripts/gpu_train.sh slim off; bash scripts/gpu_train.sh receive FILES_AT
# An int8 restart loses nothing measurable (bits per character of the shipped model −0.0002 ±
# 0.0003 on 120 validation windows: scripts/transport_sizes.py, scripts/README.md); weights come
# back in bf16 (exact), so each session quantises once, on the way up.
#
# `train SECONDS` runs the training loop for SECONDS more of wall time (time_limit), its validation passes
# included and the last one fitted inside (the call is killed at SECONDS + MARGIN, default 120 s,
# for loading the data and the model; the LR schedule runs on all calls together, TOTAL_SECONDS,
# default 900 = 2 × 450) and then writes runs/gpu/best (by validation accuracy). CONFIG picks the
# recipe: by default configs/gpu_medium_middle.yaml, the shipped weights continued with the loss on
# the middle only (the untried candidate at today's CPU cost: a `large` default costs 2.25×
# the CPU time per gap; it continues across sessions by `upload`); configs/gpu_large.yaml (~28 M
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
PROBE_CONFIG=${PROBE_CONFIG:-${CONFIG:-configs/gpu_large.yaml}}  # the growing model's, unless CONFIG names one
CONFIG=${CONFIG:-configs/gpu_medium_middle.yaml}
RUN=${RUN:-runs/gpu}
PACK=${PACK:-gpu-pack}
OUT=${OUT:-runs/gpu-out}
DATA=${DATA:-data/gpu/prepared}  # the unpacked training text (on the GPU's disk)
UPLOAD=${UPLOAD:-gpu-init}       # the weights to continue, packed in parts to travel (git-ignored)
STAGED=${STAGED:-$(dirname "$DATA")/init}  # ... unpacked on the GPU's disk (fp32 model folder)
FORM=${FORM:-int8}               # the upload's form (int8 per row + scales, or bf16); back: bf16
# the folder to continue from: weights staged from an upload, else an upload carried whole, else
# the shipped model when it has the config's size, else none (scratch); a pack folder
# (transport.json) given as INIT is unpacked to $STAGED first
INIT=${INIT-auto}
if [ "$INIT" = auto ]; then
  if [ -f "$STAGED/model.safetensors" ]; then INIT=$STAGED
  elif [ -f "$UPLOAD/transport.json" ]; then INIT=$UPLOAD
  else INIT=$($PY -c "import json,os,sys,yaml; m='src/apollo_restore/models/default'
print(m if os.path.isdir(m) and json.load(open(m+'/apollo_restore.json')).get('size') == yaml.safe_load(open(sys.argv[1]))['size'] else '')" "$CONFIG")
  fi
fi
# INIT given as a transport pack (transport.json + parts): unpack it to $1 and continue from there
unpack_init() {
  if [ -n "$INIT" ] && [ -f "$INIT/transport.json" ]; then
    $PY scripts/transport.py unpack "$INIT" "$1" ${2:+--dtype "$2"} || exit 1
    INIT=$1
  fi
}
verb=${1:?usage: gpu_train.sh pack|slim on|off|upload FOLDER|stage|probe [SECONDS [SETTING...]]|train SECONDS|session SECONDS|export|receive FOLDER}
shift

case "$verb" in
pack)
  unpack_init "$RUN/init" bfloat16  # the shard to pack follows the history of the folder continued
  $PY scripts/gpu_data.py pack --prepared "${PREPARED:-data/prepared}" --out "$PACK" ${INIT:+--model "$INIT"} "$@"
  ;;
slim)
  # here: the call's tree without the shipped model (20 MB) when the run continues another
  # folder, by checking out a commit that drops it (git keeps the files: `slim off` brings them back)
  case "${1:-on}" in
  on)
    keep=src/apollo_restore/models/default
    [ ! -f "$(git rev-parse --git-dir)/gpu-slim-from" ] || { echo "already on gpu-slim: slim off first" >&2; exit 1; }
    git diff --quiet HEAD -- "$keep" || { echo "uncommitted changes under $keep: commit them first" >&2; exit 1; }
    back=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)
    index=$(mktemp); trap 'rm -f "$index"' EXIT
    GIT_INDEX_FILE=$index git read-tree HEAD
    GIT_INDEX_FILE=$index git rm -r -q --cached "$keep"
    commit=$(git commit-tree "$(GIT_INDEX_FILE=$index git write-tree)" -p HEAD -m "gpu-slim: $back without $keep")
    git branch -f gpu-slim "$commit"
    git switch -q gpu-slim
    echo "$back" >"$(git rev-parse --git-dir)/gpu-slim-from"
    echo "on gpu-slim ($keep left out; back with: bash scripts/gpu_train.sh slim off); tracked tree: $(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1) bytes"
    ;;
  off)
    from=$(git rev-parse --git-dir)/gpu-slim-from
    [ -f "$from" ] || { echo "not on gpu-slim (no $from)" >&2; exit 1; }
    git switch -q "$(cat "$from")" 2>/dev/null || git switch -q --detach "$(cat "$from")"
    rm -f "$from"
    echo "back on $(git symbolic-ref -q --short HEAD || git rev-parse HEAD)"
    ;;
  *) echo "slim on|off" >&2; exit 2 ;;
  esac
  ;;
upload)
  # here: FOLDER's weights → $UPLOAD (manifest + ≤ 15 MiB parts, FORM), and the carries that take
  # them to the device beside the tree: one call when they fit, else several (issue them back to
  # back: the machine keeps what earlier calls left only while it is warm)
  folder=${1:?upload needs the model folder to continue}
  $PY scripts/transport.py pack "$folder" "$UPLOAD" --form "$FORM"
  # the slim tree: the tracked files but the shipped model (what `slim on` leaves)
  tree=$(git ls-files -z -- . ':!src/apollo_restore/models/default' | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
  $PY - "$UPLOAD" "$tree" <<'PY'
import json, sys
from pathlib import Path
up, tree = Path(sys.argv[1]), int(sys.argv[2])
room = 64 * 2**20 - tree - 2**20  # a MiB spare for untracked files
calls, load = [[f"{up}/transport.json"]], (up / "transport.json").stat().st_size
for part in json.loads((up / "transport.json").read_text())["parts"]:
    if part["bytes"] > room:
        sys.exit(f"{up}/{part['name']} ({part['bytes']:,} bytes) does not fit beside the {tree:,}-byte tree in one call")
    if load + part["bytes"] > room:
        calls, load = calls + [[]], 0
    calls[-1].append(f"{up}/{part['name']}")
    load += part["bytes"]
print(f"slim tree {tree / 2**20:.1f} MiB (`slim on` first); room beside it {room / 2**20:.1f} MiB a call; {len(calls)} upload call(s), each `bash scripts/gpu_train.sh stage`:")
for i, carry in enumerate(calls, 1):
    print(f"  call {i}: carry {json.dumps(carry)}")
print('then the session call: carry ["gpu-pack"] (INIT=auto takes the staged weights)')
PY
  ;;
stage)
  # on the GPU: once every part of the upload is there, unpack it to $STAGED (fp32); before, say
  # which are still to come
  $PY - "$UPLOAD" <<'PY' || exit 0
import json, sys
from pathlib import Path
up = Path(sys.argv[1])
names = ["transport.json"] + [p["name"] for p in json.loads((up / "transport.json").read_text())["parts"]] if (up / "transport.json").is_file() else ["transport.json"]
missing = [n for n in names if not (up / n).is_file()]
if missing:
    print(f"{up}: waiting for {', '.join(missing)}")
    sys.exit(1)
PY
  $PY scripts/transport.py unpack "$UPLOAD" "$STAGED"
  echo "staged $UPLOAD → $STAGED"
  ;;
probe)
  # on the GPU, first: SECONDS (default 12) of steps a setting, each SETTING one argument of
  # space-separated key=value overrides (default: train --probe's); prints the table and keeps it
  seconds=${1:-12}; shift $(($# > 0 ? 1 : 0))
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.used --format=csv
  [ -f "$DATA/documents.parquet" ] || $PY scripts/gpu_data.py unpack --pack "$PACK" --out "$DATA"
  settings=()
  for setting in "$@"; do settings+=(--setting "$setting"); done
  mkdir -p "$OUT"
  timeout "${PROBE_LIMIT:-300}" $PY -m apollo_restore train --config "$PROBE_CONFIG" prepared="$DATA" \
    --probe "$seconds" "${settings[@]}" \
    | tee "$OUT/probe.md.tmp"
  mv "$OUT/probe.md.tmp" "$OUT/probe.md"
  ;;
train)
  seconds=${1:?train needs SECONDS}; shift
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.used --format=csv
  [ -f "$DATA/documents.parquet" ] || $PY scripts/gpu_data.py unpack --pack "$PACK" --out "$DATA"
  unpack_init "$STAGED"  # weights carried as parts
  # the schedule runs on all calls together (TOTAL_SECONDS); this call stops after SECONDS
  timeout $((seconds + ${MARGIN:-120})) $PY -m apollo_restore train --quiet --config "$CONFIG" out="$RUN" \
    prepared="$DATA" val_gaps="$PACK/val_gaps.jsonl" init_from="$INIT" \
    max_seconds="${TOTAL_SECONDS:-900}" time_limit="$seconds" "$@"
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
  # bf16 weights (exact: the folder was just saved in bf16) in ≤ 15 MiB parts + SHA-256 manifest
  $PY scripts/transport.py pack "$RUN/export" "$OUT/export" --form bf16
  ;;
receive)
  from=${1:?receive needs the folder the parts came back to}
  mkdir -p "$RUN"
  if [ -f "$from/export/transport.json" ]; then  # parts checked against their SHA-256 manifest
    $PY scripts/transport.py unpack "$from/export" "$RUN/export" --dtype bfloat16
  else  # parts of a tar, from before the transport packs
    rm -rf "$RUN/export" && cat "$from"/export.tar.part-* | tar -C "$RUN" -xf -
  fi
  # neural alone, the same gaps for both folders: the pack's ddb validation gaps, then (where a
  # prepared corpus is here, PREPARED) literary and inscription validation gaps, 2 a length and hint
  prepared=${PREPARED:-data/prepared}
  unpack_init "$RUN/init" bfloat16  # the run continued an upload: compare with it
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
  echo "unknown step $verb: pack | slim on|off | upload FOLDER | stage | probe [SECONDS [SETTING...]] | train SECONDS | session SECONDS | export | receive FOLDER" >&2; exit 2
  ;;
esac
