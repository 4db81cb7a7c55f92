"""Gap builders: positions, lengths, conditions, hints, uncertain variant, silver gaps."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa
import pytest
from evaltoy import SUPPLIED, TOY_TEXT

from apollo_restore.data.formats import read_gapset, write_gapset
from apollo_restore.data.normalise import letter_count
from apollo_restore.evaluate.gapsets import (
    CONDITIONS,
    GapId,
    build_from_prepared,
    build_synthetic,
    build_true_lacunae,
    condition_of,
    hints_for,
    parse_gap_id,
    range_hint,
    wrong_hint,
)
from apollo_restore.hint import NO_HINT, Hint

LENGTHS = range(1, 9)


@pytest.fixture
def synthetic(toy_table):
    return build_synthetic(
        toy_table, "ddb", "test", per_length=5, lengths=LENGTHS, seed=3, context_chars=40, uncertain_excluded=["exact"]
    )


def _doc_text(table: pa.Table, doc: str, column: str = "text") -> str:
    rows = table.filter(pa.compute.equal(table["id"], doc)).to_pylist()
    return rows[0][column]


def test_gapsets_gap_cut_out_of_its_context(synthetic, toy_table):
    for gap in synthetic:
        if gap.id.endswith(":ue"):
            continue
        text = _doc_text(toy_table, gap.doc)
        window = gap.prefix + gap.target + gap.suffix
        start = text.find(window)
        assert start >= 0
        a = start + len(gap.prefix)
        assert text[a : a + len(gap.target)] == gap.target
        # the context is the text around the gap: the target itself is not in the gap's place
        assert len(gap.prefix) <= 40 and len(gap.suffix) <= 40
        assert gap.prefix == text[max(0, a - 40) : a] and gap.suffix == text[a + len(gap.target) :][:40]


def test_gapsets_exact_lengths_and_clean_targets(synthetic):
    counts = defaultdict(int)
    for gap in synthetic:
        n = parse_gap_id(gap.id).length
        assert letter_count(gap.target) == n
        assert gap.target[0] not in " ·" and gap.target[-1] not in " ·"
        assert "-" not in gap.target and "…" not in gap.target
        counts[(condition_of(gap), gap.id.endswith(":ue"), n)] += 1
    assert set(counts.values()) == {5}


def test_gapsets_targets_avoid_supplements_and_uncertain_letters(synthetic):
    supplied = [(TOY_TEXT.index(w), TOY_TEXT.index(w) + len(w)) for w in SUPPLIED]
    uncertain = TOY_TEXT.index("τυβι")
    for gap in synthetic:
        if gap.doc != "d0" or gap.id.endswith(":ue"):
            continue
        a = TOY_TEXT.index(gap.prefix + gap.target + gap.suffix) + len(gap.prefix)
        b = a + len(gap.target)
        assert not any(s < b and a < e for s, e in supplied)
        assert not (uncertain < b and a < uncertain + 4)


def test_gapsets_same_gaps_under_every_condition(synthetic):
    by_condition = defaultdict(list)
    for gap in synthetic:
        if not gap.id.endswith(":ue"):
            by_condition[condition_of(gap)].append((parse_gap_id(gap.id).base, gap.prefix, gap.target, gap.suffix))
    assert set(by_condition) == set(CONDITIONS)
    reference = by_condition["exact"]
    assert all(v == reference for v in by_condition.values())


def test_gapsets_hints_by_condition(synthetic):
    for gap in synthetic:
        n, cond = parse_gap_id(gap.id).length, condition_of(gap)
        if cond == "exact":
            assert gap.hint == Hint.exact(n)
        elif cond == "none":
            assert gap.hint == NO_HINT
        elif cond == "range":
            lo, hi = gap.hint.lo, gap.hint.hi
            assert 1 <= lo <= n <= hi and 1 <= hi - lo <= 6
        elif cond == "wrong100":
            w = gap.hint.lo
            assert gap.hint.is_exact and w != n and 1 <= abs(w - n) <= 5 and w >= 1
    wrong50 = [g for g in synthetic if condition_of(g) == "wrong50"]
    per_length = defaultdict(int)
    for gap in wrong50:
        per_length[parse_gap_id(gap.id).length] += gap.hint != Hint.exact(parse_gap_id(gap.id).length)
    assert set(per_length.values()) == {2}  # round(0.5 × 5) wrong in every length


def test_gapsets_wrong10_share():
    spans = [type("S", (), {"length": n})() for n in [4] * 20]
    hints = hints_for(spans, "wrong10", np.random.default_rng(0))
    assert sum(h != Hint.exact(4) for h in hints) == 2


@pytest.mark.parametrize("n", [1, 2, 7, 20])
def test_gapsets_hint_helpers(n):
    rng = np.random.default_rng(n)
    for _ in range(50):
        hint = range_hint(n, rng)
        assert hint.kind == "range" and hint.contains(n) and hint.lo >= 1
        wrong = wrong_hint(n, rng)
        w = wrong.lo
        assert wrong.is_exact and w != n and w >= 1 and abs(w - n) <= 5


def test_gapsets_deterministic_by_seed(toy_table):
    a = build_synthetic(toy_table, "ddb", "test", 4, lengths=LENGTHS, seed=7)
    b = build_synthetic(toy_table, "ddb", "test", 4, lengths=LENGTHS, seed=7)
    c = build_synthetic(toy_table, "ddb", "test", 4, lengths=LENGTHS, seed=8)
    assert [g.to_dict() for g in a] == [g.to_dict() for g in b]
    assert [g.to_dict() for g in a] != [g.to_dict() for g in c]
    # one condition's hints do not depend on which other conditions were asked
    only = build_synthetic(toy_table, "ddb", "test", 4, conditions=["range"], lengths=LENGTHS, seed=7)
    assert [g.hint for g in only] == [g.hint for g in a if condition_of(g) == "range"]


def test_gapsets_uncertain_excluded_variant(synthetic, toy_table):
    plain = {parse_gap_id(g.id).base: g for g in synthetic if condition_of(g) == "exact" and not g.id.endswith(":ue")}
    ue = [g for g in synthetic if g.id.endswith(":ue")]
    assert len(ue) == len(plain) and all(condition_of(g) == "exact" for g in ue)
    for gap in ue:
        twin = plain[parse_gap_id(gap.id).base]
        assert gap.target == twin.target and gap.hint == twin.hint
        if gap.doc == "d0":
            text = _doc_text(toy_table, "d0", "text_uncertain_excluded")
            assert gap.prefix + gap.target + gap.suffix in text
            assert "τυβι" not in gap.prefix + gap.suffix


def test_gapsets_ids_round_trip(synthetic):
    gid = parse_gap_id(synthetic[0].id)
    assert str(gid) == synthetic[0].id and gid.source == "ddb" and gid.split == "test"
    assert parse_gap_id("ddb:bgu.1.100:s0") is None


def test_gapsets_true_lacunae_toy_document(toy_table):
    gaps = build_true_lacunae(toy_table, "ddb", "test", context_chars=30)
    assert [g.target for g in gaps] == list(SUPPLIED)
    for gap in gaps:
        assert gap.kind == "true" and gap.hint == Hint.exact(letter_count(gap.target))
        start = TOY_TEXT.index(gap.target)
        assert gap.prefix == TOY_TEXT[max(0, start - 30) : start]
        assert gap.suffix == TOY_TEXT[start + len(gap.target) :][:30]
    assert len(build_true_lacunae(toy_table, "ddb", "test", limit=1, seed=0)) == 1
    assert build_true_lacunae(toy_table, "ddb", "test", max_letters=8)[0].target == "δευτερου"


def test_gapsets_from_prepared_and_file_round_trip(toy_prepared, tmp_path):
    gaps = build_from_prepared(
        toy_prepared, "test", ["ddb", "inscription"], 2, ["exact", "none"], true_lacunae=5, lengths=range(1, 4)
    )
    assert {g.source for g in gaps} == {"ddb", "inscription"}
    assert sum(g.kind == "true" for g in gaps) == 4  # two supplements, each also uncertain-excluded
    write_gapset(tmp_path / "g.jsonl", gaps)
    assert read_gapset(tmp_path / "g.jsonl") == gaps
    with pytest.raises(ValueError, match="no test documents"):
        build_from_prepared(toy_prepared, "test", ["dclp"], 2)


def test_gapsets_parse_gap_id_round_trips_and_refuses_other_ids():
    gap_id = GapId("ddb", "test", "bgu.1.2", 7, "0", "range", excluded=True)
    assert str(gap_id) == "ddb:test:bgu.1.2:L07:0:range:ue" and parse_gap_id(str(gap_id)) == gap_id
    for other in ("ddb:test:bgu.1.2:L¹:0:range", "ddb:test:bgu.1.2:Lx:0:range", "ddb:test:L07:0:range", "user:1"):
        assert parse_gap_id(other) is None
