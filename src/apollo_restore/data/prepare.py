"""Corpus preparation: read every corpus, normalise, split, de-duplicate, write Parquet.

    apollo-restore prepare --corpus ddb=corpora/ddb-trismegistos-2016.tar.xz \\
        --corpus literary=corpora/tesserae-grc.tar.xz --out data/prepared

Each ``--corpus SOURCE=PATH`` names a ``.tar``/``.tar.gz``/``.tar.xz`` archive, a folder or a file, read in place
(where the corpora come from and their licences: docs/training.md, *Training data*).

Writes ``documents.parquet`` (one row per document: normalised text in both uncertainty
variants, supplied spans, split), ``stats.json``/``stats.md`` (documents, letters, lacunae
and supplied spans per source and split), ``skipped.jsonl`` (every file not used, and every
broken archive, with its reason) and ``adjusted.jsonl`` (documents kept with a lacuna length
read as unknown extent). No single file or archive stops the run. Re-running on the same
input gives byte-identical Parquet.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from apollo_restore.data.dedup import RUN, duplicate_fraction, shingles, sorted_unique
from apollo_restore.data.document import SOURCES, Document, Lacuna, Text, render
from apollo_restore.data.normalise import GREEK_LETTERS, NORMALISER, letter_count
from apollo_restore.data.overlap import MIN_RUN, OverlapMask
from apollo_restore.data.readers.archive import SkipLog, iter_files
from apollo_restore.data.readers.ddb import parse_file as parse_ddb_file
from apollo_restore.data.readers.epidoc import parse_epidoc_file
from apollo_restore.data.readers.plaintext import SUFFIX as PLAIN_SUFFIX
from apollo_restore.data.readers.plaintext import parse_plain
from apollo_restore.data.readers.tesserae import parse_tess
from apollo_restore.data.splits import SPLITS, SPLITTER, split_of
from apollo_restore.data.table import DOCUMENTS_FILE, write_documents

# re-exported while train/loop.py and retrieve/parallels.py still import it from here; new code: data.table
from apollo_restore.data.table import load_documents as load_documents
from apollo_restore.data.textindex import TextIndex, build_text_index
from apollo_restore.errors import CorpusError

log = logging.getLogger(__name__)

Parser = Callable[[bytes, str, str], Document]
_LETTERS = frozenset(GREEK_LETTERS)


@dataclass(frozen=True)
class CorpusSpec:
    """One ``--corpus source=PATH`` argument."""

    source: str
    path: Path

    @classmethod
    def parse(cls, arg: str) -> CorpusSpec:
        """Parse ``source=PATH``; raise ``ValueError`` naming the bad part."""
        source, sep, path = arg.partition("=")
        if not sep or not path:
            raise ValueError(f"--corpus expects SOURCE=PATH, got {arg!r}")
        if source not in SOURCES:
            raise ValueError(f"unknown source {source!r} in {arg!r}; expected one of {', '.join(SOURCES)}")
        return cls(source, Path(path))


def training_corpora(root: Path) -> list[CorpusSpec]:
    """The training corpora as docs/training.md (*Training data*) lays them out in one folder
    ``root``, every one but First1KGreek: DDB-TM, Tesserae, the DCLP sample and each inscription
    archive (``inscriptions/*.tar.xz``, sorted); the idp-sample DDB files duplicate DDB-TM."""
    specs = [
        CorpusSpec("ddb", root / "ddb-trismegistos-2016.tar.xz"),
        CorpusSpec("literary", root / "tesserae-grc.tar.xz"),
        CorpusSpec("dclp", root / "idp-sample" / "DCLP"),
    ]
    return specs + [CorpusSpec("inscription", path) for path in sorted((root / "inscriptions").glob("*.tar.xz"))]


@dataclass
class PrepareReport:
    """What :func:`prepare` did: counts per (source, split), dedup, skipped files (and
    broken archives), kept documents whose absurd lacuna lengths were read as unknown
    (``adjusted``), letters cut out of running-text training documents because they share a
    run with held-out text (``masked``: document id → letters), timing."""

    stats: dict[str, dict[str, dict[str, int]]]
    near_duplicates: dict[str, int]
    skipped: list[dict[str, str]]
    seconds: float
    adjusted: list[dict[str, str]] = field(default_factory=list)
    documents: int = 0
    letters: int = 0
    masked: dict[str, int] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)


def parse_xml_file(content: bytes, name: str, source: str) -> Document:
    """One XML corpus file, its format told from the file itself: DDB-TM token XML (a
    ``<file name=...>`` root) or EpiDoc TEI.

    Raises:
        CorpusError: the file cannot be read as either.
    """
    if b"<file " in content[:400]:
        return parse_ddb_file(content, name, source)
    return parse_epidoc_file(content, name, source)


def parse_literary_file(content: bytes, name: str, source: str) -> Document:
    """One literary corpus file, by its suffix: Tesserae ``.tess`` or plain running text
    (``.txt``, one work per file, as First1KGreek ships it)."""
    if name.endswith(PLAIN_SUFFIX):
        return parse_plain(content, name, source)
    return parse_tess(content, name, source)


def reader_for(spec: CorpusSpec) -> tuple[Parser, tuple[str, ...]]:
    """The per-file parser and file suffixes for a corpus, by its source."""
    if spec.source == "literary" or spec.path.name.endswith(".tess"):
        return parse_literary_file, (".tess", PLAIN_SUFFIX)
    return parse_xml_file, (".xml",)


#: ``(file name, row or None, why it was skipped, notes on a kept row)``, one per file.
ParsedFile = tuple[str, "dict[str, Any] | None", str, list[str]]


def _parse_chunk(parse: Parser, source: str, items: list[tuple[str, bytes]]) -> list[ParsedFile]:
    """Worker: one :data:`ParsedFile` per file of a chunk. No file can stop the run: what a
    reader cannot parse, for whatever reason, is a skip with that reason."""
    out: list[ParsedFile] = []
    for name, content in items:
        try:
            doc = parse(content, name, source)
            row = _row(doc)
            out.append((name, row, "" if row else "no Greek letters in the edition", list(doc.meta.get("notes", []))))
        except CorpusError as err:
            out.append((name, None, err.reason, []))
        except Exception as err:  # noqa: BLE001 - a reader's bug must not lose the corpus
            log.warning("reader failed on %s", name, exc_info=True)
            out.append((name, None, f"reader failed ({type(err).__name__}: {str(err)[:200]})", []))
    return out


#: A chunk of files sent to a worker closes at this many files or this many bytes, whichever
#: comes first: with files of at most 16 MiB (the readers' ``MAX_FILE_BYTES``), a chunk holds
#: at most 32 MiB, whatever an archive expands to.
CHUNK_FILES, CHUNK_BYTES = 256, 16 * 1024 * 1024


def _chunks(
    files: Iterator[tuple[str, bytes]], size: int = CHUNK_FILES, max_bytes: int = CHUNK_BYTES
) -> Iterator[list[tuple[str, bytes]]]:
    """Group ``files`` into chunks of at most ``size`` files, closed as soon as they hold
    ``max_bytes`` bytes (so one chunk holds less than ``max_bytes`` plus one file)."""
    chunk: list[tuple[str, bytes]] = []
    held = 0
    for item in files:
        chunk.append(item)
        held += len(item[1])
        if len(chunk) == size or held >= max_bytes:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


def parse_corpus_rows(spec: CorpusSpec, workers: int, skips: SkipLog) -> Iterator[ParsedFile]:
    """A :data:`ParsedFile` for every file of a corpus, parsed in ``workers`` processes.

    The archive is streamed in this process; chunks of files (at most :data:`CHUNK_FILES`
    files and :data:`CHUNK_BYTES` bytes plus one file of at most 16 MiB) go to
    the workers with at most ``2 × workers`` chunks in flight, so memory stays bounded
    (≈ 32 MiB × (2 × workers + 1) of file contents) whatever the archive expands to; results
    come back in file order.
    Broken archives, oversized members and escaping links go to ``skips`` as they are met.
    """
    parse, suffixes = reader_for(spec)
    chunks = _chunks(iter_files(spec.path, suffixes, skips))
    if workers <= 1:
        for chunk in chunks:
            yield from _parse_chunk(parse, spec.source, chunk)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: deque = deque()
        for chunk in chunks:
            pending.append(pool.submit(_parse_chunk, parse, spec.source, chunk))
            if len(pending) >= 2 * workers:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()


def _row(doc: Document) -> dict[str, Any] | None:
    rendering = render(doc)
    letters = sum(rendering.text.count(ch) for ch in _LETTERS)  # one C-level count per letter, not a loop per character
    if letters == 0:
        return None
    date = doc.meta.get("date")
    return {
        "id": doc.id,
        "source": doc.source,
        "split": split_of(doc.group),
        "group": doc.group,
        "tm": doc.meta.get("tm"),
        "date": int(date) if date is not None and -10_000 <= int(date) <= 10_000 else None,
        "text": rendering.text,
        # the same text when nothing is underdotted (all of the literary corpus): not rendered twice
        "text_uncertain_excluded": render(doc, uncertain_as_gap=True).text if _has_uncertain(doc) else rendering.text,
        "supplied_start": [s.start for s in rendering.supplied],
        "supplied_end": [s.end for s in rendering.supplied],
        "letters": letters,
        "lacunae": sum(isinstance(s, Lacuna) for s in doc.segments),
    }


def _has_uncertain(doc: Document) -> bool:
    return any(isinstance(seg, Text) and seg.uncertain for seg in doc.segments)


def prepare(
    corpora: list[CorpusSpec], out: Path, dedup_threshold: float = 0.5, progress: bool = True, workers: int = 2
) -> PrepareReport:
    """Prepare corpora into ``out`` (see module docstring).

    Args:
        corpora: the corpora to read; several may share a source.
        out: output folder (created).
        dedup_threshold: a validation/test document is dropped when at least this fraction of
            its 25-letter runs also occurs in training documents.
        progress: show progress bars.
        workers: parsing processes (1 = in this process).

    Returns:
        A :class:`PrepareReport` (also written as ``stats.json``).
    """
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    skips = SkipLog()
    rows: list[dict[str, Any]] = []
    adjusted: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    running: set[tuple[str, str]] = set()  # documents of plain running text: masked below
    for spec in corpora:
        results = parse_corpus_rows(spec, workers, skips)
        for name, row, reason, notes in tqdm(results, desc=f"read {spec.source}", unit="file", disable=not progress):
            if row is None:
                skips.add(name, reason)
            elif (row["source"], row["id"]) in seen:
                skips.add(name, f"duplicate document id {row['id']!r} within source {row['source']!r}")
            else:
                seen.add((row["source"], row["id"]))
                rows.append(row)
                if name.endswith(PLAIN_SUFFIX):
                    running.add((row["source"], row["id"]))
                adjusted.extend({"path": name, "reason": note} for note in notes)
    rows.sort(key=lambda r: (r["source"], r["id"]))
    rows, near_duplicates = _drop_near_duplicates(rows, dedup_threshold, progress)
    rows, masked = _mask_running_text(rows, running, out)
    write_documents(rows, out / DOCUMENTS_FILE)
    report = PrepareReport(
        stats=_stats(rows),
        near_duplicates=near_duplicates,
        skipped=[{"path": s.path, "reason": s.reason} for s in skips.items],
        adjusted=adjusted,
        seconds=round(time.perf_counter() - started, 1),
        documents=len(rows),
        letters=sum(r["letters"] for r in rows),
        masked=masked,
        meta={
            "normaliser": NORMALISER,
            "splitter": SPLITTER,
            "dedup_run": RUN,
            "dedup_threshold": dedup_threshold,
            "heldout_min_run": MIN_RUN,
        },
    )
    _write_reports(report, out)
    return report


def _drop_near_duplicates(
    rows: list[dict[str, Any]], threshold: float, progress: bool
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    train = [shingles(r["text"]) for r in rows if r["split"] == "train"]
    reference = sorted_unique(np.concatenate(train)) if train else np.empty(0, dtype=np.uint64)
    kept, dropped = [], defaultdict(int)
    for row in tqdm(rows, desc="dedup", unit="doc", disable=not progress):
        if row["split"] != "train" and duplicate_fraction(shingles(row["text"]), reference) >= threshold:
            dropped[f"{row['source']}/{row['split']}"] += 1
            continue
        kept.append(row)
    return kept, dict(sorted(dropped.items()))


def _mask_running_text(
    rows: list[dict[str, Any]], running: set[tuple[str, str]], out: Path
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Cut out of every **training** document of plain running text (``running``: source, id)
    each run of :data:`~apollo_restore.data.overlap.MIN_RUN` letters it shares with a validation
    or test document of any source: a literary work can be another edition of a held-out one.
    What is left of a document becomes documents ``<id>#<k>`` (its pieces, in order), so that no
    held-out run of that length is trained on. Curated corpora (ddb, inscriptions, Tesserae) are
    not masked: they are split by document group, and their formulae recur by nature.

    Returns:
        ``(rows, masked)``: the rows, masked documents replaced by their pieces (same order);
        document id → letters cut out, for documents that lost any.
    """
    targets = [i for i, r in enumerate(rows) if r["split"] == "train" and (r["source"], r["id"]) in running]
    heldout = [r for r in rows if r["split"] != "train"]
    if not targets or not heldout:
        return rows, {}
    with tempfile.TemporaryDirectory(prefix="heldout-index-", dir=out) as tmp:
        index = build_text_index(
            [r["id"] for r in heldout], [r["source"] for r in heldout], [r["text"] for r in heldout], Path(tmp) / "i"
        )
        mask = OverlapMask(TextIndex.open(index.path))
        cut: dict[int, list[str]] = {}
        masked: dict[str, int] = {}
        for i in targets:
            pieces, letters = mask.pieces(rows[i]["text"])
            if letters:
                cut[i], masked[rows[i]["id"]] = pieces, letters
        del mask, index
    kept: list[dict[str, Any]] = []
    for i, row in enumerate(rows):
        if i not in cut:
            kept.append(row)
            continue
        for k, piece in enumerate(cut[i]):
            kept.append(
                row
                | {
                    "id": f"{row['id']}#{k}",
                    "text": piece,
                    "text_uncertain_excluded": piece,
                    "letters": letter_count(piece),
                }
            )
    return kept, masked


def _stats(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    stats: dict[str, dict[str, dict[str, int]]] = {}
    for row in rows:
        cell = stats.setdefault(row["source"], {}).setdefault(
            row["split"], {"documents": 0, "letters": 0, "lacunae": 0, "supplied": 0}
        )
        cell["documents"] += 1
        cell["letters"] += row["letters"]
        cell["lacunae"] += row["lacunae"]
        cell["supplied"] += len(row["supplied_start"])
    return {src: {sp: stats[src][sp] for sp in SPLITS if sp in stats[src]} for src in sorted(stats)}


def _write_reports(report: PrepareReport, out: Path) -> None:
    (out / "stats.json").write_text(json.dumps(report.__dict__, ensure_ascii=False, indent=1))
    for name, items in (("skipped.jsonl", report.skipped), ("adjusted.jsonl", report.adjusted)):
        with (out / name).open("w") as fh:
            for item in items:
                fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    (out / "stats.md").write_text(format_stats(report))


def format_stats(report: PrepareReport) -> str:
    """Markdown table of the statistics of a :class:`PrepareReport`."""
    lines = [
        f"Prepared {report.documents:,} documents, {report.letters:,} letters in {report.seconds} s "
        f"({report.meta.get('normaliser')}).",
        "",
        "| source | split | documents | letters | lacunae | supplied spans |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for source, splits in report.stats.items():
        for split, c in splits.items():
            lines.append(
                f"| {source} | {split} | {c['documents']:,} | {c['letters']:,} | {c['lacunae']:,} | {c['supplied']:,} |"
            )
    lines += [
        "",
        f"Near-duplicates removed (≥ {report.meta.get('dedup_threshold')} of 25-letter runs in train): "
        + (", ".join(f"{k}: {v}" for k, v in report.near_duplicates.items()) or "none"),
    ]
    reasons: dict[str, int] = defaultdict(int)
    for item in report.skipped:
        reasons[item["reason"].split(":")[0].split(" '")[0]] += 1
    lines += [
        "",
        f"Letters cut out of running-text training documents (runs of ≥ {report.meta.get('heldout_min_run')} "
        f"shared with validation/test text): {sum(report.masked.values()):,} in {len(report.masked)} documents",
    ]
    lines += [
        "",
        f"Lacuna lengths read as unknown extent (absurd or unreadable, see adjusted.jsonl): {len(report.adjusted)}",
    ]
    lines += ["", f"Skipped files: {len(report.skipped)}"] + [f"- {r}: {n}" for r, n in sorted(reasons.items())]
    return "\n".join(lines) + "\n"
