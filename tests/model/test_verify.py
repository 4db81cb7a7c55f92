"""Model folders are verified on load: corrupted copies of the shipped folder are refused with a
numbered error naming the file, never a library traceback or a silent load.

    python -m pytest -q tests/model/test_verify.py
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.errors import ModelFolderError
from apollo_restore.model.checkpoint import load_model
from apollo_restore.model.verify import CONFIG_FILE, WEIGHTS_FILE, check_weights, read_folder_json, read_json
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.members.neural import NeuralMember


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the shipped model folder, to corrupt."""
    return Path(shutil.copytree(DEFAULT_MODEL, tmp_path / "model"))


def _refused(folder: Path, code: str, file: str) -> ModelFolderError:
    """The error ``load_restorer`` (the door every command uses) raises for ``folder``, checked."""
    with pytest.raises(ModelFolderError) as err:
        load_restorer(folder)
    assert err.value.code == code and str(err.value).startswith(f"[{code}]"), err.value
    assert str(folder / file) in str(err.value)
    return err.value


def _edit_config(folder: Path, **fields) -> None:
    config = json.loads((folder / CONFIG_FILE).read_text())
    (folder / CONFIG_FILE).write_text(json.dumps({**config, **fields}))


def test_the_shipped_folder_passes_every_check():
    files = read_folder_json(DEFAULT_MODEL)
    assert {CONFIG_FILE, "apollo_restore.json", "calibration.json", "generation_config.json"} <= files.keys()
    check_weights(DEFAULT_MODEL, files[CONFIG_FILE])


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: b"",  # empty
        lambda data: bytes(range(256)) * 64,  # not a safetensors file
        lambda data: data[:8] + b"[" + data[9:],  # a header that is not a JSON object
    ],
    ids=["truncated", "empty", "random", "bad-header"],
)
def test_broken_weights_are_refused_naming_the_file(folder, corrupt):
    path = folder / WEIGHTS_FILE
    path.write_bytes(corrupt(path.read_bytes()))
    _refused(folder, "E506", WEIGHTS_FILE)


@pytest.mark.parametrize("layers", [3, 12])
def test_a_config_with_another_number_of_layers_is_refused(folder, layers):
    _edit_config(folder, num_hidden_layers=layers)
    err = _refused(folder, "E507", WEIGHTS_FILE)
    assert f"asks for {layers} layers" in str(err) and "holds 6" in str(err)


@pytest.mark.parametrize(
    ("fields", "tensor"),
    [
        ({"num_attention_heads": 12}, "model.layers.0.self_attn.q_proj.weight"),
        ({"hidden_size": 768, "head_dim": None}, "model.embed_tokens.weight"),
        ({"vocab_size": 60}, "model.embed_tokens.weight"),
        ({"intermediate_size": 1000}, "model.layers.0.mlp.gate_proj.weight"),
    ],
)
def test_a_config_whose_shapes_differ_from_the_weights_is_refused(folder, fields, tensor):
    _edit_config(folder, **fields)
    err = _refused(folder, "E509", WEIGHTS_FILE)
    assert tensor in str(err)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"num_hidden_layers": "6"}, "num_hidden_layers"),
        ({"num_key_value_heads": 0}, "num_key_value_heads"),
        ({"num_key_value_heads": 4}, "num_attention_heads"),  # 6 heads do not share 4 key/value heads
        ({"vocab_size": None}, "vocab_size"),
        ({"rms_norm_eps": "tiny"}, "rms_norm_eps"),
        ({"model_type": "gpt2"}, "model_type"),
    ],
)
def test_a_config_with_bad_fields_is_refused_naming_the_field(folder, fields, field):
    _edit_config(folder, **fields)
    err = _refused(folder, "E505", CONFIG_FILE)
    assert f"{field} = " in str(err)


def test_a_config_that_is_a_json_list_is_refused(folder):
    (folder / CONFIG_FILE).write_text("[6, 6]")
    assert "a JSON list" in str(_refused(folder, "E504", CONFIG_FILE))


@pytest.mark.parametrize("name", [CONFIG_FILE, "generation_config.json", "apollo_restore.json", "calibration.json"])
def test_invalid_json_in_any_folder_file_names_the_file_line_and_column(folder, name):
    (folder / name).write_text('{\n  "a": 1,\n  "b": tru\n}')
    err = _refused(folder, "E503", name)
    assert "line 3, column 8" in str(err)
    (folder / name).write_bytes(b'{"a": "\xff"}')
    assert "not UTF-8" in str(_refused(folder, "E503", name))


def _rewrite_weights(folder: Path, edit) -> None:
    tensors = load_file(str(folder / WEIGHTS_FILE))
    edit(tensors)
    save_file(tensors, str(folder / WEIGHTS_FILE), metadata={"format": "pt"})


def test_missing_unused_and_integer_tensors_are_refused(folder):
    _rewrite_weights(folder, lambda t: t.pop("model.layers.5.mlp.down_proj.weight"))
    assert "model.layers.5.mlp.down_proj.weight" in str(_refused(folder, "E508", WEIGHTS_FILE))
    shutil.copy(DEFAULT_MODEL / WEIGHTS_FILE, folder / WEIGHTS_FILE)
    _rewrite_weights(folder, lambda t: t.update({"model.layers.0.self_attn.q_proj.bias": torch.zeros(384)}))
    assert "q_proj.bias" in str(_refused(folder, "E510", WEIGHTS_FILE))
    shutil.copy(DEFAULT_MODEL / WEIGHTS_FILE, folder / WEIGHTS_FILE)
    _rewrite_weights(folder, lambda t: t.update({"model.norm.weight": torch.ones(384, dtype=torch.int32)}))
    assert "I32" in str(_refused(folder, "E511", WEIGHTS_FILE))


def test_an_untied_head_must_be_stored_and_a_tied_one_may_be(folder):
    _edit_config(folder, tie_word_embeddings=False)
    assert "lm_head.weight" in str(_refused(folder, "E508", WEIGHTS_FILE))
    _rewrite_weights(folder, lambda t: t.update({"lm_head.weight": t["model.embed_tokens.weight"].clone()}))
    assert isinstance(NeuralMember.load(folder), NeuralMember)
    _edit_config(folder, tie_word_embeddings=True)
    assert isinstance(NeuralMember.load(folder), NeuralMember)


def test_a_tokenizer_larger_than_the_model_is_refused(folder):
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    size = len(vocab)
    vocab.update({f"q{i}": size + i for i in range(5)})
    (folder / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    err = _refused(folder, "E512", "tokenizer.json")
    assert f"has {size + 5} tokens" in str(err) and "gives the model 51" in str(err)
    with pytest.raises(ModelFolderError, match=r"^\[E512\]"):
        load_model(folder)


def _edit_vocab(folder: Path, edit) -> None:
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    edit(data)
    (folder / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


@pytest.mark.parametrize(
    ("edit", "field", "says"),
    [
        (lambda d: d.pop("model"), "model.vocab", "an object of token → id"),
        (lambda d: d["model"].update(vocab=["α", "β"]), "model.vocab", "an object of token → id"),
        (lambda d: d["model"]["vocab"].update({"α": "7"}), "model.vocab['α']", "a whole number"),
        (lambda d: d["model"]["vocab"].update({"α": 0}), "model.vocab", "each once"),
        (lambda d: d["model"]["vocab"].pop("[MIDDLE]"), "model.vocab", "FIM control tokens"),
        (lambda d: d["model"]["vocab"].pop("ω"), "model.vocab", "every letter"),
    ],
    ids=["no-model", "vocab-list", "id-string", "id-twice", "no-middle-token", "no-omega"],
)
def test_a_tokenizer_that_is_not_one_is_refused_naming_the_field(folder, edit, field, says):
    _edit_vocab(folder, edit)
    err = _refused(folder, "E505", "tokenizer.json")
    assert f"{field} = " in str(err) and says in str(err)


def test_the_transformers_loader_checks_the_same_way(folder):
    _edit_config(folder, num_hidden_layers=3)
    with pytest.raises(ModelFolderError, match=r"^\[E507\]"):
        load_model(folder)


def test_read_json_needs_an_object(tmp_path):
    (tmp_path / "x.json").write_text('"text"')
    with pytest.raises(ModelFolderError, match=r"^\[E504\].*a JSON str"):
        read_json(tmp_path / "x.json")


def test_the_cli_answers_a_broken_folder_with_exit_2_and_the_numbered_message(folder):
    (folder / WEIGHTS_FILE).write_bytes(b"")
    done = CliRunner().invoke(app, ["restore", "καὶ [.3] τοῦ θεοῦ", "--model", str(folder)])
    assert done.exit_code == 2 and done.output.startswith("error: [E506]"), done.output
    assert "Traceback" not in done.output


@pytest.mark.parametrize(
    "make, code",
    [
        (lambda f: shutil.rmtree(f), "E514"),  # no folder at all
        (lambda f: (f / CONFIG_FILE).unlink(), "E514"),
        (lambda f: _edit_meta(f, normaliser="other.v9"), "E515"),
        (lambda f: _edit_meta(f, fim_format="other fim.v9"), "E516"),
    ],
    ids=["no folder", "no config.json", "another normaliser", "another FIM layout"],
)
def test_a_folder_that_is_not_this_codes_model_is_a_numbered_error_at_every_command(folder, make, code, tmp_path):
    make(folder)
    gaps = tmp_path / "gaps.jsonl"
    row = {"id": "g", "source": "ddb", "doc": "d", "prefix": "και ", "suffix": " του", "target": "αβ", "hint": 2}
    gaps.write_text(json.dumps(row, ensure_ascii=False) + "\n")
    predict = ["predict", "--gaps", str(gaps), "--out", str(tmp_path / "p.jsonl")]
    for args in (["restore", "καὶ [.3] τοῦ θεοῦ"], predict):
        done = CliRunner().invoke(app, [*args, "--model", str(folder)])
        assert done.exit_code == 2 and done.output.startswith(f"error: [{code}]"), done.output
        assert str(folder) in done.output and "Traceback" not in done.output
    assert not list(tmp_path.glob("p.jsonl*"))  # the failed predict left no job files behind


def _edit_meta(folder: Path, **fields) -> None:
    meta = json.loads((folder / "apollo_restore.json").read_text())
    (folder / "apollo_restore.json").write_text(json.dumps({**meta, **fields}))
