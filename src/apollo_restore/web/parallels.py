"""Adapter from the parallel-passage index (:mod:`apollo_restore.retrieve`) to what the web app
needs: ``parallels(prefix, suffix, k) -> list[dict]``, one dict per reading found between the
gap's contexts (``between``, ``count``, ``n_docs``, ``docs``, ``examples``)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any


class IndexParallels:
    """Wraps an opened ``ParallelIndex``."""

    def __init__(self, index: Any) -> None:
        self.index = index

    @classmethod
    def open(cls, folder: str | Path | None = None, progress=None) -> "IndexParallels":
        """Open an index folder (default: the one over the packaged text, built on first use).

        Raises:
            FileNotFoundError: no index there. ValueError: another format or normaliser.
        """
        from apollo_restore.retrieve.index import ParallelIndex

        return cls(ParallelIndex.open(folder, progress=progress))

    def parallels(self, prefix: str, suffix: str, k: int) -> list[dict[str, Any]]:
        return [asdict(group) for group in self.index.gap_parallels(prefix, suffix, limit=k).groups]
