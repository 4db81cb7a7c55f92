"""The private and deprecated APIs the package leans on, each behind an upper bound in
pyproject.toml: torch's ``torch.ops.quantized`` int8 kernels (:class:`~apollo_restore.model.lean.Int8Weight`,
deprecated) and uvicorn's private ``H11Protocol`` (:class:`~apollo_restore.web.server.TimedH11Protocol`,
the request-head timeout). Raising a bound is safe once these pass on the new release; a failure
names the pin to revisit.

    python -m pytest -q tests/install/test_pinned_apis.py
"""

from __future__ import annotations

import asyncio
import inspect
import socket
import time
import tomllib
import warnings
from pathlib import Path

import pytest
import torch
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from apollo_restore.model.lean import Int8Weight
from apollo_restore.schema.limits import Limits
from apollo_restore.web.server import TimedH11Protocol, background_server

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def pin(name: str) -> str:
    """The requirement pyproject.toml declares for ``name`` (``torch>=2.4,<2.14``)."""
    deps = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    found = [d for d in deps if d.split(">")[0].split("<")[0].split("=")[0].strip() == name]
    assert found, f"pyproject.toml declares no {name}"
    return found[0]


def test_the_pins_have_upper_bounds():
    """The bounds this file guards are there (a bound removed without these tests passing on the
    release it lets in is the failure this file exists to catch)."""
    assert "<" in pin("torch") and "<" in pin("uvicorn"), (pin("torch"), pin("uvicorn"))


# -- torch: the int8 kernels of dynamic quantisation ------------------------------------------


def revisit_torch(what: str) -> str:
    return (
        f"torch {torch.__version__}: {what}. model/lean.py's Int8Weight uses torch.ops.quantized "
        f"(deprecated); revisit the pin {pin('torch')!r} in pyproject.toml (or move the int8 path to a public API)"
    )


def test_torch_quantized_int8_kernels_are_there_and_right():
    for op in ("linear_prepack", "linear_dynamic"):
        try:
            getattr(torch.ops.quantized, op)
        except (AttributeError, RuntimeError) as err:
            pytest.fail(revisit_torch(f"torch.ops.quantized.{op} is gone ({err})"))
    gen = torch.Generator().manual_seed(0)
    w, x = torch.randn(48, 32, generator=gen), torch.randn(4, 32, generator=gen)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = Int8Weight.of(w)(x)
        except Exception as err:  # any failure of the kernels is the news
            pytest.fail(revisit_torch(f"the int8 product fails: {type(err).__name__}: {err}"))
    exact = x @ w.T
    error = float((got - exact).norm() / exact.norm())
    assert got.shape == exact.shape and error < 0.03, revisit_torch(f"the int8 product is off by {error:.3f}")
    # the one deprecation Int8Weight expects is silenced there; any other is a new notice of removal
    notices = sorted({f"{c.category.__name__}: {c.message}" for c in caught})
    assert not notices, revisit_torch(f"the int8 path warns: {notices[0]}")


# -- uvicorn: the request-head timeout on its private h11 protocol -----------------------------


def revisit_uvicorn(what: str) -> str:
    return (
        f"uvicorn {uvicorn.__version__}: {what}. web/server.py's TimedH11Protocol subclasses the private "
        f"uvicorn.protocols.http.h11_impl.H11Protocol; revisit the pin {pin('uvicorn')!r} in pyproject.toml"
    )


async def _hello(scope, receive, send):
    """The smallest ASGI app: ``ok`` to every request (``/slow``: after twice the head timeout),
    the lifespan acknowledged."""
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            await send({"type": message["type"] + ".complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["path"] == "/slow":
        await asyncio.sleep(2 * TIMEOUT_S)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


TIMEOUT_S = 0.5


def _closed_within(conn: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``conn`` within ``seconds`` (it sends nothing more)."""
    conn.settimeout(seconds)
    try:
        return conn.recv(100) == b""
    except TimeoutError:
        return False


def test_uvicorn_h11_protocol_has_the_hooks_the_timeout_overrides():
    for hook in ("connection_made", "on_response_complete", "connection_lost"):
        assert callable(getattr(H11Protocol, hook, None)), revisit_uvicorn(f"H11Protocol has no {hook}()")
        assert hook in TimedH11Protocol.__dict__
    assert not inspect.iscoroutinefunction(H11Protocol.connection_made), revisit_uvicorn(
        "H11Protocol.connection_made became a coroutine"
    )


def test_uvicorn_closes_a_connection_whose_request_head_never_comes():
    limits = Limits(read_timeout_s=TIMEOUT_S)
    with background_server(_hello, limits) as url:
        host, port = url.removeprefix("http://").split(":")
        silent = socket.create_connection((host, int(port)), timeout=5)
        slow = socket.create_connection((host, int(port)), timeout=5)
        slow.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")  # a head that never ends
        started = time.monotonic()
        assert _closed_within(silent, 3), revisit_uvicorn("a connection that sends nothing is not closed")
        assert _closed_within(slow, 3), revisit_uvicorn("a connection whose head never ends is not closed")
        assert time.monotonic() - started < 3
        # after a response the next head is timed again (uvicorn's own keep-alive timeout is 5 s; the
        # timer of the connection's start fired while the request ran)
        kept = socket.create_connection((host, int(port)), timeout=5)
        kept.sendall(b"GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n")
        answer = b""
        while not answer.endswith(b"\r\n\r\nok") and (chunk := kept.recv(1000)):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), revisit_uvicorn(f"the app's answer is {answer!r}")
        started = time.monotonic()
        assert _closed_within(kept, 3), revisit_uvicorn("the head after a response is not timed")
        assert time.monotonic() - started < 3
        for conn in (silent, slow, kept):
            conn.close()
