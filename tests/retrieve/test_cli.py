"""``apollo-restore index`` and ``apollo-restore parallels`` on the toy corpus."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from apollo_restore.cli.app import app


def test_cli_index_and_parallels(prepared: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "ix"
    done = runner.invoke(app, ["index", "--prepared", str(prepared), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "indexed 7 train documents" in done.output
    assert json.loads((out / "meta.json").read_text())["splits"] == ["train"]

    done = runner.invoke(app, ["parallels", "αὐτοκράτορος Καίσαρος [.8] Σεβαστοῦ", "--index", str(out)])
    assert done.exit_code == 0, done.output
    assert "gap 1 · 8 letters" in done.output and "3× Τραιανοῦ" in done.output  # edition form
    assert "ddb:a, ddb:b, ddb:d" in done.output
    assert "ddb:a: https://papyri.info/search?STRING=ddb%3Aa" in done.output  # not a terminal: URLs printed

    done = runner.invoke(app, ["parallels", "Καίσαρος Τραιανοῦ", "--index", str(out), "--json"])
    assert done.exit_code == 0 and json.loads(done.output)["count"] == 3
    assert json.loads(done.output)["hits"][0]["url"] == "https://papyri.info/search?STRING=ddb%3Aa"
    done = runner.invoke(app, ["parallels", "Καίσαρος Τραιανοῦ", "--index", str(out)])
    assert "ddb:a: …" in done.output and "[καισαρος τραιανου]" in done.output and "STRING=ddb%3Aa" in done.output

    done = runner.invoke(app, ["parallels", "αὐτοκράτορος [.8", "--index", str(out)])
    assert done.exit_code == 2 and "E001" in done.output
    done = runner.invoke(app, ["parallels", "κα σεβαστου", "--index", str(tmp_path / "missing")])
    assert done.exit_code == 2 and "E404" in done.output


def test_cli_parallels_and_provenance_read_a_file_as_restore_does(prepared: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "ix"
    assert runner.invoke(app, ["index", "--prepared", str(prepared), "--out", str(out)]).exit_code == 0
    edition = tmp_path / "edition.txt"
    edition.write_text("ετους τριτου αυτοκρατορος Καίσαρος [.8] Σεβαστοῦ· χαίρειν", encoding="utf-8")
    done = runner.invoke(app, ["parallels", str(edition), "--index", str(out), "--json"])
    assert done.exit_code == 0, done.output
    (gap,) = json.loads(done.output)
    assert gap["gap"] == 1 and gap["groups"][0]["display"] == "Τραιανοῦ" and gap["groups"][0]["urls"]
    done = runner.invoke(app, ["parallels", "αὐτοκράτορος [.8] Σεβαστοῦ", "--index", str(out), "--hint", "0=8"])
    assert done.exit_code == 2 and "numbered from 1" in done.output
    done = runner.invoke(app, ["provenance", str(edition), "--index", str(out), "--min-run", "20"])
    assert done.exit_code == 0, done.output
    assert "ddb:b" in done.output and "edition was in the training data" in done.output
    done = runner.invoke(app, ["provenance", str(tmp_path / "missing.txt"), "--index", str(out)])
    assert done.exit_code == 2 and "E202" in done.output


def test_cli_parallels_link_documents_in_a_terminal(prepared: Path, tmp_path: Path) -> None:
    """In a terminal the document ids are hyperlinks (OSC 8), and no URL lines are added."""
    runner = CliRunner()
    out = tmp_path / "ix"
    assert runner.invoke(app, ["index", "--prepared", str(prepared), "--out", str(out)]).exit_code == 0
    text = "αὐτοκράτορος Καίσαρος [.8] Σεβαστοῦ"
    done = runner.invoke(app, ["parallels", text, "--index", str(out)], env={"FORCE_COLOR": "1", "TERM": "xterm"})
    assert done.exit_code == 0, done.output
    assert "\x1b]8;" in done.output and "https://papyri.info/search?STRING=ddb%3Aa" in done.output
    assert "ddb:a: https://" not in done.output
