"""What ``apollo-restore tune`` reads from and writes into a model folder.

    weights = read_weights(folder)                       # {"neural": 1.0, "infini": 1.0, ...}
    meta = with_weights(folder, read_meta(folder), {"neural": 0.5, ...}, slack=5, chosen_by="...")
    write_meta(folder, meta)        # apollo_restore.model.folder: apollo_restore.json, atomically

The ensemble entry's format is the registry's (:mod:`apollo_restore.restoration.members.registry`);
here ``tune`` sees its members by label (``{label: weight}`` and a restorer per label).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from apollo_restore.errors import Errors, ModelFolderError
from apollo_restore.model.folder import META_FILE, read_meta
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.load import search_settings
from apollo_restore.restoration.members.registry import build_member, member_entries, with_member_weights
from apollo_restore.restoration.ranking.calibration import CALIBRATION_FILE, Calibration
from apollo_restore.restoration.ranking.demotions import PRESENTATION, Demotions
from apollo_restore.restoration.ranking.order import FITTED_STAGES
from apollo_restore.restoration.restorer import Restorer

#: What ``tune`` fits, in the order it fits them (each step uses the ones before it): the ranking's
#: stages with parameters, by their names (:data:`~apollo_restore.restoration.ranking.order.FITTED_STAGES`).
STEPS = FITTED_STAGES


class TuneError(ValueError):
    """A model folder or corpus that ``tune`` cannot fit as asked (``E7xx``)."""

    def __init__(self, code: str, **fields: object) -> None:
        super().__init__(getattr(Errors, code).format(**fields))
        self.code = code


def read_weights(folder: Path) -> dict[str, float]:
    """The folder's ensemble member weights by label (``{"neural": 1.0, "infini_backward": 0.5,
    …}``; ``{}``: no ensemble entry, the neural model alone).

    Raises:
        ModelFolderError: a broken ensemble entry
            (:func:`~apollo_restore.restoration.members.registry.member_entries`), or two members of one
            label (``E505``: their weights could not be told apart).
    """
    spec = read_meta(folder).get("ensemble")
    if not spec:
        return {}
    entries = member_entries(folder, spec, RestoreConfig())
    labels = [e.label for e in entries]
    for entry in entries:
        if labels.count(entry.label) > 1:  # weights are fitted and written back by label
            expected = "one member per label (tune fits weights by label)"
            raise ModelFolderError("E505", folder / META_FILE, field=entry.field, value=entry.label, expected=expected)
    return dict(zip(labels, (e.weight for e in entries)))


def hint_slack(folder: Path) -> int:
    """Letters beyond a hint the folder's ensemble searches (its ``search.hint_slack``, else the
    default of :class:`~apollo_restore.restoration.config.RestoreConfig`)."""
    spec = read_meta(folder).get("ensemble") or {}
    return search_settings(folder, spec, RestoreConfig()).hint_slack


def with_weights(
    folder: Path, meta: dict[str, Any], weights: dict[str, float], slack: int, chosen_by: str
) -> dict[str, Any]:
    """``meta`` (``folder``'s) with its ensemble members' weights (by label,
    :func:`~apollo_restore.restoration.members.registry.with_member_weights`), ``search.hint_slack``
    and ``chosen_by`` replaced; every other field kept."""
    meta = with_member_weights(folder, meta, weights)
    ensemble = meta["ensemble"]
    search = dict(ensemble.get("search", {}), hint_slack=slack)
    return dict(meta, ensemble=dict(ensemble, search=search, chosen_by=chosen_by))


def with_demotions(meta: dict[str, Any], demotions: Demotions) -> dict[str, Any]:
    """``meta`` with ``presentation.demotions`` replaced (read back by :meth:`Demotions.of_folder`)."""
    return dict(meta, **{PRESENTATION: dict(meta.get(PRESENTATION) or {}, demotions=demotions.to_json())})


def named_members(folder: Path, config: RestoreConfig, slack: int, device: str = "cpu") -> dict[str, Restorer]:
    """Every member the folder's ensemble entry lists, weighted 0 or not, by its label, built by
    its registered factory as :func:`~apollo_restore.restoration.load.load_restorer` builds them, all
    searching ``slack`` letters beyond a hint (the neural one itself, the others given the hint widened).

    Raises:
        TuneError: ``E702`` when the folder has no ensemble entry.
        ModelFolderError: a broken ensemble entry.
    """
    spec = read_meta(folder).get("ensemble")
    if not spec:
        raise TuneError("E702", folder=folder)
    search = search_settings(folder, spec, config).replace(hint_slack=slack)
    return {e.label: build_member(folder, e, search, device) for e in member_entries(folder, spec, search, device)}


def held(folder: Path, steps: list[str]) -> list[str]:
    """What the folder already holds of what ``steps`` would write (its fitted or shipped values)."""
    meta = read_meta(folder)
    found = {
        "weights": "ensemble" in meta and "ensemble weights",
        "demotions": "demotions" in (meta.get(PRESENTATION) or {}) and "presentation.demotions",
        "calibration": os.path.lexists(folder / CALIBRATION_FILE) and CALIBRATION_FILE,
    }
    return [found[step] for step in steps if found[step]]


def write_calibration(folder: Path, calibration: Calibration) -> None:
    """Write ``calibration.json`` whole (:meth:`Calibration.save` writes atomically)."""
    calibration.save(folder / CALIBRATION_FILE)
