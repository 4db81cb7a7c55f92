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
    assert filled["content"].count("<gap ") == xml.count("<gap ")  # the filled one kept in the reading's note
    assert "In place of the edition's lacuna: <gap " in filled["content"]
    leiden = client.post("/api/export", json={"text": xml, "pins": {"1": "καὶ"}}).json()["content"]
    assert "⁅καὶ⁆⁽ᵐ¹⁾" in leiden


# -- the page for every scholar (static checks; a browser audit needs chromium) -----------------

STATIC = __import__("pathlib").Path(__file__).resolve().parents[2] / "src" / "apollo_restore" / "web" / "static"


def _luminance(colour: str) -> float:
    channels = [int(colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_badges_have_at_least_aa_contrast():
    import re

    css = (STATIC / "style.css").read_text(encoding="utf-8")
    variables = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", css))
    badges = re.findall(r"\.badge\.(\w+) \{ background: ([^;]+); color: ([^;]+); \}", css)
    assert {name for name, _, _ in badges} >= {"pinned", "proposed", "open"}
    for name, background, colour in badges:
        resolve = lambda v: variables[v[6:-1]] if v.startswith("var(") else v  # noqa: E731
        assert _contrast(resolve(background), resolve(colour)) >= 4.5, name


def test_candidate_buttons_are_named_by_what_they_show_and_focus_returns_to_the_pick():
    js = (STATIC / "app.js").read_text(encoding="utf-8")
    button = js[js.index('class: "candidate"') : js.index('el("span", { class: "rank"')]
    assert "aria-label" not in button.replace("// no aria-label", "")  # the visible rank, Greek reading and percent
    assert "function restoreFocus" in js and "restoreFocus();" in js
    assert 'gap.filled ? "proposed" : "open"' in js  # a gap left open is not "proposed"
    css = (STATIC / "style.css").read_text(encoding="utf-8")
    assert "minmax(min(21rem, 100%), 1fr)" in css  # cards fit a 320 px screen


def test_the_page_reads_an_epidoc_file_as_the_cli_does_and_exports_it_as_itself(presented_stub):
    """Issue 51: the upload keeps the expansions (κιθῶ(να)), and the file, longer than a text the
    page restores, goes out as itself byte for byte outside the filled gap."""
    from pathlib import Path

    from apollo_restore.data.readers.typed import as_leiden

    path = Path(__file__).resolve().parents[1] / "fixtures" / "idp-sample" / "DDB_EpiDoc_XML" / "p.oxy" / "p.oxy.2"
    xml = (path / "p.oxy.2.298.xml").read_text(encoding="utf-8")
    client = TestClient(create_app(presented_stub))
    opened = client.post("/api/epidoc", files={"file": ("p.oxy.2.298.xml", xml.encode(), "text/xml")}).json()
    assert opened["leiden"] == as_leiden(xml)[0] and "κιθῶ(να)" in opened["leiden"]
    out = client.post("/api/export", json={"text": xml, "format": "epidoc", "pins": {"2": "καὶ"}})
    assert out.status_code == 200, out.text
    content = out.json()["content"]
    assert content.startswith(xml[: xml.index("</titleStmt>")])  # the declaration and header as they were
    assert content.endswith(xml[-200:]) and "<choice>" in content and "<app " in content
    assert '<supplied reason="lost" resp="#apollo-restore" cert="low">καὶ</supplied>' in content


def test_the_upload_and_a_pasted_text_are_read_by_one_epidoc_reader(presented_stub):
    """One EpiDoc reader at every door: each sample edition uploaded gives the Leiden text the
    same file pasted is restored as (expansions kept: a reader that dropped them fails on the
    files that have them), and a broken file is E313 at both doors."""
    from pathlib import Path

    from apollo_restore.data.readers.typed import as_leiden

    client = TestClient(create_app(presented_stub))
    samples = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "idp-sample").rglob("*.xml"))
    expanded = 0
    for path in samples:
        xml = path.read_text(encoding="utf-8")
        opened = client.post("/api/epidoc", files={"file": (path.name, xml.encode(), "text/xml")})
        if opened.status_code != 200:  # a sample without a Greek edition: refused alike below
            continue
        assert opened.json()["leiden"] == as_leiden(xml, path.name)[0], path.name
        expanded += "(" in opened.json()["leiden"]
    assert expanded >= 1  # some sample has an expansion, kept by both
    broken = "<TEI><text><body><div type='edition'><ab>λόγος</ab></div>"
    upload = client.post("/api/epidoc", files={"file": ("broken.xml", broken.encode(), "text/xml")})
    pasted = client.post("/api/restore", json={"text": broken})
    assert upload.status_code == pasted.status_code == 422
    assert upload.json()["error"]["code"] == pasted.json()["error"]["code"] == "E313"
