"""A model folder's metadata (``apollo_restore.json``), read without importing torch or
``transformers``: which normaliser and FIM layout the model was trained with.

    meta = read_meta(folder)     # raises ValueError for a folder trained otherwise, or a broken JSON file
    layout = layout_of(meta)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from apollo_restore.data.normalise import NORMALISER
from apollo_restore.errors import Errors
from apollo_restore.fim.layout import DEFAULT_LAYOUT, LAYOUTS, FimLayout, layout_named
from apollo_restore.model.verify import CONFIG_FILE, read_folder_json

META_FILE = "apollo_restore.json"


def layout_of(meta: dict[str, Any]) -> FimLayout:
    """The FIM layout a model folder's metadata names (folders from before v2 lack the
    field only if they predate it; they used ``fim.spm.v1``)."""
    return layout_named(meta.get("fim_format", "apollo_restore fim.spm.v1"))


def read_meta(folder: Path) -> dict[str, Any]:
    """The folder's ``apollo_restore.json`` (``{}`` when it has none), checked, after every JSON
    file of the folder (:func:`~apollo_restore.model.verify.read_folder_json`).

    Raises:
        FileNotFoundError: no model folder there (``config.json`` missing, ``E514``).
        ModelFolderError: a JSON file that does not parse, or a bad ``config.json`` (``E503``–``E505``).
        ValueError: it was trained with another normaliser or FIM layout (``E515``, ``E516``).
    """
    folder = Path(folder)
    if not (folder / CONFIG_FILE).exists():
        raise FileNotFoundError(Errors.E514.format(folder=folder, file=CONFIG_FILE))
    meta = read_folder_json(folder).get(META_FILE, {})
    if meta.get("normaliser", NORMALISER) != NORMALISER:
        raise ValueError(Errors.E515.format(folder=folder, found=meta["normaliser"], expected=NORMALISER))
    if meta.get("fim_format", DEFAULT_LAYOUT.name) not in LAYOUTS:
        raise ValueError(Errors.E516.format(folder=folder, found=meta["fim_format"], known=", ".join(LAYOUTS)))
    return meta
