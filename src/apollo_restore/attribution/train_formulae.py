"""Fitting the formula reader (:mod:`.formulae`) on the train split, its weight on validation.

    from apollo_restore.attribution.train_formulae import fit_formulae, choose_weight
    arrays, config = fit_formulae(train_examples, seed=0)
    config |= choose_weight(Formulae(arrays, config), model, validation_examples)

1. **Eras** (:func:`learn_eras`): the readings of the training papyri dated to the year
   (HGV's range at most :data:`EXACT` years wide); each document's readings share one vote among
   them, cast for the era its year implies (:func:`implied_era`: ``year − value``, one more where
   the month read falls in the earlier Julian year of its Egyptian year). A value with at least
   :data:`MIN_ERA_DOCS` votes over itself and its two neighbours, and more than either neighbour,
   is an era.
2. **Classes** (:func:`samples`): a reading's class is the era within a year of the era implied,
   else ``none``; how far the right readings' years fall from the year read (−1, 0, +1), with a
   month read and without, is the spread of a reading's probability (``peaks``).
3. **Fit**: softmax regression over the features seen at least :data:`MIN_FEATURE` times (torch,
   Adam, seeded, L2), stored as float16.
4. **Weight** (:func:`calibrate_formulae`): the exponent of the bag's probability, the logistic
   fit of a reading's being right, and the least confidence that lets a reading move the date
   (``threshold``, :func:`choose_threshold`, over the validation papyri that have a reading;
   never a test document).
5. **Dated names** (:func:`learn_names`) are proper names: words the editions capitalise
   (:func:`~apollo_restore.data.readers.ddb.capitalised_words` of the DDB archive).
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from apollo_restore.attribution.formulae import (
    Formulae,
    Reading,
    evidence,
    features,
    later_half,
    readings,
    regnal_years,
    words_of,
)
from apollo_restore.attribution.model import AttributionModel, date_summary

log = logging.getLogger(__name__)

#: A document dated within this many years (HGV's range) teaches eras and classes.
EXACT = 2
MIN_ERA_DOCS = 8
MIN_FEATURE = 3
#: A dated name: a word of at least :data:`NAME_LETTERS` letters in at least :data:`NAME_MIN_DOCS`
#: training papyri dated to the year (and in at most :data:`NAME_MAX_DOCS` dated ones), whose
#: dated papyri fall within a year of their median year at least :data:`NAME_AGREE` of the time,
#: and which the editions capitalise at least :data:`NAME_CAPITALISED` of the time (a proper name).
NAME_LETTERS, NAME_MIN_DOCS, NAME_MAX_DOCS, NAME_AGREE, NAME_CAPITALISED = 4, 2, 200, 0.8, 0.5
#: Least confidences a reading may need to move the date (chosen on validation).
THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
#: How far under the best share within a year a threshold may stay (then the least mean deviation wins).
NEAR_BEST = 0.005


def proper_names(capitals: dict[str, tuple[int, int]]) -> frozenset[str]:
    """The words capitalised at least :data:`NAME_CAPITALISED` of the time in ``capitals``
    (:func:`~apollo_restore.data.readers.ddb.capitalised_words`)."""
    return frozenset(w for w, (c, n) in capitals.items() if n and c >= NAME_CAPITALISED * n)


PRIORS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)


def _exact(items: list[Any]) -> list[tuple[Any, float]]:
    """The papyri of ``items`` dated to the year, with their year (the range's middle)."""
    return [(e, (e.label.lo + e.label.hi) / 2) for e in items
            if e.source == "ddb" and e.label.dated and e.label.hi - e.label.lo <= EXACT]  # fmt: skip


def implied_era(year: float, reading: Reading) -> int:
    """The era a document of ``year`` implies for its ``reading``: ``year − value``, one more where
    the month read falls in the earlier Julian year of its Egyptian year (:func:`~.formulae.later_half`)."""
    year = round(year)
    if reading.month is None:
        return year - reading.value
    return year - reading.value + 1 - int(later_half(reading.month, year - 1))


def learn_eras(items: list[Any]) -> list[int]:
    """The eras (see :func:`implied_era`, ascending) of the training papyri ``items``."""
    votes: Counter[int] = Counter()
    for e, year in _exact(items):
        found = readings(e.text)
        for r in found:
            votes[implied_era(year, r)] += 1 / len(found)
    peaks = []
    for era, n in votes.items():
        mass = votes[era - 1] + n + votes[era + 1]
        if mass >= MIN_ERA_DOCS and n > votes[era - 1] and n >= votes[era + 1]:
            peaks.append(era)
    return sorted(peaks)


def learn_names(items: list[Any], proper: frozenset[str] | None = None) -> dict[str, int]:
    """The dated names (see :data:`NAME_AGREE`) of the training papyri ``items``: word → year;
    only the words of ``proper`` (:func:`proper_names`) where given."""
    seen: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for e in items:
        if e.source == "ddb" and e.label.dated:
            for w in set(words_of(e.text)):
                if len(w) >= NAME_LETTERS and "-" not in w and "…" not in w and (proper is None or w in proper):
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


def samples(items: list[Any], eras: list[int]) -> tuple[list[list[str]], list[int], dict[int, Counter[int]],
                                                     dict[str, list[float]]]:  # fmt: skip
    """``(features, class, values seen per era, peaks)`` of every reading of the papyri dated to
    the year; class ``len(eras)`` is ``none``; ``peaks``: with a month read (``"month"``) and
    without (``"none"``), the shares of the right readings whose document's year is the year read
    less one, the year read, and one more (each count one more, so that none is 0)."""
    table = np.asarray(eras)
    feats, classes, values = [], [], defaultdict(Counter)
    spread = {"month": np.ones(3), "none": np.ones(3)}
    for e, year in _exact(items):
        words = words_of(e.text)
        for r in readings(e.text):
            gap = np.abs(implied_era(year, r) - table)
            k = int(gap.argmin())
            cls = k if gap[k] <= 1 else len(eras)
            if cls < len(eras):
                values[cls][r.value] += 1
                step = round(year) - int(regnal_years(table[k : k + 1], r)[0])
                if abs(step) <= 1:
                    spread["none" if r.month is None else "month"][step + 1] += 1
            feats.append(features(words, r))
            classes.append(cls)
    peaks = {k: [round(float(x), 4) for x in v / v.sum()] for k, v in spread.items()}
    return feats, classes, values, peaks


def fit_formulae(items: list[Any], seed: int, epochs: int = 100, l2: float = 1e-4,
                 proper: frozenset[str] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:  # fmt: skip
    """The reader's arrays (``formula.weight``, ``formula.bias``) and settings (features, eras,
    longest reigns, peaks, dated names: of ``proper`` where given) from the training examples ``items``."""
    import torch  # the training stack; reading needs NumPy only

    eras = learn_eras(items)
    feats, classes, values, peaks = samples(items, eras)
    log.info("formulae: peaks (year before, read, after) %s", peaks)
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
    names = learn_names(items, proper)
    log.info("formulae: %d dated names", len(names))
    return arrays, {"features": vocab, "eras": eras, "longest": longest, "prior": 1.0, "peaks": peaks,
                    "calibration": [-9.0, 0.0, 0.0, 0.0], "threshold": 0.0,
                    "names": sorted(names), "name_years": [names[w] for w in sorted(names)],
                    "name_calibration": [-9.0, 0.0, 0.0, 0.0]}  # fmt: skip


def calibrate_formulae(reader: Formulae, model: Any, items: list[Any]) -> dict[str, Any]:
    """``{"prior", "calibration", "name_calibration", "threshold"}`` over the dated validation
    papyri ``items`` (``model``: the :class:`~.model.AttributionModel` whose date distribution
    weighs the eras):

    - for each exponent of :data:`PRIORS`, the logistic fit (:func:`fit_logistic`) of whether the
      surest reading's year is right (within a year of the true range) on its
      :func:`~.formulae.evidence`; the exponent with the most readings right wins (then the least
      negative log-likelihood);
    - the same fit for the year the dated names agree on;
    - the threshold (:func:`choose_threshold`) over the texts with a reading."""
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
    best["threshold"] = choose_threshold(
        reader, model.first_year, [(e, y) for e, y in texts if reader.candidates(e.text, y, model.first_year)]
    )
    reader.threshold = best["threshold"]
    return best


def choose_threshold(reader: Formulae, first_year: int, texts: list[tuple[Any, np.ndarray]]) -> float:
    """The least confidence of :data:`THRESHOLDS` a reading needs to move the date: of those whose
    share of dates within a year of the true range is within :data:`NEAR_BEST` of the best (the
    median's target), the one of least mean deviation (a wrong reading's cost), over ``texts``
    (``(example, the bag's (Y,) year probabilities)``)."""
    scores = []
    for threshold in THRESHOLDS:
        reader.threshold = threshold
        devs = []
        for e, years in texts:
            year = date_summary(first_year + np.arange(len(years) + 1), reader.mix(e.text, years, first_year)[0])[0]
            devs.append(max(e.label.lo - year, year - e.label.hi, 0))
        dev = np.asarray(devs, float) if devs else np.zeros(1)
        scores.append((threshold, float((dev <= 1).mean()), float(dev.mean())))
        log.info("formulae: threshold %.2f: within a year %.3f, mean deviation %.2f (%d texts)",
                 threshold, scores[-1][1], scores[-1][2], len(devs))  # fmt: skip
    best = max(s[1] for s in scores)
    return min((s for s in scores if s[1] >= best - NEAR_BEST), key=lambda s: (s[2], s[0]))[0]


def _fit_right(found: list[tuple[Any, dict[str, Any]]]) -> tuple[list[float], float, float, int]:
    """``(weights, NLL, share right, n)`` of the logistic fit of whether each found year is within
    a year of its text's true range, on its :func:`~.formulae.evidence`."""
    if not found:
        return [-9.0, 0.0, 0.0, 0.0, 0.0], float("inf"), 0.0, 0
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
                 valid_docs: list[Any], seed: int, proper: frozenset[str] | None = None) -> None:  # fmt: skip
    """Fit the reader on the training documents (supplements filled in; dated names among
    ``proper``, :func:`proper_names`) and calibrate it on the validation documents through the
    model of ``arrays`` and ``config`` (without a reader: its own date distribution weighs the
    eras); both are added to ``arrays`` and ``config["formulae"]``."""
    fitted, settings = fit_formulae(train_docs, seed, proper=proper)
    bare = {k: v for k, v in arrays.items() if not k.startswith("formula.")}
    model = AttributionModel(bare, {k: v for k, v in config.items() if k != "formulae"})
    settings |= calibrate_formulae(Formulae(fitted, settings), model, valid_docs)
    arrays |= fitted
    config["formulae"] = settings
