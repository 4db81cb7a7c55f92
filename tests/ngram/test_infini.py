"""The unbounded-order model on a tiny text index: counts, smoothing, both directions, the restorer."""

from __future__ import annotations

import numpy as np
import pytest

from apollo_restore.data.textindex import TextIndex, build_text_index
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.ngram.infini import InfiniGram, K
from apollo_restore.restoration.members.infini import InfiniMember, load_infini
from apollo_restore.restoration.restorer import Restorer

TEXTS = [
    "ετους δευτερου αυτοκρατορος καισαρος τραιανου σεβαστου μηνος θωθ",
    "ετους τριτου αυτοκρατορος καισαρος τραιανου σεβαστου· χαιρειν",
    "ετους δ αυτοκρατορος καισαρος αδριανου σεβαστου μηνος",
    "του κυριου αυτοκρατορος καισαρος τραιανου σεβαστου και",
    "αυτοκρατορος καισαρος ---ανου σεβαστου",
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> TextIndex:
    out = tmp_path_factory.mktemp("infini") / "ix"
    build_text_index([f"d{i}" for i in range(len(TEXTS))], ["ddb"] * len(TEXTS), TEXTS, out)
    return TextIndex.open(out)


def _brute_counts(stream: bytes, context: bytes) -> np.ndarray:
    """Next-code counts of ``context`` by scanning the stream."""
    out = np.zeros(K, dtype=np.int64)
    at = stream.find(context)
    while at >= 0:
        if at + len(context) < len(stream):
            out[stream[at + len(context)]] += 1
        at = stream.find(context, at + 1)
    return out


@pytest.mark.parametrize("context", ["καισαρος", "αυτοκρατορος καισαρος τρ", "ετους", "ξ", "σεβαστου"])
@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_infini_counts_match_a_scan_at_every_length(index: TextIndex, context: str, direction: str) -> None:
    lm = InfiniGram.forward(index) if direction == "forward" else InfiniGram.backward(index)
    stream = index.codes.tobytes() if direction == "forward" else index.codes[::-1].tobytes()
    codes = lm.encode(context)
    _, counts = lm.distribution(lm.start([codes]))
    for ell in range(len(codes) + 1):
        want = (
            _brute_counts(stream, codes[len(codes) - ell :].tobytes())
            if ell
            else np.bincount(np.frombuffer(stream, np.uint8), minlength=K)
        )
        assert counts[0, ell].tolist() == want.tolist(), ell


def _reference(counts: np.ndarray, d: float | tuple[float, float, float]) -> np.ndarray:
    """The interpolation written as the recursion of the module doc, one beam at a time."""
    d1, d2, d3 = (d, d, d) if isinstance(d, float) else d
    p = np.full(K, 1.0 / K)
    for c in counts:
        n = c.sum()
        if n:
            disc = np.select([c == 0, c == 1, c == 2], [0.0, d1, d2], d3)
            p = (c - disc) / n + disc.sum() / n * p
    return p


def test_infini_smoothing_sums_to_one_and_follows_the_recursion(index: TextIndex) -> None:
    lm = InfiniGram.forward(index, discount=0.6)
    contexts = [lm.encode(t) for t in ("αυτοκρατορος καισαρος ", "σεβαστου μη", "κ", "")]
    probs, counts = lm.distribution(lm.start(contexts))
    assert np.allclose(probs.sum(axis=1), 1.0) and (probs > 0).all()
    for row, c in zip(probs, counts):
        assert np.allclose(row, _reference(c, 0.6))
    # the long context has seen only τ and α next: they take nearly all the mass
    top = np.argsort(-probs[0])[:2]
    assert set(top.tolist()) == {lm.encode("τ")[0], lm.encode("α")[0]}


@pytest.mark.parametrize("discount", [(0.5, 1.0, 1.5), (0.9, 0.2, 2.5), (1.0, 2.0, 3.0)])
def test_infini_count_dependent_discounts_sum_to_one(index: TextIndex, discount: tuple[float, float, float]) -> None:
    lm = InfiniGram.forward(index, discount=discount)
    contexts = [lm.encode(t) for t in ("αυτοκρατορος καισαρος ", "σεβαστου μη", "ου", "κ", "")]
    probs, counts = lm.distribution(lm.start(contexts))
    assert np.allclose(probs.sum(axis=1), 1.0) and (probs > 0).all()
    for row, c in zip(probs, counts):
        assert np.allclose(row, _reference(c, discount))
    # one discount for every count is plain absolute discounting
    same = InfiniGram.forward(index, discount=(0.6, 0.6, 0.6)).distribution(lm.start(contexts))[0]
    assert np.allclose(same, InfiniGram.forward(index, discount=0.6).distribution(lm.start(contexts))[0])
    # and each step of the restorer's score is one of these rows
    codes = lm.encode("σεβαστου")
    state = lm.start([lm.encode("καισαρος τραιανου ")])
    want = 0.0
    for code in codes:
        p, c = lm.distribution(state)
        want += np.log(p[0, code])
        state = lm.advance(state, c, np.array([code]))
    got = lm.score(lm.start([lm.encode("καισαρος τραιανου ")]), codes[None, :], np.array([len(codes)]))
    assert np.allclose(got, [want])


@pytest.mark.parametrize("discount", [0.0, 1.5, (0.5, 1.0), (0.5, 2.5, 1.0)])
def test_infini_bad_discount_is_refused(index: TextIndex, discount) -> None:
    with pytest.raises(ValueError, match="E407"):
        InfiniGram.forward(index, discount=discount)


def test_infini_marker_cuts_the_context(index: TextIndex) -> None:
    lm = InfiniGram.forward(index)
    cut = lm.start([lm.encode("καισαρος ---ανου")])
    plain = lm.start([lm.encode("ανου")])
    assert (cut.lo == plain.lo).all() and (cut.hi == plain.hi).all()


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_infini_member_restores_and_scores_consistently(index: TextIndex, direction: str) -> None:
    restorer = load_infini(direction, index)
    assert isinstance(restorer, InfiniMember) and isinstance(restorer, Restorer) and restorer.language_model() is None
    cands = restorer.candidates("ετους δευτερου αυτοκρατορος καισαρος ", " σεβαστου", Hint.exact(8))
    pool = restorer.candidates(
        "ετους δευτερου αυτοκρατορος καισαρος ", " σεβαστου", Hint.exact(8), restorer.config.pool
    )
    assert cands[0].text == "τραιανου" and abs(sum(c.prob for c in pool) - 1) < 1e-9
    assert cands == pool[: len(cands)]  # k only cuts the pool: probabilities normalised over all of it
    scores = restorer.score_readings(
        "ετους δευτερου αυτοκρατορος καισαρος ", " σεβαστου", Hint.exact(8), [c.text for c in cands[:3]]
    )
    assert np.allclose(scores, [c.log_score for c in cands[:3]])
    # no hint: the reading's length is chosen by how well it meets the suffix
    free = restorer.candidates("του κυριου αυτοκρατορος ", " τραιανου σεβαστου", NO_HINT)
    assert free[0].text == "καισαρος"


def test_infini_reading_spelled_as_in_the_corpus(index: TextIndex) -> None:
    restorer = load_infini("forward", index)
    assert restorer.spell(restorer.model.encode("καισαροστραιανου")) == "καισαρος τραιανου"
    assert restorer.spell(restorer.model.encode("ξυλοσ")) == "ξυλος"
