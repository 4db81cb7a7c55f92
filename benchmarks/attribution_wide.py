"""The wide place model against the shipped one, by length band (issue 62; validation by default):
an experiment that did not ship (docs/notes/2026-12-04-wide-places.md); everything it needs is here.

    python benchmarks/attribution_wide.py --prepared data/prepared --corpora corpora \
        --cache /work/data/62d [--alpha 1e-6 3e-6] [--epochs 5] [--split validation|test]

Trains on the train split only (each document as :func:`~apollo_restore.attribution.train.examples`
gives it, supplements filled in for half): TF-IDF of character 1–5-grams (:func:`grams`, min_df 2,
sublinear tf) and one-vs-rest SGD (modified Huber) over the shipped model's place classes. On the
split's papyri it mixes, per length band, the wide model's softmax with the shipped model's place
probabilities and the nearest documents' votes (weights and temperatures chosen on validation,
:func:`choose`), and prints top-1 / top-3 / ECE and the
first place's and first district's nome per band and weighted as the published test papyri are
(50–199 letters 35 %, 200–499 28 %, 500–999 27 %, ≥ 1,000 10 %). Everything slow is cached under
``--cache`` (examples, matrices, scores), so a rerun with another setting is quick. Seeded.

The model: each word of a ``norm.v1`` text (σ for ς) framed by spaces and cut into its character
n-grams of 1 to :data:`MAX_N` letters as scikit-learn's ``char_wb`` cuts them (those holding a lost
letter or gap left out); TF-IDF over the n-grams in ≥ :data:`MIN_DF` training documents; one-vs-rest
SGD over the places with ≥ :data:`MIN_DOCS` training documents (the rest one "elsewhere" class
left out); the weights as shipped would be (int8 columns, :func:`quantise_columns`). The mixture
per band of :data:`BANDS`: the wide softmax (least-NLL temperature, or 2, 4, 8× flatter) mixed
linearly with the bag's places and the votes (:data:`GRID`), a final temperature of least ECE;
the most right first among settings with ECE ≤ :data:`MAX_ECE`. Needs scikit-learn (``[train]``).
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
from pathlib import Path
from typing import Any

import numpy as np

from apollo_restore.attribution.districts import class_districts, district_of, district_probs, nome_of, read_hierarchy
from apollo_restore.attribution.features import _words_of
from apollo_restore.attribution.labels import read_labels
from apollo_restore.attribution.model import AttributionModel
from apollo_restore.attribution.train import examples, place_target
from apollo_restore.data.normalise import GAP_CHAR, UNKNOWN_GAP
from apollo_restore.evaluate.attribution import ece

#: Longest character n-gram (letters, the framing spaces counted).
MAX_N = 5
#: Documents an n-gram must occur in to be in the vocabulary.
MIN_DF = 2
#: Training documents a place needs to be one of the wide model's classes (the rest: the bag's).
MIN_DOCS = 10

#: Lower letter bounds of the place mixture's length bands.
BANDS = (0, 50, 200, 500, 1000)
#: Share of each band (≥ 50 letters) among the published test papyri (the weighted figures).
WEIGHTS = {1: 0.35, 2: 0.28, 3: 0.27, 4: 0.10}
TEMPERATURES = np.geomspace(0.01, 10, 70)
#: Final temperatures tried, and the top-1 ECE a band's setting must keep on validation (the
#: most right first among those that do; the least ECE where none does).
FINAL, MAX_ECE = np.geomspace(0.25, 4, 25), 0.04
#: ``(bag, votes)`` weights tried; the wide model has the rest (the bag's at least 0.05: the places
#: the wide model has no column for have only the bag's and the votes' probability).
GRID = [(a, b) for a in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5) for b in (0.0, 0.1, 0.2, 0.3)]


def grams(text: str) -> list[str]:
    """The character n-grams (1 … :data:`MAX_N`) of each space-framed word of ``text``, in
    scikit-learn's ``char_wb`` order (a word shorter than ``n`` gives itself once), those holding a
    lost letter or gap left out."""
    out: list[str] = []
    for word in _words_of(text):
        w = f" {word} "
        size = len(w)
        for n in range(1, MAX_N + 1):
            out.extend(w[i : i + n] for i in range(max(1, size - n + 1)))
            if size <= n:
                break
    return [g for g in out if GAP_CHAR not in g and UNKNOWN_GAP not in g]


def quantise_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(int8 (V, P), float32 scale (P,))`` of a float weight matrix: each column scaled so that
    its largest magnitude is 127."""
    top = np.abs(weight).max(axis=0)
    scale = np.where(top > 0, top / 127, 1.0).astype(np.float32)
    return np.clip(np.round(weight / scale), -127, 127).astype(np.int8), scale


def softmax(z: np.ndarray, t: float) -> np.ndarray:
    """Row-wise ``softmax(z / t)`` of scores ``z`` ``(..., P)``."""
    z = z / t
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def combine(wide: np.ndarray, bag: np.ndarray, votes: np.ndarray, weights: tuple[float, float],
            t_final: float) -> np.ndarray:  # fmt: skip
    """``softmax(log((1 − a − b)·wide + a·bag + b·votes) / t_final)`` row by row (all ``(..., P)``
    probabilities; where a row of ``votes`` is zeros, its weight goes to the wide model)."""
    a, b = weights
    has = votes.sum(axis=-1, keepdims=True) > 0
    b_eff = np.where(has, b, 0.0)
    mixed = (1 - a - b_eff) * wide + a * bag + b_eff * votes
    return softmax(np.log(mixed + 1e-12), t_final)


def vectoriser() -> Any:
    """An unfitted ``TfidfVectorizer`` over :func:`grams` (see the module docstring)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(analyzer=grams, min_df=MIN_DF, sublinear_tf=True, dtype=np.float32)


def fit_wide(x: Any, targets: np.ndarray, classes: int, alpha: float, epochs: int, seed: int,
             min_docs: int = MIN_DOCS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """``(coef (V, C) float32, bias (C,) float32, covered (C,) int64)``: one-vs-rest SGD (modified
    Huber) on the rows of ``x`` (sparse ``(n, V)``) whose ``targets`` ``(n,)`` are ≥ 0, over the
    ``C`` classes (of ``classes``) with at least ``min_docs`` rows, ``covered``; the rows of the
    rarer classes are one more class, "elsewhere", whose weights are left out."""
    from sklearn.linear_model import SGDClassifier

    keep = np.flatnonzero(targets >= 0)
    counts = np.bincount(targets[keep], minlength=classes)
    covered = np.flatnonzero(counts >= min_docs)
    label = np.where(np.isin(targets[keep], covered), targets[keep], classes)  # `classes`: the rarer ones
    model = SGDClassifier(loss="modified_huber", alpha=alpha, max_iter=epochs, tol=None, random_state=seed)
    model.fit(x[keep], label)
    seen = model.classes_.astype(np.int64)
    if len(seen) == 2:  # scikit-learn fits one column for two classes: the second's score
        coef = np.stack([-model.coef_[0], model.coef_[0]], axis=1)
        bias = np.asarray([-model.intercept_[0], model.intercept_[0]])
    else:
        coef, bias = model.coef_.T, model.intercept_
    inside = seen < classes
    return coef[:, inside].astype(np.float32), bias[inside].astype(np.float32), seen[inside]


def band_of(letters: np.ndarray) -> np.ndarray:
    """Index into :data:`BANDS` of each text's letters ``(n,)``."""
    return np.searchsorted(BANDS, letters, side="right") - 1


def _nll(probs: np.ndarray, y: np.ndarray) -> float:
    return float(-np.log(probs[np.arange(len(y)), y] + 1e-12).mean())


def _ece(probs: np.ndarray, y: np.ndarray) -> float:
    """Top-1 ECE (:func:`~apollo_restore.evaluate.attribution.ece`) of ``probs`` ``(n, P)``."""
    return ece(probs.max(axis=1), (probs.argmax(axis=1) == y).astype(float))


def choose(scores: np.ndarray, parts: dict[str, np.ndarray], items: list[Any], places: list[str]) -> dict[str, Any]:
    """Per band: ``t_wide``, ``weights`` ``(bag, votes)`` and ``t_final`` (see the module
    docstring), chosen on ``items``' papyri (``scores`` ``(n, P)``; ``parts``: ``probs`` and
    ``votes`` ``(n, P)`` of the bag model)."""
    y = true_classes(items, places)
    band = band_of(np.asarray([e.letters for e in items]))
    papyri = np.asarray([e.source == "ddb" for e in items])
    out: dict[str, Any] = {"bands": list(BANDS), "t_wide": [], "weights": [], "t_final": []}
    for b in range(len(BANDS)):
        rows = np.flatnonzero((band == b) & papyri & (y >= 0))
        if not len(rows):
            out["t_wide"].append(1.0), out["weights"].append([0.0, 0.0]), out["t_final"].append(1.0)
            continue
        yb = y[rows]
        every = np.flatnonzero((band == b) & papyri & (y != -2))  # with those whose place is no class: misses
        own = np.isfinite(scores[rows, yb])  # the true place is one of the wide model's
        t_nll = float(min(TEMPERATURES, key=lambda t: _nll(softmax(scores[rows[own]], t), yb[own])))
        found = []  # (top-1, top-3, ECE, t_wide, weights, t_final)
        for t in (t_nll, 2 * t_nll, 4 * t_nll, 8 * t_nll):  # a flatter wide softmax calibrates better
            wide = softmax(scores[every], t)
            for w in GRID:
                p = combine(wide, parts["probs"][every], parts["votes"][every], w, 1.0)
                order = np.argsort(-p, axis=1)[:, :3]
                t_final = float(min(FINAL, key=lambda tf: _ece(softmax(np.log(p + 1e-12), tf), y[every])))
                gap = _ece(softmax(np.log(p + 1e-12), t_final), y[every])
                found.append((float((order[:, 0] == y[every]).mean()),
                              float((order == y[every][:, None]).any(axis=1).mean()), gap, t, w, t_final))  # fmt: skip
        calibrated = [f for f in found if f[2] <= MAX_ECE] or [min(found, key=lambda f: f[2])]
        _, _, _, t_wide, best, t_final = max(calibrated, key=lambda f: (f[0], f[1]))
        out["t_wide"].append(t_wide)
        out["weights"].append([float(best[0]), float(best[1])])
        out["t_final"].append(t_final)
    return out


def mixture(scores: np.ndarray, parts: dict[str, np.ndarray], settings: dict[str, Any],
            letters: np.ndarray | None = None, items: list[Any] | None = None) -> np.ndarray:  # fmt: skip
    """The mixed place probabilities ``(n, P)`` of ``scores`` ``(n, P)`` and ``parts`` under
    ``settings`` (:func:`choose`), each row by its band (``letters`` ``(n,)``, or ``items``')."""
    if letters is None:
        letters = np.asarray([e.letters for e in items or []])
    band = band_of(letters)
    out = np.zeros_like(parts["probs"], dtype=np.float64)
    for b in range(len(BANDS)):
        rows = np.flatnonzero(band == b)
        wide = softmax(scores[rows], settings["t_wide"][b])
        out[rows] = combine(wide, parts["probs"][rows], parts["votes"][rows],
                            tuple(settings["weights"][b]), settings["t_final"][b])  # fmt: skip
    return out


def true_classes(items: list[Any], places: list[str]) -> np.ndarray:
    """Each item's true place class (``score_documents``' rule: its place, else its region), −1 none."""
    index = {p: i for i, p in enumerate(places)}
    out = []
    for e in items:
        place = e.label.place if e.label.place in index or e.label.region not in index else e.label.region
        out.append(index.get(place, -1) if place else -2)
    return np.asarray(out)


def evaluate(probs: np.ndarray, items: list[Any], places: list[str], nomes: dict[str, str], source: str,
             inscription_classes: set[int]) -> str:  # fmt: skip
    """A Markdown table of places top-1 / top-3 / ECE, the first place in the right nome (HGV's
    record; a place without one its own) and the first district right with its ECE (the answer's
    districts), per band and weighted (:data:`WEIGHTS`), over ``items`` of ``source`` with a place
    (a true place the model cannot name counts as a miss)."""
    y = true_classes(items, places)
    truth = [e.label.place if y[i] == -1 else places[y[i]] if y[i] >= 0 else "" for i, e in enumerate(items)]
    of = class_districts(places, nomes, inscription_classes)
    keep = np.flatnonzero(np.asarray([e.source == source for e in items]) & (y != -2))
    band = band_of(np.asarray([e.letters for e in items]))
    first = probs.argmax(axis=1)
    order = np.argsort(-probs, axis=1)[:, :3]
    names, dprobs = district_probs(probs, of)
    lines = ["| band | texts | top-1 | top-3 | ECE | first place's nome | first district | district ECE |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    rows_by_band = {}
    for b in range(len(BANDS)):
        rows = keep[band[keep] == b]
        if not len(rows):
            continue
        top1 = first[rows] == y[rows]
        top3 = (order[rows] == y[rows, None]).any(axis=1)
        nome = np.asarray([nome_of(places[first[r]], nomes) == nome_of(truth[r], nomes) for r in rows])
        true_d = [of[y[r]] if y[r] >= 0 else district_of(truth[r], nomes, source == "inscription") for r in rows]
        dfirst = dprobs[rows].argmax(axis=1)
        dright = np.asarray([names[d] == t for d, t in zip(dfirst, true_d)])
        stats = [len(rows), top1.mean(), top3.mean(), ece(probs[rows].max(axis=1), top1.astype(float)),
                 nome.mean(), dright.mean(), ece(dprobs[rows].max(axis=1), dright.astype(float))]  # fmt: skip
        rows_by_band[b] = stats
        label = f"≥{BANDS[b]}" if b == len(BANDS) - 1 else f"{BANDS[b]}–{BANDS[b + 1] - 1}"
        lines.append(f"| {label} | {stats[0]} | " + " | ".join(f"{v:.3f}" for v in stats[1:]) + " |")
    if all(b in rows_by_band for b in WEIGHTS):
        w = np.asarray([WEIGHTS[b] for b in WEIGHTS])
        avg = (w[:, None] * np.asarray([rows_by_band[b][1:] for b in WEIGHTS])).sum(axis=0)
        lines.append("| weighted ≥ 50 | – | " + " | ".join(f"{v:.3f}" for v in avg) + " |")
    return "\n".join(lines)


def cached(path: Path, make):  # noqa: ANN001, ANN201 - a pickle of whatever make() returns
    if path.exists():
        return pickle.loads(path.read_bytes())
    value = make()
    path.write_bytes(pickle.dumps(value, protocol=5))
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, required=True)
    parser.add_argument("--corpora", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--alpha", type=float, nargs="+", default=[1e-6])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--stop-after", choices=("vectorise", "fit"), default=None)
    parser.add_argument("--by-similarity", action="store_true",
                        help="also: top-1 by the cosine of the nearest training document")  # fmt: skip
    args = parser.parse_args()
    import scipy.sparse as sp

    args.cache.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    labels = cached(args.cache / "labels.pkl", lambda: read_labels(args.corpora))

    def split(name: str, fill: float) -> list:
        make = lambda: examples(args.prepared, args.corpora, name, 0, crops=0, fill=fill, labels=labels)  # noqa: E731
        return cached(args.cache / f"{name}.pkl", make)

    train, valid = split("train", 0.5), split("validation", 0.0)
    evals = valid if args.split == "validation" else split("test", 0.0)
    print(f"examples: {len(train)} train, {len(valid)} validation ({time.monotonic() - t0:.0f} s)", flush=True)
    shipped = AttributionModel.load()
    places = shipped.places
    index = {p: i for i, p in enumerate(places)}
    if not (args.cache / "vec.pkl").exists():
        vec = vectoriser()
        x = vec.fit_transform([e.text for e in train])
        sp.save_npz(args.cache / "x-train.npz", x)
        (args.cache / "vec.pkl").write_bytes(pickle.dumps(vec, protocol=5))
    vec = pickle.loads((args.cache / "vec.pkl").read_bytes())
    for name, items in (("validation", valid), (args.split, evals)):
        if not (args.cache / f"x-{name}.npz").exists():
            sp.save_npz(args.cache / f"x-{name}.npz", vec.transform([e.text for e in items]))
    print(f"vocabulary {len(vec.idf_)} n-grams ({time.monotonic() - t0:.0f} s)", flush=True)
    if args.stop_after == "vectorise":
        return
    y = np.asarray([place_target(e.label, index) for e in train])
    for alpha in args.alpha:
        tag = f"a{alpha:g}-e{args.epochs}"
        if not (args.cache / f"coef-{tag}.npz").exists():
            x = sp.load_npz(args.cache / "x-train.npz")
            coef, bias, covered = fit_wide(x, y, len(places), alpha, args.epochs, seed=0)
            np.savez(args.cache / f"coef-{tag}.npz", coef=coef, bias=bias, covered=covered)
            print(f"fitted {tag} ({time.monotonic() - t0:.0f} s)", flush=True)
    if args.stop_after == "fit":
        return
    hierarchy = read_hierarchy(args.corpora / "hgv-place-hierarchy.tsv")
    parts = {}
    for name, items in (("validation", valid), (args.split, evals)):
        parts[name] = cached(args.cache / f"shipped-{name}.pkl", lambda items=items: shipped_parts(shipped, items))
    for alpha in args.alpha:
        tag = f"a{alpha:g}-e{args.epochs}"
        with np.load(args.cache / f"coef-{tag}.npz") as saved:
            coef, bias, covered = saved["coef"], saved["bias"], saved["covered"]
        scores = {}
        for name in parts:
            scores[name] = np.full((len(parts[name]["probs"]), len(places)), -np.inf, np.float32)
            scores[name][:, covered] = sp.load_npz(args.cache / f"x-{name}.npz") @ coef + bias
        q, scale = quantise_columns(coef)  # as shipped: int8 columns (float16 IDF: within its rounding)
        xq = sp.load_npz(args.cache / f"x-{args.split}.npz")
        same = ((xq @ q.astype(np.float32)) * scale + bias).argmax(axis=1) == (xq @ coef + bias).argmax(axis=1)
        print(f"int8 weights: the same first place as float32 for {same.mean():.4f} of {args.split} texts")
        settings = choose(scores["validation"], parts["validation"], valid, places)
        print(f"\n## alpha {alpha:g}, {args.epochs} epochs: settings chosen on validation")
        print(json.dumps(settings))
        mixed = mixture(scores[args.split], parts[args.split], settings, items=evals)
        for title, probs in (("shipped", parts[args.split]["probs"]), ("wide mixture", mixed)):
            print(f"\n### {title} ({args.split} papyri)")
            print(evaluate(probs, evals, places, hierarchy, "ddb", set(shipped.inscription_places)))
        print(f"\n### wide mixture ({args.split} inscriptions)")
        print(evaluate(mixed, evals, places, hierarchy, "inscription", set(shipped.inscription_places)))
        if args.by_similarity:
            near = cached(args.cache / f"nearest-{args.split}.pkl", lambda: nearest(args.cache, args.split))
            wide = softmax(scores[args.split], 2.0)
            print(f"\n### {args.split} papyri ≥ 50 letters by their nearest training document's cosine: top-1")
            print(
                "| cosine | texts | shipped | wide alone | wide mixture | char neighbours (k 20) |\n"
                "|---|---:|---:|---:|---:|---:|"
            )
            y = true_classes(evals, places)
            rows0 = np.asarray([e.source == "ddb" and e.letters >= 50 for e in evals]) & (y != -2)
            for lo, hi in ((0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 1.01)):
                r = rows0 & (near["cosine"] >= lo) & (near["cosine"] < hi)
                cells = [(p[r].argmax(axis=1) == y[r]).mean() for p in
                         (parts[args.split]["probs"], wide, mixed, near["votes"] + 1e-9 * wide)]  # fmt: skip
                print(f"| {lo}–{min(hi, 1)} | {r.sum()} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    print(f"\n({time.monotonic() - t0:.0f} s; weights {WEIGHTS}, bands {BANDS})")


def nearest(cache: Path, split: str, k: int = 20, max_df: int = 2000) -> dict[str, np.ndarray]:
    """Each text's nearest training documents by the cosine of their TF-IDF vectors over the rarer
    n-grams (in at most ``max_df`` training documents): ``cosine`` ``(n,)`` of the nearest, and
    ``votes`` ``(n, P)``: the ``k`` nearest's place classes weighted by their cosines, summing to 1."""
    import scipy.sparse as sp
    from sklearn.preprocessing import normalize

    train = pickle.loads((cache / "train.pkl").read_bytes())
    places = AttributionModel.load().places
    index = {p: i for i, p in enumerate(places)}
    y = np.asarray([place_target(e.label, index) for e in train])
    xt = sp.load_npz(cache / "x-train.npz").tocsc()
    keep = sp.diags((np.diff(xt.indptr) <= max_df).astype(np.float32))
    xt = normalize((xt @ keep).tocsr()).T.tocsr()
    xv = normalize((sp.load_npz(cache / f"x-{split}.npz") @ keep).tocsr())
    cosine, votes = np.zeros(xv.shape[0]), np.zeros((xv.shape[0], len(places)), np.float32)
    for a in range(0, xv.shape[0], 300):
        s = (xv[a : a + 300] @ xt).toarray()
        top = np.argpartition(-s, k, axis=1)[:, :k]
        sims = np.take_along_axis(s, top, 1)
        cosine[a : a + len(s)] = sims.max(axis=1)
        for j in range(k):
            ok = y[top[:, j]] >= 0
            np.add.at(votes, (np.arange(a, a + len(s))[ok], y[top[ok, j]]), sims[ok, j])
    return {"cosine": cosine, "votes": votes / np.maximum(votes.sum(axis=1, keepdims=True), 1e-12)}


def shipped_parts(model: AttributionModel, items: list) -> dict[str, np.ndarray]:
    """The shipped model's place probabilities ``probs`` and the nearest documents' votes
    ``votes`` (both ``(n, P)``) of each item."""
    n, p = len(items), len(model.places)
    probs, votes = np.zeros((n, p), np.float32), np.zeros((n, p), np.float32)
    for i, e in enumerate(items):
        probs[i] = model.probabilities(e.text, e.letters)[1]
        votes[i] = model.neighbours.votes(e.text, len(model.edges) - 1, p)[1]
    return {"probs": probs, "votes": votes}


if __name__ == "__main__":
    main()
