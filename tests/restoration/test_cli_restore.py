"""``apollo-restore restore`` and ``predict`` refuse what they cannot restore, with a message and
a non-zero exit, before loading any model (issue #13)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from apollo_restore.cli import common as cli_common
from apollo_restore.cli.app import app

GREEK = "ἔτους δευτέρου Ἀντωνίνου Καίσαρος τοῦ κυρίου [.5] Τῦβι ἔλαβον παρὰ σοῦ"


@pytest.fixture(autouse=True)
def no_model(monkeypatch):
    """Loading a model is a failure here: every case must stop before it."""

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded")

    from apollo_restore.restoration import load

    monkeypatch.setattr(load, "load_restorer", refuse)


@pytest.mark.parametrize(
    "args,code",
    [
        (["ἔτους δευτέρου"], "E301"),
        (["[ca.]"], "E301"),
        (["[abc]"], "E301"),
        (["zenoni tou [.3] chairein"], "E308"),
        ([GREEK, "--k", "0"], "E305"),
        ([GREEK, "--k", "-1"], "E305"),
        ([GREEK, "--hint", "1=1000000"], "E304"),
        ([GREEK, "--hint", "3=2"], "E306"),
        ([GREEK, "--hint", "0=2"], "numbered from 1"),
        ([GREEK, "--hint", "1=ca.x"], "E306"),
        ([GREEK, "--threads", "0"], "'--threads'"),
        (["missing-file.txt"], "E202"),
    ],
)
def test_cli_restore_exits_non_zero_with_a_message(args, code):
    result = CliRunner().invoke(app, ["restore", *args])
    assert result.exit_code == 2 and code in result.output


def test_cli_restore_empty_stdin_is_an_error():
    result = CliRunner().invoke(app, ["restore"], input="")
    assert result.exit_code == 2 and "E300" in result.output


def test_cli_restore_prompts_when_stdin_is_a_terminal(monkeypatch, capsys):
    class Terminal(io.TextIOWrapper):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(cli_common.sys, "stdin", Terminal(io.BytesIO(GREEK.encode()), encoding="utf-8"))
    assert cli_common.read_text_argument(None) == GREEK
    assert "Ctrl-D" in capsys.readouterr().err


def test_cli_predict_refuses_absurd_hints(tmp_path):
    gaps = tmp_path / "gaps.jsonl"
    row = {
        "id": "g1",
        "source": "ddb",
        "doc": "d",
        "prefix": "και ",
        "suffix": " του",
        "target": "αβ",
        "hint": 10**6,
        "kind": "synthetic",
    }
    gaps.write_text(json.dumps(row) + "\n")
    from apollo_restore.data.formats import GapExample, read_gapset
    from apollo_restore.errors import FormatError, RequestError
    from apollo_restore.hint import Hint
    from apollo_restore.restoration.predict import predict

    with pytest.raises(FormatError, match=r"E201\] .*line 1: field 'hint' is 1000000; it must be null, a letter count"):
        read_gapset(gaps)  # the gap set's schema bounds a hint (1 to 1000 letters)
    within = GapExample("g1", "ddb", "d", "και ", " του", "αβ", Hint.exact(1000))  # and the request, tighter
    with pytest.raises(RequestError, match="E304"):
        list(predict(object(), [within], k=5, progress=False))
    with pytest.raises(RequestError, match="E305"):
        list(predict(object(), [], k=0, progress=False))


@pytest.mark.slow
def test_loading_the_embedded_model_does_not_import_transformers():
    """A CLI call loads the neural model from safetensors: importing ``transformers`` (≈ 1.5 s)
    is left to reports that ask for the Hugging Face model."""
    code = (
        "import sys\n"
        "from apollo_restore.hint import Hint\n"
        "from apollo_restore.restoration.members.neural import NeuralMember\n"
        "r = NeuralMember.load()\n"
        "r.candidates('ετους ', ' αντωνινου καισαρος', Hint.exact(3), 2)\n"
        "print(int('transformers' in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"
