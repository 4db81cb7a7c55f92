"""Revising one gap of a long edition (issue 64, item 5): each gap's answer names the earlier gaps
standing within the model's context of it (``reads``), so that after a pick the page asks again only
the gaps whose context the pick changes (and, in turn, those reading a gap whose first reading
changed), and every other gap keeps its readings byte for byte.

    python -m pytest -q tests/web/test_revision.py

The page's revision (app.js ``revise``) is replayed here over the HTTP API with a restorer whose
readings depend on its model window alone: the revised edition then equals a whole restoration
with the pick in place, at a fraction of the requests.
"""

from __future__ import annotations

import json
import zlib

import pytest
from fastapi.testclient import TestClient

from apollo_restore.data.readers.leiden import parse_leiden_with_gaps
from apollo_restore.hint import NO_HINT
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.context import GapContexts
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.ranking.pool import to_candidates
from apollo_restore.web.app import create_app
from tests.web.test_whole_editions import OXY

WINDOW = 250


class WindowReadings:
    """Readings that depend on the model's window of context alone (``context_chars`` each side):
    κυριωι first, but θεου first for one window in five, so that a change of context sometimes
    changes the first reading and the change travels on."""

    name = "window"
    batches = False

    def __init__(self) -> None:
        self.config = RestoreConfig(k=3, context_chars=WINDOW)
        self.searched = 0

    def candidates(self, prefix, suffix, hint=NO_HINT, k=None):
        self.searched += 1
        seen = (prefix[-WINDOW:] + "|" + suffix[:WINDOW]).encode()
        pool = [("κυριωι", -1.0), ("θεου", -1.5), ("κυρ", -2.0)]
        if zlib.crc32(seen) % 5 == 0:
            pool[0], pool[1] = pool[1], pool[0]
        return to_candidates(pool)[: k or 3]

    def score_readings(self, prefix, suffix, hint, readings):
        return [-1.0 for _ in readings]

    def language_model(self):
        return None


@pytest.fixture(scope="module")
def leiden() -> str:
    client = TestClient(create_app(WindowReadings()))
    return client.post("/api/epidoc", files={"file": (OXY.name, OXY.read_bytes(), "application/xml")}).json()["leiden"]


def _holds(gap: dict) -> str:
    if gap["pinned"] is not None:
        return gap["pinned"]
    return gap["candidates"][0]["text"] if gap["candidates"] else ""


def _ask(client: TestClient, text: str, number: int, gaps: list[dict], pins: dict) -> dict:
    """One gap asked as the page asks it: the gaps before it hold their first reading or their pin."""
    fills = {g["number"]: _holds(g) for g in gaps if g["number"] < number and g["pinned"] is None}
    body = {"text": text, "k": 3, "only": [number], "fills": fills, "pins": pins}
    answer = client.post("/api/restore", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()["gaps"][0]


def _restore(client: TestClient, text: str, pins: dict, first: int = 1, gaps: list[dict] | None = None) -> list[dict]:
    """Every gap from ``first`` on, one per request, left to right (app.js ``restore``)."""
    gaps = list((gaps or [])[: first - 1])
    number = first
    while number <= 34:
        gaps.append(_ask(client, text, number, gaps, pins))
        number += 1
    return gaps


def _revise(client: TestClient, text: str, gaps: list[dict], pins: dict, number: int) -> tuple[list[dict], list[int]]:
    """app.js ``revise``: gap ``number`` again, then each later gap whose ``reads`` holds a gap that
    changed; returns the gaps and the numbers asked."""
    gaps = [dict(g) for g in gaps]
    changed, asked = {number}, []
    for at in range(number - 1, len(gaps)):
        old = gaps[at]
        if old["number"] != number and not changed & set(old["reads"]):
            continue
        fresh = _ask(client, text, old["number"], gaps, pins)
        asked.append(old["number"])
        if old["number"] != number and _holds(fresh) != _holds(old):
            changed.add(old["number"])
        gaps[at] = fresh
    return gaps, asked


def _plain(gaps: list[dict], window: int | None = None) -> list[str]:
    """Each gap's answer as JSON text, without its timing: what "byte-identical" compares; with
    ``window``, its prefix as far as the model reads it."""
    cut = [{**g, "prefix": g["prefix"][-window:]} if window else g for g in gaps]
    return [json.dumps({k: v for k, v in g.items() if k != "ms"}, ensure_ascii=False, sort_keys=True) for g in cut]


def test_reads_are_the_gaps_whose_reading_reaches_the_models_window(leiden):
    """For every gap of p.oxy.2.298, the earlier gaps it reads are those whose reading, changed,
    changes the last 250 characters of its prefix (and at most a few characters' margin more)."""
    doc, _ = parse_leiden_with_gaps(leiden)
    contexts = GapContexts(doc.segments)
    fills = ["κυριωι"] * len(contexts)
    spare = 0
    for q in range(len(contexts)):
        seen = contexts.context(q, fills)[0][-WINDOW:]
        truth = set()
        for j in range(q):
            for other in ("", "αβγδεζηθικ"):
                changed = fills[:j] + [other] + fills[j + 1 :]
                if contexts.context(q, changed)[0][-WINDOW:] != seen:
                    truth.add(j)
        found = set(contexts.read_by(q, fills, WINDOW))
        assert truth <= found, (q, truth - found)
        spare += len(found - truth)
    assert spare <= 3  # the margin takes a gap a few characters beyond the window now and then


def test_a_pick_restores_again_only_the_gaps_whose_context_holds_it(leiden):
    """A pick at gap 12 of 34: the page asks gap 12 and the few later gaps whose context holds a
    change; every other gap's answer is byte for byte what it was, and the edition equals a
    whole restoration with the pick in place."""
    restorer = WindowReadings()
    client = TestClient(create_app(restorer))
    before = _restore(client, leiden, {})
    assert [g["reads"] for g in before[:3]] == [[], [1], [1, 2]]
    pick = "θεου" if _holds(before[11]) != "θεου" else "κυρ"
    searched = restorer.searched
    after, asked = _revise(client, leiden, before, {"12": pick}, 12)
    assert asked[0] == 12 and 2 <= len(asked) < 34 - 12  # gap 12, those reading it, not all 22 later ones
    assert restorer.searched - searched == len(asked) - 1  # gap 12 holds the pick: not searched
    assert all(before[n - 1]["reads"] for n in asked[1:])
    kept = [n for n in range(1, 35) if n not in asked]
    assert [_plain(after)[n - 1] for n in kept] == [_plain(before)[n - 1] for n in kept]
    # the readings are those of a whole restoration with the pick; a kept gap's prefix shows the
    # old reading only beyond what the model reads (its context_chars)
    whole = restore_text(restorer, leiden, pins={12: pick}, k=3).to_dict()["gaps"]
    assert _plain(after, WINDOW) == _plain(whole, WINDOW)
    # "Re-restore all gaps after gap 12": the whole restoration, to the letter
    assert _plain(_restore(client, leiden, {"12": pick}, first=13, gaps=after)) == _plain(whole)


def test_a_restorer_that_declares_no_window_reads_all_it_is_given(leiden):
    """A restorer without ``config.context_chars`` is taken to read its whole context (1000
    characters): its gaps read more earlier gaps than a 250-character model's."""
    declared = restore_text(WindowReadings(), leiden, k=1)
    bare = WindowReadings()
    bare.config = None  # declares no window
    undeclared = restore_text(bare, leiden, k=1)
    assert all(set(a.reads) <= set(b.reads) for a, b in zip(declared.gaps, undeclared.gaps))
    assert sum(map(len, (g.reads for g in undeclared.gaps))) > sum(map(len, (g.reads for g in declared.gaps)))
