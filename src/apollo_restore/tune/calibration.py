"""Fit the ranking's stage ``calibration`` (:mod:`apollo_restore.restoration.ranking.calibration`) on validation gaps.

    records = [record(gap, pool) for gap, pool in zip(gaps, shown_pools)]   # pools as calibration gets them
    calibration = fit_calibration(records)                                  # info: measured before/after

A record holds one gap's whole ranked pool as the calibration receives it (annotated, doubtful
readings demoted, probabilities normalised over the pool), the gap's kind (``real``: an editor's
supplement; ``synthetic``) and where the edition's reading is in it. The parameters of each kind
are fitted by maximum likelihood on all records (:func:`fit`: torch's L-BFGS, the one use of torch here;
``δ`` shared); their effect is measured by two-fold cross-fitting over documents (fit on one half,
measure on the other) when both halves hold every hint condition of each kind, and recorded in
the calibration's ``info``: the figures of real lacunae (what every restored text has) under
``ece_after_cross_fitted`` and ``above_90_after_cross_fitted``, those of synthetic gaps under
``synthetic``.

Two choices ride on the fit (issue 64): ``μ``, the penalty of a reading that misses the count given,
is the one of :data:`MISS_PENALTIES` of least cross-fitted log-loss; and literary texts, whose
validation split holds no editor's supplement, take the synthetic gaps' parameters
(``kinds.literary``): on validation literary gaps they were calibrated where the real lacunae's
were not (top-1 ECE 0.062 against 0.237), and a fit of their own overfitted. The shipped
literary and inscription blocks are those bases moved by a temperature and a bias fitted on the
kind's own gaps (:func:`fit_on_top`; ``benchmarks/real_lacunae_calibration.py on-top``, which
chose them by cross-fitted log-loss).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from apollo_restore.data.formats import GapExample
from apollo_restore.evaluate.gapsets import condition_of
from apollo_restore.evaluate.metrics import agnostic, reliability
from apollo_restore.evaluate.report import plot_reliability
from apollo_restore.hint import Hint
from apollo_restore.restoration.ranking.calibration import (
    Calibration,
    calibrated,
    features,
    gap_kind,
    gap_letters,
    temperature_features,
)
from apollo_restore.restoration.ranking.doubts import misses_hint
from apollo_restore.restoration.ranking.order import best_first
from apollo_restore.schema.folder import CONDITIONS, GAP_KINDS, Scaling
from apollo_restore.schema.restoration import FILL_THRESHOLD, Candidate

#: Weight of the squared parameters (``log a``, ``b`` to ``f`` and ``δ``'s) added to the mean negative
#: log-likelihood per gap while fitting: a weak prior, negligible next to a few hundred gaps.
RIDGE = 1e-3
#: The features of "none of these" beyond the restorer's own certainty (``d``, ``e``, ``f``).
TERMS = ("letters", "margin", "score")
#: The features the temperature moves with (``g``, ``h``).
TEMPERATURE_TERMS = ("letters", "margin")
#: A condition's parameters in the order :func:`fit_groups` gives them (:class:`Scaling`'s fields).
PARAMETERS = tuple(Scaling.model_fields)
SHOWN = 20  # readings a list shows by default (k): the "top-20" reliability is over them
SURE = FILL_THRESHOLD  # a top reading shown above this is "sure": written into a restored text
#: The miss penalties ``μ`` (nats) :func:`choose_miss_penalty` chooses among.
MISS_PENALTIES = (0.0, 1.0, 2.0, 3.0, 5.0, 8.0)


def record(gap: GapExample, cands: list[Candidate]) -> dict:
    """A gap's record: id, doc, condition, kind (``real``, ``synthetic``), hint, truth index (-1:
    not in the pool), the pool's texts, log q, unknown-word flags and the first reading's log-score."""
    keys = [agnostic(c.text) for c in cands]
    target = agnostic(gap.target)
    return {
        "id": gap.id, "doc": gap.doc, "condition": condition_of(gap), "kind": gap_kind(gap.kind),
        "hint": gap.hint.to_json(),
        "truth": keys.index(target) if target in keys else -1, "texts": [c.text for c in cands],
        "logq": [float(np.log(max(c.prob, 1e-12))) for c in cands], "unknown": [bool(c.unknown_words) for c in cands],
        "top_score": cands[0].log_score if cands else 0.0,
    }  # fmt: skip


def arrays(records: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``(G, K)`` log q (``-inf`` padded) and unknown flags, ``(G,)`` gap letters, ``(G,)`` first
    reading's log-score, ``(G,)`` truth, conditions (``K``: the largest pool): :func:`fit`'s arguments."""
    width = max(1, max(len(r["logq"]) for r in records))
    logq = np.full((len(records), width), -np.inf)
    unknown = np.zeros((len(records), width))
    for i, r in enumerate(records):
        logq[i, : len(r["logq"])] = r["logq"]
        unknown[i, : len(r["unknown"])] = r["unknown"]
    letters = np.array([gap_letters(r["texts"][0] if r["texts"] else "", Hint.from_json(r["hint"])) for r in records])
    top_score = np.array([r["top_score"] for r in records])
    return logq, unknown, letters, top_score, np.array([r["truth"] for r in records]), [r["condition"] for r in records]


def kinds_of(records: list[dict]) -> list[str]:
    """Each record's kind (``real``, ``synthetic``; a record without one: ``synthetic``)."""
    return [r.get("kind", "synthetic") for r in records]


def shown(records: list[dict], cal: Calibration | None) -> tuple[np.ndarray, np.ndarray]:
    """``(G, K)`` probabilities as shown (raw, or calibrated) and ``(G, K)`` correctness, both in
    the order shown (the ranking's :func:`~apollo_restore.restoration.ranking.order.best_first` by ``p``
    over the records' order, which is the order before calibration)."""
    logq, unknown, letters, top_score, truth, conds = arrays(records)
    misses = misses_of(records, logq.shape[1])
    groups = list(zip(kinds_of(records), conds))
    probs = np.exp(logq)
    if cal is not None:
        for kind, cond in set(groups):
            rows = np.array([g == (kind, cond) for g in groups])
            s = cal.for_kind(kind)[cond]
            probs[rows] = calibrated(
                logq[rows], unknown[rows], letters[rows], top_score[rows], s, cal.unknown_word_penalty,
                misses[rows], cal.miss_penalty,
            )  # fmt: skip
    right = np.zeros_like(probs, dtype=bool)
    right[truth >= 0, truth[truth >= 0]] = True
    probs = np.where(np.isfinite(logq), probs, 0.0)
    order = np.array([best_first(row) for row in probs.tolist()], dtype=int).reshape(probs.shape)
    return np.take_along_axis(probs, order, 1), np.take_along_axis(right, order, 1)


def measures(probs: np.ndarray, right: np.ndarray) -> dict:
    """Top-1/top-20 reliability, Top-1 accuracy, and the share of gaps whose top reading is shown
    above :data:`SURE` with the fraction of those that are right."""
    sure = probs[:, 0] > SURE
    return {
        "top1": reliability(probs[:, 0], right[:, 0]),
        "top20": reliability(np.minimum(1, probs[:, :SHOWN].sum(1)), right[:, :SHOWN].any(1)),
        "top1_acc": float(right[:, 0].mean()),
        "sure_share": float(sure.mean()),
        "sure_right": float(right[sure, 0].mean()) if sure.any() else None,
    }


def misses_of(records: list[dict], width: int | None = None) -> np.ndarray:
    """``(G, K)`` whether each record's readings miss its gap's hint (the note ``5 letters, hint
    6``: :func:`~apollo_restore.restoration.ranking.doubts.misses_hint` of the letters; ``K``:
    ``width`` or the largest pool)."""
    width = width or max(1, max(len(r["texts"]) for r in records))
    out = np.zeros((len(records), width))
    for i, r in enumerate(records):
        hint = Hint.from_json(r["hint"])
        out[i, : len(r["texts"])] = [misses_hint(t, hint) for t in r["texts"]]
    return out


def fitted(records: list[dict], miss_penalty: float = 0.0) -> Calibration:
    """The calibration of each kind the records hold, fitted on them (``μ`` held at ``miss_penalty``)."""
    logq = arrays(records)[0]
    misses = misses_of(records, logq.shape[1])
    return fit(*arrays(records), kinds=kinds_of(records), misses=misses, miss_penalty=miss_penalty)


def choose_miss_penalty(records: list[dict]) -> tuple[float, dict[str, float]]:
    """``μ`` of :data:`MISS_PENALTIES` of least cross-fitted log-loss of the records (the
    edition's reading, or "none of these"), and each one's; ``0`` when the halves cannot be cross-fitted."""
    losses = {}
    for mu in MISS_PENALTIES:
        crossed = cross_fitted(records, mu)
        if crossed is None:
            return 0.0, {}
        losses[str(mu)] = round(log_loss(*crossed), 4)
    best = min(MISS_PENALTIES, key=lambda mu: losses[str(mu)])
    return best, losses


def log_loss(probs: np.ndarray, right: np.ndarray) -> float:
    """Mean −log of the probability shown of the right reading, or of "none of these" (1 − the
    list's sum) where none is right."""
    hit = right.any(axis=1)
    p = np.where(hit, (probs * right).sum(axis=1), 1.0 - probs.sum(axis=1))
    return float(np.mean(-np.log(np.maximum(p, 1e-12))))


def folds(records: list[dict]) -> list[list[dict]]:
    """Two halves of the records, split by document."""
    return [[r for r in records if zlib.crc32(r["doc"].encode()) % 2 == f] for f in (0, 1)]


def cross_fitted(records: list[dict], miss_penalty: float = 0.0) -> tuple[np.ndarray, np.ndarray] | None:
    """Shown probabilities of each half of the documents under the calibration fitted on the
    other (``None`` when a half lacks a hint condition the other has: nothing to measure it with)."""
    halves = folds(records)
    groups = lambda rs: set(zip(kinds_of(rs), (r["condition"] for r in rs)))  # noqa: E731
    if any(groups(h) != groups(records) for h in halves):
        return None
    parts = [shown(halves[f], fitted(halves[1 - f], miss_penalty)) for f in (0, 1)]
    width = max(p.shape[1] for p, _ in parts)  # the halves' largest pools differ

    def padded(a: np.ndarray, value: float | bool) -> np.ndarray:
        return np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=value)

    return np.concatenate([padded(p, 0.0) for p, _ in parts]), np.concatenate([padded(r, False) for _, r in parts])


def fit_calibration(records: list[dict], plots: Path | None = None) -> Calibration:
    """The calibration fitted on all ``records`` (each kind its own parameters), its ``info``
    holding the gaps, the fit's NLL and ECE / Top-1 / the share above :data:`SURE` before and
    (cross-fitted) after — of the real lacunae when there are any (what a restored text has), and
    of the synthetic gaps under ``synthetic`` —; with ``plots``, ``reliability_before.png`` and
    ``reliability_after.png`` (of the real lacunae when there are any) written there."""
    mu, losses = choose_miss_penalty(records)
    cal = fitted(records, mu)
    crossed = cross_fitted(records, mu)
    kinds = kinds_of(records)
    crossed_kinds = np.array(kinds_of([r for half in folds(records) for r in half]))  # cross_fitted's order
    info: dict = {"gaps": len(records), "nll": cal.info["nll"]}
    if losses:
        info["miss_penalty_log_loss_cross_fitted"] = losses
    if cal.synthetic is not None:  # literary texts: the synthetic gaps' parameters (issue 64, see the module docstring)
        cal.texts = {"literary": dict(cal.synthetic)}
    before = after = None
    for kind in ("synthetic", "real"):  # the real lacunae's figures at the top, the synthetic gaps' beside them
        rows = np.array([k == kind for k in kinds])
        if not rows.any():
            continue
        before = measures(*shown([r for r, k in zip(records, kinds) if k == kind], None))
        figures = {"gaps": int(rows.sum()), "ece_before": _ece(before), "top1_before": round(before["top1_acc"], 4)}
        mine = crossed_kinds == kind
        after = measures(crossed[0][mine], crossed[1][mine]) if crossed is not None else None
        if after is not None:
            figures |= {
                "ece_after_cross_fitted": _ece(after), "top1_after_cross_fitted": round(after["top1_acc"], 4),
                "above_90_after_cross_fitted": {"share": round(after["sure_share"], 4), "right": after["sure_right"]},
            }  # fmt: skip
        if kind == "synthetic" and "real" in kinds:
            info["synthetic"] = figures
        else:
            info |= {k: v for k, v in figures.items() if k != "gaps"}
    if plots is not None:
        plots.mkdir(parents=True, exist_ok=True)
        plot_reliability(before, plots / "reliability_before.png", "before calibration (validation)")
        if after is not None:
            plot_reliability(after, plots / "reliability_after.png", "after calibration (validation, cross-fitted)")
    cal.info = info
    return cal


def _ece(m: dict) -> dict[str, float]:
    return {"top1": round(float(m["top1"]["ece"]), 4), "top20": round(float(m["top20"]["ece"]), 4)}


def fit(
    logq: np.ndarray,
    unknown: np.ndarray,
    letters: np.ndarray,
    top_score: np.ndarray,
    truth: np.ndarray,
    conditions: Sequence[str],
    terms: Sequence[str] = TERMS,
    kinds: Sequence[str] | None = None,
    penalty: float | None = None,
    temperature: Sequence[str] = TEMPERATURE_TERMS,
    misses: np.ndarray | None = None,
    miss_penalty: float = 0.0,
) -> Calibration:
    """Maximum-likelihood parameters on gaps with known answers: L-BFGS on the mean negative
    log-likelihood plus :data:`RIDGE` × the squared parameters (which keeps them finite where a
    condition has few gaps); no grid, no bounds but ``a > 0`` and ``δ ≥ 0``.

    Args:
        logq, unknown: ``(G, K)`` log probabilities (``-inf`` padding) and unknown-word flags of
            each gap's readings.
        letters: ``(G,)`` :func:`gap_letters` of each gap.
        top_score: ``(G,)`` log-score (nats) of each gap's first reading.
        truth: ``(G,)`` index of the right reading, ``-1`` when it is not among them.
        conditions: ``(G,)`` hint condition of each gap; each has its own ``a`` to ``f``, and
            ``δ`` is shared.
        terms: which of :data:`TERMS` (``d``, ``e``, ``f``) are fitted; the others stay 0 (to
            measure what each adds).
        kinds: ``(G,)`` ``"real"`` or ``"synthetic"`` of each gap: each kind has its own ``a`` to
            ``f`` per condition (``δ`` shared); ``None``: one fit serves both.
        penalty: ``δ`` held at this value (``None``: fitted), e.g. to fit one kind's parameters
            beside another's fitted before.
        temperature: which of :data:`TEMPERATURE_TERMS` (``g``, ``h``) are fitted, of real
            lacunae only: on synthetic gaps they raised the cross-fitted log-loss (validation,
            ``benchmarks/real_lacunae_calibration.py``), so a synthetic fit keeps 0.
        misses: ``(G, K)`` whether each reading misses the count given (:func:`misses_of`).
        miss_penalty: ``μ`` held while the rest is fitted (:func:`choose_miss_penalty` picks it).

    Returns:
        The fitted calibration (``info`` records the fit's mean negative log-likelihood).
    """
    kinds = ["real"] * len(conditions) if kinds is None else list(kinds)
    groups = list(zip(kinds, conditions))
    present = [(kind, cond) for kind in GAP_KINDS for cond in CONDITIONS if (kind, cond) in set(groups)]
    used = np.array([term in terms for term in TERMS], dtype=float)
    moved = np.array([term in temperature for term in TEMPERATURE_TERMS], dtype=float)
    index = np.array([present.index(g) for g in groups])
    x = features(logq, letters, top_score)
    lacunae = np.array([kind == "real" for kind in kinds], dtype=float)[:, None]  # g, h: real lacunae only
    t = temperature_features(x) * moved * lacunae
    offset = None if misses is None else miss_penalty * misses
    per, penalty, loss = fit_groups(logq, unknown, x * used, truth, index, penalty, t, offset)
    per[:, 0] = np.exp(per[:, 0])  # log a → a
    scalings = {group: Scaling.model_construct(**dict(zip(PARAMETERS, p))) for group, p in zip(present, per.tolist())}
    real = {cond: s for (kind, cond), s in scalings.items() if kind == "real"}
    synthetic = {cond: s for (kind, cond), s in scalings.items() if kind == "synthetic"}
    if "synthetic" not in kinds:
        synthetic = None
    elif "real" not in kinds:
        real, synthetic = synthetic, None
    return Calibration(real, penalty, {"nll": round(loss, 4)}, synthetic, miss_penalty=miss_penalty)


def fit_groups(
    logq: np.ndarray,
    unknown: np.ndarray,
    x: np.ndarray,
    truth: np.ndarray,
    groups: np.ndarray,
    penalty: float | None = None,
    t: np.ndarray | None = None,
    offset: np.ndarray | None = None,
) -> tuple[np.ndarray, float, float]:
    """The maximum-likelihood core of :func:`fit`, with any features of "none of these" and of
    the temperature and any grouping of the gaps: L-BFGS on the mean negative log-likelihood plus
    :data:`RIDGE` × the squared parameters, starting from ``a = 1``, ``b = c = … = 0``, ``δ ≈ 0.3``.

    Args:
        logq, unknown, truth: as :func:`fit`'s.
        x: ``(G, F)`` features of "none of these" (``(G, 3)`` :func:`features` for what ships).
        groups: ``(G,)`` index from 0 of the parameter set of each gap (a hint condition of a kind).
        penalty: ``δ`` held (``None``: fitted).
        t: ``(G, T)`` features the log inverse temperature moves with (``(G, 2)``
            :func:`temperature_features` for what ships; ``None``: none).
        offset: ``(G, K)`` held amounts (nats) taken off each reading's ``z`` (``μ`` × the readings
            that miss the count given); ``None``: none.

    Returns:
        ``(n_groups, 3 + F + T)`` parameters (``log a``, ``b``, ``c``, a weight a feature of
        ``x``, one of ``t``), ``δ``, and the mean negative log-likelihood without the ridge.
    """
    import torch  # only fitting needs it: applying a calibration is NumPy

    t = np.zeros((len(logq), 0)) if t is None else t
    n_groups, width = int(groups.max()) + 1, 3 + x.shape[1] + t.shape[1]
    index = torch.tensor(groups)
    lq, mask, unk, xs, ts, held, hit, right = _as_tensors(logq, unknown, x, t, offset, truth)
    # per group: log a, b, c, the weights; then the shared δ (softplus of it − 1)
    params = torch.zeros(n_groups * width + 1, dtype=torch.float64, requires_grad=True)

    def nll() -> torch.Tensor:
        per = params[:-1].view(n_groups, width)[index]  # (G, width)
        delta = torch.nn.functional.softplus(params[-1] - 1.0) if penalty is None else penalty
        return _mean_nll(*scores(per, lq, mask, unk, xs, ts, delta, held), hit, right)

    loss = _minimised(params, nll)
    with torch.no_grad():
        delta = float(torch.nn.functional.softplus(params[-1] - 1.0)) if penalty is None else penalty
    return params[:-1].detach().view(n_groups, width).numpy().copy(), delta, loss


def _as_tensors(
    logq: np.ndarray, unknown: np.ndarray, x: np.ndarray, t: np.ndarray, offset: np.ndarray | None, truth: np.ndarray
) -> tuple[Any, ...]:
    """The torch arguments of :func:`scores` and :func:`_mean_nll` (float64; ``G`` gaps, ``K``
    readings): ``(G, K)`` log q (0 at the padding), the ``(G, K)`` mask of readings, ``(G, K)``
    unknown flags, ``(G, F)`` ``x``, ``(G, T)`` ``t``, ``(G, K)`` held ``offset`` (zeros for
    ``None``), the ``(G,)`` gaps whose right reading is listed and its ``(G,)`` index (0 where not)."""
    import torch

    def f64(a: np.ndarray) -> Any:
        return torch.tensor(a, dtype=torch.float64)

    held = np.zeros_like(unknown) if offset is None else offset
    lq = torch.tensor(np.where(np.isfinite(logq), logq, 0.0))
    return (
        lq,
        torch.tensor(np.isfinite(logq)),
        f64(unknown),
        f64(x),
        f64(t),
        f64(held),
        torch.tensor(truth >= 0),
        torch.tensor(np.maximum(truth, 0)),
    )


def _mean_nll(z: Any, none: Any, hit: Any, right: Any) -> Any:
    """Mean negative log-likelihood (torch) of the right reading (index ``right`` where ``hit``),
    or of "none of these" elsewhere, under ``softmax([z, none])``."""
    import torch

    total = torch.logsumexp(torch.cat([z, none[:, None]], dim=1), dim=1)
    chosen = torch.where(hit, z.gather(1, right[:, None])[:, 0], none)
    return (total - chosen).mean()


def _minimised(params: Any, nll: Any) -> float:
    """``params`` (a torch leaf) moved by L-BFGS to the least ``nll() +`` :data:`RIDGE` × its
    squares; returns ``nll()`` there (without the ridge)."""
    import torch

    opt = torch.optim.LBFGS([params], max_iter=500, tolerance_grad=1e-9, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = nll() + RIDGE * (params**2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        return float(nll())


def scores(per: Any, lq: Any, mask: Any, unknown: Any, x: Any, t: Any, delta: Any, held: Any = 0.0) -> tuple[Any, Any]:
    """The log-scores :func:`~apollo_restore.restoration.ranking.calibration.calibrated_by` turns
    into probabilities, in torch (what :func:`fit_groups` differentiates): ``(z (G, K), none
    (G,))`` of tensors ``per`` ``(G, 3 + F + T)`` (``log a``, ``b``, ``c``, the weights of ``x``
    and of ``t``), ``lq`` ``(G, K)`` (0 where ``mask`` is false), ``unknown`` ``(G, K)``, ``x``
    ``(G, F)``, ``t`` ``(G, T)``; ``z`` is ``-inf`` where ``mask`` is false. ``softmax([z, none])``
    equals NumPy's formula (``tests/tune/test_calibration_torch.py`` holds them together)."""
    import torch  # only fitting needs it: applying a calibration is NumPy

    nx = 3 + x.shape[1]
    log_a = per[:, 0] + (per[:, nx:] * t).sum(dim=1)
    z = torch.where(mask, log_a.exp()[:, None] * lq - delta * unknown - held, -torch.inf)
    none = per[:, 1] - per[:, 2] * z.max(dim=1).values + (per[:, 3:nx] * x).sum(dim=1)
    return z, none


def fit_on_top(
    records: list[dict],
    base: dict[str, Scaling],
    penalty: float,
    miss_penalty: float = 0.0,
    bias: bool = True,
    per_condition: bool = False,
) -> dict[str, Scaling]:
    """A kind of text's parameters, fitted on its own ``records`` as a small move of the ``base``
    parameters (each condition's :class:`Scaling`, e.g. the real lacunae's): ``a ← τ · a`` (a
    temperature on top) and, with ``bias``, ``b ← b + β``; ``c`` to ``h``, ``δ`` (``penalty``)
    and ``μ`` (``miss_penalty``) held. One ``τ`` (and ``β``) for every condition, or with
    ``per_condition`` one per condition the records hold (a condition they lack keeps ``base``'s).
    Maximum likelihood with :data:`RIDGE` × ``(log τ)² + β²``, which pulls a kind with few gaps
    toward ``base`` (issue 64: eight parameters per condition on 130 inscription supplements
    overfitted; two do not).

    Returns:
        condition → the moved :class:`Scaling` (every condition of ``base``).
    """
    import torch  # only fitting needs it: applying a calibration is NumPy

    logq, unknown, letters, top_score, truth, conds = arrays(records)
    x = features(logq, letters, top_score)
    names = sorted(set(conds)) if per_condition else ["all"]
    index = torch.tensor([names.index(c if per_condition else "all") for c in conds])
    rows = torch.tensor([[np.log(base[c].a), *(getattr(base[c], p) for p in PARAMETERS[1:])] for c in conds])
    offset = miss_penalty * misses_of(records, logq.shape[1])
    lq, mask, unk, xs, ts, held, hit, right = _as_tensors(logq, unknown, x, temperature_features(x), offset, truth)
    params = torch.zeros((len(names), 2), dtype=torch.float64, requires_grad=True)  # log τ, β
    moves = torch.tensor([1.0, float(bias)], dtype=torch.float64)

    def nll() -> torch.Tensor:
        shift = params[index] * moves  # (G, 2)
        per = torch.cat([rows[:, :2] + shift, rows[:, 2:]], dim=1)
        return _mean_nll(*scores(per, lq, mask, unk, xs, ts, penalty, held), hit, right)

    _minimised(params, nll)
    moved = (params.detach() * moves).numpy()
    out = {}
    for cond, s in base.items():
        i = names.index(cond if per_condition else "all") if (cond in names or not per_condition) else None
        log_tau, beta = moved[i] if i is not None else (0.0, 0.0)
        out[cond] = s.model_copy(update={"a": s.a * float(np.exp(log_tau)), "b": s.b + float(beta)})
    return out
