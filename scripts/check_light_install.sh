#!/usr/bin/env bash
# The user's install, checked in a fresh venv (a temporary folder, removed after): CPU torch, then
# `pip install .` with no extras. No transformers, tokenizers, matplotlib, pyyaml (nor a CUDA
# build of torch) may be installed, and restoring (the Python API and the CLI) and `serve` (one
# request to its restore endpoint) must work. scripts/check.sh runs it; it takes about a minute on
# a 2-core machine (mostly pip installing torch), the text index already in the user cache.
#   bash scripts/check_light_install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
start=$SECONDS
tmp=$(mktemp -d)
server=""
cleanup() {  # the script's own status is kept: a server stopped by SIGTERM waits with 143
    local status=$?
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$tmp"
    exit "$status"
}
trap cleanup EXIT
"$PYTHON" -m venv "$tmp/venv"
py=$tmp/venv/bin/python
"$py" -m pip install -qq "torch==2.13.0" ${TORCH_INDEX:+--index-url "$TORCH_INDEX"}  # as scripts/setup.sh
# not editable: the package as a user's pip builds it, from a copy of the tree (a build in place
# would leave build/ and an egg-info in this checkout)
mkdir "$tmp/src"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
    [ -f "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf - | tar -x -C "$tmp/src"
"$py" -m pip install -qq "$tmp/src"
echo "== installed in $((SECONDS - start)) s: $("$py" -m pip list --format=freeze | wc -l) packages"
"$py" - <<'PY'
import importlib.metadata as md
import torch
have = {d.metadata["Name"].lower().replace("_", "-") for d in md.distributions()}
training = sorted(have & {"transformers", "tokenizers", "matplotlib", "pyyaml", "peft", "datasets"})
assert not training, f"the package alone installs the training stack: {training}"
cuda = sorted(d for d in have if d.startswith("nvidia-")) + ([f"torch {torch.__version__}"] if torch.version.cuda else [])
assert not cuda, f"a CUDA build was installed: {cuda}"
PY
cd "$tmp"  # away from the source tree: the installed package is what runs
"$py" -c "
import apollo_restore
r = apollo_restore.restore('ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου')
print('python api:', r.gaps[0].candidates[0].text)
"
cli=$tmp/venv/bin/apollo-restore
"$cli" --help >/dev/null
"$cli" restore "ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου" --show 1 >"$tmp/restore.txt"
grep -q "gap 1" "$tmp/restore.txt" || { cat "$tmp/restore.txt"; exit 1; }
echo "cli restore: ok"
set +e
"$cli" train >"$tmp/train.txt" 2>&1
status=$?
set -e
[ "$status" = 2 ] && grep -q "E606" "$tmp/train.txt" || { echo "train without [train]: status $status"; cat "$tmp/train.txt"; exit 1; }
port=$("$py" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$cli" serve --port "$port" >"$tmp/serve.log" 2>&1 &
server=$!
"$py" - "$port" <<'PY' || { cat "$tmp/serve.log"; exit 1; }
import json, sys, time, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
for _ in range(600):
    try:
        urllib.request.urlopen(base + "/api/health", timeout=5)
        break
    except OSError:
        time.sleep(0.2)
request = urllib.request.Request(
    base + "/api/restore",
    data=json.dumps({"text": "ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου", "k": 3}).encode(),
    headers={"Content-Type": "application/json"},
)
body = json.load(urllib.request.urlopen(request, timeout=120))
print("serve:", body["gaps"][0]["candidates"][0]["text"])
PY
echo "== the package alone: restore, CLI, serve ok in $((SECONDS - start)) s"
