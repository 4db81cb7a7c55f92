"""Line files written as durable jobs: nothing written before is lost, a killed run resumes.

    job = LineJob.open(Path("preds.jsonl"), inputs={"gap set": Path("gaps.jsonl")}, settings={"k": "20"})
    job.resumed                  # complete lines an earlier, unfinished run left (0 for a new job)
    job.append('{"id": "g1", ...}')   # one line, flushed at once
    job.finish()                 # preds.jsonl appears, whole

Lines go to ``OUT.partial`` beside the output (the same file system, so the last step is one
rename); each is flushed to the operating system as it is written, so a killed process loses at
most the line it was writing, and that torn line is cut off when the job is opened again. The
output appears only when the job finishes (``fsync``, then ``os.replace``): a reader never sees a
half-written output, and an existing output stays as it was until then. Everything that can be
checked about the paths is checked by :meth:`LineJob.open`, before any work.

The settings the lines are made with (``k``, the model...) are recorded beside the partial file
(``OUT.partial.json``) when a job starts; a run that would continue it with other settings, or a
partial file with no record, is refused, so that one output never mixes two. A partial file (or
its record or lock) that is a symbolic link is refused, never followed; a write that fails (a full
disk) is a numbered error, and the next run resumes after the last whole line. While a job is open it holds a lock
(``OUT.partial.lock``: ``flock`` on POSIX, ``msvcrt.locking`` on Windows): a second run on the
same output is refused at once instead of appending to the same file. Both files go when the
output is made.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from apollo_restore.errors import FileError, FormatError

try:  # POSIX
    import fcntl
except ImportError:  # Windows: msvcrt locks a byte range instead
    fcntl = None
    import msvcrt

#: Suffix of the unfinished file beside the output.
PARTIAL_SUFFIX = ".partial"
#: Suffixes (after :data:`PARTIAL_SUFFIX`) of the settings record and of the lock file.
SETTINGS_SUFFIX, LOCK_SUFFIX = ".json", ".lock"


@dataclass
class LineJob:
    """One output file being written line by line (see the module docstring).

    Attributes:
        out: the output file.
        partial: the unfinished file beside it (``out`` + :data:`PARTIAL_SUFFIX`).
        resumed: complete lines already in ``partial`` when the job was opened.
    """

    out: Path
    partial: Path
    resumed: int = 0
    _handle: TextIO | None = field(default=None, repr=False)
    _lock: _Lock | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls,
        out: Path,
        inputs: Mapping[str, Path],
        force: bool = False,
        restart: bool = False,
        settings: Mapping[str, str] | None = None,
    ) -> LineJob:
        """Check the paths and open the job, resuming an unfinished one unless ``restart``.

        Args:
            out: the output file.
            inputs: the files the job reads, by what they are (``{"gap set": path}``); neither
                ``out`` nor its partial file may be one of them.
            force: replace an existing ``out`` (it is kept until the new one is complete).
            restart: discard the unfinished file of an earlier run instead of continuing it.
            settings: what the lines depend on, by name (``{"k": "20"}``): recorded when the
                job starts, and an unfinished job is continued only with the same (a partial
                file with no record is not continued: nothing proves what made it).

        Raises:
            FileError: ``E206`` ``out`` (or its partial file) is an input; ``E207`` ``out``
                exists and ``force`` is not given; ``E205`` ``out`` is a folder, or its folder
                is missing or not writable, or the partial file (or its record, or lock) is a
                symbolic link (its target is never written); ``E210`` another job holds ``out``;
                ``E209`` the unfinished job was made with other ``settings``; ``E208`` a partial
                file with no record of its settings.
        """
        out = Path(out)
        check_writable(out)  # first: ``.`` (a folder with no name) has no partial file beside it
        partial = out.with_name(out.name + PARTIAL_SUFFIX)
        for path in (out, partial):
            for what, source in inputs.items():
                if _same_file(path, Path(source)):
                    raise FileError("E206", str(path), what=f"{what} {source}")
        for path in (partial, _beside(partial, SETTINGS_SUFFIX), _beside(partial, LOCK_SUFFIX)):
            if path.is_symlink():
                reason = "it is a symbolic link (the job writes its own file there, never a link's target); remove it"
                raise FileError("E205", str(path), reason=reason)
        if out.exists() and not force:
            raise FileError("E207", str(out))
        lock = _Lock.take(_beside(partial, LOCK_SUFFIX), out)
        try:
            record = _beside(partial, SETTINGS_SUFFIX)
            if restart:
                partial.unlink(missing_ok=True)
            settings = dict(settings or {})
            if partial.exists():
                _check_settings(record, partial, out, settings)
            else:
                try:
                    write_atomic(record, json.dumps({"settings": settings}, ensure_ascii=False, indent=1).encode())
                except OSError as err:  # a full disk before the first line
                    raise FileError("E205", str(record), reason=_why(err)) from None
            return cls(out, partial, _cut_torn_line(partial), _lock=lock)
        except BaseException:
            if not partial.exists():  # nothing to resume: no lock file left behind either
                lock.path.unlink(missing_ok=True)
            lock.release()
            raise

    def done(self, read_ids: Callable[[Path], list[str]], ids: Collection[str], source: Path) -> set[str]:
        """The ids whose lines an unfinished run already wrote (none for a new job): the one resume
        of every line job (``predict``, ``attribute --texts``). ``read_ids`` reads the partial
        file's ids and refuses a line that is not one of the job's (not JSON, no id, an id
        already on another line: ``E201`` naming the line); each must be one of ``ids``, the
        input's (``source``). The job is closed when the partial file is refused.

        Raises:
            FormatError: ``E201`` from ``read_ids``.
            FileError: ``E208`` ids the input has not; ``E202``/``E203`` the file cannot be read.
        """
        if not self.resumed:
            return set()
        try:
            done = read_ids(self.partial)
            stray = sorted(set(done) - set(ids))
            if stray:
                reason = f"{len(stray)} of its ids are not in {source} (the first: {stray[0]!r})"
                raise FileError("E208", str(self.out), partial=self.partial, reason=reason)
        except BaseException:
            self.close()
            raise
        return set(done)

    def append(self, line: str) -> None:
        """Write one line (without its newline) to the partial file and flush it.

        Raises:
            FileError: ``E205`` the line cannot be written (a full disk): the lines before it stay,
                and a torn line is cut off when the job is opened again.
        """
        try:
            if self._handle is None:
                self._handle = open(self.partial, "a", encoding="utf-8")
            self._handle.write(line + "\n")
            self._handle.flush()
        except OSError as err:
            self._drop_handle()
            raise FileError("E205", str(self.partial), reason=_why(err)) from None

    def finish(self) -> None:
        """Make the output: the partial file, synced to disk, renamed over ``out`` in one step.

        Raises:
            FileError: ``E205`` it cannot be synced or renamed: the partial file stays, to resume.
        """
        try:
            if self._handle is None:
                self._handle = open(self.partial, "a", encoding="utf-8")
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None
            os.replace(self.partial, self.out)
        except OSError as err:
            self._drop_handle()
            raise FileError("E205", str(self.out), reason=_why(err)) from None
        _beside(self.partial, SETTINGS_SUFFIX).unlink(missing_ok=True)
        if self._lock is not None:
            self._lock.path.unlink(missing_ok=True)  # still held: a later run finds the output, not a lock
        self.close()

    def _drop_handle(self) -> None:
        """Close the partial file after a failed write, dropping what its buffer still holds
        (closing would try to write it again, and fail again)."""
        if self._handle is not None:
            try:
                self._handle.close()
            except OSError:
                pass  # the unwritten rest of a line: the torn line is cut when the job is opened again
            self._handle = None

    def close(self) -> None:
        """Close the partial file, leaving it for a later run to resume, and release the lock; a
        job that wrote no line (e.g. its model failed to load) leaves no file behind."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if self._lock is not None:
            if not self.partial.exists():  # nothing to resume: its record and lock go too
                _beside(self.partial, SETTINGS_SUFFIX).unlink(missing_ok=True)
                self._lock.path.unlink(missing_ok=True)  # still held, as in finish()
            self._lock.release()
            self._lock = None


class _Lock:
    """An exclusive advisory lock on a file beside the output, held while a job is open.

    Attributes:
        path: the lock file.
        held: whether the lock was taken (``False`` on a file system that has no locks, e.g. some
            network mounts: the job then runs unguarded rather than not at all).
    """

    def __init__(self, path: Path, handle: TextIO, held: bool = True):
        self.path, self.handle, self.held = path, handle, held

    @classmethod
    def take(cls, path: Path, out: Path) -> _Lock:
        """Lock ``path`` (created if missing) without waiting.

        Raises:
            FileError: ``E210`` another process holds it; ``E205`` it cannot be created.
        """
        held = (BlockingIOError, PermissionError)  # what a lock held elsewhere raises (POSIX, Windows)
        try:
            handle = open(path, "a", encoding="utf-8")
        except OSError as err:
            raise FileError("E205", str(path), reason=err.strerror or str(err)) from None
        try:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:
                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except held:
            handle.close()
            raise FileError("E210", str(out), lock=path) from None
        except OSError:  # no locks on this file system
            return cls(path, handle, held=False)
        return cls(path, handle)

    def release(self) -> None:
        """Unlock and close (the lock file stays for an unfinished job; a finished one removes it
        while still holding it)."""
        if self.held and fcntl is not None:
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_UN)
        elif self.held:
            msvcrt.locking(self.handle.fileno(), msvcrt.LK_UNLCK, 1)
        self.handle.close()


def _beside(partial: Path, suffix: str) -> Path:
    """The file named ``partial`` + ``suffix`` in its folder."""
    return partial.with_name(partial.name + suffix)


def _check_settings(record: Path, partial: Path, out: Path, settings: dict[str, str]) -> None:
    """Refuse to continue ``partial`` when its ``record`` is missing or names other settings.

    Raises:
        FileError: ``E209`` naming the settings that differ; ``E208`` no record.
        FormatError: ``E201`` a record that is not one.
    """
    try:
        was = json.loads(record.read_text(encoding="utf-8"))["settings"]
    except FileNotFoundError:
        reason = f"nothing records what it was made with ({record} is missing)"
        raise FileError("E208", str(out), partial=partial, reason=reason) from None
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as err:
        raise FormatError(str(record), 1, f"not a settings record ({type(err).__name__}); give --restart") from None
    if not isinstance(was, dict):
        raise FormatError(str(record), 1, "not a settings record; give --restart")
    differ = sorted(key for key in was.keys() | settings.keys() if was.get(key) != settings.get(key))
    if differ:
        raise FileError(
            "E209",
            str(partial),
            partial=partial,
            was=", ".join(f"{key}={was.get(key, '(none)')}" for key in differ),
            now=", ".join(f"{key}={settings.get(key, '(none)')}" for key in differ),
        )


def _why(err: OSError) -> str:
    """An operating-system error in words (``No space left on device``)."""
    return err.strerror or str(err)


def write_atomic(path: Path, data: bytes | memoryview) -> None:
    """Write ``data`` to ``path`` whole: a temporary file in its folder (created if missing),
    flushed to disk and renamed over it, so that a reader sees the old file or the new one, never
    a torn one, even after a crash."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def check_writable(out: Path) -> None:
    """Check that a file can be written at ``out``.

    Raises:
        FileError: ``E205``: ``out`` is a folder, or its folder is missing or not writable.
    """
    if out.is_dir():
        raise FileError("E205", str(out), reason="it is a folder; give a file name")
    folder = out.parent
    if not folder.is_dir():
        raise FileError("E205", str(out), reason=f"there is no folder {folder}; create it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FileError("E205", str(out), reason=f"the folder {folder} is not writable")


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file: the same path once links are resolved, or (when both
    exist) the same inode, as hard links are."""
    if os.path.realpath(a) == os.path.realpath(b):  # realpath, unlike resolve, survives a link loop
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _cut_torn_line(path: Path) -> int:
    """Cut ``path`` after its last newline (a process killed mid-line leaves a torn line);
    returns the number of complete lines (0 when there is no such file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    except OSError as err:
        raise FileError("E202", str(path), reason=err.strerror or str(err)) from None
    keep = data.rfind(b"\n") + 1
    if keep < len(data):
        with open(path, "r+b") as handle:
            handle.truncate(keep)
    return data.count(b"\n", 0, keep)
