"""Load the filler a model folder describes: the neural model alone, or its ensemble with the
classical members, wrapped for presentation (edition forms, calibration).

    from apollo_restore.restore.load import load_filler
    filler = load_filler()          # the embedded default model, as the CLI loads it
"""

from __future__ import annotations

from pathlib import Path

from apollo_restore.data.orthography import default_forms
from apollo_restore.errors import Errors
from apollo_restore.model.folder import META_FILE, read_meta
from apollo_restore.model.verify import check_whole
from apollo_restore.restore.calibration import load_for
from apollo_restore.restore.config import DEFAULT_MODEL, DEFAULT_RESTORE_CONFIG, RestoreConfig
from apollo_restore.restore.context_words import DocumentWords, Vocabulary
from apollo_restore.restore.copy_fill import DocumentCopy
from apollo_restore.restore.engine import Restorer
from apollo_restore.restore.ensemble import Ensemble, LengthPrior, member_config
from apollo_restore.restore.filler import GapFiller
from apollo_restore.restore.infini_fill import load_infini
from apollo_restore.restore.length_model import LostLength
from apollo_restore.restore.ngram_fill import load_ngram
from apollo_restore.restore.present import Demotions, Presented


def load_filler(
    folder: str | Path | None = None,
    config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
    use_ngram: bool = True,
    present: bool = True,
    device: str = "cpu",
) -> Presented | Restorer | Ensemble:
    """The restorer a model folder describes (default: the embedded model), its neural model on
    ``device`` (``"cpu"``, ``"cuda"``).

    With ``present`` (the default) it is wrapped in :class:`Presented`: readings carry their
    edition form (the package's form table), doubtful readings are demoted by the folder's
    ``presentation.demotions`` factors (:meth:`Demotions.of_folder`) and, when the folder has a
    ``calibration.json`` fitted on this very model, probabilities are calibrated; ``present=False`` gives the bare
    filler (for fitting).

    Bare, a folder whose ``apollo_restore.json`` has an ``ensemble`` entry gives an :class:`Ensemble`
    of its neural model, classical members and a :class:`LengthPrior`; the classical members are
    either the unbounded-order models on the packaged text index (``"infini": {model options}``,
    weights ``infini`` and ``infini_backward``), e.g. ``{"infini": {"discount": 0.6},
    "weights": {"neural": 0.0, "infini": 1.0, "infini_backward": 1.0, "length": 4.0}}``, or
    n-gram files in the folder (``"ngram": "ngram.npz", "backward": "ngram-backward.npz"``,
    weights ``ngram`` and ``backward``). Weight ``copy`` adds the member that copies from the
    gap's own document (:class:`DocumentCopy`), weight ``words`` the member proposing and
    scoring readings made of its words (:class:`DocumentWords`; ``"words_vocabulary": true``
    adds completions by known words); ``"hint_slack"`` is how many letters beyond a hint the
    members search and ``"beam_width"`` the free rows the neural beam keeps per step (unless
    ``config`` sets one); a ``"lost_length"`` entry (knots and values,
    fitted on validation with these weights by ``benchmarks/document_length.py``) adds the
    no-hint length prior :class:`LostLength`. Any other folder (or ``use_ngram=False``) gives the
    plain neural :class:`Restorer`. A member weighted 0 is left out (its search would change
    no ranking). A member file that is missing is an error, never a silent fall-back to the
    neural model alone.

    Raises:
        FileNotFoundError: no model in the folder, or a member file it names is missing (E501).
        ModelFolderError: a broken file in the folder, weights its config does not describe
            (``E503``–``E512``, :mod:`apollo_restore.model.verify`), or a search setting of its
            ensemble entry that is not a whole number (``E505``).
        ValueError: an ensemble entry with no classical member (E502), or a GPU device this
            PyTorch cannot see (E513).
    """
    path = Path(folder) if folder else DEFAULT_MODEL
    filler = _load_bare(path, config, use_ngram, device)
    if not present:
        return filler
    demotions = Demotions.of_folder(read_meta(path), path / META_FILE)
    return Presented(filler, default_forms(), load_for(path), demotions)


def _load_bare(path: Path, config: RestoreConfig, use_ngram: bool, device: str) -> Restorer | Ensemble:
    """The folder's filler without presentation (see :func:`load_filler`).

    Raises:
        FileNotFoundError: no model folder, or a member file the folder names is missing (E501).
        ModelFolderError: a broken file in the folder (``E503``–``E512``), a bad search setting (``E505``).
        ValueError: an ensemble entry with no classical member (E502), or a GPU device this
            PyTorch cannot see (E513).
    """

    def load_neural(search: RestoreConfig = config) -> Restorer:
        return Restorer.load(path, config=search, device=device)

    spec = read_meta(path).get("ensemble")
    if not (use_ngram and spec):
        return load_neural()
    if "infini" not in spec and "ngram" not in spec:
        raise ValueError(Errors.E502.format(folder=path))
    files = [(name, path / spec[name]) for name in ("ngram", "backward") if "infini" not in spec and spec.get(name)]
    for name, file in files:  # checked before anything loads: a broken folder fails at once
        if not file.exists():
            raise FileNotFoundError(Errors.E501.format(folder=path, member=name, path=file))
    weights = spec["weights"]
    slack = _whole(spec, "hint_slack", 0, path) or 0
    search = member_config(config, slack, _whole(spec, "beam_width", 1, path))  # it searches the slack itself
    neural = load_neural(search) if weights["neural"] > 0 else lambda: load_neural(search)
    members: list[tuple[GapFiller, float]] = [(neural, weights["neural"])]
    if "infini" in spec:
        for direction, name in (("forward", "infini"), ("backward", "infini_backward")):
            if weights.get(name, 0.0) > 0:
                members.append((load_infini(direction, **spec["infini"]), weights[name]))
    members += [(load_ngram(file), weights[name]) for name, file in files]
    members.append((DocumentCopy(), weights.get("copy", 0.0)))
    if weights.get("words", 0.0) > 0:
        forms = default_forms() if spec.get("words_vocabulary") else None
        members.append((DocumentWords(vocabulary=forms and Vocabulary(forms.keys)), weights["words"]))
    members.append((LengthPrior(), weights.get("length", 0.0)))
    if "lost_length" in spec:
        members.append((LostLength.from_json(spec["lost_length"]), 1.0))
    members = [(filler, w) for filler, w in members if w > 0]
    label = "+".join(name for name, w in weights.items() if w > 0)
    return Ensemble(members, name=f"{path.name} ({label})", config=config, neural=neural, hint_slack=slack)


def _whole(spec: dict, name: str, least: int, folder: Path) -> int | None:
    """The ensemble entry's whole-number search setting ``name`` (``None`` when absent).

    Raises:
        ModelFolderError: ``E505`` naming the field, when it is not a whole number ≥ ``least``.
    """
    value = spec.get(name)
    return None if value is None else check_whole(folder / META_FILE, f"ensemble.{name}", value, least)
