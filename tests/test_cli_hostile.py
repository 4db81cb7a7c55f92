"""Every command (``serve`` aside: its own tests) given hostile option values exits with status 2
and a message, never a traceback, and before any model loads (issue #24)."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.cli.common import MAX_THREADS
from apollo_restore.restoration import load

TEXT = "ἔτους δευτέρου Ἀντωνίνου Καίσαρος τοῦ κυρίου [.5] Τῦβι ἔλαβον παρὰ σοῦ"
HUGE = str(10**30)
#: ``{file}`` is a small gap set, ``{twice}`` one with an id twice, ``{latin1}`` a text that is not UTF-8,
#: ``{dir}`` a folder, ``{missing}`` a path to nothing
CASES = [
    ["restore", TEXT, "--threads", "0"],
    ["restore", TEXT, "--threads", "-3"],
    ["restore", TEXT, "--threads", str(MAX_THREADS + 1)],
    ["restore", TEXT, "--threads", "100000"],
    ["restore", TEXT, "--k", HUGE],
    ["restore", TEXT, "--k", "nan"],
    ["restore", TEXT, "--show", "-1"],
    ["restore", "/dev/zero"],
    ["restore", "{dir}"],
    ["restore", "{latin1}"],
    ["predict", "--gaps", "{file}", "--out", "{dir}/p.jsonl", "--threads", "100000"],
    ["predict", "--gaps", "{file}", "--out", "{dir}/p.jsonl", "--k", "0"],
    ["predict", "--gaps", "{file}", "--out", "{dir}/p.jsonl", "--workers", "0"],
    ["predict", "--gaps", "{file}", "--out", "{dir}/p.jsonl", "--workers", "100000"],
    ["predict", "--gaps", "{file}", "--out", "{dir}/p.jsonl", "--k", HUGE],
    ["predict", "--gaps", "{missing}", "--out", "{dir}/p.jsonl"],
    ["predict", "--gaps", "/dev/zero", "--out", "{dir}/p.jsonl"],
    ["predict", "--gaps", "{file}", "--out", "{file}"],
    ["predict", "--gaps", "{twice}", "--out", "{dir}/p.jsonl"],
    ["predict", "--gaps", "{file}", "--out", "{dir}"],
    ["predict", "--gaps", "{file}", "--out", "{dir}/p.jsonl", "--batch", "0"],
    ["predict", "--gaps", "{file}", "--out", "{dir}/p.jsonl", "--batch", HUGE],
    ["predict", "--gaps", "{file}", "--out", "{dir}/p.jsonl", "--device", "tpu"],
    ["parallels", TEXT, "--limit", "0"],
    ["parallels", TEXT, "--limit", HUGE],
    ["parallels", TEXT, "--max-between", "-1"],
    ["parallels", "/dev/zero"],
    ["parallels", "{latin1}"],
    ["provenance", TEXT, "--min-run", "0"],
    ["provenance", TEXT, "--limit", "-5"],
    ["provenance", "/dev/zero"],
    ["provenance", "{latin1}"],
    ["provenance", "{missing}.txt"],
    ["prepare", "--corpus", "ddb={dir}", "--out", "{dir}/p", "--dedup-threshold", "nan"],
    ["prepare", "--corpus", "ddb={dir}", "--out", "{dir}/p", "--dedup-threshold", "2"],
    ["prepare", "--corpus", "ddb={dir}", "--out", "{dir}/p", "--dedup-threshold", "-inf"],
    ["prepare", "--corpus", "ddb={dir}", "--out", "{file}"],
    ["prepare", "--corpus", "nonsense", "--out", "{dir}/p"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--k", "0"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--threads", "0"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--seed", "-1"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--per-length", "-1"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--context-chars", "0"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--bpc-windows", "-1"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--bpc-mode", "sideways"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--device", "cuda;rm"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--batch", "-1"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--workers", "0"],
    ["evaluate", "--gaps", "{file}", "--out", "{dir}/r", "--predictions", "{file}"],
    ["evaluate", "--gaps", "{twice}", "--out", "{dir}/r", "--predictions", "{file}"],
    ["gaps", "--prepared", "{dir}", "--out", "{dir}/g.jsonl", "--seed", HUGE],
    ["gaps", "--prepared", "{dir}", "--out", "{dir}/g.jsonl", "--per-length", "-5"],
    ["gaps", "--prepared", "{dir}", "--out", "{dir}/g.jsonl", "--true-lacunae", "-1"],
    ["gaps", "--prepared", "{dir}", "--out", "{dir}", "--source", "ddb"],
    ["gaps", "--prepared", "{dir}", "--out", "{file}/g.jsonl", "--source", "ddb"],
    ["ngram", "--prepared", "{dir}", "--out", "{dir}/n.npz", "--order", "0"],
    ["ngram", "--prepared", "{dir}", "--out", "{dir}/n.npz", "--order", "11"],
    ["ngram", "--prepared", "{dir}", "--out", "{dir}/n.npz", "--min-count", "0"],
    ["index", "--prepared", "{missing}", "--out", "{dir}/i"],
    ["train", "--config", "/dev/zero"],
    ["train", "--config", "{missing}"],
    ["train", "--config", "{file}"],
    ["train", "steps"],
    ["shards", "--prepared", "{dir}", "--out", "{dir}/s", "--rows", "0"],
    ["shards", "--prepared", "{dir}", "--out", "{dir}/s", "--rows", "5", "--block-size", "1"],
    ["shards", "--prepared", "{dir}", "--out", "{dir}/s", "--rows", "5", "--seed", "-1"],
    ["shards", "--prepared", "{dir}", "--out", "{dir}/s", "--rows", "5", "--weight", "ddb=nan"],
    ["shards", "--prepared", "{dir}", "--out", "{dir}/s", "--rows", "5", "--weight", "ddb=-2"],
    ["finetune", "--config", "/dev/zero"],
    ["train-fsdp", "--config", "{missing}"],
    ["consolidate", "{dir}", "{dir}/m", "--max-shard-gb", "nan"],
    ["consolidate", "{dir}", "{dir}/m", "--max-shard-gb", "-1"],
    ["consolidate", "{dir}", "{dir}/m", "--max-shard-gb", "inf"],
    ["consolidate", "{dir}", "{dir}/m", "--dtype", "float8"],
]


@pytest.fixture
def paths(tmp_path, monkeypatch):
    """Values for the ``{file}``, ``{dir}`` and ``{missing}`` slots; loading a model fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(load, "load_restorer", refuse)
    gaps = tmp_path / "gaps.jsonl"
    row = {"id": "g", "source": "ddb", "doc": "d", "prefix": "και ", "suffix": " του", "target": "αβ", "hint": 2}
    gaps.write_text(json.dumps(row, ensure_ascii=False) + "\n" + json.dumps({**row, "id": "h"}) + "\n")
    twice = tmp_path / "twice.jsonl"
    twice.write_text(json.dumps(row, ensure_ascii=False) + "\n" + json.dumps(row, ensure_ascii=False) + "\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "latin1.txt").write_bytes("ἔτους [.5] Ἀντωνίνου".encode() + b" caf\xe9")
    return {
        "latin1": str(tmp_path / "latin1.txt"),
        "file": str(gaps),
        "twice": str(twice),
        "dir": str(tmp_path / "folder"),
        "missing": str(tmp_path / "missing"),
    }


@pytest.mark.parametrize("args", CASES, ids=[" ".join(a[:1] + a[-2:]) for a in CASES])
def test_hostile_option_values_are_usage_errors(args, paths):
    result = CliRunner().invoke(app, [arg.format(**paths) for arg in args])
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    assert result.output.strip(), "a usage error says what is wrong"
    assert re.search(r"\[E\d{3}\] ", result.output), f"every error is numbered: {result.output}"


def test_stdin_from_dev_zero_is_a_numbered_error(paths):
    result = CliRunner().invoke(app, ["restore"], input=b"\0" * (16 * 2**20 + 1))
    assert result.exit_code == 2 and "E204" in result.output and "standard input" in result.output
