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

A model folder's files are read through :func:`read_regular` alone: a plain file only (``E220``
for a folder, a FIFO, a device, a dangling link or a link loop, checked before anything is
opened, so a FIFO never blocks and ``/dev/zero`` is never read), at most ``limit`` bytes. A
named pipe given as a text or line file is read only while something writes into it (``<(…)``);
one with no writer is ``E202``, never a wait for ever.

What a file or a job depends on is named by :func:`digest` (its bytes) or :func:`file_digest`: the
package's one fingerprint, 16 hex digits of SHA-256.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import io
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

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
#: Largest settings file of a model folder (JSON; bytes): the shipped ones hold at most 3 KB, a
#: Hugging Face BPE tokenizer a few MB.
MAX_SETTINGS_BYTES = 32 * 2**20


#: Hex digits of a fingerprint (:func:`digest`): 64 bits, no collision among a package's files and jobs.
DIGEST_CHARS = 16
_HASHED = 1 << 20  # bytes hashed at a time


def digest(*chunks: bytes | str | Iterable[bytes]) -> str:
    """The package's fingerprint: :data:`DIGEST_CHARS` hex digits of the SHA-256 of ``chunks``
    (bytes, text as UTF-8, or an iterable of bytes), in order."""
    hashed = hashlib.sha256()
    for chunk in chunks:
        if isinstance(chunk, str):
            hashed.update(chunk.encode("utf-8", "surrogatepass"))
        elif isinstance(chunk, (bytes, bytearray, memoryview)):
            hashed.update(chunk)
        else:
            for part in chunk:
                hashed.update(part)
    return hashed.hexdigest()[:DIGEST_CHARS]


def file_digest(path: str | Path) -> str:
    """:func:`digest` of a regular file's bytes, read a MiB at a time (:func:`check_regular` first:
    a FIFO is never opened, a device never read).

    Raises:
        FileNotFoundError: nothing at ``path``.
        FileError: ``E220`` not a regular file, ``E202`` unreadable.
    """
    check_regular(path)
    try:
        with open(path, "rb") as handle:
            return digest(iter(lambda: handle.read(_HASHED), b""))
    except OSError as err:
        raise FileError("E202", str(path), reason=err.strerror or str(err)) from None


def source_name(path: str | Path) -> str:
    """How ``path`` is named in messages (``"standard input"`` for ``-``)."""
    return STDIN_NAME if str(path) == STDIN else str(path)


def read_text(path: str | Path, limit: int = MAX_TEXT_BYTES, keep_bom: bool = False) -> str:
    """The whole text of a file, or of standard input for ``-``; a byte-order mark at its start
    dropped, or kept as ``"\ufeff"`` with ``keep_bom`` (an export that gives the text back byte
    for byte).

    Raises:
        FileError: ``E202`` unreadable, ``E203`` not UTF-8, ``E204`` more than ``limit`` bytes.
    """
    name = source_name(path)
    with _opened(path, name) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileError("E204", name, limit=limit, what="")
    bom = "\ufeff" if keep_bom and data.startswith(codecs.BOM_UTF8) else ""
    return bom + decode(data.removeprefix(codecs.BOM_UTF8), name)


def check_regular(path: str | Path) -> os.stat_result:
    """``path``'s status once it is known to be a regular file (links followed), before it is opened.

    Raises:
        FileNotFoundError: nothing at all at ``path`` (not even a link).
        FileError: ``E220`` naming the file and what it is instead (a folder, a FIFO, a device, a
            socket, a link to nothing, a loop of links), ``E202`` another OS error.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if not os.path.lexists(path):
            raise
        target = os.readlink(path)
        raise FileError("E220", str(path), what=f"a symbolic link to {target!r}, which does not exist") from None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise FileError("E220", str(path), what="a loop of symbolic links") from None
        raise FileError("E202", str(path), reason=err.strerror or str(err)) from None
    if not stat.S_ISREG(st.st_mode):
        raise FileError("E220", str(path), what=_kind(st.st_mode))
    return st


def read_regular(path: str | Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (:func:`check_regular` first; the
    file is opened without blocking and checked again once open, so nothing swapped in between is read).

    Raises:
        FileNotFoundError: nothing at ``path``.
        FileError: ``E220`` not a regular file, ``E204`` more than ``limit`` bytes, ``E202`` unreadable.
    """
    name = str(path)
    if check_regular(path).st_size > limit:
        raise FileError("E204", name, limit=limit, what="")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise FileError("E220", name, what=_kind(mode))
            data = handle.read(limit + 1)
    except OSError as err:
        raise FileError("E202", name, reason=err.strerror or str(err)) from None
    if len(data) > limit:  # grew since
        raise FileError("E204", name, limit=limit, what="")
    return data


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))  # fmt: skip
    return next((words for test, words in kinds if test(mode)), "not a regular file")


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
    open or read becomes ``E202``, and so does a named pipe that nothing writes into (opened
    without waiting: :func:`_open_nonblocking`)."""
    try:
        if str(path) == STDIN:
            yield sys.stdin.buffer
        else:
            with _open_nonblocking(path, name) as handle:
                yield handle
    except OSError as err:
        raise FileError("E202", name, reason=err.strerror or str(err)) from None


def _open_nonblocking(path: str | Path, name: str) -> BinaryIO:
    """``path`` opened for reading without waiting for a writer (``O_NONBLOCK``), then blocking
    again. A named pipe must have a writer already (``<(…)``, a pipe being filled): with none,
    reading it would wait for ever, so it is refused.

    Raises:
        FileError: ``E202`` a named pipe with no writer.
        OSError: it cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        first = _first_of_pipe(fd, name) if stat.S_ISFIFO(os.fstat(fd).st_mode) else b""
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        if first:
            return io.BufferedReader(_Prefixed(fd, first))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _first_of_pipe(fd: int, name: str) -> bytes:
    """Refuse a named pipe (open, not blocking) that nothing writes into; returns the byte read
    to tell (``b""`` when none was). With no byte waiting, a read finds the end at once when
    there is no writer, and "try again" when a writer has written nothing yet.

    Raises:
        FileError: ``E202``.
    """
    try:
        first = os.read(fd, 1)
    except BlockingIOError:
        return b""  # a writer that has written nothing yet: the blocking reads wait for it
    if not first:
        reason = "it is a named pipe (FIFO) that nothing writes into: reading it would wait for ever"
        raise FileError("E202", name, reason=reason)
    return first


class _Prefixed(io.RawIOBase):
    """A file descriptor's bytes after ``first`` (the byte read to tell a pipe has a writer)."""

    def __init__(self, fd: int, first: bytes) -> None:
        self.fd, self.first = fd, first

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.first:
            n = len(self.first)
            buffer[:n], self.first = self.first, b""
            return n
        return os.readv(self.fd, [buffer])

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
        super().close()
