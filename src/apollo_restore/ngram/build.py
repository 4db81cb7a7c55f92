"""Build an n-gram model from a prepared corpus (the command: ``apollo-restore ngram``).

model = build_from_prepared(Path("data/prepared"), ["ddb"], order=8)
model.save(Path("ddb-8.npz"))
"""

from __future__ import annotations

from pathlib import Path

from apollo_restore.data.table import load_documents
from apollo_restore.ngram.model import NgramModel


def build_from_prepared(
    prepared: Path,
    sources: list[str] | None,
    order: int = 8,
    min_count: int = 1,
    split: str = "train",
    backward: bool = False,
) -> NgramModel:
    """An :class:`NgramModel` over the ``text`` column of one split of ``documents.parquet``;
    ``backward`` counts the texts reversed (a right-to-left model, see
    :class:`~apollo_restore.restoration.members.ngram.ReversedRestorer`)."""
    table = load_documents(Path(prepared), split=split, sources=sources or None)
    texts = table["text"].to_pylist()
    model = NgramModel.build([t[::-1] for t in texts] if backward else texts, order=order, min_count=min_count)
    model.meta["direction"] = "backward" if backward else "forward"
    return model
