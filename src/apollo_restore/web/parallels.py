"""Adapter from the text index (:mod:`apollo_restore.retrieve`) to what the web app needs:
``parallels(prefix, suffix, k) -> list[dict]``, one dict per reading found between the gap's
contexts (``between``, its edition form ``display``, ``count``, ``n_docs``, ``docs``, ``urls``,
``examples``), and
``provenance(text, min_run) -> dict`` (:func:`apollo_restore.retrieve.provenance.provenance`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from apollo_restore.data.orthography import EditionForms, default_forms
from apollo_restore.retrieve.index import ParallelIndex
from apollo_restore.retrieve.links import edition_url
from apollo_restore.retrieve.provenance import provenance


class IndexParallels:
    """Wraps an opened :class:`ParallelIndex`; ``forms`` gives readings their edition form
    (default: the package's table)."""

    def __init__(self, index: ParallelIndex, forms: EditionForms | None = None) -> None:
        self.index, self.forms = index, forms or default_forms()
        self._sources = dict(zip(index.doc_ids, index.doc_sources))  # document id → corpus

    @classmethod
    def open(cls, folder: str | Path | None = None, progress=None) -> IndexParallels:
        """Open an index folder (default: the one over the packaged text, built on first use).

        Raises:
            FileNotFoundError: no index there. ValueError: another format or normaliser.
        """
        return cls(ParallelIndex.open(folder, progress=progress) if folder else ParallelIndex.shared(progress=progress))

    def parallels(self, prefix: str, suffix: str, k: int) -> list[dict[str, Any]]:
        """Readings between the gap's contexts, each in edition form (``display``) with its
        documents' edition links (``urls``)."""
        out = []
        for group in self.index.gap_parallels(prefix, suffix, limit=k).groups:
            row = asdict(group)
            row["display"] = self.forms.display(group.between, prefix, suffix) if self.forms else group.between
            row["urls"] = [edition_url(d, self._sources.get(d, "")) for d in group.docs]
            out.append(row)
        return out

    def provenance(self, text: str, min_run: int) -> dict[str, Any]:
        """Training documents sharing runs of at least ``min_run`` letters with ``text``.

        Raises:
            ValueError: the text is shorter than ``min_run`` letters.
        """
        return provenance(text, self.index, min_run=min_run).to_dict()
