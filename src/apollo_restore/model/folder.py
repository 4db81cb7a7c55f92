"""A model folder's metadata (``apollo_restore.json``), read without importing torch or
``transformers``: which normaliser and FIM layout the model was trained with.

    meta = read_meta(folder)     # raises ValueError for a folder trained otherwise, or a broken JSON file
    layout = layout_of(meta)
    fingerprint(folder)          # what its scores depend on (weights, config, tokenizer, ensemble), 16 hex digits
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from apollo_restore.data.normalise import NORMALISER
from apollo_restore.data.outputs import write_atomic
from apollo_restore.errors import Errors, FileError, ModelFolderError
from apollo_restore.fim.layout import DEFAULT_LAYOUT, LAYOUTS, FimLayout, layout_named
from apollo_restore.fim.tokenizer import TOKENIZER_FILE
from apollo_restore.inputs import check_regular, digest, read_regular
from apollo_restore.model.verify import CONFIG_FILE, MAX_JSON_BYTES, read_folder_json
from apollo_restore.schema.base import SchemaError, check, folder_error
from apollo_restore.schema.folder import FolderMeta

META_FILE = "apollo_restore.json"


def layout_of(meta: dict[str, Any]) -> FimLayout:
    """The FIM layout a model folder's metadata names (folders from before v2 lack the
    field only if they predate it; they used ``fim.spm.v1``)."""
    return layout_named(meta.get("fim_format", "apollo_restore fim.spm.v1"))


def write_meta(folder: Path, meta: dict[str, Any]) -> None:
    """Write the folder's ``apollo_restore.json`` whole (:func:`~apollo_restore.data.outputs.write_atomic`),
    in the form the shipped file has (one-space indent, letters as written)."""
    write_atomic(Path(folder) / META_FILE, (json.dumps(meta, ensure_ascii=False, indent=1) + "\n").encode())


def read_meta(folder: Path) -> dict[str, Any]:
    """The folder's ``apollo_restore.json``, checked, after every JSON file of the folder
    (:func:`~apollo_restore.model.verify.read_folder_json`: regular files only, bounded). A
    folder without one is refused: its layout would be guessed from an absence (the v2 weights
    read in the pre-v2 layout give garbage); a folder from before v2 says so in one
    (``{"fim_format": "apollo_restore fim.spm.v1"}``).

    Raises:
        FileNotFoundError: no model folder there (``config.json`` missing, ``E514``).
        FileError: ``E220`` a JSON file of the folder that is not a regular file (a folder, a FIFO,
            a device, a dangling link, a loop of links).
        ModelFolderError: a JSON file that does not parse, or a bad ``config.json`` (``E503``–``E505``),
            a setting of ``apollo_restore.json`` the schema refuses (``E505``, ``E520``, ``E522``:
            :func:`check_meta`), ``E531`` no ``apollo_restore.json``.
        ValueError: it was trained with another normaliser or FIM layout (``E515``, ``E516``).
    """
    folder = Path(folder)
    if not os.path.lexists(folder / CONFIG_FILE):
        raise FileNotFoundError(Errors.E514.format(folder=folder, file=CONFIG_FILE))
    files = read_folder_json(folder)
    if META_FILE not in files:
        raise ModelFolderError("E531", folder / META_FILE, folder=folder)
    meta = files[META_FILE]
    check_meta(folder / META_FILE, meta)
    check_normaliser(folder, meta.get("normaliser", NORMALISER))
    if meta.get("fim_format", DEFAULT_LAYOUT.name) not in LAYOUTS:
        raise ValueError(Errors.E516.format(folder=folder, found=meta["fim_format"], known=", ".join(LAYOUTS)))
    return meta


def check_normaliser(path: Path, found: str) -> None:
    """A model folder (or its file ``path``) made with the normaliser ``found`` is read by this code
    only if it is this code's: text normalised otherwise meets other n-grams and tokens.

    Raises:
        ModelFolderError: ``E515`` (a ``ValueError``).
    """
    if found != NORMALISER:
        raise ModelFolderError("E515", path, folder=path, found=found, expected=NORMALISER)


def check_meta(path: Path, meta: Any) -> FolderMeta:
    """``apollo_restore.json``'s content ``meta`` (read from ``path``) as the schema declares it
    (:class:`~apollo_restore.schema.folder.FolderMeta`).

    Raises:
        ModelFolderError: ``E520`` an ensemble entry of the old format (``"weights"``, no
            ``"members"``); ``E505`` a value the schema refuses; ``E522`` a key it does not declare.
    """
    ensemble = meta.get("ensemble") if isinstance(meta, dict) else None
    if ensemble is not None and (not isinstance(ensemble, dict) or "members" not in ensemble):
        raise ModelFolderError("E520", path)
    try:
        return check(FolderMeta, meta)
    except SchemaError as err:
        raise folder_error(path, err) from None


#: The files whose bytes a model folder's scores depend on (besides :data:`WEIGHTS_PATTERN`).
SCORED_FILES = (CONFIG_FILE, TOKENIZER_FILE)
#: The weights: ``model.safetensors``, or the shards of a large model (``model-00001-of-00004.safetensors``).
WEIGHTS_PATTERN = "model*.safetensors"
#: The fields of ``apollo_restore.json`` the scores depend on: how text is normalised and laid
#: out, and the ensemble (its members, weights and search settings); not the training record.
SCORED_META = ("normaliser", "fim_format", "ensemble", "members", "presentation")
_READ = 1 << 20  # bytes hashed at a time
_known: dict[tuple, dict[str, str]] = {}  # (path, size, mtime, inode) of every part → its digests


def fingerprint_parts(folder: str | Path) -> dict[str, str]:
    """SHA-256 (16 hex digits) of each part of a model folder its scores depend on: ``weights``
    (every :data:`WEIGHTS_PATTERN` file, name and bytes), ``config``, ``tokenizer`` (bytes of
    :data:`SCORED_FILES`) and ``settings`` (the :data:`SCORED_META` fields of
    ``apollo_restore.json``, as canonical JSON). Other files (a README, ``junk.bin``, the
    calibration itself, ``generation_config.json``) do not count. A missing file counts as
    missing (the load that follows names it). Memoised per process on each file's path, size,
    modification time and inode: hashing is the cost (the shipped folder's 20.7 MB: 55–120 ms on a
    shared, loaded 2-core machine, as long as SHA-256 of the bytes alone).
    """
    folder = Path(folder)
    weights = sorted(p for p in folder.glob(WEIGHTS_PATTERN) if p.is_file())
    files = [*weights, *(folder / name for name in (*SCORED_FILES, META_FILE))]
    key = tuple(_stamp(path) for path in files)
    if key not in _known:
        parts = {"weights": digest(*(c for path in weights for c in (f"{path.name}\0".encode(), _chunks(path))))}
        for part, name in zip(("config", "tokenizer"), SCORED_FILES):
            parts[part] = digest(_chunks(folder / name))
        meta = _meta_or_none(folder / META_FILE)
        scored = {name: meta.get(name) for name in SCORED_META} if isinstance(meta, dict) else meta
        parts["settings"] = digest(json.dumps(scored, sort_keys=True, ensure_ascii=False, allow_nan=True))
        _known[key] = parts
    return dict(_known[key])


def files_fingerprint(folder: Path, names: tuple[str, ...]) -> str:
    """The fingerprint of a folder's files ``names``: each name and its bytes, in order (a marker
    for a file that is missing or not a regular file, which the load that follows refuses). For a
    folder whose answers depend on all of its files (the attribution folder)."""
    return digest(*(c for name in names for c in (f"{name}\0".encode(), _chunks(Path(folder) / name))))


def fingerprint(folder: str | Path) -> str:
    """Identity of a model folder's scores: SHA-256 (16 hex digits) of :func:`fingerprint_parts`
    (the weights, config, tokenizer and scoring settings, nothing else)."""
    return digest(json.dumps(fingerprint_parts(folder), sort_keys=True))


def _stamp(path: Path) -> tuple:
    """What tells a file changed: its path, size, modification time (ns) and inode (``None`` if missing)."""
    try:
        st = path.stat()
    except OSError:
        return (str(path), None)
    return (str(path), st.st_size, st.st_mtime_ns, st.st_ino)


def _chunks(path: Path) -> Iterator[bytes]:
    """``path``'s bytes a MiB at a time (a marker when it cannot be read or is not a regular
    file: a FIFO is never opened, a device never read; the load that follows refuses it)."""
    try:
        check_regular(path)
        with open(path, "rb") as handle:
            while chunk := handle.read(_READ):
                yield chunk
    except (OSError, FileError):
        yield b"\0missing\0"


def _meta_or_none(path: Path) -> Any:
    """``apollo_restore.json`` parsed (``None`` missing, its bytes' text when it does not parse,
    ``"unreadable"`` when it is not a regular file of at most :data:`MAX_JSON_BYTES`: the load
    that follows refuses it with a numbered error)."""
    try:
        raw = read_regular(path, MAX_JSON_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, FileError):
        return "unreadable"
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw.hex()
