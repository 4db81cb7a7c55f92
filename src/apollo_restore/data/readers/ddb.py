"""Reader for the DDB-TM archive: the Duke Databank (2016) as Trismegistos token XML.

Each file holds one text: ``<file name="bgu.1.100" TM="8875" ...>`` with ``<word row=...
original=...>`` tokens. ``original`` is what the papyrus has, in Leiden-like markup: ``[ ]``
letters the editor restored, ``|gap=5|`` and ``|gap=unknown|`` lacunae, a combining underdot
for an uncertain letter, ``-`` a line break inside the word, ``( )`` an abbreviation's
expansion, ``⟦ ⟧`` a deletion; :func:`parse_original` turns one token into segments
(docs/design.md, *Documents*).

    from apollo_restore.data.readers.ddb import parse_file
    doc = parse_file(Path("bgu.1.100_lemmatized.xml").read_bytes(), "bgu.1.100_lemmatized.xml")

Whole corpora are read by :func:`apollo_restore.data.prepare.parse_corpus_rows`.
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import etree

from apollo_restore.data.document import (
    Document,
    Lacuna,
    LineBreak,
    Segment,
    Supplied,
    Text,
    lacuna_length,
    merge_texts,
)
from apollo_restore.data.normalise import normalise
from apollo_restore.data.readers.archive import SkipLog, iter_files
from apollo_restore.errors import CorpusError

_UNDERDOT = "\u0323"
# |gap=5|, |gap=unknown|, |digit=8|, |stauros|, ...: pipes delimit a tag.
_TOKEN = re.compile(r"(\|[a-zA-Z_-]+(?:=[^|]*)?\||[\[\]-])")
_LAYOUT = re.compile(r"@\^[a-z-]*\^|@")  # @^inline^ ... @ : position marks for additions
_DELETED = re.compile(r"⟦[^⟦⟧]*⟧")
_EXPANSION = re.compile(r"\([^()]*\)")
_EDITORIAL_ADDITION = re.compile(r"<[^<>]*>")
_IGNORED = str.maketrans("", "", "*\\/{}?`")
#: any character that needs more than copying: brackets, tags, line breaks, underdots, entities
_MARKUP = re.compile(r"[\[\]|@⟦⟧()<>&*\\/{}?`\-\u0323]")


def _strip_editorial(original: str) -> str:
    """Drop what the editor adds and the papyrus does not have: ``( )``, ``< >``, ``⟦ ⟧``."""
    text = original.replace("&lt;", "<").replace("&gt;", ">")
    text = _LAYOUT.sub("", text)
    text = _DELETED.sub("", text)
    text = _EXPANSION.sub("", text)
    text = _EDITORIAL_ADDITION.sub("", text)
    return text.translate(_IGNORED)


def _gap(value: str | None) -> Lacuna:
    """``|gap=5|`` → 5 letters; ``unknown`` or an absurd number → unknown extent."""
    return Lacuna(lacuna_length(value)[0] if value and value.isascii() and value.isdigit() else None)


def parse_original(original: str, in_supplied: bool) -> tuple[list[Segment], bool]:
    """Segments of one ``original`` token.

    Args:
        original: the token's ``original`` attribute, e.g. ``συ[ν]-πεφωνημένην``.
        in_supplied: whether a ``[`` opened in an earlier token is still open.

    Returns:
        ``(segments, in_supplied)`` with the bracket state after this token. A ``-`` inside
        the token is a line break inside the word.
    """
    if not _MARKUP.search(original):  # most tokens: plain letters, nothing to resolve
        return ([Supplied(original) if in_supplied else Text(original)] if original else []), in_supplied
    segments: list[Segment] = []
    buf: list[str] = []

    def flush() -> None:
        if not buf:
            return
        chunk = "".join(buf)
        buf.clear()
        if in_supplied:
            segments.append(Supplied(chunk.replace(_UNDERDOT, "")))
            return
        if _UNDERDOT not in chunk:
            segments.append(Text(chunk))
            return
        # split into runs of certain / uncertain letters
        for run in re.finditer(r"(?:.\u0323)+|(?:[^\u0323](?!\u0323))+", chunk):
            piece = run.group(0)
            uncertain = _UNDERDOT in piece
            segments.append(Text(piece.replace(_UNDERDOT, ""), uncertain=uncertain))

    for token in _TOKEN.split(_strip_editorial(original)):
        if not token:
            continue
        if token[0] == "|" and len(token) > 1 and token[-1] == "|":
            name, _, value = token[1:-1].partition("=")
            if name == "gap":
                flush()
                segments.append(_gap(value))
                if value == "unknown_lines":
                    segments.append(LineBreak())
        elif token in ("[", "]"):
            flush()
            in_supplied = token == "["
        elif token == "-":
            flush()
            segments.append(LineBreak(in_word=True))
        else:
            buf.append(token)
    flush()
    return segments, in_supplied


def parse_file(content: bytes, name: str, source: str = "ddb") -> Document:
    """One DDB-TM XML file as a :class:`Document`. Its id is the file name without
    ``_lemmatized.xml`` (``p.tebt.4.1107_20``): the text name alone is not unique, since one
    text may be split over several files (text parts).

    Raises:
        CorpusError: the file is not well-formed, has no ``<file name=...>`` root or no words.
    """
    try:
        root = etree.fromstring(content)
    except etree.XMLSyntaxError as err:
        raise CorpusError(name, f"not well-formed XML: {err}") from err
    if root.tag != "file" or not root.get("name"):
        raise CorpusError(name, "root element is not <file name=...>")
    segments: list[Segment] = []
    in_supplied = False
    row = None
    for word in root.iter("word"):
        original = word.get("original")
        if original is None:
            continue
        word_row = (word.get("row") or "").split("-")[0]
        if segments:
            segments.append(LineBreak() if row is not None and word_row != row else Text(" "))
        row = (word.get("row") or "").split("-")[-1]
        parsed, in_supplied = parse_original(original, in_supplied)
        segments.extend(parsed)
    if not segments:
        raise CorpusError(name, "empty text (no <word> with an original form)")
    meta = {
        "tm": root.get("TM") or None,
        "hgv": root.get("HGV") or None,
        "name": root.get("name"),
        "textpart": root.get("textpart"),
        "lang": root.get("lang"),
    }
    doc_id = Path(name.split(":")[-1]).name.removesuffix(".xml").removesuffix("_lemmatized")
    return Document(id=doc_id, source=source, segments=merge_texts(segments), meta=meta)


_FORMS = re.compile(rb'(?:original|regularized)="([^"]*)"')
_NOT_IN_A_FORM = re.compile(r"\|[^|]*\||[\[\]()<>⟦⟧{}*\\/?`@^\-\u0323]|&[a-z]+;")


def capitalised_words(path: str | Path) -> dict[str, tuple[int, int]]:
    """How the DDB editions write each word: ``norm.v1`` word → ``(capitalised, all)`` counts of
    its ``original`` and ``regularized`` forms (brackets and tags left out) in the archive or
    folder ``path``. The editions capitalise proper names (persons, places, months), so a word
    mostly capitalised is a name.

    Raises:
        FileNotFoundError: ``path`` does not exist.
    """
    counts: dict[str, list[int]] = {}
    for _, content in iter_files(path, (".xml",), skips=SkipLog()):
        for raw in _FORMS.findall(content):
            form = _NOT_IN_A_FORM.sub("", raw.decode("utf-8", "replace")).strip()
            word = normalise(form)
            if not form or " " in word or not word:
                continue
            seen = counts.setdefault(word, [0, 0])
            seen[0] += form[0].isupper()
            seen[1] += 1
    return {w: (c, n) for w, (c, n) in counts.items()}
