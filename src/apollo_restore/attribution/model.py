"""The attribution model: a text's date as a distribution over years, its place as probabilities (NumPy only).

    from apollo_restore.attribution.model import AttributionModel
    model = AttributionModel.load()               # the packaged folder, models/attribution
    guess = model.predict("ετους ιβ αυτοκρατορος καισαρος τραιανου αδριανου σεβαστου")
    guess.year, guess.low, guess.high, guess.places[:3]

A hashed n-gram bag (:mod:`.features`) is summed through an embedding (``embedding``: buckets × D)
and read by two linear heads: ``date`` (D → one logit per bin of :attr:`AttributionModel.bins`) and
``place`` (D → one logit per place); where the folder holds the index of the training documents
(:mod:`.neighbours`), the votes of a text's nearest documents are mixed in; where it holds the
reader of dating formulae (:mod:`.formulae`), the year a regnal year gives takes the probability
that it is right, and the point and interval are read from the distribution over single years.
The probabilities are ``softmax(logits / T)`` with a temperature ``T`` per head and per *length
band* (letters of the text), fitted on validation documents and crops of them (:mod:`.train`): the
date's so that the 80 % interval holds the true date about 80 % of the time, the place's by
likelihood; a text whose most probable place is an inscription's has a date and a place
temperature of its own. A short text gets its band's (larger) temperature: a wide interval and
flat places.

The folder holds ``attribution.safetensors`` (the arrays) and ``attribution.json`` (bins, places,
bands, temperatures, what it was trained on), checked on load (:mod:`.folder`); nothing is unpickled.
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from apollo_restore.attribution.districts import districts
from apollo_restore.attribution.familiar import Letters
from apollo_restore.attribution.features import featurise
from apollo_restore.attribution.folder import fingerprint, read_arrays, read_settings
from apollo_restore.attribution.formulae import Formulae
from apollo_restore.attribution.labels import REGIONS
from apollo_restore.attribution.neighbours import Neighbours, mix
from apollo_restore.errors import AttributionError, Errors
from apollo_restore.schema.answers import (
    INTERVAL,
    TOP_PLACES,
    Attribution,
    AttributionDate,
    District,
    Formula,
    PlaceProb,
)
from apollo_restore.schema.attribution import AttributionConfig

#: A text with fewer letters than this is told to know little (``little``).
FEW_LETTERS = 50


def default_folder() -> Path:
    """The packaged model folder ``apollo_restore/models/attribution``."""
    return Path(str(resources.files("apollo_restore") / "models" / "attribution"))


def softmax(logits: np.ndarray, temperature: float | np.ndarray) -> np.ndarray:
    """Row-wise ``softmax(logits / temperature)``; ``logits`` ``(..., C)``."""
    z = logits / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def quantile(edges: np.ndarray, probs: np.ndarray, q: float) -> float:
    """The year below which ``q`` of the probability lies (linear inside a bin); ``edges``
    ``(K + 1,)``, ``probs`` ``(K,)``."""
    cum = np.concatenate([[0.0], np.cumsum(probs)])
    k = int(np.clip(np.searchsorted(cum, q, side="left"), 1, len(probs)))
    inside = (q - cum[k - 1]) / max(probs[k - 1], 1e-12)
    return float(edges[k - 1] + np.clip(inside, 0, 1) * (edges[k] - edges[k - 1]))


def date_summary(edges: np.ndarray, probs: np.ndarray) -> tuple[int, int, int]:
    """``(median, low, high)`` of a date distribution: the years that hold its median and the
    ends of its central :data:`~apollo_restore.schema.answers.INTERVAL` interval. A bin
    ``[a, b)`` holds the years ``a … b − 1``, so a quantile at ``137.6`` lies in the year 137
    (rounding it would say 138). The years run 1 BC (``-1``) → AD 1 (``1``): a quantile in
    ``[0, 1)`` is the low end's 1 BC, else AD 1. :func:`~.train.central_interval` is its interval
    for many rows at once (``tests/attribution/test_training.py`` holds them equal)."""
    tail = (1 - INTERVAL) / 2
    year, low, high = (math.floor(quantile(edges, probs, q)) for q in (0.5, tail, 1 - tail))
    return year or 1, low or -1, high or 1


def bag(embedding: np.ndarray, scale: np.ndarray | None, ids: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted sum of the embedding's rows ``ids`` (``(D,)`` float32); ``scale`` (``(buckets,)``)
    where the embedding is int8 (row ``r`` is ``embedding[r] * scale[r]``)."""
    if scale is not None:
        weights = weights * scale[ids].astype(np.float32)
    return weights @ embedding[ids].astype(np.float32)


def quantise(embedding: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(int8 rows, float16 scale per row)`` of a float embedding ``(buckets, D)``: each row
    scaled so that its largest magnitude is 127 (half the bytes of float16)."""
    top = np.abs(embedding.astype(np.float32)).max(axis=1)
    scale = np.where(top > 0, top / 127, 1.0).astype(np.float16)
    rows = np.round(embedding.astype(np.float32) / scale.astype(np.float32)[:, None])
    return np.clip(rows, -127, 127).astype(np.int8), scale


class AttributionModel:
    """The arrays and settings of an attribution folder (see the module docstring)."""

    def __init__(self, arrays: dict[str, np.ndarray], config: dict[str, Any]) -> None:
        self.embedding = arrays["embedding"]  # (buckets, D) float16, or int8 with a scale per row
        self.scale = arrays.get("embedding.scale")  # (buckets,) float16 where the embedding is int8
        self.date_w, self.date_b = arrays["date.weight"].astype(np.float32), arrays["date.bias"].astype(np.float32)
        self.place_w, self.place_b = arrays["place.weight"].astype(np.float32), arrays["place.bias"].astype(np.float32)
        self.config = config
        #: The declared settings (:class:`~apollo_restore.schema.answers.AttributionConfig`) of a
        #: folder read by :meth:`load`; ``None`` for a model built in training.
        self.settings: AttributionConfig | None = None
        self.fingerprint: str | None = None  # of the folder it was read from (:meth:`load`)
        self.buckets = int(config["buckets"])
        self.edges = np.asarray(config["bin_edges"], np.float64)
        self.places = list(config["places"])
        self.bands = [int(x) for x in config["bands"]]  # lower letter bounds of each band, ascending
        self.t_date = [float(x) for x in config["temperature"]["date"]]
        self.t_place = [float(x) for x in config["temperature"]["place"]]
        #: The nearest training documents (:mod:`.neighbours`) where the folder holds their index.
        self.neighbours = Neighbours(arrays) if "nn.words" in arrays else None
        self.mixing = config.get("neighbours", {"date": 0.0, "place": 0.0})  # their votes' weights
        temperature = config["temperature"]
        self.t_mixed = (temperature.get("mixed_date", [1.0] * len(self.bands)),
                        temperature.get("mixed_place", [1.0] * len(self.bands)))  # the mixture's  # fmt: skip
        #: ``(date, place)`` temperatures of a text whose most probable place is an inscription's
        self.t_inscription = (float(temperature.get("mixed_date_inscription", [0.0])[0]) or None,
                              float(temperature.get("mixed_place_inscription", [1.0])[0]))  # fmt: skip
        self.inscription_places = set(config.get("inscription_places", []))  # classes that are inscriptions'
        self.first_year = int(self.edges[0])
        self.widths = np.diff(self.edges).astype(np.int64)  # years in each bin
        #: The dating formulae's reader (:mod:`.formulae`) where the folder holds it.
        self.formulae = Formulae(arrays, config["formulae"]) if "formula.weight" in arrays else None
        #: Each place class's district (:mod:`.districts`); empty where the folder names none.
        self.districts = list(config.get("place_districts", []))
        #: The letter model (:mod:`.familiar`) where the folder holds it.
        self.letters = Letters(arrays, config["letters"]) if "letters.logp" in arrays else None

    @classmethod
    def load(cls, folder: Path | None = None) -> AttributionModel:
        """Read a folder written by :func:`~apollo_restore.attribution.train.save` (default: the
        packaged one), every file checked first (:mod:`.folder`).

        Raises:
            AttributionError: ``E802`` the folder lacks one of its two files.
            FileError, ModelFolderError: a file that is not what the folder's contract declares
                (``E220``, ``E5xx`` naming the file and the field or array).
        """
        folder = Path(folder) if folder else default_folder()
        settings, config = read_settings(folder)
        model = cls(read_arrays(folder, settings), config)
        model.settings = settings
        model.fingerprint = fingerprint(folder)
        return model

    def band(self, letters: int) -> int:
        """Index of the length band ``letters`` falls in."""
        return max(0, int(np.searchsorted(self.bands, letters, side="right")) - 1)

    def logits(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """``(date (K,), place (P,))`` logits of a ``norm.v1`` text."""
        ids, weights = featurise(text, self.buckets)
        hidden = bag(self.embedding, self.scale, ids, weights) if len(ids) else np.zeros(self.date_w.shape[0])
        return hidden @ self.date_w + self.date_b, hidden @ self.place_w + self.place_b

    def probabilities(self, text: str, letters: int) -> tuple[np.ndarray, np.ndarray]:
        """``(date (K,), place (P,))`` probabilities of a ``norm.v1`` text with ``letters`` Greek
        letters, before any formula is read."""
        date_logits, place_logits = self.logits(text)
        band = self.band(letters)
        probs = softmax(date_logits, self.t_date[band])
        place_probs = softmax(place_logits, self.t_place[band])
        if self.neighbours is not None:  # the votes mixed in, the mixture tempered again
            date_votes, place_votes = self.neighbours.votes(text, len(probs), len(place_probs))
            place_probs = mix(place_probs, place_votes, self.mixing["place"])
            inscription = int(place_probs.argmax()) in self.inscription_places  # temperatures of its own
            t_date = self.t_inscription[0] if inscription and self.t_inscription[0] else self.t_mixed[0][band]
            probs = softmax(np.log(mix(probs, date_votes, self.mixing["date"]) + 1e-12), t_date)
            place_probs = softmax(
                np.log(place_probs + 1e-12), self.t_inscription[1] if inscription else self.t_mixed[1][band]
            )
        return probs, place_probs

    def years(self, probs: np.ndarray) -> np.ndarray:
        """``(Y,)`` probability of each year from :attr:`first_year`: the bins' ``probs`` ``(K,)``
        spread evenly over their years."""
        return np.repeat(probs / self.widths, self.widths)

    def reads_formulae(self, place_probs: np.ndarray) -> bool:
        """Whether a text of these place probabilities has its formulae read: the papyri's, not where
        its most probable place is an inscription's (their formulae and names are Egypt's)."""
        return int(place_probs.argmax()) not in self.inscription_places

    def predict(self, text: str, letters: int, top: int = TOP_PLACES) -> Attribution:
        """The date and the ``top`` places of a ``norm.v1`` text with ``letters`` Greek letters
        (see the module docstring for ``W801`` and ``W802``).

        Raises:
            AttributionError: ``E803`` probabilities that are not finite (arrays that overflow).
        """
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is told below, as E803
            probs, place_probs = self.probabilities(text, letters)
        for what, p in (("date", probs), ("place", place_probs)):
            if not np.isfinite(p).all():
                raise AttributionError("E803", what=what)
        years, formula, warnings = self.years(probs), None, []
        strange = self.letters.strange(text, letters) if self.letters is not None else ""
        if strange:  # nothing it learnt applies: flat places, the whole range
            warnings.append(Errors.W801.format(why=strange))
            probs, place_probs = np.full(len(probs), 1 / len(probs)), np.full(len(place_probs), 1 / len(place_probs))
            years = self.years(probs)
        elif not self.reads_formulae(place_probs):  # among inscriptions: perhaps from none of their regions
            regions = sorted(set(REGIONS.values()))
            warnings.append(Errors.W802.format(regions=", ".join(regions[:-1]) + " and " + regions[-1]))
        elif self.formulae is not None:  # a formula's year mixed in
            years, formula = self.formulae.mix(text, years, self.first_year)
            probs = np.add.reduceat(years, (self.edges[:-1] - self.first_year).astype(np.int64))
        year, low, high = date_summary(self.first_year + np.arange(len(years) + 1), years)
        order = np.argsort(-place_probs, kind="stable")[:top]
        places = [PlaceProb(place=self.places[i], prob=round(float(place_probs[i]), 4)) for i in order]
        found = districts(self.places, self.districts, place_probs) if self.districts else []
        date = AttributionDate(year=year, low=low, high=high, bins=[int(e) for e in self.edges], probs=probs.tolist())
        return Attribution(date=date, places=places, letters=letters, little=letters < FEW_LETTERS,
                           formula=Formula(**formula) if formula else None, warnings=warnings,
                           districts=[District.model_validate(d) for d in found],
                           model_fingerprint=self.fingerprint)  # fmt: skip
