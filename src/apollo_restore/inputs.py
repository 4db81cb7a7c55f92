"""The one input layer: every text file, standard input and line file (gap sets, predictions) read.

    from apollo_restore.inputs import read_lines, read_text
    text = read_text("edition.txt")            # "-": standard input
    for number, line in read_lines("gaps.jsonl"):
        ...                                    # 1-based line number, decoded line

Reads are bounded (:data:`MAX_TEXT_BYTES` for a whole text, :data:`MAX_LINE_BYTES` for one line,
so ``< /dev/zero`` stops at the limit instead of filling memory) and decoded as strict UTF-8 (a
byte-order mark at the start is dropped). Every failure is a numbered
:class:`~apollo_restore.errors.FileError` naming the file: ``E202`` unreadable (missing, a folder,
no permission, an I/O error), ``E203`` not UTF-8 (byte offset and line of the first bad byte),
``E204`` over the limit.
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from apollo_restore.errors import FileError

#: The name that means standard input.
STDIN = "-"
#: How standard input is named in messages.
STDIN_NAME = "standard input"
#: Largest text read at once (bytes): 16 MiB, four times the 1,000,000 characters a request may hold
#: at up to 4 bytes each (the request check then counts the characters).
MAX_TEXT_BYTES = 16 * 2**20
#: Longest line of a line file (bytes); a gap-set line holds two contexts of a few hundred characters.
MAX_LINE_BYTES = 16 * 2**20


def source_name(path: str | Path) -> str:
    """How ``path`` is named in messages (``"standard input"`` for ``-``)."""
    return STDIN_NAME if str(path) == STDIN else str(path)


def read_text(path: str | Path, limit: int = MAX_TEXT_BYTES) -> str:
    """The whole text of a file, or of standard input for ``-``.

    Raises:
        FileError: ``E202`` unreadable, ``E203`` not UTF-8, ``E204`` more than ``limit`` bytes.
    """
    name = source_name(path)
    with _opened(path, name) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileError("E204", name, limit=limit, what="")
    return decode(data.removeprefix(codecs.BOM_UTF8), name)


def read_lines(path: str | Path, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(1-based line number, line)`` for every line of a file (the newline kept), streamed.

    Raises:
        FileError: ``E202`` unreadable, ``E203`` not UTF-8, ``E204`` a line of more than ``limit`` bytes.
    """
    name = source_name(path)
    offset = 0
    with _opened(path, name) as handle:
        number = 0
        while raw := handle.readline(limit + 1):
            number += 1
            if len(raw) > limit:
                raise FileError("E204", name, limit=limit, what=f" in line {number}")
            start = len(codecs.BOM_UTF8) if number == 1 and raw.startswith(codecs.BOM_UTF8) else 0
            yield number, decode(raw[start:], name, offset + start, number)
            offset += len(raw)


def decode(data: bytes, name: str, offset: int = 0, line: int | None = None) -> str:
    """``data`` decoded as strict UTF-8.

    Args:
        data: the bytes.
        name: the file, for the message.
        offset: byte offset of ``data`` in the file.
        line: 1-based line of ``data`` in the file (default: counted in ``data``).

    Raises:
        FileError: ``E203`` with the file's byte offset and line of the first bad byte.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        at = line if line is not None else data.count(b"\n", 0, err.start) + 1
        raise FileError("E203", name, offset=offset + err.start, where=f", line {at}", byte=data[err.start]) from None


@contextmanager
def _opened(path: str | Path, name: str) -> Iterator[BinaryIO]:
    """The binary stream of ``path`` (standard input's for ``-``); any OS error while it is
    open or read becomes ``E202``."""
    try:
        if str(path) == STDIN:
            yield sys.stdin.buffer
        else:
            with open(path, "rb") as handle:
                yield handle
    except OSError as err:
        raise FileError("E202", name, reason=err.strerror or str(err)) from None
