"""The date and place of each prepared document, joined by document name (training side).

    from apollo_restore.attribution.labels import read_labels
    labels = read_labels(Path("corpora"))   # (source, id) → Label

- **Papyri** (``ddb``): the HGV table ``hgv-places-dates.tsv`` keyed by Trismegistos id, the
  ``tm`` column of the prepared table (the DDB files' ``<file TM=…>``). A date is ``year ±
  range`` (``range`` empty: ± 0); several rows for one id are joined (the widest range, the
  place most rows give).
- **Inscriptions**: the EpiDoc header of each file in ``inscriptions/*.tar.xz``
  (``origDate``'s ``@when``/``@notBefore``/``@notAfter``, ``origPlace``'s text), read by the
  corpus reader's own :func:`~apollo_restore.data.readers.epidoc.metadata`; the document name is
  the reader's id, so the join is the prepared table's ``(source, id)``.

Nothing here changes what restoration reads: the prepared table is not rewritten.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from apollo_restore.data.readers.archive import iter_files
from apollo_restore.data.readers.epidoc import doc_id, metadata

HGV_FILE = "hgv-places-dates.tsv"
#: Years outside this range are no dates (a typing slip, a modern year in a header).
YEAR_RANGE = (-1200, 1500)


@dataclass(frozen=True)
class Label:
    """What is known of one document: a year range (``lo`` ≤ ``hi``, negative BC; ``None`` when
    undated) and a place (``""`` when unknown)."""

    lo: int | None
    hi: int | None
    place: str
    region: str = ""

    @property
    def dated(self) -> bool:
        return self.lo is not None and self.hi is not None


def read_hgv(path: Path) -> dict[str, Label]:
    """Trismegistos id → :class:`Label` from the HGV table (columns ``tm``, ``place``, ``year``, ``range``)."""
    ranges: dict[str, tuple[int, int]] = {}
    places: dict[str, Counter[str]] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            tm = row["tm"].strip()
            places.setdefault(tm, Counter())
            if row["place"].strip():
                places[tm][row["place"].strip()] += 1
            try:
                year = int(row["year"])
            except ValueError:
                continue
            width = int(row["range"]) if row["range"].strip().lstrip("-").isdigit() else 0
            lo, hi = year - abs(width), year + abs(width)
            if tm in ranges:
                lo, hi = min(lo, ranges[tm][0]), max(hi, ranges[tm][1])
            ranges[tm] = (lo, hi)
    out = {}
    for tm, counts in places.items():
        lo, hi = ranges.get(tm, (None, None))
        out[tm] = Label(lo, hi, counts.most_common(1)[0][0] if counts else "")
    return out


#: Each inscription archive's region (its file name's start → the region's label); an inscription's
#: place is its settlement where the header names one (:func:`_place`), else the region.
REGIONS = {
    "Aphrodisias": "Aphrodisias (Caria)",
    "Brown-University-Library+iip": "Judaea and Palaestina",
    "IGCyr": "Cyrenaica",
    "InsLib+ircyr": "Cyrenaica",
    "ISicily": "Sicily",
    "IreneVagionakis+Cretan": "Crete",
    "kingsdigitallab+iospe": "Northern Black Sea",
}
#: ``origPlace`` texts that name no settlement (a findspot's description, or nothing known).
_NO_SETTLEMENT = re.compile(r"unknown|findspot|uncertain|unidentified|gymnasium|theatre|church|necropolis|"
                            r"baths|cemetery|road|fort|probably|perhaps|possibly|presumably|\bin\b|\bthe\b",
                            re.IGNORECASE)  # fmt: skip


def _region(archive: str) -> str:
    return next((label for start, label in REGIONS.items() if archive.startswith(start)), archive.split("+")[0])


def _place(text: str, region: str) -> str:
    """An inscription's settlement from its ``origPlace`` text (``Sicilia Lipara Lipari 38.48`` →
    ``Lipara``, ``Gortyna`` → ``Gortyna``), or ``""`` where it names none; Aphrodisias's and
    the Cyrenaican corpus's headers name buildings, not towns, so their region is the place."""
    text = " ".join(re.sub(r"\(.*?\)|\[.*?\]|\?", "", text).split())
    if region == "Sicily":
        m = re.match(r"Sicilia (\w+)", text)
        return m.group(1) if m and m.group(1) != "Sicilia" else ""
    if region == "Aphrodisias (Caria)" or not text or _NO_SETTLEMENT.search(text) or len(text.split()) > 3:
        return ""
    return text.strip(" .")


def read_inscriptions(folder: Path) -> dict[str, Label]:
    """Inscription id (the corpus reader's) → :class:`Label` from each archive's EpiDoc headers;
    the first file of an id wins, as in ``prepare``."""
    out: dict[str, Label] = {}
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=False)
    for archive in sorted(folder.glob("*.tar.xz")):
        region = _region(archive.name)
        for name, content in iter_files(archive, (".xml",), skips=_Ignore()):
            try:
                root = etree.fromstring(content, parser)
            except etree.XMLSyntaxError:
                continue
            found = doc_id(root, name)
            if found in out:
                continue
            meta = metadata(root)
            lo = meta.get("date_min", meta.get("date"))
            hi = meta.get("date_max", meta.get("date"))
            if lo is not None and hi is not None:
                lo, hi = min(lo, hi), max(lo, hi)  # type: ignore[type-var]
                if not (YEAR_RANGE[0] <= lo and hi <= YEAR_RANGE[1]):  # type: ignore[operator]
                    lo = hi = None
            else:
                lo = hi = None
            place = _place(str(meta.get("place", "")), region)
            out[found] = Label(lo, hi, f"{place} ({region})" if place else region, region)  # type: ignore[arg-type]
    return out


class _Ignore:
    """A skip log that keeps nothing: a file ``prepare`` skipped has no row to label."""

    def add(self, name: str, reason: str) -> None:
        pass


def read_labels(corpora: Path) -> dict[tuple[str, str], Label]:
    """``(source, key)`` → :class:`Label`: ``("ddb", tm)`` from the HGV table, ``("inscription",
    id)`` from the inscriptions' headers (see the module docstring)."""
    labels: dict[tuple[str, str], Label] = {}
    for tm, label in read_hgv(corpora / HGV_FILE).items():
        labels[("ddb", tm)] = label
    for name, label in read_inscriptions(corpora / "inscriptions").items():
        labels[("inscription", name)] = label
    return labels


def label_of(labels: dict[tuple[str, str], Label], source: str, doc_id: str, tm: str | None) -> Label | None:
    """The label of one prepared row (``ddb`` by its Trismegistos id, an inscription by its id)."""
    if source == "ddb":
        return labels.get(("ddb", tm or ""))
    if source == "inscription":
        return labels.get(("inscription", doc_id))
    return None
