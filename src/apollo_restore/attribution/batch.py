"""Attributing a file of texts as a durable job, resumable like ``predict``.

    job = AttributeJob.open(Path("texts.jsonl"), Path("out.jsonl"), settings={"model": "…"})
    job.run(lambda text: attribute(text))   # one output line per input line, in order

Each input line is ``{"id": …, "text": …}`` (ids unique); each output line
``{"id": …, "date": {"year", "low", "high", …}, "places": [{"place", "prob"}, …], …}`` (the
:meth:`~apollo_restore.schema.attribution.Attribution.to_dict` form), or ``{"id": …, "error":
"[E801] …"}`` for a text that cannot be attributed (too short, not Greek, malformed Leiden): one
bad text does not stop the others. The lines go through
:class:`~apollo_restore.data.outputs.LineJob`: a killed run continues where it was, the output
appears whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apollo_restore.data.formats import jsonl_line, read_jsonl, unique_id
from apollo_restore.data.outputs import LineJob
from apollo_restore.errors import FileError, FormatError, LeidenError
from apollo_restore.inputs import read_lines
from apollo_restore.schema.attribution import Attribution


def read_texts(path: Path) -> list[tuple[str, str]]:
    """``(id, text)`` of each line of a texts JSONL (blank lines skipped).

    Raises:
        FileError: the file cannot be read (``E202``–``E204``).
        FormatError: ``E201`` a line that is not a JSON object with a string ``text`` and an
            ``id`` (string or number), or a repeated id (file and line named).
    """
    out: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for number, row in read_jsonl(path):
        if not isinstance(row.get("text"), str):
            raise FormatError(str(path), number, 'expected {"id": …, "text": "…"} with the text as a string')
        doc = row.get("id")
        if not isinstance(doc, (str, int)) or isinstance(doc, bool):
            raise FormatError(str(path), number, "the id must be a string or a whole number")
        doc = unique_id(seen, str(doc), path, number)
        out.append((doc, row["text"]))
    return out


@dataclass
class AttributeJob:
    """The texts still to attribute and the line job writing them."""

    todo: list[tuple[str, str]]
    total: int
    output: LineJob

    @classmethod
    def open(cls, texts: Path, out: Path, force: bool = False, restart: bool = False,
             settings: Mapping[str, str] | None = None) -> AttributeJob:  # fmt: skip
        """Check the input and the output and open the job (resuming an unfinished one with the
        same settings, the input's content among them).

        Raises:
            FileError, FormatError: see :func:`read_texts` and :meth:`LineJob.open`; ``E208`` an
                unfinished output holding ids the input has not.
        """
        read = read_texts(texts)
        import hashlib

        digest = hashlib.sha256(jsonl_line({"texts": read}).encode()).hexdigest()[:16]
        output = LineJob.open(out, {"texts": texts}, force, restart, {"texts": digest, **(settings or {})})
        done: set[str] = set()
        if output.resumed:
            for _, line in read_lines(output.partial):
                if line.strip():
                    done.add(str(json.loads(line)["id"]))
        stray = sorted(done - {doc for doc, _ in read})
        if stray:
            output.close()
            raise FileError("E208", str(out), partial=output.partial,
                            reason=f"{len(stray)} of its ids are not in {texts} (the first: {stray[0]!r})")  # fmt: skip
        return cls([(d, t) for d, t in read if d not in done], len(read), output)

    def run(self, attribute: Callable[[str], Attribution]) -> int:
        """Attribute every text still to do, appending each line as it is done, then make the
        output; returns the texts in the input."""
        try:
            for doc, text in self.todo:
                try:
                    row: dict[str, Any] = {"id": doc, **attribute(text).to_dict()}
                except (ValueError, LeidenError) as err:  # numbered: E801, E308, E0xx, E3xx
                    row = {"id": doc, "error": str(err)}
                self.output.append(jsonl_line(row))
            self.output.finish()
        finally:
            self.output.close()
        return self.total
