"""docs/model-folders.md's reference of every declared file is the one the schema generates: a
field added, bounded or renamed in ``apollo_restore.schema`` without running
``python scripts/schema_reference.py`` fails here."""

from __future__ import annotations

import runpy
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "schema_reference.py"


def test_the_documented_reference_is_the_generated_one():
    script = runpy.run_path(str(SCRIPT))
    text = script["DOC"].read_text(encoding="utf-8")
    assert script["generated"](text) == text, "run python scripts/schema_reference.py"


def test_every_bound_of_the_search_settings_is_in_the_reference():
    from apollo_restore.schema.folder import MAX_BEAM_WIDTH, MAX_HINT_SLACK
    from apollo_restore.schema.reference import markdown

    text = markdown()
    assert f"from 1 to {MAX_BEAM_WIDTH}" in text and f"from 0 to {MAX_HINT_SLACK}" in text
