"""Load the restorer a model folder describes: the neural model alone, or its ensemble with the
classical members, wrapped for presentation (edition forms, calibration).

    from apollo_restore.restoration.load import load_restorer
    restorer = load_restorer()        # the embedded default model, as the CLI loads it
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path

from apollo_restore.data.orthography import default_forms
from apollo_restore.errors import Errors
from apollo_restore.model.folder import META_FILE, fingerprint, read_meta
from apollo_restore.restoration.config import DEFAULT_MODEL, DEFAULT_RESTORE_CONFIG, RestoreConfig
from apollo_restore.restoration.members.ensemble import Ensemble
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.members.registry import build_member, ensemble_entry, member_class, member_entries
from apollo_restore.restoration.presentation.present import Presented
from apollo_restore.restoration.ranking.calibration import CALIBRATION_FILE, Calibration, Scoring, mismatch
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.ranking.order import Ranking
from apollo_restore.restoration.restorer import LANGUAGE_MODEL_KINDS

log = logging.getLogger(__name__)


def load_restorer(
    folder: str | Path | None = None,
    config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
    neural_only: bool = False,
    present: bool = True,
    device: str = "cpu",
) -> Presented | NeuralMember | Ensemble:
    """The restorer a model folder describes (default: the embedded model), its neural model on
    ``device`` (``"cpu"``, ``"cuda"``).

    With ``present`` (the default) it is wrapped in :class:`Presented`: readings carry their
    edition form (the package's form table) and are ranked by the folder's stages 3–4
    (:class:`~apollo_restore.restoration.ranking.order.Ranking`): doubtful readings are demoted by its
    ``presentation.demotions`` factors (:meth:`Demotions.of_folder`) and, when the folder has a
    ``calibration.json`` fitted on these very scores (this folder, these members, this arithmetic:
    :func:`calibration_for`), probabilities are calibrated; ``present=False`` gives the bare
    restorer (for fitting).

    Bare, a folder whose ``apollo_restore.json`` has an ``ensemble`` entry gives an :class:`Ensemble`
    of the members it lists by name (``"members": [{"name", "weight", "options"}]``, registered in
    :mod:`apollo_restore.restoration.members.registry`: ``neural``, ``infini``, ``ngram``, ``length``,
    ``copy``, ``words``), searched with its ``"search"`` settings (``hint_slack``, the letters
    beyond a hint every member searches; ``beam_width``, the free rows the neural beam keeps per
    step, unless ``config`` sets one). Any other folder (or ``neural_only=True``) gives the plain
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
    restorer = _load_bare(path, config, neural_only, device)
    if not present:
        return restorer
    demotions = Demotions.of_folder(read_meta(path), path / META_FILE)
    scoring = scoring_of(path, config, neural_only, device)
    neural = restorer if isinstance(restorer, NeuralMember) else restorer.neural
    if isinstance(neural, NeuralMember):  # int8 asked for where PyTorch has no int8 kernel runs in fp32
        scoring = replace(scoring, precision=neural.precision)
    return Presented(restorer, default_forms(), Ranking(demotions, calibration_for(path, scoring)), scoring.fingerprint)


def scoring_of(
    folder: Path, config: RestoreConfig = DEFAULT_RESTORE_CONFIG, neural_only: bool = False, device: str = "cpu"
) -> Scoring:
    """What scores the readings of the restorer :func:`load_restorer` builds from ``folder`` with these
    options: the folder's fingerprint, the members weighted above 0 (``neural`` alone without an
    ensemble or with ``neural_only=True``) and the neural model's arithmetic (``config.precision``,
    else the folder's ``search.precision``, else fp32; ``gpu`` on a GPU). Reads the folder's
    settings only (nothing is loaded).

    Raises:
        ModelFolderError, FileNotFoundError: as :func:`load_restorer`, for a broken folder.
    """
    spec = read_meta(folder).get("ensemble")
    precision = config.precision
    members = "neural"
    if spec and not neural_only:
        search = search_settings(folder, spec, config)
        members = "+".join(e.label for e in member_entries(folder, spec, search, device) if e.weight > 0)
        precision = search.precision
    arithmetic = (precision or "fp32") if device == "cpu" else "gpu"
    return Scoring(fingerprint(folder), members, arithmetic)


def calibration_for(folder: Path, scoring: Scoring) -> Calibration | None:
    """The folder's calibration when it was fitted for ``scoring``'s scores, else ``None`` (also
    when it has none): then a warning says why (:func:`~.calibration.mismatch`) and
    readings are shown uncalibrated (``calibrated: false``) until ``apollo-restore tune --what
    calibration`` fits it again.

    Raises:
        ModelFolderError: a ``calibration.json`` the schema refuses (``E503``–``E505``, ``E517``, ``E522``).
    """
    path = folder / CALIBRATION_FILE
    if not os.path.lexists(path):  # a dangling link is refused (E220), not taken for no calibration
        return None
    cal = Calibration.load(path)
    why = mismatch(cal, folder, scoring)
    if why is not None:
        log.warning(
            "%s is not applied: %s; probabilities are shown uncalibrated; rerun apollo-restore tune --what calibration",
            path, why,
        )  # fmt: skip
        return None
    return cal


def _load_bare(path: Path, config: RestoreConfig, neural_only: bool, device: str) -> NeuralMember | Ensemble:
    """The folder's restorer without presentation (see :func:`load_restorer`).

    Raises:
        FileNotFoundError: no model folder, or a member file the folder names is missing (E501).
        ModelFolderError: a broken file in the folder (``E503``–``E512``), a bad member or search
            setting (``E505``, ``E520``–``E522``).
        ValueError: an ensemble with no language model weighted above 0 (E502), or a GPU device
            this PyTorch cannot see (E513).
    """
    spec = read_meta(path).get("ensemble")
    if neural_only or not spec:
        return NeuralMember.load(path, config=config, device=device)
    search = search_settings(path, spec, config)  # checked before anything loads: a broken folder fails at once
    entries = [e for e in member_entries(path, spec, search, device) if e.weight > 0]
    if not any(member_class(e.name).kind in LANGUAGE_MODEL_KINDS for e in entries):
        raise ValueError(Errors.E502.format(folder=path))
    members = [(build_member(path, e, search, device), e.weight) for e in entries]
    neural = next(
        (restorer for (restorer, _), e in zip(members, entries) if member_class(e.name).kind == "neural"), None
    )
    if neural is None:  # for reports (bits per character), loaded when first asked

        def neural() -> NeuralMember:
            return NeuralMember.load(path, config=search, device=device)

    label = "+".join(e.label for e in entries)
    return Ensemble(members, name=f"{path.name} ({label})", config=search, neural=neural)


def search_settings(path: Path, spec: dict, config: RestoreConfig) -> RestoreConfig:
    """``config`` with the folder's ``"search"`` settings
    (:class:`~apollo_restore.schema.folder.Search`): its ``hint_slack``, and its ``beam_width``
    and ``precision`` unless ``config`` sets them.

    Raises:
        ModelFolderError: what the schema refuses, naming the field (``E505``: a number out of
            its bounds, an unknown precision, not an object; ``E522``: a setting it does not know).
    """
    search = ensemble_entry(path / META_FILE, spec).search
    if search.hint_slack is not None:
        config = config.replace(hint_slack=search.hint_slack)
    if search.beam_width is not None and config.beam_width is None:
        config = config.replace(beam_width=search.beam_width)
    if search.precision is not None and config.precision is None:
        config = config.replace(precision=search.precision)
    return config
