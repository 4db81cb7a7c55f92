"""Fitting the formula reader (:mod:`.formulae`) on the train split, its weight on validation.

    from apollo_restore.attribution.train_formulae import fit_formulae, choose_weight
    arrays, config = fit_formulae(train_examples, seed=0)
    config |= choose_weight(Formulae(arrays, config), model, validation_examples)

1. **Eras** (:func:`learn_eras`): the readings of the training papyri dated to the year
   (HGV's range at most :data:`EXACT` years wide); each document's readings share one vote among
   them, cast for ``year − value``. A value with at least :data:`MIN_ERA_DOCS` votes over itself
   and its two neighbours, and more than either neighbour, is an era.
2. **Classes** (:func:`samples`): a reading's class is the era within a year of
   ``year − value``, else ``none``.
3. **Fit**: softmax regression over the features seen at least :data:`MIN_FEATURE` times (torch,
   Adam, seeded, L2), stored as float16.
4. **Weight** (:func:`choose_weight`): the share a sure reading takes and the exponent of the
   bag's probability, the pair of greatest mean log-probability of the true date range over the
   validation papyri that have a reading (never a test document).
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from apollo_restore.attribution.formulae import Formulae, evidence, features, readings, words_of
from apollo_restore.attribution.model import AttributionModel

log = logging.getLogger(__name__)

#: A document dated within this many years (HGV's range) teaches eras and classes.
EXACT = 2
MIN_ERA_DOCS = 8
MIN_FEATURE = 3
#: A dated name: a word of at least :data:`NAME_LETTERS` letters in at least :data:`NAME_MIN_DOCS`
#: training papyri dated to the year (and in at most :data:`NAME_MAX_DOCS` dated ones), whose
#: dated papyri fall within a year of their median year at least :data:`NAME_AGREE` of the time.
NAME_LETTERS, NAME_MIN_DOCS, NAME_MAX_DOCS, NAME_AGREE = 4, 2, 200, 0.8
PRIORS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)


def _exact(items: list[Any]) -> list[tuple[Any, float]]:
    """The papyri of ``items`` dated to the year, with their year (the range's middle)."""
    return [(e, (e.label.lo + e.label.hi) / 2) for e in items
            if e.source == "ddb" and e.label.dated and e.label.hi - e.label.lo <= EXACT]  # fmt: skip


def learn_eras(items: list[Any]) -> list[int]:
    """The eras (``year − regnal year``, ascending) of the training papyri ``items``."""
    votes: Counter[int] = Counter()
    for e, year in _exact(items):
        found = readings(e.text)
        for r in found:
            votes[round(year - r.value)] += 1 / len(found)
    peaks = []
    for era, n in votes.items():
        mass = votes[era - 1] + n + votes[era + 1]
        if mass >= MIN_ERA_DOCS and n > votes[era - 1] and n >= votes[era + 1]:
            peaks.append(era)
    return sorted(peaks)


def learn_names(items: list[Any]) -> dict[str, int]:
    """The dated names (see :data:`NAME_AGREE`) of the training papyri ``items``: word → year."""
    seen: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for e in items:
        if e.source == "ddb" and e.label.dated:
            for w in set(words_of(e.text)):
                if len(w) >= NAME_LETTERS and "-" not in w and "…" not in w:
                    seen[w].append((e.label.lo, e.label.hi))
    out = {}
    for w, ranges in seen.items():
        exact = [(a + b) / 2 for a, b in ranges if b - a <= EXACT]
        if len(exact) < NAME_MIN_DOCS or len(ranges) > NAME_MAX_DOCS:
            continue
        year = round(float(np.median(exact)))
        if sum(a - 1 <= year <= b + 1 for a, b in ranges) >= NAME_AGREE * len(ranges):
            out[w] = year
    return out


def samples(items: list[Any], eras: list[int]) -> tuple[list[list[str]], list[int], dict[int, Counter[int]]]:
    """``(features, class, values seen per era)`` of every reading of the papyri dated to the year;
    class ``len(eras)`` is ``none``."""
    table = np.asarray(eras)
    feats, classes, values = [], [], defaultdict(Counter)
    for e, year in _exact(items):
        words = words_of(e.text)
        for r in readings(e.text):
            gap = np.abs(year - r.value - table)
            k = int(gap.argmin())
            cls = k if gap[k] <= 1 else len(eras)
            if cls < len(eras):
                values[cls][r.value] += 1
            feats.append(features(words, r))
            classes.append(cls)
    return feats, classes, values


def fit_formulae(items: list[Any], seed: int, epochs: int = 100,
                 l2: float = 1e-4) -> tuple[dict[str, np.ndarray], dict[str, Any]]:  # fmt: skip
    """The reader's arrays (``formula.weight``, ``formula.bias``) and settings (features, eras,
    longest reigns) from the training examples ``items``."""
    import torch  # the training stack; reading needs NumPy only

    eras = learn_eras(items)
    feats, classes, values = samples(items, eras)
    counts = Counter(f for fs in feats for f in set(fs))
    vocab = sorted(f for f, n in counts.items() if n >= MIN_FEATURE)
    index = {f: i for i, f in enumerate(vocab)}
    rows, cols = [], []
    for n, fs in enumerate(feats):
        for f in set(fs):
            if f in index:
                rows.append(n)
                cols.append(index[f])
    log.info("formulae: %d eras, %d readings (%d none), %d features",
             len(eras), len(feats), classes.count(len(eras)), len(vocab))  # fmt: skip
    torch.manual_seed(seed)
    x = torch.sparse_coo_tensor(
        torch.tensor([rows, cols], dtype=torch.long),
        torch.ones(len(rows)),
        (len(feats), len(vocab)),
        check_invariants=True,
    ).coalesce()
    y = torch.tensor(classes, dtype=torch.long)  # a corpus with no reading: an empty long tensor
    weight = torch.zeros(len(vocab), len(eras) + 1, requires_grad=True)
    bias = torch.zeros(len(eras) + 1, requires_grad=True)
    optimiser = torch.optim.Adam([weight, bias], lr=0.05)
    for _ in range(epochs if feats else 0):  # no reading: nothing to fit (the mean of none is NaN)
        optimiser.zero_grad()
        logits = torch.sparse.mm(x, weight) + bias
        loss = torch.nn.functional.cross_entropy(logits, y) + l2 * (weight**2).sum()
        loss.backward()
        optimiser.step()
    log.info("formulae: training loss %.4f", float(loss.detach()) if feats else 0.0)
    longest = [max((v for v, n in values[k].items() if n >= 2), default=0) for k in range(len(eras))]
    arrays = {"formula.weight": weight.detach().numpy().astype(np.float16),
              "formula.bias": bias.detach().numpy().astype(np.float16)}  # fmt: skip
    names = learn_names(items)
    log.info("formulae: %d dated names", len(names))
    return arrays, {"features": vocab, "eras": eras, "longest": longest, "prior": 1.0,
                    "calibration": [-9.0, 0.0, 0.0, 0.0],
                    "names": sorted(names), "name_years": [names[w] for w in sorted(names)],
                    "name_calibration": [-9.0, 0.0, 0.0, 0.0]}  # fmt: skip


def calibrate_formulae(reader: Formulae, model: Any, items: list[Any]) -> dict[str, Any]:
    """``{"prior", "calibration", "name_calibration"}`` over the dated validation papyri ``items``
    (``model``: the :class:`~.model.AttributionModel` whose date distribution weighs the eras):

    - for each exponent of :data:`PRIORS`, the logistic fit (:func:`fit_logistic`) of whether the
      surest reading's year is right (within a year of the true range) on its ``sure`` and
      ``top``; the exponent with the most readings right wins (then the least negative
      log-likelihood);
    - the same fit for the year the dated names agree on."""
    texts = []
    for e in items:
        if e.source == "ddb" and e.label.dated:
            probs, place_probs = model.probabilities(e.text, e.letters)
            if model.reads_formulae(place_probs):  # placed among inscriptions: not read
                texts.append((e, model.years(probs)))
    best: dict[str, Any] = {"prior": 1.0, "calibration": [-9.0, 0.0, 0.0, 0.0]}
    best_key, best_found = (-1.0, 0.0), []
    for prior in PRIORS:
        reader.prior = prior
        found = [(e, f) for e, years in texts for f in reader.candidates(e.text, years, model.first_year)]
        weights, nll, share, n = _fit_right([(e, f) for e, f in found if f["kind"] != "name"])
        log.info("formulae: prior %.2f: %d readings, %.3f right, NLL %.4f", prior, n, share, nll)
        if n and (share, -nll) > best_key:  # the most readings right; then the best fit
            best_key, best, best_found = (share, -nll), {"prior": prior, "calibration": weights}, found
    # the names as the chosen exponent finds them (their agreement counts that exponent's readings)
    weights, nll, share, n = _fit_right([(e, f) for e, f in best_found if f["kind"] == "name"])
    log.info("formulae: dated names in %d texts, %.3f right, NLL %.4f", n, share, nll)
    best["name_calibration"] = weights if n else [-9.0, 0.0, 0.0, 0.0]
    reader.prior, reader.calibration, reader.name_calibration = (best["prior"], best["calibration"],
                                                                 best["name_calibration"])  # fmt: skip
    return best


def _fit_right(found: list[tuple[Any, dict[str, Any]]]) -> tuple[list[float], float, float, int]:
    """``(weights, NLL, share right, n)`` of the logistic fit of whether each found year is within
    a year of its text's true range, on its :func:`~.formulae.evidence`."""
    if not found:
        return [-9.0, 0.0, 0.0, 0.0], float("inf"), 0.0, 0
    x = np.asarray([evidence(f) for _, f in found])
    y = np.asarray([float(e.label.lo - 1 <= f["year"] <= e.label.hi + 1) for e, f in found])
    weights, nll = fit_logistic(x, y)
    return [round(float(v), 4) for v in weights], nll, float(y.mean()), len(found)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3) -> tuple[np.ndarray, float]:
    """``(weights (F,), mean NLL)`` of the logistic regression of ``y`` ``(n,)`` (0/1) on ``x``
    ``(n, F)``, the first column the intercept (torch, L-BFGS; ``l2`` on the other weights, so
    that a separable sample keeps finite weights)."""
    import torch

    xs, ys = torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
    w = torch.zeros(x.shape[1], requires_grad=True)
    optimiser = torch.optim.LBFGS([w], max_iter=200)

    def closure() -> torch.Tensor:
        optimiser.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(xs @ w, ys) + l2 * (w[1:] ** 2).sum()
        loss.backward()
        return loss

    optimiser.step(closure)
    with torch.no_grad():
        nll = float(torch.nn.functional.binary_cross_entropy_with_logits(xs @ w, ys))
    return w.detach().numpy(), nll


def add_formulae(arrays: dict[str, np.ndarray], config: dict[str, Any], train_docs: list[Any],
                 valid_docs: list[Any], seed: int) -> None:  # fmt: skip
    """Fit the reader on the training documents (supplements filled in) and calibrate it on the
    validation documents through the model of ``arrays`` and ``config`` (without a reader: its
    own date distribution weighs the eras); both are added to ``arrays`` and ``config["formulae"]``."""
    fitted, settings = fit_formulae(train_docs, seed)
    bare = {k: v for k, v in arrays.items() if not k.startswith("formula.")}
    model = AttributionModel(bare, {k: v for k, v in config.items() if k != "formulae"})
    settings |= calibrate_formulae(Formulae(fitted, settings), model, valid_docs)
    arrays |= fitted
    config["formulae"] = settings
