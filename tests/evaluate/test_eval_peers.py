"""Peer prediction files (shared/formats examples) scored with our metric code; exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apollo_restore.data.formats import GapExample, Prediction, read_cullhed_chat, read_gapset
from apollo_restore.errors import FormatError
from apollo_restore.evaluate.harness import score_predictions
from apollo_restore.evaluate.peers import (
    detect_format,
    export_cullhed,
    ithaca_text,
    load_peer,
    parse_peer_arg,
    read_ithaca_input_ids,
    side_by_side,
    write_ithaca_inputs,
)
from apollo_restore.hint import Hint

#: one example of each interchange format (docs/design.md, *Interchange formats*)
FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


@pytest.fixture
def gaps() -> list[GapExample]:
    return read_gapset(FORMATS / "gapset.example.jsonl")


@pytest.mark.parametrize(
    "name, kind",
    [
        ("predictions.example.jsonl", "ours"),
        ("cullhed-predictions.example.jsonl", "cullhed"),
        ("ithaca-predictions.example.jsonl", "ithaca"),
    ],
)
def test_peers_detect_format(name, kind):
    assert detect_format(FORMATS / name) == kind


def test_peers_detect_format_rejects_other(tmp_path):
    (tmp_path / "x.jsonl").write_text('{"foo": 1}\n')
    with pytest.raises(FormatError):
        detect_format(tmp_path / "x.jsonl")


def test_peers_cullhed_joined_by_context_and_scored(gaps):
    preds = load_peer(FORMATS / "cullhed-predictions.example.jsonl", gaps)
    assert [p.id for p in preds] == ["ddb:bgu.1.100:s0"]  # same text, same hint (12)
    scored = score_predictions(gaps, preds)
    assert [s.score.top1 for s in scored] == [True, False, False]  # s1, s2 not run by Cullhed
    assert scored[0].score.cer == 0.0


def test_peers_ithaca_by_order_and_target_check(gaps):
    preds = load_peer(FORMATS / "ithaca-predictions.example.jsonl", gaps, ids=["ddb:bgu.1.100:s0"])
    assert preds[0].candidates[1][0] == "τριτοβολον"  # padding stripped
    assert score_predictions(gaps[:1], preds)[0].score.top1
    # a line whose real_response is not the gap's target is dropped
    other = [GapExample("x", "ddb", "d", "αβ ", " γδ", "ερωτα", Hint.exact(5))]
    assert load_peer(FORMATS / "ithaca-predictions.example.jsonl", other) == []


def test_peers_ours_and_side_by_side(gaps):
    ours = load_peer(FORMATS / "predictions.example.jsonl", gaps)
    cullhed = load_peer(FORMATS / "cullhed-predictions.example.jsonl", gaps)
    report = side_by_side(gaps, {"apollo": ours, "cullhed": cullhed})
    assert report["gaps"] == 1
    exact = report["metrics"]["cullhed"]["synthetic"]["included"]["exact"]["ddb"]["all"]
    assert exact["top1"] == 1.0 and exact["n"] == 1
    assert report["head_to_head"]["apollo vs cullhed"]["both"] == 1


def test_peers_side_by_side_head_to_head_counts():
    gaps = [
        GapExample(f"g{i}", "ddb", "d", "α ", " β", t, Hint.exact(len(t))) for i, t in enumerate(["γαμ", "δελ", "ζητ"])
    ]
    a = [Prediction("g0", [("γαμ", None)]), Prediction("g1", [("δελ", None)]), Prediction("g2", [("x", None)])]
    b = [Prediction("g0", [("γαμ", None)]), Prediction("g1", [("x", None)])]
    out = side_by_side(gaps, {"a": a, "b": b})
    assert out["gaps"] == 2 and out["head_to_head"]["a vs b"] == {"both": 1, "only a": 1, "only b": 0, "neither": 0}


def test_peers_exports_round_trip(gaps, tmp_path):
    assert export_cullhed(tmp_path / "c.jsonl", gaps[:1]) == 1
    back = read_cullhed_chat(tmp_path / "c.jsonl")[0]
    assert (back.prefix, back.suffix, back.target, back.hint) == (
        gaps[0].prefix,
        gaps[0].suffix,
        gaps[0].target,
        Hint.exact(12),
    )
    write_ithaca_inputs(tmp_path / "i.jsonl", gaps)
    assert read_ithaca_input_ids(tmp_path / "i.jsonl") == [g.id for g in gaps]
    row = json.loads((tmp_path / "i.jsonl").read_text().splitlines()[0])
    assert (
        row["text"] == (gaps[0].prefix + "?" * 12 + gaps[0].suffix).replace("·", ".")
        and row["real_response"] == "δευτεροβολον"
    )


def test_peers_ithaca_text_placeholders():
    gap = GapExample("g", "ddb", "d", "ετους ---· ", " του …", "και τ", Hint.exact(4))
    assert ithaca_text(gap) == "ετους ---. ????? του -"  # exact hint: one '?' per character
    assert (
        ithaca_text(GapExample("g", "ddb", "d", "", "", "και", Hint.exact(6))).count("?") == 6
    )  # a wrong hint is kept


def test_peers_parse_arg():
    assert parse_peer_arg("cullhed=a/b.jsonl") == ("cullhed", Path("a/b.jsonl"))
    with pytest.raises(ValueError):
        parse_peer_arg("cullhed")
