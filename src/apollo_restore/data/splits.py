"""Deterministic document-level splits (docs/design.md, *Splits*): 90% train, 5% validation, 5% test.

The split of a document depends only on its source and group key (the Trismegistos id where
known, so editions of one text stay together), hashed with SHA-1: re-running gives the same
split, on any machine, whatever order the documents come in.
"""

from __future__ import annotations

import hashlib

SPLITS = ("train", "validation", "test")
SPLITTER = "apollo_restore split.v1"


def split_of(group: str, train: int = 90, validation: int = 5) -> str:
    """The split of a document group, by percentage buckets of its SHA-1 hash.

    Args:
        group: the document's group key (see :attr:`~apollo_restore.data.document.Document.group`).
        train: percentage for training; ``validation`` likewise; the rest is test.
    """
    bucket = int.from_bytes(hashlib.sha1(group.encode("utf-8")).digest()[:8], "big") % 100
    if bucket < train:
        return "train"
    if bucket < train + validation:
        return "validation"
    return "test"
