"""Nomes above villages: each place class's district, and a text's districts from its places.

    from apollo_restore.attribution.districts import districts
    districts(["Karanis", "Nome of Arsinoites", "Oxyrhynchos"], ["Arsinoites", "Arsinoites",
              "Oxyrhynchites"], np.array([0.4, 0.2, 0.3]))
    # [{"name": "Arsinoites", "prob": 0.6, "places": [{"place": "Karanis", "prob": 0.4}, …]}, …]

A papyrus place's district is the nome the Heidelberger Gesamtverzeichnis records for it
(``hgv-place-hierarchy.tsv``: HGV, papyri.info, CC BY 3.0), a ``Nome of X`` label's is ``X``; where
HGV records none, a nome's metropolis is put in the nome named for it (:data:`METROPOLEIS`, the
nomes' names as HGV spells them) and HGV's quarters of Thebes (``Theben (Charax)``, ``Ta Memnoneia
(Theben)``) in Theben; an inscription's settlement is in its corpus's region
(``Lipara (Sicily)`` → ``Sicily``); any other place is its own district. The mapping is computed
at training (:func:`class_districts`) and stored in the model's config (``place_districts``, one
name per place class), so the packaged folder needs no corpus.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import numpy as np

from apollo_restore.attribution.labels import REGIONS

#: Metropoleis without a nome in their HGV record → the nome named for them (the nomes were named
#: for their metropoleis; HGV's spelling of the nome, as its "Nome of …" labels have it).
METROPOLEIS = {
    "Hermopolis": "Hermopolites",
    "Panopolis": "Panopolites",
    "Memphis": "Memphites",
    "Antinoopolis": "Antinoites",
    "Lykopolis": "Lykopolites",
    "Antaiopolis": "Antaiopolites",
    "Apollonopolis Heptakomias": "Apollonopolites Heptakomias",
    "Latopolis": "Latopolites",
    "Hermonthis": "Hermonthites",
    "Athribis": "Athribites",
    "Mendes": "Mendesios",
    "This": "Thinites",
    "Pathyris": "Pathyrites",
}
_NOME_OF = "Nome of "
_THEBES = re.compile(r"^Theben \(|\(Theben\)$")
_REGION = re.compile(r"^.+ \((.+)\)$")


def read_hierarchy(path: Path) -> dict[str, str]:
    """Place → the nome HGV records for it (``""``: none, or two nomes ``X bzw. Y``), from
    ``hgv-place-hierarchy.tsv`` (columns ``place``, ``nome``, …)."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return {r["place"]: "" if " bzw. " in r["nome"] else r["nome"].strip() for r in rows}


def nome_of(place: str, nomes: dict[str, str]) -> str:
    """The district of ``place`` by HGV's record alone (``Nome of X`` → ``X``; a place without a
    nome is its own): the measure of "the first place in the right nome"."""
    if place.startswith(_NOME_OF):
        return place[len(_NOME_OF) :]
    return nomes.get(place) or place


def district_of(place: str, nomes: dict[str, str], inscription: bool = False) -> str:
    """The district of one place class (see the module docstring); ``inscription``: the class is
    an inscription's (a settlement ``X (Region)`` is in ``Region``)."""
    if inscription:
        m = _REGION.match(place)
        return m.group(1) if m and place not in REGIONS.values() else place  # "Aphrodisias (Caria)" is a region
    if place.startswith(_NOME_OF) or nomes.get(place):
        return nome_of(place, nomes)
    if place in METROPOLEIS:
        return METROPOLEIS[place]
    return "Theben" if _THEBES.search(place) else place


def class_districts(places: list[str], nomes: dict[str, str], inscription_places: set[int]) -> list[str]:
    """The district of each place class (``inscription_places``: the classes that are inscriptions')."""
    return [district_of(p, nomes, i in inscription_places) for i, p in enumerate(places)]


def district_probs(probs: np.ndarray, of: list[str]) -> tuple[list[str], np.ndarray]:
    """``(names (D,), probs (..., D))``: the districts of ``of`` (one per place class, first seen
    first) and their probabilities, summed over their places' ``probs`` ``(..., P)``."""
    names = list(dict.fromkeys(of))
    column = {n: i for i, n in enumerate(names)}
    which = np.asarray([column[d] for d in of])
    out = np.zeros((*probs.shape[:-1], len(names)), np.float64)
    np.add.at(out.T, which, np.moveaxis(probs, -1, 0))
    return names, out


def districts(places: list[str], of: list[str], probs: np.ndarray, top: int = 5,
              places_each: int = 5) -> list[dict[str, Any]]:  # fmt: skip
    """The ``top`` most probable districts of a text's place probabilities ``probs`` ``(P,)``:
    ``[{"name", "prob", "places": [{"place", "prob"}, …]}]``, most probable first, each with its
    ``places_each`` most probable places (``of``: each place class's district)."""
    names, dprobs = district_probs(probs, of)
    out = []
    for d in np.argsort(-dprobs, kind="stable")[:top]:
        inside = [i for i in np.argsort(-probs, kind="stable") if of[i] == names[d]][:places_each]
        out.append({"name": names[d], "prob": round(float(dprobs[d]), 4),
                    "places": [{"place": places[i], "prob": round(float(probs[i]), 4)} for i in inside]})  # fmt: skip
    return out
