"""Shared fixtures (a tiny model that has memorised two passages, a tiny prepared corpus) and
the test tiers: tests marked ``slow`` or ``distributed`` (spawns torchrun) are skipped unless
``--runslow`` is given::

    pytest                              # the fast tier
    pytest --runslow                    # everything
    pytest --runslow -m distributed     # only the torchrun tests
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from apollo_restore.data.table import write_documents

if TYPE_CHECKING:
    import torch

    from apollo_restore.fim.examples import FimExample
    from apollo_restore.fim.tokenizer import CharTokenizer

# The model and training imports (torch, transformers: tens of seconds on a busy machine) are
# made where a fixture needs them, so that a test process that never trains a model starts fast.

SLOW_MARKERS = ("slow", "distributed")

if os.environ.get("PYTEST_XDIST_WORKER"):
    # one torch thread in each worker of `pytest -n auto`, unless asked otherwise: the workers
    # already fill the cores, and torch's default (every core, in every worker) oversubscribes
    # them (the fast tier: 109 s against 115-143 s on two idle cores)
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow or distributed")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow tier: give --runslow")
    for item in items:
        if any(marker in item.keywords for marker in SLOW_MARKERS):
            item.add_marker(skip)


PASSAGE_1 = "κομων μουσαιου του ηρακλειτου πεκυσι ωρου χαιρειν· ομολογω πεπρακεναι σοι καμηλον θηλειαν"
PASSAGE_2 = "ετους δευτερου και εικοστου αντωνινου καισαρος του κυριου τυβι· ελαβον παρα σου τας δραχμας"
#: (prefix, middle, suffix) of the two memorised gaps
MEMORISED = [
    ("κομων μουσαιου του ηρακλειτου πεκυσι ωρου χαιρειν· ομολογω ", "πεπρακεναι", " σοι καμηλον θηλειαν"),
    ("ετους δευτερου και εικοστου ", "αντωνινου", " καισαρος του κυριου τυβι· ελαβον παρα σου τας δραχμας"),
]


def memorise(
    examples: list[FimExample], steps: int = 300, seed: int = 0
) -> tuple[torch.nn.Module, CharTokenizer, list[float]]:
    """Train ``tiny`` on fixed FIM examples (every example, every step) until it recites them.

    Returns:
        ``(model, tokenizer, losses per step)``.
    """
    import torch

    from apollo_restore.fim.layout import DEFAULT_LAYOUT
    from apollo_restore.fim.tokenizer import CharTokenizer
    from apollo_restore.model.builders import build_model
    from apollo_restore.train.recipe import RecipeConfig
    from apollo_restore.train.step import train_step

    torch.manual_seed(seed)
    tok = CharTokenizer()
    model = build_model("tiny", tok, seed)
    rows = [DEFAULT_LAYOUT.encode(tok, ex.prefix, ex.middle, ex.suffix, ex.hint, "all") for ex in examples]
    width = max(len(ids) for ids, _ in rows)
    ids = torch.tensor([r[0] + [tok.pad_id] * (width - len(r[0])) for r in rows])
    labels = torch.tensor([r[1] + [-100] * (width - len(r[1])) for r in rows])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    options = RecipeConfig(grad_clip=1e6, bf16=False)  # fp32, no clipping (its largest bound: far above any norm)
    batches = itertools.repeat((ids, labels))
    losses = []
    model.train()
    for _ in range(steps):
        step = train_step(model, opt, batches, options, lr=1e-2, device=ids.device, pad_id=tok.pad_id)
        losses.append(step.loss.item())
    return model.eval(), tok, losses


@pytest.fixture(scope="session")
def memorised_model(tmp_path_factory) -> Path:
    """A saved model folder of ``tiny`` that has memorised :data:`MEMORISED` (with every hint form)."""
    from apollo_restore.fim.examples import FimExample
    from apollo_restore.hint import NO_HINT, Hint
    from apollo_restore.model.checkpoint import save_model

    hints = [lambda m: NO_HINT, lambda m: Hint.exact(len(m)), lambda m: Hint.span(len(m) - 2, len(m) + 1)]
    examples = [FimExample(p, m, s, hint(m)) for p, m, s in MEMORISED for hint in hints]
    model, tok, losses = memorise(examples)
    folder = tmp_path_factory.mktemp("memorised")
    save_model(model, tok, folder, {"size": "tiny", "training": {"final_loss": losses[-1]}})
    return folder


@pytest.fixture
def cli_error():
    """The message of a usage error as the CLI prints it (plain click: ``Error: [E601] …``), without
    its number: one line. Every usage error is numbered (checked here)."""

    def message(result) -> str:
        errors = [line.removeprefix("Error: ") for line in result.output.splitlines() if line.startswith("Error: ")]
        assert all(error.startswith("[E601] ") for error in errors), errors
        return " ".join(error.removeprefix("[E601] ") for error in errors)

    return message


def document_row(doc_id: str, text: str, split: str, source: str = "ddb", **extra) -> dict:
    """A row of ``documents.parquet`` for hand-made test corpora."""
    row = {
        "id": doc_id,
        "source": source,
        "split": split,
        "group": f"{source}:{doc_id}",
        "tm": None,
        "date": None,
        "text": text,
        "text_uncertain_excluded": text,
        "supplied_start": [],
        "supplied_end": [],
        "letters": sum(c.isalpha() for c in text),
        "lacunae": text.count("…"),
    }
    row.update(extra)
    return row


@pytest.fixture
def tiny_prepared(tmp_path) -> Path:
    """A prepared folder with the two passages (repeated) in train and validation."""
    rows = [document_row(f"t{i}", (PASSAGE_1 if i % 2 else PASSAGE_2) + " " + PASSAGE_1, "train") for i in range(6)]
    rows += [document_row("v0", PASSAGE_2 + " " + PASSAGE_1, "validation"), document_row("x0", PASSAGE_1, "test")]
    write_documents(rows, tmp_path / "documents.parquet")
    return tmp_path
