"""Reader for Tesserae ``.tess`` files: Greek literature, one ``<ref> text`` line per unit.

A work split into several files (``plato.leges.part.3.tess``) shares one group, so that all
its parts fall into the same train/validation/test split.
"""

from __future__ import annotations

import re
from pathlib import Path

from apollo_restore.data.document import Document, LineBreak, Segment, Text
from apollo_restore.errors import CorpusError

_REF = re.compile(r"^\s*<[^>]*>\s*")
_PART = re.compile(r"\.part\.\d+$")


def parse_tess(content: bytes, name: str, source: str = "literary") -> Document:
    """One ``.tess`` file as a :class:`Document`.

    Raises:
        CorpusError: the file is not UTF-8 or has no text lines.
    """
    try:
        lines = content.decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise CorpusError(name, f"not UTF-8: {err}") from err
    segments: list[Segment] = []
    for line in lines:
        text = _REF.sub("", line).strip()
        if text:
            if segments:
                segments.append(LineBreak())
            segments.append(Text(text))
    if not segments:
        raise CorpusError(name, "no text lines")
    stem = Path(name.split(":")[-1]).name.removesuffix(".tess")
    return Document(id=stem, source=source, segments=segments, meta={"work": _PART.sub("", stem)})
