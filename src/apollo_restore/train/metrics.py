"""The metrics log of a training run: ``metrics.jsonl``, one JSON object a line, each with the
``"step"`` it was written at (training rows, validation rows), shared by the three recipes.

A run that starts at step ``s`` (a resumed one, or a fresh one at 0) first drops the rows past
``s``: they were written after the checkpoint it starts from and will be written again, so the
log never holds a step twice.

Model FLOPs utilisation (``mfu`` in the training rows): the model's FLOPs per second ÷ the
device's peak dense bf16 FLOPs per second, with the model's FLOPs per token taken as
:func:`flops_per_token` (6·N for the matrices, plus the attention scores, PaLM's convention) over
every position of a row, padding included (the device computes those too). Absent where the peak
is not known (CPU, or a GPU not in :data:`PEAK_BF16_FLOPS`): no made-up number.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import torch

from apollo_restore.train.step import StepResult

METRICS_FILE = "metrics.jsonl"


class MetricsLog:
    """Append-only JSONL rows in ``path``, cut back to ``start_step`` when opened."""

    def __init__(self, path: Path, start_step: int):
        self.path = Path(path)
        if self.path.exists():
            rows = [line for line in self.path.read_text().splitlines() if line.strip()]
            kept = [line for line in rows if json.loads(line).get("step", 0) <= start_step]
            if len(kept) < len(rows):
                tmp = self.path.with_name(self.path.name + ".tmp")
                tmp.write_text("".join(line + "\n" for line in kept))
                tmp.replace(self.path)

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` as one line."""
        with self.path.open("a") as fh:
            fh.write(json.dumps(record) + "\n")


#: Peak dense (no sparsity) bf16 tensor-core FLOP/s by a pattern of ``torch.cuda.get_device_name()``,
#: from NVIDIA's data sheets (the sparse figure halved). The first match counts.
PEAK_BF16_FLOPS: tuple[tuple[str, float], ...] = (
    (r"\bH100\b.*\bPCIe\b", 756e12),  # H100 PCIe
    (r"\bH100\b.*\b(SXM|HBM3)\b", 989e12),  # H100 SXM5 ("NVIDIA H100 80GB HBM3")
    (r"\bH200\b(?!.*\bNVL\b)", 989e12),  # H200 SXM ("NVIDIA H200"); the NVL, lower-clocked, is not listed
    (r"\bA100\b", 312e12),  # A100 (SXM4 and PCIe, 40 and 80 GB)
)


def peak_bf16_flops(device: torch.device | str) -> float | None:
    """The device's peak dense bf16 FLOP/s (:data:`PEAK_BF16_FLOPS`), or ``None`` on the CPU or a
    GPU not in the table."""
    device = torch.device(device)
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    return peak_for_name(torch.cuda.get_device_name(device))


def peak_for_name(name: str) -> float | None:
    """The peak dense bf16 FLOP/s of a CUDA device name (``"NVIDIA H100 80GB HBM3"``), else ``None``."""
    return next((peak for pattern, peak in PEAK_BF16_FLOPS if re.search(pattern, name)), None)


def flops_per_token(parameters: int, layers: int, hidden: int, block: int) -> float:
    """Training FLOPs (forward and backward) per token of a decoder, PaLM's count (Chowdhery et
    al. 2022, appendix B): ``6·N + 12·L·d·T``.

    Args:
        parameters: ``N``, every parameter (a tied embedding once), as the issue's figures count.
        layers: ``L`` decoder layers.
        hidden: ``d``, the width of the attention's queries (heads × head size = hidden size).
        block: ``T``, tokens per row (the attention term: every query against ``T`` keys, the
            causal mask not discounted).

    Returns:
        FLOPs per token (multiply by tokens per second for FLOP/s). ``6·N`` alone is
        ``6N / (6N + 12LdT)`` of it: 0.75 for ``large`` at ``T`` = 1,024, 0.80 for ``medium``.
    """
    return 6.0 * parameters + 12.0 * layers * hidden * block


def model_flops_per_token(model: torch.nn.Module, block: int) -> float:
    """:func:`flops_per_token` of a Hugging Face decoder (its config's ``num_hidden_layers`` and
    ``hidden_size``) at ``block`` tokens a row."""
    config = model.config
    return flops_per_token(
        sum(p.numel() for p in model.parameters()), config.num_hidden_layers, config.hidden_size, block
    )


def mfu(tokens_per_s: float, per_token: float, peak: float | None) -> float | None:
    """Model FLOPs utilisation: ``tokens_per_s`` (every position, padding included) ×
    ``per_token`` FLOPs ÷ ``peak`` FLOP/s, a share in [0, 1] (``None`` without a peak)."""
    if peak is None:
        return None
    return tokens_per_s * per_token / peak


def logs_at(step: int, log_every: int, last: bool) -> bool:
    """Whether step ``step`` (1-based, counted after it ran) gets a training row: the first,
    every ``log_every``-th, and the ``last`` one of the run."""
    return step == 1 or step % log_every == 0 or last


def train_row(
    trainer: dict[str, Any],
    result: StepResult,
    loss: float,
    lr: float,
    seconds: float,
    world_size: int = 1,
    utilisation: tuple[int, float, float | None] | None = None,
) -> dict[str, Any]:
    """The training row of the step that just ran.

    Args:
        trainer: the run's record after the step: ``step``, ``tokens`` (non-padding, all
            ranks, so far) and ``seconds`` (training time so far).
        result: what the step did on this rank.
        loss: its training loss (nats per labelled token; the mean over ranks under FSDP).
        lr: its learning rate.
        seconds: how long it took.
        world_size: ranks that each ran a step like it.
        utilisation: ``(block, flops per token, peak FLOP/s or None)`` to add ``mfu``
            (:func:`mfu` of this step's rows × ``block`` positions); absent when the peak is None.

    Returns:
        ``{"step", "loss", "lr", "grad_norm" (before clipping), "tokens", "tokens_per_s" (this
        step's, non-padding tokens), "seconds"}``, and ``"mfu"`` (a share, 4 digits) when known.
    """
    row = {
        "step": trainer["step"],
        "loss": round(loss, 4),
        "lr": lr,
        "grad_norm": round(float(result.grad_norm), 4),
        "tokens": trainer["tokens"],
        "tokens_per_s": round(result.tokens * world_size / seconds, 1),
        "seconds": round(trainer["seconds"], 2),
    }
    if utilisation is not None:
        block, per_token, peak = utilisation
        share = mfu(result.rows * world_size * block / seconds, per_token, peak)
        if share is not None:
            row["mfu"] = round(share, 4)
    return row
