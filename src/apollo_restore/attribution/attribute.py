"""One door for dating and placing a text: its input read as restore reads it, the model, the dated parallels.

    from apollo_restore.attribution.attribute import attribute
    found = attribute("ἔτους ιβ Αὐτοκράτορος Καίσαρος Τραιανοῦ Ἁδριανοῦ Σεβαστοῦ [.8]")
    found.year, found.low, found.high, found.places[0], found.parallels[:1]

The text is Leiden, EpiDoc XML or Beta Code (:func:`~apollo_restore.data.readers.typed.as_leiden`,
as ``restore`` reads it), or plain lower-case letters without accents where each ``-`` is one
lost letter. Supplements ``[αβγ]`` are read as the editor's (in the text); lost letters break the
n-grams. A text with fewer than :data:`MIN_LETTERS` Greek letters, or not Greek, is refused
(``E801``, ``E308``); under :data:`~.model.FEW_LETTERS` the answer says it knows little.

**Parallels**: the training documents sharing the longest runs (at least :data:`PARALLEL_RUN`
letters) with the text (:func:`~apollo_restore.retrieve.provenance.provenance` on the text index),
each with its date and place from the model folder's ``documents.tsv.xz``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from apollo_restore.attribution.features import letters as count_letters
from apollo_restore.attribution.folder import check_corpus, read_labels
from apollo_restore.attribution.model import Attribution, AttributionModel, default_folder
from apollo_restore.data.document import render
from apollo_restore.data.normalise import normalise_with_gaps
from apollo_restore.data.readers.leiden import parse_leiden_with_gaps
from apollo_restore.data.readers.typed import as_leiden
from apollo_restore.data.textindex import TextIndex
from apollo_restore.errors import AttributionError, RequestError
from apollo_restore.restoration.request import DEFAULT_REQUEST_LIMITS, check_text, letter_warnings
from apollo_restore.retrieve.provenance import provenance

#: Fewest Greek letters a text must hold to be attributed at all.
MIN_LETTERS = 10
#: Shortest run shared with a training document that makes it a parallel (letters).
PARALLEL_RUN = 20
_PLAIN = re.compile(r"[α-ωϛϙϡ\s\-]+")


def read_text(text: Any, name: str = "the text") -> str:
    """The ``norm.v1`` text (``-`` per lost letter) of what a user gives.

    Raises:
        RequestError: ``E300`` (empty), ``E309``/``E310``/``E302``/``E312`` (:func:`check_text`),
            ``E313`` (broken EpiDoc), ``E308`` (not Greek).
        LeidenError: malformed Leiden.
    """
    check_text(text, DEFAULT_REQUEST_LIMITS)
    if not text.strip():
        raise RequestError("E300")
    if _PLAIN.fullmatch(text):  # the published test sets' form: each '-' is one lost letter
        norm = normalise_with_gaps(text)
        letter_warnings([text.replace("-", "")], DEFAULT_REQUEST_LIMITS)
        return norm
    leiden, _ = as_leiden(text, name)
    doc, _ = parse_leiden_with_gaps(leiden)
    letter_warnings((getattr(seg, "text", "") for seg in doc.segments), DEFAULT_REQUEST_LIMITS)
    return render(doc).text


def folder_path(folder: str | None = None) -> Path:
    """The attribution folder ``folder`` names (default: the packaged one)."""
    return Path(folder) if folder else default_folder()


@lru_cache(maxsize=4)
def load_model(folder: str | None = None) -> AttributionModel:
    """The model of ``folder`` (default: the packaged one), loaded once, every file checked
    (:mod:`.folder`).

    Raises:
        AttributionError: ``E802``: the folder or one of its files is missing.
        FileError, ModelFolderError: a file that is not what the folder's contract declares
            (``E220``, ``E5xx`` naming the file).
    """
    return AttributionModel.load(folder_path(folder))


@lru_cache(maxsize=4)
def document_labels(folder: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    """``(source, id)`` → ``{"lo", "hi", "place"}`` of the training documents (empty if not
    shipped), read and checked by :func:`~.folder.read_labels` (``E534``)."""
    return read_labels(folder_path(folder), load_model(folder).settings)


def dated_parallels(norm: str, folder: str | None = None, index: TextIndex | None = None,
                    limit: int = 5) -> list[dict[str, Any]]:  # fmt: skip
    """The training documents sharing the longest runs with ``norm``, with their dates and places.

    Raises:
        ModelFolderError: ``E534`` the labels are damaged; ``E535`` they label another corpus than
            the index's (:func:`~.folder.check_corpus`).
    """
    labels = document_labels(folder)
    index = index or TextIndex.shared()
    check_corpus(folder_path(folder), load_model(folder).settings, index)
    try:
        found = provenance(norm, index=index, min_run=PARALLEL_RUN, limit=limit)
    except ValueError:  # shorter than one run: no parallel can be found
        return []
    out = []
    for hit in found.documents:
        label = labels.get((hit.source, hit.doc), {})
        out.append({"doc": hit.doc, "label": hit.label or hit.doc, "source": hit.source, "url": hit.url,
                    "longest": hit.longest, "snippet": hit.snippet, "lo": label.get("lo"), "hi": label.get("hi"),
                    "place": label.get("place", "")})  # fmt: skip
    return out


def attribute(text: Any, folder: str | None = None, parallels: bool = True, index: TextIndex | None = None,
              name: str = "the text") -> Attribution:  # fmt: skip
    """The date, the top-10 places and (with ``parallels``) the dated parallels of ``text``.

    Raises:
        AttributionError: ``E801`` (fewer than :data:`MIN_LETTERS` Greek letters), ``E802`` (no model).
        RequestError, LeidenError: the text cannot be read (:func:`read_text`).
    """
    norm = read_text(text, name)
    n = count_letters(norm)
    if n < MIN_LETTERS:
        raise AttributionError("E801", letters=n, minimum=MIN_LETTERS)
    result = load_model(folder).predict(norm, n)
    if parallels:
        result.parallels = dated_parallels(norm, folder, index)
    return result
