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

from apollo_restore.attribution.formulae import Formulae, features, logit, readings, words_of
from apollo_restore.attribution.model import AttributionModel

log = logging.getLogger(__name__)

#: A document dated within this many years (HGV's range) teaches eras and classes.
EXACT = 2
MIN_ERA_DOCS = 8
MIN_FEATURE = 3
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
        torch.tensor([rows, cols]), torch.ones(len(rows)), (len(feats), len(vocab)), check_invariants=True
    ).coalesce()
    y = torch.tensor(classes)
    weight = torch.zeros(len(vocab), len(eras) + 1, requires_grad=True)
    bias = torch.zeros(len(eras) + 1, requires_grad=True)
    optimiser = torch.optim.Adam([weight, bias], lr=0.05)
    for _ in range(epochs):
        optimiser.zero_grad()
        logits = torch.sparse.mm(x, weight) + bias
        loss = torch.nn.functional.cross_entropy(logits, y) + l2 * (weight**2).sum()
        loss.backward()
        optimiser.step()
    log.info("formulae: training loss %.4f", float(loss.detach()))
    longest = [max((v for v, n in values[k].items() if n >= 2), default=0) for k in range(len(eras))]
    arrays = {"formula.weight": weight.detach().numpy().astype(np.float16),
              "formula.bias": bias.detach().numpy().astype(np.float16)}  # fmt: skip
    return arrays, {"features": vocab, "eras": eras, "longest": longest, "prior": 1.0, "calibration": [-9.0, 0.0, 0.0]}


def calibrate_formulae(reader: Formulae, model: Any, items: list[Any]) -> dict[str, Any]:
    """``{"prior", "calibration"}``: for each exponent of :data:`PRIORS`, the logistic fit (torch,
    L-BFGS) of whether the surest reading's year is right (within a year of the true range) on
    ``reader``'s ``sure`` and ``top``, over the dated validation papyri ``items`` that have a
    reading; the exponent with the most readings right wins (then the least negative log-likelihood). ``model``: the
    :class:`~.model.AttributionModel` whose date distribution weighs the eras."""
    texts = [(e, model.year_probs(e.text, e.letters)) for e in items
             if e.source == "ddb" and e.label.dated and readings(e.text)]  # fmt: skip
    best: dict[str, Any] = {"prior": 1.0, "calibration": [-9.0, 0.0, 0.0]}
    best_key = (-1.0, 0.0)
    for prior in PRIORS:
        reader.prior = prior
        rows, right = [], []
        for e, years in texts:
            found = reader.read(e.text, years, model.first_year)
            if found is None:
                continue
            rows.append([1.0, logit(found["sure"]), logit(found["top"])])
            right.append(float(e.label.lo - 1 <= found["year"] <= e.label.hi + 1))
        if not rows:
            continue
        weights, nll = fit_logistic(np.asarray(rows), np.asarray(right))
        share = float(np.mean(right))
        log.info("formulae: prior %.2f: %d readings, %.3f right, NLL %.4f", prior, len(rows), share, nll)
        if (share, -nll) > best_key:  # the most readings right; then the best fit
            best_key, best = (share, -nll), {"prior": prior, "calibration": [round(float(v), 4) for v in weights]}
    reader.prior, reader.calibration = best["prior"], best["calibration"]
    return best


def fit_logistic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """``(weights (F,), mean NLL)`` of the logistic regression of ``y`` ``(n,)`` (0/1) on ``x``
    ``(n, F)`` (torch, L-BFGS)."""
    import torch

    xs, ys = torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
    w = torch.zeros(x.shape[1], requires_grad=True)
    optimiser = torch.optim.LBFGS([w], max_iter=200)

    def closure() -> torch.Tensor:
        optimiser.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(xs @ w, ys)
        loss.backward()
        return loss

    optimiser.step(closure)
    return w.detach().numpy(), float(closure().detach())


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
