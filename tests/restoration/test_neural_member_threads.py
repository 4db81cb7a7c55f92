"""Two threads restoring with one loaded model (as the web server's workers do) get what each
would get alone: the neural member's kept prompts are per thread, so one thread's search never
evicts, or reads, the prompt another thread's scoring pass needs."""

from __future__ import annotations

import threading

import pytest

from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.members.ensemble import Ensemble, LengthPrior
from apollo_restore.restoration.members.neural import NeuralMember

from ..conftest import MEMORISED

ROUNDS = 3


def gaps() -> list[tuple[str, str, Hint]]:
    """Each memorised gap with no hint and its exact hint."""
    return [(p, s, h) for p, m, s in MEMORISED for h in (NO_HINT, Hint.exact(len(m)))]


def restore_all(ensemble: Ensemble, order: list[tuple[str, str, Hint]]) -> list[list[tuple[str, float]]]:
    """``(reading, probability)`` of each gap's candidates, searched then scored (the two passes)."""
    return [[(c.text, c.prob) for c in ensemble.candidates(p, s, h, k=8)] for p, s, h in order]


def same(a: list[list[tuple[str, float]]], b: list[list[tuple[str, float]]]) -> None:
    """The same readings, probabilities within a tolerance (no bit-exact floating point)."""
    assert len(a) == len(b)
    for gap_a, gap_b in zip(a, b):
        assert [t for t, _ in gap_a][:3] == [t for t, _ in gap_b][:3]
        assert dict(gap_a) == pytest.approx(dict(gap_b), abs=1e-4)


@pytest.mark.slow
def test_two_threads_on_one_loaded_model_restore_as_one_thread_does(memorised_model):
    neural = NeuralMember.load(memorised_model, config=RestoreConfig(pool=8))
    ensemble = Ensemble([(neural, 1.0), (LengthPrior(), 2.0)], config=neural.config, neural=neural)
    forward = gaps()
    backward = forward[::-1]  # the threads ask for different gaps at the same moments
    serial = {"forward": restore_all(ensemble, forward), "backward": restore_all(ensemble, backward)}
    kept = dict(neural._cache().runs)  # the main thread's kept prompt, after its last gap
    start = threading.Barrier(2)
    results: dict[str, list] = {}
    errors: list[BaseException] = []

    def work(name: str, order: list[tuple[str, str, Hint]]) -> None:
        try:
            start.wait()
            results[name] = [restore_all(ensemble, order) for _ in range(ROUNDS)]
        except BaseException as err:  # noqa: BLE001 - reported by the main thread
            errors.append(err)

    threads = [threading.Thread(target=work, args=(n, o)) for n, o in (("forward", forward), ("backward", backward))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not errors, errors
    for name, rounds in results.items():
        assert len(rounds) == ROUNDS
        for got in rounds:
            same(got, serial[name])
    # the main thread's kept prompts are its own: the workers' searches neither evicted nor added any
    assert neural._cache().runs.keys() == kept.keys() and len(kept) == 1
