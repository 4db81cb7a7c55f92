"""Calibration on real lacunae vs synthetic gaps (issue 45): records, cross-fitted ECE, monotonicity, threshold.

    # 1. records: each gap's whole pool as the calibration receives it (the shipped folder's restorer,
    #    its demotions), cached as JSONL (one line per gap, appended: a rerun resumes)
    #    (--shard i --shards 2: two processes, each its share, each its own file)
    python benchmarks/real_lacunae_calibration.py collect --prepared PREPARED --source ddb \
        --real 400 --synthetic 5 --out RECORDS/ddb.jsonl
    # 2. the tables (markdown on stdout)
    python benchmarks/real_lacunae_calibration.py report RECORDS/*.jsonl
    # 3. the shipped calibration's real parameters refitted on the records (validation only)
    python benchmarks/real_lacunae_calibration.py ship RECORDS/*.jsonl --out calibration.json --plots docs
    # 4. once, the design chosen: the shipped calibration on test records (collect --split test)
    python benchmarks/real_lacunae_calibration.py held-out TEST_RECORDS/*.jsonl
    # 5. by kind of text (issue 64): each kind's figures, cross-fitted, and the calibration with
    #    literary and inscription parameters and the miss penalty written (--out)
    python benchmarks/real_lacunae_calibration.py kinds RECORDS/*.jsonl [--out calibration.json]
    # 6. the same, each kind a small move of its base fit (a temperature, a bias), k-fold over
    #    documents, the base fit's own gaps left out; --out writes the kinds chosen
    python benchmarks/real_lacunae_calibration.py on-top RECORDS/*.jsonl --prepared PREPARED \
        [--choose literary="temperature + bias" --out calibration.json]
    # 7. once, the choice made: the shipped calibration by kind of text on test records
    python benchmarks/real_lacunae_calibration.py kinds-held-out TEST_RECORDS/*.jsonl [--before OLD.json]

Real lacunae are the editors' supplements of validation documents (``build_true_lacunae``), each
asked with the exact count, a range that contains it (``range_hint``) and no count; synthetic
gaps are ``tune``'s (``build_synthetic``, lengths 1–20, the same spans under the three
conditions). Validation split only; ``--split test`` exists for the one final measurement.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from pathlib import Path

import numpy as np

from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import (
    build_synthetic,
    parse_gap_id,
    true_lacunae_under_hints,
)
from apollo_restore.evaluate.metrics import agnostic
from apollo_restore.restoration.text_kind import SOURCE_KINDS

KINDS = ("real", "synthetic")


def real_gaps(table, source: str, split: str, limit: int, seed: int) -> list:
    """Editor supplements asked with the exact count, a range containing it and no count (as ``tune`` asks them)."""
    return true_lacunae_under_hints(table, source, split, limit, seed)


def collect(args: argparse.Namespace) -> None:
    import torch

    from apollo_restore.data.orthography import default_forms
    from apollo_restore.model.folder import read_meta
    from apollo_restore.restoration.load import DEFAULT_MODEL, load_restorer
    from apollo_restore.restoration.ranking.demotions import Demotions
    from apollo_restore.tune.calibration import record
    from apollo_restore.tune.demotions import annotated, demoted, whole_pools

    torch.set_num_threads(args.threads)
    folder = Path(args.folder) if args.folder else DEFAULT_MODEL
    table = load_documents(Path(args.prepared), args.split, [args.source])
    gaps = [] if not args.real else real_gaps(table, args.source, args.split, args.real, args.seed)
    if args.synthetic:
        gaps += build_synthetic(
            table, args.source, args.split, args.synthetic, ("exact", "range", "none"), seed=args.seed
        )
    # interleave by span so that a partial run holds whole spans of every kind
    gaps.sort(key=lambda g: (zlib.crc32(parse_gap_id(g.id).base.encode()), g.id))
    out = Path(args.out)
    done = {json.loads(line)["id"] for line in out.open()} if out.exists() else set()
    todo = [g for g in gaps[args.shard :: args.shards] if g.id not in done]  # a shard resumes its own share
    print(f"{len(gaps)} gaps, {len(todo)} to do", file=sys.stderr)
    restorer = load_restorer(folder, present=False)
    demotions = Demotions.of_folder(read_meta(folder), folder / "apollo_restore.json")
    forms = default_forms()
    member_scores = _capture_member_scores(restorer)
    with out.open("a") as fh:
        for g in todo:
            pools = whole_pools(restorer, [g])
            pool = demoted(annotated(pools, [g], forms), [g], demotions)[0]
            r = record(g, pool)
            top = agnostic(pool[0].text) if pool else ""
            context = agnostic(g.prefix + " " + g.suffix)
            members = {name: [by_text.get(t) for t in r["texts"]] for name, by_text in member_scores.items()}
            r |= {"kind": "real" if g.kind == "true" else "synthetic", "source": args.source, "target": g.target,
                  "in_context": bool(top) and top in context, "members": members}  # fmt: skip
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            fh.flush()


def _capture_member_scores(restorer) -> dict[str, dict[str, float]]:
    """Each language-model member's log-score of every reading of the last gap the ensemble
    ranked (member name → reading → nats): each such member's ``score_readings`` is wrapped to
    keep what it returns; the ensemble's own ranking is untouched."""
    last: dict[str, dict[str, float]] = {}

    def keeping(member):
        score_readings = member.score_readings

        def wrapped(prefix, suffix, hint, readings):
            scores = score_readings(prefix, suffix, hint, readings)
            last[member.name] = dict(zip(readings, map(float, scores)))
            return scores

        return wrapped

    for (member, _), kind in zip(restorer.members, restorer.kinds):
        if kind in ("neural", "classical"):
            member.score_readings = keeping(member)
    return last


# -- the measurements ---------------------------------------------------------------------------

CHOSEN = "real fit beside the shipped synthetic"
NONE_TERMS = ("letters", "margin", "score")  # what ships: d, e, f
TEMPERATURE = ("letters", "margin10")  # what ships: g, h
#: variants tried, each kind its own parameters: (terms of "none of these", terms of the temperature)
FEATURES = {
    "hint only": ((), ()),
    "letters": (("letters",), ()),
    "letters+margin+score (before)": (NONE_TERMS, ()),
    "+ in context": (NONE_TERMS + ("context",), ()),
    "+ members agree": (NONE_TERMS + ("agree",), ()),
    "+ temperature by letters": (NONE_TERMS, ("letters",)),
    "+ temperature by letters, margin (both kinds)": (NONE_TERMS, TEMPERATURE),
}


def matrices(records: list[dict]) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], np.ndarray]:
    from apollo_restore.restoration.ranking.calibration import features, temperature_features
    from apollo_restore.tune.calibration import arrays

    logq, unknown, letters, top_score, truth, _ = arrays(records)
    x = features(logq, letters, top_score)
    cols = {"letters": x[:, 0], "margin": x[:, 1], "score": x[:, 2], "margin10": temperature_features(x)[:, 1]}
    cols["context"] = np.array([float(r.get("in_context", False)) for r in records])
    cols["agree"] = np.array([members_agree(r) for r in records])
    return logq, unknown, cols, truth


def members_agree(record: dict) -> float:
    """How many of the language-model members score the first reading highest of the pool
    (records of ``collect`` before the members were recorded: 0)."""
    agree = 0
    for scores in (record.get("members") or {}).values():
        known = [-np.inf if v is None else v for v in scores]
        agree += bool(known) and int(np.argmax(known)) == 0
    return float(agree)


def _columns(cols: dict[str, np.ndarray], names: tuple[str, ...], n: int) -> np.ndarray:
    return np.stack([cols[f] for f in names], 1) if names else np.zeros((n, 0))


def fit_by_group(records: list[dict], group, feats: tuple[tuple[str, ...], tuple[str, ...]], held=None) -> dict:
    """Per group (``group(record)``): a, b, c, one weight per feature of "none of these" and one
    per feature of the temperature (``feats``); δ shared (the library's
    :func:`~apollo_restore.tune.calibration.fit_groups`, any features)."""
    from apollo_restore.tune.calibration import fit_groups

    logq, unknown, cols, truth = matrices(records)
    keys = [group(r) for r in records]
    names = sorted(set(keys))
    x, t = (_columns(cols, f, len(records)) for f in feats)
    per, delta, _ = fit_groups(logq, unknown, x, truth, np.array([names.index(k) for k in keys]), held, t)
    per[:, 0] = np.exp(per[:, 0])  # log a → a
    return {"groups": dict(zip(names, per)), "penalty": delta, "feats": feats, "group": group}


def apply_by_group(records: list[dict], model: dict) -> np.ndarray:
    """``(G, K)`` calibrated p of each record's readings, in the record's order."""
    from apollo_restore.restoration.ranking.calibration import calibrated_by

    logq, unknown, cols, _ = matrices(records)
    x, t = (_columns(cols, f, len(records)) for f in model["feats"])
    params = np.stack([model["groups"][model["group"](r)] for r in records])
    return calibrated_by(logq, unknown, x, params, model["penalty"], t)


def doc_fold(r: dict) -> int:
    return zlib.crc32(r["doc"].encode()) % 2


def cross_fit(records: list[dict], train, group, feats, held: float | None = None) -> np.ndarray:
    """Each record's p under the fit on the other half of the documents' records that ``train`` keeps."""
    out: list[np.ndarray | None] = [None] * len(records)
    for f in (0, 1):
        model = fit_by_group([r for r in records if doc_fold(r) != f and train(r)], group, feats, held)
        idx = [i for i, r in enumerate(records) if doc_fold(r) == f]
        for i, p in zip(idx, apply_by_group([records[i] for i in idx], model)):
            out[i] = p
    return out


def shipped(records: list[dict], by_kind: bool = False) -> list[np.ndarray]:
    """p under the shipped calibration: its synthetic parameters for every gap (the one fit
    before issue 45), or with ``by_kind`` each gap's kind's (what ships)."""
    from apollo_restore.restoration.config import DEFAULT_MODEL
    from apollo_restore.restoration.ranking.calibration import Calibration, calibrated
    from apollo_restore.tune.calibration import arrays

    cal = Calibration.load(DEFAULT_MODEL)
    logq, unknown, letters, top_score, _, conds = arrays(records)
    out = []
    for i, c in enumerate(conds):
        p = calibrated(logq[i : i + 1], unknown[i : i + 1], letters[i : i + 1], top_score[i : i + 1],
                       cal.for_kind(records[i]["kind"] if by_kind else "synthetic")[c],
                       cal.unknown_word_penalty)[0]  # fmt: skip
        out.append(np.where(np.isfinite(logq[i]), p, 0.0))
    return out


def top1(records: list[dict], probs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Top reading's p and whether it is right (ties by the record order: the ranking's)."""
    from apollo_restore.restoration.ranking.order import best_first

    conf, ok = [], []
    for r, p in zip(records, probs):
        n = len(r["logq"])
        if n == 0:
            conf.append(0.0)
            ok.append(False)
            continue
        b = best_first(list(p[:n]))[0]
        conf.append(float(p[b]))
        ok.append(b == r["truth"])
    return np.array(conf), np.array(ok)


def ece(conf: np.ndarray, ok: np.ndarray) -> float | None:
    from apollo_restore.evaluate.metrics import reliability

    return reliability(conf.tolist(), ok.tolist())["ece"] if len(conf) else None


def truth_prob(records: list[dict], probs: list[np.ndarray]) -> np.ndarray:
    return np.array([p[r["truth"]] if r["truth"] >= 0 else 0.0 for r, p in zip(records, probs)])


def report(records: list[dict]) -> None:
    from apollo_restore.evaluate.metrics import reliability

    by_cond = lambda r: r["condition"]  # noqa: E731
    by_kind = lambda r: (r["kind"], r["condition"])  # noqa: E731
    every = lambda r: True  # noqa: E731
    synth = lambda r: r["kind"] == "synthetic"  # noqa: E731
    variants = {"uncalibrated": [np.where(np.isfinite(np.array(r["logq"])), np.exp(r["logq"]), 0) for r in records]}
    variants["shipped"] = shipped(records)  # the synthetic fit (before: the one fit)
    variants["synthetic fit (today)"] = cross_fit(records, synth, by_cond, (NONE_TERMS, ()))
    variants["pooled fit"] = cross_fit(records, every, by_cond, (NONE_TERMS, TEMPERATURE))
    for name, feats in FEATURES.items():
        variants[f"per kind, {name}"] = cross_fit(records, every, by_kind, feats)
    # what ships: the synthetic parameters kept, the real ones fitted on real lacunae beside them (δ held)
    from apollo_restore.restoration.config import DEFAULT_MODEL
    from apollo_restore.restoration.ranking.calibration import Calibration

    held = Calibration.load(DEFAULT_MODEL).unknown_word_penalty
    real = cross_fit(records, lambda r: r["kind"] == "real", by_cond, (NONE_TERMS, TEMPERATURE), held)
    variants[CHOSEN] = [real[i] if r["kind"] == "real" else variants["shipped"][i] for i, r in enumerate(records)]
    sources = sorted({r["source"] for r in records})
    cells = [(s, k, c) for s in sources for k in KINDS for c in ("exact", "range", "none", "all")]
    counts = {}
    print(
        f"{len(records)} records: "
        + ", ".join(
            f"{s} {k} {sum(r['source'] == s and r['kind'] == k for r in records)}" for s in sources for k in KINDS
        )
    )
    print("\n## Top-1 ECE, cross-fitted over documents (2 folds)\n")
    head = [f"{s[:4]} {k[:4]} {c}" for s, k, c in cells]
    print("| variant | " + " | ".join(head) + " | mean NLL |")
    print("|---" * (len(head) + 2) + "|")
    for name, probs in variants.items():
        row = []
        for s, k, c in cells:
            idx = [
                i for i, r in enumerate(records) if r["source"] == s and r["kind"] == k and c in ("all", r["condition"])
            ]
            counts[(s, k, c)] = len(idx)
            conf, ok = top1([records[i] for i in idx], [probs[i] for i in idx])
            e = ece(conf, ok)
            row.append("–" if e is None else f"{e:.3f}")
        tp = np.maximum(truth_prob(records, probs), 1e-12)
        miss = np.array([r["truth"] < 0 for r in records])
        none_p = np.array([max(1e-12, 1 - float(np.sum(p))) for p in probs])
        nll = float(np.mean(-np.log(np.where(miss, none_p, tp))))
        print(f"| {name} | " + " | ".join(row) + f" | {nll:.3f} |")
    print("| gaps | " + " | ".join(str(counts[c]) for c in cells) + " | |")
    chosen = CHOSEN
    for name in ("shipped", chosen):
        print(f"\n## Reliability (top-1), {name}\n")
        for s in sources:
            for k in KINDS:
                idx = [i for i, r in enumerate(records) if r["source"] == s and r["kind"] == k]
                conf, ok = top1([records[i] for i in idx], [variants[name][i] for i in idx])
                rel = reliability(conf.tolist(), ok.tolist())
                cell = "{lo:.1f}-{hi:.1f}: n {n} shown {confidence:.2f} right {accuracy:.2f}"
                bins = "; ".join(cell.format(**b) for b in rel["bins"])
                print(f"- {s} {k} (n {rel['n']}, ECE {rel['ece']}): {bins}")
    print("\n## More information, same gap (real lacunae): p of the edition's reading\n")
    for name in ("shipped", chosen):
        tp = truth_prob(records, variants[name])
        by = {}
        for i, r in enumerate(records):
            if r["kind"] == "real":
                by.setdefault((r["source"], parse_gap_id(r["id"]).base), {})[r["condition"]] = tp[i]
        for s in sources:
            trip = [v for (src, _), v in by.items() if src == s and len(v) == 3]
            if not trip:
                continue
            print(f"- {name}, {s} ({len(trip)} gaps):", end="")
            for more, less in (("exact", "range"), ("range", "none"), ("exact", "none")):
                d = np.array([v[more] - v[less] for v in trip])
                print(
                    f" {more} vs {less}: lower in {np.mean(d < -0.01):.0%} (by >0.01), mean change {d.mean():+.3f};",
                    end="",
                )
            print(
                " mean p exact/range/none "
                + "/".join(f"{np.mean([v[c] for v in trip]):.3f}" for c in ("exact", "range", "none"))
            )
    print("\n## Written into the text (real lacunae): top p >= t\n")
    print("| variant | source | t | share of gaps written | right |")
    print("|---|---|---|---|---|")
    for name in ("shipped", chosen):
        for s in [*sources, "all"]:
            idx = [i for i, r in enumerate(records) if r["kind"] == "real" and s in ("all", r["source"])]
            conf, ok = top1([records[i] for i in idx], [variants[name][i] for i in idx])
            for t in (0.8, 0.9, 0.95):
                w = conf >= t
                right = f"{ok[w].mean():.3f} ({w.sum()})" if w.any() else "–"
                print(f"| {name} | {s} | {t} | {w.mean():.3f} | {right} |")


def held_out(records: list[dict]) -> None:
    """The shipped calibration on held-out (test) records, nothing fitted: top-1 ECE per source,
    kind and condition, before (one fit) and after (per kind); the share written and right."""
    variants = {"before (one fit)": shipped(records), "after (per kind)": shipped(records, by_kind=True)}
    sources = sorted({r["source"] for r in records})
    print(f"{len(records)} held-out records")
    print("| variant | source | kind | exact | range | none | all | n |")
    print("|---|---|---|---|---|---|---|---|")
    for name, probs in variants.items():
        for s in sources:
            for k in KINDS:
                row = []
                for c in ("exact", "range", "none", "all"):
                    idx = [i for i, r in enumerate(records)
                           if r["source"] == s and r["kind"] == k and c in ("all", r["condition"])]  # fmt: skip
                    conf, ok = top1([records[i] for i in idx], [probs[i] for i in idx])
                    e = ece(conf, ok)
                    row.append("–" if e is None else f"{e:.3f}")
                if row[-1] != "–":
                    print(f"| {name} | {s} | {k} | " + " | ".join(row) + f" | {len(idx)} |")
    probs = variants["after (per kind)"]
    for s in [*sources, "all"]:
        idx = [i for i, r in enumerate(records) if r["kind"] == "real" and s in ("all", r["source"])]
        conf, ok = top1([records[i] for i in idx], [probs[i] for i in idx])
        for t in (0.8, 0.9):
            w = conf >= t
            print(f"- {s} real, p >= {t}: written {w.mean():.3f}, right {ok[w].mean():.3f} ({w.sum()})")


def ship(records: list[dict], folder: Path, out: Path, plots: Path | None = None) -> None:
    """The shipped calibration with its real lacunae's parameters fitted on the real records (the
    library's ``fit``, ``δ`` held at the folder's), its synthetic parameters kept; ``info``: the
    real lacunae's cross-fitted figures (``tune``'s ``measures``), the synthetic fit's under
    ``synthetic``. With ``plots``, the real lacunae's reliability diagrams under the synthetic
    gaps' fit (``reliability_real_before.png``) and their own (cross-fitted, ``reliability_real_after.png``)."""
    from apollo_restore.restoration.ranking.calibration import Calibration
    from apollo_restore.tune.calibration import _ece, arrays, fit, folds, measures, shown

    old = Calibration.load(folder)
    real = [r for r in records if r["kind"] == "real"]
    held = old.unknown_word_penalty

    def fitted(rs: list[dict]) -> Calibration:
        cal = fit(*arrays(rs), penalty=held)
        return Calibration(cal.conditions, held, cal.info, old.for_kind("synthetic"))

    cal = fitted(real)
    halves = folds(real)
    parts = [shown(halves[f], fitted(halves[1 - f])) for f in (0, 1)]
    width = max(p.shape[1] for p, _ in parts)
    probs = np.concatenate([np.pad(p, ((0, 0), (0, width - p.shape[1]))) for p, _ in parts])
    right = np.concatenate([np.pad(r, ((0, 0), (0, width - r.shape[1]))) for _, r in parts])
    before, after = measures(*shown(real, None)), measures(probs, right)
    keep = ("model_fingerprint", "model_fingerprint_parts", "members", "precision")
    # the synthetic fit's figures: under "synthetic" once real lacunae have their own fit, else the whole info
    synthetic = old.info.get("synthetic") or {k: v for k, v in old.info.items() if k not in keep}
    sources = sorted({r["source"] for r in real})
    counts = {f"real {c}": sum(r["condition"] == c for r in real) for c in ("exact", "range", "none")}
    per_source = {s: sum(r["source"] == s for r in real) for s in sources}
    info = {
        "fitted_by": "benchmarks/real_lacunae_calibration.py ship (apollo_restore.tune.calibration.fit, "
                     "delta held; synthetic parameters: apollo-restore tune, kept)",
        "split": "validation", "sources": "real lacunae " + ",".join(f"{s}={n // 3}" for s, n in per_source.items()),
        "seed": 0, "gaps": len(real), "nll": cal.info["nll"], "ece_before": _ece(before),
        "top1_before": round(before["top1_acc"], 4), "ece_after_cross_fitted": _ece(after),
        "top1_after_cross_fitted": round(after["top1_acc"], 4),
        "above_90_after_cross_fitted": {"share": round(after["sure_share"], 4), "right": after["sure_right"]},
        "gaps_per_condition": counts, "synthetic": synthetic,
    }  # fmt: skip
    cal.info = info | {k: old.info[k] for k in keep}
    cal.save(out)
    if plots is not None:
        from apollo_restore.evaluate.report import plot_reliability

        one_fit = Calibration(old.for_kind("synthetic"), held)
        plot_reliability(measures(*shown(real, one_fit)), plots / "reliability_real_before.png",
                         f"{len(real)} real lacunae (validation), the synthetic gaps' fit")  # fmt: skip
        plot_reliability(after, plots / "reliability_real_after.png",
                         f"{len(real)} real lacunae (validation), their own fit (cross-fitted)")  # fmt: skip
    print(json.dumps(info, indent=1, ensure_ascii=False))


# -- by kind of text (issue 64) ----------------------------------------------------------------

TEXT_OF_SOURCE = SOURCE_KINDS  # a record's source → its kind of text (DCLP's papyri are literary)
SYNTHETIC_FOR_LITERARY = False  # --literary synthetic
SHOWN_AT = 0.7  # literary readings shown at >= 70 % must be right >= 70 % of the time


def with_misses(records: list[dict], mu: float, delta: float) -> list[dict]:
    """The records with the miss penalty folded into the unknown-word flags (``δ · u' = δ · u + μ · miss``)."""
    from apollo_restore.tune.calibration import misses_of

    miss = misses_of(records)
    out = []
    for i, r in enumerate(records):
        n = len(r["texts"])
        flags = (np.array(r["unknown"], dtype=float) + mu / delta * miss[i, :n]).tolist()
        out.append(r | {"unknown": flags})
    return out


def kind_blocks(records: list[dict], delta: float, old) -> dict:
    """Each kind of text's parameters fitted on its records (``δ`` held): documentary on real
    lacunae of ddb, inscriptions on theirs, literary texts on their synthetic gaps (their
    validation split has no supplements); a kind with no records keeps ``old``'s real parameters."""
    from apollo_restore.tune.calibration import arrays, fit

    blocks = {}
    for text in ("documentary", "inscription", "literary"):
        rs = [r for r in records if r["text"] == text]
        blocks[text] = fit(*arrays(rs), penalty=delta).conditions if rs else old.conditions
    if SYNTHETIC_FOR_LITERARY:  # the synthetic gaps' parameters (fitted on ddb), nothing fitted on literary texts
        blocks["literary"] = old.for_kind("synthetic")
    return blocks


def kind_probs(records: list[dict], blocks: dict, delta: float) -> list[np.ndarray]:
    from apollo_restore.restoration.ranking.calibration import calibrated
    from apollo_restore.tune.calibration import arrays

    logq, unknown, letters, top_score, _, conds = arrays(records)
    out = []
    for i, c in enumerate(conds):
        p = calibrated(logq[i : i + 1], unknown[i : i + 1], letters[i : i + 1], top_score[i : i + 1],
                       blocks[records[i]["text"]][c], delta)[0]  # fmt: skip
        out.append(np.where(np.isfinite(logq[i]), p, 0.0))
    return out


def cross_kinds(records: list[dict], delta: float, old, fitted: set[str]) -> list[np.ndarray]:
    """Each record's p under the blocks fitted on the other half of the documents (kinds not in
    ``fitted`` keep ``old``'s real parameters)."""
    out: list = [None] * len(records)
    for f in (0, 1):
        train = [r for r in records if doc_fold(r) != f and r["text"] in fitted]
        blocks = kind_blocks(train, delta, old)
        blocks = {t: (b if t in fitted else old.conditions) for t, b in blocks.items()}
        if SYNTHETIC_FOR_LITERARY:
            blocks["literary"] = old.for_kind("synthetic")
        idx = [i for i, r in enumerate(records) if doc_fold(r) == f]
        for i, p in zip(idx, kind_probs([records[i] for i in idx], blocks, delta)):
            out[i] = p
    return out


def nll_of(records: list[dict], probs: list[np.ndarray]) -> float:
    tp = np.maximum(truth_prob(records, probs), 1e-12)
    miss = np.array([r["truth"] < 0 for r in records])
    none_p = np.array([max(1e-12, 1 - float(np.sum(p))) for p in probs])
    return float(np.mean(-np.log(np.where(miss, none_p, tp))))


def kinds(records: list[dict], fitted: set[str], out: Path | None) -> None:
    """Per kind of text (``text``: documentary, inscription, literary), the shipped calibration and
    the kinds' own fits, each cross-fitted over documents; the miss penalty μ chosen by
    cross-fitted log-loss; with ``out``, the calibration written: ``kinds.real`` as shipped
    (documentary), ``kinds.literary`` / ``kinds.inscription`` fitted on all their records where in
    ``fitted``, ``miss_penalty`` μ."""
    from apollo_restore.restoration.config import DEFAULT_MODEL
    from apollo_restore.restoration.ranking.calibration import Calibration

    old = Calibration.load(DEFAULT_MODEL)
    delta = old.unknown_word_penalty
    records = [r | {"text": TEXT_OF_SOURCE[r["source"]]} for r in records]
    # what each kind is calibrated on: real lacunae, literary texts' synthetic gaps
    used = [r for r in records if r["kind"] == "real" or r["text"] == "literary"]
    texts = ("documentary", "inscription", "literary")
    print(f"{len(used)} records: " + ", ".join(f"{t} {sum(r['text'] == t for r in used)}" for t in texts))
    shipped_p = kind_probs(used, dict.fromkeys(("documentary", "inscription", "literary"), old.conditions), delta)
    variants = {"shipped (real for every kind)": shipped_p}
    best = None
    from apollo_restore.tune.calibration import MISS_PENALTIES

    for mu in MISS_PENALTIES:
        rs = with_misses(used, mu, delta)
        probs = cross_kinds(rs, delta, old, fitted)
        nll = nll_of(rs, probs)
        print(f"- miss penalty {mu}: cross-fitted log-loss {nll:.4f}")
        if best is None or nll < best[0] - 1e-4:
            best = (nll, mu, probs)
    _, mu, probs = best
    variants[f"by kind (fitted: {', '.join(sorted(fitted))}), miss penalty {mu}"] = probs
    print("\n| variant | kind | gaps | ECE top-1 | log-loss | shown >= 0.7: share, right | Top-1 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, ps in variants.items():
        for text in ("documentary", "inscription", "literary"):
            idx = [i for i, r in enumerate(used) if r["text"] == text]
            if not idx:
                continue
            rs, pp = [used[i] for i in idx], [ps[i] for i in idx]
            conf, ok = top1(rs, pp)
            high = conf >= SHOWN_AT
            right = f"{ok[high].mean():.3f}" if high.any() else "–"
            print(f"| {name} | {text} | {len(idx)} | {ece(conf, ok):.3f} | {nll_of(rs, pp):.3f} | "
                  f"{high.mean():.3f}, {right} | {ok.mean():.3f} |")  # fmt: skip
        from apollo_restore.tune.calibration import misses_of

        miss = misses_of(used)
        tops = [(i, int(np.argmax(p[: len(used[i]["texts"])]))) for i, p in enumerate(ps) if used[i]["texts"]]
        missed = [(i, b) for i, b in tops if miss[i, b]]
        conf = np.array([ps[i][b] for i, b in missed])
        right = np.array([used[i]["truth"] == b for i, b in missed])
        if missed:
            print(f"| {name} | first reading misses the count | {len(missed)} | | | shown {conf.mean():.3f} | "
                  f"{right.mean():.3f} |")  # fmt: skip
    if out is None:
        return
    rs = with_misses(used, mu, delta)
    blocks = kind_blocks([r for r in rs if r["text"] in fitted], delta, old)
    own = set(fitted) | ({"literary"} if SYNTHETIC_FOR_LITERARY else set())
    texts = {t: blocks[t] for t in ("literary", "inscription") if t in own}
    cal = Calibration(old.conditions, delta, dict(old.info), old.for_kind("synthetic"), dict(old.fitted), texts, mu)
    for t in texts:
        cal.fitted[t] = old.fitted["real"]
    counts = {t: sum(r["text"] == t for r in used) for t in ("documentary", "inscription", "literary")}
    literary = "the synthetic gaps' parameters" if SYNTHETIC_FOR_LITERARY else "fitted on their synthetic gaps"
    cal.info["by_kind"] = {
        "fitted_by": "benchmarks/real_lacunae_calibration.py kinds (apollo_restore.tune.calibration.fit, delta held)",
        "validation_records": counts,
        "literary": f"{literary} (no editor's supplement in the validation split)",
        "miss_penalty": f"{mu} (cross-fitted log-loss, of {', '.join(map(str, MISS_PENALTIES))})",
    }
    cal.save(out)
    print(f"\nwritten {out}")


# -- a kind of text's parameters as a move of the base fit (issue 64, second round) -------------

#: Each kind of text: the records it is calibrated on (kind of gap) and the parameters it starts from.
BASES = {"documentary": "real", "inscription": "real", "literary": "synthetic"}
#: What a kind's own fit may move (``fit_on_top``'s ``bias``, ``per_condition``); ``None``: nothing (the
#: base); ``"own"``: every parameter, fitted on the kind's records alone (``tune``'s ``fit``).
ON_TOP = {
    "base": None,
    "temperature": (False, False),
    "temperature + bias": (True, False),
    "temperature + bias per condition": (True, True),
    "own fit (a-h per condition)": "own",
}


def base_fit_ids(prepared: Path, info: dict) -> set[str]:
    """The ids of the real lacunae the shipped real fit was fitted on (``info``: its ``sources``,
    e.g. ``real lacunae ddb=400,inscription=200``, and ``seed``), rebuilt from the prepared split:
    a record among them is not out of sample for the base."""
    spec = info["sources"].removeprefix("real lacunae ")
    out = set()
    for part in spec.split(","):
        source, n = part.split("=")
        table = load_documents(prepared, info["split"], [source])
        out |= {g.id for g in real_gaps(table, source, info["split"], int(n), int(info["seed"]))}
    return out


def text_probs(records: list[dict], blocks: dict[str, dict], delta: float, mu: float) -> list[np.ndarray]:
    """Each record's p under its kind of text's block (``blocks``: text → condition → Scaling), with
    the miss penalty ``mu``."""
    from apollo_restore.restoration.ranking.calibration import calibrated
    from apollo_restore.tune.calibration import arrays, misses_of

    logq, unknown, letters, top_score, _, conds = arrays(records)
    misses = misses_of(records, logq.shape[1])
    out = []
    for i, c in enumerate(conds):
        one = slice(i, i + 1)
        p = calibrated(logq[one], unknown[one], letters[one], top_score[one], blocks[records[i]["text"]][c], delta,
                       misses[one], mu)[0]  # fmt: skip
        out.append(np.where(np.isfinite(logq[i]), p, 0.0))
    return out


def k_fold(r: dict, k: int) -> int:
    return zlib.crc32(r["doc"].encode()) % k


def on_top_blocks(records: list[dict], old, variant: str) -> dict[str, dict]:
    """Each kind of text's block under ``variant`` (:data:`ON_TOP`), fitted on ``records``
    (documentary texts keep the real lacunae's parameters: nothing of theirs is fitted)."""
    from apollo_restore.tune.calibration import arrays, fit, fit_on_top, misses_of

    blocks = {}
    for text, base_kind in BASES.items():
        base = old.for_kind(base_kind)
        rs = [r for r in records if r["text"] == text]
        if ON_TOP[variant] is None or text == "documentary" or not rs:
            blocks[text] = base
            continue
        if ON_TOP[variant] == "own":  # tune's fit on the kind's records alone, δ and μ held
            logq = arrays(rs)[0]
            blocks[text] = fit(*arrays(rs), penalty=old.unknown_word_penalty, misses=misses_of(rs, logq.shape[1]),
                               miss_penalty=old.miss_penalty).conditions  # fmt: skip
            continue
        bias, per_condition = ON_TOP[variant]
        blocks[text] = fit_on_top(rs, base, old.unknown_word_penalty, old.miss_penalty, bias, per_condition)
    return blocks


def on_top_cross_fitted(records: list[dict], old, variant: str, k: int) -> list[np.ndarray]:
    """Each record's p under the blocks fitted on the other ``k - 1`` folds of documents."""
    out: list = [None] * len(records)
    for f in range(k):
        blocks = on_top_blocks([r for r in records if k_fold(r, k) != f], old, variant)
        idx = [i for i, r in enumerate(records) if k_fold(r, k) == f]
        ps = text_probs([records[i] for i in idx], blocks, old.unknown_word_penalty, old.miss_penalty)
        for i, p in zip(idx, ps):
            out[i] = p
    return out


def ece_floor(conf: np.ndarray, draws: int = 200) -> float:
    """The ECE a perfectly calibrated restorer would show at these confidences, on average: each
    top reading right with probability its ``conf`` (``draws`` draws, seeded): the cell's noise floor."""
    rng = np.random.default_rng(0)
    return float(np.mean([ece(conf, rng.random(len(conf)) < conf) for _ in range(draws)]))


def figures(records: list[dict], probs: list[np.ndarray]) -> str:
    """``n | ECE (its noise floor) | log-loss | shown >= 0.7: share, right | Top-1`` of top-1 readings."""
    conf, ok = top1(records, probs)
    high = conf >= SHOWN_AT
    right = f"{ok[high].mean():.3f}" if high.any() else "–"
    loss = nll_of(records, probs)
    return (f"{len(records)} | {ece(conf, ok):.3f} ({ece_floor(conf):.3f}) | {loss:.3f} | {high.mean():.3f}, {right} "
            f"| {ok.mean():.3f}")  # fmt: skip


def with_text(records: list[dict]) -> list[dict]:
    """The ``records`` of the gaps each kind of text's block is fitted on (real lacunae; literary
    texts: synthetic gaps, :data:`BASES`), each with its kind of text under ``text``."""
    records = [r | {"text": TEXT_OF_SOURCE[r["source"]]} for r in records]
    return [r for r in records if r["kind"] == BASES[r["text"]]]


def print_by_kind(first: str, named_probs: list[tuple[str, list]], records: list[dict]) -> None:
    """A table of :func:`figures` per kind of text and hint condition (``all`` first) of each
    ``(name, probs)`` (``probs``: each record's probabilities), ``first`` the name column's title."""
    shown_at = f"shown >= {SHOWN_AT}: share, right"
    print(f"| {first} | kind | condition | gaps | ECE top-1 (floor) | log-loss | {shown_at} | Top-1 |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for name, probs in named_probs:
        for text in BASES:
            for cond in ("all", "exact", "range", "none"):
                idx = [i for i, r in enumerate(records) if r["text"] == text and cond in ("all", r["condition"])]
                if idx:
                    rows = figures([records[i] for i in idx], [probs[i] for i in idx])
                    print(f"| {name} | {text} | {cond} | {rows} |")


def on_top(records: list[dict], k: int, prepared: Path | None, out: Path | None, chosen: dict[str, str]) -> None:
    """Per kind of text and hint condition, each :data:`ON_TOP` variant cross-fitted over ``k``
    folds of documents (validation); with ``prepared``, real lacunae the shipped real fit was
    fitted on are left out; with ``out``, the calibration with each kind's ``chosen`` variant
    (text → :data:`ON_TOP` name) fitted on all its records written: ``kinds.literary`` always (its
    base is the synthetic gaps' block), ``kinds.inscription`` unless ``base``; the rest as shipped."""
    from apollo_restore.restoration.config import DEFAULT_MODEL
    from apollo_restore.restoration.ranking.calibration import Calibration

    old = Calibration.load(DEFAULT_MODEL)
    records = with_text(records)
    if prepared is not None:
        seen = base_fit_ids(prepared, old.info)
        print(f"left out: {sum(r['id'] in seen for r in records)} records the shipped real fit was fitted on")
        records = [r for r in records if r["id"] not in seen]
    texts = tuple(BASES)
    print(f"{len(records)} records: " + ", ".join(f"{t} {sum(r['text'] == t for r in records)}" for t in texts))
    print()
    print_by_kind("variant", [(v, on_top_cross_fitted(records, old, v, k)) for v in ON_TOP], records)
    if out is None:
        return
    texts_written = {}
    for t in ("literary", "inscription"):
        if t == "literary" or chosen.get(t, "base") != "base":
            texts_written[t] = on_top_blocks(records, old, chosen.get(t, "base"))[t]
    cal = Calibration(old.conditions, old.unknown_word_penalty, dict(old.info), old.for_kind("synthetic"),
                      dict(old.fitted), texts_written, old.miss_penalty)  # fmt: skip
    for t in texts_written:
        cal.fitted[t] = old.fitted[BASES[t]]
    counts = {t: sum(r["text"] == t for r in records) for t in texts}
    cal.info["by_kind"] = {
        "fitted_by": "benchmarks/real_lacunae_calibration.py on-top (apollo_restore.tune.calibration.fit_on_top)",
        "validation_records": counts,
        "inscription": f"the real lacunae's parameters, {chosen.get('inscription', 'base')} (fitted on "
                       "their supplements)",
        "literary": f"the synthetic gaps' parameters, {chosen.get('literary', 'base')} (fitted on their "
                    "synthetic gaps: no editor's supplement in the validation split)",
        "miss_penalty": old.info.get("by_kind", {}).get("miss_penalty", str(old.miss_penalty)),
    }  # fmt: skip
    cal.save(out)
    print(f"\nwritten {out}")


def kinds_held_out(records: list[dict], before: Path | None) -> None:
    """Once, the choice made: the shipped calibration by kind of text on held-out (test) records,
    nothing fitted, each kind under its own block (and under ``before``'s, another
    ``calibration.json``, e.g. the one shipped before), per hint condition."""
    from apollo_restore.restoration.config import DEFAULT_MODEL
    from apollo_restore.restoration.ranking.calibration import Calibration

    records = with_text(records)
    cals = {"shipped": Calibration.load(DEFAULT_MODEL)}
    if before is not None:
        cals = {"before": Calibration.load(before)} | cals
    print(f"{len(records)} held-out records\n")
    named = []
    for name, cal in cals.items():
        blocks = {text: cal.for_kind("real", text) for text in BASES}
        named.append((name, text_probs(records, blocks, cal.unknown_word_penalty, cal.miss_penalty)))
    print_by_kind("calibration", named, records)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--prepared", required=True)
    c.add_argument("--source", required=True)
    c.add_argument("--split", default="validation")
    c.add_argument("--real", type=int, default=150, help="editor supplements (each under 3 conditions)")
    c.add_argument("--synthetic", type=int, default=5, help="synthetic spans per letter count 1-20")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--folder", default=None)
    c.add_argument("--threads", type=int, default=1)
    c.add_argument("--out", required=True)
    c.add_argument("--shard", type=int, default=0, help="this process's share of the gaps: every --shards-th from it")
    c.add_argument("--shards", type=int, default=1)
    r = sub.add_parser("report")
    r.add_argument("records", nargs="+")
    w = sub.add_parser("ship", help="write the calibration with its real lacunae's parameters refitted")
    w.add_argument("records", nargs="+")
    w.add_argument("--out", required=True)
    w.add_argument("--plots", type=Path, default=None, help="a folder for the real lacunae's reliability diagrams")
    h = sub.add_parser("held-out", help="the shipped calibration on test records (nothing fitted)")
    h.add_argument("records", nargs="+")
    k = sub.add_parser("kinds", help="calibration by kind of text (issue 64), cross-fitted; --out writes it")
    k.add_argument("records", nargs="+")
    k.add_argument("--fit", default="literary,inscription", help="kinds of text given their own parameters")
    k.add_argument("--out", type=Path, default=None)
    k.add_argument(
        "--literary",
        choices=("fit", "synthetic"),
        default="fit",
        help="literary texts' parameters: fitted on their synthetic gaps, or the synthetic gaps' own",
    )
    o = sub.add_parser("on-top", help="each kind of text's parameters as a small move of the base fit, cross-fitted")
    o.add_argument("records", nargs="+")
    o.add_argument("--folds", type=int, default=5)
    o.add_argument("--prepared", type=Path, default=None, help="leave out the real lacunae the base was fitted on")
    o.add_argument("--choose", action="append", default=[], metavar="KIND=VARIANT",
                   help=f"what --out writes for a kind (literary, inscription) of {', '.join(ON_TOP)}; "
                        "a kind not named: base")  # fmt: skip
    o.add_argument("--out", type=Path, default=None)
    t = sub.add_parser("kinds-held-out", help="once: the shipped calibration by kind of text on test records")
    t.add_argument("records", nargs="+")
    t.add_argument("--before", type=Path, default=None, help="another calibration.json to set beside it")
    args = ap.parse_args(argv)
    if args.cmd == "collect":
        collect(args)
    elif args.cmd == "kinds":
        global SYNTHETIC_FOR_LITERARY
        SYNTHETIC_FOR_LITERARY = args.literary == "synthetic"
        rows = {}
        for path in args.records:
            for line in Path(path).open():
                row = json.loads(line)
                rows[row["id"]] = row  # a record collected twice counts once
        kinds(list(rows.values()), set(args.fit.split(",")), args.out)
    elif args.cmd == "on-top":
        rows = {}
        for path in args.records:
            for line in Path(path).open():
                row = json.loads(line)
                rows[row["id"]] = row  # a record collected twice counts once
        chosen = dict(c.split("=", 1) for c in args.choose)
        if any(k not in ("literary", "inscription") or v not in ON_TOP for k, v in chosen.items()):
            ap.error(f"--choose takes literary=VARIANT or inscription=VARIANT, VARIANT one of {', '.join(ON_TOP)}")
        on_top(list(rows.values()), args.folds, args.prepared, args.out, chosen)
    elif args.cmd == "kinds-held-out":
        kinds_held_out([json.loads(line) for p in args.records for line in Path(p).open()], args.before)
    elif args.cmd == "held-out":
        held_out([json.loads(line) for p in args.records for line in Path(p).open()])
    elif args.cmd == "ship":
        from apollo_restore.restoration.config import DEFAULT_MODEL

        records = [json.loads(line) for p in args.records for line in Path(p).open()]
        ship(records, DEFAULT_MODEL, Path(args.out), args.plots)
    else:
        report([json.loads(line) for p in args.records for line in Path(p).open()])


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
