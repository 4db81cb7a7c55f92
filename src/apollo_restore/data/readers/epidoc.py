"""EpiDoc TEI editions to :class:`Document` s (docs/design.md, *Documents*): papyri.info and inscription corpora.

The edition is ``<div type="edition">``. A file yields one document made of its Greek
editions (``xml:lang`` starting ``grc`` on the edition, on an ancestor up to ``<text>``, on a
textpart, or — as in IIP — the header's ``<textLang mainLang>``). Derived editions
(``diplomatic``, ``transcription_segmented``, ``simple-lemmatized``, ``transliteration``) are
used only when nothing else is there (a diplomatic edition alone), never next to the main one.
Textparts in another language are left out.

Element mapping (each rule is one branch of :func:`_walk`; tails are always kept):

* ``supplied reason=lost`` (any ``cert``) → :class:`Supplied`; ``reason=omitted`` →
  :class:`Editorial` ``omitted`` (never read: the scribe never wrote it); other reasons
  (undefined, subaudible, explanation) → dropped;
* ``supplied resp="#apollo-restore"`` (a machine reading this software exported) → the lacuna
  it fills, as the edition gave it (the ``<gap>`` its ``<note type="machine-proposal">`` keeps;
  older exports without one: as many letters as the reading);
* ``gap reason=lost|illegible|ellipsis`` → :class:`Lacuna` (``reason`` illegible kept):
  ``quantity`` → n letters, ``atLeast``/``atMost`` → range, ``extent`` → unknown,
  ``precision=low`` → approximate, ``unit=line`` → lost lines (``lines``) plus a line break;
  ``reason=omitted`` → nothing;
* ``unclear`` → ``Text(uncertain=True)``; ``lb``/``cb`` → :class:`LineBreak`
  (``break="no"`` and the older ``type="inWord"`` → in-word);
* ``del`` → :class:`Editorial` ``deleted`` (never read); ``space`` → :class:`Vacat`;
  ``surplus`` → ``Text(mark="surplus")``, ``add place=above|below`` → ``Text(mark=...)`` (read);
* ``choice`` → ``orig`` or ``sic`` (never ``reg``/``corr``; a lone ``corr`` keeps its text,
  the only reading given); ``app`` → ``lem``; ``subst`` →
  its ``add``; ``expan``/``abbr``/``am`` → written letters only, ``ex`` dropped
  (kept, marked, for a user's text: ``expansions``);
* ``g``, ``note``, ``handShift``, ``milestone``, ``figure``, ``certainty``, ``desc``, ... →
  dropped; other ``add``, ``num``, ``hi``, ``w``, names and any other element → their text.

Metadata: ``tm`` (``<idno type="TM">``), ``date`` (year from ``origDate`` ``@when`` or the middle
of ``@notBefore``/``@notAfter``, negative BC; also ``date_min``/``date_max``), ``place``
(``origPlace``) and ``title``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace

from lxml import etree

from apollo_restore.data.document import (
    MAX_LACUNA_LETTERS,
    Document,
    Editorial,
    Lacuna,
    LineBreak,
    Segment,
    Supplied,
    Text,
    Vacat,
    lacuna_length,
)
from apollo_restore.data.readers.leiden import tidy_segments
from apollo_restore.errors import CorpusError, RequestError

#: ``@resp`` of readings exported by the web page (:mod:`apollo_restore.restoration.export`)
MACHINE_RESP = "#apollo-restore"

log = logging.getLogger(__name__)

TEI = "{http://www.tei-c.org/ns/1.0}"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

#: Edition subtypes derived from the main edition; used only when nothing else exists.
DERIVED_SUBTYPES = frozenset({"diplomatic"})
#: Edition subtypes that never count as an edition of the text (duplicates, lemmata).
IGNORED_SUBTYPES = frozenset({"transcription_segmented", "simple-lemmatized", "transliteration", "translation"})

_SKIPPED_TAGS = frozenset(
    {
        "ex", "g", "note", "handShift", "milestone", "figure", "figDesc", "certainty", "desc",
        "link", "join", "height", "width", "head", "bibl", "ref", "fw", "label",
        "rdg", "gloss", "witDetail", "listBibl",
    }
)  # fmt: skip
_LACUNA_REASONS = frozenset({"lost", "illegible", "ellipsis", ""})
_SUPPLIED_REASONS = frozenset({"lost", ""})
_LINE_UNITS = frozenset({"line", "lines"})


def parse_epidoc_file(
    content: bytes, name: str, source: str, expansions: bool = False, strict_lengths: bool = False
) -> Document:
    """One EpiDoc file as a :class:`Document`; with ``expansions``, an abbreviation's ``<ex>``
    letters are kept as :class:`Text` marked ``expansion`` (a user's text; training drops them).

    Args:
        strict_lengths: refuse a ``<gap>`` length that is no count of letters (a user's text);
            without, it is read as unknown extent with a note in ``meta["notes"]`` (a corpus).

    Raises:
        CorpusError: not well-formed, no Greek edition, or an edition without text.
        RequestError: ``E314`` with ``strict_lengths``: a ``<gap>`` whose ``quantity``,
            ``atLeast`` or ``atMost`` is not a whole number of letters within bounds, named with its line.
        CorpusError: with ``strict_lengths``, also an entity reference in the edition (``&g;``
            declared in the document's DTD): never expanded, so its letters would be lost unsaid.
    """
    try:
        root = etree.fromstring(content, parser=xml_parser())
    except etree.XMLSyntaxError as exc:
        raise CorpusError(name, f"not well-formed XML: {exc}") from exc
    if root is None or not isinstance(root.tag, str):
        raise CorpusError(name, "empty XML document")
    editions = greek_editions(root)
    if not editions:
        has_edition = root.find(f".//{TEI}div[@type='edition']") is not None
        raise CorpusError(name, "no Greek edition" if has_edition else "no edition")
    if strict_lengths:
        for edition in editions:  # entities are never expanded (a billion laughs): their letters would be lost
            for entity in edition.iter(etree.Entity):
                raise CorpusError(
                    name,
                    f"the entity reference {entity.text} at line {entity.sourceline} stands for letters this reader "
                    "does not expand (an entity the document declares): write the letters themselves",
                )
        for gap, attr, reason in bad_gap_lengths(editions, whole=True):
            element = f'<gap {attr}="{gap.get(attr)}">'
            reason = reason.split(": read as")[0].replace(f"length {gap.get(attr)!r} ", "")
            raise RequestError(
                "E314", name=name, element=element, line=gap.sourceline, reason=reason, limit=MAX_LACUNA_LETTERS
            )
    segments = tidy_segments(_edition_segments(editions, expansions))
    if not any(isinstance(s, (Text, Supplied)) and s.text.strip() for s in segments):
        raise CorpusError(name, "Greek edition has no text")
    meta = metadata(root)
    notes = lacuna_notes(editions)
    if notes:
        meta["notes"] = notes
    return Document(doc_id(root, name), source, segments, meta)


def xml_parser() -> etree.XMLParser:
    """How every EpiDoc file is parsed: huge_tree off, no network, entities not resolved (files
    are data, not programs), comments kept."""
    return etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=False, recover=False)


def _lang(el: etree._Element) -> str | None:
    """``xml:lang`` of ``el`` or its nearest ancestor up to ``<text>`` (not the TEI root)."""
    node: etree._Element | None = el
    while node is not None and node.tag != f"{TEI}TEI":
        lang = node.get(XML_LANG)
        if lang:
            return lang
        if node.tag == f"{TEI}text":
            break
        node = node.getparent()
    return None


def is_greek(lang: str | None) -> bool:
    """``grc``, ``grc-Grek``, ... (the ``xml:lang`` values of Ancient Greek)."""
    return bool(lang) and lang.lower().startswith("grc")  # type: ignore[union-attr]


def greek_editions(root: etree._Element) -> list[etree._Element]:
    """The edition divs to read: Greek, main editions first, derived ones only as fallback."""
    text_lang = root.find(f".//{TEI}textLang")
    main_lang = text_lang.get("mainLang") if text_lang is not None else None
    ranked: dict[int, list[etree._Element]] = {0: [], 1: []}
    for ed in root.iter(f"{TEI}div"):
        if ed.get("type") != "edition":
            continue
        subtype = ed.get("subtype")
        if subtype in IGNORED_SUBTYPES:
            continue
        lang = _lang(ed)
        parts = [tp for tp in ed.iter(f"{TEI}div") if tp.get("type") == "textpart" and tp.get(XML_LANG)]
        if lang is None and not parts:
            lang = main_lang
        greek = is_greek(lang) or any(is_greek(tp.get(XML_LANG)) for tp in parts)
        if greek and _has_text(ed):
            ranked[1 if subtype in DERIVED_SUBTYPES else 0].append(ed)
    return ranked[0] or ranked[1]


def _has_text(ed: etree._Element) -> bool:
    return any(t.strip() for t in ed.itertext())


def doc_id(root: etree._Element, name: str) -> str:
    idno = root.find(f".//{TEI}publicationStmt/{TEI}idno[@type='filename']")
    if idno is not None and idno.text and idno.text.strip() and not re.search(r"\s", idno.text.strip()):
        return idno.text.strip()  # a citation such as "IC IV 80" is no id: use the file name
    stem = name.rsplit(":", 1)[-1].rsplit("/", 1)[-1]
    return stem[:-4] if stem.endswith(".xml") else stem


# -- metadata -------------------------------------------------------------------------------


def metadata(root: etree._Element) -> dict[str, object]:
    """Trismegistos id, date (year; negative BC), place and title, where the header has them."""
    meta: dict[str, object] = {}
    for idno in root.iter(f"{TEI}idno"):
        if idno.get("type") == "TM" and idno.text and idno.text.strip():
            meta["tm"] = idno.text.strip()
            break
    meta.update(_date(root))
    place = root.find(f".//{TEI}origPlace")
    if place is not None:
        text = _place_text(place)
        if text:
            meta["place"] = text
    title = root.find(f".//{TEI}titleStmt/{TEI}title")
    if title is not None:
        text = _collapse("".join(title.itertext()))
        if text:
            meta["title"] = text
    return meta


def _place_text(place: etree._Element) -> str:
    english = [seg for seg in place if isinstance(seg.tag, str) and seg.get(XML_LANG) == "en"]
    if english:
        return _collapse("".join(english[0].itertext()))
    return _collapse("".join(place.itertext()))


def _year(value: str | None) -> int | None:
    """``-0450`` → -450, ``0301`` → 301, ``1998-05-01`` → 1998; ``None`` if unreadable."""
    if not value:
        return None
    m = re.match(r"\s*(-?)(\d{1,4})", value)
    if not m:
        return None
    year = int(m.group(2))
    return -year if m.group(1) else year


def _date(root: etree._Element) -> dict[str, int]:
    node = root.find(f".//{TEI}origDate")
    if node is None:
        node = root.find(f".//{TEI}origin//{TEI}date")
    if node is None:
        return {}

    def attr(name: str) -> int | None:
        return _year(node.get(name) or node.get(f"{name}-custom"))

    when, lo, hi = attr("when"), attr("notBefore"), attr("notAfter")
    out: dict[str, int] = {}
    if lo is not None:
        out["date_min"] = lo
    if hi is not None:
        out["date_max"] = hi
    if when is not None:
        out["date"] = when
    elif lo is not None and hi is not None:
        out["date"] = (lo + hi) // 2
    elif lo is not None or hi is not None:
        out["date"] = lo if lo is not None else hi  # type: ignore[assignment]
    return out


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# -- the edition ------------------------------------------------------------------------------


def _emit(out: list[Segment], text: str | None, mode: str) -> None:
    if not text:
        return
    if mode == "supplied":
        out.append(Supplied(text))
    else:
        out.append(Text(text, uncertain=mode == "uncertain"))


def _walk_children(
    el: etree._Element, out: list[Segment], mode: str, keep_ex: bool = False, gaps: list | None = None
) -> None:
    """Emit ``el``'s text, then each child followed by the child's tail."""
    _emit(out, el.text, mode)
    for child in el:
        _walk(child, out, mode, keep_ex, gaps)
        _emit(out, child.tail, mode)


def _walk(el: etree._Element, out: list[Segment], mode: str, keep_ex: bool = False, gaps: list | None = None) -> None:
    """Emit segments for one element (its tail is the caller's business); with ``gaps``, the
    element each :class:`Lacuna` comes from is appended to it."""
    if not isinstance(el.tag, str):  # comment or processing instruction
        return
    tag = el.tag[len(TEI) :] if el.tag.startswith(TEI) else el.tag
    if tag == "ex" and keep_ex:  # an abbreviation's expansion, kept for a user's text (see Text.expansion)
        letters = "".join(el.itertext())
        if any(ch.isalpha() for ch in letters):
            out.append(Text(letters, expansion=True))
        return
    if tag in _SKIPPED_TAGS:
        return
    if tag == "div" and el.get("type") == "textpart" and el.get(XML_LANG) and not is_greek(el.get(XML_LANG)):
        return
    if tag == "supplied":
        if el.get("resp") == MACHINE_RESP:
            # a reading proposed by this software and exported by it: never an editor's
            # supplement, so it is read back as the lacuna it fills, as the edition gave it
            original = machine_original(el)
            found = gap_segments(original) if original is not None else []
            out.extend(found or [Lacuna(sum(ch.isalpha() for ch in "".join(el.itertext())) or None)])
            if gaps is not None:
                gaps.append(el)
        elif (el.get("reason") or "") in _SUPPLIED_REASONS:
            _walk_children(el, out, "supplied", keep_ex, gaps)
        elif el.get("reason") == "omitted":
            _editorial(el, out, "omitted")
        return
    if tag == "del":
        _editorial(el, out, "deleted")
        return
    if tag == "space":
        out.append(Vacat(_int(el.get("quantity")) if (el.get("unit") or "character").startswith("char") else None))
        return
    if tag == "surplus" or (tag == "add" and el.get("place") in ("above", "below")):
        marked: list[Segment] = []
        _walk_children(el, marked, mode, keep_ex, gaps)
        mark = "surplus" if tag == "surplus" else el.get("place")
        out.extend(replace(s, mark=mark) if isinstance(s, Text) and not s.expansion else s for s in marked)
        return
    if tag == "gap":
        found = gap_segments(el)
        out.extend(found)
        if gaps is not None and found:
            gaps.append(el)
        return
    if tag == "unclear":
        _walk_children(el, out, "supplied" if mode == "supplied" else "uncertain", keep_ex, gaps)
        return
    if tag in ("lb", "cb"):
        out.append(LineBreak(in_word=el.get("break") == "no" or el.get("type") == "inWord"))
        return
    if tag == "choice":
        picked = _pick(el, ("orig", "sic"), ("reg", "corr"))
        if picked is not None:
            _walk_children(picked, out, mode, keep_ex, gaps)
        return
    if tag == "app":
        picked = _pick(el, ("lem",), ("rdg", "note", "witDetail"))
        if picked is not None:
            _walk_children(picked, out, mode, keep_ex, gaps)
        return
    if tag in ("div", "ab", "p", "lg", "l"):
        if out and not isinstance(out[-1], LineBreak):
            out.append(LineBreak(False))
        _walk_children(el, out, mode, keep_ex, gaps)
        return
    # add, surplus, num, hi, expan, abbr, am, w, names, seg, foreign, orig, sic ...: their text
    _walk_children(el, out, mode, keep_ex, gaps)


def _editorial(el: etree._Element, out: list[Segment], kind: str) -> None:
    """An editor's addition or a scribe's deletion: its letters kept (never read; notes and
    other skipped elements aside), a line break inside it read as a space, as the corpus has
    always been read (the line it ends is not counted)."""
    letters = _collapse("".join(_letters_of(el)))
    if letters:
        out.append(Editorial(letters, kind))


def _letters_of(el: etree._Element) -> list[str]:
    """The text of ``el`` and its children, skipped elements left out, ``<lb>`` as a space."""
    parts = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str):
            tag = child.tag[len(TEI) :] if child.tag.startswith(TEI) else child.tag
            if tag in ("lb", "cb"):
                parts.append(" ")
            elif tag not in _SKIPPED_TAGS:
                parts += _letters_of(child)
        parts.append(child.tail or "")
    return parts


def machine_holder(el: etree._Element) -> etree._Element:
    """The element a machine reading stands as: its ``<app resp="#apollo-restore">`` when it is
    one of that app's readings (a reading exported with alternatives), else itself."""
    parent = el.getparent()
    app = parent.getparent() if parent is not None and parent.tag in (f"{TEI}lem", f"{TEI}rdg") else None
    return app if app is not None and app.get("resp") == MACHINE_RESP else el


def machine_original(el: etree._Element) -> etree._Element | None:
    """The edition's ``<gap>`` that a machine reading (``<supplied resp="#apollo-restore">``)
    fills: kept in the ``<note type="machine-proposal">`` after the reading (or after its
    ``<app>``); ``None`` for an export that kept none."""
    note = machine_holder(el).getnext()
    while note is not None and not isinstance(note.tag, str):
        note = note.getnext()
    if note is None or note.tag != f"{TEI}note" or note.get("type") != "machine-proposal":
        return None
    return note.find(f"{TEI}gap")


def lacuna_elements(root: etree._Element) -> list[etree._Element]:
    """The elements of an EpiDoc document's Greek edition that :func:`parse_epidoc_file` reads
    as lacunae (``<gap>``, a machine reading's ``<supplied resp="#apollo-restore">``), in the
    order of its :class:`Lacuna` segments: gap number ``n`` (from 1) is element ``n - 1``."""
    gaps: list[etree._Element] = []
    _edition_segments(greek_editions(root), True, gaps)
    return gaps


def _edition_segments(
    editions: list[etree._Element], keep_ex: bool, gaps: list[etree._Element] | None = None
) -> list[Segment]:
    """The segments of the Greek editions, one after another with a line break between them
    (untidied); with ``gaps``, the element of each :class:`Lacuna` is appended to it."""
    segments: list[Segment] = []
    for edition in editions:
        if segments:
            segments.append(LineBreak(False))
        _walk_children(edition, segments, "text", keep_ex, gaps)
    return segments


def _pick(el: etree._Element, wanted: tuple[str, ...], unwanted: tuple[str, ...]) -> etree._Element | None:
    """First child whose tag is in ``wanted``; else the first child not in ``unwanted``."""
    children = [c for c in el if isinstance(c.tag, str)]
    local = [c.tag[len(TEI) :] if c.tag.startswith(TEI) else c.tag for c in children]
    for name in wanted:
        if name in local:
            return children[local.index(name)]
    for child, name in zip(children, local):
        if name not in unwanted:
            return child
    return children[0] if children else None


def _int(value: str | None) -> int | None:
    return lacuna_length(value)[0]


def lacuna_notes(editions: list[etree._Element]) -> list[str]:
    """Why a ``<gap>`` length was read as unknown extent (absurd or unreadable), one note each."""
    return [f"<gap {attr}>: {reason}" for _, attr, reason in bad_gap_lengths(editions)]


def bad_gap_lengths(editions: list[etree._Element], whole: bool = False) -> list[tuple[etree._Element, str, str]]:
    """``(gap, attribute, reason)`` for each ``<gap>`` length that is no count of letters from 1
    to :data:`~apollo_restore.data.document.MAX_LACUNA_LETTERS` (``quantity="-4"``,
    ``quantity="99999999999999999999"``, ``atLeast="x"``): a corpus reads it as unknown extent,
    a user's text is refused (:func:`~apollo_restore.data.readers.typed.epidoc_to_leiden`).
    With ``whole`` (a user's text), a count that is not a whole number (``quantity="4.5"``,
    which a corpus reads as 4) is one too."""
    found = []
    for edition in editions:
        for gap in edition.iter(f"{TEI}gap"):
            for attr in ("quantity", "atLeast", "atMost"):
                value = gap.get(attr)
                reason = lacuna_length(value)[1]
                if not reason and whole and value is not None and value.strip() and not value.strip().isdigit():
                    reason = f"length {value!r} is not a whole number"
                if reason:
                    found.append((gap, attr, reason))
    return found


def gap_segments(el: etree._Element) -> list[Segment]:
    """Segments for one ``<gap>``: a lacuna (plus a line break for lost lines) or nothing."""
    reason = (el.get("reason") or "").strip()
    if reason not in _LACUNA_REASONS:
        return []  # omitted by the scribe: nothing is lost
    unit = (el.get("unit") or "").strip()
    reason = "illegible" if reason == "illegible" else "lost"
    if unit in _LINE_UNITS:
        lines = _int(el.get("quantity"))
        return [Lacuna(None, reason=reason, lines=lines or -1), LineBreak(False)]
    if unit.startswith("char") or not unit:
        quantity = _int(el.get("quantity"))
        lo, hi = _int(el.get("atLeast")), _int(el.get("atMost"))
        approximate = el.get("precision") == "low"
        if quantity is not None:
            return [Lacuna(quantity, approximate=approximate, reason=reason)]
        if lo is not None and hi is not None and lo <= hi:
            return [Lacuna(lo, length_max=hi if hi > lo else None, approximate=approximate, reason=reason)]
    return [Lacuna(None, reason=reason)]
