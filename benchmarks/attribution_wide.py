"""The wide place model against the shipped one, by length band (issue 62; validation by default).

    python benchmarks/attribution_wide.py --prepared data/prepared --corpora corpora \
        --cache /work/data/62d [--alpha 1e-6 3e-6] [--epochs 5] [--split validation|test]

Trains on the train split only (each document as :func:`~apollo_restore.attribution.train.examples`
gives it, supplements filled in for half): TF-IDF of character 1–5-grams (:mod:`.wide`, min_df 2,
sublinear tf) and one-vs-rest SGD (modified Huber) over the shipped model's place classes. On the
split's papyri it mixes, per length band, the wide model's softmax with the shipped model's place
probabilities and the nearest documents' votes (weights and temperatures chosen on validation,
:func:`~apollo_restore.attribution.calibrate_wide.choose`), and prints top-1 / top-3 / ECE and the
first place's and first district's nome per band and weighted as the published test papyri are
(50–199 letters 35 %, 200–499 28 %, 500–999 27 %, ≥ 1,000 10 %). Everything slow is cached under
``--cache`` (examples, matrices, scores), so a rerun with another setting is quick. Seeded.
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
from pathlib import Path

import numpy as np

from apollo_restore.attribution.calibrate_wide import BANDS, WEIGHTS, choose, evaluate, mixture, true_classes
from apollo_restore.attribution.districts import read_hierarchy
from apollo_restore.attribution.labels import read_labels
from apollo_restore.attribution.model import AttributionModel
from apollo_restore.attribution.train import examples, place_target
from apollo_restore.attribution.wide import quantise_columns, softmax


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

    from apollo_restore.attribution.train_wide import fit_wide, vectoriser

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
