"""The commands in README.md, MODEL_CARD.md and the pages of docs/ run as shown, so the
documentation cannot drift from the code (issues 23, 37).

    python -m pytest -q tests/docs/test_readme.py

Every fenced ``bash``/``sh``/``console`` block is read line by line (``\\``-continued lines
joined, ``#`` comments dropped; in a ``console`` block the lines after ``$ `` are commands and
the lines up to the next ``$ `` their expected output). A command runs for real in the
repository root, ``apollo-restore`` being this interpreter's ``python -m apollo_restore`` (leading
``NAME=value`` settings are not part of a command's name), and
must exit 0 (printing JSON where it says ``--json``; a ``console`` block's result rows must be
the ones printed). Commands that take minutes, need the full corpora, a GPU or a server are in
:data:`SKIPPED` with the reason; for those, ``--help`` must list the command and every option
the documentation gives it. Fenced ``python`` blocks run whole. ``docs/large-models.md`` is left
out (:data:`NOT_RUN`): its commands are for GPU clusters, vLLM and a 24B model.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Pages whose commands are neither run nor checked, with the reason.
NOT_RUN = {"large-models.md": "torchrun on GPU nodes, Slurm, vLLM and a 24B model: none of them runs here"}
DOCS = (
    ROOT / "README.md",
    ROOT / "MODEL_CARD.md",
    *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in NOT_RUN),
)
SHELLS = ("bash", "sh", "console", "shell")
#: Commands not run, by their first words, with the reason (each still gets a ``--help`` check).
SKIPPED = {
    ("bash", "scripts/quickstart.sh"): "sets up .venv (pip install, minutes); its commands run here on the same file",
    ("source", ".venv/bin/activate"): "puts the .venv that quickstart.sh makes on the PATH; here apollo-restore is "
    "this interpreter's",
    (".venv/bin/python", "-m", "pytest"): "the test suite itself",
    ("bash", "scripts/setup.sh"): "installs the package and its test tools into .venv (pip install, minutes)",
    ("bash", "scripts/check.sh"): "CI: ruff and every test once, each folder alone (the fast tier, then the slow)",
    ("apollo-restore", "tune"): "restores hundreds of validation gaps of data/prepared (an hour)",
    ("apollo-restore", "prepare"): "reads the full corpora (docs/training.md, minutes)",
    ("apollo-restore", "train"): "trains a model (hours on CPU)",
    ("apollo-restore", "index"): "needs data/prepared, which `prepare` writes from the full corpora",
    ("apollo-restore", "ngram"): "needs data/prepared, which `prepare` writes from the full corpora",
    ("apollo-restore", "gaps"): "needs data/prepared, which `prepare` writes from the full corpora",
    ("apollo-restore", "evaluate"): "needs data/prepared or gap and prediction files (an evaluation takes hours)",
    ("apollo-restore", "predict"): "GAPSET.jsonl stands for the reader's gap set",
    ("apollo-restore", "serve"): "a server runs until stopped (tests/web drives the app and the page)",
    ("python", "scripts/pack_train_text.py"): "needs data/prepared, which `prepare` writes from the full corpora",
    ("apollo-restore", "train-attribution"): "trains the attribution model on data/prepared (minutes)",
    ("python", "benchmarks/attribution.py"): "needs data/prepared, which `prepare` writes from the full corpora",
}
_ROW = re.compile(r"^\s*\d+\s*│")


@dataclass
class Command:
    """One documented command: where it stands, its text, and the output shown after it."""

    where: str
    text: str
    expected: list[str] = field(default_factory=list)

    @property
    def words(self) -> list[str]:
        """The command's words, without leading ``NAME=value`` environment settings."""
        words = shlex.split(self.text, comments=True)
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
            words = words[1:]
        return words

    @property
    def skip_reason(self) -> str | None:
        words = tuple(self.words)
        return next((why for head, why in SKIPPED.items() if words[: len(head)] == head), None)


def blocks(path: Path) -> list[tuple[int, str, list[str]]]:
    """``(first line number, language, lines)`` of each fenced block of a Markdown file."""
    out, lang, start, lines = [], None, 0, []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            if lang is None:
                lang, start, lines = line[3:].strip() or "text", n + 1, []
            else:
                out.append((start, lang, lines))
                lang = None
        elif lang is not None:
            lines.append(line)
    return out


def commands(path: Path) -> list[Command]:
    """The shell commands of a Markdown file's fenced blocks."""
    found: list[Command] = []
    for start, lang, lines in blocks(path):
        if lang not in SHELLS:
            continue
        pending, first = "", 0
        for n, line in enumerate(lines, start):
            if lang == "console":
                if line.startswith("$ "):
                    found.append(Command(f"{path.name}:{n}", line[2:]))
                elif found and found[-1].where.startswith(path.name):
                    found[-1].expected.append(line)
                continue
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            first = first if pending else n
            pending += line[:-1] + " " if line.endswith("\\") else line
            if not line.endswith("\\"):
                found.append(Command(f"{path.name}:{first}", pending))
                pending = ""
    return found


def python_blocks(path: Path) -> list[tuple[str, str]]:
    return [(f"{path.name}:{start}", "\n".join(lines)) for start, lang, lines in blocks(path) if lang == "python"]


ALL = [c for doc in DOCS for c in commands(doc)]
#: Each command text once (its first place): a command shown on two pages runs once.
UNIQUE = list({c.text: c for c in reversed(ALL)}.values())[::-1]


def run(script: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """``script`` in bash in the repository root, ``apollo-restore`` being this interpreter's."""
    prelude = f'apollo-restore() {{ {shlex.quote(sys.executable)} -m apollo_restore "$@"; }}\n'
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"), COLUMNS="120")
    return subprocess.run(
        ["bash", "-c", prelude + script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_the_documents_give_commands_and_each_skip_has_a_reason():
    assert len([c for c in ALL if c.where.startswith("README")]) >= 4  # set up, test, serve, restore
    assert len({c.where.split(":")[0] for c in ALL}) >= 6  # the README and docs/ pages
    assert len(ALL) >= 25
    for command in ALL:
        if command.skip_reason is None:
            assert command.words[0] == "apollo-restore", f"{command.where}: {command.text!r}: run or skip it"


@pytest.mark.parametrize("command", [c for c in UNIQUE if c.skip_reason], ids=lambda c: c.where)
def test_a_skipped_command_and_its_options_exist(command):
    """Its ``--help`` answers and names every option the documentation gives it."""
    words = command.words
    if words[0] == "source":  # the .venv quickstart.sh makes (through setup.sh), activated
        setup = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
        assert words[1] == ".venv/bin/activate" and "venv" in setup and ".venv" in setup, command.text
        return
    if words[0] in ("bash", ".venv/bin/python"):  # the quickstart script, the test command
        assert (ROOT / words[1]).is_file() or words[1] == "-m", command.text
        if len(words) > 2 and words[2].isidentifier():  # a script's step (gpu_train.sh pack): one of its cases
            assert f"{words[2]})" in (ROOT / words[1]).read_text(encoding="utf-8"), command.text
        return
    head = ["apollo-restore", words[1]] if words[0] == "apollo-restore" else [sys.executable, words[1]]
    done = run(shlex.join(head + ["--help"]), timeout=120)
    assert done.returncode == 0, done.stderr
    options = {w.split("=")[0] for w in words if w.startswith("--")}
    missing = [o for o in sorted(options) if o not in done.stdout]
    assert not missing, f"{command.where}: {' '.join(head)} has no {missing} ({command.skip_reason})"


@pytest.mark.parametrize("command", [c for c in UNIQUE if not c.skip_reason], ids=lambda c: c.where)
def test_a_documented_command_runs_as_shown(command):
    done = run(command.text)
    assert done.returncode == 0, f"{command.where}: {command.text}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    if "--json" in command.words:
        json.loads(done.stdout)
    shown = [_cells(line) for line in command.expected if _ROW.match(line)]
    printed = [_cells(line) for line in done.stdout.splitlines() if _ROW.match(line)]
    for row in shown:  # a console block's rows, each printed (the first cells; timings are not compared)
        assert any(_same_row(row, got) for got in printed), f"{command.where}: README {row}, printed {printed}"
    gaps = [line.split(" · ")[:2] for line in command.expected if line.startswith("gap ")]
    assert all(g in [line.split(" · ")[:2] for line in done.stdout.splitlines()] for g in gaps)


def _cells(line: str) -> list[str]:
    """A table row's cells: rank, reading, normalised letters, probability."""
    return [cell.strip() for cell in line.split("│")][:4]


def _percent(cell: str) -> float | None:
    """A probability cell as a number (``"54 %"`` → 54, ``"<1 %"`` → 0.5), or ``None``."""
    text = cell.removesuffix("%").strip()
    if text.startswith("<"):
        return 0.5
    try:
        return float(text)
    except ValueError:
        return None


def _same_row(shown: list[str], printed: list[str]) -> bool:
    """Whether a documented row stands for a printed one: the same rank and, for a reading shown
    at 5 % or more, the same reading within 3 points; below 5 %, any reading below 5 % (near-ties
    trade places between CPUs: AVX2 and AVX512 kernels round differently). Other rows: equal."""
    p, q = (_percent(row[3]) if len(row) > 3 else None for row in (shown, printed))
    if p is None or q is None:
        return shown == printed
    if shown[0] != printed[0]:
        return False
    return q < 5 if p < 5 else shown[1:3] == printed[1:3] and abs(p - q) <= 3


@pytest.mark.parametrize("where, code", [b for doc in DOCS for b in python_blocks(doc)], ids=lambda v: str(v)[:20])
def test_a_documented_python_block_runs(where, code):
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{where}\n{done.stderr[-2000:]}"
