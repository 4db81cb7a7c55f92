"""``apollo-restore tune``'s one function: fit a model folder's settings on validation gaps and
write them into it.

    result = tune(Path("my-model"), Path("data/prepared"), ["weights", "demotions", "calibration"], force=True)
    print("\\n".join(result.lines()))

Steps run in the order of :data:`~apollo_restore.tune.folder.STEPS` — the ranking's stages with
parameters (:mod:`apollo_restore.restoration.ranking`) — each on what the ones before it chose:
stage ``weights`` (and the hint slack) gives the pools, stage ``demotions`` is fitted on them, and
stage ``calibration`` on the pools as the demotions leave them, each with the ranking's own functions. One restoration
pass serves the weights (every member's proposals and scores), one more serves both the demotions
and the calibration (the folder's restorer, with the new weights). ``apollo_restore.json`` is
written first, then ``calibration.json`` with the fingerprint of the folder as written: each file
whole (renamed over the old one), and only once the schema reads it back (:func:`write_checked`:
what would not load is never written; the folder stays as it was, ``E706``). A folder already
holding what a step writes is refused (``E701``) unless ``force`` is given.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from apollo_restore.data.orthography import default_forms
from apollo_restore.data.outputs import write_atomic
from apollo_restore.errors import ModelFolderError
from apollo_restore.evaluate.gapsets import condition_of
from apollo_restore.inputs import MAX_SETTINGS_BYTES, read_regular
from apollo_restore.model.folder import META_FILE, check_meta, read_meta, write_meta
from apollo_restore.restoration.config import DEFAULT_RESTORE_CONFIG
from apollo_restore.restoration.load import load_restorer, scoring_of
from apollo_restore.restoration.members.ensemble import Ensemble
from apollo_restore.restoration.ranking.calibration import CALIBRATION_FILE, Calibration
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.threads import use_threads
from apollo_restore.schema.folder import GAP_KINDS
from apollo_restore.tune.calibration import fit_calibration, record
from apollo_restore.tune.demotions import annotated, demoted, fit_demotions, whole_pools
from apollo_restore.tune.demotions import value as demotions_value
from apollo_restore.tune.folder import (
    STEPS,
    TuneError,
    held,
    hint_slack,
    named_members,
    read_weights,
    with_demotions,
    with_weights,
    write_calibration,
)
from apollo_restore.tune.gaps import CONDITIONS, validation_gaps, validation_lacunae
from apollo_restore.tune.measure import objective
from apollo_restore.tune.weights import fit_weights, member_scores

FITTED_BY = "apollo-restore tune"
#: Longest input (a path) written into a record (``ensemble.chosen_by`` holds at most 500 characters).
MAX_RECORDED = 200
#: Fewest validation gaps under each hint condition (exact, range, none) a calibration is fitted on:
#: with fewer, its six parameters per condition follow the few gaps' luck (the shipped one: 400 gaps in all).
MIN_GAPS = 50
#: Editor supplements of each source's validation documents the calibration of real lacunae is
#: fitted on, each asked with its exact count, a range holding it and no count.
REAL_LACUNAE = 100


@dataclass
class TuneResult:
    """What a run fitted and measured (objectives: mean uniform Top-1, Top-20 over hint conditions).

    Attributes:
        folder: the model folder written.
        gaps: validation gaps fitted on.
        weights: ``(before, after)`` member weights, or ``None`` when not fitted.
        slack: ``(before, after)`` hint slack, or ``None``.
        demotions: ``(before, after)`` factors, or ``None``.
        objective: step → ``(before, after)`` objective on the gaps.
        calibration: the fitted calibration, or ``None``.
    """

    folder: Path
    gaps: int
    weights: tuple[dict[str, float], dict[str, float]] | None = None
    slack: tuple[int, int] | None = None
    demotions: tuple[Demotions, Demotions] | None = None
    objective: dict[str, tuple[tuple[float, float], tuple[float, float]]] = field(default_factory=dict)
    calibration: Calibration | None = None
    not_refitted: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """A plain-text report, one line each."""
        out = [f"{self.folder}: fitted on {self.gaps} validation gaps"]
        for step, (before, after) in self.objective.items():
            top1, top20 = f"{before[0]:.3f} -> {after[0]:.3f}", f"{before[1]:.3f} -> {after[1]:.3f}"
            out.append(f"{step}: mean uniform Top-1 {top1}, Top-20 {top20}")
        if self.weights:
            out.append(f"weights {self.weights[0]} -> {self.weights[1]}, hint slack {self.slack[0]} -> {self.slack[1]}")
        if self.demotions:
            out.append(f"demotions {self.demotions[0].to_json()} -> {self.demotions[1].to_json()}")
        if self.calibration:
            info = self.calibration.info
            after = info.get("ece_after_cross_fitted", "not measured (a document half lacks a hint condition)")
            out.append(f"calibration: ECE before {info['ece_before']}, after (cross-fitted) {after}")
            for text in self.not_refitted:
                out.append(
                    f"calibration: the {text} texts' block the folder held was fitted on their own gaps "
                    f"(benchmarks/real_lacunae_calibration.py on-top), which tune does not do: {text} texts "
                    + ("now take the synthetic gaps' parameters" if text in self.calibration.texts
                       else "now take the real lacunae's parameters")
                    + "; fit it again with that command"
                )  # fmt: skip
        elif self.weights or self.demotions:
            out.append(f"{CALIBRATION_FILE} no longer matches the folder: run tune --what calibration")
        return out


def tune(
    folder: Path,
    prepared: Path,
    steps: Sequence[str] = STEPS,
    per_length: dict[str, int] | None = None,
    seed: int = 0,
    limit: int | None = None,
    slacks: Sequence[int] = (),
    force: bool = False,
    plots: Path | None = None,
    progress: bool = False,
    min_gaps: int = MIN_GAPS,
    real_lacunae: int = REAL_LACUNAE,
    threads: int | None = None,
) -> TuneResult:
    """Fit ``steps`` of the model ``folder`` on the validation split of ``prepared`` and write them.

    Args:
        folder: the model folder to fit and write (copy it first to keep the old values).
        prepared: a prepared corpus (``documents.parquet``); only its validation split is read.
        steps: some of :data:`~apollo_restore.tune.folder.STEPS`.
        per_length: spans per letter count 1–20 of each source (default ``{"ddb": 5}``), each
            under the hint conditions exact, range and none.
        seed: fixes the spans, their hints and their shuffled order.
        limit: fit on the first ``limit`` gaps of the shuffled set only.
        slacks: hint slacks to choose among with the weights, besides the folder's own.
        force: replace what the folder holds of ``steps``.
        plots: a folder for the calibration's reliability diagrams.
        progress: progress bars on stderr while gaps are restored.
        min_gaps: fewest gaps under each hint condition (of each kind) a calibration is fitted on.
        real_lacunae: editor supplements of each source's validation documents (each under the
            three conditions) the calibration of real lacunae is fitted on; 0: none, the
            calibration fitted on the synthetic gaps serves real lacunae too.
        threads: torch threads from now on (process-wide), set before anything is read;
            ``None``: the cores idle now, at most 2 (as every door loads a restorer:
            :func:`~apollo_restore.restoration.threads.use_threads`; torch's own default, every
            core, spins on a busy machine).

    Raises:
        TuneError: ``E701`` (the folder holds what a step writes, no ``force``), ``E702`` (weights
            asked of a folder without an ensemble), ``E703`` (no validation gap), ``E704`` (a
            calibration asked for with fewer than ``min_gaps`` gaps under a hint condition, of
            either kind when ``real_lacunae`` are asked for).
        RequestError: ``E311``, ``threads`` not a whole number from 1 to the CPU count.
        FileNotFoundError, ModelFolderError, ValueError: the folder or the corpus cannot be read.
    """
    use_threads(threads)  # E311 before anything is read
    steps = [s for s in STEPS if s in steps]
    found = held(folder, steps)
    if found and not force:
        raise TuneError("E701", folder=folder, found=", ".join(found))
    if "weights" in steps and not read_weights(folder):
        raise TuneError("E702", folder=folder)
    per_length = per_length or {"ddb": 5}
    gaps = validation_gaps(prepared, per_length, CONDITIONS, seed, limit)
    counts = {cond: sum(condition_of(g) == cond for g in gaps) for cond in CONDITIONS}
    real = []
    if "calibration" in steps and real_lacunae > 0:
        real = validation_lacunae(prepared, dict.fromkeys(per_length, real_lacunae), seed)
        counts |= {f"real {cond}": sum(condition_of(g) == cond for g in real) for cond in CONDITIONS}
    if "calibration" in steps and min(counts.values()) < min_gaps:  # checked before anything is searched
        found = ", ".join(f"{n} {cond}" for cond, n in counts.items())
        raise TuneError("E704", folder=folder, minimum=min_gaps, found=found)
    result = TuneResult(folder, len(gaps))
    meta, config = read_meta(folder), DEFAULT_RESTORE_CONFIG
    restorer = None
    if "weights" in steps:
        start, old_slack = read_weights(folder), hint_slack(folder)
        best, before = None, None
        for slack in sorted({old_slack, *slacks}):  # the folder's own slack measures "before"
            members = named_members(folder, config, slack)
            rows = member_scores(members, gaps, slack, config.pool, progress)
            own = {n: w for n, w in start.items() if n in members}
            fitted, value = fit_weights(rows, gaps, own)
            if slack == old_slack:
                before = objective(gaps, [r.ranked(own) for r in rows])
            if best is None or value > best[0]:
                best = (value, slack, fitted, members)
        value, slack, fitted, members = best
        weights = start | fitted
        result.objective["weights"] = (before, value)
        result.weights, result.slack = (start, weights), (old_slack, slack)
        where = shortened(str(prepared))
        chosen = f"{FITTED_BY} on validation gaps of {where} ({len(gaps)}, seed {seed}); see docs/training.md"
        meta = with_weights(folder, meta, weights, slack, chosen)
        used = [(members[n], w) for n, w in weights.items() if n in members and w > 0]
        restorer = Ensemble(used, name=folder.name, config=config.replace(hint_slack=slack), neural=members["neural"])
    if "demotions" in steps or "calibration" in steps:
        restorer = restorer or load_restorer(folder, present=False)
        asked = gaps + real  # the demotions are fitted on the synthetic gaps, the calibration on both kinds
        flagged = annotated(whole_pools(restorer, asked, progress), asked, default_forms())
        demotions = Demotions.of_folder(meta, folder / META_FILE)
        if "demotions" in steps:
            fitted_d, value = fit_demotions(flagged[: len(gaps)], gaps, demotions)
            result.objective["demotions"] = (demotions_value(flagged[: len(gaps)], gaps, demotions), value)
            result.demotions = (demotions, fitted_d)
            demotions, meta = fitted_d, with_demotions(meta, fitted_d)
        if "calibration" in steps:
            records = [record(g, pool) for g, pool in zip(asked, demoted(flagged, asked, demotions))]
            result.calibration = fit_calibration(records, plots)
            result.not_refitted = fitted_on_top(folder)
            sources = ",".join(f"{s}={n}" for s, n in per_length.items())
            if real:
                sources += f"; real lacunae {','.join(f'{s}={real_lacunae}' for s in per_length)}"
            fitted_on = {"fitted_by": FITTED_BY, "split": "validation", "sources": sources, "seed": seed}
            result.calibration.info = fitted_on | result.calibration.info | {"gaps_per_condition": counts}
    write_checked(folder, meta if "weights" in steps or "demotions" in steps else None, result.calibration)
    return result


def write_checked(folder: Path, meta: dict | None, calibration: Calibration | None) -> None:
    """Write ``meta`` (``apollo_restore.json``, when given) and then ``calibration`` (with the
    fingerprint of the folder as written, as :func:`load_restorer` scores it), each only once the
    schema reads it back as a load does: a file that would not load is never written, and when the
    calibration is refused after the new ``apollo_restore.json`` was written, the old one is put back.

    Raises:
        TuneError: ``E706`` naming the file and the value the schema refuses (the folder as it was).
    """
    path = folder / META_FILE
    old = read_regular(path, MAX_SETTINGS_BYTES)
    if meta is not None:
        try:
            check_meta(path, json.loads(json.dumps(meta, ensure_ascii=False)))
        except ModelFolderError as err:
            raise TuneError("E706", path=path, reason=str(err)) from None
        write_meta(folder, meta)
    if calibration is None:
        return
    try:
        calibration.info |= scoring_of(folder).info(folder)
        calibration.fitted = dict.fromkeys((*GAP_KINDS, *calibration.texts), scoring_of(folder).record())
        write_calibration(folder, calibration)
    except ModelFolderError as err:
        if meta is not None:
            write_atomic(path, old)
        raise TuneError("E706", path=folder / CALIBRATION_FILE, reason=str(err)) from None


def shortened(text: str, most: int = MAX_RECORDED) -> str:
    """``text`` as a record holds it: whole when at most ``most`` characters, else its start and
    end around ``…`` (``most`` characters in all)."""
    if len(text) <= most:
        return text
    head = (most - 1) // 2
    return text[:head] + "…" + text[len(text) - (most - 1 - head) :]


def fitted_on_top(folder: Path) -> list[str]:
    """The kinds of text whose block in ``folder``'s calibration was fitted on their own gaps
    (``info.by_kind`` names ``on-top``), which :func:`tune` does not fit again: what a new
    calibration loses, said in :meth:`TuneResult.lines`. Empty when the folder holds no
    calibration or one that cannot be read (writing the new one replaces it)."""
    try:
        old = Calibration.load(folder / CALIBRATION_FILE)
    except (OSError, ValueError, ModelFolderError):
        return []
    by_kind = old.info.get("by_kind") or {}
    if "on-top" not in str(by_kind.get("fitted_by", "")):
        return []
    return sorted(text for text in old.texts if text in by_kind)
