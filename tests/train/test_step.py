"""The shared optimiser step: accumulation, the non-finite guard, parameter groups, validation."""

from __future__ import annotations

import itertools

import pytest
import torch

from apollo_restore.fim.layout import DEFAULT_LAYOUT, IGNORE_INDEX
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.train.recipe import RecipeConfig
from apollo_restore.train.step import Teacher, fim_loss, make_optimizer, param_groups, train_step, validation_loss

from ..conftest import MEMORISED

TOK = CharTokenizer()
CPU = torch.device("cpu")


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    rows = [DEFAULT_LAYOUT.encode(TOK, p, m, s, None, "all") for p, m, s in MEMORISED]
    width = max(len(ids) for ids, _ in rows)
    ids = torch.tensor([r[0] + [TOK.pad_id] * (width - len(r[0])) for r in rows])
    labels = torch.tensor([r[1] + [IGNORE_INDEX] * (width - len(r[1])) for r in rows])
    return ids, labels


def _stepped(grad_accum: int):
    model = build_model("tiny", TOK, seed=0).train()
    optimizer = make_optimizer(model, 1e-3, 0.1)
    cfg = RecipeConfig(grad_accum=grad_accum, bf16=False)
    result = train_step(model, optimizer, itertools.repeat(_batch()), cfg, lr=1e-3, device=CPU, pad_id=TOK.pad_id)
    return model, result


def test_step_accumulating_a_batch_twice_is_one_step_on_it():
    once, one = _stepped(1)
    twice, two = _stepped(2)
    assert two.rows == 2 * one.rows == 4 and two.tokens == 2 * one.tokens
    assert two.loss.item() == pytest.approx(one.loss.item(), abs=1e-6)
    assert float(two.grad_norm) == pytest.approx(float(one.grad_norm), rel=1e-5)
    for (name, a), b in zip(once.named_parameters(), twice.parameters()):
        assert torch.allclose(a, b, atol=1e-6), name


def test_step_refuses_a_non_finite_loss():
    """A NaN loss in any micro-batch (here the second of two) fails the step before the weights
    change, its gradients cleared."""
    model = build_model("tiny", TOK, seed=0).train()
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    ids, labels = _batch()
    nothing_labelled = torch.full_like(labels, IGNORE_INDEX)  # the mean over no positions is NaN
    with pytest.raises(FloatingPointError, match="loss is nan at step 7"):
        train_step(
            model,
            make_optimizer(model, 1e-3, 0.1),
            iter([(ids, labels), (ids, nothing_labelled)]),
            RecipeConfig(bf16=False, grad_accum=2),
            lr=1e-3,
            device=CPU,
            pad_id=TOK.pad_id,
            step=7,
        )
    for name, p in model.named_parameters():
        assert p.grad is None and torch.equal(p, before[name]), name


def test_param_groups_decay_trainable_matrices_only():
    model = build_model("tiny", TOK, seed=0)
    model.get_input_embeddings().weight.requires_grad_(False)
    decay, no_decay = param_groups(model, 0.1)
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert all(p.dim() >= 2 for p in decay["params"]) and all(p.dim() < 2 for p in no_decay["params"])
    assert not any(p is model.get_input_embeddings().weight for p in decay["params"])
    trainable = [p for p in model.parameters() if p.requires_grad]
    assert len(decay["params"]) + len(no_decay["params"]) == len(trainable)


def test_validation_loss_leaves_the_model_training_and_its_weights_alone():
    model = build_model("tiny", TOK, seed=0).train()
    before = [p.clone() for p in model.parameters()]
    loss = validation_loss(model, [_batch(), _batch()], CPU, bf16=False)
    assert model.training and 0 < loss < 10
    assert loss == pytest.approx(validation_loss(model, [_batch()], CPU, bf16=False), abs=1e-6)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


class _CompiledLike:
    """What ``torch.compile(model)`` is to ``train_step``: callable like the model, but asking its
    truth value fails (it forwards ``len()`` to a model that has none), as on the GPU run of
    2026-11-25."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model, self.calls = model, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.model(*args, **kwargs)

    def __bool__(self) -> bool:
        raise TypeError("MistralForCausalLM does not support len()")


def test_step_computes_through_forward_without_asking_its_truth_value():
    _, plain = _stepped(1)
    model = build_model("tiny", TOK, seed=0).train()
    forward = _CompiledLike(model)
    result = train_step(
        model, make_optimizer(model, 1e-3, 0.1), itertools.repeat(_batch()), RecipeConfig(bf16=False),
        lr=1e-3, device=CPU, pad_id=TOK.pad_id, forward=forward,
    )  # fmt: skip
    assert forward.calls == 1
    assert result.loss.item() == pytest.approx(plain.loss.item(), abs=1e-6)


def test_distillation_from_the_model_itself_leaves_only_its_cross_entropy_share():
    """KL(p ‖ p) = 0: taught by itself, the loss is (1 − w) × the cross-entropy."""
    model = build_model("tiny", TOK, seed=0).eval()
    ids, labels = _batch()
    with torch.no_grad():
        plain = fim_loss(model, ids, labels)
        taught = fim_loss(model, ids, labels, teacher=Teacher(model, weight=0.3, temperature=2.0))
    assert float(taught) == pytest.approx(0.7 * float(plain), rel=1e-5)


def test_distillation_pulls_the_student_towards_its_teacher():
    """With the whole loss on the teacher, steps lower the divergence from it (not the labels' loss)."""
    teacher = Teacher(build_model("tiny", TOK, seed=1).eval().requires_grad_(False), weight=1.0)
    student = build_model("tiny", TOK, seed=0).train()
    ids, labels = _batch()
    with torch.no_grad():
        before = float(fim_loss(student, ids, labels, teacher=teacher))
    optimizer = make_optimizer(student, 3e-3, 0.0)
    cfg = RecipeConfig(bf16=False)
    for _ in range(15):
        train_step(student, optimizer, iter([(ids, labels)]), cfg, lr=3e-3, device=CPU, pad_id=TOK.pad_id,
                   teacher=teacher)  # fmt: skip
    with torch.no_grad():
        assert 0 < float(fim_loss(student, ids, labels, teacher=teacher)) < 0.5 * before
    assert all(p.grad is None for p in teacher.model.parameters())  # the teacher never learns


def test_distillation_refuses_a_teacher_of_another_vocabulary():
    class Other(torch.nn.Module):
        def forward(self, input_ids):
            return type("Out", (), {"logits": torch.zeros(*input_ids.shape, len(TOK) + 3)})()

    ids, labels = _batch()
    with pytest.raises(ValueError, match="teacher's logits"):
        fim_loss(build_model("tiny", TOK, seed=0), ids, labels, teacher=Teacher(Other()))
