"""Reader for plain running text: one ``.txt`` file per work, as First1KGreek ships it.

    first1k-grc/tlg0057.tlg001.1st1K-grc1.txt   →   Document(id="tlg0057.tlg001.1st1K-grc1",
                                                     meta={"work": "tlg0057.tlg001"})

No editorial markup: every non-empty line is text, lines are joined by line breaks. Editions of
one work (``…opp-grc1``, ``…1st1K-grc2``) share the work id's first two parts, so they fall into
one train/validation/test split. Running text may be another edition of, or quote, a held-out
document of another corpus: :func:`apollo_restore.data.prepare.prepare` cuts such runs out of
its training documents (:class:`~apollo_restore.data.overlap.OverlapMask`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from apollo_restore.data.document import Document, LineBreak, Segment, Text
from apollo_restore.errors import CorpusError

SUFFIX = ".txt"


def work_of(stem: str) -> str:
    """The work a file's stem belongs to: its first two dotted parts (``tlg0057.tlg001``)."""
    return ".".join(stem.split(".")[:2])


def text_lines(content: bytes, name: str, clean: Callable[[str], str] = str.strip) -> list[Segment]:
    """A UTF-8 file's non-empty lines (after ``clean``) as text segments joined by line breaks.

    Raises:
        CorpusError: the file is not UTF-8 or holds no text.
    """
    try:
        lines = content.decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise CorpusError(name, f"not UTF-8: {err}") from err
    segments: list[Segment] = []
    for line in map(clean, lines):
        if line:
            if segments:
                segments.append(LineBreak())
            segments.append(Text(line))
    if not segments:
        raise CorpusError(name, "no text lines")
    return segments


def parse_plain(content: bytes, name: str, source: str = "literary") -> Document:
    """One plain-text work as a :class:`Document`.

    Raises:
        CorpusError: the file is not UTF-8 or holds no text.
    """
    segments = text_lines(content, name)
    stem = Path(name.split(":")[-1]).name.removesuffix(SUFFIX)
    return Document(id=stem, source=source, segments=segments, meta={"work": work_of(stem)})
