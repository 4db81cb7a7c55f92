"""Line files written as durable jobs: nothing written before is lost, a killed run resumes.

    job = LineJob.open(Path("preds.jsonl"), inputs={"gap set": Path("gaps.jsonl")})
    job.resumed                  # complete lines an earlier, unfinished run left (0 for a new job)
    job.append('{"id": "g1", ...}')   # one line, flushed at once
    job.finish()                 # preds.jsonl appears, whole

Lines go to ``OUT.partial`` beside the output (the same file system, so the last step is one
rename); each is flushed to the operating system as it is written, so a killed process loses at
most the line it was writing, and that torn line is cut off when the job is opened again. The
output appears only when the job finishes (``fsync``, then ``os.replace``): a reader never sees a
half-written output, and an existing output stays as it was until then. Everything that can be
checked about the paths is checked by :meth:`LineJob.open`, before any work.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from apollo_restore.errors import FileError

#: Suffix of the unfinished file beside the output.
PARTIAL_SUFFIX = ".partial"


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

    @classmethod
    def open(cls, out: Path, inputs: Mapping[str, Path], force: bool = False, restart: bool = False) -> LineJob:
        """Check the paths and open the job, resuming an unfinished one unless ``restart``.

        Args:
            out: the output file.
            inputs: the files the job reads, by what they are (``{"gap set": path}``); neither
                ``out`` nor its partial file may be one of them.
            force: replace an existing ``out`` (it is kept until the new one is complete).
            restart: discard the unfinished file of an earlier run instead of continuing it.

        Raises:
            FileError: ``E206`` ``out`` (or its partial file) is an input; ``E207`` ``out``
                exists and ``force`` is not given; ``E205`` ``out`` is a folder, or its folder
                is missing or not writable.
        """
        out = Path(out)
        partial = out.with_name(out.name + PARTIAL_SUFFIX)
        for path in (out, partial):
            for what, source in inputs.items():
                if _same_file(path, Path(source)):
                    raise FileError("E206", str(path), what=f"{what} {source}")
        check_writable(out)
        if out.exists() and not force:
            raise FileError("E207", str(out))
        if restart:
            partial.unlink(missing_ok=True)
        return cls(out, partial, _cut_torn_line(partial))

    def append(self, line: str) -> None:
        """Write one line (without its newline) to the partial file and flush it."""
        if self._handle is None:
            self._handle = open(self.partial, "a", encoding="utf-8")
        self._handle.write(line + "\n")
        self._handle.flush()

    def finish(self) -> None:
        """Make the output: the partial file, synced to disk, renamed over ``out`` in one step."""
        if self._handle is None:
            self._handle = open(self.partial, "a", encoding="utf-8")
        os.fsync(self._handle.fileno())
        self.close()
        os.replace(self.partial, self.out)

    def close(self) -> None:
        """Close the partial file, leaving it for a later run to resume."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


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
