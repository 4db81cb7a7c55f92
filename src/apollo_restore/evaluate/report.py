"""The report folder: ``report.md``, ``metrics.json`` and per-length plots (docs/design.md, *Evaluation*).

    write_report(Path("reports/default-ddb"), metrics)

``metrics`` is the dictionary built by :func:`apollo_restore.evaluate.harness.evaluate`, to which
the caller may add ``"meta"`` (model, gap set, seed ...), ``"bpc"``
(:func:`~apollo_restore.evaluate.harness.bpc_by_period`) and ``"peers"``
(:func:`~apollo_restore.evaluate.peers.side_by_side`). Predictions and the gap set are written
beside it by the caller (the CLI keeps ``predictions.jsonl`` and ``gaps.jsonl``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from apollo_restore.evaluate.gapsets import CONDITIONS
from apollo_restore.evaluate.metrics import PRIOR_LENGTHS, UNIFORM_LENGTHS

REPORT_FILE, METRICS_FILE = "report.md", "metrics.json"
RELIABILITY_PLOT = "reliability.png"
#: The report's note where the plots are not drawn (the package alone, without its ``[train]`` extra).
NO_PLOTS = "not drawn: matplotlib is not installed (pip install 'apollo-restore[train]')"
CONDITION_NAMES = {
    "exact": "Exact", "range": "Range (contains truth)", "wrong10": "10% wrong", "wrong50": "50% wrong",
    "wrong100": "100% wrong", "none": "No hint",
}  # fmt: skip


def _f(x: float | None, digits: int = 3, sign: bool = False) -> str:
    if x is None:
        return "—"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def _table(header: list[str], rows: list[list[str]], text_columns: int = 1) -> list[str]:
    align = ["---"] * text_columns + ["---:"] * (len(header) - text_columns)
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"] + [
        "| " + " | ".join(r) + " |" for r in rows
    ]


def _conditions(block: dict[str, Any]) -> list[str]:
    return [c for c in CONDITIONS if c in block] + sorted(c for c in block if c not in CONDITIONS)


def _missing_note(summary: dict[str, Any]) -> str:
    return f" (no gaps of length {', '.join(map(str, summary['missing']))}: skipped)" if summary.get("missing") else ""


def headline_section(groups: dict[str, Any]) -> list[str]:
    """Prior vs uniform-weighted protocol, synthetic gaps, uncertain-included, exact hint."""
    block = groups.get("synthetic", {}).get("included", {})
    cond = "exact" if "exact" in block else next(iter(_conditions(block)), None)
    if cond is None:
        return []
    lines = [
        f"## Headline: synthetic gaps, {CONDITION_NAMES.get(cond, cond).lower()} hint, uncertain-included",
        "",
        f"*Prior* = unweighted mean over gaps of {PRIOR_LENGTHS[0]}–{PRIOR_LENGTHS[-1]} letters; "
        f"*uniform* = mean per exact length, then mean over lengths {UNIFORM_LENGTHS[0]}–{UNIFORM_LENGTHS[-1]}; "
        "*all* = unweighted mean over every gap. Space-agnostic match; Δlen = letters predicted − true.",
        "",
    ]
    rows, notes = [], []
    for source, s in block[cond].items():
        p, u, a = s["prior"], s["uniform"], s["all"]
        rows.append(
            [
                source,
                _f(p["top1"]),
                _f(p["top20"]),
                _f(p["char_acc"]),
                _f(p["cer"]),
                _f(p["dlen"], 2, True),
                str(p["n"]),
            ]
            + [_f(u["top1"]), _f(u["top20"]), _f(u["char_acc"]), _f(u["cer"]), _f(u["dlen"], 2, True), str(u["n"])]
            + [_f(a["top1"]), _f(a["top20"])]
        )
        if u.get("missing"):
            notes.append(f"- {source}: uniform protocol{_missing_note(u)}")
    header = ["source", "prior T1", "prior T20", "prior char acc", "prior CER", "prior Δlen", "prior n"]
    header += ["W.T1", "W.T20", "W.char acc", "W.CER", "W.Δlen", "W.n", "all T1", "all T20"]
    return lines + _table(header, rows) + ([""] + notes if notes else []) + [""]


def robustness_section(groups: dict[str, Any]) -> list[str]:
    """Uniform-weighted metrics of the same gaps under each hint condition."""
    block = groups.get("synthetic", {}).get("included", {})
    conds = _conditions(block)
    if len(conds) < 2:
        return []
    lines = ["## Hint robustness (same gaps, uniform-weighted)", ""]
    sources = sorted({src for c in conds for src in block[c]})
    for source in sources:
        rows = []
        for c in conds:
            if source in block[c]:
                u, p = block[c][source]["uniform"], block[c][source]["prior"]
                rows.append(
                    [
                        CONDITION_NAMES.get(c, c),
                        _f(u["top1"]),
                        _f(u["top20"]),
                        _f(u["char_acc"]),
                        _f(u["cer"]),
                        _f(u["dlen"], 2, True),
                        _f(p["top1"]),
                        str(u["n"]),
                    ]
                )
        lines += (
            [f"**{source}**", ""]
            + _table(["hint", "W.T1", "W.T20", "W.char acc", "W.CER", "W.Δlen", "prior T1", "n"], rows)
            + [""]
        )
    return lines


def silver_section(groups: dict[str, Any]) -> list[str]:
    """Agreement with the editors on true lacunae (exact hint)."""
    block = groups.get("true", {}).get("included", {}).get("exact", {})
    if not block:
        return []
    rows = []
    for source, s in block.items():
        a, u = s["all"], s["uniform"]
        rows.append(
            [
                source,
                str(a["n"]),
                _f(a["top1"]),
                _f(a["top20"]),
                _f(a["cer"]),
                _f(a["char_acc"]),
                _f(a["dlen"], 2, True),
                _f(u["top1"]),
                _f(u["top20"]),
            ]
        )
    return (
        ["## Agreement with editors on true lacunae (silver labels, exact hint)", "",
         "agree@1 / agree@20: the editor's supplement is the top candidate / among the top 20; CER against "
         "the supplement. Unweighted over the sampled supplements (their natural length mix); "
         "W. = uniform-weighted.", ""]
        + _table(["source", "n", "agree@1", "agree@20", "CER", "char acc", "Δlen", "W.agree@1", "W.agree@20"], rows)
        + [""]
    )  # fmt: skip


def bpc_section(bpc: dict[str, Any] | None, mode: str | None) -> list[str]:
    if not bpc:
        return []
    rows = []
    for source, periods in bpc.items():
        for period, e in periods.items():
            rows.append(
                [source, period, _f(e["bpc"]), _f(e["ppl"], 2), str(e["chars"]), str(e["windows"]), str(e["documents"])]
            )
    how = {
        "prefix": "each window read left to right as a FIM prefix with an empty suffix (`[BOS][SUFFIX][PREFIX] w`)",
        "middle": "each window as the middle after an empty suffix and prefix (`[BOS][SUFFIX][PREFIX][MIDDLE] w`)",
    }.get(mode or "", mode or "")
    return (
        ["## Bits per character on held-out text, by period", "",
         f"Mode `{mode}`: {how}; letters, spaces and `·` scored, gap markers read but not scored. "
         "Perplexity is per character (2^bpc). Periods from document dates (unknown = undated).", ""]
        + _table(["source", "period", "bpc", "ppl/char", "chars", "windows", "documents"], rows, 2)
        + [""]
    )  # fmt: skip


def uncertain_section(uncertain: dict[str, Any]) -> list[str]:
    if not uncertain:
        return []
    rows = []
    for source, conds in uncertain.items():
        for cond, e in conds.items():
            inc, exc = e["included"], e["excluded"]
            rows.append(
                [
                    source,
                    cond,
                    str(e["n"]),
                    _f(inc["top1"]),
                    _f(exc["top1"]),
                    _f(e["delta_top1"], 3, True),
                    _f(inc["top20"]),
                    _f(exc["top20"]),
                ]
            )
    return (
        ["## Uncertain-included vs uncertain-excluded context (same gaps, uniform-weighted)", ""]
        + _table(["source", "hint", "n", "W.T1 incl.", "W.T1 excl.", "Δ", "W.T20 incl.", "W.T20 excl."], rows, 2)
        + [""]
    )


def per_length_section(groups: dict[str, Any], plots: list[str]) -> list[str]:
    block = groups.get("synthetic", {}).get("included", {}).get("exact", {})
    lines = ["## Per gap length (exact hint, uncertain-included)", ""]
    lines += [f"![{p}]({p})" for p in plots] + ([""] if plots else [])
    for source, s in block.items():
        rows = [
            [n, str(e["n"]), _f(e["top1"]), _f(e["top20"]), _f(e["cer"]), _f(e["dlen"], 2, True)]
            for n, e in s["per_length"].items()
        ]
        lines += [f"**{source}**", ""] + _table(["letters", "n", "T1", "T20", "CER", "Δlen"], rows) + [""]
    return lines if block or plots else []


def peers_section(peers: dict[str, Any] | None) -> list[str]:
    if not peers:
        return []
    lines = [
        "## Side by side with published systems",
        "",
        f"{peers['gaps']} gaps predicted by every system: {', '.join(peers['systems'])}.",
        "",
    ]
    if not peers["gaps"]:
        return lines + ["No gap in common: nothing to compare.", ""]
    rows = []
    for name, groups in peers["metrics"].items():
        for kind, variants in groups.items():
            for cond, sources in variants.get("included", {}).items():
                for source, s in sources.items():
                    p, u = s["prior"], s["uniform"]
                    rows.append(
                        [
                            name,
                            kind,
                            cond,
                            source,
                            str(s["all"]["n"]),
                            _f(p["top1"]),
                            _f(p["top20"]),
                            _f(u["top1"]),
                            _f(u["top20"]),
                            _f(u["cer"]),
                            _f(u["dlen"], 2, True),
                        ]
                    )
    lines += _table(
        ["system", "kind", "hint", "source", "n", "prior T1", "prior T20", "W.T1", "W.T20", "W.CER", "W.Δlen"], rows, 4
    ) + [""]
    for pair, counts in peers.get("head_to_head", {}).items():
        lines.append(f"- Top-1, {pair}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return lines + [""]


def calibration_section(calibration: dict[str, Any] | None, plotted: bool = True) -> list[str]:
    """Expected calibration error per hint condition (synthetic gaps, uncertain-included), with
    the reliability diagram when it was ``plotted``."""
    if not calibration:
        return []
    lines = [
        "## Calibration",
        "",
        "How often a reading shown at *p* is right: top-1 pairs the first reading's probability with "
        '"it is the target"; top-20 pairs the sum of the listed probabilities with "the target is listed". '
        "ECE = mean |accuracy − probability| over 10 probability bins, weighted by gaps (0 is perfect).",
        "",
    ]
    rows = []
    for cond, block in calibration.items():
        t1, t20 = block["top1"], block["top20"]
        rows.append([CONDITION_NAMES.get(cond, cond), str(t1["n"]), _f(t1["ece"]), _f(t20["ece"])])
    figure = ["", f"![reliability]({RELIABILITY_PLOT})"] if plotted else []
    return lines + _table(["hint", "gaps", "ECE top-1", "ECE top-20"], rows) + figure + [""]


def plot_reliability(calibration: dict[str, Any], path: Path, title: str = "reliability (all hint conditions)") -> None:
    """Reliability diagram: accuracy against shown probability per bin, top-1 (left) and top-20
    (right), for the ``all`` block of :func:`~apollo_restore.evaluate.harness.calibration_metrics`
    (or any ``{"top1", "top20"}`` pair); marker area ∝ gaps in the bin."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(8, 4), sharey=True)
    for ax, key, name in zip(axes, ("top1", "top20"), ("top-1 reading", "all listed readings (top-20)")):
        bins = calibration[key]["bins"]
        ax.plot([0, 1], [0, 1], color="grey", lw=1, ls="--")
        ax.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], marker="o", color="C0")
        ax.scatter(
            [b["confidence"] for b in bins],
            [b["accuracy"] for b in bins],
            s=[8 + 2 * b["n"] ** 0.8 for b in bins],
            alpha=0.3,
        )
        ax.set_title(f"{name}: ECE {_f(calibration[key]['ece'])}", fontsize=10)
        ax.set_xlabel("shown probability")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("fraction right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_curves(curves: dict[str, dict[str, Any]], title: str, path: Path) -> None:
    """Top-1 (upper) and Top-20 (lower) against gap length, one line per labelled
    per-length table, saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for label, table in curves.items():
        xs = [int(n) for n in table]
        for ax, metric in zip(axes, ("top1", "top20")):
            ax.plot(xs, [table[str(n)][metric] for n in xs], marker="o", ms=3, label=label)
    for ax, name in zip(axes, ("Top-1", "Top-20")):
        ax.set_ylabel(name)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[1].set_xlabel("gap length (letters)")
    axes[0].set_title(title)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_per_length(groups: dict[str, Any], out: Path, kind: str = "synthetic") -> list[str]:
    """One PNG per source: Top-1 (upper) and Top-20 (lower) against gap length, one line per hint
    condition. Returns the file names written."""
    block = groups.get(kind, {}).get("included", {})
    written = []
    for source in sorted({src for c in block.values() for src in c}):
        curves = {
            CONDITION_NAMES.get(cond, cond): block[cond].get(source, {}).get("per_length", {})
            for cond in _conditions(block)
        }
        name = f"per_length_{source}.png"
        _plot_curves(curves, f"{source}: accuracy by gap length ({kind} gaps)", out / name)
        written.append(name)
    return written


def plot_peers(peers: dict[str, Any], out: Path, condition: str = "exact") -> list[str]:
    """Per-length Top-1/Top-20 of every system on the shared gaps (one PNG per source)."""
    by_source: dict[str, dict[str, dict[str, Any]]] = {}
    for name, groups in peers["metrics"].items():
        for source, s in groups.get("synthetic", {}).get("included", {}).get(condition, {}).items():
            by_source.setdefault(source, {})[name] = s["per_length"]
    written = []
    for source, systems in sorted(by_source.items()):
        name = f"peers_per_length_{source}.png"
        _plot_curves(systems, f"{source}: systems side by side ({condition} hint)", out / name)
        written.append(name)
    return written


def render_markdown(metrics: dict[str, Any], plots: list[str] | None = None) -> str:
    """The text of ``report.md`` (``plots``: the files drawn; ``None``: all of them)."""
    meta = metrics.get("meta", {})
    groups = metrics.get("groups", {})
    lines = [f"# Evaluation report: {meta.get('model', 'model')}", ""]
    lines += [f"- {k}: {v}" for k, v in meta.items() if k != "model"]
    lines += [f"- gaps: {metrics.get('gaps')}, predicted: {metrics.get('predicted')}, k = {metrics.get('k')}", ""]
    plotted = plots is None or RELIABILITY_PLOT in plots
    plots = plots or []
    lines += headline_section(groups)
    lines += robustness_section(groups)
    lines += silver_section(groups)
    lines += bpc_section(metrics.get("bpc"), meta.get("bpc_mode"))
    lines += uncertain_section(metrics.get("uncertain", {}))
    lines += calibration_section(metrics.get("calibration"), plotted)
    lines += per_length_section(groups, [p for p in plots if p.startswith("per_length")])
    lines += peers_section(metrics.get("peers"))
    lines += [f"![{p}]({p})" for p in plots if p.startswith("peers_")]
    return "\n".join(lines).rstrip() + "\n"


def can_plot() -> bool:
    """Whether the plots can be drawn: matplotlib (the ``[train]`` extra) is installed."""
    return importlib.util.find_spec("matplotlib") is not None


def write_report(out: Path, metrics: dict[str, Any]) -> Path:
    """Write ``report.md``, ``metrics.json`` and the plots into ``out`` (created). Without
    matplotlib (the package installed without ``[train]``) the plots are left out and the
    report's header says so (``meta["plots"]``: :data:`NO_PLOTS`).

    Returns:
        The path of ``report.md``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plots: list[str] = []
    if not can_plot():
        metrics.setdefault("meta", {})["plots"] = NO_PLOTS
    else:
        plots = plot_per_length(metrics.get("groups", {}), out)
        if metrics.get("peers"):
            plots += plot_peers(metrics["peers"], out)
        if metrics.get("calibration", {}).get("all"):
            plot_reliability(metrics["calibration"]["all"], out / RELIABILITY_PLOT)
            plots.append(RELIABILITY_PLOT)
    (out / METRICS_FILE).write_text(json.dumps(metrics, ensure_ascii=False, indent=1), encoding="utf-8")
    path = out / REPORT_FILE
    path.write_text(render_markdown(metrics, plots), encoding="utf-8")
    return path


__all__ = [
    "METRICS_FILE",
    "NO_PLOTS",
    "RELIABILITY_PLOT",
    "REPORT_FILE",
    "can_plot",
    "plot_per_length",
    "plot_peers",
    "plot_reliability",
    "render_markdown",
    "write_report",
]
