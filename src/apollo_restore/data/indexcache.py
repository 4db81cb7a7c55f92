"""The text index's files and cache folder: checksums, one builder at a time, numbered failures.

    records = file_records(folder, ["sa.npy", "stream.npy"])   # at build, into meta.json
    verify_files(folder, records)                              # at load: E408 naming the file
    with build_lock(folder):                                   # one builder; others wait (E411)
        clean_leftovers(folder)                                # what a killed build left

Every file of an index folder is recorded in its ``meta.json`` with its size and its xxh3-64
checksum (``xxhash``, over the memory-mapped file); a file of another size or content is
*damage*, never a silent result. Checking the packaged text's index (six files, 549 MB) costs
0.06 s of CPU with the files in the page cache (0.5–0.65 s of wall time on 2 cores loaded by
other work; more from a cold disk), once per process (BENCHMARKS.md, "The text index and parallels").

Cache folder failures (a file where the folder should be, a read-only or full disk) are
``E409`` naming the path; a relative ``$APOLLO_RESTORE_CACHE`` is ``E410``; a builder that waits
more than :data:`LOCK_SECONDS` for another is ``E411``.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import xxhash
from filelock import FileLock, Timeout

from apollo_restore.errors import TextIndexError

CACHE_ENV = "APOLLO_RESTORE_CACHE"
#: Longest wait, in seconds, for another process's build of the same index (a build of the
#: packaged text takes about 20 s on 2 cores; 900 s is a build on a very slow or busy machine).
LOCK_SECONDS = 900.0
#: Leftover build folders of *other* indexes (another package version's) older than this many
#: seconds are removed too: no build runs that long while its lock is held.
STALE_SECONDS = 2 * LOCK_SECONDS
#: Bytes a build writes per stream code: stream and original text (≈ 1 + 1.2), two int32 suffix
#: arrays (8), checkpoints and documents (< 0.3); with a margin for the temporary folder's peak.
BYTES_PER_CODE = 11


def cache_dir() -> Path:
    """``$APOLLO_RESTORE_CACHE`` if set, else the user's cache directory for apollo-restore.

    Raises:
        TextIndexError: ``E410`` when ``$APOLLO_RESTORE_CACHE`` is a relative path.
    """
    value = os.environ.get(CACHE_ENV)
    if value:
        if not os.path.isabs(value):
            raise TextIndexError("E410", value)
        return Path(value)
    from platformdirs import user_cache_dir  # third-party, imported on use: a CLI call may never need it

    return Path(user_cache_dir("apollo-restore"))


def cache_error(err: OSError, where: Path) -> TextIndexError:
    """``E409`` for an OS failure in the cache folder, naming the path that failed (``where`` when
    the error names none)."""
    path = err.filename if err.filename else where
    reason = err.strerror or str(err) or type(err).__name__
    if isinstance(err, FileExistsError | NotADirectoryError):
        reason += " (a file stands where a folder is needed)"
    return TextIndexError("E409", path, reason=reason)


def xxh3_file(path: Path) -> str:
    """The xxh3-64 checksum (16 hex digits) of a file's bytes, memory-mapped (no copy)."""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return xxhash.xxh3_64_hexdigest(b"")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return xxhash.xxh3_64_hexdigest(view)


def file_records(folder: Path, names: list[str]) -> dict[str, dict[str, object]]:
    """``{name: {"bytes": size, "xxh3": checksum}}`` of the files ``names`` in ``folder``."""
    return {name: {"bytes": (folder / name).stat().st_size, "xxh3": xxh3_file(folder / name)} for name in names}


def verify_files(folder: Path, records: object) -> None:
    """Check every recorded file of ``folder``: present, of its size, of its checksum.

    Args:
        records: ``meta.json``'s ``"files"`` entry, as :func:`file_records` wrote it.

    Raises:
        TextIndexError: ``E408`` naming the first damaged file (or ``meta.json`` when the
            records themselves are missing or malformed).
    """

    def damaged(path: Path, reason: str) -> TextIndexError:
        return TextIndexError("E408", path, folder=folder, reason=reason)

    if not isinstance(records, dict) or not records:
        raise damaged(folder / "meta.json", "records no file sizes and checksums (an older or altered index)")
    for name, record in records.items():
        path = folder / str(name)
        if (
            not isinstance(record, dict)
            or not isinstance(record.get("bytes"), int)
            or not isinstance(record.get("xxh3"), str)
            or Path(str(name)).name != name
        ):
            raise damaged(folder / "meta.json", f"has a malformed record for {name!r}")
        try:
            size = path.stat().st_size
            if size != record["bytes"]:
                raise damaged(path, f"has {size:,} bytes, {record['bytes']:,} were written")
            if xxh3_file(path) != record["xxh3"]:
                raise damaged(path, "does not hold the bytes that were written (its checksum differs)")
        except OSError as err:
            raise damaged(path, f"cannot be read ({err.strerror or err})") from err


@contextlib.contextmanager
def build_lock(folder: Path, say: Callable[[str], None] | None = None, timeout: float | None = None) -> Iterator[None]:
    """Hold the lock of ``folder``'s build (``FOLDER.lock`` beside it): one builder at a time.

    Args:
        say: told once when another process holds the lock and this one waits.
        timeout: seconds to wait for it (default :data:`LOCK_SECONDS`).

    Raises:
        TextIndexError: ``E411`` after ``timeout`` seconds; ``E409`` when the lock file cannot
            be made (the cache folder is a file, read-only, ...).
    """
    lock_path = folder.parent / f"{folder.name}.lock"
    timeout = LOCK_SECONDS if timeout is None else timeout
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(lock_path, timeout=timeout)
        started = time.monotonic()
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if say:
                say(f"another process is building the text index {folder}: waiting for it (at most {timeout:.0f} s)…")
            try:
                lock.acquire(timeout=timeout)
            except Timeout:
                raise TextIndexError("E411", folder, waited=time.monotonic() - started, lock=lock_path) from None
    except OSError as err:
        raise cache_error(err, folder.parent) from err
    try:
        yield
    finally:
        lock.release()


def clean_leftovers(folder: Path) -> list[Path]:
    """Remove what killed builds left beside ``folder`` (call it holding :func:`build_lock`).

    Removes the hidden build folders ``.FOLDER.*`` of this index, and ``.textindex-*`` ones of
    other indexes untouched for :data:`STALE_SECONDS`.

    Returns:
        the folders removed.
    """
    removed = []
    now = time.time()
    for leftover in folder.parent.glob(".textindex-*"):
        ours = leftover.name.startswith(f".{folder.name}.")
        try:
            stale = now - leftover.stat().st_mtime > STALE_SECONDS
        except OSError:
            continue
        if leftover.is_dir() and (ours or stale):
            shutil.rmtree(leftover, ignore_errors=True)
            removed.append(leftover)
    return removed


def check_space(folder: Path, stream_codes: int) -> None:
    """Refuse a build that cannot fit: ``E409`` when ``folder``'s disk has less room than an index
    of ``stream_codes`` codes needs (:data:`BYTES_PER_CODE` each), before the sorts run."""
    needed = BYTES_PER_CODE * stream_codes
    try:
        free = shutil.disk_usage(folder.parent).free
    except OSError as err:
        raise cache_error(err, folder.parent) from err
    if free < needed:
        raise TextIndexError(
            "E409", folder.parent, reason=f"its disk has {free / 2**20:,.0f} MB free, the index needs about "
            f"{needed / 2**20:,.0f} MB"
        )  # fmt: skip
