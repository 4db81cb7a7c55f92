"""Beam search over a gap's middle, scoring the join with the text after the gap.

The prompt (the layout's tokens before the middle) runs once (the caller runs it, so that the
same gap's readings can be scored after it too); each step then feeds one token per live row
through :class:`~apollo_restore.model.lean.LeanDecoder`, which keeps the prompt's keys and
values once for all rows (several gaps' searches step together as one batch, e.g. on a GPU).
A row is either *free* (still writing the middle) or *joining*: when a free row may end (its
letter count fits the bound) it also spawns a joining row that is forced through the layout's
join tokens (the first ``J`` characters of the suffix, or ``[EOS]``). A candidate's score is
``log P(m + join | prompt)`` plus the bound's length penalty, so middles of different lengths
compete on how well they lead into the suffix. Scores only fall as rows grow, so a row below
the ``k``-th finished score is dropped (exact pruning).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.lean import LeanDecoder, LeanModel, Prompt


@dataclass(frozen=True)
class Beam:
    """A finished hypothesis: token ids of the middle (no join) and its log-probability (nats)."""

    ids: tuple[int, ...]
    score: float


@dataclass(frozen=True)
class LengthBound:
    """Letters the middle may hold.

    Attributes:
        max_chars: longest middle, in characters (spaces included).
        lo, hi: letters the hint allows (``hi=None``: no upper limit).
        slack: letters beyond ``[lo, hi]`` still searched (a wrong hint is survived).
        penalty: nats charged per letter outside ``[lo, hi]``.
    """

    max_chars: int
    lo: int = 1
    hi: int | None = None
    slack: int = 0
    penalty: float = 0.0

    def end_cost(self, letters: int) -> float | None:
        """Log-score added when a middle of ``letters`` letters ends; ``None``: not allowed."""
        if letters < max(1, self.lo - self.slack) or (self.hi is not None and letters > self.hi + self.slack):
            return None
        return self.penalty_of(letters)

    def penalty_of(self, letters: int) -> float:
        """``-penalty`` × letters outside ``[lo, hi]`` (nats, ≤ 0)."""
        outside = max(0, self.lo - letters, letters - self.hi if self.hi is not None else 0)
        return -self.penalty * outside

    def max_letters(self) -> int | None:
        """Most letters a middle may reach (``None``: unbounded)."""
        return None if self.hi is None else self.hi + self.slack


@dataclass
class _Row:
    seq: tuple[int, ...]
    score: float
    letters: int
    after_separator: bool
    join_at: int | None = None  # index of the next join token; None: a free row


class _Alphabet:
    """Token masks of the middle's alphabet, ``(V,)`` each."""

    def __init__(self, tok: CharTokenizer, vocab_size: int, device: torch.device):
        self.allowed = torch.full((vocab_size,), float("-inf"), device=device)
        self.allowed[tok.middle_char_ids] = 0.0
        separators = tok.middle_char_ids[-2:]  # space and '·'; the rest are letters
        self.separator = torch.zeros(vocab_size, dtype=torch.bool, device=device)
        self.separator[separators] = True
        self.separator_ids = frozenset(separators)


class _Search:
    """One gap's beam search, advanced one step at a time (several gaps can step together).

    It keeps the ``k`` best finished middles; a row is dropped when it cannot beat the last of them.
    """

    def __init__(self, alphabet: _Alphabet, join: list[int], k: int, bound: LengthBound, width: int):
        self.alphabet, self.join, self.k, self.bound, self.width = alphabet, join, k, bound, width
        self.rows = [_Row((), 0.0, 0, True)]
        self.finished: list[Beam] = []
        self.steps_left = bound.max_chars + len(join) + 1

    def _floor(self) -> float:
        """The score a finished middle must beat to be kept (``-inf`` while the list has room)."""
        return self.finished[self.k - 1].score if len(self.finished) >= self.k else float("-inf")

    def _trim(self) -> None:
        self.finished.sort(key=lambda b: -b.score)
        del self.finished[self.k :]

    def results(self) -> list[Beam]:
        """The ``k`` best middles, best first."""
        kept = {b.ids: b for b in self.finished}
        return sorted(kept.values(), key=lambda b: -b.score)

    def advance(self, logp: torch.Tensor) -> list[tuple[_Row, int, int]]:
        """The next step's rows from this step's next-token log-probabilities ``(R, V)`` (one per
        row, on the CPU): ``(row, parent index, token fed)`` each; none when the search is over."""
        if self.steps_left == 0:
            return []
        self.steps_left -= 1
        rows, join, k, bound = self.rows, self.join, self.k, self.bound
        floor = self._floor()
        nxt: list[tuple[_Row, int, int]] = []  # (new row, parent index, token fed)
        join_logp = logp[:, join].tolist()  # (R, J): cheap to read for every row
        free = [i for i, row in enumerate(rows) if row.join_at is None]
        for i, row in enumerate(rows):
            at = 0 if row.join_at is None else row.join_at
            if row.join_at is None:
                cost = None if row.after_separator else bound.end_cost(row.letters)
                if cost is None:
                    continue
            else:
                cost = 0.0
            score = row.score + cost + join_logp[i][at]
            joined = _Row(row.seq, score, row.letters, False, at + 1)
            if score <= floor:
                continue
            if at + 1 == len(join):
                self.finished.append(Beam(row.seq, score))
            else:
                nxt.append((joined, i, join[at]))
        self._trim()
        floor = self._floor()
        joining = _best(nxt, k, floor)
        growing = _expand(rows, free, logp, self.alphabet, self.width, floor, bound.max_letters(), bound.max_chars)
        items = joining + growing
        self.rows = [item[0] for item in items]
        return items


def _best(items: list[tuple[_Row, int, int]], n: int, floor: float) -> list[tuple[_Row, int, int]]:
    """The ``n`` best-scoring ``(row, parent, token)`` items above ``floor``."""
    return sorted((item for item in items if item[0].score > floor), key=lambda item: -item[0].score)[:n]


@torch.inference_mode()
def beam_search_many(
    model: LeanModel,
    tok: CharTokenizer,
    prompts: list[Prompt],
    joins: list[list[int]],
    k: int,
    bounds: list[LengthBound],
    width: int | None = None,
) -> list[list[Beam]]:
    """The ``k`` best middles of each gap: its prompt followed by its join.

    The gaps are searched together: every step feeds all their live rows to the model as one
    batch (on the model's device); each gap's search is the one it would have alone.

    Args:
        model: the character model.
        tok: its tokenizer.
        prompts: each gap's layout tokens before the middle, already run (:meth:`LeanModel.prompt`).
        joins: each gap's tokens scored after the middle (at least one).
        k: candidates returned (and joining rows kept per step), per gap.
        bounds: each gap's allowed letter counts and their penalty.
        width: free rows kept per step, per gap (``None``: ``k``).

    Returns:
        One list per gap of up to ``k`` beams, best first.
        A middle starts and ends on a letter, holds at least one, and never two separators in a row.
    """
    alphabet = _Alphabet(tok, prompts[0].logits.size(-1), torch.device("cpu"))
    searches = [_Search(alphabet, join, k, bound, width or k) for join, bound in zip(joins, bounds)]
    decoder = LeanDecoder(model, prompts)
    logits = torch.cat([p.logits for p in prompts])  # (G, V): row g is prompt g
    spans = [(g, g + 1) for g in range(len(prompts))]  # each search's rows among the logits
    while True:
        logp = torch.log_softmax(logits.float(), dim=-1).cpu()  # (R, V): the searches run on the CPU
        tokens: list[int] = []
        parents: list[int] = []
        for g, (search, (a, b)) in enumerate(zip(searches, spans)):
            items = search.advance(logp[a:b]) if b > a else []
            spans[g] = (len(tokens), len(tokens) + len(items))
            tokens += [token for _, _, token in items]
            parents += [a + parent for _, parent, _ in items]
        if not tokens:
            return [search.results() for search in searches]
        logits = decoder.step(torch.tensor(tokens, device=model.device), torch.tensor(parents, device=model.device))


def _expand(
    rows: list[_Row],
    free: list[int],
    logp: torch.Tensor,
    alphabet: _Alphabet,
    k: int,
    floor: float,
    cap: int | None,
    max_chars: int,
) -> list[tuple[_Row, int, int]]:
    """The ``k`` best one-character extensions of the free rows, above ``floor``."""
    if not free:
        return []
    sub = logp[free] + alphabet.allowed  # (F, V)
    for j, i in enumerate(free):
        row = rows[i]
        if row.after_separator:
            sub[j, alphabet.separator] = float("-inf")
        if len(row.seq) >= max_chars:
            sub[j] = float("-inf")
        elif cap is not None and row.letters >= cap:
            sub[j, ~alphabet.separator] = float("-inf")
    total = sub + torch.tensor([rows[i].score for i in free], device=sub.device)[:, None]
    flat = total.view(-1)
    n = min(k, int(torch.isfinite(flat).sum()))
    if n == 0:
        return []
    top_scores, top_idx = flat.topk(n)
    out = []
    width = sub.size(-1)
    for score, idx in zip(top_scores.tolist(), top_idx.tolist()):
        if score <= floor:
            break
        j, token = divmod(idx, width)
        parent = rows[free[j]]
        is_sep = token in alphabet.separator_ids
        out.append((_Row(parent.seq + (token,), score, parent.letters + (not is_sep), is_sep), free[j], token))
    return out
