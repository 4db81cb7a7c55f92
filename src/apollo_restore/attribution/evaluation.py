"""The attribution model scored on a split of the prepared corpus: what ``apollo-restore evaluate
--task attribution`` and ``benchmarks/attribution.py`` run.

    from apollo_restore.attribution.evaluation import evaluate_split
    done = evaluate_split(Path("data/prepared"), Path("corpora"), "validation")
    done.report["all"]["coverage80"], done.markdown(), done.ms_per_document

Each papyrus (ddb) and inscription of the split with a date or a place is read as the artifact
has it (the editor's supplements as lost letters, first 4,000 characters; :func:`~.train.examples`)
and attributed by the model; the scores are
:func:`~apollo_restore.evaluate.attribution.attribution_report`'s. Choose on ``validation``; run
``test`` once per change.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apollo_restore.attribution.attribute import load_model
from apollo_restore.attribution.districts import read_hierarchy
from apollo_restore.attribution.train import HIERARCHY_FILE, examples
from apollo_restore.data.outputs import write_atomic
from apollo_restore.evaluate.attribution import attribution_report, report_markdown, score_documents


@dataclass(frozen=True)
class SplitScores:
    """The scores of one split.

    Attributes:
        split: ``"validation"`` or ``"test"``.
        report: :func:`~apollo_restore.evaluate.attribution.attribution_report`'s dict.
        documents: documents scored.
        ms_per_document: milliseconds of attribution per document (the model's, reading aside).
    """

    split: str
    report: dict[str, Any]
    documents: int
    ms_per_document: float

    def markdown(self) -> str:
        """The report's heading line and table."""
        head = f"{self.split}: {self.documents} documents, {self.ms_per_document:.1f} ms per document"
        return f"{head}\n\n{report_markdown(self.report)}\n"

    def write(self, out: Path) -> None:
        """``report.md`` and ``metrics.json`` in the folder ``out`` (made), each written atomically."""
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(out / "report.md", ("# Dates and places\n\n" + self.markdown()).encode("utf-8"))
        write_atomic(
            out / "metrics.json", (json.dumps(self.report, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
        )


def evaluate_split(prepared: Path, corpora: Path, split: str, folder: Path | None = None) -> SplitScores:
    """The scores of the model of ``folder`` (default: the packaged one) on ``split`` (the first
    place's nome and the first district too where ``corpora`` holds HGV's place hierarchy).

    Raises:
        AttributionError: ``E802``: the folder cannot be loaded.
    """
    model = load_model(str(folder) if folder else None)
    items = examples(prepared, corpora, split, seed=0, crops=0, fill=0.0)
    started = time.perf_counter()
    hierarchy = corpora / HIERARCHY_FILE
    rows = score_documents(model, items, read_hierarchy(hierarchy) if hierarchy.exists() else None)
    seconds = time.perf_counter() - started
    return SplitScores(split, attribution_report(rows), len(rows), 1000 * seconds / max(1, len(rows)))
