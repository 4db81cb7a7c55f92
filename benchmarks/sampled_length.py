"""The neural model's own evidence of a lost length, read by sampling (issue 22, no hint).

    python benchmarks/sampled_length.py --gap-file val.jsonl --samples 64 [--compare]

A beam (or any pool) holds most of the probability of short middles and a vanishing part of
long ones' (spread over many spellings), so a length read off a pool is biased short. Sampling
is not: for each no-hint gap of ``--gap-file`` (our gap-set JSONL), ``--samples`` continuations
of the layout's prompt are drawn from the default neural model, letter by letter at
temperature 1 (only the middle's characters and the join's), until each writes the first
``--join`` characters of the suffix; the letters before them are one draw of the lost length
from ``Σ_{|m|=n} P(m + join | prompt)``, the quantity beam search ranks by. Draws that never
rejoin the suffix within the search's ``max_chars`` are counted, not used.

Printed per band of true letters: the signed error of the drawn lengths' mode, median and mean
(letters), the share of gaps within one letter, the share of draws that rejoined, and with
``--compare`` the shipped default's top reading on the same gaps (Δlen, Top-1).
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from pathlib import Path

import torch
from tqdm import tqdm

from apollo_restore.data.normalise import letter_count
from apollo_restore.evaluate.gapsets import load_gaps
from apollo_restore.evaluate.metrics import score_gap
from apollo_restore.hint import NO_HINT
from apollo_restore.model.lean import LeanDecoder
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.members.neural import NeuralMember

BANDS = ((1, 4), (5, 8), (9, 12), (13, 16), (17, 20))


def sampled_lengths(
    restorer: NeuralMember, prefix: str, suffix: str, samples: int, join_chars: int
) -> list[int | None]:
    """Letters of ``samples`` middles drawn from the model for a no-hint gap (``None``: the
    draw did not rejoin the suffix within ``max_chars`` characters)."""
    cfg, tok = restorer.config, restorer.tok
    ids = restorer.layout.prompt(tok, prefix[-cfg.context_chars :], suffix[: cfg.context_chars], NO_HINT)
    join = [t for t in restorer.layout.join(tok, suffix[: cfg.context_chars]) if t != tok.eos_id][:join_chars]
    if not join:
        return [None] * samples
    prompt = restorer.lean.prompt(ids)
    allowed = torch.full((prompt.logits.size(-1),), float("-inf"))  # (V,)
    allowed[tok.middle_char_ids] = 0.0
    allowed[join] = 0.0
    decoder = LeanDecoder(restorer.lean, [prompt])
    logits = prompt.logits[:1].expand(samples, -1)  # (R, V): the live draws' next-token logits
    drawn: list[list[int]] = [[] for _ in range(samples)]
    live, parents = list(range(samples)), torch.zeros(samples, dtype=torch.long)
    lengths: list[int | None] = [None] * samples
    for _ in range(cfg.max_chars + len(join)):
        tokens = torch.multinomial(torch.softmax(logits.float() + allowed, dim=-1), 1)[:, 0]  # (R,)
        keep = []
        for j, (row, token) in enumerate(zip(live, tokens.tolist())):
            drawn[row].append(token)
            if drawn[row][-len(join) :] == join:
                lengths[row] = letter_count(tok.decode(drawn[row][: -len(join)]))
            else:
                keep.append(j)
        if not keep:
            break
        index = torch.tensor(keep)
        live = [live[j] for j in keep]
        logits = decoder.step(tokens[index], parents[index])
        parents = torch.arange(len(keep))
    return lengths


def estimate(lengths: list[int | None], how: str) -> float | None:
    """The mode, median or mean of the draws that rejoined with at least one letter."""
    got = [n for n in lengths if n]
    if not got:
        return None
    if how == "mode":
        return Counter(got).most_common(1)[0][0]
    return statistics.median(got) if how == "median" else statistics.mean(got)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gap-file", type=Path, required=True)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--join", type=int, default=4, help="suffix characters that mark a rejoin")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare", action="store_true", help="also restore with the shipped default")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    gaps = [g for g in load_gaps(args.gap_file) if not g.hint.given]
    restorer = NeuralMember.load()
    shipped = load_restorer() if args.compare else None
    rows = []
    for gap in tqdm(gaps, desc="gaps"):
        lengths = sampled_lengths(restorer, gap.prefix, gap.suffix, args.samples, args.join)
        top = shipped.candidates(gap.prefix, gap.suffix, NO_HINT, 20) if shipped else []
        rows.append((letter_count(gap.target), lengths, score_gap(gap.target, [c.text for c in top]) if top else None))
    print(f"## Lengths drawn from the neural model: {len(rows)} no-hint gaps, {args.samples} draws each\n")
    head = "| true letters | gaps | rejoined | mode − truth (±1) | median − truth (±1) | mean − truth (±1) |"
    print(head + (" shipped Δlen / Top-1 |" if shipped else ""))
    print("|---|---:|---:|---:|---:|---:|" + ("---:|" if shipped else ""))
    for lo, hi in (*BANDS, (1, 20)):
        group = [r for r in rows if lo <= r[0] <= hi]
        if not group:
            continue
        cells = []
        for how in ("mode", "median", "mean"):
            errors = [e - n for n, lengths, _ in group if (e := estimate(lengths, how)) is not None]
            near = statistics.mean(abs(e) <= 1 for e in errors) if errors else 0.0
            cells.append(f"{statistics.mean(errors):+.1f} ({near:.2f})" if errors else "–")
        rejoined = statistics.mean(sum(n is not None for n in r[1]) / len(r[1]) for r in group)
        band = "all" if (lo, hi) == (1, 20) else f"{lo}–{hi}"
        line = f"| {band} | {len(group)} | {rejoined:.2f} | " + " | ".join(cells)
        if shipped:
            scores = [r[2] for r in group]
            line += f" | {statistics.mean(s.dlen for s in scores):+.1f} / {statistics.mean(s.top1 for s in scores):.3f}"
        print(line + " |")


if __name__ == "__main__":
    main()
