"""FIM training data as streaming Parquet shards: export once, read from every rank and worker.

    apollo-restore shards --prepared data/prepared --out data/shards/mistral \\
        --tokenizer /models/Mistral-Small-24B-Base-2503 --rows 160000 --block-size 4096

Export: rows of packed FIM examples (the paper's gap/hint recipe, sources ∝ letters × weight)
are sampled and tokenised *once*, by :class:`~apollo_restore.fim.hf_format.HfFimPacker`, and
written as ``shard-00000.parquet`` … (columns ``input_ids``, ``labels``: ``list<int32>`` of
``block_size``), ``rows_per_shard`` rows each, in small row groups. ``manifest.json`` names
the format (:data:`SHARD_FORMAT`), tokenizer and its control-token ids, FIM layout, gap
sampler, normaliser, seed, split and weights, and lists the shards; the tokenizer itself is
saved in ``tokenizer/`` beside them. The manifest is written last, so a folder with one is
complete. Row ``i`` depends only on (seed, i): re-exporting gives the same rows.

Read: :class:`ShardReader` is a ``torch.utils.data.IterableDataset``. Rank ``r`` of ``W`` owns
the contiguous rows ``[r·M, (r+1)·M)`` with ``M = rows // W`` (the remainder is left out, so
every rank takes the same number of steps); inside a rank, blocks of ``batch_size`` rows go to
the DataLoader workers in turn, which is exactly the order in which the DataLoader hands
batches back. The data position is therefore one number, the rows a rank has consumed;
:class:`ShardLoader` counts it and resumes from it (``state_dict`` / ``load_state_dict``).

Why Parquet read with ``pyarrow`` and not MosaicML ``streaming`` (MDS, which the paper used):
its current release pins ``transformers<5``, ``numpy<2.2`` and pulls ``torchvision``, which
clash with this stack. ``pyarrow`` is already a dependency, reads row groups without loading
a whole shard, and the files open in ``datasets``, pandas, DuckDB or Spark for inspection.
HF ``datasets`` streaming would also read them, but its shard-per-worker split works at file
granularity and cannot resume at an exact row, so the slicing here is done directly. For
object stores, mount the bucket (e.g. ``s3fs``/``gcsfuse``) or copy shards to local disk first.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from tqdm.auto import tqdm

from apollo_restore.data.normalise import NORMALISER
from apollo_restore.data.table import load_documents
from apollo_restore.fim.dataset import Corpus
from apollo_restore.fim.examples import DEFAULT_FIM_CONFIG, GAP_SAMPLER, FimConfig
from apollo_restore.fim.hf_format import HfFim, HfFimPacker, load_tokenizer
from apollo_restore.fim.layout import SPM_V1
from apollo_restore.schema.training import SOURCE_WEIGHTS

log = logging.getLogger(__name__)

SHARD_FORMAT = "apollo_restore shards.parquet.v1"
MANIFEST_FILE = "manifest.json"
TOKENIZER_DIR = "tokenizer"
_SCHEMA = pa.schema([("input_ids", pa.list_(pa.int32())), ("labels", pa.list_(pa.int32()))])


def export_shards(
    prepared: Path,
    out: Path,
    tokenizer: str = "char",
    rows: int = 1024,
    block_size: int = 4096,
    rows_per_shard: int = 4096,
    row_group_size: int = 64,
    split: str = "train",
    seed: int = 0,
    weights: dict[str, float] | None = None,
    fim: FimConfig = DEFAULT_FIM_CONFIG,
    text_column: str = "text",
    progress: bool = True,
) -> dict[str, Any]:
    """Write ``rows`` packed FIM rows from a prepared folder as Parquet shards (module docstring).

    Args:
        prepared: folder written by ``apollo-restore prepare``.
        out: shard folder (created; an existing manifest is replaced at the end).
        tokenizer: ``"char"`` or a local tokenizer/model folder.
        rows: rows in all; for a run of ``S`` steps with global batch ``G`` rows, ``S × G``
            rows is one pass with no repetition.
        block_size: tokens per row.
        rows_per_shard, row_group_size: file and row-group sizes (rows).
        split: which split of the prepared documents.
        weights: source → sampling weight on letter counts (paper: documentary papyri 3×).
        fim: the gap/hint recipe (``loss="middle"`` for fine-tuning a pretrained model).
        text_column: ``text`` (uncertain-included) or ``text_uncertain_excluded``.

    Returns:
        The manifest (also written to ``out/manifest.json``).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    weights = dict(SOURCE_WEIGHTS if weights is None else weights)
    table = load_documents(Path(prepared), split=split)
    corpus = Corpus(table.column(text_column).to_pylist(), table.column("source").to_pylist(), weights)
    hf_tok = load_tokenizer(tokenizer)
    encoder = HfFim(hf_tok)
    packer = HfFimPacker(corpus, encoder, fim, block_size, seed=seed)
    hf_tok.save_pretrained(str(out / TOKENIZER_DIR))
    shards = []
    labelled = tokens = 0
    bar = tqdm(total=rows, desc="export shards", unit="row", disable=not progress)
    for index, start in enumerate(range(0, rows, rows_per_shard)):
        ids_rows, label_rows = [], []
        for i in range(start, min(rows, start + rows_per_shard)):
            ids, labels = packer.row(i)
            ids_rows.append(ids)
            label_rows.append(labels)
            labelled += sum(1 for x in labels if x >= 0)
            tokens += sum(1 for x in ids if x != encoder.pad_id)
            bar.update(1)
        name = f"shard-{index:05d}.parquet"
        tmp = out / (name + ".tmp")
        pq.write_table(
            pa.Table.from_pydict({"input_ids": ids_rows, "labels": label_rows}, schema=_SCHEMA),
            tmp,
            row_group_size=row_group_size,
            compression="zstd",
        )
        os.replace(tmp, out / name)
        shards.append({"file": name, "rows": len(ids_rows)})
    bar.close()
    manifest = {
        "format": SHARD_FORMAT,
        "fim_format": SPM_V1.name,
        "gap_sampler": GAP_SAMPLER,
        "normaliser": NORMALISER,
        "tokenizer": {"source": tokenizer, "dir": TOKENIZER_DIR, **encoder.describe()},
        "prepared": str(prepared),
        "split": split,
        "text_column": text_column,
        "weights": weights,
        "fim": asdict(fim),
        "seed": seed,
        "block_size": block_size,
        "rows": rows,
        "rows_per_shard": rows_per_shard,
        "tokens": tokens,
        "labelled_tokens": labelled,
        "shards": shards,
    }
    tmp = out / (MANIFEST_FILE + ".tmp")
    tmp.write_text(json.dumps(manifest, ensure_ascii=False, indent=1))
    os.replace(tmp, out / MANIFEST_FILE)
    log.info("wrote %d rows (%d tokens, %d labelled) in %d shards to %s", rows, tokens, labelled, len(shards), out)
    return manifest


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of a shard folder.

    Raises:
        FileNotFoundError: no manifest (the export did not finish).
        ValueError: another shard format, FIM layout or normaliser than this code's.
    """
    path = Path(folder) / MANIFEST_FILE
    if not path.exists():
        raise FileNotFoundError(f"no {MANIFEST_FILE} in {folder}: export shards first (or the export did not finish)")
    manifest = json.loads(path.read_text())
    for key, expected in (("format", SHARD_FORMAT), ("fim_format", SPM_V1.name), ("normaliser", NORMALISER)):
        if manifest.get(key) != expected:
            raise ValueError(f"{folder} has {key} {manifest.get(key)!r}; this code reads {expected!r}")
    return manifest


class ShardReader(torch.utils.data.IterableDataset):
    """Rows of a shard folder for one rank; each DataLoader worker reads its own blocks.

    Args:
        folder: shard folder.
        rank, world_size: this process and how many read the shards.
        batch_size: rows per batch (the DataLoader's ``batch_size``): the unit handed to workers.
        epochs: passes over the rank's rows (``None``: forever).
        start_row: rank-local rows already consumed (resume point).

    Yields:
        ``{"input_ids": (T,) int64, "labels": (T,) int64, "row": global row index}``.
    """

    def __init__(
        self,
        folder: Path,
        rank: int = 0,
        world_size: int = 1,
        batch_size: int = 1,
        epochs: int | None = 1,
        start_row: int = 0,
    ):
        super().__init__()
        self.folder = Path(folder)
        self.manifest = read_manifest(self.folder)
        self.rank, self.world_size, self.batch_size = rank, world_size, batch_size
        self.epochs, self.start_row = epochs, start_row
        self.rows_per_rank = self.manifest["rows"] // world_size
        if self.rows_per_rank < 1:
            raise ValueError(f"{folder} has {self.manifest['rows']} rows, fewer than the {world_size} ranks")
        self._files = [self.folder / s["file"] for s in self.manifest["shards"]]
        self._shard_start = np.cumsum([0] + [s["rows"] for s in self.manifest["shards"]])
        self._groups: dict[int, np.ndarray] = {}  # shard → row-group start offsets (lazily read)
        self._cache: tuple[tuple[int, int], np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        """Rows left to yield in this rank (all workers together); ``0`` when unbounded."""
        return 0 if self.epochs is None else max(0, self.rows_per_rank * self.epochs - self.start_row)

    def local_rows(self, worker: int = 0, num_workers: int = 1) -> Iterator[int]:
        """Rank-local row numbers (``0 .. M·epochs``) that ``worker`` yields, in order."""
        end = math.inf if self.epochs is None else self.rows_per_rank * self.epochs
        block = worker
        while True:
            first = self.start_row + block * self.batch_size
            if first >= end:
                return
            yield from range(first, int(min(first + self.batch_size, end)))
            block += num_workers

    def global_row(self, local: int) -> int:
        """Global row index of a rank-local row number (epochs wrap around)."""
        return self.rank * self.rows_per_rank + local % self.rows_per_rank

    def _row_groups(self, shard: int) -> np.ndarray:
        if shard not in self._groups:
            meta = pq.ParquetFile(self._files[shard]).metadata
            self._groups[shard] = np.cumsum([0] + [meta.row_group(g).num_rows for g in range(meta.num_row_groups)])
        return self._groups[shard]

    def fetch(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """``(input_ids, labels)`` of global row ``row``; the row group read last is cached."""
        shard = int(np.searchsorted(self._shard_start, row, side="right")) - 1
        in_shard = row - int(self._shard_start[shard])
        groups = self._row_groups(shard)
        group = int(np.searchsorted(groups, in_shard, side="right")) - 1
        if self._cache is None or self._cache[0] != (shard, group):
            table = pq.ParquetFile(self._files[shard]).read_row_group(group)
            width = self.manifest["block_size"]
            ids = table.column("input_ids").combine_chunks().flatten().to_numpy().reshape(-1, width)
            labels = table.column("labels").combine_chunks().flatten().to_numpy().reshape(-1, width)
            self._cache = ((shard, group), ids, labels)
        _, ids, labels = self._cache
        k = in_shard - int(groups[group])
        return ids[k], labels[k]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        info = torch.utils.data.get_worker_info()
        worker, num_workers = (info.id, info.num_workers) if info is not None else (0, 1)
        for local in self.local_rows(worker, num_workers):
            row = self.global_row(local)
            ids, labels = self.fetch(row)
            yield {
                "input_ids": torch.from_numpy(ids.astype(np.int64)),
                "labels": torch.from_numpy(labels.astype(np.int64)),
                "row": row,
            }


class ShardLoader:
    """Batches of a :class:`ShardReader` through a ``DataLoader``, counting the rows consumed.

    Iterating yields ``(input_ids, labels)``, each ``(B, T)`` int64. ``state_dict()`` is
    ``{"rows": n}``, the rank-local rows consumed so far; after ``load_state_dict`` the next
    iteration starts at that row, in any number of workers.
    """

    def __init__(self, reader: ShardReader, num_workers: int = 0):
        self.reader, self.num_workers = reader, num_workers
        self.rows = reader.start_row

    def state_dict(self) -> dict[str, int]:
        return {"rows": self.rows}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self.rows = int(state["rows"])

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        self.reader.start_row = self.rows
        loader = torch.utils.data.DataLoader(
            self.reader, batch_size=self.reader.batch_size, num_workers=self.num_workers
        )
        for batch in loader:
            self.rows += batch["input_ids"].size(0)
            yield batch["input_ids"], batch["labels"]
