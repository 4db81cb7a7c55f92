"""Training the attribution model on the prepared corpus's train split; calibration on validation.

    apollo-restore train-attribution --config configs/attribution.yaml out=src/apollo_restore/models/attribution
    run_config(AttributionTrainConfig(prepared="data/prepared", corpora="corpora", out="runs/attribution"))

1. **Examples** (:func:`examples`): every papyrus (``ddb``) and inscription of a split with a
   date or a place (:mod:`.labels`). A document is read as the artifact has it (the editor's
   supplements as lost letters ``-``) or, for half the training documents, with them filled in;
   each training document also gives one crop (a random window of 15 letters to its length, on a
   log scale), so that fragments are seen too. Texts are cut at :data:`MAX_CHARS`.
2. **Places**: a papyrus place, or an inscription's settlement, with at least
   :data:`MIN_PLACE_DOCS` training documents is a class; an inscription's rarer settlement is its
   region; a rarer papyrus place is no class (its documents train the date only, and count as a
   miss in evaluation).
3. **Fit** (torch, seeded): the embedding bag and the two heads (:mod:`.model`) by Adam; the
   date's target spreads evenly over the bins the true range meets; the epoch with the lowest
   validation loss is kept (at 128 dimensions the first: the second already overfits). The
   embedding is stored as int8 with a scale per row (:func:`~.model.quantise`).
4. **Neighbours** (:func:`neighbour_index`): the inverted index of the training documents' rare
   words (:mod:`.neighbours`), whose nearest documents' votes are mixed into the probabilities.
5. **Calibrate** on the validation documents and two crops of each (never a test document):
   per length band, the date temperature whose 80 % interval covers closest to 80 %, the place
   temperature of least negative log-likelihood; then the same two of the mixture with the
   neighbours' votes (a second softmax over its log), the dates over the texts placed among
   papyri; the texts placed first among inscriptions get one date and one place temperature of
   their own.
6. **Letters** (:mod:`.familiar`): the letter trigrams of the training documents, each length
   band's limit of surprise from the validation documents and crops.
7. **Formulae** (:mod:`.train_formulae`): the reader of dating formulae, fitted on the training
   documents and calibrated on the validation documents through the model above; its dated
   names are the words the DDB editions (:data:`DDB_ARCHIVE` in the corpora folder) capitalise.
8. **Districts** (:mod:`.districts`): each place class's nome (HGV's
   ``hgv-place-hierarchy.tsv`` in the corpora folder) or region, into the config.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from apollo_restore.attribution.districts import class_districts, read_hierarchy
from apollo_restore.attribution.familiar import fit_letters
from apollo_restore.attribution.features import FEATURES, featurise
from apollo_restore.attribution.folder import CONFIG_FILE, LABELS_FILE, WEIGHTS_FILE
from apollo_restore.attribution.labels import HGV_FILE, Label, label_of, read_labels
from apollo_restore.attribution.model import bag, quantise, softmax
from apollo_restore.attribution.neighbours import Neighbours, build, mix
from apollo_restore.attribution.train_formulae import add_formulae, proper_names
from apollo_restore.data.normalise import NORMALISER, letter_count
from apollo_restore.data.readers.ddb import capitalised_words
from apollo_restore.data.table import DOCUMENTS_FILE, load_documents
from apollo_restore.data.textindex import packed_fingerprint
from apollo_restore.errors import FileError
from apollo_restore.evaluate.attribution import covered
from apollo_restore.evaluate.metrics import ece
from apollo_restore.inputs import digest
from apollo_restore.schema.attribution import ATTRIBUTION_FORMAT
from apollo_restore.schema.training import AttributionTrainConfig

log = logging.getLogger(__name__)

SOURCES = ("ddb", "inscription")
#: HGV's nome and region of each place (corpora/; its nomes are copied into the config).
HIERARCHY_FILE = "hgv-place-hierarchy.tsv"
MAX_CHARS = 4000
MIN_PLACE_DOCS = 5
BIN_EDGES = list(range(-800, 901, 25))  # 68 bins of 25 years
#: The DDB archive in the corpora folder: how its editions write each word (proper names capitalised).
DDB_ARCHIVE = "ddb-trismegistos-2016.tar.xz"
#: Lower letter bounds of the calibration's length bands.
BANDS = (0, 30, 60, 120, 300)


@dataclass
class Example:
    """One text to learn from or score: its ``norm.v1`` text, letters, label and source."""

    doc: str
    source: str
    text: str
    letters: int
    label: Label


def mask_supplied(text: str, starts: list[int], ends: list[int]) -> str:
    """``text`` with each supplied span's letters as ``-`` (spaces kept)."""
    chars = list(text)
    for a, b in zip(starts, ends):
        for i in range(a, b):
            if chars[i] != " ":
                chars[i] = "-"
    return "".join(chars)


def crop(text: str, rng: np.random.Generator, shortest: int = 15) -> str:
    """A random window of ``text``: its length log-uniform from ``shortest`` characters to the whole."""
    if len(text) <= shortest:
        return text
    size = int(math.exp(rng.uniform(math.log(shortest), math.log(len(text)))))
    start = int(rng.integers(0, len(text) - size + 1))
    return text[start : start + size]


def examples(prepared: Path, corpora: Path, split: str, seed: int, crops: int, fill: float,
             labels: dict[tuple[str, str], Label] | None = None) -> list[Example]:  # fmt: skip
    """The labelled documents of ``split`` (see the module docstring): each as the artifact has it
    (with probability ``fill`` with the supplements filled in instead), plus ``crops`` crops
    (``labels``: :func:`~.labels.read_labels` of ``corpora``, read here when not given)."""
    rng = np.random.default_rng([seed, ["train", "validation", "test"].index(split)])
    labels = labels if labels is not None else read_labels(corpora)
    table = load_documents(prepared, split=split, sources=list(SOURCES))
    out: list[Example] = []
    cols = ("id", "source", "tm", "text", "supplied_start", "supplied_end")
    for doc, source, tm, text, starts, ends in zip(*(table.column(c).to_pylist() for c in cols)):
        label = label_of(labels, source, doc, tm)
        if label is None or not (label.dated or label.place):
            continue
        shown = text if rng.random() < fill else mask_supplied(text, starts, ends)
        shown = shown[:MAX_CHARS]
        out.append(Example(doc, source, shown, letter_count(shown), label))
        for _ in range(crops):
            piece = crop(shown, rng)
            n = letter_count(piece)
            if n >= 10:
                out.append(Example(doc + "#crop", source, piece, n, label))
    return out


def place_classes(train: list[Example]) -> list[str]:
    """The place classes (see the module docstring), most documents first."""
    counts = Counter(e.label.place for e in train if e.label.place and "#" not in e.doc)
    regions = {e.label.region for e in train if e.label.region}
    keep = [p for p, n in counts.most_common() if n >= MIN_PLACE_DOCS]
    return keep + sorted(regions - set(keep))


def place_target(label: Label, index: dict[str, int]) -> int:
    """The class of a label's place (its region's where the place is too rare), -1 where none."""
    if label.place in index:
        return index[label.place]
    return index.get(label.region, -1) if label.region else -1


def date_target(label: Label, edges: np.ndarray) -> np.ndarray | None:
    """The date's target: even over the bins ``[lo, hi]`` meets (``(K,)``), ``None`` undated."""
    if not label.dated:
        return None
    lo = min(max(label.lo, edges[0]), edges[-1] - 1)  # type: ignore[type-var]
    hi = min(max(label.hi, edges[0]), edges[-1] - 1)  # type: ignore[type-var]
    meets = (edges[:-1] <= hi) & (edges[1:] > lo)
    return meets / meets.sum()


def featurise_all(items: list[Example], buckets: int, cache: Path | None = None) -> tuple[np.ndarray, ...]:
    """``(ids, weights, offsets)`` of all texts, as an embedding bag reads them; with ``cache``
    (an ``.npz`` path) read from there when it holds these texts' features, else written there."""
    digest = _digest(items, buckets)
    if cache is not None and cache.exists():
        with np.load(cache) as saved:
            if str(saved["digest"]) == digest:
                return saved["ids"], saved["weights"], saved["offsets"]
    ids, weights, offsets = [], [], [0]
    for e in items:
        i, w = featurise(e.text, buckets)
        ids.append(i)
        weights.append(w)
        offsets.append(offsets[-1] + len(i))
    out = np.concatenate(ids), np.concatenate(weights), np.asarray(offsets, np.int64)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache.with_suffix(".tmp.npz"), ids=out[0], weights=out[1], offsets=out[2], digest=digest)
        cache.with_suffix(".tmp.npz").replace(cache)
    return out


def _digest(items: list[Example], buckets: int) -> str:
    """What a feature cache must match: the texts and the bucket count."""
    return digest(str(buckets), (e.text.encode() + b"\0" for e in items))


def fit(train: list[Example], valid: list[Example], places: list[str], buckets: int, dim: int, epochs: int,
        seed: int, lr: float = 1e-2, batch: int = 512, cache: Path | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """The fitted arrays (:mod:`.model`'s names), the epoch of least validation loss (``cache``:
    a folder keeping the texts' features between runs)."""
    import torch  # the training stack; prediction needs NumPy only

    torch.manual_seed(seed)
    torch.set_num_threads(1)  # small sparse steps: a second thread only contends
    edges = np.asarray(BIN_EDGES)
    index = {p: i for i, p in enumerate(places)}

    def tensors(items: list[Example], name: str) -> dict[str, Any]:
        ids, weights, offsets = featurise_all(items, buckets, cache / f"{name}.npz" if cache else None)
        dates = [date_target(e.label, edges) for e in items]
        date = np.stack([d if d is not None else np.zeros(len(edges) - 1) for d in dates]).astype(np.float32)
        return {"ids": torch.from_numpy(ids), "w": torch.from_numpy(weights), "off": offsets,
                "date": torch.from_numpy(date), "dated": torch.tensor([d is not None for d in dates]),
                "place": torch.tensor([place_target(e.label, index) for e in items])}  # fmt: skip

    started = time.monotonic()
    tr, va = tensors(train, "train"), tensors(valid, "validation")
    log.info("featurised %d + %d texts in %.0f s", len(train), len(valid), time.monotonic() - started)
    bag = torch.nn.EmbeddingBag(buckets, dim, mode="sum", sparse=True)  # only the rows a batch reads are updated
    torch.nn.init.normal_(bag.weight, std=0.05)
    date_head, place_head = torch.nn.Linear(dim, len(edges) - 1), torch.nn.Linear(dim, len(places))
    optimisers = [torch.optim.SparseAdam(list(bag.parameters()), lr=lr),
                  torch.optim.Adam([*date_head.parameters(), *place_head.parameters()], lr=lr)]  # fmt: skip

    def loss_of(t: dict[str, Any], rows: np.ndarray) -> torch.Tensor:
        starts, ends = t["off"][rows], t["off"][rows + 1]
        take = torch.from_numpy(np.concatenate([np.arange(a, b) for a, b in zip(starts, ends)]))
        offsets = torch.from_numpy(np.concatenate([[0], np.cumsum(ends - starts)[:-1]]))
        hidden = bag(t["ids"][take], offsets, per_sample_weights=t["w"][take])
        rows_t = torch.from_numpy(rows)
        dated, place = t["dated"][rows_t], t["place"][rows_t]
        date_loss = -(t["date"][rows_t] * torch.log_softmax(date_head(hidden), -1)).sum(-1)
        date_loss = (date_loss * dated).sum() / dated.sum().clamp(min=1)
        place_loss = torch.nn.functional.cross_entropy(place_head(hidden), place, ignore_index=-1, reduction="sum")
        place_loss = place_loss / (place >= 0).sum().clamp(min=1)
        return date_loss + place_loss

    rng = np.random.default_rng(seed)
    best, best_loss = None, float("inf")
    for epoch in range(epochs):
        order = rng.permutation(len(train))
        for k in range(0, len(order), batch):
            for optimiser in optimisers:
                optimiser.zero_grad()
            loss_of(tr, order[k : k + batch]).backward()
            for optimiser in optimisers:
                optimiser.step()
        with torch.no_grad():
            val = float(np.mean([loss_of(va, np.arange(k, min(k + 512, len(valid)))).item()
                                 for k in range(0, len(valid), 512)]))  # fmt: skip
        log.info("epoch %d: validation loss %.4f (%.0f s)", epoch + 1, val, time.monotonic() - started)
        if val < best_loss:
            best_loss = val
            best = {
                "embedding": bag.weight.detach().numpy().astype(np.float16),
                "date.weight": date_head.weight.detach().numpy().T.copy(),
                "date.bias": date_head.bias.detach().numpy().copy(),
                "place.weight": place_head.weight.detach().numpy().T.copy(),
                "place.bias": place_head.bias.detach().numpy().copy(),
            }
    assert best is not None
    return best


def raw_logits(arrays: dict[str, np.ndarray], items: list[Example], buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """``(date (n, K), place (n, P))`` logits of ``items`` before any temperature."""
    emb, scale = arrays["embedding"], arrays.get("embedding.scale")
    hidden = np.zeros((len(items), emb.shape[1]), np.float32)
    for n, e in enumerate(items):
        ids, w = featurise(e.text, buckets)
        if len(ids):
            hidden[n] = bag(emb, scale, ids, w)
    return hidden @ arrays["date.weight"] + arrays["date.bias"], hidden @ arrays["place.weight"] + arrays["place.bias"]


TEMPERATURES = np.geomspace(0.2, 20, 60)
#: Weights of the nearest documents' votes (:func:`~.neighbours.mix`), chosen on validation
#: (docs/notes/2026-12-01-attribution.md); ``NO_MIXING`` for a model without the index.
MIXING = {"date": 0.3, "place": 0.2}
NO_MIXING = {"date": 0.0, "place": 0.0}


def central_interval(edges: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` years of the central 80 % interval of each row of ``probs`` ``(n, K)``:
    :func:`~.model.date_summary`'s interval, for many rows at once (linear inside a bin, then the
    year that holds it)."""
    cum = np.cumsum(probs, axis=1)
    out = []
    for q in (0.1, 0.9):
        k = np.minimum((cum < q).sum(axis=1), probs.shape[1] - 1)  # the bin where q is reached
        before = np.where(k > 0, cum[np.arange(len(k)), k - 1], 0.0)
        inside = np.clip((q - before) / np.maximum(probs[np.arange(len(k)), k], 1e-12), 0, 1)
        out.append(np.floor(edges[k] + inside * (edges[k + 1] - edges[k])))
    return out[0], out[1]


def date_temperature(date_logits: np.ndarray, calib: list[Example], rows: np.ndarray) -> tuple[float, float]:
    """``(T, gap)``: the date temperature whose 80 % interval covers the true range of the dated
    texts among ``calib[rows]`` closest to 80 % (``gap``: how far it stays), of logits ``(n, K)``."""
    dated = [r for r in rows if calib[r].label.dated]
    if not dated:
        return 1.0, float("inf")
    edges = np.asarray(BIN_EDGES, float)
    lo = np.asarray([calib[r].label.lo for r in dated], float)
    hi = np.asarray([calib[r].label.hi for r in dated], float)
    best_t, best_gap = 1.0, float("inf")
    for t in TEMPERATURES:
        low, high = central_interval(edges, softmax(date_logits[dated], t))
        gap = abs(covered(low, high, lo, hi).mean() - 0.8)
        if gap < best_gap - 1e-9:
            best_t, best_gap = float(t), gap
    return best_t, best_gap


def temperatures(date_logits: np.ndarray, place_logits: np.ndarray, calib: list[Example],
                 places: list[str], dates_of: np.ndarray | None = None) -> tuple[list[float], list[float]]:  # fmt: skip
    """Per band of :data:`BANDS`: the date temperature (:func:`date_temperature`; over the texts
    where ``dates_of`` ``(n,)`` bool is true, all by default), the place temperature of least NLL,
    of logits ``(n, K)``, ``(n, P)`` of the texts ``calib``."""
    index = {p: i for i, p in enumerate(places)}
    band = np.searchsorted(BANDS, [e.letters for e in calib], side="right") - 1
    dates_of = np.ones(len(calib), bool) if dates_of is None else dates_of
    t_date, t_place = [], []
    for b in range(len(BANDS)):
        rows = np.flatnonzero(band == b)
        best_t, best_gap = date_temperature(date_logits, calib, rows[dates_of[rows]])
        t_date.append(best_t)
        targets = np.asarray([place_target(calib[r].label, index) for r in rows], np.int64)  # a band may be empty
        placed = rows[targets >= 0]
        y = targets[targets >= 0]
        nll = [-np.log(softmax(place_logits[placed], t)[np.arange(len(y)), y] + 1e-12).mean()
               for t in (TEMPERATURES if len(y) else [])]  # fmt: skip
        t_place.append(float(TEMPERATURES[int(np.argmin(nll))]) if len(y) else 1.0)
        log.info("band ≥%d letters: %d texts, T date %.2f (cover gap %.3f), T place %.2f",
                 BANDS[b], len(rows), t_date[-1], best_gap, t_place[-1])  # fmt: skip
    return t_date, t_place


def calibrate(arrays: dict[str, np.ndarray], calib: list[Example], places: list[str], buckets: int,
              mixing: dict[str, float] = NO_MIXING) -> dict[str, list[float]]:  # fmt: skip
    """The temperatures (:func:`temperatures`) of the model's logits (``date``, ``place``) and,
    where ``arrays`` hold the neighbours' index, of the log of the tempered probabilities with the
    votes mixed in by ``mixing`` (``mixed_date``, ``mixed_place``: the votes make the mixture
    sharper or wider than the model alone); ``calib``: validation documents and crops."""
    date_logits, place_logits = raw_logits(arrays, calib, buckets)
    t_date, t_place = temperatures(date_logits, place_logits, calib, places)
    out = {"date": t_date, "place": t_place}
    if "nn.words" not in arrays:
        return out
    near = Neighbours(arrays)
    band = np.searchsorted(BANDS, [e.letters for e in calib], side="right") - 1
    date_votes, place_votes = np.zeros_like(date_logits), np.zeros_like(place_logits)
    for n, e in enumerate(calib):
        date_votes[n], place_votes[n] = near.votes(e.text, date_logits.shape[1], place_logits.shape[1])
    mixed_date = mix(softmax(date_logits, np.asarray(t_date)[band, None]), date_votes, mixing["date"])
    mixed_place = mix(softmax(place_logits, np.asarray(t_place)[band, None]), place_votes, mixing["place"])
    kind = np.isin(mixed_place.argmax(axis=1), inscription_places(calib, places))
    # the bands' date temperatures over the texts placed among papyri; one of its own (all bands)
    # for those placed among inscriptions, whose intervals the papyri's would leave too narrow
    out["mixed_date"], out["mixed_place"] = temperatures(np.log(mixed_date + 1e-12), np.log(mixed_place + 1e-12),
                                                         calib, places, dates_of=~kind)  # fmt: skip
    t, gap = date_temperature(np.log(mixed_date + 1e-12), calib, np.flatnonzero(kind))
    out["mixed_date_inscription"] = [t]
    log.info("texts placed first among inscriptions: date T %.2f (cover gap %.3f)", t, gap)
    # and a place temperature of their own, of least top-1 ECE on the whole documents (papyri, most
    # of the texts, would otherwise set it; inscriptions' mass leaks to the many papyrus places:
    # under-confident)
    index = {p: i for i, p in enumerate(places)}
    targets = np.asarray([place_target(e.label, index) for e in calib], np.int64)
    whole = np.asarray(["#" not in e.doc for e in calib])  # the documents, not their crops
    rows = np.flatnonzero(kind & whole & (targets >= 0))
    logp, right = np.log(mixed_place[rows] + 1e-12), mixed_place[rows].argmax(axis=1) == targets[rows]
    gaps = [ece(softmax(logp, t).max(axis=1), right.astype(float)) for t in TEMPERATURES]  # by ECE: the target
    out["mixed_place_inscription"] = [float(TEMPERATURES[int(np.argmin(gaps))]) if len(rows) else 1.0]
    log.info("texts placed first among inscriptions: %d, T %.2f", len(rows), out["mixed_place_inscription"][0])
    return out


def inscription_places(items: list[Example], places: list[str]) -> list[int]:
    """The classes that are inscriptions' places (settlements and regions), by ``items``' labels."""
    index = {p: i for i, p in enumerate(places)}
    return sorted({place_target(e.label, index) for e in items if e.source == "inscription"} - {-1})


def save(arrays: dict[str, np.ndarray], config: dict[str, Any], out: Path) -> None:
    """Write the folder (:data:`~.model.WEIGHTS_FILE`, :data:`~.model.CONFIG_FILE`), each file atomically."""
    from safetensors.numpy import save_file

    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (WEIGHTS_FILE + ".tmp")
    save_file({k: np.ascontiguousarray(v) for k, v in arrays.items()}, str(tmp))
    tmp.replace(out / WEIGHTS_FILE)
    save_config(config, out)


def save_config(config: dict[str, Any], out: Path) -> None:
    """Write the folder's :data:`~.model.CONFIG_FILE` atomically."""
    tmp = out / (CONFIG_FILE + ".tmp")
    tmp.write_text(json.dumps(config, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out / CONFIG_FILE)


def train_attribution(prepared: Path, corpora: Path, out: Path, buckets: int = 2**17, dim: int = 128, epochs: int = 1,
                      seed: int = 0, fill: float = 0.5, cache: Path | None = None,
                      neighbours: bool = True) -> dict[str, Any]:  # fmt: skip
    """Build, fit, calibrate and write the model folder ``out``; returns its config."""
    started = time.monotonic()
    labels = read_labels(corpora)
    train = examples(prepared, corpora, "train", seed, crops=1, fill=fill, labels=labels)
    valid = examples(prepared, corpora, "validation", seed, crops=2, fill=0.0, labels=labels)
    valid_docs = [e for e in valid if "#" not in e.doc]
    places = place_classes(train)
    log.info("%d training texts, %d validation texts, %d places", len(train), len(valid), len(places))
    arrays = fit(train, valid_docs, places, buckets, dim, epochs, seed, cache=cache)
    arrays["embedding"], arrays["embedding.scale"] = quantise(arrays["embedding"])  # calibrated as shipped
    filled = examples(prepared, corpora, "train", seed, crops=0, fill=1.0, labels=labels)
    if neighbours:
        arrays |= neighbour_index(filled, places)
    mixing = MIXING if neighbours else NO_MIXING
    temperature = calibrate(arrays, valid, places, buckets, mixing)
    documents = [e for e in train if "#" not in e.doc]  # the dated parallels' labels
    config = {
        "format": ATTRIBUTION_FORMAT,
        "normaliser": NORMALISER,
        "features": FEATURES,
        "buckets": buckets,
        "dim": dim,
        "bin_edges": BIN_EDGES,
        "places": places,
        "bands": list(BANDS),
        "temperature": temperature,
        "neighbours": mixing,
        "inscription_places": inscription_places(train, places),
        "documents": {"rows": len(documents), "corpus": packed_fingerprint()},  # the packaged text index's corpus
        "trained": {"prepared": Path(prepared).name, "sources": list(SOURCES), "texts": len(train), "epochs": epochs,
                    "seed": seed, "fill": fill},  # the prepared corpus by name: no path of this machine
    }  # fmt: skip
    add_letters(arrays, config, filled, valid)
    add_formulae(arrays, config, filled, valid_docs, seed, proper=proper_names_of(corpora))
    add_districts(config, corpora)
    config["trained"]["seconds"] = round(time.monotonic() - started)  # the whole run, formulae too
    save(arrays, config, out)
    write_documents_labels(documents, out / LABELS_FILE)
    return config


def run_config(cfg: AttributionTrainConfig) -> dict[str, Any]:
    """:func:`train_attribution` of a checked config, its inputs checked before anything is read.

    Raises:
        FileError: ``E610``: no prepared corpus at ``cfg.prepared``; ``E611``: no labels at ``cfg.corpora``.
    """
    prepared, corpora = Path(cfg.prepared), Path(cfg.corpora)
    if not (prepared / DOCUMENTS_FILE).is_file():
        reason = f"it holds no {DOCUMENTS_FILE}" if prepared.is_dir() else "no such folder"
        raise FileError("E610", cfg.prepared, reason=reason, command=cfg.command)
    for name in (HGV_FILE, DDB_ARCHIVE, HIERARCHY_FILE):  # the papyri's labels, proper names, districts
        if not (corpora / name).exists():
            raise FileError("E611", cfg.corpora, reason=f"it holds no {name}" if corpora.is_dir() else "no such folder")
    cache = Path(cfg.cache) if cfg.cache else None
    return train_attribution(prepared, corpora, Path(cfg.out), cfg.buckets, cfg.dim, cfg.epochs, cfg.seed, cfg.fill,
                             cache, cfg.neighbours)  # fmt: skip


def neighbour_index(docs: list[Example], places: list[str]) -> dict[str, np.ndarray]:
    """The training documents' index (:func:`~.neighbours.build`): each of ``docs`` (with its
    supplements filled in), its place class and the bins of its date."""
    edges, index = np.asarray(BIN_EDGES), {p: i for i, p in enumerate(places)}
    first, last = [], []
    for e in docs:
        target = date_target(e.label, edges)
        meets = np.flatnonzero(target) if target is not None else np.asarray([-1])
        first.append(int(meets[0]))
        last.append(int(meets[-1]))
    return build([e.text for e in docs], [place_target(e.label, index) for e in docs], first, last)


def write_documents_labels(items: list[Example], path: Path) -> None:
    """The training documents' dates and places (``source``, ``id``, ``lo``, ``hi``, ``place``;
    xz TSV), for the dated parallels (:func:`~.attribute.dated_parallels`); written atomically."""
    import lzma

    lines = ["source\tid\tlo\thi\tplace"]
    for e in sorted(items, key=lambda e: (e.source, e.doc)):
        lo, hi = ("" if v is None else str(v) for v in (e.label.lo, e.label.hi))
        lines.append(f"{e.source}\t{e.doc}\t{lo}\t{hi}\t{e.label.place}")
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(lzma.compress(("\n".join(lines) + "\n").encode("utf-8")))
    tmp.replace(path)


def add_districts(config: dict[str, Any], corpora: Path) -> None:
    """Each place class's district (:func:`~.districts.class_districts`: HGV's nome, an
    inscription's region) into ``config["place_districts"]``, from :data:`HIERARCHY_FILE` in ``corpora``."""
    nomes = read_hierarchy(corpora / HIERARCHY_FILE)
    config["place_districts"] = class_districts(config["places"], nomes, set(config.get("inscription_places", [])))


def refit_districts(folder: Path, corpora: Path) -> list[str]:
    """Write the districts (:func:`add_districts`) anew into the model folder ``folder``'s config,
    its arrays untouched (seconds); returns them."""
    config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    add_districts(config, corpora)
    save_config(config, folder)
    return config["place_districts"]


def add_letters(arrays: dict[str, np.ndarray], config: dict[str, Any], train: list[Example],
                valid: list[Example]) -> None:  # fmt: skip
    """The letter model (:func:`~.familiar.fit_letters`) of the ``train`` texts, its limits from the
    ``valid`` documents and crops, added to ``arrays`` and ``config["letters"]``."""
    fitted, settings = fit_letters([e.text for e in train], [(e.text, e.letters) for e in valid], list(BANDS))
    log.info("letters: surprise limits %s (bits a letter, bands from %s letters)", settings["limits"], BANDS)
    arrays |= fitted
    config["letters"] = settings


def proper_names_of(corpora: Path) -> frozenset[str]:
    """The words the DDB editions of ``corpora`` capitalise (:func:`~.train_formulae.proper_names`).

    Raises:
        FileNotFoundError: the corpora folder holds no :data:`DDB_ARCHIVE`.
    """
    started = time.monotonic()
    names = proper_names(capitalised_words(corpora / DDB_ARCHIVE))
    log.info("%d proper names from the DDB editions (%.0f s)", len(names), time.monotonic() - started)
    return names


def refit_formulae(folder: Path, prepared: Path, corpora: Path, seed: int = 0) -> dict[str, Any]:
    """Fit the letter model (:func:`add_letters`) and the formula reader
    (:func:`~.train_formulae.add_formulae`) anew into the model folder ``folder``, leaving its
    other arrays as they are (as :func:`train_attribution` would give them at the end of its run);
    returns the reader's settings."""
    from safetensors.numpy import load_file

    labels = read_labels(corpora)
    arrays = load_file(str(folder / WEIGHTS_FILE))  # its old reader is replaced (add_formulae leaves it out)
    config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    filled = examples(prepared, corpora, "train", seed, crops=0, fill=1.0, labels=labels)
    valid = examples(prepared, corpora, "validation", seed, crops=2, fill=0.0, labels=labels)
    add_letters(arrays, config, filled, valid)
    add_formulae(arrays, config, filled, [e for e in valid if "#" not in e.doc], seed, proper=proper_names_of(corpora))
    save(arrays, config, folder)
    return config["formulae"]
