"""The transport tool's doors (``scripts/transport.py``),
probed as an audit found them open: an output folder that is, holds or lies inside the folder
read from (``E526``, nothing written), a part far larger than its manifest says (refused by its
size, unread), a manifest nested 200,000 deep or larger than 1 MiB, file names that are no plain
names (``..``, ``/``, NUL…, ``E527``; part names by the schema, ``E505``), part sizes out of
bounds (``E528``), and a failed unpack that must leave nothing behind and the old folder whole.
Copies of the shipped model folder, packed once; no model is trained."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import save

from apollo_restore.errors import ModelFolderError
from apollo_restore.restoration.config import DEFAULT_MODEL

from . import script

transport = script("transport")
FILE_PREFIX, FORMAT, MANIFEST = transport.FILE_PREFIX, transport.FORMAT, transport.MANIFEST
pack, part_name, unpack = transport.pack, transport.part_name, transport.unpack


def _run(capsys, *argv: object) -> tuple[int, str]:
    """``scripts/transport.py ARGV`` in process: its exit status and stderr."""
    code = transport.main([str(a) for a in argv])
    return code, capsys.readouterr().err


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (``None``) under ``root``, by relative path."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def _refused(code: int, err: str, number: str) -> None:
    assert code == 1, err
    assert err.startswith(f"[{number}]"), err
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def packed(tmp_path_factory) -> Path:
    """The shipped model folder packed (int8) in parts of 2 MiB."""
    out = tmp_path_factory.mktemp("packed") / "pack"
    pack(Path(DEFAULT_MODEL), out, "int8", 2 * 2**20)
    return out


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A copy of the shipped model folder."""
    return Path(shutil.copytree(DEFAULT_MODEL, tmp_path / "model"))


@pytest.fixture
def pack_copy(packed: Path, tmp_path: Path) -> Path:
    """A copy of the pack, to damage."""
    return Path(shutil.copytree(packed, tmp_path / "pack"))


# 1. an output folder that is, holds or lies inside the folder read from


@pytest.mark.parametrize("where", ["same", "inside", "holds", "same-by-link"])
def test_pack_into_its_own_folder_is_E526_and_changes_nothing(model, tmp_path, capsys, where):
    out = {"same": model, "inside": model / "pack", "holds": tmp_path, "same-by-link": tmp_path / "link"}[where]
    if where == "same-by-link":
        out.symlink_to(model, target_is_directory=True)
    before, around = _snapshot(model), sorted(p.name for p in tmp_path.iterdir())
    code, err = _run(capsys, "pack", model, out)
    _refused(code, err, "E526")
    assert str(out) in err
    assert _snapshot(model) == before  # byte for byte, no file added or taken away
    assert sorted(p.name for p in tmp_path.iterdir()) == around


@pytest.mark.parametrize("where", ["same", "inside", "holds"])
def test_unpack_into_its_own_pack_is_E526_and_changes_nothing(pack_copy, tmp_path, capsys, where):
    out = {"same": pack_copy, "inside": pack_copy / "model", "holds": tmp_path}[where]
    before = _snapshot(pack_copy)
    code, err = _run(capsys, "unpack", pack_copy, out)
    _refused(code, err, "E526")
    assert _snapshot(pack_copy) == before


def test_output_that_is_a_file_or_a_folder_of_other_files_is_E526(model, pack_copy, tmp_path, capsys):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "thesis.tex").write_text("μῆνιν ἄειδε")
    (tmp_path / "file.txt").write_text("keep me")
    for verb, source in (("pack", model), ("unpack", pack_copy)):
        for out in (tmp_path / "notes", tmp_path / "file.txt"):
            code, err = _run(capsys, verb, source, out)
            _refused(code, err, "E526")
    assert (tmp_path / "notes" / "thesis.tex").read_text() == "μῆνιν ἄειδε"
    assert (tmp_path / "file.txt").read_text() == "keep me"


def test_an_old_pack_and_an_old_model_folder_are_replaced(model, packed, tmp_path, capsys):
    code, err = _run(capsys, "pack", model, tmp_path / "again", "--part-mib", "4")
    assert code == 0, err
    code, err = _run(capsys, "pack", model, tmp_path / "again", "--form", "bf16")  # over the old pack
    assert code == 0, err
    assert json.loads((tmp_path / "again" / MANIFEST).read_text())["form"] == "bf16"
    code, err = _run(capsys, "unpack", packed, model)  # over the old model folder
    assert code == 0, err
    assert json.loads((model / "config.json").read_text())["dtype"] == "float32"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # nothing left beside


# 2. a part far larger than its manifest says


def test_a_30_gib_part_is_refused_by_its_size_unread(pack_copy, tmp_path, capsys, monkeypatch):
    part = pack_copy / part_name(1)
    with part.open("r+b") as f:
        f.truncate(30 * 2**30)  # sparse: no disk used
    read = []
    monkeypatch.setattr(transport, "_read_part", lambda *a: read.append(a) or (b"", ""))
    start = time.monotonic()
    code, err = _run(capsys, "unpack", pack_copy, tmp_path / "out")
    _refused(code, err, "E525")
    assert time.monotonic() - start < 10 and not read  # no byte of any part read
    assert part_name(1) in err and "32,212,254,720 bytes" in err and "2,097,152" in err
    assert not (tmp_path / "out").exists()


# 3. a manifest nested deep, or too large


def test_a_manifest_nested_200000_deep_is_E517(pack_copy, tmp_path, capsys):
    (pack_copy / MANIFEST).write_text('{"format": ' + "[" * 200_000 + "]" * 200_000 + "}")
    code, err = _run(capsys, "unpack", pack_copy, tmp_path / "out")
    _refused(code, err, "E517")
    assert MANIFEST in err and not (tmp_path / "out").exists()


def test_a_manifest_over_1_mib_is_refused_unread(pack_copy, tmp_path, capsys):
    with (pack_copy / MANIFEST).open("r+b") as f:
        f.truncate(2**40)  # sparse 1 TiB
    code, err = _run(capsys, "unpack", pack_copy, tmp_path / "out")
    _refused(code, err, "E505")
    assert "1,048,576 bytes" in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda m: m["parts"][0].update(name="../model.safetensors"), "parts[0].name"),
        (lambda m: m["parts"][0].update(name="/etc/passwd"), "parts[0].name"),
        (lambda m: m["parts"][0].update(name=".."), "parts[0].name"),
        (lambda m: m["parts"][0].update(bytes=2**40), "parts[0].bytes"),
        (lambda m: m["parts"][0].update(sha256="../" * 21 + "a"), "parts[0].sha256"),
        (lambda m: m.update(parts=m["parts"] * 1000), "parts"),
        (lambda m: m.update(bytes=m["bytes"] + 1), "parts"),
        (lambda m: m.update(form="int4"), "form"),
    ],
    ids=["dotdot-path", "absolute", "dotdot", "huge-part", "bad-sha", "too-many-parts", "sum", "form"],
)
def test_a_manifest_the_schema_refuses_is_E505_naming_the_field(pack_copy, tmp_path, capsys, edit, field):
    manifest = json.loads((pack_copy / MANIFEST).read_text())
    edit(manifest)
    (pack_copy / MANIFEST).write_text(json.dumps(manifest))
    code, err = _run(capsys, "unpack", pack_copy, tmp_path / "out")
    _refused(code, err, "E505")
    assert f"{MANIFEST}: {field} = " in err and not (tmp_path / "out").exists()


# 4. file names carried that are no plain names


def _raw_pack(folder: Path, names: list[str]) -> None:
    """A pack written by other code: a tiny model whose metadata carries files named ``names``."""
    metadata = {"format": FORMAT, "form": "bf16", "file:config.json": "{}"}
    metadata.update({FILE_PREFIX + name: "x" for name in names})
    blob = save({"w": torch.ones(2, 2, dtype=torch.bfloat16)}, metadata=metadata)
    folder.mkdir()
    (folder / part_name(0)).write_bytes(blob)
    digest = transport._sha256(blob)
    part = {"name": part_name(0), "bytes": len(blob), "sha256": digest}
    manifest = {"format": FORMAT, "form": "bf16", "bytes": len(blob), "sha256": digest, "parts": [part]}
    (folder / MANIFEST).write_text(json.dumps(manifest))


BAD_NAMES = ["..", ".", "a/b", "../escape.json", "a\\b", "x\0y", "/etc/passwd", "n" * 256, "é" * 128, "line\nbreak"]


@pytest.mark.parametrize("name", BAD_NAMES, ids=range(len(BAD_NAMES)))
def test_a_carried_file_named_dotdot_or_a_path_is_E527_nothing_written(tmp_path, capsys, name):
    _raw_pack(tmp_path / "pack", ["notes.txt", name])
    code, err = _run(capsys, "unpack", tmp_path / "pack", tmp_path / "out" / "model")
    _refused(code, err, "E527")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pack"]  # no out, no out.tmp, no parent made
    assert not (tmp_path / "escape.json").exists()


def test_a_plain_raw_pack_unpacks(tmp_path, capsys):
    _raw_pack(tmp_path / "pack", ["notes.txt", "readme.md"])
    code, err = _run(capsys, "unpack", tmp_path / "pack", tmp_path / "out")
    assert code == 0, err
    assert (tmp_path / "out" / "readme.md").read_text() == "x"


@pytest.mark.parametrize("name", ["..", "a/b", "x\0y"])
def test_packing_a_file_with_no_plain_name_is_E527(model, tmp_path, name):
    with pytest.raises(ModelFolderError) as info:
        pack(model, tmp_path / "pack", files={name: "x"})
    assert info.value.code == "E527" and not (tmp_path / "pack").exists()


# 5. part sizes out of bounds


@pytest.mark.parametrize("mib", ["0.0000001", "0", "-3", "nan", "inf", "4096", "0.01"])
def test_part_mib_out_of_bounds_is_E528(model, tmp_path, capsys, mib):
    code, err = _run(capsys, "pack", model, tmp_path / "pack", "--part-mib", mib)
    _refused(code, err, "E528")
    assert "--part-mib from 1/64" in err and not (tmp_path / "pack").exists()


def test_a_pack_of_more_parts_than_a_manifest_lists_is_E528(model, tmp_path, monkeypatch):
    monkeypatch.setattr(transport, "MAX_PARTS", 3)
    with pytest.raises(ModelFolderError) as info:
        pack(model, tmp_path / "pack", part_bytes=2**20)
    assert info.value.code == "E528" and "parts of that size" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


# 6. a failed unpack leaves nothing behind, and the old folder whole


def test_a_failed_unpack_keeps_the_old_folder_and_leaves_nothing(pack_copy, model, tmp_path, capsys):
    (pack_copy / part_name(2)).write_bytes(b"\0" * 2**20)  # damaged
    before, around = _snapshot(model), sorted(p.name for p in tmp_path.iterdir())
    code, err = _run(capsys, "unpack", pack_copy, model)
    _refused(code, err, "E525")
    assert _snapshot(model) == before and sorted(p.name for p in tmp_path.iterdir()) == around


def test_a_write_failing_midway_removes_the_new_folder(packed, model, tmp_path, capsys, monkeypatch):
    import safetensors.torch

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safetensors.torch, "save_file", full)
    before, around = _snapshot(model), sorted(p.name for p in tmp_path.iterdir())
    for out in (model, tmp_path / "new" / "deeper" / "model"):
        code, err = _run(capsys, "unpack", packed, out)
        assert code == 1 and "No space left on device" in err and "Traceback" not in err
        assert _snapshot(model) == before and sorted(p.name for p in tmp_path.iterdir()) == around


def test_a_decoded_pack_of_other_code_is_refused_not_a_crash(tmp_path):
    blob = save({"w": torch.ones(2, 2, dtype=torch.int8), "w.row_scale": torch.ones(())}, metadata={"format": FORMAT})
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / part_name(0)).write_bytes(blob)
    digest = transport._sha256(blob)
    part = {"name": part_name(0), "bytes": len(blob), "sha256": digest}
    manifest = {"format": FORMAT, "form": "int8", "bytes": len(blob), "sha256": digest, "parts": [part]}
    (tmp_path / "pack" / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ModelFolderError) as info:
        unpack(tmp_path / "pack")
    assert info.value.code == "E506"
