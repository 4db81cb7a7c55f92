"""Load the filler a model folder describes: the neural model alone, or its ensemble with the
classical members, wrapped for presentation (edition forms, calibration).

    from apollo_restore.restoration.load import load_filler
    filler = load_filler()          # the embedded default model, as the CLI loads it
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from apollo_restore.data.orthography import default_forms
from apollo_restore.errors import Errors, ModelFolderError
from apollo_restore.model.folder import META_FILE, read_meta
from apollo_restore.model.verify import check_whole
from apollo_restore.restoration.config import DEFAULT_MODEL, DEFAULT_RESTORE_CONFIG, PRECISIONS, RestoreConfig
from apollo_restore.restoration.filler import LANGUAGE_MODEL_KINDS, kind_of
from apollo_restore.restoration.members.ensemble import Ensemble
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.members.registry import build_member, member_entries
from apollo_restore.restoration.presentation.calibration import load_for
from apollo_restore.restoration.presentation.present import Demotions, Presented


def load_filler(
    folder: str | Path | None = None,
    config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
    use_ngram: bool = True,
    present: bool = True,
    device: str = "cpu",
) -> Presented | NeuralMember | Ensemble:
    """The restorer a model folder describes (default: the embedded model), its neural model on
    ``device`` (``"cpu"``, ``"cuda"``).

    With ``present`` (the default) it is wrapped in :class:`Presented`: readings carry their
    edition form (the package's form table), doubtful readings are demoted by the folder's
    ``presentation.demotions`` factors (:meth:`Demotions.of_folder`) and, when the folder has a
    ``calibration.json`` fitted on this very model, probabilities are calibrated; ``present=False`` gives the bare
    filler (for fitting).

    Bare, a folder whose ``apollo_restore.json`` has an ``ensemble`` entry gives an :class:`Ensemble`
    of the members it lists by name (``"members": [{"name", "weight", "options"}]``, registered in
    :mod:`apollo_restore.restoration.members.registry`: ``neural``, ``infini``, ``ngram``, ``length``,
    ``copy``, ``words``), searched with its ``"search"`` settings (``hint_slack``, the letters
    beyond a hint every member searches; ``beam_width``, the free rows the neural beam keeps per
    step, unless ``config`` sets one). Any other folder (or ``use_ngram=False``) gives the plain
    neural :class:`NeuralMember`. A member weighted 0 is left out (its search would change no
    ranking). A member file that is missing is an error, never a silent fall-back to the neural
    model alone. Format: ``docs/model-folders.md``.

    Raises:
        FileNotFoundError: no model in the folder, or a member file it names is missing (E501).
        ModelFolderError: a broken file in the folder, weights its config does not describe
            (``E503``–``E512``, :mod:`apollo_restore.model.verify`), a member or search setting of
            its ensemble entry that is not what it must be (``E505``), an entry of the old
            format (``E520``), an unknown member (``E521``) or option (``E522``).
        ValueError: an ensemble with no language model weighted above 0 (E502), or a GPU device
            this PyTorch cannot see (E513).
    """
    path = Path(folder) if folder else DEFAULT_MODEL
    filler = _load_bare(path, config, use_ngram, device)
    if not present:
        return filler
    demotions = Demotions.of_folder(read_meta(path), path / META_FILE)
    return Presented(filler, default_forms(), load_for(path), demotions)


def _load_bare(path: Path, config: RestoreConfig, use_ngram: bool, device: str) -> NeuralMember | Ensemble:
    """The folder's filler without presentation (see :func:`load_filler`).

    Raises:
        FileNotFoundError: no model folder, or a member file the folder names is missing (E501).
        ModelFolderError: a broken file in the folder (``E503``–``E512``), a bad member or search
            setting (``E505``, ``E520``–``E522``).
        ValueError: an ensemble with no language model weighted above 0 (E502), or a GPU device
            this PyTorch cannot see (E513).
    """
    spec = read_meta(path).get("ensemble")
    if not (use_ngram and spec):
        return NeuralMember.load(path, config=config, device=device)
    search = search_settings(path, spec, config)  # checked before anything loads: a broken folder fails at once
    entries = [e for e in member_entries(path, spec, search, device) if e.weight > 0]
    if not any(e.kind in LANGUAGE_MODEL_KINDS for e in entries):
        raise ValueError(Errors.E502.format(folder=path))
    members = [(build_member(path, e, search, device), e.weight) for e in entries]
    neural = next((filler for filler, _ in members if kind_of(filler) == "neural"), None)
    if neural is None:  # for reports (bits per character), loaded when first asked

        def neural() -> NeuralMember:
            return NeuralMember.load(path, config=search, device=device)

    label = "+".join(e.label for e in entries)
    return Ensemble(members, name=f"{path.name} ({label})", config=search, neural=neural)


def search_settings(path: Path, spec: dict, config: RestoreConfig) -> RestoreConfig:
    """``config`` with the folder's ``"search"`` settings: its ``hint_slack``, and its
    ``beam_width`` and ``precision`` unless ``config`` sets them.

    Raises:
        ModelFolderError: ``E505`` naming the field, when a setting is not a whole number (slack
            ≥ 0, width ≥ 1) or a known precision, or the entry is not an object; ``E522`` for a
            setting it does not know.
    """
    search = spec.get("search", {}) if isinstance(spec, dict) else {}  # another entry: E520 from member_entries
    file = path / META_FILE
    if not isinstance(search, dict):
        raise ModelFolderError("E505", file, field="ensemble.search", value=search, expected="a JSON object")
    for key in search:
        if key not in ("hint_slack", "beam_width", "precision"):
            known, name = "hint_slack, beam_width, precision", "the search entry"
            raise ModelFolderError("E522", file, field="ensemble.search", option=key, name=name, known=known)
    slack = search.get("hint_slack")
    width = search.get("beam_width")
    if slack is not None:
        config = replace(config, hint_slack=check_whole(file, "ensemble.search.hint_slack", slack, 0))
    if width is not None and config.beam_width is None:
        config = replace(config, beam_width=check_whole(file, "ensemble.search.beam_width", width, 1))
    precision = search.get("precision")
    if precision is not None and config.precision is None:
        if precision not in PRECISIONS:
            expected = " or ".join(f'"{p}"' for p in PRECISIONS)
            raise ModelFolderError("E505", file, field="ensemble.search.precision", value=precision, expected=expected)
        config = replace(config, precision=precision)
    return config
