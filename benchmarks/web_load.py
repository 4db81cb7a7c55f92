"""Load test of the HTTP API on loopback: N concurrent restore requests, failures and latency.

    python benchmarks/web_load.py [--model DIR] [--requests 50] [--max-concurrent 2] [--k 10]

Starts ``apollo-restore``'s app under uvicorn in this process (a background thread, a free
loopback port) with the model folder given (default: the embedded model if present, else a
tiny random model), fires all requests at once with ``httpx.AsyncClient`` and prints a
Markdown table: requests, failures (any status but 200), p50 / p95 / max latency in seconds
(each measured from the moment all requests are sent, so it includes queueing behind
``--max-concurrent`` restorations), throughput and server-side milliseconds per request.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import threading
import time
from pathlib import Path

import httpx

TEXTS = [
    "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [.4] χαίρειν. ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν [.12] πυρρὰν κεχαραγμένην",
    "ἔτους [.5] Ἀντωνίνου Καίσαρος τοῦ κυρίου Τῦβι [.2]. ἔλαβον παρὰ σοῦ τὰς δραχμάς",
    "Πτολεμαῖος Διοδώρᾳ τῇ ἀδελφῇ χαίρειν. γινώσκειν σε θέλω ὅτι [.5] ἔρχεταί μοι διὰ νυκτός",
]


def load_restorer(model: Path | None, threads: int | None):
    import torch

    from apollo_restore.restore.engine import DEFAULT_MODEL, Restorer
    from apollo_restore.restore.ensemble import load_filler

    if threads:
        torch.set_num_threads(threads)
    folder = model or (DEFAULT_MODEL if (DEFAULT_MODEL / "config.json").exists() else None)
    if folder is not None:
        return load_filler(folder)
    from apollo_restore.fim.tokenizer import CharTokenizer
    from apollo_restore.model.builders import build_model

    tok = CharTokenizer()
    return Restorer(build_model("tiny", tok, seed=0).eval(), tok, name="tiny (random)")


def start_server(app) -> tuple[str, object, threading.Thread]:
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread


async def fire(base: str, n: int, k: int, timeout: float) -> list[tuple[int, float, float]]:
    """``(status, seconds, server ms)`` per request, all sent at once."""
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=base, timeout=timeout, limits=limits) as client:
        await client.get("/api/health")  # warm up the connection path (not the model)

        async def one(i: int) -> tuple[int, float, float]:
            started = time.perf_counter()
            try:
                r = await client.post("/api/restore", json={"text": TEXTS[i % len(TEXTS)], "k": k})
            except httpx.HTTPError:
                return 0, time.perf_counter() - started, 0.0
            ms = r.json().get("ms", 0.0) if r.status_code == 200 else 0.0
            return r.status_code, time.perf_counter() - started, ms

        return await asyncio.gather(*(one(i) for i in range(n)))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="model folder (default: embedded, else tiny random)")
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--max-concurrent", type=int, default=2, help="restorations running at once on the server")
    parser.add_argument("--k", type=int, default=10, help="candidates per gap")
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--timeout", type=float, default=600.0, help="client timeout per request (s)")
    args = parser.parse_args()

    from apollo_restore.web.app import create_app
    from apollo_restore.web.limits import Limits

    restorer = load_restorer(args.model, args.threads)
    limits = Limits(max_concurrent=args.max_concurrent, max_queued=max(Limits().max_queued, args.requests), queue_timeout_s=args.timeout)
    base, server, thread = start_server(create_app(restorer, limits=limits))
    try:
        started = time.perf_counter()
        results = asyncio.run(fire(base, args.requests, args.k, args.timeout))
        wall = time.perf_counter() - started
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    latencies = [t for _, t, _ in results]
    failures = sum(status != 200 for status, _, _ in results)
    server_ms = [ms for status, _, ms in results if status == 200]
    by_status: dict[int, int] = {}
    for status, _, _ in results:
        by_status[status] = by_status.get(status, 0) + 1
    print(f"### Web API load test: {args.requests} concurrent POST /api/restore\n")
    print(f"Model `{restorer.name}`, k = {args.k}, {args.max_concurrent} restorations at once, loopback, "
          f"texts of {min(len(t) for t in TEXTS)}–{max(len(t) for t in TEXTS)} characters with 1–2 gaps.\n")
    print("| requests | failures | p50 (s) | p95 (s) | max (s) | wall (s) | req/s | server ms/request (median) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {args.requests} | {failures} | {percentile(latencies, 0.5):.2f} | {percentile(latencies, 0.95):.2f} | "
        f"{max(latencies):.2f} | {wall:.2f} | {args.requests / wall:.1f} | "
        f"{statistics.median(server_ms) if server_ms else float('nan'):.0f} |"
    )
    print(f"\nStatus codes: {', '.join(f'{s}: {n}' for s, n in sorted(by_status.items()))}")


if __name__ == "__main__":
    main()
