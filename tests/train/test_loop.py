"""Training loop: overfit/save/reload, seeded reproducibility, kill-and-resume, config checks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from apollo_restore.fim.examples import FimExample
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.hint import NO_HINT
from apollo_restore.model.checkpoint import load_model
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.schema.training import SettingError
from apollo_restore.train.loop import BEST_DIR, CHECKPOINT_DIR, TrainConfig, check_names, load_teacher, train
from apollo_restore.train.metrics import METRICS_FILE
from apollo_restore.train.schedule import lr_at

from ..conftest import MEMORISED, memorise
from ..ranking import assert_same_ranking


def _cfg(prepared: Path, out: Path, **kw) -> TrainConfig:
    base = dict(
        prepared=str(prepared),
        out=str(out),
        size="tiny",
        steps=6,
        batch_size=2,
        block_size=256,
        eval_every=3,
        eval_rows=4,
        log_every=1,
        checkpoint_every=0.0,
        threads=1,
        warmup=2,
    )
    base.update(kw)
    return TrainConfig(**base)


@pytest.mark.slow
def test_train_overfit_save_reload_predicts_the_same(tmp_path):
    examples = [FimExample(p, m, s, NO_HINT) for p, m, s in MEMORISED]
    model, tok, losses = memorise(examples)
    assert losses[-1] < 0.25 < losses[0]
    restorer = NeuralMember(model, tok)
    before = [restorer.candidates(p, s, NO_HINT)[:5] for p, _, s in MEMORISED]
    from apollo_restore.model.checkpoint import save_model

    save_model(model, tok, tmp_path / "m", {})
    reloaded = NeuralMember.load(tmp_path / "m")
    after = [reloaded.candidates(p, s, NO_HINT)[:5] for p, _, s in MEMORISED]
    for (_, middle, _), b, a in zip(MEMORISED, before, after):
        assert b[0].text == middle
        assert_same_ranking([(c.text, c.log_score) for c in a], [(c.text, c.log_score) for c in b])


@pytest.mark.slow
def test_train_seeded_runs_match(tiny_prepared, tmp_path):
    first = train(_cfg(tiny_prepared, tmp_path / "a"), progress=False)
    second = train(_cfg(tiny_prepared, tmp_path / "b"), progress=False)
    losses = [
        [
            json.loads(line)["loss"]
            for line in (tmp_path / r / METRICS_FILE).read_text().splitlines()
            if "loss" in line and "val" not in line
        ]
        for r in "ab"
    ]
    assert losses[0] == pytest.approx(losses[1], abs=1e-3)
    assert first["tokens"] == second["tokens"] and first["step"] == 6


@pytest.mark.slow
def test_train_resumes_where_it_stopped(tiny_prepared, tmp_path):
    train(_cfg(tiny_prepared, tmp_path / "run", steps=3), progress=False)
    state = json.loads((tmp_path / "run" / CHECKPOINT_DIR / "trainer.json").read_text())
    assert state["step"] == 3 and state["rows"] == 6
    result = train(_cfg(tiny_prepared, tmp_path / "run", steps=5), progress=False)
    assert result["step"] == 5 and result["rows"] == 10
    uninterrupted = train(_cfg(tiny_prepared, tmp_path / "straight", steps=5), progress=False)
    a, _, _ = load_model(tmp_path / "run" / CHECKPOINT_DIR)
    b, _, _ = load_model(tmp_path / "straight" / CHECKPOINT_DIR)
    # same data position and optimiser state: the resumed run lands on the same weights
    for (name, pa), pb in zip(a.named_parameters(), b.parameters()):
        assert torch.allclose(pa, pb, atol=2e-3), name
    assert uninterrupted["tokens"] == result["tokens"]


def test_train_time_limit_counts_validation_and_keeps_room_for_the_last(tiny_prepared, tmp_path):
    # validation passes count against the limit, and the final one must end within it (on a GPU
    # it once ran past a job's limit and was lost). Each pass here takes 0.3 s, the limit is 1.2 s.
    passes = []

    def slow_validate(model, layout):
        started = time.monotonic()
        time.sleep(0.3)
        passes.append((started, time.monotonic()))
        return {"score": 0.0}

    started = time.monotonic()
    result = train(
        _cfg(tiny_prepared, tmp_path / "run", steps=1000, eval_every=1, time_limit=1.2),
        progress=False,
        validate=slow_validate,
    )
    assert 2 <= result["step"] <= 5 and len(passes) == result["step"]
    assert passes[-1][1] - passes[0][0] < 1.2 + 0.3  # the last pass ends within a step of the limit
    assert time.monotonic() - started < 30
    assert (tmp_path / "run" / CHECKPOINT_DIR / "trainer.json").exists()


@pytest.mark.slow
def test_train_resumed_call_reserves_the_last_validation_time(tiny_prepared, tmp_path):
    # a resumed process must know the validation time before its first pass, or it trains to its
    # limit and its final pass is killed: the reserve travels in the checkpoint
    def slow_validate(model, layout):
        time.sleep(0.3)
        return {"score": 0.0}

    first = train(
        _cfg(tiny_prepared, tmp_path / "run", steps=2, eval_every=1000), progress=False, validate=slow_validate
    )
    assert first["eval_seconds"] >= 0.3
    resumed = train(
        _cfg(tiny_prepared, tmp_path / "run", steps=1000, eval_every=1000, time_limit=0.25),
        progress=False,
        validate=slow_validate,
    )
    assert resumed["step"] == 3  # one step, then the reserved pass: 0.3 s > the 0.25 s limit


def test_train_keeps_the_last_steps_when_the_final_validation_dies(tiny_prepared, tmp_path):
    # a kill during the final pass lost the call's last steps (checkpointed only after it)
    def dying_validate(model, layout):
        raise RuntimeError("killed by the machine's limit")

    with pytest.raises(RuntimeError):
        train(
            _cfg(tiny_prepared, tmp_path / "run", steps=4, eval_every=1000, checkpoint_every=1e9),
            progress=False,
            validate=dying_validate,
        )
    state = json.loads((tmp_path / "run" / CHECKPOINT_DIR / "trainer.json").read_text())
    assert state["step"] == 4


@pytest.mark.slow
def test_train_survives_sigkill(tiny_prepared, tmp_path):
    out = tmp_path / "killed"
    args = [
        sys.executable,
        "-m",
        "apollo_restore",
        "train",
        "--quiet",
        f"prepared={tiny_prepared}",
        f"out={out}",
        "size=tiny",
        "steps=400",
        "batch_size=2",
        "block_size=256",
        "eval_every=1000",
        "checkpoint_every=0",
        "threads=1",
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not (out / CHECKPOINT_DIR / "trainer.json").exists():
        time.sleep(0.2)
    time.sleep(1.0)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    state = json.loads((out / CHECKPOINT_DIR / "trainer.json").read_text())
    assert 0 < state["step"] < 400
    result = train(_cfg(tiny_prepared, out, steps=state["step"] + 2), progress=False)
    assert result["step"] == state["step"] + 2


def test_train_config_rejects_unknown_and_bad_values():
    with pytest.raises(SettingError, match=r"\[E602\] train: .* sets stepz = 3; it must be one of out, steps"):
        TrainConfig.from_dict({"stepz": 3})
    with pytest.raises(SettingError, match="sets size = 'huge'; it must be one of tiny"):
        check_names(TrainConfig(size="huge"))  # a size only the model layer knows: before any data
    with pytest.raises(SettingError, match="sets layout = 'sideways'"):
        check_names(TrainConfig(layout="sideways"))
    with pytest.raises(SettingError, match="sets loss = 'sometimes'"):
        TrainConfig(loss="sometimes")
    with pytest.raises(SettingError, match="distill_weight"):
        TrainConfig(distill_weight=1.5)
    with pytest.raises(SettingError, match="distill_temperature"):
        TrainConfig(distill_temperature=0)


@pytest.mark.slow
def test_train_distils_from_a_teacher_folder(tiny_prepared, tmp_path):
    """A run taught by an earlier run's model: its steps take the mixed loss, its config records
    the teacher; a teacher of another vocabulary is refused."""
    train(_cfg(tiny_prepared, tmp_path / "teacher", steps=3), progress=False)
    teacher = str(tmp_path / "teacher" / "best")
    result = train(
        _cfg(tiny_prepared, tmp_path / "student", steps=2, teacher=teacher, distill_weight=0.5), progress=False
    )
    assert result["step"] == 2
    meta = json.loads((tmp_path / "student" / "best" / "apollo_restore.json").read_text())
    assert meta["config"]["teacher"] == teacher and meta["config"]["distill_weight"] == 0.5
    other = CharTokenizer({**CharTokenizer().vocab, "ж": len(CharTokenizer())})
    with pytest.raises(ValueError, match="another vocabulary"):
        load_teacher(_cfg(tiny_prepared, tmp_path / "other", teacher=teacher), other, torch.device("cpu"))


def test_schedule_warmup_then_cosine():
    assert lr_at(0, 1.0, 0.1, 10, 100) == pytest.approx(0.1)
    assert lr_at(9, 1.0, 0.1, 10, 100) == pytest.approx(1.0)
    assert lr_at(55, 1.0, 0.1, 10, 100) == pytest.approx(0.55)
    assert lr_at(100, 1.0, 0.1, 10, 100) == pytest.approx(0.1)
    assert all(lr_at(s, 1.0, 0.1, 10, 100) >= lr_at(s + 1, 1.0, 0.1, 10, 100) for s in range(10, 100))


@pytest.mark.slow
def test_train_warm_restart_continues_the_data_stream(tiny_prepared, tmp_path):
    train(_cfg(tiny_prepared, tmp_path / "first", steps=3), progress=False)
    result = train(
        _cfg(tiny_prepared, tmp_path / "second", steps=2, init_from=str(tmp_path / "first" / "best")), progress=False
    )
    assert result["rows"] == 3 * 2 + 2 * 2  # rows 6..9: not the first run's rows 0..5 again
    assert result["history"][-1]["step"] == 3


def test_train_accumulates_gradients_over_micro_batches(tiny_prepared, tmp_path):
    result = train(_cfg(tiny_prepared, tmp_path / "run", steps=2, grad_accum=2), progress=False)
    assert result["step"] == 2 and result["rows"] == 2 * 2 * 2  # steps × grad_accum × batch_size
    rows = [json.loads(line) for line in (tmp_path / "run" / METRICS_FILE).read_text().splitlines()]
    assert [r["step"] for r in rows if "loss" in r] == [1, 2]


@pytest.mark.slow
def test_train_middle_phase_continues_a_run_and_lowers_the_middle_loss(tiny_prepared, tmp_path):
    # the GPU recipe's default run (configs/gpu_medium_middle.yaml): a warm restart of a finished
    # every-position run with the loss on the middle and its join only
    first = train(_cfg(tiny_prepared, tmp_path / "all", steps=30, eval_every=1000, lr=3e-3), progress=False)
    phase = _cfg(tiny_prepared, tmp_path / "middle", steps=30, eval_every=1000, lr=1e-3, loss="middle")
    second = train(phase.replace(init_from=str(tmp_path / "all" / BEST_DIR)), progress=False)
    assert second["history"][-1]["step"] == 30  # the earlier run is recorded
    assert second["best_val"] < first["best_val"]  # both: nats per middle (+ join) token
