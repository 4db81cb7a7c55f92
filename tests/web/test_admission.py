"""Admission by cost: the server refuses at once (503 ``H017`` with ``Retry-After``) the work it
cannot finish within its time limit, from the cost it measured; what it admits ends in time.
A fake restorer that sleeps per gap stands in for the model.

    python -m pytest -q tests/web/test_admission.py
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from apollo_restore.restoration.request import validate
from apollo_restore.schema.limits import Limits
from apollo_restore.schema.restoration import EXAMPLE, Candidate, RestoreRequest
from apollo_restore.web.app import create_app
from apollo_restore.web.limits import LETTERS_PER_UNIT, CostModel, measure_cost, work_units
from tests.stubs import FixedReadings

TWO_GAPS = EXAMPLE  # [.4] and [.12]


def sleepy(seconds: float) -> FixedReadings:
    """Sleeps ``seconds`` per gap, then answers one reading."""
    return FixedReadings([Candidate("αβγ", 1.0, 0.0)], name="sleepy", seconds=seconds)


async def _fire(app, bodies: list[dict]) -> list[tuple[int, str, float, str | None]]:
    """``(status, error code, seconds, Retry-After)`` per request, all sent at once."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=60) as client:

        async def one(body: dict):
            started = time.perf_counter()
            r = await client.post("/api/restore", json=body)
            code = r.json().get("error", {}).get("code", "") if r.status_code != 200 else ""
            return r.status_code, code, time.perf_counter() - started, r.headers.get("retry-after")

        return list(await asyncio.gather(*(one(b) for b in bodies)))


def test_work_units_count_searched_gaps_and_their_letters():
    request = validate(RestoreRequest(TWO_GAPS + " καὶ [- - -] τοῦ"))
    assert work_units(request, no_hint_letters=40) == pytest.approx(3 + (4 + 12 + 40) / LETTERS_PER_UNIT)
    pinned = validate(RestoreRequest(TWO_GAPS, pins={2: "πυρρον"}))
    assert work_units(pinned, no_hint_letters=40) == pytest.approx(1 + 4 / LETTERS_PER_UNIT)


def test_the_cost_model_follows_recent_restorations():
    cost = CostModel()
    assert cost.seconds_per_unit is None
    cost.observe(2.0, 1.0)
    assert cost.seconds_per_unit == pytest.approx(0.5)
    for _ in range(30):  # the machine got four times slower
        cost.observe(2.0, 4.0)
    assert cost.seconds_per_unit == pytest.approx(2.0, rel=0.01)
    cost.observe(0.0, 5.0)  # nothing searched: nothing learnt
    assert cost.seconds_per_unit == pytest.approx(2.0, rel=0.01)


def test_requests_beyond_capacity_are_refused_at_once_and_the_admitted_end_in_time():
    """60 simultaneous requests of 0.2 s each, 2 slots, a 2 s limit: about a dozen fit."""
    limits = Limits(max_concurrent=2, request_timeout_s=2.0)
    restorer = sleepy(0.1)  # two gaps: 0.2 s a request
    app = create_app(restorer, limits=limits)
    assert 0.15 < measure_cost(app.state.gate, restorer) < 1.0
    assert app.state.gate.cost.seconds_per_unit is not None
    results = asyncio.run(_fire(app, [{"text": TWO_GAPS, "k": 1}] * 60))
    served = [r for r in results if r[0] == 200]
    refused = [r for r in results if r[0] == 503]
    assert len(served) + len(refused) == len(results)
    assert 4 <= len(served) <= 25, len(served)
    assert all(seconds < limits.request_timeout_s for _, _, seconds, _ in served)
    assert {code for _, code, _, _ in refused} == {"H017"}  # none waited for its deadline (H014)
    # at once: well before the 1.8 s deadline at which an admitted request that overran is answered (H014)
    assert all(seconds < limits.request_timeout_s / 2 for _, _, seconds, _ in refused), max(s for _, _, s, _ in refused)
    assert all(retry is not None and int(retry) >= 1 for _, _, _, retry in refused)


def test_a_request_too_big_for_the_limit_is_refused_on_an_idle_server():
    limits = Limits(request_timeout_s=1.0)
    restorer = sleepy(0.1)
    app = create_app(restorer, limits=limits)
    measure_cost(app.state.gate, restorer)
    many = " ".join(f"ἔτους δευτέρου Αὐτοκράτορος [.{5 + i}] τοῦ κυρίου" for i in range(20))  # about 2 s
    [(status, code, seconds, retry)] = asyncio.run(_fire(app, [{"text": many, "k": 1}]))
    assert (status, code) == (503, "H017") and seconds < 0.3 and retry is not None


def test_before_any_measurement_at_most_one_round_waits():
    """A cold server cannot estimate: it queues no more requests than it has slots."""
    app = create_app(sleepy(0.05), limits=Limits(max_concurrent=2, request_timeout_s=5.0))
    results = asyncio.run(_fire(app, [{"text": TWO_GAPS, "k": 1}] * 8))
    assert sorted(code for _, code, _, _ in results) == [""] * 4 + ["H009"] * 4
    measured = TestClient(app).get("/api/health").json()["seconds_per_unit"]
    assert measured == pytest.approx(0.1 / work_units(validate(RestoreRequest(TWO_GAPS)), 50), rel=0.8)
