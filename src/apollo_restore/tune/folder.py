"""What ``apollo-restore tune`` reads from and writes into a model folder.

    weights = read_weights(folder)                       # {"neural": 1.0, "infini": 1.0, ...}
    meta = with_weights(read_meta(folder), {"neural": 0.5, ...})
    write_meta(folder, meta)                             # apollo_restore.json, atomically

The ensemble entry's format is known here only (:func:`read_weights`, :func:`with_weights`,
:func:`named_members`): the rest of the package sees ``{member name: weight}`` and a filler per name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from apollo_restore.data.orthography import default_forms
from apollo_restore.data.outputs import write_atomic
from apollo_restore.errors import Errors
from apollo_restore.model.folder import META_FILE, read_meta
from apollo_restore.restore.calibration import CALIBRATION_FILE, Calibration
from apollo_restore.restore.config import RestoreConfig
from apollo_restore.restore.context_words import DocumentWords, Vocabulary
from apollo_restore.restore.copy_fill import DocumentCopy
from apollo_restore.restore.engine import Restorer
from apollo_restore.restore.ensemble import LengthPrior, member_config
from apollo_restore.restore.filler import GapFiller
from apollo_restore.restore.infini_fill import load_infini
from apollo_restore.restore.ngram_fill import load_ngram
from apollo_restore.restore.present import PRESENTATION, Demotions

#: What ``tune`` fits, in the order it fits them (each step uses the ones before it).
STEPS = ("weights", "demotions", "calibration")


class TuneError(ValueError):
    """A model folder or corpus that ``tune`` cannot fit as asked (``E7xx``)."""

    def __init__(self, code: str, **fields: object) -> None:
        super().__init__(getattr(Errors, code).format(**fields))
        self.code = code


def read_weights(folder: Path) -> dict[str, float]:
    """The folder's ensemble member weights (``{}``: no ensemble entry, the neural model alone)."""
    return dict(read_meta(folder).get("ensemble", {}).get("weights", {}))


def hint_slack(folder: Path) -> int:
    """Letters beyond a hint the folder's ensemble searches (0 without an ensemble entry)."""
    return int(read_meta(folder).get("ensemble", {}).get("hint_slack", 0))


def with_weights(meta: dict[str, Any], weights: dict[str, float], slack: int, chosen_by: str) -> dict[str, Any]:
    """``meta`` with its ensemble entry's ``weights``, ``hint_slack`` and ``chosen_by`` replaced."""
    ensemble = dict(meta["ensemble"], weights=dict(weights), hint_slack=slack, chosen_by=chosen_by)
    return dict(meta, ensemble=ensemble)


def with_demotions(meta: dict[str, Any], demotions: Demotions) -> dict[str, Any]:
    """``meta`` with ``presentation.demotions`` replaced (read back by :meth:`Demotions.of_folder`)."""
    return dict(meta, **{PRESENTATION: dict(meta.get(PRESENTATION, {}), demotions=demotions.to_json())})


def named_members(folder: Path, config: RestoreConfig, slack: int, device: str = "cpu") -> dict[str, GapFiller]:
    """Every member the folder's ensemble entry names, weighted 0 or not, by its weight's name,
    built as :func:`~apollo_restore.restore.load.load_filler` builds them (the neural one searching
    ``slack`` letters beyond a hint itself).

    Raises:
        TuneError: ``E702`` when the folder has no ensemble entry.
    """
    spec = read_meta(folder).get("ensemble")
    if not spec:
        raise TuneError("E702", folder=folder)
    search = member_config(config, slack, spec.get("beam_width"))
    members: dict[str, GapFiller] = {"neural": Restorer.load(folder, config=search, device=device)}
    if "infini" in spec:
        members["infini"] = load_infini("forward", **spec["infini"])
        members["infini_backward"] = load_infini("backward", **spec["infini"])
    for name in ("ngram", "backward"):
        if "infini" not in spec and spec.get(name):
            members[name] = load_ngram(folder / spec[name])
    members["copy"] = DocumentCopy()
    forms = default_forms() if spec.get("words_vocabulary") else None
    members["words"] = DocumentWords(vocabulary=forms and Vocabulary(forms.keys))
    members["length"] = LengthPrior()
    return {name: m for name, m in members.items() if name in spec["weights"]}


def held(folder: Path, steps: list[str]) -> list[str]:
    """What the folder already holds of what ``steps`` would write (its fitted or shipped values)."""
    meta = read_meta(folder)
    found = {
        "weights": "ensemble" in meta and "ensemble weights",
        "demotions": "demotions" in meta.get(PRESENTATION, {}) and "presentation.demotions",
        "calibration": (folder / CALIBRATION_FILE).exists() and CALIBRATION_FILE,
    }
    return [found[step] for step in steps if found[step]]


def write_meta(folder: Path, meta: dict[str, Any]) -> None:
    """Write ``apollo_restore.json`` whole (a temporary file renamed over it)."""
    text = json.dumps(meta, ensure_ascii=False, indent=1) + "\n"
    write_atomic(folder / META_FILE, text.encode())


def write_calibration(folder: Path, calibration: Calibration) -> None:
    """Write ``calibration.json`` whole (a temporary file renamed over it)."""
    tmp = folder / f".{CALIBRATION_FILE}.tune"
    calibration.save(tmp)
    tmp.replace(folder / CALIBRATION_FILE)
