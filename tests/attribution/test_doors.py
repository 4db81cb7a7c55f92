"""Every door of attribution on a tiny random folder: the core function (inputs as restore reads
them, numbered refusals, a short text's wide answer, dated parallels), the Python API, the
command (one text, JSON, a resumable batch).

    python -m pytest -q tests/attribution/test_doors.py
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.attribution.attribute import attribute, dated_parallels, read_text
from apollo_restore.attribution.batch import AttributeJob
from apollo_restore.attribution.folder import fingerprint
from apollo_restore.cli.app import app
from apollo_restore.data.textindex import TextIndex, build_text_index
from apollo_restore.errors import AttributionError, RequestError
from tests.attribution.conftest import INDEXED

LONG = (
    "κομων μουσαιου του ηρακλειτου πεκυσι ωρου χαιρειν ομολογω πεπρακεναι σοι καμηλον θηλειαν "
    "πυρραν κεχαραγμενην επι του δεξιου μηρου και απεσχηκεναι παρα σου την συμπεφωνημενην τιμην"
)
runner = CliRunner()


def test_inputs_are_read_as_restore_reads_them():
    assert read_text("ἔτους [.3] Ἀντωνίνου") == "ετους --- αντωνινου"
    assert read_text("και---του αυρηλιου") == "και---του αυρηλιου"  # plain form: one '-' per lost letter
    assert read_text("e)/tous *)antwni/nou") == "ετους αντωνινου"  # Beta Code
    xml = (
        '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" xml:lang="grc">'
        '<ab>ἔτους <supplied reason="lost">δευ</supplied>τέρου</ab></div></body></text></TEI>'
    )
    assert read_text(xml) == "ετους δευτερου"


def test_refusals_are_numbered(tiny_attribution):
    with pytest.raises(AttributionError, match="E801"):
        attribute("ἔτους [.5] β", folder=str(tiny_attribution), parallels=False)
    with pytest.raises(RequestError, match="E308"):
        attribute("the quick brown fox jumps over the lazy dog", folder=str(tiny_attribution), parallels=False)
    with pytest.raises(RequestError, match="E300"):
        attribute("   ", folder=str(tiny_attribution), parallels=False)
    with pytest.raises(AttributionError, match="E802"):
        attribute(LONG, folder=str(tiny_attribution / "missing"), parallels=False)


def test_answer_shape_and_a_short_text_knows_little(tiny_attribution):
    long = attribute(LONG, folder=str(tiny_attribution), parallels=False)
    short = attribute("κομων μουσαιου", folder=str(tiny_attribution), parallels=False)
    assert short.little and not long.little
    assert long.low <= long.year <= long.high
    assert short.high - short.low > long.high - long.low  # the short band's temperature is larger
    assert abs(sum(long.date.probs) - 1) < 1e-6 and len(long.date.bins) == len(long.date.probs) + 1
    assert [p.place for p in long.places] and sorted((p.prob for p in long.places), reverse=True) == [
        p.prob for p in long.places
    ]
    row = long.to_dict()
    assert set(row["date"]) >= {"year", "low", "high"} and row["places"][0].keys() == {"place", "prob"}
    assert row["formula"] is None  # no dating formula in it


def test_a_dating_formula_read_gives_its_year(tiny_attribution):
    found = attribute("ἔτους ιβ Ἁδριανοῦ Καίσαρος τοῦ κυρίου Φαῶφι ε " + LONG, folder=str(tiny_attribution),
                      parallels=False)  # fmt: skip
    # Phaophi of Hadrian's year 12 (29 August 127 – 28 August 128): AD 127, the earlier Julian year
    assert found.formula.year == 127 and found.formula.regnal_year == 12 and found.formula.kind == "year"
    assert abs(found.year - 127) <= 1 and found.low <= 127 <= found.high  # the year's probability is most of it
    assert 0.5 < found.formula.prob <= 1 and abs(sum(found.date.probs) - 1) < 1e-6
    assert "dating formula: year 12" in found.formula_line() and "AD 127" in found.formula_line()


def test_dated_names_give_their_year_with_no_regnal_year(tiny_attribution):
    found = attribute("κλεανδρου " + LONG, folder=str(tiny_attribution), parallels=False)
    assert found.formula.kind == "name" and found.formula.year == 190
    assert found.formula.regnal_year is None and found.formula.era is None
    assert found.formula_line().startswith("dating formula: dated names 'κλεανδρου' → AD 190")


def test_dated_parallels_carry_date_and_place(tiny_attribution, tmp_path):
    build_text_index(*INDEXED, [LONG, "ετους δευτερου μηνος θωθ"], tmp_path / "ix")
    index = TextIndex.open(tmp_path / "ix")
    found = dated_parallels(LONG[:120], folder=str(tiny_attribution), index=index)
    assert found[0].doc == "bgu.1.100" and (found[0].lo, found[0].hi, found[0].place) == (
        140,
        160,
        "Karanis",
    )
    assert found[0].longest >= 20
    assert dated_parallels("κομων μουσαιου", folder=str(tiny_attribution), index=index) == []  # under one run


def test_undated_documents_are_no_dated_parallels(tiny_attribution, tmp_path):
    """A training document of no known date that shares a longer run than a dated one is left out
    (issue 64, item 6): the dated parallels hold dated documents only, at every door."""
    undated = LONG + " και ετερα"  # p.erl.26 has no date in the folder's labels
    build_text_index(*INDEXED, [LONG[:100], undated], tmp_path / "ix")  # bgu.1.100, p.erl.26
    found = dated_parallels(LONG, folder=str(tiny_attribution), index=TextIndex.open(tmp_path / "ix"))
    assert [p.doc for p in found] == ["bgu.1.100"] and found[0].lo == 140


def test_python_api(tiny_attribution):
    found = apollo_restore.attribute(LONG, parallels=False, model=str(tiny_attribution))
    assert found.places and found.to_dict()["letters"] == found.letters


def test_cli_one_text_plain_and_json(tiny_attribution):
    result = runner.invoke(app, ["attribute", LONG, "--model", str(tiny_attribution), "--no-parallels", "--json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)
    assert row["date"]["low"] <= row["date"]["year"] <= row["date"]["high"] and len(row["places"]) == 3
    result = runner.invoke(app, ["attribute", LONG, "--model", str(tiny_attribution), "--no-parallels"])
    assert result.exit_code == 0 and "80 %" in result.output and "%" in result.output.splitlines()[1]
    assert "dating formula" not in result.output
    dated = "ετους ιβ αδριανου καισαρος " + LONG
    result = runner.invoke(app, ["attribute", dated, "--model", str(tiny_attribution), "--no-parallels"])
    assert result.exit_code == 0 and "dating formula: year 12" in result.output and "→ AD 128" in result.output
    result = runner.invoke(app, ["attribute", "ἔτους β", "--model", str(tiny_attribution), "--no-parallels"])
    assert result.exit_code == 2 and "E801" in result.output and "Traceback" not in result.output


def test_cli_batch_resumes_and_writes_errors_as_lines(tiny_attribution, tmp_path):
    texts = tmp_path / "texts.jsonl"
    lines = [{"id": "a", "text": LONG}, {"id": 2, "text": "ἔτους β"}, {"id": "c", "text": LONG[:60]}]
    texts.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["attribute", "--texts", str(texts), "--out", str(out), "--model", str(tiny_attribution), "--no-parallels"]
    # a run that stopped after the first line: the same command continues it
    job = AttributeJob.open(texts, out, settings={"model": fingerprint(tiny_attribution), "parallels": "False"})
    job.output.append(json.dumps({"id": "a", "date": {"year": 1, "low": 0, "high": 2}, "places": []}))
    job.output.close()
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "resuming: 1 of 3" in result.output
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["a", "2", "c"]
    assert rows[0]["date"]["year"] == 1  # kept from the first run, not made again
    assert "E801" in rows[1]["error"] and rows[2]["places"]
    # an existing output is refused without --force; a malformed input line is a numbered error
    assert runner.invoke(app, args).exit_code == 2
    texts.write_text('{"id": "a"}\n', encoding="utf-8")
    result = runner.invoke(app, [*args, "--force"])
    assert result.exit_code == 2 and "E201" in result.output and "line 1" in result.output
