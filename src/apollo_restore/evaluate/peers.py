"""Published systems side by side: read their prediction files, score them with the same code,
and export our gap sets in their input formats (paper §4.2, App. D).

    peers = {"cullhed": load_peer("cullhed", "preds.jsonl", gaps)}
    table = side_by_side(gaps, {"apollo": ours, **peers})

Loading (:func:`load_peer`) recognises the file by its first line:

* our prediction JSONL (``id``, ``candidates``) — joined by id;
* Cullhed et al. prediction files (``user``, ``assistant``, ``top_1_prediction``) — joined to
  our gaps by normalised (prefix, suffix, target), :func:`~apollo_restore.data.formats.gap_key`;
* Ithaca prediction files (``real_response``, ``predictions``) — they carry no context, so
  line *i* is the *i*-th gap of the Ithaca input we exported (:func:`write_ithaca_inputs`,
  whose JSONL keeps the ids), or of ``gaps`` in order; lines whose ``real_response`` is not
  the gap's target (space-agnostic) are dropped with a warning.

Candidates are normalised with ``norm.v1`` before scoring. :func:`side_by_side` scores every
system on the gaps *all* of them ran on, by hint condition and source.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from apollo_restore.data.formats import (
    GapExample,
    Prediction,
    read_cullhed_predictions,
    read_ithaca_predictions,
    read_predictions,
    write_cullhed_chat,
)
from apollo_restore.data.normalise import GAP_CHAR, UNKNOWN_GAP, letter_count, normalise_with_gaps
from apollo_restore.errors import FormatError
from apollo_restore.evaluate.harness import group_metrics, score_predictions
from apollo_restore.evaluate.metrics import agnostic
from apollo_restore.inputs import read_lines

log = logging.getLogger(__name__)

PEER_FORMATS = ("ours", "cullhed", "ithaca")
ITHACA_MISSING, ITHACA_PREDICT = "-", "?"


def detect_format(path: str | Path) -> str:
    """``ours``, ``cullhed`` or ``ithaca`` from the keys of the file's first object.

    Raises:
        FormatError: an empty file or one of none of these formats.
    """
    for number, line in read_lines(path):
        if line.strip():
            try:
                keys = set(json.loads(line))
            except (json.JSONDecodeError, TypeError):
                raise FormatError(str(path), number, "not a JSON object") from None
            if {"id", "candidates"} <= keys:
                return "ours"
            if "top_1_prediction" in keys:
                return "cullhed"
            if {"real_response", "predictions"} <= keys:
                return "ithaca"
            raise FormatError(str(path), number, "not our predictions, Cullhed's or Ithaca's")
    raise FormatError(str(path), 0, "empty prediction file")


def _normalised(pred: Prediction) -> Prediction:
    return Prediction(pred.id, [(normalise_with_gaps(t), p) for t, p in pred.candidates], pred.ms)


def load_peer(path: str | Path, gaps: list[GapExample], ids: list[str] | None = None) -> list[Prediction]:
    """Predictions of a peer file, with our gap ids where they can be matched.

    Args:
        path: the prediction file (format detected).
        gaps: our gap set.
        ids: for Ithaca files, the gap id of each line (e.g. :func:`read_ithaca_input_ids` of
            the input file we exported); default: the ids of ``gaps`` in order.

    Returns:
        Predictions whose ids are our gap ids (unmatched Cullhed lines keep ``cullhed:`` ids,
        which join to no gap).
    """
    kind = detect_format(path)
    if kind == "ours":
        return [_normalised(p) for p in read_predictions(path)]
    if kind == "cullhed":
        return [_normalised(p) for _, p in read_cullhed_predictions(path, gaps)]
    by_id = {g.id: g for g in gaps}
    order = ids if ids is not None else [g.id for g in gaps]
    rows = read_ithaca_predictions(path, order)
    kept, dropped = [], 0
    for real, pred in rows:
        gap = by_id.get(pred.id)
        if gap is None or agnostic(real) != agnostic(gap.target):
            dropped += 1
            continue
        kept.append(_normalised(pred))
    if dropped:
        log.warning("%s: %d of %d Ithaca lines do not match their gap's target; dropped", path, dropped, len(rows))
    return kept


def parse_peer_arg(arg: str) -> tuple[str, Path]:
    """``name=FILE`` → ``(name, path)``.

    Raises:
        ValueError: no ``=``.
    """
    name, sep, path = arg.partition("=")
    if not sep or not name or not path:
        raise ValueError(f"peer {arg!r} must look like NAME=FILE")
    return name, Path(path)


def side_by_side(gaps: list[GapExample], systems: dict[str, list[Prediction]], k: int = 20) -> dict[str, Any]:
    """Score every system on the gaps all of them predicted.

    Returns:
        ``{"gaps": n, "systems": [...], "metrics": {system: group_metrics}, "head_to_head":
        {"A vs B": {"both", "only A", "only B", "neither"}}}`` (Top-1 counts on the shared gaps).
    """
    common = set(g.id for g in gaps)
    for preds in systems.values():
        common &= {p.id for p in preds if p.candidates}
    shared = [g for g in gaps if g.id in common]
    scored = {name: score_predictions(shared, preds, k) for name, preds in systems.items()}
    names = list(systems)
    h2h = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            counts = {"both": 0, f"only {a}": 0, f"only {b}": 0, "neither": 0}
            for sa, sb in zip(scored[a], scored[b]):
                right = (sa.score.top1, sb.score.top1)
                counts[
                    {(True, True): "both", (True, False): f"only {a}", (False, True): f"only {b}"}.get(right, "neither")
                ] += 1
            h2h[f"{a} vs {b}"] = counts
    return {
        "gaps": len(shared),
        "systems": names,
        "metrics": {name: group_metrics(s) for name, s in scored.items()},
        "head_to_head": h2h,
    }


# -- exports ----------------------------------------------------------------------------------


def export_cullhed(path: str | Path, gaps: Iterable[GapExample]) -> int:
    """Our gaps as Cullhed chat JSONL (``[N letters missing]``; N from the hint); returns the count."""
    return write_cullhed_chat(path, gaps)


def ithaca_text(gap: GapExample) -> str:
    """Ithaca-style input: context with lost letters as ``-``, the gap as ``?`` placeholders.

    Ithaca fills exactly its placeholders, one character each, spaces included, so an exact
    hint equal to the target's letters gives ``len(target)`` placeholders (its characters,
    spaces included); any other hint gives one per hinted letter (a range: its midpoint; none:
    the target's letters). ``…`` (unknown extent) has no Ithaca form and becomes one ``-``;
    ``·`` becomes ``.``.
    """
    n_letters = letter_count(gap.target)
    if gap.hint.is_exact:
        n = len(gap.target) if gap.hint.lo == n_letters else gap.hint.lo
    elif gap.hint.given:
        n = gap.hint.middle
    else:
        n = len(gap.target)

    def side(text: str) -> str:
        return text.replace(UNKNOWN_GAP, GAP_CHAR).replace("·", ".")

    return side(gap.prefix) + ITHACA_PREDICT * n + side(gap.suffix)


def write_ithaca_inputs(path: str | Path, gaps: Iterable[GapExample]) -> int:
    """Write ``{"id", "text", "real_response"}`` JSONL for running Ithaca on our gaps; the ids
    give the line order back to :func:`load_peer`. Returns the count."""
    n = 0
    with open(path, "w", encoding="utf-8") as handle:
        for gap in gaps:
            row = {"id": gap.id, "text": ithaca_text(gap), "real_response": gap.target}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_ithaca_input_ids(path: str | Path) -> list[str]:
    """The gap ids, in line order, of an Ithaca input file written by :func:`write_ithaca_inputs`.

    Raises:
        FileError: the file cannot be read or is not UTF-8.
        FormatError: a line that is not a JSON object with an ``id`` string.
    """
    ids = []
    for number, line in read_lines(path):
        if line.strip():
            try:
                ids.append(json.loads(line)["id"])
            except (json.JSONDecodeError, TypeError, KeyError):
                raise FormatError(str(path), number, "not a JSON object with an 'id'") from None
            if not isinstance(ids[-1], str):
                raise FormatError(str(path), number, "the 'id' is not a string")
    return ids


__all__ = [
    "PEER_FORMATS", "detect_format", "export_cullhed", "ithaca_text", "load_peer", "parse_peer_arg",
    "read_ithaca_input_ids", "side_by_side", "write_ithaca_inputs",
]  # fmt: skip
