"""Load test of the HTTP API on loopback (issue #13): typical load, heavy load, an abandoned request.

    python benchmarks/web_load.py [--model DIR] [--requests 100] [--time-limit 30] [--threads 1]

Starts the app under uvicorn in this process (:func:`apollo_restore.web.server.background_server`,
with the server's read timeouts) and the embedded model (or ``--model``; a tiny random model
when none is shipped), then prints Markdown tables for three phases:

1. **typical**: ``--requests`` concurrent requests, each a short text with 2 gaps, k = 20. The
   queue is sized to absorb them: every answer must be 200.
2. **heavy**: ``--requests`` concurrent requests at the web limits (20 gaps of 30–50 letters,
   k = 50). Every answer must be a 200 or a 503 with ``Retry-After``, and none may take longer
   than the server's time limit (``--time-limit``); ``/api/health`` must answer afterwards.
3. **abandoned**: a heavy request whose client leaves after 0.5 s, then one typical request:
   its latency must be that of an idle server (the abandoned work stops within a gap).

Latencies are measured from the moment all requests are sent, so they include queueing.
Exit status 1 when a phase breaks its rule.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import httpx

TYPICAL = [
    "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [.4] χαίρειν. "
    "ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν [.12] πυρρὰν κεχαραγμένην",
    "ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου Τῦβι [.2]. ἔλαβον παρὰ σοῦ τὰς δραχμάς",
    "Πτολεμαῖος Διοδώρᾳ τῇ ἀδελφῇ [.7] χαίρειν. γινώσκειν σε θέλω ὅτι [.5] ἔρχεταί μοι διὰ νυκτός",
]
HEAVY = " ".join(f"ἔτους δευτέρου Αὐτοκράτορος Καίσαρος [.{30 + 20 * (i % 2)}] τοῦ κυρίου καὶ" for i in range(20))


def load_restorer(model: Path | None, threads: int | None):
    import torch

    from apollo_restore.restore.config import DEFAULT_MODEL
    from apollo_restore.restore.engine import Restorer
    from apollo_restore.restore.load import load_filler

    if threads:
        torch.set_num_threads(threads)
    folder = model or (DEFAULT_MODEL if (DEFAULT_MODEL / "config.json").exists() else None)
    if folder is not None:
        return load_filler(folder)
    from apollo_restore.fim.tokenizer import CharTokenizer
    from apollo_restore.model.builders import build_model

    tok = CharTokenizer()
    return Restorer(build_model("tiny", tok, seed=0).eval(), tok, name="tiny (random)")


async def fire(base: str, bodies: list[dict], timeout: float) -> list[tuple[int, float, bool]]:
    """``(status, seconds, has Retry-After)`` per request, all sent at once."""
    limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=len(bodies))
    async with httpx.AsyncClient(base_url=base, timeout=timeout, limits=limits) as client:
        await client.get("/api/health")

        async def one(body: dict) -> tuple[int, float, bool]:
            started = time.perf_counter()
            try:
                r = await client.post("/api/restore", json=body)
            except httpx.HTTPError:
                return 0, time.perf_counter() - started, False
            return r.status_code, time.perf_counter() - started, "retry-after" in r.headers

        return list(await asyncio.gather(*(one(b) for b in bodies)))


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


def row(name: str, results: list[tuple[int, float, bool]], wall: float) -> str:
    latencies = [t for _, t, _ in results]
    counts: dict[int, int] = {}
    for status, _, _ in results:
        counts[status] = counts.get(status, 0) + 1
    codes = ", ".join(f"{s}: {n}" for s, n in sorted(counts.items()))
    return (
        f"| {name} | {len(results)} | {codes} | {percentile(latencies, 0.5):.2f} | {percentile(latencies, 0.95):.2f} | "
        f"{max(latencies):.2f} | {wall:.1f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="model folder (default: embedded, else tiny random)")
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--max-concurrent", type=int, default=2, help="restorations running at once on the server")
    parser.add_argument("--time-limit", type=float, default=30.0, help="the server's per-request time limit (s)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args()

    from apollo_restore.web.app import create_app
    from apollo_restore.web.limits import Limits
    from apollo_restore.web.server import background_server

    restorer = load_restorer(args.model, args.threads)
    limits = Limits(
        max_concurrent=args.max_concurrent,
        max_queued=max(Limits().max_queued, args.requests),
        request_timeout_s=args.time_limit,
    )
    client_timeout = 10 * args.time_limit
    typical = [{"text": TYPICAL[i % len(TYPICAL)], "k": 20} for i in range(args.requests)]
    heavy = [{"text": HEAVY, "k": 50} for _ in range(args.requests)]
    with background_server(create_app(restorer, limits=limits), limits) as base:
        phases = {}
        for name, bodies in (("typical", typical), ("heavy", heavy)):
            started = time.perf_counter()
            phases[name] = (asyncio.run(fire(base, bodies, client_timeout)), time.perf_counter() - started)
        health = httpx.get(base + "/api/health", timeout=10)
        idle, after = asyncio.run(abandon_then_time(base, client_timeout))

    typical_ok = all(status == 200 for status, _, _ in phases["typical"][0])
    heavy_ok = all(
        (status == 200 or (status == 503 and retry)) and seconds <= args.time_limit + 0.5
        for status, seconds, retry in phases["heavy"][0]
    )
    abandoned_ok = after < idle + 1.0
    print(f"### Web API under load: {args.requests} concurrent POST /api/restore per phase\n")
    print(
        f"Model `{restorer.name}`, {args.max_concurrent} restorations at once ({args.threads} torch thread each), "
        f"time limit {args.time_limit:g} s, queue {limits.max_queued}, loopback. Typical: 2 gaps, k = 20; "
        f"heavy: 20 gaps of 30–50 letters, k = 50.\n"
    )
    print("| phase | requests | status codes | p50 (s) | p95 (s) | max (s) | wall (s) |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, (results, wall) in phases.items():
        print(row(name, results, wall))
    print(
        f"\nTypical all 200: **{typical_ok}**. Heavy all 200 or 503 with Retry-After within the limit: **{heavy_ok}**. "
        f"Health after the run: {health.status_code} "
        f"(running {health.json()['running']}, waiting {health.json()['waiting']}).\n"
        f"Abandoned request: a typical request took {idle:.2f} s on the idle server and {after:.2f} s right after a "
        f"heavy request was abandoned (not delayed: **{abandoned_ok}**)."
    )
    return 0 if typical_ok and heavy_ok and abandoned_ok and health.status_code == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
