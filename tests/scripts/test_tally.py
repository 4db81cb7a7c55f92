"""scripts/tally.py: the closing line of scripts/check.sh, summed from the JUnit files of its
pytest runs (each folder alone, the slow tier), so that no test runs twice for CI's count."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from . import script

TESTS = """
import pytest

def test_one(): pass
def test_two(): pass
def test_bad(): assert False
@pytest.mark.skip(reason="here")
def test_skipped(): pass
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """The JUnit files of two real pytest runs: one of a file with two passes, a failure and a
    skip; one of a file with one pass."""
    tmp = tmp_path_factory.mktemp("tally")
    out = []
    for name, body in (("mixed", TESTS), ("good", "def test_three(): pass\n")):
        (tmp / name).mkdir()
        (tmp / name / f"test_{name}.py").write_text(body)
        out.append(tmp / f"{name}.xml")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml"]
    for xml in out:
        subprocess.run([*command, str(xml), xml.stem], cwd=tmp, capture_output=True)
    return out[0], out[1]


def test_the_runs_are_summed_in_pytests_words(runs):
    mixed, good = runs
    line, ok = script("tally").tally([good])
    assert line.startswith("1 passed in ") and line.endswith("s") and ok
    line, ok = script("tally").tally([mixed, good])
    assert line.startswith("3 passed, 1 failed, 1 skipped in ") and not ok


def test_a_failure_fails_the_command_that_prints_the_line(runs, capsys):
    assert script("tally").main([str(path) for path in runs]) == 1
    assert capsys.readouterr().out.startswith("3 passed, 1 failed, 1 skipped in ")
    assert script("tally").main([str(runs[1])]) == 0


def test_the_test_command_is_one_and_ci_runs_every_test_once():
    """The README and docs/development.md give one test command, and .ci/run runs it as it is
    written; scripts/check.sh runs each folder alone (the fast tier, then the slow tier) and closes
    with the tally, not the suite again."""
    root = Path(__file__).resolve().parents[2]
    readme, development = (root / "README.md").read_text(), (root / "docs/development.md").read_text()
    command = "bash scripts/setup.sh && .venv/bin/python -m pytest -q -n auto"
    assert readme.count(command) == 1 and command in development
    assert command in (root / ".ci/run").read_text().splitlines()
    check = (root / "scripts/check.sh").read_text().splitlines()
    pytest_lines = [line for line in check if "-m pytest" in line]
    assert len(pytest_lines) == 1 and '-n "$workers"' in pytest_lines[0]  # the one run() every step goes through
    assert check[-1] == '"$PY" scripts/tally.py "$results"/*.xml'
    assert any('--runslow -m "slow or distributed" "$folder"' in line for line in check)
