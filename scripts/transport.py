"""Pack a model folder's weights into parts of a bounded size, to carry them to a machine that
takes or gives back files only up to some size, and unpack them into a model folder again: the
tooling of ``scripts/gpu_train.sh`` (scripts/README.md), not part of the package.

    python scripts/transport.py pack FOLDER OUT [--form int8|bf16] [--part-mib 15]
    python scripts/transport.py unpack PACK OUT [--dtype float32|bfloat16]

    import transport                               # with scripts/ on sys.path
    transport.pack(Path("runs/gpu/best"), Path("upload/init"), form="int8")   # → transport.json + weights.part-000…
    transport.unpack_folder(Path("upload/init"), Path("data/gpu/init"))       # → a model folder, fp32 weights

:func:`pack` writes one safetensors file (the forms below; the folder's small files —
``config.json``, ``tokenizer.json``, ``apollo_restore.json``… — ride in its metadata), cut into
parts of at most ``part_bytes`` (default 15 MiB, from 16 KiB to 2 GiB, at most 4096 parts:
``E528``), and a manifest ``transport.json`` giving each part's size and SHA-256 and the whole
file's (:class:`Manifest`). :func:`unpack` reads the manifest (at most 1 MiB) through that schema,
checks every part's size against it before reading a byte of it, then its SHA-256
(``E523``–``E525``, naming the part), and returns fp32 tensors.

Nothing is destroyed: an output folder that is, holds or lies inside the folder read from, a file,
or a folder of other files is refused before anything is written (``E526``); a file name carried
must be a plain name (``E527``); output is written into a new folder beside it, renamed over it at
the end, removed on any failure. On the command line ``OUT`` is replaced whole, and only when all
went well; a numbered error (``E5xx``) goes to stderr with exit status 1, and nothing is written.

Forms:
    ``bf16``: every floating tensor in bfloat16 (2 bytes a weight). Exact for weights that are
        bf16 already (the shipped folders); fp32 master weights lose their low 16 bits.
    ``int8``: every 2-D floating tensor (d_out, d_in) as int8 per output row with one fp32 scale
        per row (symmetric, round to nearest: ``scale = max|row| / 127``, ``q = round(w / scale)``;
        the error of each weight is at most ``scale / 2``), about 1 byte a weight; other tensors
        (norms, biases) in bf16. Scales are stored as ``<name>.row_scale`` (d_out,) fp32.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shutil
import sys
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Literal

import torch
from pydantic import Field, ValidationInfo, field_validator
from safetensors import SafetensorError
from safetensors.torch import load, save

from apollo_restore.data.outputs import write_atomic
from apollo_restore.errors import ModelFolderError
from apollo_restore.model.verify import WEIGHTS_FILE, check_finite, read_json
from apollo_restore.schema.base import SchemaError, Settings, check, folder_error, text, whole

# -- the manifest, transport.json -------------------------------------------------------------
# A pack is one safetensors file of ``bytes`` bytes cut into ``parts`` files named
# ``weights.part-000``, ``weights.part-001``… in order; the manifest records each part's size and
# SHA-256 and the whole file's. Every number is bounded, so that a manifest read from a copied
# folder cannot ask for more memory or more files than a pack ever holds.

#: The ``format`` a manifest names.
FORMAT = "apollo-transport-1"
#: How the weights are stored (the module docstring's forms).
FORMS = ("int8", "bf16")
#: The most parts a pack is cut into.
MAX_PARTS = 4096
#: The fewest and most bytes of one part (16 KiB, 2 GiB).
MIN_PART_BYTES = 2**14
MAX_PART_BYTES = 2**31
#: The most bytes of a whole pack (64 GiB).
MAX_PACK_BYTES = 64 * 2**30
#: A part's file name: ``weights.part-`` and its 0-based index, 3 digits (4 beyond 999).
PART_NAME = r"^weights\.part-\d{3,4}$"
SHA256 = r"^[0-9a-f]{64}$"


def part_name(index: int) -> str:
    """The file name of the part at 0-based ``index`` (``weights.part-000``)."""
    return f"weights.part-{index:03d}"


class Part(Settings):
    """One part of the packed file.

    Attributes:
        name: its file name in the pack folder (``weights.part-NNN``).
        bytes: its size in bytes.
        sha256: the SHA-256 of its bytes, 64 lower-case hex digits.
    """

    name: text(17, "a part's file name, weights.part-NNN", pattern=PART_NAME)
    bytes: whole(1, MAX_PART_BYTES, "a part's size in bytes")
    sha256: text(64, "a part's SHA-256, 64 lower-case hex digits", pattern=SHA256)


class Manifest(Settings):
    """A pack's ``transport.json``.

    Attributes:
        format: :data:`FORMAT`.
        form: how the weights are stored (``int8`` or ``bf16``: :data:`FORMS`).
        bytes: the size of the whole packed file in bytes (the parts' sizes add up to it).
        sha256: the SHA-256 of the whole packed file.
        parts: 1 to :data:`MAX_PARTS` parts, named ``weights.part-000``, ``-001``… in order.
    """

    format: Literal[FORMAT]
    form: Literal[FORMS]
    bytes: whole(8, MAX_PACK_BYTES, "the packed file's size in bytes")
    sha256: text(64, "the packed file's SHA-256, 64 lower-case hex digits", pattern=SHA256)
    parts: Annotated[
        list[Part],
        Field(
            min_length=1,
            max_length=MAX_PARTS,
            description=(
                f"a list of 1 to {MAX_PARTS} parts named weights.part-000, weights.part-001, ... in order, "
                "whose bytes add up to the packed file's bytes"
            ),
        ),
    ]

    @field_validator("parts")
    @classmethod
    def _parts_in_order(cls, parts: list[Part], info: ValidationInfo) -> list[Part]:
        """The parts named in order from ``weights.part-000``, their sizes adding up to ``bytes``."""
        if any(p.name != part_name(i) for i, p in enumerate(parts)):
            raise ValueError("parts out of order")
        total = info.data.get("bytes")
        if total is not None and sum(p.bytes for p in parts) != total:
            raise ValueError("parts do not add up to bytes")
        return parts


# -- the numbered errors of a pack (the package's E5xx leave E523–E528 to this tool) -------------

MESSAGES = {
    "E523": (
        "[E523] {path} is missing: a transport pack is that manifest and the parts it names "
        "(weights.part-000, ...); copy the whole pack folder to {folder} again"
    ),
    "E524": (
        "[E524] {path} is missing: part {index} of {count} that {manifest} names; "
        "copy that part back (a pack's parts come back together), then unpack again"
    ),
    "E525": (
        "[E525] {path} has {found_bytes:,} bytes and SHA-256 {found}, but {manifest} records {bytes:,} "
        "bytes and {expected}: the part is damaged or belongs to another pack; copy it back again"
    ),
    "E526": (
        "[E526] will not write the {what} to {path}: {reason}; name a new folder, or one that holds an "
        "old {what}, outside {source}"
    ),
    "E527": (
        "[E527] {path}: the file name {name!r} {reason}; a pack carries only plain file names (no '/', "
        "'\\', '..', NUL, at most 255 bytes): give the file a plain name and pack the model folder again"
    ),
    "E528": (
        "[E528] cannot cut the pack {path} into parts of {size}: {reason}; give --part-mib from 1/64 "
        "(16 KiB) to 2048 (2 GiB), large enough for at most {max_parts:,} parts"
    ),
}


class PackError(ModelFolderError):
    """A pack that cannot be reassembled (``E523``–``E525``) or written where or as asked
    (``E526``–``E528``), naming its file; a :class:`~apollo_restore.errors.ModelFolderError`, as
    are the model folder's own refusals a pack passes on (``E505``, ``E506``, ``E514``, ``E518``).

    Attributes:
        code: the message code (``"E525"``).
        path: the file concerned.
    """

    def __init__(self, code: str, path: object, **fields: object) -> None:
        ValueError.__init__(self, MESSAGES[code].format(path=path, **fields))
        self.code, self.path = code, path


# -- packing and unpacking --------------------------------------------------------------------

MANIFEST = "transport.json"
PART_BYTES = 15 * 2**20
#: The most bytes of a manifest read (one a pack writes is a few hundred bytes a part).
MANIFEST_BYTES = 2**20
#: Bytes read at a time from a part.
CHUNK_BYTES = 2**20
#: The longest file name carried, in UTF-8 bytes (the common file systems' limit).
NAME_BYTES = 255
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
        ValueError: unknown form, or ``part_bytes`` not a whole number.
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


def _shown(name: str) -> str:
    """A file name cut for a message (at most 80 characters)."""
    return name if len(name) <= 80 else name[:79] + "…"


def name_problem(name: object) -> str | None:
    """Why ``name`` is no plain file name to write in a folder (``None`` when it is one): empty,
    longer than :data:`NAME_BYTES` bytes, ``.``, holding ``..``, a path separator (``/``, ``\\``),
    NUL or another control character."""
    if not isinstance(name, str) or not name:
        return "is empty"
    if len(name.encode("utf-8", "surrogatepass")) > NAME_BYTES:
        return f"is longer than {NAME_BYTES} bytes"
    if "/" in name or "\\" in name:
        return "holds a path separator"
    if name == "." or ".." in name:
        return "is '.' or holds '..'"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "holds NUL or another control character"
    return None


def _check_names(names: Iterable[str], where: object) -> None:
    """Refuse (``E527``, naming ``where``) the first of ``names`` that is no plain file name."""
    for name in names:
        problem = name_problem(name)
        if problem is not None:
            raise PackError("E527", where, name=_shown(name), reason=problem)


def _resolved(path: Path, what: str, source: Path | None) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links
        raise PackError(
            "E526", path, what=what, reason="its path does not resolve (a loop of links?)", source=source or "it"
        ) from None


def _check_out(source: Path | None, out: Path, what: str, markers: tuple[str, ...]) -> Path:
    """The resolved folder ``out`` to write the ``what`` to, refused (``E526``) when writing it
    would destroy what is read or kept: it is, lies inside or holds the folder ``source`` read
    from (compared resolved), it is a file, or it is a folder with files but none of ``markers``
    (so no old ``what`` that writing replaces whole)."""
    target = _resolved(out, what, source)
    reason = None
    if source is not None:
        origin = _resolved(source, what, source)
        if target == origin:
            reason = "it is the folder read from"
        elif origin in target.parents:
            reason = "it lies inside the folder read from"
        elif target in origin.parents:
            reason = "it holds the folder read from"
    if reason is None and target.exists() and not target.is_dir():
        reason = "it is a file, not a folder"
    elif reason is None and target.is_dir() and any(target.iterdir()):
        if not any(any(target.glob(marker)) for marker in markers):
            reason = f"it is a folder of other files (no {markers[0]}), which writing would replace whole"
    if reason is not None:
        raise PackError("E526", out, what=what, reason=reason, source=source if source is not None else out)
    return target


class _Beside:
    """A new folder beside ``target`` to write into, renamed over ``target`` by :meth:`done`;
    leaving the ``with`` block otherwise removes it, and the folders above ``target`` it created.
    A kill between the two renames of :meth:`done` leaves the old folder beside, hidden
    (``.NAME.XXXXXXXX.old``)."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.made = [p for p in target.parents if not p.exists()]  # nearest first
        self.tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")

    def __enter__(self) -> _Beside:
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.tmp.mkdir()
        return self

    def done(self) -> None:
        old = self.target.with_name(f".{self.target.name}.{uuid.uuid4().hex[:8]}.old")
        if self.target.exists() or self.target.is_symlink():
            self.target.rename(old)
            try:
                self.tmp.rename(self.target)
            except BaseException:
                old.rename(self.target)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            self.tmp.rename(self.target)

    def __exit__(self, kind: object, *rest: object) -> None:
        if kind is None:
            return
        shutil.rmtree(self.tmp, ignore_errors=True)
        for folder in self.made:
            try:
                folder.rmdir()
            except OSError:
                break


def part_bytes_of_mib(mib: float, out: object) -> int:
    """The part size in bytes of ``mib`` MiB (``--part-mib``), refused (``E528``, naming ``out``)
    when not finite or outside 1/64 MiB (:data:`MIN_PART_BYTES`) to 2048 MiB (:data:`MAX_PART_BYTES`)."""
    _check_part_bytes(mib * 2**20, f"{mib:g} MiB", out)
    return int(mib * 2**20)


def _check_part_bytes(size: float, shown: str, out: object) -> None:
    """Refuse (``E528``, naming ``out`` and ``shown``) a part size of ``size`` bytes that is not
    finite or lies outside :data:`MIN_PART_BYTES` to :data:`MAX_PART_BYTES`."""
    if not math.isfinite(size) or not MIN_PART_BYTES <= size <= MAX_PART_BYTES:
        raise PackError(
            "E528", out, size=shown, reason=f"a part is {MIN_PART_BYTES:,} to {MAX_PART_BYTES:,} bytes",
            max_parts=MAX_PARTS,
        )  # fmt: skip


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
    (written beside it first, then renamed over it): a kill leaves the old pack or the new one,
    a refusal or a failure leaves ``out`` as it was and nothing beside it.

    Args:
        part_bytes: the most bytes of a part, from :data:`MIN_PART_BYTES` (16 KiB) to
            :data:`MAX_PART_BYTES` (2 GiB), cutting the pack into at most :data:`MAX_PARTS` parts.
        files: small text files (name → text) to carry along; a model folder's own text files
            (:data:`TEXT_SUFFIXES`: its config, tokenizer, ``apollo_restore.json``, metrics) are
            taken by default. Names must be plain file names (:func:`name_problem`).

    Returns:
        The files written: the manifest, then the parts in order.

    Raises:
        ModelFolderError: before anything is written: ``out`` is, lies inside or holds the
            folder ``source``, is a file, or is a folder of other files (``E526``); a file name
            carried that is no plain file name (``E527``); ``part_bytes`` out of bounds, or too
            small for :data:`MAX_PARTS` parts (``E528``); no weights in the folder (``E514``),
            a broken weights file (``E506``), a text file that is not UTF-8 (``E505``), a weight
            that is NaN or infinite (``E518``: it would quantise to nonsense).
        ValueError: unknown form, or ``part_bytes`` not a whole number.
    """
    if form not in FORMS:
        raise ValueError(f"transport form must be one of {FORMS}, got {form!r}")
    if isinstance(part_bytes, bool) or not isinstance(part_bytes, int):
        raise ValueError(f"part_bytes must be a whole number of bytes, got {part_bytes!r}")
    _check_part_bytes(part_bytes, f"{part_bytes:,} bytes", out)
    folder = source if isinstance(source, Path) else None
    target = _check_out(folder, out, "pack", (MANIFEST, "weights.part-*"))
    if folder is not None:
        state, own = _folder_contents(folder)
        where: object = folder / WEIGHTS_FILE
    else:
        state, own, where = dict(source), {}, "the weights given"  # type: ignore[arg-type]
    carried = {**own, **(files or {})}
    _check_names(carried, folder if folder is not None else "the files given")
    check_finite(where, state)  # type: ignore[arg-type]
    metadata = {"format": FORMAT, "form": form}
    metadata.update({FILE_PREFIX + name: text for name, text in carried.items()})
    blob = save(encode(state, form), metadata=metadata)
    count = -(-len(blob) // part_bytes)
    if count > MAX_PARTS or len(blob) > MAX_PACK_BYTES:
        raise PackError(
            "E528", out, size=f"{part_bytes:,} bytes", max_parts=MAX_PARTS,
            reason=f"the pack is {len(blob):,} bytes, {count:,} parts of that size (at most {MAX_PACK_BYTES:,} bytes)",
        )  # fmt: skip
    view = memoryview(blob)
    parts = []
    with _Beside(target) as beside:
        tmp = beside.tmp
        for i, start in enumerate(range(0, len(blob), part_bytes)):
            chunk = view[start : start + part_bytes]
            write_atomic(tmp / part_name(i), chunk)
            parts.append({"name": part_name(i), "bytes": len(chunk), "sha256": _sha256(chunk)})
        manifest = {"format": FORMAT, "form": form, "bytes": len(blob), "sha256": _sha256(blob), "parts": parts}
        check(Manifest, manifest)  # what unpack will read
        write_atomic(tmp / MANIFEST, json.dumps(manifest, indent=1).encode())
        beside.done()
    return [out / MANIFEST] + [out / p["name"] for p in parts]


def _manifest(folder: Path) -> Manifest:
    """The manifest of the pack at ``folder``, read at most :data:`MANIFEST_BYTES` bytes and checked.

    Raises:
        ModelFolderError: no manifest (``E523``); larger than :data:`MANIFEST_BYTES` (``E505``);
            not UTF-8 or not JSON (``E503``), not an object (``E504``), nested deeper than the
            parser recurses (``E517``); a field the schema refuses (``E505``, ``E522``).
    """
    path = folder / MANIFEST
    if not path.is_file():
        raise PackError("E523", path, folder=folder)
    data = read_json(path, MANIFEST_BYTES)
    try:
        return check(Manifest, data)
    except SchemaError as err:
        raise folder_error(path, err) from None


def reassemble(folder: Path) -> bytes:
    """The packed safetensors file, its parts checked against the manifest one by one: every
    part's size (from the file system, before a byte is read), then its bytes, read
    :data:`CHUNK_BYTES` at a time.

    Raises:
        ModelFolderError: no manifest (``E523``), a part missing (``E524``) or not the bytes
            the manifest records (``E525``), each naming the part; a malformed manifest
            (``E503``–``E505``, ``E517``, ``E522``).
    """
    manifest = _manifest(folder)
    where = folder / MANIFEST
    paths = [folder / part.name for part in manifest.parts]
    for i, (path, part) in enumerate(zip(paths, manifest.parts, strict=True), 1):
        if not path.is_file():
            raise PackError("E524", path, index=i, count=len(paths), manifest=where)
        size = path.stat().st_size
        if size != part.bytes:
            raise PackError(
                "E525", path, found_bytes=size, found="(not read)", expected=f"{part.sha256[:16]}...",
                bytes=part.bytes, manifest=where,
            )  # fmt: skip
    chunks, whole = [], hashlib.sha256()
    for path, part in zip(paths, manifest.parts, strict=True):
        data, digest = _read_part(path, part.bytes)
        if len(data) != part.bytes or digest != part.sha256:
            raise PackError(
                "E525", path, found_bytes=len(data), found=f"{digest[:16]}...", expected=f"{part.sha256[:16]}...",
                bytes=part.bytes, manifest=where,
            )  # fmt: skip
        whole.update(data)
        chunks.append(data)
    if whole.hexdigest() != manifest.sha256:  # parts each intact but from two packs
        raise PackError(
            "E525", paths[-1], found_bytes=manifest.bytes, found=f"{whole.hexdigest()[:16]}...",
            expected=f"{manifest.sha256[:16]}...", bytes=manifest.bytes, manifest=where,
        )  # fmt: skip
    return b"".join(chunks)


def _read_part(path: Path, size: int) -> tuple[bytes, str]:
    """At most ``size + 1`` bytes of ``path`` (one more shows a part grown since its size was
    checked), read :data:`CHUNK_BYTES` at a time, and their SHA-256."""
    digest, pieces, left = hashlib.sha256(), [], size + 1
    with path.open("rb") as f:
        while left > 0:
            piece = f.read(min(CHUNK_BYTES, left))
            if not piece:
                break
            digest.update(piece)
            pieces.append(piece)
            left -= len(piece)
    return b"".join(pieces), digest.hexdigest()


def unpack(folder: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The fp32 weights and the small files of a pack written by :func:`pack`.

    Returns:
        ``(state, files)``: name → tensor (fp32 for floating weights), file name → text (plain
        file names; :data:`MANIFEST` and the weights file's name are left out).

    Raises:
        ModelFolderError: as :func:`reassemble`; ``E506`` when the checked bytes are no
            safetensors file or no tensors :func:`pack` writes (a pack written by other code);
            ``E527`` when a file carried has no plain file name.
    """
    blob = reassemble(folder)
    try:
        tensors = load(blob)
    except SafetensorError as exc:
        raise ModelFolderError("E506", folder / MANIFEST, reason=exc) from None
    header = json.loads(blob[8 : 8 + int.from_bytes(blob[:8], "little")])
    metadata = header.get("__metadata__") or {}
    files = {k[len(FILE_PREFIX) :]: v for k, v in metadata.items() if k.startswith(FILE_PREFIX)}
    _check_names(files, folder)
    try:
        state = decode(tensors)
    except (RuntimeError, IndexError) as exc:  # a scale of another shape than its rows
        raise ModelFolderError("E506", folder / MANIFEST, reason=str(exc)[:80]) from None
    return state, {k: v for k, v in files.items() if k not in (MANIFEST, WEIGHTS_FILE)}


def unpack_folder(folder: Path, out: Path, dtype: torch.dtype = torch.float32) -> Path:
    """Write the pack at ``folder`` as a model folder at ``out`` (weights in ``dtype``, its small
    files beside them), replacing ``out`` whole (written in a new folder beside it, then renamed
    over it). A refusal or a failure leaves ``out`` as it was and nothing beside it.

    Raises:
        ModelFolderError: before anything is written: ``out`` is, lies inside or holds the pack
            ``folder``, is a file, or is a folder of other files (``E526``); as :func:`unpack`.
    """
    from safetensors.torch import save_file

    target = _check_out(folder, out, "model folder", (WEIGHTS_FILE, "config.json"))
    state, files = unpack(folder)
    with _Beside(target) as beside:
        tmp = beside.tmp
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        weights = {k: (v.to(dtype) if v.is_floating_point() else v).contiguous() for k, v in state.items()}
        save_file(weights, str(tmp / WEIGHTS_FILE), metadata={"format": "pt"})
        if "config.json" in files:  # the folder's config says which dtype its weights are in
            try:
                config = json.loads(files["config.json"])
            except (ValueError, RecursionError):  # not JSON: left as it came, refused when loaded
                config = None
            if isinstance(config, dict) and "dtype" in config:
                config["dtype"] = str(dtype).removeprefix("torch.")
                (tmp / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        beside.done()
    return out


# -- the command line -------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` by default).

    Returns:
        The exit status: 0 done, 1 a numbered error or a file that cannot be read or written
        (on stderr), 2 a malformed command line (argparse).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("pack", help="model folder → manifest + parts")
    p.add_argument("folder", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--form", choices=FORMS, default="int8")
    p.add_argument("--part-mib", type=float, default=15.0, help="the most MiB of a part, from 1/64 to 2048")
    u = verbs.add_parser("unpack", help="manifest + parts → model folder")
    u.add_argument("pack", type=Path)
    u.add_argument("out", type=Path)
    u.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    args = parser.parse_args(argv)
    try:
        if args.verb == "pack":
            written = pack(args.folder, args.out, args.form, part_bytes_of_mib(args.part_mib, args.out))
            for path in written:
                print(f"{path}\t{path.stat().st_size:,} bytes")
        else:
            unpack_folder(args.pack, args.out, getattr(torch, args.dtype))
            print(args.out)
    except (ModelFolderError, OSError) as exc:  # PackError among them
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
