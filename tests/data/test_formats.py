"""Interchange formats: our gap sets and predictions, Cullhed and Ithaca files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from apollo_restore.data.formats import (
    CULLHED_SYSTEM_PROMPT,
    GapExample,
    Prediction,
    gap_key,
    read_cullhed_chat,
    read_cullhed_predictions,
    read_gapset,
    read_ithaca_predictions,
    read_predictions,
    split_cullhed_user,
    write_cullhed_chat,
    write_gapset,
    write_predictions,
)
from apollo_restore.errors import FormatError
from apollo_restore.hint import NO_HINT, Hint

#: one example of each interchange format (docs/design.md, *Interchange formats*)
EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
PREFIX = "κομων μουσαιου του ηρακλειτου πεκυσι ωρου χαιρειν· ομολογω πεπρακεναι σοι καμηλον θηλειαν "
SUFFIX = " πυρραν κεχαραγμενον"


def _examples() -> list[GapExample]:
    return [
        GapExample("g0", "ddb", "bgu.1.100", PREFIX, SUFFIX, "δευτεροβολον", Hint.exact(12), "synthetic"),
        GapExample("g1", "ddb", "bgu.1.100", "αβ --- ", " … γδ", "εζη", Hint.span(2, 4), "true"),
        GapExample("g2", "inscription", "x", "", " αβ", "γ", NO_HINT, "synthetic"),
    ]


def test_formats_gapset_round_trip(tmp_path):
    path = tmp_path / "gaps.jsonl"
    assert write_gapset(path, _examples()) == 3
    assert read_gapset(path) == _examples()
    assert json.loads(path.read_text(encoding="utf-8").splitlines()[1])["hint"] == [2, 4]


def test_formats_reads_shared_examples():
    gaps = read_gapset(EXAMPLES / "gapset.example.jsonl")
    assert [g.hint for g in gaps] == [Hint.exact(12), Hint.span(10, 14), NO_HINT]
    preds = read_predictions(EXAMPLES / "predictions.example.jsonl")
    assert preds[0].candidates[0] == ("δευτεροβολον", 0.71)
    chat = read_cullhed_chat(EXAMPLES / "cullhed-chat.example.jsonl")
    # the example's "χαιρειν·" comes out of norm.v1 as "χαιρειν·": same gap key
    assert gap_key(chat[0].prefix, chat[0].suffix, chat[0].target) == gap_key(
        gaps[0].prefix, gaps[0].suffix, gaps[0].target
    )
    assert (
        chat[0].hint == Hint.exact(12)
        and chat[0].prefix.endswith("θηλειαν ")
        and chat[0].suffix == " πυρραν κεχαραγμενον"
    )
    pairs = read_cullhed_predictions(EXAMPLES / "cullhed-predictions.example.jsonl", gaps)
    assert pairs[0][0].id == "ddb:bgu.1.100:s0"
    assert pairs[0][1].candidates == [("δευτεροβολον", None)]
    ithaca = read_ithaca_predictions(EXAMPLES / "ithaca-predictions.example.jsonl", ids=["ddb:bgu.1.100:s0"])
    real, pred = ithaca[0]
    assert real == "δευτεροβολον"
    assert pred.id == "ddb:bgu.1.100:s0"
    assert [t for t, _ in pred.candidates] == ["δευτεροβολον", "τριτοβολον", "δευτεροβολου"]


def test_formats_predictions_round_trip(tmp_path):
    preds = [Prediction("g0", [("αβ", 0.5), ("γδ", 0.25)], 84), Prediction("g1", [("ε", None)], None)]
    path = tmp_path / "preds.jsonl"
    write_predictions(path, preds)
    assert read_predictions(path) == preds


def test_formats_cullhed_chat_round_trip(tmp_path):
    path = tmp_path / "chat.jsonl"
    examples = _examples()
    write_cullhed_chat(path, examples)
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert first["messages"][0] == {"role": "system", "content": CULLHED_SYSTEM_PROMPT}
    assert "[12 letters missing]" in first["messages"][1]["content"]
    back = read_cullhed_chat(path)
    for ours, theirs in zip(examples, back):
        assert (theirs.prefix, theirs.suffix, theirs.target) == (ours.prefix, ours.suffix, ours.target)
    assert [b.hint for b in back] == [Hint.exact(12), Hint.exact(3), Hint.exact(1)]


def test_formats_cullhed_custom_prompt(tmp_path):
    path = tmp_path / "chat.jsonl"
    write_cullhed_chat(path, _examples()[:1], system_prompt="Restore!")
    assert json.loads(path.read_text(encoding="utf-8"))["messages"][0]["content"] == "Restore!"


@pytest.mark.parametrize(
    ("user", "expected"),
    [
        ("αβ [3 letters missing] γδ", ("αβ ", " γδ", 3)),
        ("αβ[1 letter missing]γδ", ("αβ", "γδ", 1)),
        ("α--β [2 letters missing] γ---δ", ("α--β ", " γ---δ", 2)),
        ("Ἀβ, [2 letters missing]", ("αβ· ", "", 2)),
    ],
)
def test_formats_cullhed_user_split(user, expected):
    assert split_cullhed_user(user) == expected


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json\n", "not valid JSON"),
        ('{"messages": [{"role": "user", "content": "αβ"}, {"role": "assistant", "content": "γ"}]}\n', "found 0"),
        ("[1, 2]\n", "expected a JSON object"),
    ],
)
def test_formats_cullhed_errors_name_file_and_line(tmp_path, content, needle):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n" + content, encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_cullhed_chat(path)
    assert f"{path}, line 2" in str(info.value)
    assert needle in str(info.value)


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        (
            '{"id": "a", "source": "s", "doc": "d", "prefix": "", "suffix": "", "target": "α", "hint": [5, 2]}',
            "lo <= hi",
        ),
        (
            '{"id": "a", "source": "s", "doc": "d", "prefix": "", "suffix": "", "target": "α", "hint": "5"}',
            "field 'hint' is '5'; it must be null, a letter count",
        ),
        ('{"id": "a", "source": "s", "doc": "d", "prefix": "", "suffix": ""}', "missing field 'target'"),
    ],
)
def test_formats_gapset_errors_name_file_and_line(tmp_path, line, needle):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match="line 1") as info:
        read_gapset(path)
    assert needle in str(info.value)
    assert str(path) in str(info.value)


def test_formats_shared_examples_write_back_byte_identical(tmp_path):
    for name, read, write in [
        ("gapset.example.jsonl", read_gapset, write_gapset),
        ("predictions.example.jsonl", read_predictions, write_predictions),
    ]:
        original = (EXAMPLES / name).read_text(encoding="utf-8")
        write(tmp_path / name, read(EXAMPLES / name))
        assert (tmp_path / name).read_text(encoding="utf-8") == original, name


def test_formats_cullhed_predictions_keep_their_id_without_match(tmp_path):
    path = tmp_path / "cullhed.jsonl"
    row = {
        "user": {"role": "user", "content": "αβ [2 letters missing] ε"},
        "assistant": {"role": "assistant", "content": "γδ"},
        "top_1_prediction": "γδ",
        "top_20_predictions": ["γδ", "ζη"],
    }
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    ((example, pred),) = read_cullhed_predictions(path, gaps=_examples())
    assert example.id == pred.id == "cullhed:cullhed:0"
    assert [t for t, _ in pred.candidates] == ["γδ", "ζη"]


def test_formats_ithaca_more_lines_than_ids(tmp_path):
    path = tmp_path / "ithaca.jsonl"
    shutil.copy(EXAMPLES / "ithaca-predictions.example.jsonl", path) if EXAMPLES.exists() else path.write_text(
        '{"real_response": "α", "predictions": {"rank_1": "α"}}\n', encoding="utf-8"
    )
    with pytest.raises(FormatError, match="more lines than the 0 ids"):
        read_ithaca_predictions(path, ids=[])
