"""Issue 35's probes of the text-index cache: damage is rebuilt (W401) or a numbered error naming
the file (E408), never a silent result; cache folder failures are numbered (E409–E411); builds
are one at a time and leave nothing behind.

Every test builds a tiny index from a tiny packed text (well under a second), never the packaged one.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from filelock import FileLock
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.data import indexcache, textindex
from apollo_restore.data.textindex import TextIndex, build_text_index, ensure_index, pack_train_text
from apollo_restore.errors import TextIndexError

TEXTS = {
    "ddb:a": ("ετους δευτερου αυτοκρατορος καισαρος τραιανου σεβαστου " * 40).strip(),
    "ddb:b": ("του κυριου αυτοκρατορος καισαρος αδριανου σεβαστου " * 40).strip(),
}
SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture
def packed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiny packed text standing for the packaged one, and a fresh cache folder."""
    monkeypatch.setenv("APOLLO_RESTORE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("APOLLO_RESTORE_INDEX", raising=False)
    path = tmp_path / "train-text.tsv.xz"
    pack_train_text(list(TEXTS), ["ddb"] * len(TEXTS), list(TEXTS.values()), ["train"] * len(TEXTS), path)
    monkeypatch.setattr(textindex, "PACKED_TEXT", path)
    return path


def _zero_page(path: Path) -> None:
    """Zero one 4 KiB page (or the whole file, when smaller) in the middle of ``path``."""
    data = bytearray(path.read_bytes())
    start = max(0, len(data) // 2 - 2048)
    data[start : start + 4096] = bytes(len(data[start : start + 4096]))
    path.write_bytes(bytes(data))


DAMAGE = {
    "zeroed page of sa.npy": ("sa.npy", _zero_page),
    "truncated sa.npy": ("sa.npy", lambda p: p.write_bytes(p.read_bytes()[:-100])),
    "bad meta.json": ("meta.json", lambda p: p.write_text("{not json")),
    "meta.json without checksums": (
        "meta.json",
        lambda p: p.write_text(json.dumps({k: v for k, v in json.loads(p.read_text()).items() if k != "files"})),
    ),
    "bad documents.parquet": ("documents.parquet", _zero_page),
    "missing stream.npy": ("stream.npy", lambda p: p.unlink()),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_default_index_is_rebuilt_with_a_numbered_warning(packed: Path, damage: str) -> None:
    said: list[str] = []
    path = ensure_index(progress=said.append)
    expected = TextIndex.open(path).count(TextIndex.pattern("καισαρος τραιανου"))
    name, harm = DAMAGE[damage]
    harm(path / name)
    said.clear()
    assert ensure_index(progress=said.append) == path
    warning = next(line for line in said if "W401" in line)
    assert str(path / name) in warning
    assert any("text index built" in line for line in said)
    index = TextIndex.open(path)  # whole again: verified, and the same counts
    assert index.count(TextIndex.pattern("καισαρος τραιανου")) == expected == 40
    said.clear()
    assert ensure_index(progress=said.append) == path and said == []  # built once, not every time


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_user_index_is_a_numbered_error_naming_the_file(tmp_path: Path, damage: str) -> None:
    folder = tmp_path / "ix"
    build_text_index(list(TEXTS), ["ddb"] * len(TEXTS), list(TEXTS.values()), folder)
    name, harm = DAMAGE[damage]
    harm(folder / name)
    with pytest.raises(TextIndexError, match="E408") as caught:
        TextIndex.open(folder)
    assert caught.value.path == folder / name and str(folder / name) in str(caught.value)


def test_damaged_index_through_the_cli(packed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    folder = tmp_path / "ix"
    build_text_index(list(TEXTS), ["ddb"] * len(TEXTS), list(TEXTS.values()), folder)
    _zero_page(folder / "sa.npy")
    for command in ("parallels", "provenance"):
        done = runner.invoke(app, [command, "καισαρος τραιανου σεβαστου", "--index", str(folder)])
        assert done.exit_code == 2 and "[E408]" in done.output and "sa.npy" in done.output, done.output
        assert "Traceback" not in done.output
    default = ensure_index()
    _zero_page(default / "sa-reversed.npy")
    done = runner.invoke(app, ["parallels", "Καίσαρος Τραιανοῦ", "--json"])
    assert done.exit_code == 0, done.output
    assert "[W401]" in done.output and "sa-reversed.npy" in done.output
    assert '"count": 40' in done.output


def test_relative_cache_is_refused(monkeypatch: pytest.MonkeyPatch, packed: Path) -> None:
    monkeypatch.setenv("APOLLO_RESTORE_CACHE", "cache-here")
    with pytest.raises(TextIndexError, match=r"E410.*cache-here"):
        ensure_index()


def test_cache_folder_that_is_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, packed: Path) -> None:
    (tmp_path / "xdg").write_text("a file, not a folder")
    monkeypatch.delenv("APOLLO_RESTORE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with pytest.raises(TextIndexError, match="E409") as caught:
        ensure_index()
    assert str(tmp_path / "xdg") in str(caught.value)
    done = CliRunner().invoke(app, ["parallels", "Καίσαρος Τραιανοῦ"])
    assert done.exit_code == 2 and "[E409]" in done.output and "Traceback" not in done.output


@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC])
def test_cache_write_failures_are_numbered(packed: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    def failing_save(file, arr, *args, **kwargs):
        raise OSError(code, os.strerror(code), str(file))

    monkeypatch.setattr(textindex.np, "save", failing_save)
    with pytest.raises(TextIndexError, match="E409") as caught:
        ensure_index()
    assert os.strerror(code) in str(caught.value)
    cache = Path(os.environ["APOLLO_RESTORE_CACHE"])
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]  # the half-written folder is gone


def test_full_disk_is_refused_before_the_build(packed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexcache.shutil, "disk_usage", lambda path: type("U", (), {"free": 1000})())
    monkeypatch.setattr(textindex, "build_text_index", lambda *a, **k: pytest.fail("built on a full disk"))
    with pytest.raises(TextIndexError, match=r"E409.*MB free"):
        ensure_index()


def test_a_held_build_lock_times_out_with_a_numbered_error(packed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexcache, "LOCK_SECONDS", 0.3)
    path = textindex.default_index_path()
    path.parent.mkdir(parents=True)
    said: list[str] = []
    with FileLock(path.parent / f"{path.name}.lock"):
        with pytest.raises(TextIndexError, match="E411") as caught:
            ensure_index(progress=said.append)
    assert f"{path.name}.lock" in str(caught.value) and "waiting" in said[0]
    assert ensure_index() == path  # the lock free again: built


def test_leftovers_of_a_killed_build_are_removed(packed: Path) -> None:
    path = textindex.default_index_path()
    ours = path.parent / f".{path.name}.abc123"
    old = path.parent / ".textindex-0123456789abcdef.zzz"
    recent = path.parent / ".textindex-fedcba9876543210.yyy"
    for leftover in (ours, old, recent):
        leftover.mkdir(parents=True)
        np.save(leftover / "sa.npy", np.zeros(1000, np.int32))
    os.utime(old, (0, 0))  # a killed build of another package version, long ago
    ensure_index()
    assert not ours.exists() and not old.exists()
    assert recent.exists()  # perhaps another index's build under way: kept


BUILDER = """
import sys
from apollo_restore.data.textindex import ensure_index, TextIndex
path = ensure_index(sys.argv[1], progress=lambda msg: print(msg, flush=True))
print("count", TextIndex.open(path).count(TextIndex.pattern("καισαρος τραιανου")))
"""


def test_two_processes_building_at_once_build_once(packed: Path) -> None:
    env = dict(os.environ, PYTHONPATH=SRC)
    runs = [
        subprocess.Popen([sys.executable, "-c", BUILDER, str(packed)], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert all("count 40" in out for out in outputs), outputs
    assert sum(out.count("text index built") for out in outputs) == 1, outputs
    cache = Path(os.environ["APOLLO_RESTORE_CACHE"])
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]
