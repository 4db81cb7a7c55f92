"""Adapter from the text index (:mod:`apollo_restore.retrieve`) to what the web app needs:
``parallels(request, gap, k) -> dict``, the parallels of one gap of a validated request as
:func:`apollo_restore.retrieve.gaps.text_parallels` gives them to the CLI too, and
``provenance(text, min_run) -> dict`` (:func:`apollo_restore.retrieve.provenance.provenance`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from apollo_restore.restoration.request import CheckedRequest
from apollo_restore.retrieve.gaps import text_parallels
from apollo_restore.retrieve.parallels import ParallelIndex
from apollo_restore.retrieve.provenance import provenance


class IndexParallels:
    """Wraps an opened :class:`ParallelIndex`."""

    def __init__(self, index: ParallelIndex) -> None:
        self.index = index

    @classmethod
    def open(cls, folder: str | Path | None = None, progress=None) -> IndexParallels:
        """Open an index folder (default: the one over the packaged text, built on first use).

        Raises:
            FileNotFoundError: no index there. ValueError: another format or normaliser.
        """
        return cls(ParallelIndex.open(folder, progress=progress) if folder else ParallelIndex.shared(progress=progress))

    def parallels(self, request: CheckedRequest, gap: int, k: int) -> dict[str, Any]:
        """The parallels of gap number ``gap`` (from 1) of a validated request, ``k`` readings
        at most (:meth:`~apollo_restore.retrieve.types.GapParallels.to_dict`)."""
        (found,) = text_parallels(self.index, request, [gap], limit=k)
        return found.to_dict()

    def provenance(self, text: str, min_run: int) -> dict[str, Any]:
        """Training documents sharing runs of at least ``min_run`` letters with ``text``.

        Raises:
            ValueError: the text is shorter than ``min_run`` letters.
        """
        return provenance(text, self.index, min_run=min_run).to_dict()
