"""Reader for Tesserae ``.tess`` files: Greek literature, one ``<ref> text`` line per unit.

A work split into several files (``plato.leges.part.3.tess``) shares one group, so that all
its parts fall into the same train/validation/test split.
"""

from __future__ import annotations

import re
from pathlib import Path

from apollo_restore.data.document import Document
from apollo_restore.data.readers.plaintext import text_lines

_REF = re.compile(r"^\s*<[^>]*>\s*")
_PART = re.compile(r"\.part\.\d+$")


def parse_tess(content: bytes, name: str, source: str = "literary") -> Document:
    """One ``.tess`` file as a :class:`Document`.

    Raises:
        CorpusError: the file is not UTF-8 or has no text lines.
    """
    segments = text_lines(content, name, lambda line: _REF.sub("", line).strip())
    stem = Path(name.split(":")[-1]).name.removesuffix(".tess")
    return Document(id=stem, source=source, segments=segments, meta={"work": _PART.sub("", stem)})
