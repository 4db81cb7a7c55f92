"""Attributing a file of texts as a durable job, resumable like ``predict``.

    job = AttributeJob.open(Path("texts.jsonl"), Path("out.jsonl"), settings={"model": "…"})
    job.run(lambda text: attribute(text))   # one output line per input line, in order

Each input line is ``{"id": …, "text": …}`` (ids unique); each output line
``{"id": …, "date": {"year", "low", "high", …}, "places": [{"place", "prob"}, …], …}`` (the
:meth:`~apollo_restore.schema.answers.Attribution.to_dict` form), or ``{"id": …, "error":
"[E801] …"}`` for a text that cannot be attributed (too short, not Greek, malformed Leiden, a
lone surrogate): one bad text does not stop the others. A failure of the model itself (its
folder refused, probabilities that are not finite: ``E5xx``, ``E803``) stops the job with its
numbered error, never a line. The lines go through
:class:`~apollo_restore.data.outputs.LineJob`, resumed as ``predict`` resumes
(:meth:`~apollo_restore.data.outputs.LineJob.done`: the same settings, the model folder's
fingerprint among them; no malformed, id-less or repeated line): a killed run continues where it
was, the output appears whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apollo_restore.data.formats import jsonl_line, read_ids, read_jsonl, unique_id
from apollo_restore.data.outputs import LineJob
from apollo_restore.errors import AttributionError, FormatError, LeidenError, RequestError
from apollo_restore.inputs import digest
from apollo_restore.schema.answers import Attribution

#: The errors that are a text's own (written as its line); any other stops the job.
TEXT_ERRORS = (RequestError, LeidenError, AttributionError)
#: Most characters of an id.
MAX_ID = 300


def read_texts(path: Path) -> list[tuple[str, str]]:
    """``(id, text)`` of each line of a texts JSONL (blank lines skipped).

    Raises:
        FileError: the file cannot be read (``E202``–``E204``).
        FormatError: ``E201`` a line that is not a JSON object with a string ``text`` and an
            ``id`` (string or number, at most :data:`MAX_ID` characters, no lone surrogate), or a
            repeated id (file and line named).
    """
    out: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for number, row in read_jsonl(path):
        if not isinstance(row.get("text"), str):
            raise FormatError(str(path), number, 'expected {"id": …, "text": "…"} with the text as a string')
        doc = row.get("id")
        if not isinstance(doc, (str, int)) or isinstance(doc, bool):
            raise FormatError(str(path), number, "the id must be a string or a whole number")
        doc = str(doc)
        if not 0 < len(doc) <= MAX_ID or not _encodable(doc):
            raise FormatError(str(path), number, f"the id must be 1 to {MAX_ID} characters of text, not {doc[:40]!a}")
        out.append((unique_id(seen, doc, path, number), row["text"]))
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
            FileError, FormatError: see :func:`read_texts` and :meth:`LineJob.open`; ``E209``
                an unfinished output made with other settings (another model folder, other
                texts); ``E208`` one holding ids the input has not; ``E201`` one with a line
                that is not an answer's (not JSON, no id, an id twice: :func:`~apollo_restore.data.formats.read_ids`).
        """
        read = read_texts(texts)
        recorded = {"texts": digest(jsonl_line({"texts": read}).encode("utf-8", "surrogatepass")), **(settings or {})}
        output = LineJob.open(out, {"texts": texts}, force, restart, recorded)
        done = output.done(read_ids, [doc for doc, _ in read], texts)
        return cls([(d, t) for d, t in read if d not in done], len(read), output)

    def run(self, attribute: Callable[[str], Attribution]) -> int:
        """Attribute every text still to do, appending each line as it is done, then make the
        output; returns the texts in the input.

        Raises:
            FileError: ``E205`` a line cannot be written: the next run resumes.
            AttributionError, ModelFolderError: the model failed (``E803``, ``E5xx``): the lines
                before stay, for the same command to continue once the folder is mended.
        """
        try:
            for doc, text in self.todo:
                try:
                    row: dict[str, Any] = {"id": doc, **attribute(text).to_dict()}
                except TEXT_ERRORS as err:  # the text's own (E801, E308, E0xx, E3xx); the model's stop the job
                    if isinstance(err, AttributionError) and err.code != "E801":
                        raise
                    row = {"id": doc, "error": str(err)}
                self.output.append(jsonl_line(row))
            self.output.finish()
        finally:
            self.output.close()
        return self.total


def _encodable(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (no lone surrogate, as ``"\\ud800"`` in JSON gives)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
