"""Issue 56's probes of a model folder as the file system holds it: ``apollo_restore.json`` or
``calibration.json`` that is a folder, a dangling link, a loop of links, a FIFO or a link to
``/dev/zero`` is ``E220`` naming the file (checked before it is opened: a FIFO never blocks,
``/dev/zero`` is never read), at ``restore`` and at ``serve``'s start; a folder without
``apollo_restore.json`` is ``E531`` (never run in the pre-v2 layout). Copies of the shipped
folder, one thing changed; no weights are loaded before the refusal."""

from __future__ import annotations

import json
import os
from contextlib import nullcontext
from pathlib import Path

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.errors import FileError, ModelFolderError
from apollo_restore.model.folder import META_FILE, read_meta
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.ranking.calibration import CALIBRATION_FILE
from tests.guards import unblocking
from tests.stubs import shipped_model_copy

TEXT = "Κόμων Μουσαίου [.4] χαίρειν"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the shipped model folder, to change."""
    return shipped_model_copy(tmp_path)


def _directory(path: Path) -> None:
    path.mkdir()


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / "nothing-here.json")


def _loop(path: Path) -> None:
    other = path.parent / "other.link"
    other.symlink_to(path)
    path.symlink_to(other)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


CHANGES = {
    "a folder": (_directory, "is a folder"),
    "a dangling link": (_dangling, "a symbolic link to"),
    "a loop of links": (_loop, "a loop of symbolic links"),
    "a FIFO": (_fifo, "a FIFO"),
    "/dev/zero": (_zero, "a character device"),
}


def _replace(folder: Path, name: str, change) -> Path:
    path = folder / name
    path.unlink()
    change(path)
    return path


@pytest.mark.parametrize("name", [META_FILE, CALIBRATION_FILE])
@pytest.mark.parametrize("what", list(CHANGES))
def test_a_folder_file_that_is_not_a_regular_file_is_E220_naming_it(folder, name, what):
    change, words = CHANGES[what]
    path = _replace(folder, name, change)
    with pytest.raises(FileError) as err:
        load_restorer(folder)
    assert err.value.code == "E220" and str(path) in str(err.value) and words in str(err.value)
    done = CliRunner().invoke(app, ["restore", TEXT, "--model", str(folder)])
    assert done.exit_code == 2 and done.output.startswith("error: [E220]"), done.output
    assert str(path) in done.output and "Traceback" not in done.output


@pytest.mark.parametrize("what", ["a folder", "a FIFO", "/dev/zero"])
def test_serve_refuses_such_a_folder_at_start(folder, what):
    _replace(folder, META_FILE, CHANGES[what][0])
    done = CliRunner().invoke(app, ["serve", "--model", str(folder), "--port", "65500"])
    assert done.exit_code == 2 and "[E220]" in done.output and META_FILE in done.output, done.output


def test_a_folder_without_apollo_restore_json_is_E531_not_the_old_layout(folder):
    (folder / META_FILE).unlink()
    with pytest.raises(ModelFolderError, match=r"^\[E531\] .* has no apollo_restore.json"):
        read_meta(folder)
    for command in (["restore", TEXT, "--model", str(folder)], ["serve", "--model", str(folder), "--port", "65500"]):
        done = CliRunner().invoke(app, command)
        assert done.exit_code == 2 and "[E531]" in done.output and "Traceback" not in done.output, done.output


def test_an_old_folder_says_so_in_its_record(folder):
    """A folder from before v2 loads when its ``apollo_restore.json`` names the old layout."""
    (folder / META_FILE).write_text('{"fim_format": "apollo_restore fim.spm.v1"}')
    assert read_meta(folder)["fim_format"] == "apollo_restore fim.spm.v1"


def test_a_folder_file_larger_than_the_bound_is_refused_before_it_is_read(folder, monkeypatch):
    from apollo_restore.model import verify

    (folder / "generation_config.json").write_bytes(b" " * 2000 + b"{}")
    with pytest.raises(ModelFolderError, match=r"^\[E505\] .*generation_config.json: the file"):
        verify.read_json(folder / "generation_config.json", most=1000)


@pytest.mark.parametrize("what", ["a folder", "a FIFO", "a dangling link"])
def test_an_ngram_member_file_that_is_not_a_regular_file_is_E220_not_missing(folder, what):
    """Issue 63: a member's file that is there but no plain file is ``E220`` naming it (``E501``
    "missing" is for a file that is not there at all); no member is loaded before."""
    meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    meta["ensemble"]["members"].append({"name": "ngram", "weight": 0.1, "options": {"file": "lm.npz"}})
    (folder / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    change, words = CHANGES[what]
    path = folder / "lm.npz"
    change(path)
    with unblocking(path) if what == "a FIFO" else nullcontext(), pytest.raises(FileError) as err:
        load_restorer(folder)
    assert err.value.code == "E220" and str(path) in str(err.value) and words in str(err.value)
    done = CliRunner().invoke(app, ["restore", TEXT, "--model", str(folder)])
    assert done.exit_code == 2 and done.output.startswith("error: [E220]") and str(path) in done.output, done.output
