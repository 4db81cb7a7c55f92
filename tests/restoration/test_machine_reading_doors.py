"""A machine reading is never a letter of the text (issue 46, items 2 and 3): ``⁅ ⁆`` is
refused with ``E312`` at every door that takes text, a reading or a context; the restored text
never writes a machine reading inside the editor's ``[ ]``, across line breaks too; gap-set
contexts reach the restorers in the normal form restore gives its own texts."""

from __future__ import annotations

import unicodedata

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.cli.app import app
from apollo_restore.data.formats import GapExample
from apollo_restore.errors import FormatError, RequestError
from apollo_restore.evaluate.gapsets import load_gaps
from apollo_restore.hint import Hint
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.predict import predict
from apollo_restore.restoration.request import check_gap, validate
from apollo_restore.retrieve.provenance import provenance
from apollo_restore.schema.restoration import RestoreRequest
from apollo_restore.web.app import create_app
from tests.stubs import first_reading_at

from ..gapfiles import gap, write_gaps

TEXT = "ὁμολογῶ πεπρακέναι σοι [.7] θήλειαν [.5] πυρρὰν κεχαραγμένην"
LINES = "1 ἔτους δευτέρου καὶ εἰκοστοῦ\n2 Ἀντωνίνου Καίσαρος τοῦ [...-\n3 ...] Τῦβι"


def test_restored_text_never_puts_a_machine_reading_in_the_editors_brackets_across_lines():
    result = restore_text(first_reading_at(0.9, "κυρ", "κυρ"), LINES, k=2)
    assert result.restored_leiden == "1 ἔτους δευτέρου καὶ εἰκοστοῦ\n2 Ἀντωνίνου Καίσαρος τοῦ ⁅κυρ-\n3 κυρ⁆ Τῦβι"
    assert "[⁅" not in result.restored_leiden and "⁆]" not in result.restored_leiden


def test_restored_text_with_no_reading_written_is_the_input_byte_for_byte():
    text = "1 πράσιν ταύτην ἀπὸ τῆς [.9] ἡμέρας . ἀπὸ vac. ἐκ τοῦ πρὸς <τῶν> ἡμῶν [---]\n2 μέρ[ο]υς, αὐτόθεν"
    assert restore_text(first_reading_at(0.05), text, k=2).restored_leiden == text


@pytest.mark.parametrize("pin", ["⁅τοις⁆", "τοις⁆", "⁅τοις"])
def test_a_pin_written_with_the_machine_marks_is_refused(pin):
    with pytest.raises(RequestError) as err:
        validate(RestoreRequest(TEXT, pins={1: pin}))
    assert err.value.code == "E312" and "reading for gap 1" in str(err.value)
    with pytest.raises(RequestError, match=r"\[E312\]"):
        apollo_restore.restore(TEXT, pins={1: pin}, model="/nonexistent")  # refused before the model loads


def test_web_refuses_machine_marks_in_pins_and_export():
    client = TestClient(create_app(first_reading_at()))
    answer = client.post("/api/restore", json={"text": TEXT, "pins": {"1": "⁅τοις⁆"}})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "E312"
    for body in (
        {"text": TEXT, "pins": {"1": "⁅τοις⁆"}},
        {"text": TEXT, "choices": {"1": {"text": "τοις", "display": "⁅τοῖς⁆"}}},
        {"text": TEXT.replace("[.5]", "⁅καλήν⁆⁽ᵐ¹⁾")},
    ):
        answer = client.post("/api/export", json=body)
        assert answer.status_code == 422 and answer.json()["error"]["code"] == "E312", body


def test_provenance_refuses_a_machine_reading_before_the_index_is_read():
    text = "ἔτους δευτέρου καὶ εἰκοστοῦ Ἀντωνίνου Καίσαρος τοῦ ⁅κυρίου⁆ Τῦβι ἕκτῃ καὶ εἰκάδι"
    with pytest.raises(RequestError, match=r"\[E312\]"):
        provenance(text, index=object())  # type: ignore[arg-type]
    with pytest.raises(RequestError, match=r"\[E312\]"):
        apollo_restore.provenance(text)
    for command in (["provenance", text], ["parallels", text], ["parallels", "τοῦ ⁅κυρίου⁆ Τῦβι"]):
        result = CliRunner().invoke(app, [*command, "--index", "/nonexistent"])
        assert result.exit_code == 2 and "[E312]" in result.output, command


def test_gap_set_contexts_with_a_machine_reading_are_refused(tmp_path):
    bad = GapExample("g1", "ddb", "d", "του ⁅ηρακλειτου⁆ ", " και", "αβγ", Hint.exact(3))
    with pytest.raises(RequestError, match=r"\[E312\].*prefix of gap 'g1'"):
        check_gap(bad)
    with pytest.raises(RequestError, match=r"\[E312\]"):
        list(predict(first_reading_at(), [bad], k=2, progress=False))
    path = write_gaps(tmp_path / "gaps.jsonl", [gap(1), gap(2, suffix=" ⁅ηρακλειτου⁆ και")])
    with pytest.raises(FormatError, match=r"E312"):
        load_gaps(path)


def test_an_nfd_and_an_nfc_copy_of_one_gap_give_one_prediction():
    prefix, suffix = "Ἀντωνίνου Καίσαρος τοῦ ", " Τῦβι ἕκτῃ καὶ\u200b εἰκάδι"
    copies = [
        GapExample(f"g{i}", "ddb", "d", form(prefix), form(suffix), "", Hint.exact(6))
        for i, form in enumerate(
            [
                lambda s: unicodedata.normalize("NFC", s),
                lambda s: unicodedata.normalize("NFD", s),
                lambda s: s.replace("ί", "\u1f77").upper(),  # oxia for tonos, capitals
            ]
        )
    ]
    restorer = first_reading_at()
    list(predict(restorer, copies, k=2, progress=False))
    assert len(set(restorer.seen)) == 1
    assert restorer.seen[0] == ("αντωνινου καισαρος του ", " τυβι εκτηι και εικαδι")
    restored = first_reading_at()
    restore_text(restored, "Ἀντωνίνου Καίσαρος τοῦ [.6] Τῦβι ἕκτῃ καὶ εἰκάδι", k=2)
    assert restored.seen == restorer.seen[:1]  # as restore gives its own text


def test_cli_export_writes_the_text_as_given(tmp_path):
    text = "1 πράσιν ταύτην ἀπὸ τῆς [.9] ἡμέρας . ἀπὸ vac. ἐκ τοῦ πρὸς <τῶν> ἡμῶν [---]\n2 μέρ[ο]υς, αὐτόθεν\n"
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    same = CliRunner().invoke(app, ["export", str(path)])
    assert same.exit_code == 0 and same.output == text
    chosen = CliRunner().invoke(app, ["export", str(path), "--reading", "1=πρώτης"])
    assert chosen.exit_code == 0 and chosen.output.startswith(text.replace("[.9]", "⁅πρώτης⁆⁽ᵐ¹⁾"))
    refused = CliRunner().invoke(app, ["export", str(path), "--reading", "1=⁅πρώτης⁆"])
    assert refused.exit_code == 2 and "[E312]" in refused.output
