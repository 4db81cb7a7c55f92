"""Fitting the wide place model (:mod:`.wide`) with scikit-learn (the ``[train]`` extra).

    from apollo_restore.attribution.train_wide import vectoriser, fit_wide, wide_arrays
    vec = vectoriser().fit(train_texts)              # vocabulary and IDF of the training documents
    coef, bias, covered = fit_wide(vec.transform(texts), targets, classes=340, alpha=1e-6, epochs=5, seed=0)
    arrays = wide_arrays(vec, coef, bias, covered)    # the folder's ``wide.*`` arrays

The vectoriser is scikit-learn's TF-IDF over :func:`~.wide.grams` (n-grams in at least two
training documents, sublinear term frequency, L2); the classifier one-vs-rest SGD with the
modified Huber loss, seeded, over the places with at least :data:`MIN_DOCS` training documents.
Prediction reads the arrays in NumPy only (:class:`~.wide.WidePlaces`).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from apollo_restore.attribution.calibrate_wide import choose
from apollo_restore.attribution.districts import class_districts
from apollo_restore.attribution.model import AttributionModel
from apollo_restore.attribution.wide import grams, quantise_columns, vocabulary_array

log = logging.getLogger(__name__)

#: Documents an n-gram must occur in to be in the vocabulary.
MIN_DF = 2
#: Training documents a place needs to be one of the wide model's classes (the rest: the bag's).
MIN_DOCS = 10
#: The SGD's L2 penalty and epochs (chosen on validation: docs/notes/2026-12-04-wide-places.md).
ALPHA, EPOCHS = 3e-5, 5


def vectoriser() -> Any:
    """An unfitted ``TfidfVectorizer`` over :func:`~.wide.grams` (see the module docstring)."""
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


def wide_arrays(vec: Any, coef: np.ndarray, bias: np.ndarray, covered: np.ndarray) -> dict[str, np.ndarray]:
    """The ``wide.*`` arrays (:mod:`.wide`) of a fitted vectoriser and classifier (``covered``:
    the place class of each of its columns)."""
    vocab = vec.get_feature_names_out().tolist()  # sorted; column i is vocab[i]
    weight, scale = quantise_columns(coef)
    return {
        "wide.vocab": vocabulary_array(vocab),
        "wide.idf": vec.idf_.astype(np.float16),
        "wide.weight": weight,
        "wide.scale": scale,
        "wide.bias": bias.astype(np.float32),
        "wide.classes": covered.astype(np.int16),
    }


def add_wide(arrays: dict[str, np.ndarray], config: dict[str, Any], train: list[Any], targets: np.ndarray,
             valid: list[Any], nomes: dict[str, str], alpha: float = ALPHA, epochs: int = EPOCHS,
             seed: int = 0) -> None:  # fmt: skip
    """Fit the wide model on the training documents ``train`` (their place classes ``targets``
    ``(n,)``, −1 none) and add its arrays to ``arrays``; choose its mixture with the folder's bag
    model per length band on the validation documents ``valid`` (:func:`~.calibrate_wide.choose`,
    as shipped: the quantised weights) into ``config["wide"]``; and each place class's district
    (:mod:`.districts`, from HGV's ``nomes``) into ``config["place_districts"]``."""
    import time

    started = time.monotonic()
    for key in [k for k in arrays if k.startswith("wide.")]:  # a refit replaces the old model
        del arrays[key]
    config.pop("wide", None)
    vec = vectoriser()
    x = vec.fit_transform([e.text for e in train])
    coef, bias, covered = fit_wide(x, targets, len(config["places"]), alpha, epochs, seed)
    del x
    log.info("wide model: %d n-grams, %d places, fitted in %.0f s", len(vec.idf_), len(covered),
             time.monotonic() - started)  # fmt: skip
    arrays |= wide_arrays(vec, coef, bias, covered)
    model = AttributionModel(arrays, config)
    p = len(model.places)
    scores, bag, votes = (np.zeros((len(valid), p), np.float32) for _ in range(3))
    for i, e in enumerate(valid):
        _, bag[i], votes[i] = model._bag(e.text, e.letters)
        scores[i] = model.wide.scores(e.text, p)  # type: ignore[union-attr]
    config["wide"] = choose(scores, {"probs": bag, "votes": votes}, valid, model.places) | {
        "alpha": alpha, "epochs": epochs, "n_grams": len(vec.idf_)}  # fmt: skip
    config["place_districts"] = class_districts(model.places, nomes, set(config.get("inscription_places", [])))
    log.info("wide model's mixture: %s (%.0f s)", config["wide"], time.monotonic() - started)
