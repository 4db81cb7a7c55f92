"""Load test of the HTTP API on loopback (issues #13, #24): typical load, heavy load, an abandoned request.

    python benchmarks/web_load.py [--model DIR] [--requests 150] [--time-limit 30] [--threads 1]

Starts the app under uvicorn in this process (:func:`apollo_restore.web.server.background_server`,
with the server's read timeouts) and the embedded model (or ``--model``; a tiny random model
when none is shipped), measures the cost of a typical restoration as ``serve`` does
(:func:`apollo_restore.web.limits.measure_cost`), then prints Markdown tables for three phases:

1. **typical**: ``--requests`` concurrent requests, each a short text with 2 gaps, k = 20.
2. **heavy**: ``--requests`` concurrent requests at the web limits (20 gaps of 30–50 letters,
   k = 50).
3. **abandoned**: a heavy request whose client leaves after 0.5 s, then one typical request:
   its latency must be that of an idle server (the abandoned work stops within a gap).

In phases 1 and 2 every answer must come within the server's time limit (``--time-limit``), a
200 or a 503 with ``Retry-After``; ``/api/health`` must answer afterwards. How many 503s came at
once (within a tenth of the limit: admission refused them, ``H017``/``H009``, rather than the
deadline, ``H014``) is reported beside.
Latencies are measured from the moment all requests are sent, so they include queueing; the
clients run in a process of their own.
Exit status 1 when a phase breaks its rule.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import httpx

TYPICAL = [
    "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [.4] χαίρειν. "
    "ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν [.12] πυρρὰν κεχαραγμένην",
    "ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου Τῦβι [.2]. ἔλαβον παρὰ σοῦ τὰς δραχμάς",
    "Πτολεμαῖος Διοδώρᾳ τῇ ἀδελφῇ [.7] χαίρειν. γινώσκειν σε θέλω ὅτι [.5] ἔρχεταί μοι διὰ νυκτός",
]
HEAVY = " ".join(f"ἔτους δευτέρου Αὐτοκράτορος Καίσαρος [.{30 + 20 * (i % 2)}] τοῦ κυρίου καὶ" for i in range(20))


def restorer_for(model: Path | None, threads: int | None):
    import torch

    from apollo_restore.restoration.config import DEFAULT_MODEL
    from apollo_restore.restoration.load import load_restorer
    from apollo_restore.restoration.members.neural import NeuralMember

    if threads:
        torch.set_num_threads(threads)
    folder = model or (DEFAULT_MODEL if (DEFAULT_MODEL / "config.json").exists() else None)
    if folder is not None:
        return load_restorer(folder)
    from apollo_restore.fim.tokenizer import CharTokenizer
    from apollo_restore.model.builders import build_model

    tok = CharTokenizer()
    return NeuralMember(build_model("tiny", tok, seed=0).eval(), tok, name="tiny (random)")


#: A 503 given within this share of the time limit was refused at once (admission), not at the limit.
AT_ONCE = 0.1
Result = tuple[int, float, bool, str]


async def fire(base: str, bodies: list[dict], timeout: float) -> list[Result]:
    """``(status, seconds, has Retry-After, error code)`` per request, all sent at once."""
    limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=len(bodies))
    async with httpx.AsyncClient(base_url=base, timeout=timeout, limits=limits) as client:
        await client.get("/api/health")

        async def one(body: dict) -> Result:
            started = time.perf_counter()
            try:
                r = await client.post("/api/restore", json=body)
            except httpx.HTTPError:
                return 0, time.perf_counter() - started, False, "no answer"
            seconds = time.perf_counter() - started
            code = r.json().get("error", {}).get("code", "") if r.status_code != 200 else ""
            return r.status_code, seconds, "retry-after" in r.headers, code

        return list(await asyncio.gather(*(one(b) for b in bodies)))


def fire_all(base: str, bodies: list[dict], timeout: float) -> list[Result]:
    """:func:`fire`, run in a client process of its own: the clients' work does not slow the
    server's event loop (one GIL), nor the server's work the clients' clocks."""
    return asyncio.run(fire(base, bodies, timeout))


async def abandon_then_time(base: str, timeout: float) -> tuple[float, float]:
    """Seconds a typical request takes on an idle server, then right after a heavy request
    whose client left after 0.5 s."""
    async with httpx.AsyncClient(base_url=base, timeout=timeout) as client:
        started = time.perf_counter()
        await client.post("/api/restore", json={"text": TYPICAL[0], "k": 20})
        idle = time.perf_counter() - started
    try:
        async with httpx.AsyncClient(base_url=base, timeout=0.5) as client:
            await client.post("/api/restore", json={"text": HEAVY, "k": 50})
    except httpx.TimeoutException:
        pass  # the client has gone
    async with httpx.AsyncClient(base_url=base, timeout=timeout) as client:
        started = time.perf_counter()
        r = await client.post("/api/restore", json={"text": TYPICAL[0], "k": 20})
        after = time.perf_counter() - started
        assert r.status_code == 200, r.text
    return idle, after


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def row(name: str, results: list[Result], wall: float) -> str:
    served = [t for status, t, _, _ in results if status == 200] or [0.0]
    refused = [t for status, t, _, _ in results if status != 200] or [0.0]
    counts: dict[str, int] = {}
    for status, _, _, code in results:
        key = f"{status}" + (f" {code}" if code else "")
        counts[key] = counts.get(key, 0) + 1
    codes = ", ".join(f"{s}: {n}" for s, n in sorted(counts.items()))
    return (
        f"| {name} | {len(results)} | {codes} | {percentile(served, 0.5):.2f} | {max(served):.2f} | "
        f"{percentile(refused, 0.5):.2f} | {max(refused):.2f} | {wall:.1f} |"
    )


def kept_the_rule(results: list[Result], time_limit: float) -> bool:
    """Every answer within the limit: a 200, or a 503 with Retry-After."""
    return all(
        seconds <= time_limit and (status == 200 or (status == 503 and retry)) for status, seconds, retry, _ in results
    )


def at_once(results: list[Result], time_limit: float) -> str:
    """How many of the 503s came within :data:`AT_ONCE` of the limit: ``"143 of 145"``."""
    refused = [seconds for status, seconds, _, _ in results if status == 503]
    return f"{sum(s <= AT_ONCE * time_limit for s in refused)} of {len(refused)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="model folder (default: embedded, else tiny random)")
    parser.add_argument("--requests", type=int, default=150)
    parser.add_argument("--max-concurrent", type=int, default=2, help="restorations running at once on the server")
    parser.add_argument("--time-limit", type=float, default=30.0, help="the server's per-request time limit (s)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args()

    from apollo_restore.schema.limits import Limits
    from apollo_restore.web.app import create_app
    from apollo_restore.web.limits import measure_cost
    from apollo_restore.web.server import background_server

    restorer = restorer_for(args.model, args.threads)
    limits = Limits(
        max_concurrent=args.max_concurrent,
        max_queued=max(Limits().max_queued, args.requests),
        request_timeout_s=args.time_limit,
    )
    client_timeout = 10 * args.time_limit
    typical = [{"text": TYPICAL[i % len(TYPICAL)], "k": 20} for i in range(args.requests)]
    heavy = [{"text": HEAVY, "k": 50} for _ in range(args.requests)]
    app = create_app(restorer, limits=limits)
    warm_up = measure_cost(app.state.gate, restorer)
    with background_server(app, limits) as base:
        phases = {}
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as clients:
            for name, bodies in (("typical", typical), ("heavy", heavy)):
                started = time.perf_counter()
                results = clients.submit(fire_all, base, bodies, client_timeout).result()
                phases[name] = (results, time.perf_counter() - started)
        health = httpx.get(base + "/api/health", timeout=10)
        idle, after = asyncio.run(abandon_then_time(base, client_timeout))

    typical_ok = kept_the_rule(phases["typical"][0], args.time_limit)
    heavy_ok = kept_the_rule(phases["heavy"][0], args.time_limit)
    abandoned_ok = after < idle + 1.0
    print(f"### Web API under load: {args.requests} concurrent POST /api/restore per phase\n")
    print(
        f"Model `{restorer.name}`, {args.max_concurrent} restorations at once ({args.threads} torch thread each), "
        f"time limit {args.time_limit:g} s, queue {limits.max_queued}, loopback. Typical: 2 gaps, k = 20; "
        f"heavy: 20 gaps of 30–50 letters, k = 50. Cost measured at start: {warm_up:.2f} s for the typical example "
        f"({health.json()['seconds_per_unit']:.3f} s per unit after the run).\n"
    )
    print("| phase | requests | answers | 200 p50 (s) | 200 max (s) | 503 p50 (s) | 503 max (s) | wall (s) |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for name, (results, wall) in phases.items():
        print(row(name, results, wall))
    print(
        f"\nEvery answer within the limit (a 200, or a 503 with Retry-After): typical **{typical_ok}**, heavy "
        f"**{heavy_ok}**. 503s within {AT_ONCE * args.time_limit:g} s: typical "
        f"{at_once(phases['typical'][0], args.time_limit)}, heavy {at_once(phases['heavy'][0], args.time_limit)}. "
        f"Health after the run: {health.status_code} "
        f"(running {health.json()['running']}, waiting {health.json()['waiting']}).\n"
        f"Abandoned request: a typical request took {idle:.2f} s on the idle server and {after:.2f} s right after a "
        f"heavy request was abandoned (not delayed: **{abandoned_ok}**)."
    )
    return 0 if typical_ok and heavy_ok and abandoned_ok and health.status_code == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
