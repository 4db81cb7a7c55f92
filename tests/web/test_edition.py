"""The web doors of issue 46: the export is the text as given (readings spliced in, marked), an
EpiDoc upload with a gap length that is no count is ``E314``."""

from __future__ import annotations

from fastapi.testclient import TestClient

from apollo_restore.web.app import create_app

ISSUE_TEXT = (
    "1 Εὔτυχος πρεσβύτερος καὶ Εὔτυχος τρίτος\n"
    "2 πράσιν ταύτην ἀπὸ τῆς [.9] ἡμέρας ἐπὶ τὸν ἅπαντα χρόνον . ἀπὸ τῶν ὑπαρχόντων vac. ἐκ τοῦ πρὸς "
    "<τῶν> ἡμῶν [---]\n"
    "3 μέρ[ο]υς, αὐτόθεν οὖν"
)


def test_export_without_readings_is_the_input_byte_for_byte(presented_stub):
    client = TestClient(create_app(presented_stub))
    body = client.post("/api/export", json={"text": ISSUE_TEXT, "format": "leiden"}).json()
    assert body["content"] == ISSUE_TEXT and body["machine_readings"] == 0
    chosen = client.post("/api/export", json={"text": ISSUE_TEXT, "pins": {"1": "πρώτης"}}).json()["content"]
    assert chosen.startswith(ISSUE_TEXT.replace("[.9]", "⁅πρώτης⁆⁽ᵐ¹⁾") + "\n\n⁽ᵐ⁾ Machine-proposed readings")


def test_epidoc_upload_with_a_gap_length_that_is_no_count_is_refused(presented_stub):
    xml = (
        '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" xml:lang="grc"><ab>'
        '<lb n="1"/>ἔτους δευτέρου καὶ εἰκοστοῦ <gap reason="lost" quantity="-4" unit="character"/> Καίσαρος'
        "</ab></div></body></text></TEI>"
    )
    client = TestClient(create_app(presented_stub))
    answer = client.post("/api/epidoc", files={"file": ("a.xml", xml.encode(), "text/xml")})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "E314"
    assert '<gap quantity="-4">' in answer.json()["error"]["message"]


def test_an_epidoc_document_exports_as_itself_with_the_readings_in_place(presented_stub):
    from pathlib import Path

    xml = (Path(__file__).resolve().parents[1] / "fixtures" / "idp-sample" / "DDB_EpiDoc_XML" / "o.claud" / "o.claud.1"
           / "o.claud.1.10.xml").read_text(encoding="utf-8")  # fmt: skip
    client = TestClient(create_app(presented_stub))
    same = client.post("/api/export", json={"text": xml, "format": "epidoc"}).json()
    assert same["content"] == xml
    filled = client.post("/api/export", json={"text": xml, "format": "epidoc", "pins": {"1": "καὶ"}}).json()
    assert '<supplied reason="lost" resp="#apollo-restore" cert="low">καὶ</supplied>' in filled["content"]
    assert filled["content"].count("<gap ") == xml.count("<gap ") - 1
    leiden = client.post("/api/export", json={"text": xml, "pins": {"1": "καὶ"}}).json()["content"]
    assert "⁅καὶ⁆⁽ᵐ¹⁾" in leiden
