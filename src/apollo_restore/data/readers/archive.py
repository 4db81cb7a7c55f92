"""Streaming access to corpus files, whether loose in a folder or inside a ``.tar.xz``.

Every reader goes through :func:`iter_files`, so each one reads archives in place and
reports the files it cannot read through the same :class:`SkipLog`.
"""

from __future__ import annotations

import bz2
import gzip
import logging
import lzma
import os
import tarfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from apollo_restore.errors import CorpusError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Skipped:
    """A corpus file that was not turned into a document, and why."""

    path: str
    reason: str


@dataclass
class SkipLog:
    """Collects :class:`Skipped` records; every reader appends to one it is given."""

    items: list[Skipped] = field(default_factory=list)

    def add(self, path: str, reason: str) -> None:
        log.debug("skipped %s: %s", path, reason)
        self.items.append(Skipped(path, reason))

    def __len__(self) -> int:
        return len(self.items)


#: Largest corpus file read (bytes): editions are kilobytes, the longest literary work shipped
#: (Aelius Aristides in Tesserae) 4.2 MB; a bigger file or archive member (a bomb of zeros
#: expands 17 MiB from a few KB of xz) is skipped unread, into ``skipped.jsonl``. With the chunk
#: limit of :func:`apollo_restore.data.prepare.parse_corpus_rows` it bounds ``prepare``'s memory.
MAX_FILE_BYTES = 16 * 1024 * 1024


def iter_files(
    path: str | Path, suffixes: tuple[str, ...], skips: SkipLog | None = None, max_bytes: int = MAX_FILE_BYTES
) -> Iterator[tuple[str, bytes]]:
    """Yield ``(name, content)`` for every file under ``path`` ending in one of ``suffixes``.

    ``path`` may be a file, a folder (walked in sorted order) or a ``.tar``/``.tar.gz``/
    ``.tar.xz`` archive (streamed member by member, never unpacked to disk). Names inside an
    archive are given as ``archive.tar.xz:member/path``.

    With ``skips``, nothing that can be read is lost to what cannot: a broken, truncated or
    empty archive ends that archive only, an unreadable file is passed over, a file over
    ``max_bytes`` is skipped without being read, and a symbolic link that leads out of the
    folder, or nowhere (a missing target, a loop), is not followed; each is recorded in ``skips``
    with its reason. Without ``skips`` the first of these raises
    :class:`~apollo_restore.errors.CorpusError`.

    Raises:
        FileNotFoundError: ``path`` does not exist.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"corpus path does not exist: {path}")
    report = _reporter(skips)
    if path.is_dir():
        yield from _iter_folder(path, suffixes, skips, max_bytes, report)
    elif _is_archive(path):
        yield from _iter_archive(path, suffixes, max_bytes, report)
    elif path.name.endswith(suffixes):
        content = _read_file(path, max_bytes, report)
        if content is not None:
            yield str(path), content


def _reporter(skips: SkipLog | None) -> Callable[[str, str], None]:
    def report(name: str, reason: str) -> None:
        if skips is None:
            raise CorpusError(name, reason)
        skips.add(name, reason)

    return report


def _iter_folder(
    root: Path, suffixes: tuple[str, ...], skips: SkipLog | None, max_bytes: int, report: Callable[[str, str], None]
) -> Iterator[tuple[str, bytes]]:
    inside = root.resolve()
    files = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            files.append(Path(folder) / name)
    for child in sorted(files):
        if child.is_symlink():
            try:
                target = child.resolve(strict=True)
            except (OSError, RuntimeError):  # a dangling link, or a loop (RuntimeError before Python 3.13)
                report(str(child), "symbolic link that leads nowhere (a missing target or a loop): not followed")
                continue
            if not target.is_relative_to(inside):
                if _is_archive(child) or child.name.endswith(suffixes) or child.is_dir():
                    report(str(child), "symbolic link leading out of the corpus folder: not followed")
                continue
        if not child.is_file():
            continue
        if _is_archive(child):
            yield from iter_files(child, suffixes, skips, max_bytes)
        elif child.name.endswith(suffixes):
            content = _read_file(child, max_bytes, report)
            if content is not None:
                yield str(child), content


def _read_file(path: Path, max_bytes: int, report: Callable[[str, str], None]) -> bytes | None:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            report(str(path), f"file of {size:,} bytes is larger than the {max_bytes:,}-byte limit")
            return None
        return path.read_bytes()
    except OSError as err:
        report(str(path), f"cannot read: {err.strerror or err}")
        return None


def _iter_archive(
    path: Path, suffixes: tuple[str, ...], max_bytes: int, report: Callable[[str, str], None]
) -> Iterator[tuple[str, bytes]]:
    members = 0
    try:
        with _decompressed(path) as raw, tarfile.open(fileobj=raw, mode="r|") as tar:
            for member in tar:
                members += 1
                if not (member.isfile() and member.name.endswith(suffixes)):
                    continue
                name = f"{path.name}:{member.name}"
                if member.size > max_bytes:
                    report(name, f"member of {member.size:,} bytes is larger than the {max_bytes:,}-byte limit")
                    continue
                handle = tar.extractfile(member)
                if handle is not None:
                    yield name, handle.read(max_bytes + 1)
    except (tarfile.TarError, EOFError, OSError, lzma.LZMAError, zlib.error) as err:
        where = f" after {members} member{'s' * (members != 1)}" if members else ""
        report(
            str(path), f"broken or truncated archive{where} ({type(err).__name__}: {err}); the rest of it was not read"
        )
    else:
        if members == 0:
            report(str(path), "empty archive")


def _decompressed(path: Path) -> BinaryIO:
    """``path`` opened as an uncompressed stream: xz, gzip and bzip2 are recognised by their first
    bytes and read through their modules' file objects, which decompress at most what each read
    asks (``tarfile``'s own ``r|*`` stream decompresses a whole block at once: 16 KiB of xz of
    zeros expand to over 100 MB, held and copied)."""
    with open(path, "rb") as fh:
        magic = fh.read(6)
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.open(path, "rb")
    if magic.startswith(b"\x1f\x8b"):
        return gzip.open(path, "rb")
    if magic.startswith(b"BZh"):
        return bz2.open(path, "rb")
    return open(path, "rb")


def _is_archive(path: Path) -> bool:
    return path.name.endswith((".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2"))
