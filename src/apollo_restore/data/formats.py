"""Interchange formats for gap sets and predictions (docs/design.md, *Interchange formats*;
examples in ``tests/fixtures/formats/``).

* our gap set, JSONL: ``{"id", "source", "doc", "prefix", "suffix", "target", "hint", "kind"}``
  with ``hint`` ``null`` | ``7`` | ``[5, 8]`` → :class:`GapExample`;
* our predictions, JSONL: ``{"id", "candidates": [{"text", "prob"}...], "ms"}`` →
  :class:`Prediction`;
* Cullhed et al. chat JSONL (``messages``: system, user with ``[N letters missing]``,
  assistant = target), read and written;
* Cullhed prediction files (``user``, ``assistant``, ``top_1_prediction``, maybe
  ``top_20_predictions``), matched to our gap ids by normalised (prefix, suffix, target);
* Ithaca prediction files (``real_response``, ``predictions: {"rank_1": ...}``).

Every reader reads through the input layer (:mod:`apollo_restore.inputs`: bounded, strict
UTF-8) and names the file and the 1-based line of a malformed line
(:class:`~apollo_restore.errors.FormatError`); our gap sets and predictions refuse a repeated id.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from apollo_restore.data.normalise import normalise_with_gaps
from apollo_restore.errors import FormatError
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.inputs import read_lines
from apollo_restore.schema.base import Problem, SchemaError
from apollo_restore.schema.base import check as check_schema
from apollo_restore.schema.jobs import GapLine, PredictionLine, QuestionLine

M = TypeVar("M")

#: About how deep JSON nesting the parser follows before it gives up (a line nested deeper is refused).
_DEPTH = sys.getrecursionlimit()
CULLHED_SYSTEM_PROMPT = "Fill in the missing letters in this inscription!"
_MISSING = re.compile(r"\[(\d+) letters? missing\]")


@dataclass
class GapExample:
    """One gap to restore: normalised context either side, the answer and a length hint.

    Attributes:
        id: unique id, e.g. ``ddb:bgu.1.100:s0``.
        source: corpus of the document (``ddb``, ``dclp``, ``inscription``, ``cullhed``, ...).
        doc: document id.
        prefix: normalised text before the gap (other lacunae as ``-`` runs and ``…``).
        suffix: normalised text after the gap.
        target: the letters to restore (normalised; silver for ``kind="true"``).
        hint: letters in the gap (JSON ``null``, ``7`` or ``[5, 8]`` on disk).
        kind: ``synthetic`` (masked from known text) or ``true`` (a real lacuna, silver label).
    """

    id: str
    source: str
    doc: str
    prefix: str
    suffix: str
    target: str
    hint: Hint = NO_HINT
    kind: str = "synthetic"

    def to_dict(self) -> dict[str, Any]:
        hint = self.hint.to_json()
        return {
            "id": self.id, "source": self.source, "doc": self.doc, "prefix": self.prefix,
            "suffix": self.suffix, "target": self.target, "hint": hint, "kind": self.kind,
        }  # fmt: skip


@dataclass
class Prediction:
    """Ranked candidates for one gap.

    Attributes:
        id: the :class:`GapExample` id.
        candidates: ``(text, prob)`` best first; ``prob`` is ``None`` when the system gives none.
        ms: time taken, milliseconds (``None`` if unknown).
    """

    id: str
    candidates: list[tuple[str, float | None]] = field(default_factory=list)
    ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "candidates": [{"text": t, "prob": p} for t, p in self.candidates], "ms": self.ms}


# -- JSONL plumbing -------------------------------------------------------------------------


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line, read through the input layer.

    Raises:
        FileError: the file cannot be read, is not UTF-8 or has an overlong line.
        FormatError: a line that is not a JSON object.
    """
    for number, line in read_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(str(path), number, f"not valid JSON ({exc.msg}, column {exc.colno})") from None
        except RecursionError:  # json's parser recurses once per level: a deep line is refused, not a crash
            raise FormatError(str(path), number, f"values nested more than about {_DEPTH:,} levels deep") from None
        if not isinstance(obj, dict):
            raise FormatError(str(path), number, "expected a JSON object")
        yield number, obj


def unique_id(seen: dict[str, int], key: str, path: str | Path, number: int) -> str:
    """``key`` (an id), after checking that no earlier line of the file has it; records it in ``seen``."""
    if key in seen:
        raise FormatError(str(path), number, f"id {key!r} is already on line {seen[key]}: every line needs its own id")
    seen[key] = number
    return key


def read_ids(path: str | Path) -> list[str]:
    """The ids of a JSONL file of rows ``{"id": "…", …}`` (a job's output: each line a JSON object
    with a string ``id`` of at most 300 characters, no id twice), in order.

    Raises:
        FileError: the file cannot be read, is not UTF-8 or has an overlong line.
        FormatError: ``E201`` a line that is not a JSON object, has no string id, or repeats one.
    """
    seen: dict[str, int] = {}
    for number, obj in read_jsonl(path):
        doc = obj.get("id")
        if not isinstance(doc, str) or not 0 < len(doc) <= 300:
            raise FormatError(str(path), number, f'expected an object with its "id" as text, not {str(doc)[:40]!r}')
        unique_id(seen, doc, path, number)
    return list(seen)


def jsonl_line(row: dict[str, Any]) -> str:
    """One line of a JSONL file (without its newline): the row as JSON, non-ASCII kept."""
    return json.dumps(row, ensure_ascii=False)


def _write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(jsonl_line(row) + "\n")
            count += 1
    return count


def _field(obj: dict[str, Any], key: str, path: str | Path, number: int, kind: type | tuple[type, ...] = str) -> Any:
    if key not in obj:
        raise FormatError(str(path), number, f"missing field '{key}'")
    value = obj[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise FormatError(str(path), number, f"field '{key}' has the wrong type ({type(value).__name__})")
    return value


# -- our gap sets and predictions -------------------------------------------------------------


def read_gapset(
    path: str | Path, check: Callable[[GapExample], object] | None = None, need_target: bool = True
) -> list[GapExample]:
    """Read a gap-set JSONL file, each line as a
    :class:`~apollo_restore.schema.jobs.GapLine` (strict types, bounded texts and hint).

    Args:
        path: the file.
        check: called on each gap as it is read; a ``ValueError`` it raises (such as the restore
            layer's request check) is reported with the file and line.
        need_target: refuse a gap without its answer (``target``); prediction needs none (then
            a missing one reads as ``""``).

    Raises:
        FileError: the file cannot be read, is not UTF-8 or has an overlong line.
        FormatError: a malformed line (a field missing, of the wrong type or out of its bounds,
            named with what it must be; JSON nested too deep), an id already used by another
            line, or a gap ``check`` refuses (file and line number in the message).
    """
    model = GapLine if need_target else QuestionLine
    out = []
    seen: dict[str, int] = {}
    for number, obj in read_jsonl(path):
        line = _line(model, obj, path, number)
        out.append(
            GapExample(
                id=unique_id(seen, line.id, path, number),
                source=line.source,
                doc=line.doc,
                prefix=line.prefix,
                suffix=line.suffix,
                target=line.target,
                hint=line.hint,
                kind=line.kind,
            )
        )
        if check is not None:
            try:
                check(out[-1])
            except ValueError as exc:
                raise FormatError(str(path), number, str(exc)) from None
    return out


def write_gapset(path: str | Path, examples: Iterable[GapExample]) -> int:
    """Write examples as gap-set JSONL; returns the number written."""
    return _write_jsonl(path, (ex.to_dict() for ex in examples))


def read_predictions(path: str | Path) -> list[Prediction]:
    """Read our prediction JSONL file, each line as a
    :class:`~apollo_restore.schema.jobs.PredictionLine`.

    Raises:
        FileError: the file cannot be read, is not UTF-8 or has an overlong line.
        FormatError: a malformed line (naming the field and what it must be: a candidate not an
            object with a ``text`` string, a ``prob`` not a probability from 0 to 1 or ``null``
            (NaN and infinities refused), ``ms`` not a finite number from 0 to 10⁹ or ``null``,
            more than 1,000 candidates, JSON nested too deep), or an id already used by another
            line.
    """
    out = []
    seen: dict[str, int] = {}
    for number, obj in read_jsonl(path):
        line = _line(PredictionLine, obj, path, number)
        candidates = [(c.text, c.prob) for c in line.candidates]
        ms = obj.get("ms")  # as written (84 stays 84): checked a finite number or null
        out.append(Prediction(unique_id(seen, line.id, path, number), candidates, ms))
    return out


_CANDIDATE = re.compile(r"candidates\[(\d+)\](?:\.(\w+))?")


def _line(model: type[M], obj: dict[str, Any], path: str | Path, number: int) -> M:
    """``obj`` (line ``number`` of ``path``) as ``model``.

    Raises:
        FormatError: ``E201`` naming the field the schema refuses and what it must be.
    """
    try:
        return check_schema(model, obj)
    except SchemaError as err:
        raise FormatError(str(path), number, _reason(err.problem)) from None


def _reason(p: Problem) -> str:
    """What an ``E201`` says of a refused field: ``field 'ms' is 'fast'; it must be ...``, a
    candidate's field after its 1-based number."""
    missing = isinstance(p.value, str) and p.value == "missing"  # a value shown is never a str
    found = _CANDIDATE.fullmatch(p.field)
    if found and (found.group(2) in (None, "text")):
        i, key = int(found.group(1)) + 1, found.group(2)
        was = "" if key is None else f" (field 'text' is {'missing' if missing else repr(p.value)})"
        return f"candidate {i}: each candidate must be an object with a 'text' string of at most 1,000 characters{was}"
    where = f"candidate {int(found.group(1)) + 1}: field '{found.group(2)}'" if found else f"field '{p.field}'"
    if missing:
        return f"missing {where}"
    return f"{where} is {p.value!r}; it must be {p.expected}"


def write_predictions(path: str | Path, predictions: Iterable[Prediction]) -> int:
    """Write predictions as JSONL; returns the number written."""
    return _write_jsonl(path, (p.to_dict() for p in predictions))


# -- Cullhed et al. ------------------------------------------------------------------------


def split_cullhed_user(text: str) -> tuple[str, str, int]:
    """Split a Cullhed user turn at its ``[N letters missing]`` mark.

    Their other lost letters are ``-`` (one per letter), as ours; the text is normalised with
    gap markers kept.

    Returns:
        ``(prefix, suffix, N)``.

    Raises:
        ValueError: no mark, or more than one.
    """
    marks = list(_MISSING.finditer(text))
    if len(marks) != 1:
        raise ValueError(f"expected one '[N letters missing]' mark, found {len(marks)}")
    m = marks[0]
    n = int(m.group(1))
    if n < 1:
        raise ValueError(f"'{m.group(0)}' counts no letters")
    return _norm_context(text[: m.start()], "prefix"), _norm_context(text[m.end() :], "suffix"), n


def _norm_context(text: str, side: str) -> str:
    """Normalise one side of a gap, keeping the boundary space that separates words."""
    core = normalise_with_gaps(text)
    if not core:
        return ""
    if side == "prefix" and text[-1:].isspace():
        return core + " "
    if side == "suffix" and text[:1].isspace():
        return " " + core
    return core


def _cullhed_example(user: str, target: str, path: str | Path, number: int, index: int) -> GapExample:
    try:
        prefix, suffix, n = split_cullhed_user(user)
    except ValueError as exc:
        raise FormatError(str(path), number, str(exc)) from None
    stem = Path(path).stem
    return GapExample(
        id=f"cullhed:{stem}:{index}",
        source="cullhed",
        doc=f"{stem}:{number}",
        prefix=prefix,
        suffix=suffix,
        target=normalise_with_gaps(target),
        hint=Hint.exact(n),
        kind="synthetic",
    )


def read_cullhed_chat(path: str | Path) -> list[GapExample]:
    """Read a Cullhed chat-JSONL gap set (``messages``: system, user, assistant).

    Raises:
        FormatError: a malformed line, or a user turn without exactly one gap mark.
    """
    out = []
    for index, (number, obj) in enumerate(read_jsonl(path)):
        messages = _field(obj, "messages", path, number, list)
        turns = {m.get("role"): m.get("content") for m in messages if isinstance(m, dict)}
        user, assistant = turns.get("user"), turns.get("assistant")
        if not isinstance(user, str) or not isinstance(assistant, str):
            raise FormatError(str(path), number, "needs a 'user' and an 'assistant' message")
        out.append(_cullhed_example(user, assistant, path, number, index))
    return out


def to_cullhed_user(example: GapExample) -> str:
    """The user turn for ``example``: context with ``[N letters missing]`` in the gap.

    The hint gives N; a range uses its midpoint, and no hint uses the target's letter count
    (Cullhed's format always states N).
    """
    n = example.hint.middle if example.hint.given else sum(ch.isalpha() for ch in example.target)
    unit = "letter" if n == 1 else "letters"
    return f"{example.prefix}[{n} {unit} missing]{example.suffix}"


def write_cullhed_chat(
    path: str | Path, examples: Iterable[GapExample], system_prompt: str = CULLHED_SYSTEM_PROMPT
) -> int:
    """Write examples as Cullhed chat JSONL; returns the number written."""
    rows = (
        {
            "messages": [
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": to_cullhed_user(ex)},
                {"role": "assistant", "content": ex.target},
            ]
        }
        for ex in examples
    )
    return _write_jsonl(path, rows)


def gap_key(prefix: str, suffix: str, target: str) -> tuple[str, str, str]:
    """Key matching one gap across files: normalised text, spaces at the edges ignored."""
    return (normalise_with_gaps(prefix), normalise_with_gaps(suffix), normalise_with_gaps(target))


def read_cullhed_predictions(
    path: str | Path, gaps: Iterable[GapExample] | None = None
) -> list[tuple[GapExample, Prediction]]:
    """Read a Cullhed prediction file.

    Each line has ``user``, ``assistant`` (``{"role", "content"}`` or a plain string) and
    ``top_1_prediction``; ``top_20_predictions`` (a list) is used when present.

    Args:
        path: the file.
        gaps: our gap set; when given, each line takes the id of the gap with the same
            normalised (prefix, suffix, target) — among several, the one whose hint is the
            line's N — or keeps its ``cullhed:`` id if none matches.

    Returns:
        ``(example, prediction)`` pairs in file order; probabilities are ``None``.

    Raises:
        FormatError: a malformed line.
    """
    index: dict[tuple[str, str, str], list[GapExample]] = {}
    for gap in gaps or ():
        index.setdefault(gap_key(gap.prefix, gap.suffix, gap.target), []).append(gap)
    out = []
    for i, (number, obj) in enumerate(read_jsonl(path)):
        user, target = _content(obj, "user", path, number), _content(obj, "assistant", path, number)
        example = _cullhed_example(user, target, path, number, i)
        same_text = index.get(gap_key(example.prefix, example.suffix, example.target), [])
        if same_text:  # one text may be asked with several hints: prefer the same hint
            example = next((g for g in same_text if g.hint == example.hint), same_text[0])
        ranked = obj.get("top_20_predictions")
        if not isinstance(ranked, list) or not all(isinstance(t, str) for t in ranked) or not ranked:
            ranked = [_field(obj, "top_1_prediction", path, number)]
        candidates: list[tuple[str, float | None]] = [(normalise_with_gaps(t), None) for t in ranked]
        out.append((example, Prediction(example.id, candidates, None)))
    return out


def _content(obj: dict[str, Any], key: str, path: str | Path, number: int) -> str:
    value = obj.get(key)
    if isinstance(value, dict):
        value = value.get("content")
    if not isinstance(value, str):
        raise FormatError(str(path), number, f"missing '{key}' text")
    return value


# -- Ithaca ---------------------------------------------------------------------------------


def read_ithaca_predictions(path: str | Path, ids: list[str] | None = None) -> list[tuple[str, Prediction]]:
    """Read an Ithaca prediction file (``real_response``, ``predictions: {"rank_k": text}``).

    Candidates are taken in rank order with padding spaces stripped; Ithaca gives no
    probabilities (``None``).

    Args:
        path: the file.
        ids: gap ids for the lines, in order; by default ``ithaca:<stem>:<index>``.

    Returns:
        ``(real_response, prediction)`` pairs in file order.

    Raises:
        FormatError: a malformed line, or fewer ids than lines.
    """
    out = []
    stem = Path(path).stem
    for i, (number, obj) in enumerate(read_jsonl(path)):
        real = _field(obj, "real_response", path, number).strip()
        preds = _field(obj, "predictions", path, number, dict)
        ranked = []
        for key, text in preds.items():
            m = re.fullmatch(r"rank_(\d+)", key)
            if not m or not isinstance(text, str):
                raise FormatError(str(path), number, f"bad prediction entry {key!r}")
            ranked.append((int(m.group(1)), text.strip()))
        ranked.sort()
        if ids is not None and i >= len(ids):
            raise FormatError(str(path), number, f"more lines than the {len(ids)} ids given")
        gap_id = ids[i] if ids is not None else f"ithaca:{stem}:{i}"
        out.append((real, Prediction(gap_id, [(t, None) for _, t in ranked], None)))
    return out


__all__ = [
    "CULLHED_SYSTEM_PROMPT", "GapExample", "Prediction", "gap_key", "jsonl_line",
    "read_cullhed_chat", "read_cullhed_predictions", "read_gapset", "read_ithaca_predictions",
    "read_predictions", "split_cullhed_user", "to_cullhed_user", "write_cullhed_chat",
    "write_gapset", "write_predictions",
]  # fmt: skip
