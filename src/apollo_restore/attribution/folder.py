"""The attribution folder's contract, checked on load before any text is answered.

    settings, config = read_settings(folder)      # attribution.json: E220, E503–E505, E515, E517, E522, E532
    arrays = read_arrays(folder, settings)        # attribution.safetensors: E220, E505–E511, E518, E533
    labels = read_labels(folder, settings)        # documents.tsv.xz: E220, E534
    check_corpus(folder, settings, index)         # the labels belong to the index's corpus: E535
    fingerprint(folder)                           # what its answers depend on, 16 hex digits

A folder holds three files, each read through the model folders' one reader
(:mod:`apollo_restore.model.verify`: regular files only, bounded, checked before they are opened):

- ``attribution.json`` (at most :data:`MAX_CONFIG_BYTES`): the settings, as
  :class:`~apollo_restore.schema.answers.AttributionConfig` declares them (bounded numbers,
  lists that agree), made with this code's normaliser and n-gram features (:data:`~.features.FEATURES`);
- ``attribution.safetensors`` (at most :data:`MAX_ARRAYS_BYTES`): exactly the arrays the settings
  call for (:func:`array_specs`: the embedding ``(buckets, dim)``, the heads ``(dim, bins)`` and
  ``(dim, places)``, the nearest documents' index ``nn.*``, the formulae's ``formula.*`` and the
  letter model's ``letters.logp`` where the folder has them), each of its shape and type, every
  number finite, every index within what it indexes (:func:`check_values`: a neighbour id of 2³⁰
  would allocate gigabytes);
- ``documents.tsv.xz`` (optional): the training documents' dates and places, the dated parallels'
  labels (``source``, ``id``, ``lo``, ``hi``, ``place``), as many rows as ``documents.rows`` says,
  made for the corpus whose fingerprint ``documents.corpus`` gives
  (:func:`~apollo_restore.data.textindex.corpus_fingerprint`): joined to another index by id, they
  would give other documents' dates, so that is refused.

A missing file is ``E802``; every other refusal is a numbered ``E5xx`` naming the file (and the
field, the tensor or the line).
"""

from __future__ import annotations

import lzma
import os
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file

from apollo_restore.attribution.familiar import SIZE as LETTER_SIZE
from apollo_restore.attribution.features import FEATURES
from apollo_restore.data.textindex import TextIndex
from apollo_restore.errors import AttributionError, ModelFolderError
from apollo_restore.model.folder import check_normaliser, files_fingerprint
from apollo_restore.model.verify import (
    FLOAT_DTYPES,
    TensorSpec,
    check_finite,
    check_tensors,
    read_folder_file,
    read_header,
    read_json,
)
from apollo_restore.schema.attribution import MAX_YEAR, AttributionConfig
from apollo_restore.schema.base import SchemaError, check, folder_error

CONFIG_FILE, WEIGHTS_FILE = "attribution.json", "attribution.safetensors"
#: The training documents' dates and places (the dated parallels' labels).
LABELS_FILE = "documents.tsv.xz"
#: Largest ``attribution.json`` (the shipped one: 0.35 MB, most of it the formulae's features).
MAX_CONFIG_BYTES = 16 * 2**20
#: Largest ``attribution.safetensors`` (the shipped one: 27 MB).
MAX_ARRAYS_BYTES = 2 * 2**30
#: Largest ``documents.tsv.xz``, and most bytes it may unpack to (the shipped one: 0.2 MB, 2.6 MB).
MAX_LABELS_BYTES, MAX_LABELS_TEXT = 64 * 2**20, 512 * 2**20
#: The first line of ``documents.tsv.xz``.
LABELS_HEADER = "source\tid\tlo\thi\tplace"
_INTS, _FLOATS = ("I16", "I32"), ("F16", "F32")


def read_settings(folder: Path) -> tuple[AttributionConfig, dict[str, Any]]:
    """``attribution.json`` checked (see the module docstring): the declared settings and the
    object as written.

    Raises:
        AttributionError: ``E802`` no such file.
        FileError: ``E220`` not a regular file.
        ModelFolderError: ``E503``, ``E504``, ``E517`` not a JSON object; ``E505``, ``E522`` a value
            or key the schema refuses (over :data:`MAX_CONFIG_BYTES` too); ``E515`` another
            normaliser; ``E532`` other n-gram features.
    """
    path = Path(folder) / CONFIG_FILE
    _there(path)
    data = read_json(path, MAX_CONFIG_BYTES)
    try:
        settings = check(AttributionConfig, data)
    except SchemaError as err:
        raise folder_error(path, err) from None
    check_normaliser(path, settings.normaliser)
    if settings.features != FEATURES:
        raise ModelFolderError("E532", path, found=settings.features, expected=FEATURES)
    return settings, data


def array_specs(settings: AttributionConfig, header: dict[str, tuple[tuple[int, ...], str]]) -> dict[str, TensorSpec]:
    """Every array the settings call for → its shape and types; the sizes the settings do not give
    (the indexed documents ``N``, words ``W`` and postings ``Z`` of ``nn.*``) are read from
    ``header`` (:func:`~apollo_restore.model.verify.read_header`), where they must agree."""
    rows, dim, bins, places = settings.buckets, settings.dim, len(settings.bin_edges) - 1, len(settings.places)
    embedding = header.get("embedding", ((), ""))[1]
    specs = {"embedding": TensorSpec.of((rows, dim), "I8", *FLOAT_DTYPES)}
    if embedding == "I8":
        specs["embedding.scale"] = TensorSpec.of((rows,), *_FLOATS)
    specs |= {
        "date.weight": TensorSpec.of((dim, bins), *_FLOATS),
        "date.bias": TensorSpec.of((bins,), *_FLOATS),
        "place.weight": TensorSpec.of((dim, places), *_FLOATS),
        "place.bias": TensorSpec.of((places,), *_FLOATS),
    }
    if any(name.startswith("nn.") for name in header):

        def size(name: str) -> int:
            return header.get(name, ((0,), ""))[0][0] if header.get(name, ((0,), ""))[0] else 0

        n, words, postings = size("nn.place"), size("nn.words"), size("nn.docs")
        specs |= {
            "nn.place": TensorSpec.of((n,), *_INTS),
            "nn.first": TensorSpec.of((n,), *_INTS),
            "nn.last": TensorSpec.of((n,), *_INTS),
            "nn.words": TensorSpec.of((words,), "U32"),
            "nn.idf": TensorSpec.of((words,), *_FLOATS),
            "nn.offsets": TensorSpec.of((words + 1,), "I64"),
            "nn.docs": TensorSpec.of((postings,), "I32", "I64"),
            "nn.weights": TensorSpec.of((postings,), *_FLOATS),
        }
    if settings.letters is not None:
        specs["letters.logp"] = TensorSpec.of((LETTER_SIZE,) * 3, *_FLOATS)
    if settings.formulae is not None:
        classes = len(settings.formulae.eras) + 1  # the eras and "none"
        specs |= {
            "formula.weight": TensorSpec.of((len(settings.formulae.features), classes), *_FLOATS),
            "formula.bias": TensorSpec.of((classes,), *_FLOATS),
        }
    return specs


def read_arrays(folder: Path, settings: AttributionConfig) -> dict[str, np.ndarray]:
    """``attribution.safetensors``: its header checked against :func:`array_specs`, then its
    arrays read and checked (:func:`~apollo_restore.model.verify.check_finite`, :func:`check_values`).

    Raises:
        AttributionError: ``E802`` no such file.
        FileError: ``E220`` not a regular file.
        ModelFolderError: ``E505`` over :data:`MAX_ARRAYS_BYTES`; ``E506`` not a safetensors file;
            ``E508``–``E511`` not the arrays the settings call for; ``E518`` a number that is not
            finite; ``E533`` an index beyond what it indexes.
    """
    folder = Path(folder)
    path = folder / WEIGHTS_FILE
    _there(path)
    header = read_header(path, MAX_ARRAYS_BYTES)
    check_tensors(path, header, array_specs(settings, header), folder / CONFIG_FILE)
    try:
        arrays = load_file(str(path))
    except (SafetensorError, OSError) as err:  # changed since its header was read
        raise ModelFolderError("E506", path, reason=str(err)) from None
    check_finite(path, arrays)
    check_values(path, arrays, settings)
    return arrays


def check_values(path: Path, arrays: dict[str, np.ndarray], settings: AttributionConfig) -> None:
    """The letter model's numbers are log-probabilities (at most 0); the nearest documents' index
    holds what it indexes: place classes from -1 (none) below the
    places, date bins from -1 (undated) below the bins with ``first ≤ last``, documents below
    their count, postings' offsets from 0 rising to their count, words in increasing order, weights
    within [0, 1] and inverse document frequencies not negative.

    Raises:
        ModelFolderError: ``E533`` naming the array and its first value out of place.
    """
    if "letters.logp" in arrays:
        _within(path, arrays, "letters.logp", float("-inf"), 0.0, "log2 probabilities")
    if "nn.docs" not in arrays:
        return
    bins, places = len(settings.bin_edges) - 1, len(settings.places)
    documents, postings = len(arrays["nn.place"]), len(arrays["nn.docs"])
    _within(path, arrays, "nn.place", -1, places - 1, "place classes")
    for name in ("nn.first", "nn.last"):
        _within(path, arrays, name, -1, bins - 1, "date bins")
    first, last = arrays["nn.first"].astype(np.int64), arrays["nn.last"].astype(np.int64)
    bad = np.flatnonzero((first > last) | ((first < 0) != (last < 0)))
    if len(bad):
        i = int(bad[0])
        raise ModelFolderError("E533", path, name="nn.first", found=f"{first[i]} against nn.last {last[i]} at {i}",
                               expected="a first bin at most the last (both -1 for an undated document)")  # fmt: skip
    _within(path, arrays, "nn.docs", 0, documents - 1, "documents")
    offsets = arrays["nn.offsets"]
    steps = np.flatnonzero(np.diff(offsets) < 0)
    if offsets[0] != 0 or offsets[-1] != postings or len(steps):
        found = f"{offsets[0]} … {offsets[-1]}" + (f", falling at {int(steps[0]) + 1}" if len(steps) else "")
        raise ModelFolderError("E533", path, name="nn.offsets", found=found,
                               expected=f"offsets rising from 0 to {postings:,} (the postings)")  # fmt: skip
    falling = np.flatnonzero(np.diff(arrays["nn.words"].astype(np.int64)) <= 0)
    if len(falling):
        i = int(falling[0]) + 1
        raise ModelFolderError("E533", path, name="nn.words", found=f"{arrays['nn.words'][i]} at {i}",
                               expected="word hashes in increasing order")  # fmt: skip
    _within(path, arrays, "nn.weights", 0.0, 1.0, "a document's unit-length weights")
    _within(path, arrays, "nn.idf", 0.0, float("inf"), "inverse document frequencies")


def _within(path: Path, arrays: dict[str, np.ndarray], name: str, low: float, high: float, what: str) -> None:
    """Refuse ``arrays[name]`` when one of its values lies outside ``[low, high]`` (``E533``)."""
    values = arrays[name]
    bad = np.flatnonzero((values < low) | (values > high))
    if len(bad):
        i = int(bad[0])
        raise ModelFolderError("E533", path, name=name, found=f"{values[i]} at {i}",
                               expected=f"{what}: values from {low:g} to {high:g}")  # fmt: skip


def read_labels(folder: Path, settings: AttributionConfig) -> dict[tuple[str, str], dict[str, Any]]:
    """``(source, id)`` → ``{"lo", "hi", "place"}`` of the training documents, from
    ``documents.tsv.xz`` (empty where the folder has none and its settings declare none).

    Raises:
        AttributionError: ``E802`` the settings declare the file (``documents``) and it is missing.
        FileError: ``E220`` not a regular file.
        ModelFolderError: ``E505`` over :data:`MAX_LABELS_BYTES`; ``E534`` not an xz file (or
            unpacking to more than :data:`MAX_LABELS_TEXT`), not UTF-8, a line that is not one label (naming
            the line), a repeated document, or not as many rows as ``documents.rows``; or a file
            the settings do not declare.
    """
    path = Path(folder) / LABELS_FILE
    if not os.path.lexists(path):
        if settings.documents is not None:
            _there(path)
        return {}
    if settings.documents is None:
        raise ModelFolderError("E534", path, where="", reason=f"{CONFIG_FILE} declares no documents (rows, corpus)")
    text = _unpacked(path, read_folder_file(path, MAX_LABELS_BYTES))
    lines = text.split("\n")
    if lines[0] != LABELS_HEADER:
        raise ModelFolderError("E534", path, where=", line 1", reason=f"{lines[0][:80]!r} is not {LABELS_HEADER!r}")
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        key, label = _label(path, number, line)
        if key in out:
            raise ModelFolderError("E534", path, where=f", line {number}", reason=f"document {key} is labelled twice")
        out[key] = label
    if len(out) != settings.documents.rows:
        reason = f"{len(out):,} documents, where {CONFIG_FILE} says {settings.documents.rows:,}"
        raise ModelFolderError("E534", path, where="", reason=reason)
    return out


def _unpacked(path: Path, raw: bytes) -> str:
    """The text of an xz file's bytes, at most :data:`MAX_LABELS_TEXT` (``E534``)."""
    unpack = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    try:
        data = unpack.decompress(raw, max_length=MAX_LABELS_TEXT)
    except lzma.LZMAError as err:
        raise ModelFolderError("E534", path, where="", reason=f"not an xz file ({err})") from None
    if not unpack.eof:
        reason = f"it unpacks to more than {MAX_LABELS_TEXT:,} bytes" if len(data) >= MAX_LABELS_TEXT else "truncated"
        raise ModelFolderError("E534", path, where="", reason=reason)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ModelFolderError("E534", path, where="", reason=f"not UTF-8 text (byte {err.start:,})") from None


def _label(path: Path, number: int, line: str) -> tuple[tuple[str, str], dict[str, Any]]:
    """One line of ``documents.tsv.xz``: a source and an id, a year range (both or neither,
    ``lo ≤ hi``, within ± :data:`~apollo_restore.schema.attribution.MAX_YEAR`) and a place."""
    fields = line.split("\t")
    where = f", line {number}"
    if len(fields) != 5 or not fields[0] or not fields[1]:
        raise ModelFolderError("E534", path, where=where, reason=f"{line[:80]!r} is not source, id, lo, hi, place")
    source, doc, lo, hi, place = fields
    years = []
    for value in (lo, hi):
        try:
            year = int(value) if value else None
        except ValueError:
            year = MAX_YEAR + 1
        if year is not None and not -MAX_YEAR <= year <= MAX_YEAR:
            raise ModelFolderError(
                "E534", path, where=where, reason=f"{value[:40]!r} is no year (from -{MAX_YEAR} to {MAX_YEAR})"
            )
        years.append(year)
    if (years[0] is None) != (years[1] is None) or (years[0] is not None and years[0] > years[1]):
        raise ModelFolderError("E534", path, where=where, reason=f"the years {lo!r}, {hi!r} are no range lo ≤ hi")
    return (source, doc), {"lo": years[0], "hi": years[1], "place": place}


def check_corpus(folder: Path, settings: AttributionConfig, index: TextIndex) -> None:
    """The folder's labels were made for the corpus ``index`` holds.

    Raises:
        ModelFolderError: ``E535`` naming both fingerprints.
    """
    if settings.documents is not None and settings.documents.corpus != index.fingerprint:
        raise ModelFolderError("E535", Path(folder) / LABELS_FILE, found=settings.documents.corpus,
                               index=index.path, expected=index.fingerprint)  # fmt: skip


def fingerprint(folder: Path) -> str:
    """What a folder's answers depend on: the fingerprint of its three files' names and bytes
    (:func:`~apollo_restore.model.folder.files_fingerprint`), the labels of its parallels among them."""
    return files_fingerprint(Path(folder), (CONFIG_FILE, WEIGHTS_FILE, LABELS_FILE))


def _there(path: Path) -> None:
    """Refuse a missing file (``E802``; a link to nothing is there, and refused as ``E220``)."""
    if not os.path.lexists(path):
        raise AttributionError("E802", path=path.parent, reason=f"it has no {path.name}")
