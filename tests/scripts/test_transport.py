"""Weights packed in parts by ``scripts/transport.py`` and back: round trips within the int8
bound, bf16 exact, damaged and missing parts refused by number."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from apollo_restore.errors import ModelFolderError
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.model.checkpoint import load_model, save_model

from . import script

transport = script("transport")
MANIFEST, SCALE_SUFFIX = transport.MANIFEST, transport.SCALE_SUFFIX
encode, pack, quantise_rows, unpack, unpack_folder = (
    transport.encode,
    transport.pack,
    transport.quantise_rows,
    transport.unpack,
    transport.unpack_folder,
)

TOK = CharTokenizer()
ROOT = Path(__file__).resolve().parents[2]
PART = 16 * 1024  # small parts, so that the tiny model (~70 k weights) is cut into several


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A tiny model folder in fp32 (the master weights of a run)."""
    out = tmp_path_factory.mktemp("transport") / "model"
    save_model(build_model("tiny", TOK, seed=5), TOK, out, {"size": "tiny"})
    return out


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "model.safetensors"))


def test_quantise_rows_error_bound_and_zero_row():
    w = torch.randn(7, 33) * torch.logspace(-3, 1, 7)[:, None]  # rows of very different scales
    w[3] = 0.0
    q, scale = quantise_rows(w)
    assert q.dtype == torch.int8 and scale.shape == (7,) and int(q.abs().max()) <= 127
    err = (q.float() * scale[:, None] - w).abs()
    assert bool((err <= scale[:, None] / 2 + 1e-7).all())  # round to nearest: half a step at most
    assert bool((q[3] == 0).all()) and float(err[3].max()) == 0.0
    assert int(q.abs().amax(dim=1)[0]) == 127  # each nonzero row uses the full range


def test_int8_pack_parts_round_trip_within_bound(folder, tmp_path):
    written = pack(folder, tmp_path / "pack", "int8", PART)
    parts = written[1:]
    assert written[0].name == MANIFEST and len(parts) >= 3
    assert all(p.stat().st_size <= PART for p in parts)
    original = _weights(folder)
    state, files = unpack(tmp_path / "pack")
    assert set(state) == set(original) and {"config.json", "tokenizer.json", "apollo_restore.json"} <= set(files)
    for name, w in original.items():
        if w.dim() == 2:
            step = w.abs().amax(dim=1, keepdim=True) / 127
            assert bool(((state[name] - w).abs() <= step / 2 + 1e-6).all()), name
        else:  # norms travel in bf16: within its relative rounding
            torch.testing.assert_close(state[name], w, rtol=2**-8, atol=0)
    # int8 is about a quarter of fp32 (plus one fp32 scale a row and the bf16 norms)
    assert sum(p.stat().st_size for p in parts) < 0.3 * (folder / "model.safetensors").stat().st_size


def test_bf16_pack_of_bf16_weights_is_exact_and_loads(folder, tmp_path):
    model, tok, meta = load_model(folder)
    save_model(model.to(torch.bfloat16), tok, tmp_path / "bf16", meta)
    pack(tmp_path / "bf16", tmp_path / "pack", "bf16", PART)
    unpack_folder(tmp_path / "pack", tmp_path / "back", torch.bfloat16)
    original, back = _weights(tmp_path / "bf16"), _weights(tmp_path / "back")
    assert set(back) == set(original)
    assert all(torch.equal(back[k], original[k]) for k in original)
    loaded, _, meta_back = load_model(tmp_path / "back")  # a model folder again, verified on load
    assert meta_back["size"] == "tiny" and sum(p.numel() for p in loaded.parameters()) > 0


def test_int8_form_stores_int8_rows_and_fp32_scales():
    state = {"a.weight": torch.randn(4, 8), "n.weight": torch.ones(8), "ids": torch.arange(3)}
    enc = encode(state, "int8")
    assert enc["a.weight"].dtype == torch.int8 and enc["a.weight" + SCALE_SUFFIX].dtype == torch.float32
    assert enc["n.weight"].dtype == torch.bfloat16 and torch.equal(enc["ids"], state["ids"])
    with pytest.raises(ValueError, match="form"):
        encode(state, "int4")


def _damage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "harm, code",
    [
        (lambda pack: (pack / "weights.part-001").unlink(), "E524"),
        (lambda pack: _damage(pack / "weights.part-002"), "E525"),
        (lambda pack: (pack / "weights.part-000").write_bytes((pack / "weights.part-000").read_bytes()[:-1]), "E525"),
        (lambda pack: (pack / MANIFEST).unlink(), "E523"),
    ],
    ids=["missing part", "flipped byte", "truncated part", "no manifest"],
)
def test_damaged_or_missing_part_is_a_numbered_error(folder, tmp_path, harm, code):
    pack(folder, tmp_path / "pack", "int8", PART)
    harm(tmp_path / "pack")
    with pytest.raises(ModelFolderError) as info:
        unpack(tmp_path / "pack")
    assert info.value.code == code and str(info.value).startswith(f"[{code}]")
    if code != "E523":
        assert "weights.part-00" in str(info.value)  # the part is named


def test_part_from_another_pack_is_refused(folder, tmp_path):
    pack(folder, tmp_path / "a", "int8", PART)
    pack(folder, tmp_path / "b", "bf16", PART)
    (tmp_path / "a" / MANIFEST).write_text((tmp_path / "b" / MANIFEST).read_text())  # b's manifest, a's parts
    with pytest.raises(ModelFolderError) as info:
        unpack(tmp_path / "a")
    assert info.value.code == "E525"


def test_malformed_manifest_is_refused_by_number(folder, tmp_path):
    pack(folder, tmp_path / "pack", "int8", PART)
    manifest = json.loads((tmp_path / "pack" / MANIFEST).read_text())
    manifest["parts"][0]["name"] = "../model.safetensors"  # outside the pack
    (tmp_path / "pack" / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ModelFolderError) as info:
        unpack(tmp_path / "pack")
    assert info.value.code == "E505" and "parts[0].name" in str(info.value)
    manifest["parts"][0]["name"], manifest["parts"][0]["bytes"] = "weights.part-000", "many"
    (tmp_path / "pack" / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ModelFolderError) as info:
        unpack(tmp_path / "pack")
    assert info.value.code == "E505"


def test_nan_weight_is_not_packed(folder, tmp_path):
    state = _weights(folder)
    state["model.norm.weight"][0] = float("nan")
    with pytest.raises(ModelFolderError) as info:
        pack(state, tmp_path / "pack")
    assert info.value.code == "E518" and not (tmp_path / "pack").exists()


@pytest.mark.slow
def test_script_reports_a_missing_part_by_number(folder, tmp_path):
    script = [sys.executable, str(ROOT / "scripts" / "transport.py")]
    done = subprocess.run(
        [*script, "pack", str(folder), str(tmp_path / "p"), "--part-mib", "0.02"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "p" / MANIFEST).read_text())["form"] == "int8"
    (tmp_path / "p" / "weights.part-001").unlink()
    done = subprocess.run([*script, "unpack", str(tmp_path / "p"), str(tmp_path / "m")], capture_output=True, text=True)
    assert done.returncode == 1 and done.stderr.startswith("[E524]") and "Traceback" not in done.stderr
    assert not (tmp_path / "m").exists()
