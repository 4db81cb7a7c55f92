"""The manifest of a transport pack (``transport.json``, :mod:`apollo_restore.model.transport`).

    from apollo_restore.schema.transport import Manifest
    manifest = check(Manifest, json.loads(text))        # SchemaError naming the refused field

A pack is one safetensors file of ``bytes`` bytes cut into ``parts`` files named
``weights.part-000``, ``weights.part-001``… in order; the manifest records each part's size and
SHA-256 and the whole file's. Every number is bounded, so that a manifest read from a copied
folder cannot ask for more memory or more files than a pack ever holds.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator

from apollo_restore.schema.base import Settings, text, whole

#: The ``format`` a manifest names.
FORMAT = "apollo-transport-1"
#: How the weights are stored (:mod:`apollo_restore.model.transport`'s forms).
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
        form: how the weights are stored (``int8`` or ``bf16``; the transport module's forms).
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
