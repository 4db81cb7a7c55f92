"""What a scholar gives as a text, read as Leiden: EpiDoc XML and TLG Beta Code besides Leiden itself.

    from apollo_restore.data.readers.typed import as_leiden
    as_leiden("ἔτους [.8] Ἀντωνίνου")         # ('ἔτους [.8] Ἀντωνίνου', 'leiden'): unchanged
    as_leiden("e)/tous [.8] *)antwni/nou")    # ('ἔτους [.8] Ἀντωνίνου', 'betacode')
    as_leiden(open("edition.xml").read())     # ('… [.9] …', 'epidoc'): its Greek edition

One door for every caller: :class:`~apollo_restore.restoration.request.RestoreRequest` reads its text
through :func:`as_leiden`, so the CLI, the Python API, ``predict`` and the web take what the web
page's *Open* takes.

- **EpiDoc** — a text that starts as XML does (``<?xml``, ``<!DOCTYPE``, or a tag with a Latin
  name: ``<TEI``; Leiden's ``<αβ>`` holds Greek) is parsed by the EpiDoc reader
  (:func:`~apollo_restore.data.readers.epidoc.parse_epidoc_file`: supplements, ``<gap>`` with its
  ``quantity``/``atLeast``/``atMost``/``extent``, line breaks) and written back as Leiden
  (:func:`~apollo_restore.data.document.to_leiden`). XML that is broken or holds no Greek edition
  is refused (``E313``, naming the text and the reason).
- **Beta Code** — mostly Latin letters with Beta Code's marks on them (``*`` before a capital,
  breathings ``)`` ``(``, accents ``/`` ``\\`` ``=``, iota subscript ``|`` after a letter), at
  least one mark for every four words: each Beta Code word is converted by the ``betacode``
  package (the TLG Beta Code manual's Greek tables; MIT), Leiden marks between words (brackets,
  dots, dashes, digits, ``?``, ``ca.``, ``vac.``, ``lost.…lin``) kept as they are. The caller
  says so (``W303``): a conversion is to be checked. Latin text without Beta Code marks is left
  alone (the request then refuses it as not Greek, ``E308``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from betacode.conv import beta_to_uni

from apollo_restore.data.document import Document, to_leiden
from apollo_restore.data.readers.epidoc import parse_epidoc_file
from apollo_restore.errors import CorpusError, RequestError

Kind = Literal["leiden", "epidoc", "betacode"]

_XML_START = re.compile(r"\s*<(?:\?xml|!DOCTYPE|[A-Za-z][\w.:-]*(?:[\s/>]|$))")
_GREEK_LETTER = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")
_LATIN_LETTER = re.compile(r"[A-Za-z]")
_WORD = re.compile(r"[A-Za-z*][A-Za-z*()/\\=+|]*")
# a Beta Code mark where Beta Code puts it: '*' (with its breathing and accent) before a letter,
# or breathings, accents, diaeresis and iota subscript after a vowel (or rho's breathing)
_MARK = re.compile(r"\*[()/\\=+|]*[A-Za-z]|[aehiouwrAEHIOUWR][()/\\=+|]+")
# Leiden's own Latin words, kept as they are: circa, vacat, lost lines
_LEIDEN_WORD = re.compile(r"ca?\.|vac(?:at|\.)|lost\.(?:\d+|\?)lin", re.IGNORECASE)
_TOKEN = re.compile(f"(?P<leiden>{_LEIDEN_WORD.pattern})|(?P<word>{_WORD.pattern})", re.IGNORECASE)


def looks_like_xml(text: str) -> bool:
    """Whether ``text`` starts as an XML document does (``<?xml``, ``<!DOCTYPE``, ``<TEI``...)."""
    return _XML_START.match(text) is not None


def looks_like_betacode(text: str) -> bool:
    """Whether ``text`` is Beta Code: more than four times as many Latin letters as Greek ones,
    and at least one Beta Code mark (:data:`_MARK`) for every four Latin words."""
    latin = len(_LATIN_LETTER.findall(text))
    if not latin or latin <= 4 * len(_GREEK_LETTER.findall(text)):
        return False
    words = sum(1 for m in _TOKEN.finditer(text) if m.group("word"))
    marks = len(_MARK.findall(text))
    return marks >= 1 and 4 * marks >= words


def betacode_to_greek(text: str) -> str:
    """``text`` with each Beta Code word in Greek letters (NFC: an acute is a tonos, as
    editions type it), everything between words kept."""

    def convert(m: re.Match) -> str:
        return m.group() if m.group("leiden") else unicodedata.normalize("NFC", beta_to_uni(m.group()))

    return _TOKEN.sub(convert, text)


def read_epidoc(content: bytes | str, name: str = "the text") -> Document:
    """A scholar's EpiDoc file as a :class:`Document`: the one reader of every door (a text
    pasted or given to the CLI or the Python API, the page's upload): expansions kept, a
    ``<gap>`` length that is no count refused.

    Args:
        content: the file's bytes, or its text (encoded as UTF-8).
        name: how messages name it (a file name, ``"the text"``).

    Raises:
        RequestError: ``E313``: not well-formed XML, no (Greek) edition, or an edition without
            text; ``E314``: a ``<gap>`` length that is no count of letters (``quantity="-4"``).
    """
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        return parse_epidoc_file(data, name, "user", expansions=True, strict_lengths=True)
    except CorpusError as err:
        raise RequestError("E313", name=name, reason=err.reason) from None


def epidoc_to_leiden(text: str, name: str = "the text") -> str:
    """The Greek edition of an EpiDoc document as Leiden text (:func:`read_epidoc`).

    Raises:
        RequestError: ``E313``, ``E314`` (see :func:`read_epidoc`).
    """
    return to_leiden(read_epidoc(text, name).segments)


def as_leiden(text: str, name: str = "the text") -> tuple[str, Kind]:
    """``(Leiden text, what it was)``: EpiDoc and Beta Code converted, Leiden returned as given.

    Args:
        text: the text as given (a file's content, a pasted text).
        name: how messages name it (a file name, ``"the text"``).

    Raises:
        RequestError: ``E313`` for XML that cannot be read as an EpiDoc edition.
    """
    if looks_like_xml(text):
        return epidoc_to_leiden(text, name), "epidoc"
    if looks_like_betacode(text):
        return betacode_to_greek(text), "betacode"
    return text, "leiden"
