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
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apollo_restore.attribution.attribute import load_model
from apollo_restore.attribution.districts import district_of, nome_of, read_hierarchy
from apollo_restore.attribution.train import HIERARCHY_FILE, examples
from apollo_restore.data.outputs import write_atomic
from apollo_restore.evaluate.attribution import attribution_report, report_markdown


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


def score_documents(model: Any, items: Iterable[Any], nomes: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One :func:`attribution_report` row per document, from an
    :class:`~apollo_restore.attribution.model.AttributionModel` and labelled texts (objects with
    ``source``, ``text``, ``letters`` and ``label``: ``lo``, ``hi``, ``place``, ``region``). The
    true place is the label's place where it is one of the model's, else its region where that
    is (an inscription's rare settlement), else the place itself (never predicted: a miss). With
    ``nomes`` (HGV's nome of each place, :func:`~.districts.read_hierarchy`)
    and a model that names its districts, each row also says whether the first place is in the true
    place's nome (``nome_right``, HGV's record: a place without a nome is its own) and whether the
    answer's first district is the true place's (``district_right``, its probability ``district_prob``)."""
    known = set(model.places)
    index = {p: i for i, p in enumerate(model.places)}
    rows = []
    for item in items:
        found = model.predict(item.text, item.letters)
        label = item.label
        place = label.place if label.place in known or label.region not in known else label.region
        names, probs = [p.place for p in found.places], [p.prob for p in found.places]
        rows.append({"source": item.source, "letters": item.letters, "lo": label.lo, "hi": label.hi,
                     "place": place, "year": found.year, "low": found.low, "high": found.high,
                     "places": names, "place_probs": probs,
                     "formula_year": found.formula.year if found.formula else None})  # fmt: skip
        if nomes is not None and found.districts and place:
            true_district = (model.districts[index[place]] if place in index
                             else district_of(place, nomes, item.source == "inscription"))  # fmt: skip
            rows[-1] |= {"nome_right": nome_of(names[0], nomes) == nome_of(place, nomes),
                         "district_right": found.districts[0].name == true_district,
                         "district_prob": found.districts[0].prob}  # fmt: skip
    return rows
