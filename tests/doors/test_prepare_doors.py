"""Issue 35's probes of ``prepare``: memory bounded whatever an archive expands to (members over
16 MiB skipped with a reason; chunks of files closed at 16 MiB)."""

from __future__ import annotations

import io
import json
import tarfile
import tracemalloc
from pathlib import Path

from apollo_restore.data.prepare import CorpusSpec, _chunks, parse_corpus_rows, prepare
from apollo_restore.data.readers.archive import MAX_FILE_BYTES, SkipLog

MiB = 2**20
DDB = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "ddb").glob("*.xml"))


def _zeros_archive(path: Path, sizes: list[int], extra: dict[str, bytes] | None = None) -> Path:
    """A ``.tar.xz`` of members of zeros (each compresses to a few KB), plus ``extra`` members."""
    with tarfile.open(path, "w:xz", preset=1) as tar:
        for name, data in list((extra or {}).items()) + [(f"bomb/{i}.xml", bytes(n)) for i, n in enumerate(sizes)]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_member_over_the_limit_is_skipped_with_a_reason(tmp_path: Path) -> None:
    assert MAX_FILE_BYTES == 16 * MiB  # the limit docs/training.md states
    archive = _zeros_archive(tmp_path / "bomb.tar.xz", [17 * MiB], {f"ddb/{p.name}": p.read_bytes() for p in DDB})
    assert archive.stat().st_size < 100_000
    report = prepare([CorpusSpec("ddb", archive)], tmp_path / "out", progress=False, workers=1)
    assert sum(split["documents"] for split in report.stats["ddb"].values()) == len(DDB)  # the rest is kept
    skipped = [json.loads(line) for line in (tmp_path / "out" / "skipped.jsonl").read_text().splitlines()]
    bomb = [item for item in skipped if item["path"].endswith("bomb/0.xml")]
    assert bomb and "17,825,792 bytes" in bomb[0]["reason"] and "16,777,216-byte limit" in bomb[0]["reason"]


def test_chunks_close_at_their_byte_limit() -> None:
    files = [(f"f{i}", bytes(5 * MiB)) for i in range(10)] + [(f"s{i}", b"x") for i in range(600)]
    chunks = list(_chunks(iter(files)))
    assert [name for chunk in chunks for name, _ in chunk] == [name for name, _ in files]  # all, in order
    assert max(sum(len(data) for _, data in chunk) for chunk in chunks) <= 20 * MiB
    assert max(len(chunk) for chunk in chunks) == 256


def test_prepare_memory_stays_bounded_on_many_large_members(tmp_path: Path) -> None:
    # 12 members of 15 MiB (each under the limit): 180 MiB if a chunk held them together
    archive = _zeros_archive(tmp_path / "many.tar.xz", [15 * MiB] * 12)
    tracemalloc.start()
    try:
        rows = list(parse_corpus_rows(CorpusSpec("ddb", archive), workers=1, skips=SkipLog()))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rows) == 12 and all(row is None for _, row, _, _ in rows)  # zeros: skipped as unreadable
    assert peak < 100 * MiB, f"peak {peak / MiB:.0f} MiB"
