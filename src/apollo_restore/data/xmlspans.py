"""Where each element of an XML document stands in its bytes, so that an edit can change one
element and keep every other byte as it was (the file's declaration, processing instructions,
quoting, character references, line breaks inside tags).

    spans = element_spans(data)          # one Span per element, in document order
    splice_bytes(data, [(s.start, s.end, b"<new/>")])

lxml parses and rebuilds a document, but writes it again in its own way; the offsets here come
from expat, which reports the byte where each start and end tag begins.
"""

from __future__ import annotations

import xml.parsers.expat
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """One element's bytes: ``[start, end)``, its start tag's ``<`` to one past its end tag's
    ``>`` (its tail is not in it); ``inner_end`` where its end tag begins (``end`` for an empty
    element written ``<x/>``)."""

    start: int
    inner_end: int
    end: int


def element_spans(data: bytes) -> list[Span]:
    """The span of every element of ``data`` (an XML document), in document order: the order of
    lxml's ``root.iter()`` over elements (comments, processing instructions and entity
    references aside).

    Raises:
        xml.parsers.expat.ExpatError: ``data`` is not well-formed.
    """
    parser = xml.parsers.expat.ParserCreate()
    spans: list[list[int]] = []
    stack: list[int] = []

    def start(name: str, attrs: dict) -> None:
        at = parser.CurrentByteIndex
        tag_end = _tag_end(data, at)
        empty = data[tag_end - 2 : tag_end] == b"/>"
        stack.append(len(spans))
        spans.append([at, tag_end if empty else -1, tag_end if empty else -1])

    def end(name: str) -> None:
        k = stack.pop()
        if spans[k][2] < 0:
            at = parser.CurrentByteIndex
            spans[k][1] = at
            spans[k][2] = data.index(b">", at) + 1

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.Parse(data, True)
    return [Span(*s) for s in spans]


def _tag_end(data: bytes, at: int) -> int:
    """One past the ``>`` that closes the tag starting at ``at`` (quotes in attribute values skipped)."""
    quote = 0
    for k in range(at, len(data)):
        byte = data[k]
        if quote:
            if byte == quote:
                quote = 0
        elif byte in (0x22, 0x27):  # " '
            quote = byte
        elif byte == 0x3E:  # >
            return k + 1
    return len(data)


def splice_bytes(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    """``data`` with each ``(start, end, new)`` range replaced; the ranges must not overlap."""
    out: list[bytes] = []
    at = 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        out += [data[at:start], new]
        at = end
    out.append(data[at:])
    return b"".join(out)
