"""Run any restorer over a gap set and score it; bits per character on held-out text.

    from apollo_restore.evaluate.harness import evaluate
    predictions, metrics = evaluate(NeuralMember.load(), gaps, k=20)

The restorer is anything with ``candidates(prefix, suffix, hint, k)``
(:class:`~apollo_restore.restoration.restorer.Restorer`): the neural member, a classical
member, an ensemble. Predictions are joined to gaps by id; a gap without a prediction scores as wrong.
Metrics are grouped by kind (synthetic / true), context variant (uncertain-included /
-excluded), hint condition and source (:func:`group_metrics`).

Bits per character (:func:`bpc_by_period`): the model reads each held-out window left to
right as a FIM *prefix* with an empty suffix, ``[BOS][SUFFIX][PREFIX] w`` (mode ``"prefix"``,
the every-position loss the default model trains with), or as the *middle* after an empty
suffix and prefix, ``[BOS][SUFFIX][PREFIX][MIDDLE] w`` (mode ``"middle"``, the only loss a
middle-only model has seen, though never on middles this long). Only letters, spaces and
``·`` are scored (``-`` and ``…`` are read but not predicted); bits per character =
summed negative log2-probability / scored characters, perplexity = 2^bpc (per character).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import torch

from apollo_restore.data.formats import GapExample, Prediction
from apollo_restore.data.normalise import GAP_CHAR, UNKNOWN_GAP
from apollo_restore.evaluate.gapsets import condition_of, is_excluded, parse_gap_id
from apollo_restore.evaluate.metrics import GapScore, reliability, score_gap, summarise, uniform
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.restoration.predict import Workers, predict
from apollo_restore.restoration.restorer import Restorer

BPC_MODES = ("prefix", "middle")
PERIODS = ("BC", "1st–3rd c. AD", "4th c. AD+", "unknown")


@dataclass(frozen=True)
class ScoredGap:
    """One gap, its grouping keys, the top reading and its scores."""

    id: str
    base: str  # the id without condition and variant (same span → same base)
    source: str
    kind: str
    condition: str
    excluded: bool
    target: str
    top: str
    score: GapScore


def base_id(gap_id: str) -> str:
    parsed = parse_gap_id(gap_id)
    return parsed.base if parsed else gap_id


def run(
    restorer: Restorer | None, gaps: Iterable[GapExample], k: int = 20, progress: bool = True, batch: int = 1,
    workers: Workers | None = None,
) -> list[Prediction]:  # fmt: skip
    """Predictions of ``restorer`` for each gap, in order (``batch`` gaps searched together; with
    ``workers``, by their processes instead)."""
    return list(predict(restorer, gaps, k, progress, batch=batch, workers=workers))


def score_predictions(gaps: Iterable[GapExample], predictions: Iterable[Prediction], k: int = 20) -> list[ScoredGap]:
    """Join predictions to gaps by id and score each gap (missing prediction = no candidates)."""
    by_id = {p.id: p for p in predictions}
    out = []
    for gap in gaps:
        pred = by_id.get(gap.id)
        texts = [t for t, _ in pred.candidates] if pred else []
        out.append(
            ScoredGap(
                id=gap.id,
                base=base_id(gap.id),
                source=gap.source,
                kind=gap.kind,
                condition=condition_of(gap),
                excluded=is_excluded(gap),
                target=gap.target,
                top=texts[0] if texts else "",
                score=score_gap(gap.target, texts, k),
            )
        )
    return out


def _variant(excluded: bool) -> str:
    return "excluded" if excluded else "included"


def group_metrics(scored: Iterable[ScoredGap]) -> dict[str, Any]:
    """Protocol summaries (:func:`~apollo_restore.evaluate.metrics.summarise`) per group:
    ``{kind: {"included"|"excluded": {condition: {source: summary}}}}``."""
    groups: dict[tuple[str, str, str, str], list[GapScore]] = defaultdict(list)
    for s in scored:
        groups[(s.kind, _variant(s.excluded), s.condition, s.source)].append(s.score)
    out: dict[str, Any] = {}
    for (kind, variant, cond, source), scores in sorted(groups.items()):
        out.setdefault(kind, {}).setdefault(variant, {}).setdefault(cond, {})[source] = summarise(scores)
    return out


def uncertain_comparison(scored: Iterable[ScoredGap], kind: str = "synthetic") -> dict[str, dict[str, Any]]:
    """Uniform-weighted Top-1/Top-20 with uncertain-included vs -excluded context, on the gaps
    asked both ways (same base id and condition): ``{source: {condition: {...}}}``."""
    pairs: dict[tuple[str, str, str], dict[bool, GapScore]] = defaultdict(dict)
    for s in scored:
        if s.kind == kind:
            pairs[(s.source, s.condition, s.base)][s.excluded] = s.score
    grouped: dict[tuple[str, str], list[dict[bool, GapScore]]] = defaultdict(list)
    for (source, cond, _), both in pairs.items():
        if len(both) == 2:
            grouped[(source, cond)].append(both)
    out: dict[str, dict[str, Any]] = {}
    for (source, cond), rows in sorted(grouped.items()):
        inc, exc = uniform(r[False] for r in rows), uniform(r[True] for r in rows)
        out.setdefault(source, {})[cond] = {
            "n": len(rows),
            "included": {"top1": inc.top1, "top20": inc.top20, "char_acc": inc.char_acc},
            "excluded": {"top1": exc.top1, "top20": exc.top20, "char_acc": exc.char_acc},
            "delta_top1": (inc.top1 or 0.0) - (exc.top1 or 0.0),
        }
    return out


def evaluate(
    restorer: Restorer | None, gaps: list[GapExample], k: int = 20,
    predictions: list[Prediction] | None = None, progress: bool = True, batch: int = 1,
    workers: Workers | None = None,
) -> tuple[list[Prediction], dict[str, Any]]:  # fmt: skip
    """Predict (unless ``predictions`` are given; ``batch`` gaps searched together, by ``workers``'
    processes when given) and score a gap set.

    Returns:
        ``(predictions, metrics)`` with ``metrics = {"gaps", "predicted", "k", "groups",
        "uncertain"}``; ``groups`` as :func:`group_metrics`.

    Raises:
        ValueError: neither a restorer nor predictions.
    """
    if predictions is None:
        if restorer is None:
            raise ValueError("evaluate needs a restorer or predictions")
        predictions = run(restorer, gaps, k, progress, batch, workers)
    scored = score_predictions(gaps, predictions, k)
    metrics = {
        "gaps": len(gaps),
        "predicted": sum(s.score.predicted for s in scored),
        "k": k,
        "groups": group_metrics(scored),
        "uncertain": uncertain_comparison(scored),
        "calibration": calibration_metrics(scored, predictions, k),
    }
    return predictions, metrics


def calibration_metrics(scored: Iterable[ScoredGap], predictions: Iterable[Prediction], k: int = 20) -> dict[str, Any]:
    """How well the shown probabilities match outcomes, per hint condition and for ``all``:
    ``{condition: {"top1": reliability, "top20": reliability}}``. Top-1 pairs the first
    reading's probability with "it is the target"; top-20 pairs the sum of the ``k`` readings'
    probabilities with "the target is among them". Gaps whose predictions carry no
    probabilities are left out."""
    probs = {p.id: [q for _, q in p.candidates[:k]] for p in predictions}
    events: dict[str, list[tuple[float, bool, float, bool]]] = defaultdict(list)
    for s in scored:
        ps = probs.get(s.id) or []
        if s.kind != "synthetic" or s.excluded or not ps or any(q is None for q in ps):
            continue
        event = (ps[0], bool(s.score.top1), min(1.0, sum(ps)), bool(s.score.top20))
        events[s.condition].append(event)
        events["all"].append(event)
    return {
        cond: {
            "top1": reliability([e[0] for e in rows], [e[1] for e in rows]),
            "top20": reliability([e[2] for e in rows], [e[3] for e in rows]),
        }
        for cond, rows in sorted(events.items())
    }


# -- bits per character -------------------------------------------------------------------------


def period_of(year: int | None) -> str:
    """Date bucket of a document (year, negative = BC)."""
    if year is None:
        return "unknown"
    if year < 1:
        return "BC"
    return "1st–3rd c. AD" if year <= 300 else "4th c. AD+"


def windows_of(text: str, size: int = 500, min_chars: int = 50) -> list[str]:
    """Consecutive windows of at most ``size`` characters, cut at spaces; short ones dropped."""
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + size // 2, end)
            end = space if space > start else end
        piece = text[start:end].strip()
        if len(piece) >= min_chars:
            out.append(piece)
        start = end + 1 if end < len(text) and text[end] == " " else end
    return out


@torch.no_grad()
def window_bits(
    model: torch.nn.Module, tok: CharTokenizer, windows: list[str], mode: str = "prefix", batch_size: int = 8
) -> tuple[float, int]:
    """Summed bits and scored characters of ``windows`` (see module docstring for ``mode``).

    Raises:
        ValueError: unknown mode.
    """
    if mode not in BPC_MODES:
        raise ValueError(f"bpc mode must be one of {BPC_MODES}, got {mode!r}")
    head = [tok.bos_id, tok.suffix_id, tok.prefix_id] + ([tok.middle_id] if mode == "middle" else [])
    skip = {tok.vocab[GAP_CHAR], tok.vocab[UNKNOWN_GAP], tok.unk_id}
    bits, chars = 0.0, 0
    for i in range(0, len(windows), batch_size):
        rows = [head + tok.encode(w) for w in windows[i : i + batch_size]]
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), tok.pad_id, dtype=torch.long)  # (B, T)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for b, row in enumerate(rows):
            ids[b, : len(row)] = torch.tensor(row)
            mask[b, : len(row)] = 1
        logp = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.float(), dim=-1)  # (B, T, V)
        nll = -logp[:, :-1].gather(-1, ids[:, 1:, None]).squeeze(-1)  # (B, T-1): -log p(ids[t+1])
        keep = mask[:, 1:].bool()
        keep[:, : len(head) - 1] = False  # control tokens are read, not predicted
        for token in skip:
            keep &= ids[:, 1:] != token
        bits += float(nll[keep].sum()) / math.log(2)
        chars += int(keep.sum())
    return bits, chars


def bpc_by_period(
    model: torch.nn.Module, tok: CharTokenizer, table: pa.Table, windows_per_period: int = 64,
    window_chars: int = 500, seed: int = 0, mode: str = "prefix", batch_size: int = 8,
) -> dict[str, dict[str, dict[str, Any]]]:  # fmt: skip
    """Bits per character and per-character perplexity on held-out documents, by source and
    date bucket (:func:`period_of`), plus an ``"all"`` bucket pooling the sampled windows.

    Args:
        table: held-out documents (``text``, ``source``, ``date``).
        windows_per_period: windows drawn (seeded, without replacement) per source and bucket.

    Returns:
        ``{source: {period: {"bpc", "ppl", "chars", "windows", "documents"}}}``.
    """
    pools: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for text, source, date, doc in zip(*(table.column(c).to_pylist() for c in ("text", "source", "date", "id"))):
        for w in windows_of(text, window_chars):
            pools[(source, period_of(date))].append((doc, w))
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0, set()])
    for (source, period), pool in sorted(pools.items()):
        pick = rng.choice(len(pool), size=min(windows_per_period, len(pool)), replace=False)
        chosen = [pool[int(i)] for i in sorted(pick)]
        bits, chars = window_bits(model, tok, [w for _, w in chosen], mode, batch_size)
        docs = {d for d, _ in chosen}
        out.setdefault(source, {})[period] = _bpc_entry(bits, chars, len(chosen), len(docs))
        t = totals[source]
        t[0] += bits
        t[1] += chars
        t[2] += len(chosen)
        t[3] |= docs
    for source, (bits, chars, n, docs) in totals.items():
        out[source]["all"] = _bpc_entry(bits, chars, n, len(docs))
    return out


def _bpc_entry(bits: float, chars: int, windows: int, documents: int) -> dict[str, Any]:
    bpc = bits / chars if chars else None
    return {
        "bpc": bpc,
        "ppl": 2**bpc if bpc is not None else None,
        "chars": chars,
        "windows": windows,
        "documents": documents,
    }


__all__ = [
    "BPC_MODES", "PERIODS", "ScoredGap", "base_id", "bpc_by_period", "evaluate", "group_metrics",
    "period_of", "run", "score_predictions", "uncertain_comparison", "window_bits", "windows_of",
]  # fmt: skip
