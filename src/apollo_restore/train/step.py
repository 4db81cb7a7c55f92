"""One optimiser step of FIM training, shared by the three recipes (single device, Hugging Face
fine-tuning, FSDP2): the loss, AdamW and its parameter groups, the step itself, validation loss.

Each recipe stays a flat loop of its own (data, checkpoints, ranks); what a step *is* lives
here once: set the scheduled learning rate, run ``grad_accum`` micro-batches under optional
bf16 autocast, each loss divided by ``grad_accum`` before backward, fail on a non-finite loss
(checked once a step, before the weights change: the step's only wait for the GPU), clip the
global gradient norm, step AdamW (0.9, 0.95), ε 1e-8, and clear the gradients.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch.distributed.tensor import DTensor

from apollo_restore.fim.layout import IGNORE_INDEX
from apollo_restore.train.recipe import RecipeConfig

Batch = tuple[torch.Tensor, torch.Tensor]
"""``(ids, labels)``, each ``(B, T)`` int64; ``labels[b, t]`` is the target of the prediction at
``t`` (already shifted), :data:`~apollo_restore.fim.layout.IGNORE_INDEX` where no loss is taken
(the FIM layout decides which positions count)."""


@dataclass(frozen=True)
class Teacher:
    """A larger model whose next-token distributions the student also learns (distillation).

    Attributes:
        model: the teacher, a causal LM (or its compiled forward) of the student's vocabulary,
            called as ``model(input_ids=ids)`` without gradients.
        weight: the share of the loss that is the distillation term (0–1; the rest is the
            cross-entropy with the labels).
        temperature: both distributions are softened by it; the term is scaled by its square
            (so that its gradients keep their size).
    """

    model: Callable[..., Any]
    weight: float = 0.5
    temperature: float = 1.0


def fim_loss(
    model: Callable[..., Any],
    ids: torch.Tensor,
    labels: torch.Tensor,
    bf16: bool = False,
    teacher: Teacher | None = None,
) -> torch.Tensor:
    """Mean cross-entropy (nats) over the labelled positions, a ``()`` tensor on the model's
    device (reading it waits for the device: the caller decides when). With a ``teacher``:
    ``(1 − w) · CE + w · τ² · KL(teacher_τ ‖ model_τ)``, the KL divergence of the two softened
    next-token distributions (nats) averaged over the same labelled positions.

    Args:
        model: a causal LM (or its compiled forward) called as ``model(input_ids=ids)``.
        ids, labels: a :data:`Batch` on the model's device. The labels are *not* passed to the
            model, which would shift them again.
        bf16: run the forward passes under bf16 autocast; the loss is taken in fp32.
        teacher: distil from it (:class:`Teacher`), or ``None``.
    """
    with torch.autocast(ids.device.type, dtype=torch.bfloat16, enabled=bf16):
        logits = model(input_ids=ids).logits  # (B, T, V)
    ce = torch.nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=IGNORE_INDEX
    )
    if teacher is None or teacher.weight == 0:
        return ce
    with torch.no_grad(), torch.autocast(ids.device.type, dtype=torch.bfloat16, enabled=bf16):
        target = teacher.model(input_ids=ids).logits  # (B, T, V)
    if target.shape != logits.shape:
        raise ValueError(f"the teacher's logits are {tuple(target.shape)}, the model's {tuple(logits.shape)}")
    kept = labels != IGNORE_INDEX  # (B, T)
    tau = teacher.temperature
    student = torch.log_softmax(logits[kept].float() / tau, dim=-1)  # (N, V)
    taught = torch.log_softmax(target[kept].float() / tau, dim=-1)
    kl = torch.nn.functional.kl_div(student, taught, log_target=True, reduction="batchmean") * tau**2
    return (1 - teacher.weight) * ce + teacher.weight * kl


def param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Trainable parameters in two AdamW groups: matrices decay, vectors (norms, biases) do not."""
    params = [p for p in model.parameters() if p.requires_grad]
    return [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]


def make_optimizer(model: torch.nn.Module, lr: float, weight_decay: float, fused: bool = False) -> torch.optim.AdamW:
    """AdamW (0.9, 0.95), ε 1e-8, over :func:`param_groups`.

    Args:
        fused: the fused CUDA kernel (parameters on one GPU); otherwise torch's default kernel.
    """
    return torch.optim.AdamW(
        param_groups(model, weight_decay), lr=lr, betas=(0.9, 0.95), eps=1e-8, fused=True if fused else None
    )


@dataclass(frozen=True)
class StepResult:
    """What one optimiser step did.

    Attributes:
        loss: ``()`` mean training loss of the step's micro-batches, detached, on the device
            (``.item()`` it only when it is needed: a device sync).
        grad_norm: ``()`` global gradient norm before clipping.
        tokens: non-padding tokens the step read (this rank).
        rows: rows the step read (this rank).
    """

    loss: torch.Tensor
    grad_norm: torch.Tensor
    tokens: int
    rows: int


def train_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    batches: Iterator[Batch],
    cfg: RecipeConfig,
    *,
    lr: float,
    device: torch.device,
    pad_id: int,
    step: int = 0,
    forward: Callable[..., Any] | None = None,
    teacher: Teacher | None = None,
) -> StepResult:
    """One optimiser step over ``cfg.grad_accum`` batches drawn from ``batches`` (module docstring).

    Args:
        model: the module whose parameters are clipped (FSDP2-sharded ones too).
        batches: CPU (or device) :data:`Batch` es; moved to ``device``.
        cfg: the run's options; the step reads ``grad_accum``, ``grad_clip`` and ``bf16``.
        lr: this step's learning rate, set on every parameter group.
        pad_id: the padding token (not counted in ``tokens``).
        step: the step number, for the error message.
        forward: what computes the logits, when not ``model`` itself (``torch.compile(model)``).
        teacher: distil from it (:func:`fim_loss`); the step's loss is then the mixed one.

    Raises:
        FloatingPointError: a micro-batch's loss is not finite (the gradients cleared, the weights unchanged).
    """
    for group in optimizer.param_groups:
        group["lr"] = lr
    total = torch.zeros((), device=device)
    tokens = rows = 0
    for _ in range(cfg.grad_accum):
        ids, labels = next(batches)
        tokens += int((ids != pad_id).sum())  # counted where the batch is (the CPU: no wait for the GPU)
        rows += ids.size(0)
        ids, labels = ids.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        loss = fim_loss(model if forward is None else forward, ids, labels, cfg.bf16, teacher)
        (loss / cfg.grad_accum).backward()
        total += loss.detach()
    if not torch.isfinite(total):  # the step's one wait for the device, before the weights change
        optimizer.zero_grad(set_to_none=True)
        raise FloatingPointError(f"loss is {(total / cfg.grad_accum).item()} at step {step}")
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    if isinstance(grad_norm, DTensor):  # sharded parameters: the norm over all ranks
        grad_norm = grad_norm.full_tensor()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return StepResult(total / cfg.grad_accum, grad_norm, tokens, rows)


@torch.no_grad()
def validation_loss(model: torch.nn.Module, batches: Iterable[Batch], device: torch.device, bf16: bool) -> float:
    """Mean loss (nats per labelled token) over ``batches``, the model in eval mode meanwhile."""
    model.eval()
    total, count = 0.0, 0
    for ids, labels in batches:
        n = int((labels != IGNORE_INDEX).sum())
        loss = fim_loss(model, ids.to(device), labels.to(device), bf16)
        total += loss.item() * n
        count += n
    model.train()
    return total / max(count, 1)
