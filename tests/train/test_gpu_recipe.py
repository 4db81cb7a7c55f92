"""The GPU recipe (scripts/gpu_train.sh) end to end on CPU with a tiny config: pack, train in two
calls that resume from the checkpoint, export in parts, receive and validate (ddb, literary and
inscription validation gaps), then a second session that continues from the weights brought back
(uploaded in int8 parts and staged) and records the first in its history; the throughput probe
that opens a session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from apollo_restore.data.table import write_documents

from ..conftest import document_row

ROOT = Path(__file__).resolve().parents[2]
WORDS = "κυριωι χαιρειν ομολογω εχειν παρα σου δραχμας αργυριου εκατον αποδωσω σοι εν τωι μηνι παυνι του ετους".split()

TINY = """prepared: data/gpu/prepared
size: tiny
layout: join
steps: 100000
batch_size: 4
block_size: 128
lr: 0.002
warmup: 2
loss: all
bf16: false
compile: false
device: cpu
threads: 1
num_workers: 0
eval_every: 1000
eval_rows: 4
checkpoint_every: 1
log_every: 1
"""


def _row(doc_id: str, source: str, split: str, words: int, shift: int) -> dict:
    return document_row(doc_id, " ".join(WORDS[(i * 7 + shift) % len(WORDS)] for i in range(words)), split, source)


def _run(env: dict, *args: str) -> str:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts/gpu_train.sh"), *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpu")
    prepared = tmp / "prepared"
    prepared.mkdir()
    rows = [_row(f"tlg9999.tlg{i:03d}.x#0", "literary", "train", 60, i) for i in range(6)]
    rows += [_row(f"val.{i}", "ddb", "validation", 80, i) for i in range(3)]
    rows += [_row(f"val.{source}", source, "validation", 80, 5) for source in ("literary", "inscription")]
    write_documents(rows, prepared / "documents.parquet")
    (tmp / "tiny.yaml").write_text(TINY)
    env = {
        **os.environ,
        "PY": sys.executable,
        "CONFIG": str(tmp / "tiny.yaml"),
        "RUN": str(tmp / "run"),
        "PACK": str(tmp / "pack"),
        "DATA": str(tmp / "data"),
        "OUT": str(tmp / "out"),
        "PREPARED": str(prepared),
        "INIT": "",
        "TOTAL_SECONDS": "4",
        "MARGIN": "1800",
        "PYTHONPATH": str(ROOT / "src"),
    }
    return tmp, env


@pytest.mark.slow  # ~1 min on an idle machine (each call unpacks the 40 M-character packaged text)
def test_pack_train_export_receive_and_continue(recipe):
    tmp, env = recipe
    _run(env, "pack", "--budget-mib", "0.0005", "--val-per-length", "1")
    manifest = json.loads((tmp / "pack/manifest.json").read_text())
    assert manifest["first1k"]["shards"] > 1 and manifest["first1k"]["documents"] >= 1  # cut to fit its budget
    assert manifest["validation"]["gaps"] == 40  # lengths 1–20 × exact, none
    _run(env, "train", "1")
    first = json.loads((tmp / "run/checkpoint/apollo_restore.json").read_text())["training"]
    _run(env, "train", "1")
    second = json.loads((tmp / "run/checkpoint/apollo_restore.json").read_text())["training"]
    assert second["step"] > first["step"] and second["seconds"] > first["seconds"]  # resumed, not restarted
    _run(env, "export")
    parts = sorted((tmp / "out/export").glob("weights.part-*"))
    assert parts and all(p.stat().st_size <= 15 * 2**20 for p in parts)
    assert json.loads((tmp / "out/export/transport.json").read_text())["form"] == "bf16"
    report = _run(env, "receive", str(tmp / "out"))
    assert (
        (tmp / "run/export/model.safetensors").exists()
        and "ddb exact W.Top-1" in report
        and "ddb none W.Top-1" in report
    )
    assert "literary exact W.Top-1" in report and "inscription none W.Top-1" in report  # the other sources too
    meta = json.loads((tmp / "run/export/apollo_restore.json").read_text())
    assert meta["data"]["literary"]["documents"] >= 1 and meta["size"] == "tiny"

    # a second session continues from the weights brought back, uploaded as int8 parts and staged
    # on the device (INIT=auto finds them): its history holds the first
    kept = tmp / "session1"
    (tmp / "run/export").rename(kept)
    again = {**env, "INIT": "auto", "UPLOAD": str(tmp / "upload"), "RUN": str(tmp / "run2"), "OUT": str(tmp / "out2")}
    plan = _run(again, "upload", str(kept))
    assert "call 1: carry" in plan and (tmp / "upload/transport.json").exists()
    part = tmp / "upload/weights.part-000"
    part.rename(part.with_suffix(".away"))  # not yet carried
    assert "waiting for weights.part-000" in _run(again, "stage")
    part.with_suffix(".away").rename(part)
    assert "staged" in _run(again, "stage") and (tmp / "init/model.safetensors").exists()
    _run(again, "session", "1")  # train and export in one call
    assert sorted((tmp / "out2/export").glob("weights.part-*"))
    history = json.loads((tmp / "run2/checkpoint/apollo_restore.json").read_text())["training"]["history"]
    assert history[-1]["step"] == meta["training"]["step"] and history[-1]["data"] == meta["data"]


def test_slim_drops_the_shipped_model_and_brings_it_back(tmp_path):
    """`slim on` checks out a commit without models/default (uncommitted work elsewhere kept),
    `slim off` returns to the branch with the files restored by git; uncommitted changes to the
    model folder are refused."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts/gpu_train.sh").write_text((ROOT / "scripts/gpu_train.sh").read_text())
    model = repo / "src/apollo_restore/models/default"
    model.mkdir(parents=True)
    (model / "model.safetensors").write_bytes(b"weights")
    (repo / "README.md").write_text("readme\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", "-b", "work", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    (repo / "README.md").write_text("edited\n")  # uncommitted work travels along
    env = {**os.environ, "PY": sys.executable, "INIT": "", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    slim = ["bash", str(repo / "scripts/gpu_train.sh"), "slim"]
    done = subprocess.run([*slim, "on"], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not model.exists() and (repo / "README.md").read_text() == "edited\n"
    assert "gpu-slim" in subprocess.run([*git, "branch", "--show-current"], capture_output=True, text=True).stdout
    done = subprocess.run([*slim, "off"], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (model / "model.safetensors").read_bytes() == b"weights" and (repo / "README.md").read_text() == "edited\n"
    assert "work" in subprocess.run([*git, "branch", "--show-current"], capture_output=True, text=True).stdout
    (model / "model.safetensors").write_bytes(b"changed")
    done = subprocess.run([*slim, "on"], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "commit them first" in done.stderr
    assert (model / "model.safetensors").read_bytes() == b"changed"


@pytest.mark.slow
def test_probe_verb_prints_and_keeps_a_row_per_setting(tiny_prepared, tmp_path):
    """`probe SECONDS SETTING...` on the unpacked training text: the table on stdout and in
    $OUT/probe.md, one row per setting, the config's own (PROBE_CONFIG) under the overrides."""
    (tmp_path / "tiny.yaml").write_text(TINY)
    env = {**os.environ, "PY": sys.executable, "PROBE_CONFIG": str(tmp_path / "tiny.yaml"), "DATA": str(tiny_prepared),
           "OUT": str(tmp_path / "out"), "INIT": "", "PYTHONPATH": str(ROOT / "src")}  # fmt: skip
    shown = _run(env, "probe", "0.2", "batch_size=2", "batch_size=2 grad_accum=2")
    kept = (tmp_path / "out/probe.md").read_text()
    assert "## Throughput probe: `tiny`" in kept and kept in shown
    assert "| batch_size=2 | 2 |" in kept and "| batch_size=2 grad_accum=2 | 4 |" in kept
