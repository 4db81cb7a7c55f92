"""Model folders verified on load: before any tensor is read, every JSON file parses to an
object (not nested deeper than the parser follows), ``config.json`` describes a decoder this
package runs, ``model.safetensors`` holds exactly the tensors that config needs, each of its
shape, and the tokenizer fits the model; once the weights are read, every one is finite.

The weights' layout is checked from the safetensors header alone (``safetensors.safe_open``
checks that the header is well formed and that its offsets cover the file exactly; a truncated,
empty or random file fails there): a few milliseconds at every load. Their values are checked by
:func:`check_finite` as they are loaded (about 8 ms for the shipped 10.3 M weights).

    files = read_folder_json(folder)             # file name → parsed object (E503–E505, E517), the
                                                 # config and the tokenizer's vocabulary checked
    check_weights(folder, files[CONFIG_FILE])    # E505–E511
    check_vocabulary(folder / TOKENIZER_FILE, len(tok), files[CONFIG_FILE])   # E512
    check_finite(folder / WEIGHTS_FILE, tensors)   # E518, once the weights are read

Any other folder of arrays (the attribution folder: :mod:`apollo_restore.attribution.folder`)
declares its tensors as :class:`TensorSpec` and is checked by the same two steps:

    found = read_header(path, most=MAX_BYTES)    # name → (shape, dtype), the header only (E220, E505, E506)
    check_tensors(path, found, specs, config)    # E508–E511: each declared tensor, its shape and type
    check_finite(path, arrays)                   # E518 (NumPy arrays or torch tensors)

Every failure is a :class:`~apollo_restore.errors.ModelFolderError` naming the file.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError, safe_open

from apollo_restore.data.normalise import GREEK_LETTERS, MIDDLE_DOT
from apollo_restore.errors import FileError, ModelFolderError
from apollo_restore.fim.tokenizer import SPECIAL_TOKENS, TOKENIZER_FILE
from apollo_restore.inputs import MAX_SETTINGS_BYTES, check_regular, read_regular
from apollo_restore.schema.base import SchemaError, check, folder_error
from apollo_restore.schema.folder import DecoderConfig

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
#: One decoder layer's tensors: the lean model's field → Hugging Face name after ``model.layers.{i}.``.
LAYER_TENSORS = {
    "q": "self_attn.q_proj.weight",
    "k": "self_attn.k_proj.weight",
    "v": "self_attn.v_proj.weight",
    "o": "self_attn.o_proj.weight",
    "gate": "mlp.gate_proj.weight",
    "up": "mlp.up_proj.weight",
    "down": "mlp.down_proj.weight",
    "input_norm": "input_layernorm.weight",
    "post_norm": "post_attention_layernorm.weight",
}
#: Architectures whose tensors :func:`expected_shapes` knows (the lean model runs them).
LEAN_MODEL_TYPES = ("mistral",)
#: The floating-point types a folder's weights may have (safetensors' names).
FLOAT_DTYPES = ("F16", "BF16", "F32", "F64")
_LAYER_PREFIX = "model.layers."
_SHOWN = 4  # tensor names listed in a message
MAX_JSON_BYTES = MAX_SETTINGS_BYTES


def read_json(path: Path, most: int = MAX_JSON_BYTES) -> dict[str, Any]:
    """A model folder's JSON file, which must be a regular file of at most ``most`` bytes
    (:func:`~apollo_restore.inputs.read_regular`: checked before it is opened) holding an object.

    Raises:
        ModelFolderError: ``E503`` (not UTF-8 or not JSON: line and column), ``E504`` (not an object),
            ``E517`` (nested deeper than the parser recurses), ``E505`` (more than ``most`` bytes).
        FileError: ``E220`` not a regular file (a folder, a FIFO, a device, a dangling link, a
            loop of links), ``E202`` unreadable.
        FileNotFoundError: no such file.
    """
    path = Path(path)
    raw = read_folder_file(path, most)
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ModelFolderError("E503", path, line=1, column=err.start + 1, reason="not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise ModelFolderError("E503", path, line=err.lineno, column=err.colno, reason=err.msg) from None
    except RecursionError:  # json's parser recurses once per level: a deep file is refused, not a crash
        raise ModelFolderError("E517", path, limit=sys.getrecursionlimit()) from None
    if not isinstance(data, dict):
        raise ModelFolderError("E504", path, found=f"a JSON {type(data).__name__}")
    return data


def read_folder_file(path: Path, most: int) -> bytes:
    """The bytes of a model folder's file, which must be a regular file of at most ``most`` bytes
    (:func:`~apollo_restore.inputs.read_regular`: checked before it is opened).

    Raises:
        ModelFolderError: ``E505`` more than ``most`` bytes.
        FileError: ``E220`` not a regular file, ``E202`` unreadable.
        FileNotFoundError: no such file.
    """
    try:
        return read_regular(path, most)
    except FileError as err:
        if err.code != "E204":
            raise
        raise ModelFolderError(
            "E505", path, field="the file", value=f"more than {most:,} bytes", expected=f"at most {most:,} bytes"
        ) from None


def read_folder_json(folder: Path) -> dict[str, dict[str, Any]]:
    """Every ``*.json`` entry of a model folder, parsed (file name → object) through :func:`read_json`
    (so a ``*.json`` that is a folder, a FIFO, a device or a dangling link is refused, never
    skipped), ``config.json`` checked with :func:`check_config` and ``tokenizer.json`` with
    :func:`check_tokenizer`.

    Raises:
        ModelFolderError: ``E503``–``E505`` naming the file.
        FileError: ``E220`` a ``*.json`` entry that is not a regular file.
    """
    files = {path.name: read_json(path) for path in sorted(Path(folder).glob("*.json"))}
    if CONFIG_FILE in files:
        check_config(files[CONFIG_FILE], Path(folder) / CONFIG_FILE, other_architectures=True)
    if TOKENIZER_FILE in files:
        check_tokenizer(files[TOKENIZER_FILE], Path(folder) / TOKENIZER_FILE)
    return files


def check_tokenizer(data: dict[str, Any], path: Path) -> None:
    """A ``tokenizer.json`` that :class:`~apollo_restore.fim.tokenizer.CharTokenizer` reads: a
    vocabulary ``model.vocab`` of token → id, the ids ``0 … n−1`` once each, holding the FIM
    control tokens and every character a restored middle may hold (letters, space, ``·``).

    Raises:
        ModelFolderError: ``E505`` naming the field and what it must be.
    """
    model = data.get("model")
    vocab = model.get("vocab") if isinstance(model, dict) else None
    if not isinstance(vocab, dict) or not vocab:
        shown = vocab if vocab is not None else model
        raise ModelFolderError("E505", path, field="model.vocab", value=shown, expected="an object of token → id")
    for token, i in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int):
            raise ModelFolderError("E505", path, field=f"model.vocab[{token!r}]", value=i, expected="a whole number")
    missing = [t for t in (*SPECIAL_TOKENS, *GREEK_LETTERS, " ", MIDDLE_DOT) if t not in vocab]
    if missing:
        raise ModelFolderError(
            "E505", path, field="model.vocab", value=f"{len(vocab)} tokens without {''.join(missing[:12])!r}",
            expected="a vocabulary with the FIM control tokens and every letter, space and '·'",
        )  # fmt: skip
    if sorted(vocab.values()) != list(range(len(vocab))):
        raise ModelFolderError(
            "E505", path, field="model.vocab", value=f"ids {min(vocab.values())}…{max(vocab.values())}",
            expected=f"the ids 0 to {len(vocab) - 1}, each once",
        )  # fmt: skip


@dataclass(frozen=True)
class Dims:
    """The sizes a decoder's ``config.json`` gives (all counts; ``head_dim`` in numbers per head)."""

    vocab: int
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    tied: bool


def check_config(config: dict[str, Any], path: Path, other_architectures: bool = False) -> Dims | None:
    """The sizes of a ``config.json`` the lean model runs, as the schema declares them
    (:class:`~apollo_restore.schema.folder.DecoderConfig`); with ``other_architectures``, ``None``
    for another architecture (which only ``transformers`` loads, and checks).

    Raises:
        ModelFolderError: ``E505`` naming the field and what it must be.
    """
    if other_architectures and config.get("model_type") not in LEAN_MODEL_TYPES:
        return None
    try:
        c = check(DecoderConfig, config)
    except SchemaError as err:
        raise folder_error(path, err) from None
    return Dims(
        c.vocab_size,
        c.hidden_size,
        c.intermediate_size,
        c.num_hidden_layers,
        c.num_attention_heads,
        c.num_key_value_heads,
        c.head_dim or c.hidden_size // c.num_attention_heads,
        c.tie_word_embeddings,
    )


def expected_shapes(dims: Dims) -> dict[str, tuple[int, ...]]:
    """Every tensor a Mistral decoder of these sizes needs (Hugging Face names) → its shape
    (``torch.nn.Linear`` layout, ``(out, in)``); ``lm_head.weight`` only when not tied."""
    h, q_out, kv_out = dims.hidden, dims.heads * dims.head_dim, dims.kv_heads * dims.head_dim
    layer = {
        "q": (q_out, h),
        "k": (kv_out, h),
        "v": (kv_out, h),
        "o": (h, q_out),
        "gate": (dims.intermediate, h),
        "up": (dims.intermediate, h),
        "down": (h, dims.intermediate),
        "input_norm": (h,),
        "post_norm": (h,),
    }
    shapes = {"model.embed_tokens.weight": (dims.vocab, h), "model.norm.weight": (h,)}
    if not dims.tied:
        shapes["lm_head.weight"] = (dims.vocab, h)
    for i in range(dims.layers):
        shapes.update({f"{_LAYER_PREFIX}{i}.{name}": layer[field] for field, name in LAYER_TENSORS.items()})
    return shapes


def check_weights(folder: Path, config: dict[str, Any], other_architectures: bool = False) -> None:
    """``model.safetensors`` is a whole safetensors file of floating-point tensors and holds
    exactly the tensors ``config`` needs (a tied head may also be stored), each of its shape;
    with ``other_architectures``, a config the lean model does not run is left to
    ``transformers``. Reads the header only.

    Raises:
        FileNotFoundError: no weights file.
        ModelFolderError: ``E505``–``E511`` naming the file.
    """
    folder = Path(folder)
    path, config_path = folder / WEIGHTS_FILE, folder / CONFIG_FILE
    if not os.path.lexists(path):
        raise FileNotFoundError(f"no model weights at {path}")
    header = read_header(path)
    shapes = {name: shape for name, (shape, _) in header.items()}
    dtypes = {name: dtype for name, (_, dtype) in header.items()}
    for name, dtype in dtypes.items():
        if dtype not in FLOAT_DTYPES:
            raise ModelFolderError(
                "E511", path, name=name, dtype=dtype, expected="a model's weights are floating-point numbers"
            )
    dims = check_config(config, config_path, other_architectures)
    if dims is None:
        return
    layers = {int(n.split(".")[2]) for n in shapes if n.startswith(_LAYER_PREFIX) and n.split(".")[2].isdecimal()}
    if layers and dims.layers != max(layers) + 1:
        raise ModelFolderError("E507", path, config=config_path, wanted=dims.layers, found=max(layers) + 1)
    wanted = expected_shapes(dims)
    missing = [name for name in wanted if name not in shapes]
    if missing:
        raise ModelFolderError("E508", path, config=config_path, n=len(missing), names=_names(missing))
    unused = [name for name in shapes if name not in wanted and not (dims.tied and name == "lm_head.weight")]
    if unused:
        raise ModelFolderError("E510", path, config=config_path, n=len(unused), names=_names(unused))
    if dims.tied and "lm_head.weight" in shapes:
        wanted["lm_head.weight"] = wanted["model.embed_tokens.weight"]
    for name, shape in wanted.items():  # in the config's order: the first layer's query first
        if shapes[name] != shape:
            raise ModelFolderError("E509", path, config=config_path, name=name, found=shapes[name], expected=shape)


@dataclass(frozen=True)
class TensorSpec:
    """What a folder declares of one tensor: its ``shape`` and the safetensors types it may have
    (``"F32"``, ``"I8"``...), ``dtypes`` said in words in a refusal (``what``)."""

    shape: tuple[int, ...]
    dtypes: frozenset[str]
    what: str = ""

    @classmethod
    def of(cls, shape: tuple[int, ...], *dtypes: str) -> TensorSpec:
        return cls(tuple(shape), frozenset(dtypes), " or ".join(dtypes))


def read_header(path: Path, most: int | None = None) -> dict[str, tuple[tuple[int, ...], str]]:
    """Every tensor of a safetensors file → ``(shape, dtype)``, from its header alone, once the
    file is known to be a regular file (of at most ``most`` bytes). ``safe_open`` checks the
    header is well formed and that its offsets cover the file exactly: a truncated, empty or
    random file, or one whose header claims 2⁶² bytes, fails there.

    Raises:
        FileNotFoundError: nothing at ``path``.
        FileError: ``E220`` not a regular file (a folder, a FIFO or ``/dev/zero`` is never mapped).
        ModelFolderError: ``E506`` not a safetensors file; ``E505`` more than ``most`` bytes.
    """
    size = check_regular(path).st_size
    if most is not None and size > most:
        raise ModelFolderError(
            "E505", path, field="the file", value=f"{size:,} bytes", expected=f"at most {most:,} bytes"
        )
    try:
        with safe_open(str(path), framework="numpy") as weights:
            found = {name: weights.get_slice(name) for name in weights.keys()}
            return {name: (tuple(s.get_shape()), s.get_dtype()) for name, s in found.items()}
    except SafetensorError as err:
        raise ModelFolderError("E506", path, reason=str(err)) from None


def check_tensors(
    path: Path, found: Mapping[str, tuple[tuple[int, ...], str]], wanted: Mapping[str, TensorSpec], config: object
) -> None:
    """The tensors ``found`` (:func:`read_header`) are exactly those ``wanted`` (what ``config``,
    the file that declares them, needs), each of its shape and of one of its types; in
    ``wanted``'s order, so the first refused is named.

    Raises:
        ModelFolderError: ``E508`` missing tensors, ``E510`` tensors not declared, ``E509`` a
            shape, ``E511`` a type.
    """
    missing = [name for name in wanted if name not in found]
    if missing:
        raise ModelFolderError("E508", path, config=config, n=len(missing), names=_names(missing))
    unused = [name for name in found if name not in wanted]
    if unused:
        raise ModelFolderError("E510", path, config=config, n=len(unused), names=_names(unused))
    for name, spec in wanted.items():
        shape, dtype = found[name]
        if shape != spec.shape:
            raise ModelFolderError("E509", path, config=config, name=name, found=shape, expected=spec.shape)
        if dtype not in spec.dtypes:
            raise ModelFolderError("E511", path, name=name, dtype=dtype, expected=f"{config} needs {spec.what}")


def check_finite(path: Path, tensors: Mapping[str, Any]) -> None:
    """Every number of every tensor (name → ``torch.Tensor``) is finite: one NaN or infinity in a
    weight makes every score NaN (readings in no order, probabilities NaN). A tensor's sum is
    finite when all its numbers are (a NaN or an infinity carries through a sum); only when it is
    not are the numbers counted one by one (``torch.isfinite``), so a sum that overflows from
    finite numbers is no false alarm. About 8 ms for the shipped model's 10.3 M weights on one CPU
    core (``torch.isfinite(t).all()`` on every tensor takes 70 ms).

    NumPy arrays (a folder read without torch) are checked alike, summed in float64 (a float16
    sum would overflow).

    Raises:
        ModelFolderError: ``E518`` naming the file, the first damaged tensor and how many values.
    """
    if all(isinstance(t, np.ndarray) for t in tensors.values()):
        for name, array in tensors.items():
            if array.dtype.kind == "f" and not np.isfinite(array.sum(dtype=np.float64)):
                bad = int(np.count_nonzero(~np.isfinite(array)))
                if bad:
                    raise ModelFolderError("E518", path, name=name, count=bad)
        return
    import torch  # only loading weights needs it; this module is read by commands that load none

    for name, tensor in tensors.items():
        if not tensor.is_floating_point() or bool(torch.isfinite(tensor.sum())):
            continue
        bad = int((~torch.isfinite(tensor)).sum())
        if bad:
            raise ModelFolderError("E518", path, name=name, count=bad)


def _names(names: list[str]) -> str:
    """The first few of a list of tensor names, and how many more."""
    more = len(names) - _SHOWN
    return ", ".join(names[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


def check_vocabulary(path: Path, tokens: int, config: dict[str, Any]) -> None:
    """The tokenizer at ``path`` (``tokens`` ids) fits the model's ``vocab_size`` rows.

    Raises:
        ModelFolderError: ``E512``.
    """
    vocab = config.get("vocab_size")
    if isinstance(vocab, int) and tokens > vocab:
        config_path = Path(path).parent / CONFIG_FILE
        raise ModelFolderError("E512", path, tokens=tokens, config=config_path, vocab=vocab)
