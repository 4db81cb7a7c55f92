"""A model folder's weights in a compact form that travels in parts, and back.

    from apollo_restore.model.transport import pack, unpack_folder
    pack(Path("runs/gpu/best"), Path("upload/init"), form="int8")   # → transport.json + weights.part-000…
    unpack_folder(Path("upload/init"), Path("data/gpu/init"))       # → a model folder, fp32 weights

The GPU machine is reached by copying the working tree (at most 64 MiB carried per call) and its
files come back at most 16 MiB each, 8 a call. :func:`pack` writes one safetensors file (the
forms below; the folder's small files — ``config.json``, ``tokenizer.json``,
``apollo_restore.json``… — ride in its metadata), cut into parts of at most ``part_bytes``
(default 15 MiB), and a manifest ``transport.json`` giving each part's size and SHA-256 and the
whole file's. :func:`unpack` checks every part against the manifest before reading a byte of it
(``E523``–``E525``, naming the part) and returns fp32 tensors.

Forms:
    ``bf16``: every floating tensor in bfloat16 (2 bytes a weight). Exact for weights that are
        bf16 already (the shipped folders); fp32 master weights lose their low 16 bits.
    ``int8``: every 2-D floating tensor (d_out, d_in) as int8 per output row with one fp32 scale
        per row (symmetric, round to nearest: ``scale = max|row| / 127``, ``q = round(w / scale)``;
        the error of each weight is at most ``scale / 2``), about 1 byte a weight; other tensors
        (norms, biases) in bf16. Scales are stored as ``<name>.row_scale`` (d_out,) fp32.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load, save

from apollo_restore.data.outputs import write_atomic
from apollo_restore.errors import ModelFolderError
from apollo_restore.model.checkpoint import swap_in
from apollo_restore.model.verify import WEIGHTS_FILE, check_finite

FORMAT = "apollo-transport-1"
FORMS = ("int8", "bf16")
MANIFEST = "transport.json"
PART_BYTES = 15 * 2**20
SCALE_SUFFIX = ".row_scale"
FILE_PREFIX = "file:"
#: the small files of a model folder carried in the metadata: its text files, by suffix
TEXT_SUFFIXES = (".json", ".jsonl", ".txt", ".md", ".yaml")


def quantise_rows(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 per output row, round to nearest.

    Args:
        weight: (d_out, d_in) floating.

    Returns:
        ``(q, scale)``: q (d_out, d_in) int8 in [-127, 127], scale (d_out,) fp32 with
        ``weight ≈ q * scale[:, None]`` to within ``scale / 2`` per weight (an all-zero row gets
        scale 1 and q 0).
    """
    w = weight.detach().float()
    amax = w.abs().amax(dim=1)
    scale = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))
    q = torch.round(w / scale[:, None]).clamp_(-127, 127).to(torch.int8)
    return q, scale


def encode(state: Mapping[str, torch.Tensor], form: str = "int8") -> dict[str, torch.Tensor]:
    """The transport tensors of a state dict (name → tensor) in ``form`` (module docstring).

    Raises:
        ValueError: unknown form.
    """
    if form not in FORMS:
        raise ValueError(f"transport form must be one of {FORMS}, got {form!r}")
    out: dict[str, torch.Tensor] = {}
    for name, tensor in state.items():
        t = tensor.detach().cpu()
        if not t.is_floating_point():
            out[name] = t.contiguous()
        elif form == "int8" and t.dim() == 2:
            out[name], out[name + SCALE_SUFFIX] = quantise_rows(t)
        else:
            out[name] = t.to(torch.bfloat16).contiguous()
    return out


def decode(tensors: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Back from :func:`encode`: every floating weight in fp32 (int8 rows times their scale)."""
    out: dict[str, torch.Tensor] = {}
    for name, t in tensors.items():
        if name.endswith(SCALE_SUFFIX):
            continue
        scale = tensors.get(name + SCALE_SUFFIX)
        if scale is not None:
            out[name] = t.float() * scale.float()[:, None]
        else:
            out[name] = t.float() if t.is_floating_point() else t
    return out


def _sha256(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()


def _folder_contents(folder: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The weights of a model folder and its small text files (name → text)."""
    from safetensors.torch import load_file

    path = folder / WEIGHTS_FILE
    if not path.is_file():
        raise ModelFolderError("E514", path, folder=folder, file=WEIGHTS_FILE)
    try:
        state = load_file(str(path))
    except SafetensorError as exc:
        raise ModelFolderError("E506", path, reason=exc) from None
    files = {}
    for item in sorted(folder.iterdir()):
        if item.is_file() and item.suffix in TEXT_SUFFIXES:
            try:
                files[item.name] = item.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise ModelFolderError(
                    "E505", item, field="the file", value=str(exc)[:80], expected="UTF-8 text"
                ) from None
    return state, files


def pack(
    source: Path | Mapping[str, torch.Tensor],
    out: Path,
    form: str = "int8",
    part_bytes: int = PART_BYTES,
    files: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write ``source`` (a model folder, or a state dict name → tensor) to the folder ``out`` as
    :data:`MANIFEST` and parts of at most ``part_bytes`` bytes each. ``out`` is replaced whole
    (written beside it first, then renamed over it): a kill leaves the old pack or the new one.

    Args:
        files: small text files (name → text) to carry along; a model folder's own text files
            (:data:`TEXT_SUFFIXES`: its config, tokenizer, ``apollo_restore.json``, metrics) are
            taken by default.

    Returns:
        The files written: the manifest, then the parts in order.

    Raises:
        ModelFolderError: no weights in the folder (``E514``), a broken weights file (``E506``),
            a text file that is not UTF-8 (``E505``), a weight that is NaN or infinite (``E518``:
            it would quantise to nonsense).
        ValueError: unknown form, or ``part_bytes`` < 1.
    """
    if part_bytes < 1:
        raise ValueError(f"part_bytes must be at least 1, got {part_bytes}")
    if isinstance(source, Path):
        state, own = _folder_contents(source)
        where: object = source / WEIGHTS_FILE
    else:
        state, own, where = dict(source), {}, "the weights given"
    check_finite(where, state)  # type: ignore[arg-type]
    metadata = {"format": FORMAT, "form": form}
    metadata.update({FILE_PREFIX + name: text for name, text in {**own, **(files or {})}.items()})
    blob = save(encode(state, form), metadata=metadata)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    view = memoryview(blob)
    parts = []
    for i, start in enumerate(range(0, max(len(blob), 1), part_bytes)):
        chunk = view[start : start + part_bytes]
        name = f"weights.part-{i:03d}"
        write_atomic(tmp / name, chunk)
        parts.append({"name": name, "bytes": len(chunk), "sha256": _sha256(chunk)})
    manifest = {"format": FORMAT, "form": form, "bytes": len(blob), "sha256": _sha256(blob), "parts": parts}
    write_atomic(tmp / MANIFEST, json.dumps(manifest, indent=1).encode())
    swap_in(tmp, out)
    return [out / MANIFEST] + [out / p["name"] for p in parts]


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise ModelFolderError("E523", path, folder=folder)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFolderError(
            "E505", path, field="the file", value=str(exc)[:80], expected="the JSON pack writes"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise ModelFolderError("E505", path, field="format", value=found, expected=repr(FORMAT))
    parts = manifest.get("parts")
    if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts):
        raise ModelFolderError("E505", path, field="parts", value=parts, expected="a list of the parts written")
    for p in parts:
        name = p.get("name")
        if not isinstance(name, str) or Path(name).name != name or not name.startswith("weights.part-"):
            raise ModelFolderError("E505", path, field="a part's name", value=name, expected="weights.part-NNN")
        if not isinstance(p.get("bytes"), int) or not isinstance(p.get("sha256"), str):
            raise ModelFolderError(
                "E505", path, field=f"{name}'s bytes and sha256", value=p, expected="a count and a hex digest"
            )
    if not isinstance(manifest.get("bytes"), int) or not isinstance(manifest.get("sha256"), str):
        raise ModelFolderError("E505", path, field="bytes and sha256", value=None, expected="a count and a hex digest")
    return manifest


def reassemble(folder: Path) -> bytes:
    """The packed safetensors file, its parts checked against the manifest one by one.

    Raises:
        ModelFolderError: no manifest (``E523``), a part missing (``E524``) or not the bytes
            the manifest records (``E525``), each naming the part; a malformed manifest (``E505``).
    """
    manifest = _manifest(folder)
    parts, chunks = manifest["parts"], []
    for i, part in enumerate(parts, 1):
        path = folder / part["name"]
        if not path.is_file():
            raise ModelFolderError("E524", path, index=i, count=len(parts), manifest=folder / MANIFEST)
        data = path.read_bytes()
        found = _sha256(data)
        if len(data) != part.get("bytes") or found != part.get("sha256"):
            raise ModelFolderError(
                "E525", path, found_bytes=len(data), found=found[:16], expected=str(part.get("sha256"))[:16],
                bytes=part.get("bytes"), manifest=folder / MANIFEST,
            )  # fmt: skip
        chunks.append(data)
    blob = b"".join(chunks)
    if _sha256(blob) != manifest.get("sha256"):  # parts each intact but from two packs
        raise ModelFolderError(
            "E525", folder / parts[-1]["name"], found_bytes=len(blob), found=_sha256(blob)[:16],
            expected=str(manifest.get("sha256"))[:16], bytes=manifest.get("bytes"), manifest=folder / MANIFEST,
        )  # fmt: skip
    return blob


def unpack(folder: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The fp32 weights and the small files of a pack written by :func:`pack`.

    Returns:
        ``(state, files)``: name → tensor (fp32 for floating weights), file name → text.

    Raises:
        ModelFolderError: as :func:`reassemble`; ``E506`` when the checked bytes are no
            safetensors file (a pack written by other code).
    """
    blob = reassemble(folder)
    try:
        tensors = load(blob)
    except SafetensorError as exc:
        raise ModelFolderError("E506", folder / MANIFEST, reason=exc) from None
    header = json.loads(blob[8 : 8 + int.from_bytes(blob[:8], "little")])
    metadata = header.get("__metadata__", {})
    files = {k[len(FILE_PREFIX) :]: v for k, v in metadata.items() if k.startswith(FILE_PREFIX)}
    return decode(tensors), files


def unpack_folder(folder: Path, out: Path, dtype: torch.dtype = torch.float32) -> Path:
    """Write the pack at ``folder`` as a model folder at ``out`` (weights in ``dtype``, its small
    files beside them), replacing ``out`` whole (written beside it, then renamed over it).

    Raises:
        ModelFolderError: as :func:`unpack`.
    """
    from safetensors.torch import save_file

    state, files = unpack(folder)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, text in files.items():
        if Path(name).name == name and name not in (MANIFEST, WEIGHTS_FILE):
            (tmp / name).write_text(text, encoding="utf-8")
    weights = {k: (v.to(dtype) if v.is_floating_point() else v).contiguous() for k, v in state.items()}
    save_file(weights, str(tmp / WEIGHTS_FILE), metadata={"format": "pt"})
    if (tmp / "config.json").is_file():  # the folder's config says which dtype its weights are in
        config = json.loads((tmp / "config.json").read_text(encoding="utf-8"))
        if isinstance(config, dict) and "dtype" in config:
            config["dtype"] = str(dtype).removeprefix("torch.")
            (tmp / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    swap_in(tmp, out)
    return out
