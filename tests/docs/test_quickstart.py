"""The quickstart's example (examples/o.claud.3.420.txt, run by scripts/quickstart.sh) finds real
parallels for both its gaps, and its provenance check calls the shared runs formulas (issue 23:
it printed "0 parallels (context too short)" twice, and 8 documents with no word on what they mean)."""

from __future__ import annotations

from pathlib import Path

from apollo_restore.restoration.request import validate
from apollo_restore.retrieve.gaps import text_parallels
from apollo_restore.retrieve.parallels import ParallelIndex
from apollo_restore.retrieve.provenance import provenance
from apollo_restore.schema.restoration import RestoreRequest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "o.claud.3.420.txt"


def test_the_quickstart_example_is_the_file_the_script_and_readme_use():
    script = (EXAMPLE.parents[1] / "scripts" / "quickstart.sh").read_text(encoding="utf-8")
    assert "TEXT=examples/o.claud.3.420.txt" in script
    assert "examples/o.claud.3.420.txt" in (EXAMPLE.parents[1] / "README.md").read_text(encoding="utf-8")


def test_the_quickstart_gaps_have_parallels_in_edition_form_with_links():
    index = ParallelIndex.shared()
    first, second = text_parallels(index, validate(RestoreRequest(EXAMPLE.read_text(encoding="utf-8"))))
    # gap 1 starts the text: its right context anchors alone, and the edition's Δίδυμος is among the readings
    assert first.left == "" and first.right and "Δίδυμος" in [g.display for g in first.groups]
    # no training text holds both contexts of gap 2: one alone finds readings of its 9 letters
    assert second.groups and all(len(g.between.replace(" ", "")) == 9 for g in second.groups)
    assert all(len(g.urls) == len(g.docs) for g in first.groups + second.groups)
    didymos = next(g for g in first.groups if g.display == "Δίδυμος")
    assert didymos.urls[0].startswith("https://papyri.info/ddbdp/o.claud;")


def test_the_quickstart_provenance_reports_formulas_not_a_memorised_edition():
    found = provenance(EXAMPLE.read_text(encoding="utf-8"), ParallelIndex.shared())
    assert found.documents and found.verdict == "formulaic"
    assert "formulaic matches" in found.summary and "not a memorised edition" in found.summary


def test_the_users_install_has_no_test_or_scale_tools_and_the_test_command_adds_them():
    """Issue 37: the quickstart installs the package alone; the README's test command (and CI)
    run scripts/setup.sh, whose default installs the test, training and scale extras (issue 44)."""
    scripts = EXAMPLE.parents[1] / "scripts"
    quickstart = (scripts / "quickstart.sh").read_text(encoding="utf-8")
    setup = (scripts / "setup.sh").read_text(encoding="utf-8")
    assert "EXTRAS= bash scripts/setup.sh" in quickstart and "[test" not in quickstart
    assert "EXTRAS=${EXTRAS-test,train,scale}" in setup and '".${EXTRAS:+[$EXTRAS]}"' in setup
    readme = (EXAMPLE.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "\nbash scripts/setup.sh && .venv/bin/python -m pytest -q -n auto " in readme


def test_the_readme_sets_up_and_runs_in_two_commands():
    """Issue 64: one command restores a real text on a fresh machine, one runs the tests; the
    command line is then called as the quickstart says (no activation step between them)."""
    readme = (EXAMPLE.parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Two commands", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split()[:2] for line in block.splitlines()] == [
        ["bash", "scripts/quickstart.sh"],
        ["bash", "scripts/setup.sh"],
    ]
    quickstart = (EXAMPLE.parents[1] / "scripts" / "quickstart.sh").read_text(encoding="utf-8")
    # its last words say how to call it
    assert quickstart.rstrip().endswith("say_how") and '"The command line is .venv/bin/apollo-restore' in quickstart
    assert len(readme.splitlines()) < 180
    assert len((EXAMPLE.parents[1] / "MODEL_CARD.md").read_text(encoding="utf-8").splitlines()) < 320
