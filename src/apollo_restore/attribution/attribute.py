"""One door for dating and placing a text: its input read as restore reads it, the model, the dated parallels.

    from apollo_restore.attribution.attribute import attribute
    found = attribute("ἔτους ιβ Αὐτοκράτορος Καίσαρος Τραιανοῦ Ἁδριανοῦ Σεβαστοῦ [.8]")
    found.year, found.low, found.high, found.places[0], found.parallels[:1]

The text is Leiden, EpiDoc XML or Beta Code (:func:`~apollo_restore.data.textchecks.read_source`,
as ``restore`` reads it, with its refusals: ``E312`` for a machine reading ``⁅ ⁆`` however
written, and its warnings: ``W303`` Beta Code converted, ``W301`` letters of other scripts), or
plain lower-case letters without accents where each ``-`` is one lost letter. Supplements
``[αβγ]`` are read as the editor's (in the text); lost letters break the n-grams, and so does a
letter of another script (a Latin or Cyrillic look-alike is read as a lost letter: no formula is
read from the fragments it leaves). A text with fewer than :data:`MIN_LETTERS` Greek letters, or
not Greek, is refused (``E801``, ``E308``); under :data:`~.model.FEW_LETTERS` the answer says it
knows little.

**Parallels**: the training documents sharing the longest runs (at least :data:`PARALLEL_RUN`
letters) with the text (:func:`~apollo_restore.retrieve.provenance.provenance` on the text index),
each with its date and place from the model folder's ``documents.tsv.xz``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from apollo_restore.attribution.folder import check_corpus, read_labels
from apollo_restore.attribution.model import AttributionModel, default_folder
from apollo_restore.data.document import Lacuna, Supplied, Text, render
from apollo_restore.data.normalise import GREEK_LETTERS, letter_count, normalise_with_gaps
from apollo_restore.data.readers.leiden import parse_leiden_with_gaps
from apollo_restore.data.textchecks import FOREIGN_LETTER, check_text, letter_warnings, read_source
from apollo_restore.data.textindex import TextIndex
from apollo_restore.errors import AttributionError, Errors, RequestError
from apollo_restore.retrieve.provenance import provenance
from apollo_restore.schema.answers import Attribution, DatedParallel
from apollo_restore.schema.limits import DEFAULT_REQUEST_LIMITS

#: Fewest Greek letters a text must hold to be attributed at all.
MIN_LETTERS = 10
#: Shortest run shared with a training document that makes it a parallel (letters).
PARALLEL_RUN = 20
#: Documents sharing runs looked at per dated parallel wanted (undated ones are passed over).
_LOOKED_AT = 4
_PLAIN = re.compile(f"[{GREEK_LETTERS}\\s\\-]+")


def read_text(text: Any, name: str = "the text") -> str:
    """The ``norm.v1`` text (``-`` per lost letter) of what a user gives (:func:`read_input`'s text)."""
    return read_input(text, name)[0]


def read_input(text: Any, name: str = "the text") -> tuple[str, list[str]]:
    """The ``norm.v1`` text (``-`` per lost letter) of what a user gives, and the warnings
    ``restore`` would give it (``W303``, ``W301``; ``W302`` is restoration's own and left out).

    Raises:
        RequestError: ``E300`` (empty), ``E309``/``E310``/``E302``/``E312`` (:func:`check_text`,
            an EpiDoc file's decoded text too), ``E313`` (broken EpiDoc), ``E308`` (not Greek).
        LeidenError: malformed Leiden.
    """
    if isinstance(text, str) and not text.strip():
        raise RequestError("E300")
    if isinstance(text, str) and _PLAIN.fullmatch(text):  # the published test sets' form: '-' one lost letter
        check_text(text, DEFAULT_REQUEST_LIMITS)
        warnings = letter_warnings([text.replace("-", "")], DEFAULT_REQUEST_LIMITS)
        return normalise_with_gaps(text), _kept(warnings)
    leiden, kind = read_source(text, DEFAULT_REQUEST_LIMITS, name)
    doc, _ = parse_leiden_with_gaps(leiden)
    warnings = _kept(letter_warnings((getattr(seg, "text", "") for seg in doc.segments), DEFAULT_REQUEST_LIMITS))
    if kind == "betacode":
        preview = leiden if len(leiden) <= 60 else leiden[:59] + "…"
        warnings.insert(0, Errors.W303.format(preview=" ".join(preview.split())))
    doc.segments[:] = [part for seg in doc.segments for part in _foreign_as_lost(seg)]
    return render(doc).text, warnings


def _kept(warnings: list[str]) -> list[str]:
    """``restore``'s letter warnings that concern a date and place (``W302`` counts letters around gaps)."""
    return [w for w in warnings if not w.startswith("[W302]")]


def _foreign_as_lost(seg: Any) -> list[Any]:
    """A text segment with each letter of another script (Latin, Cyrillic) as one lost letter:
    the words it stood in are broken, not glued from what is left."""
    if not isinstance(seg, (Text, Supplied)) or not FOREIGN_LETTER.search(seg.text):
        return [seg]
    out: list[Any] = []
    for i, piece in enumerate(FOREIGN_LETTER.split(seg.text)):
        if i:
            out.append(Lacuna(1))
        if piece:
            out.append(replace(seg, text=piece))
    return out


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
                    limit: int = 5) -> list[DatedParallel]:  # fmt: skip
    """The ``limit`` dated training documents sharing the longest runs with ``norm``, with their
    dates and places; a document of no known date is no dated parallel (it is left out).

    Raises:
        ModelFolderError: ``E534`` the labels are damaged; ``E535`` they label another corpus than
            the index's (:func:`~.folder.check_corpus`).
    """
    labels = document_labels(folder)
    index = index or TextIndex.shared()
    check_corpus(folder_path(folder), load_model(folder).settings, index)
    try:
        found = provenance(norm, index=index, min_run=PARALLEL_RUN, limit=_LOOKED_AT * limit)
    except ValueError:  # shorter than one run: no parallel can be found
        return []
    out = []
    for hit in found.documents:
        if len(out) == limit:
            break
        label = labels.get((hit.source, hit.doc), {})
        if label.get("lo") is None:
            continue
        out.append(DatedParallel(doc=hit.doc, label=hit.label or hit.doc, source=hit.source, url=hit.url,
                                 longest=hit.longest, snippet=hit.snippet, lo=label.get("lo"), hi=label.get("hi"),
                                 place=label.get("place", "")))  # fmt: skip
    return out


def attribute(text: Any, folder: str | None = None, parallels: bool = True, index: TextIndex | None = None,
              name: str = "the text") -> Attribution:  # fmt: skip
    """The date, the top-10 places and (with ``parallels``) the dated parallels of ``text``.

    Raises:
        AttributionError: ``E801`` (fewer than :data:`MIN_LETTERS` Greek letters), ``E802`` (no model).
        RequestError, LeidenError: the text cannot be read (:func:`read_text`).
    """
    norm, warnings = read_input(text, name)
    n = letter_count(norm)
    if n < MIN_LETTERS:
        raise AttributionError("E801", letters=n, minimum=MIN_LETTERS)
    result = load_model(folder).predict(norm, n)
    result.warnings[:0] = warnings
    if parallels:
        result.parallels = dated_parallels(norm, folder, index)
    return result
