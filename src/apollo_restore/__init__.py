"""apollo-restore: restore lacunae in fragmentary Ancient Greek texts.

import apollo_restore
result = apollo_restore.restore("ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου")
for cand in result.gaps[0].candidates[:3]:
    print(cand.text, round(cand.prob, 3))

Lazy imports: ``import apollo_restore`` runs before every CLI command, so the Python API's
functions import the package code they run inside themselves, not at the top: importing the
package loads neither torch nor a model (``tests/test_layers.py`` reads this paragraph as the
reason of every such import here).
"""

from __future__ import annotations

import os
from functools import lru_cache, partial
from typing import TYPE_CHECKING

from apollo_restore.version import __version__

__all__ = [
    "__version__",
    "restore",
    "provenance",
    "attribute",
    "export",
    "load_restorer",
    "Hint",
    "NeuralMember",
    "Restoration",
    "RestoreRequest",
]

if TYPE_CHECKING:
    from apollo_restore.hint import Hint
    from apollo_restore.restoration.members.neural import NeuralMember
    from apollo_restore.restoration.restorer import Restorer
    from apollo_restore.schema.restoration import Restoration, RestoreRequest


def load_restorer(model: str | None = None, threads: int | None = None) -> Restorer:
    """The restorer of a model folder (default: the embedded model: the neural model in an
    ensemble with its classical members), loaded once per folder.

    Args:
        threads: torch threads from now on (process-wide; default: the cores idle now, at most
            2, as the CLI chooses: :func:`apollo_restore.restoration.threads.use_threads`).

    Raises:
        RequestError: ``model`` is neither a path nor ``None`` (``E310``), ``threads`` is not a
            whole number from 1 to the CPU count (``E311``).
    """
    from apollo_restore.errors import RequestError
    from apollo_restore.restoration.loading import load_with_threads

    if model is not None and not isinstance(model, str | os.PathLike):
        raise RequestError(
            "E310", name="model", expected="a model folder's path (a str or a Path) or None", value=model
        )
    return load_with_threads(partial(_load, os.fspath(model) if model is not None else None), threads)[0]


@lru_cache(maxsize=4)
def _load(model: str | None) -> Restorer:
    """:func:`load_restorer`'s folder, loaded once."""
    from apollo_restore.restoration import load

    return load.load_restorer(model)


def restore(
    text: str | RestoreRequest,
    k: int = 20,
    hints=None,
    pins=None,
    model: str | None = None,
    threads: int | None = None,
    kind: str | None = None,
) -> Restoration:
    """Restore every lacuna of a Leiden text; see :func:`apollo_restore.restoration.driver.restore_text`.

    Args:
        text: the text, or a whole :class:`RestoreRequest` (then ``k``, ``hints``, ``pins`` and
            ``kind`` are its own).
        hints: per-gap hints (gap number, counted from 1 → a :class:`Hint`, ``7``, ``[5, 8]``,
            ``"ca.7"`` or ``None``).
        pins: per-gap readings fixed by the caller (gap number from 1 → reading); the gaps
            after them are restored with them in place.
        threads: torch threads (default: the cores idle now, at most 2, as the CLI chooses).
        kind: ``"documentary"``, ``"literary"`` or ``"inscription"``: the kind of text whose
            calibration the gaps take; ``None``: read from the text.

    Raises:
        RequestError: a request out of limits, not Greek enough, or with no gap (``E3xx``), a
            ``model`` that is not a path (``E310``) or a bad ``threads`` (``E311``), before any
            model is loaded.
        LeidenError: malformed Leiden text (``E0xx``).
    """
    from apollo_restore.restoration.driver import restore_text
    from apollo_restore.restoration.request import validate
    from apollo_restore.schema.restoration import RestoreRequest

    request = validate(text if isinstance(text, RestoreRequest) else RestoreRequest(text, hints, pins, k, kind=kind))
    return restore_text(load_restorer(model, threads), request)  # the request checked before the model loads


def provenance(text: str, min_run: int = 40, limit: int = 20):
    """Training documents sharing runs of at least ``min_run`` letters with ``text`` (the
    packaged text index, built on first use); see :func:`apollo_restore.retrieve.provenance.provenance`."""
    from apollo_restore.retrieve.provenance import provenance as find

    return find(text, min_run=min_run, limit=limit)


def attribute(text: str, parallels: bool = True, model: str | None = None):
    """When and where ``text`` was written: an :class:`~apollo_restore.schema.answers.Attribution`
    (``year``, ``low``/``high`` of the 80 % interval, ``places`` with calibrated probabilities,
    ``parallels``: dated training documents sharing long runs); ``.to_dict()`` is its JSON form.
    ``text`` is Leiden, EpiDoc, Beta Code or plain letters with ``-`` per lost letter; see
    :func:`apollo_restore.attribution.attribute.attribute` (``E801``: too short; ``E308``: not Greek)."""
    from apollo_restore.attribution.attribute import attribute as attribute_text

    return attribute_text(text, folder=model, parallels=parallels)


def export(
    text: str, readings=None, format: str = "leiden", model: str | None = None, fingerprint: str | None = None
) -> str:
    """``text`` (Leiden, or an EpiDoc document) as it came in, with the chosen machine readings
    written into their gaps and marked (Leiden ``⁅reading⁆⁽ᵐ¹⁾`` plus an apparatus; EpiDoc
    ``<supplied resp="#apollo-restore" cert="low">``): the web page's export
    (:func:`apollo_restore.restoration.export.export_checked`). With no reading, the text itself.

    Args:
        readings: gap number (from 1) → a reading (a string, as a pin is given, or a
            :class:`~apollo_restore.restoration.export.MachineReading`).
        format: ``"leiden"`` or ``"epidoc"``.
        model, fingerprint: the model named in the export, with its folder's fingerprint and the
            package version (default: the embedded model, whose readings the CLI gives).

    Raises:
        RequestError: a text or reading holding ``⁅ ⁆`` (``E312``), a reading that is not Greek
            letters (``E307``), a gap the text has not (``E307``), unreadable EpiDoc (``E313``, ``E314``).
        LeidenError: malformed Leiden text.
    """
    from apollo_restore.restoration.export import export_checked

    if model is None:
        from apollo_restore.model.folder import fingerprint as fingerprint_of
        from apollo_restore.restoration.config import DEFAULT_MODEL

        model, fingerprint = "embedded default", fingerprint or fingerprint_of(DEFAULT_MODEL)
    return export_checked(text, readings or {}, model, format, fingerprint=fingerprint)


def __getattr__(name: str):
    if name == "NeuralMember":
        from apollo_restore.restoration.members.neural import NeuralMember

        return NeuralMember
    if name == "Hint":
        from apollo_restore.hint import Hint

        return Hint
    if name in ("Restoration", "RestoreRequest"):
        from apollo_restore.schema import restoration

        return getattr(restoration, name)
    raise AttributeError(name)
