"""The quick reliability probes of ``tests/doors/probes.py`` (issue 24) run in CI: model folders
verified on load, ``serve`` options bounded, ``/api/parallels`` checking pins as
``/api/restore`` does, admission by cost, the web hardening the audit found holding, the
durable ``predict`` job, the input layer and bounded options of the other commands. The slow
ones (a killed ``predict``, invisible characters, ``/dev/zero``, thousands of threads) run with
``python tests/doors/probes.py``.

    python -m pytest -q tests/doors/test_probes.py
"""

from __future__ import annotations

import pytest

from . import probes

CI_PROBES = [p for p in probes.PROBES if p.fast]


def test_every_probe_has_a_unique_name_and_says_what_it_expects():
    names = [p.name for p in probes.PROBES]
    assert len(names) == len(set(names))
    assert all(p.tried and p.expected for p in probes.PROBES)
    assert {p.part for p in CI_PROBES} == {"model", "serve", "web", "predict", "input", "options"}


@pytest.mark.parametrize("probe", CI_PROBES, ids=[p.name for p in CI_PROBES])
def test_probe(probe):
    passed, actual, _ = probes.run_probe(probe)
    assert passed, f"{probe.tried}: expected {probe.expected}, got {actual}"


def test_a_probe_that_crashes_fails():
    def crash(workdir):
        raise RuntimeError("boom")

    probe = probes.Probe("crash", "web", "nothing", "nothing", crash)
    assert probes.run_probe(probe)[:2] == (False, "RuntimeError: boom")
