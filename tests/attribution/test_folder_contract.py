"""Issue 63's probes of the attribution folder: copies of the shipped folder with one thing
damaged, each refused with its numbered error naming the file (and the field or array) at the
Python API and the command, never a traceback, a hang or an answer. The unchanged files of a copy
are links to the shipped ones (a link to a regular file is read as the file).

    python -m pytest -q tests/attribution/test_folder_contract.py
"""

from __future__ import annotations

import json
import lzma
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.attribution.attribute import attribute
from apollo_restore.attribution.folder import CONFIG_FILE, LABELS_FILE, MAX_CONFIG_BYTES, WEIGHTS_FILE
from apollo_restore.attribution.model import default_folder
from apollo_restore.cli.app import app
from apollo_restore.data.textindex import TextIndex, build_text_index, packed_fingerprint
from apollo_restore.errors import AttributionError, FileError, ModelFolderError
from tests.attribution.test_doors import LONG
from tests.guards import unblocking

SHIPPED = default_folder()
runner = CliRunner()


@pytest.fixture(scope="module")
def shipped() -> tuple[dict, dict[str, np.ndarray]]:
    """The shipped folder's settings and arrays, to damage copies of."""
    return json.loads((SHIPPED / CONFIG_FILE).read_text(encoding="utf-8")), load_file(str(SHIPPED / WEIGHTS_FILE))


def folder_with(tmp_path: Path, config: dict | None = None, arrays: dict | None = None,
                **files: Callable[[Path], None]) -> Path:  # fmt: skip
    """A copy of the shipped folder: ``config`` and ``arrays`` written where given, a file
    ``files[name]`` made by its function (keys with ``.`` as ``_``), the others linked."""
    folder = tmp_path / "attribution"
    folder.mkdir(parents=True)
    made = {name.replace("_", "."): make for name, make in files.items()}
    for name in (CONFIG_FILE, WEIGHTS_FILE, LABELS_FILE):
        path = folder / name
        if name in made:
            made[name](path)
        elif name == CONFIG_FILE and config is not None:
            path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
        elif name == WEIGHTS_FILE and arrays is not None:
            save_file(arrays, str(path))
        else:
            path.symlink_to(SHIPPED / name)
    return folder


def refused(folder: Path, code: str, *words: str, parallels: bool = False) -> None:
    """``code`` naming the damaged file (and ``words``) at the Python API and at the command (a
    FIFO among its files unblocked after a while: a door that waits on it fails, never hangs)."""
    fifos = [p for p in folder.iterdir() if p.is_fifo()]
    with unblocking(*fifos), pytest.raises((ModelFolderError, FileError, AttributionError)) as err:
        apollo_restore.attribute(LONG, parallels=parallels, model=str(folder))
    message = str(err.value)
    assert err.value.code == code, message
    assert str(folder) in message and all(w in message for w in words), message
    args = ["attribute", LONG, "--model", str(folder), "--json"] + ([] if parallels else ["--no-parallels"])
    with unblocking(*fifos):
        done = runner.invoke(app, args)
    assert done.exit_code == 2 and done.output.startswith(f"error: [{code}]"), done.output
    assert "Traceback" not in done.output and str(folder) in done.output


def changed(config: dict, path: str, value) -> dict:
    """A deep copy of ``config`` with the dotted ``path`` set to ``value``."""
    out = json.loads(json.dumps(config))
    *parents, last = path.split(".")
    node = out
    for key in parents:
        node = node[key]
    node[last] = value
    return out


def test_the_shipped_folder_passes_its_contract(shipped):
    found = apollo_restore.attribute(LONG, parallels=False)
    assert found.places and found.low <= found.year <= found.high
    assert not os.path.isabs(shipped[0]["trained"]["prepared"])


# -- attribution.json ---------------------------------------------------------------------------


SETTINGS = {
    "temperature -1 (inverts the places)": ("temperature.place", [-1.0] * 5, "temperature.place[0]"),
    "temperature 0 (divides by zero)": ("temperature.date", [0.0] * 5, "temperature.date[0]"),
    "temperature NaN": ("temperature.mixed_date", [float("nan")] * 5, "temperature.mixed_date[0]"),
    "too few temperatures": ("temperature.date", [1.0, 1.0], "temperature.date"),
    "buckets 0": ("buckets", 0, "buckets"),
    "buckets 10^12": ("buckets", 10**12, "buckets"),
    "unsorted bin edges": ("bin_edges", [0, 100, 50, 200], "bin_edges"),
    "a single bin edge": ("bin_edges", [0], "bin_edges"),
    "bin edges x 10^6": ("bin_edges", [e * 10**6 for e in range(-800, 901, 25)], "bin_edges[0]"),
    "neighbour weight 5.0": ("neighbours.date", 5.0, "neighbours.date"),
    "neighbour weight -3.0": ("neighbours.place", -3.0, "neighbours.place"),
    "an inscription place beyond the places": ("inscription_places", [3, 4, 400], "inscription_places"),
    "an absolute training path": ("trained.prepared", "/work/prepared", "trained.prepared"),
    "another format": ("format", "apollo-restore attribution v0", "format"),
    "formula years and eras of other lengths": ("formulae.longest", [1, 2], "formulae.longest"),
    "letter limits of another length than their bands": ("letters.limits", [5.0], "letters.limits"),
    "a formula peak of two shares": ("formulae.peaks", {"none": [0.5, 0.5]}, "formulae.peaks.none"),
}


@pytest.mark.parametrize("probe", list(SETTINGS))
def test_a_setting_the_schema_refuses_is_E505_naming_the_field(shipped, tmp_path, probe):
    field, value, named = SETTINGS[probe]
    refused(folder_with(tmp_path, changed(shipped[0], field, value)), "E505", CONFIG_FILE, named)


def test_a_key_not_declared_is_E522(shipped, tmp_path):
    refused(folder_with(tmp_path, shipped[0] | {"place_model": "v2"}), "E522", "place_model")


def test_another_normaliser_or_other_features_are_refused(shipped, tmp_path):
    refused(folder_with(tmp_path / "a", changed(shipped[0], "normaliser", "apollo_restore norm.v0")), "E515",
            "norm.v0")  # fmt: skip
    refused(folder_with(tmp_path / "b", changed(shipped[0], "features", "ngrams.v0")), "E532", "ngrams.v0")


def _write(data: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data)


def _deep(path: Path) -> None:
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")


def _over_the_cap(path: Path) -> None:
    with open(path, "wb") as f:  # sparse: nothing is written, its size is what is refused
        f.truncate(MAX_CONFIG_BYTES + 1)


JSON_FILES = {
    "an array": (_write(b"[1, 2, 3]"), "E504"),
    "200,000 arrays deep": (_deep, "E517"),
    "over the size cap": (_over_the_cap, "E505"),
    "not JSON": (_write(b'{"format": '), "E503"),
}


@pytest.mark.parametrize("probe", list(JSON_FILES))
def test_an_attribution_json_that_is_no_settings_object_is_refused(tmp_path, probe):
    make, code = JSON_FILES[probe]
    refused(folder_with(tmp_path, attribution_json=make), code, CONFIG_FILE)


# -- the file system --------------------------------------------------------------------------


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _folder(path: Path) -> None:
    path.mkdir()


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / "nothing-here")


NOT_FILES = {"a FIFO": (_fifo, "a FIFO"), "/dev/zero": (_zero, "a character device"),
             "a folder": (_folder, "a folder"), "a dangling link": (_dangling, "a symbolic link to")}  # fmt: skip


@pytest.mark.parametrize("name", [CONFIG_FILE, WEIGHTS_FILE, LABELS_FILE])
@pytest.mark.parametrize("what", list(NOT_FILES))
def test_a_file_that_is_not_a_regular_file_is_E220(tmp_path, name, what):
    make, words = NOT_FILES[what]
    folder = folder_with(tmp_path, **{name.replace(".", "_"): make})
    refused(folder, "E220", name, words, parallels=name == LABELS_FILE)  # the labels are read for the parallels


@pytest.mark.parametrize("name", [CONFIG_FILE, WEIGHTS_FILE, LABELS_FILE])
def test_a_missing_file_is_E802(tmp_path, name):
    folder = folder_with(tmp_path)
    (folder / name).unlink()
    refused(folder, "E802", name, parallels=name == LABELS_FILE)


# -- attribution.safetensors ------------------------------------------------------------------


def _nan(arrays: dict, name: str, value: float = float("nan")) -> dict:
    out = dict(arrays)
    out[name] = arrays[name].copy()
    out[name].flat[3] = value
    return out


ARRAYS = {
    "a NaN place bias": (lambda a: _nan(a, "place.bias"), "E518", "place.bias"),
    "an infinite place bias": (lambda a: _nan(a, "place.bias", float("inf")), "E518", "place.bias"),
    "NaN date weights": (lambda a: _nan(a, "date.weight"), "E518", "date.weight"),
    "a NaN scale": (lambda a: _nan(a, "embedding.scale"), "E518", "embedding.scale"),
    "a NaN formula weight": (lambda a: _nan(a, "formula.weight"), "E518", "formula.weight"),
    "a NaN letter model": (lambda a: _nan(a, "letters.logp"), "E518", "letters.logp"),
    "a letter probability above 1": (lambda a: _nan(a, "letters.logp", 2.0), "E533", "letters.logp"),
    "a place head of 300 columns under 340 names": (
        lambda a: a | {"place.weight": a["place.weight"][:, :300].copy()}, "E509", "place.weight"),
    "a date head of another shape": (lambda a: a | {"date.weight": a["date.weight"][:, :60].copy()}, "E509",
                                     "date.weight"),
    "an embedding of other rows": (lambda a: a | {"embedding": a["embedding"][:1000].copy()}, "E509", "embedding"),
    "a missing head": (lambda a: {k: v for k, v in a.items() if k != "date.bias"}, "E508", "date.bias"),
    "an array no setting calls for": (lambda a: a | {"extra": np.zeros(3, np.float32)}, "E510", "extra"),
    "a head of integers": (lambda a: a | {"place.bias": a["place.bias"].astype(np.int32)}, "E511", "place.bias"),
    "neighbour ids of 2^30": (lambda a: a | {"nn.docs": np.where(np.arange(len(a["nn.docs"])) == 5, 2**30,
                                                                   a["nn.docs"]).astype(np.int32)}, "E533", "nn.docs"),
    "a neighbour place beyond the places": (lambda a: a | {"nn.place": np.full_like(a["nn.place"], 400)}, "E533",
                                            "nn.place"),
    "neighbour offsets beyond the postings": (
        lambda a: a | {"nn.offsets": a["nn.offsets"] * 2}, "E533", "nn.offsets"),
}  # fmt: skip


@pytest.mark.parametrize("probe", list(ARRAYS))
def test_arrays_that_do_not_fit_the_settings_are_refused_naming_the_array(shipped, tmp_path, probe):
    damage, code, name = ARRAYS[probe]
    refused(folder_with(tmp_path, arrays=damage(shipped[1])), code, WEIGHTS_FILE, name)


def test_settings_the_arrays_do_not_fit_are_refused(shipped, tmp_path):
    short = changed(shipped[0], "places", shipped[0]["places"][:300])
    short["inscription_places"] = [i for i in short["inscription_places"] if i < 300]
    refused(folder_with(tmp_path / "a", short), "E509", WEIGHTS_FILE, "place.weight")  # a short place list
    edges = changed(shipped[0], "bin_edges", shipped[0]["bin_edges"][:-1])  # one bin fewer than the date head
    refused(folder_with(tmp_path / "b", edges), "E509", WEIGHTS_FILE, "date.weight")


def _truncated(path: Path) -> None:
    path.write_bytes((SHIPPED / WEIGHTS_FILE).read_bytes()[:100_000])


def _random(path: Path) -> None:
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 100_000, np.uint8).tobytes())


def _huge_header(path: Path) -> None:
    path.write_bytes((2**62).to_bytes(8, "little") + b"{}" + b"\0" * 64)


SAFETENSORS = {"truncated": _truncated, "random bytes": _random, "a header length of 2^62": _huge_header}


@pytest.mark.parametrize("probe", list(SAFETENSORS))
def test_a_safetensors_file_that_is_none_is_E506(tmp_path, probe):
    refused(folder_with(tmp_path, attribution_safetensors=SAFETENSORS[probe]), "E506", WEIGHTS_FILE)


# -- documents.tsv.xz ---------------------------------------------------------------------------


def _labels(text: str) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(lzma.compress(text.encode()))


def _shipped_labels() -> list[str]:
    return lzma.decompress((SHIPPED / LABELS_FILE).read_bytes()).decode().split("\n")


LABELS = {
    "not xz": (_write(b"source\tid\tlo\thi\tplace\n"), "not an xz file"),
    "truncated xz": (lambda p: p.write_bytes((SHIPPED / LABELS_FILE).read_bytes()[:5000]), "truncated"),
    "a line of three fields": (lambda p: _labels("\n".join(_shipped_labels()[:5] + ["ddb\tx\t12"]))(p), "line 6"),
    "a year that is none": (lambda p: _labels("\n".join(_shipped_labels()[:2] + ["ddb\tx\tabc\t12\tK"]))(p), "line 3"),
    "a range lo > hi": (lambda p: _labels("\n".join(_shipped_labels()[:2] + ["ddb\tx\t50\t12\tK"]))(p), "line 3"),
    "another header": (_labels("id\tsource\n"), "line 1"),
    "fewer rows than declared": (lambda p: _labels("\n".join(_shipped_labels()[:100]))(p), "where"),
    "a document twice": (lambda p: _labels("\n".join(_shipped_labels() + [_shipped_labels()[1]]))(p), "twice"),
}  # fmt: skip


@pytest.mark.parametrize("probe", list(LABELS))
def test_damaged_labels_are_E534_naming_the_line(tmp_path, probe):
    make, words = LABELS[probe]
    refused(folder_with(tmp_path, documents_tsv_xz=make), "E534", LABELS_FILE, words, parallels=True)


# -- the labels' corpus ---------------------------------------------------------------------------


def test_the_shipped_labels_are_made_for_the_packaged_text(shipped):
    assert shipped[0]["documents"]["corpus"] == packed_fingerprint()
    assert shipped[0]["documents"]["rows"] == len(_shipped_labels()) - 2  # the header, the last newline


def test_labels_joined_to_an_index_of_another_corpus_are_E535(tiny_attribution, tmp_path):
    build_text_index(["bgu.1.100"], ["ddb"], [LONG], tmp_path / "ix")  # one document: another corpus
    index = TextIndex.open(tmp_path / "ix")
    with pytest.raises(ModelFolderError) as err:
        attribute(LONG, folder=str(tiny_attribution), index=index)
    assert err.value.code == "E535" and index.fingerprint in str(err.value) and LABELS_FILE in str(err.value)
    assert attribute(LONG, folder=str(tiny_attribution), index=index, parallels=False).places  # none asked
