"""Streaming access to corpus files, whether loose in a folder or inside a ``.tar.xz``.

Every reader goes through :func:`iter_files`, so each one reads archives in place and
reports the files it cannot read through the same :class:`SkipLog`.
"""

from __future__ import annotations

import logging
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

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


def iter_files(path: str | Path, suffixes: tuple[str, ...]) -> Iterator[tuple[str, bytes]]:
    """Yield ``(name, content)`` for every file under ``path`` ending in one of ``suffixes``.

    ``path`` may be a file, a folder (walked in sorted order) or a ``.tar``/``.tar.gz``/
    ``.tar.xz`` archive (streamed member by member, never unpacked to disk). Names inside an
    archive are given as ``archive.tar.xz:member/path``.

    Raises:
        FileNotFoundError: ``path`` does not exist.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"corpus path does not exist: {path}")
    if path.is_dir():
        for child in sorted(path.rglob("*")):
            if child.is_file():
                if _is_archive(child):
                    yield from iter_files(child, suffixes)
                elif child.name.endswith(suffixes):
                    yield str(child), child.read_bytes()
    elif _is_archive(path):
        with tarfile.open(path, mode="r|*") as tar:
            for member in tar:
                if member.isfile() and member.name.endswith(suffixes):
                    handle = tar.extractfile(member)
                    if handle is not None:
                        yield f"{path.name}:{member.name}", handle.read()
    elif path.name.endswith(suffixes):
        yield str(path), path.read_bytes()


def _is_archive(path: Path) -> bool:
    return path.name.endswith((".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2"))
