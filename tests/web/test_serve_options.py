"""``apollo-restore serve`` with hostile option values: a usage error (exit 2) naming the option,
before anything loads, never a traceback.

    python -m pytest -q tests/web/test_serve_options.py
"""

from __future__ import annotations

import socket

import pytest
from typer.testing import CliRunner

from apollo_restore.cli import serve
from apollo_restore.cli.app import app
from apollo_restore.restoration import load


@pytest.fixture(autouse=True)
def nothing_loads(monkeypatch):
    """Loading the index or the model means a hostile value got through."""

    def loaded(*args, **kwargs):
        raise AssertionError("serve loaded something with a hostile option value")

    monkeypatch.setattr(serve, "load_parallels", loaded)
    monkeypatch.setattr(load, "load_restorer", loaded)


HOSTILE = [
    (["--port", "99999"], "--port"),
    (["--port", "0"], "--port"),
    (["--port", "-1"], "--port"),
    (["--port", "http"], "--port"),
    (["--threads", "-3"], "--threads"),
    (["--threads", "0"], "--threads"),
    (["--threads", "100000"], "--threads"),
    (["--max-concurrent", "0"], "--max-concurrent"),
    (["--max-concurrent", "100000"], "--max-concurrent"),
    (["--max-queued", "0"], "--max-queued"),
    (["--max-queued", "-5"], "--max-queued"),
    (["--request-timeout", "0"], "--request-timeout"),
    (["--request-timeout", "-1"], "--request-timeout"),
    (["--request-timeout", "nan"], "--request-timeout"),
    (["--request-timeout", "inf"], "--request-timeout"),
    (["--host", "999.999.999.999"], "--host"),
    (["--host", "no such host.invalid"], "--host"),
    (["--host", "8.8.8.8"], "--host"),  # not an interface of this machine
    (["--allowed-host", "a*b"], "--allowed-host"),
    (["--allowed-host", ""], "--allowed-host"),
    (["--allowed-host", "two words"], "--allowed-host"),
]


@pytest.mark.parametrize(("args", "option"), HOSTILE, ids=[" ".join(a) for a, _ in HOSTILE])
def test_a_hostile_option_value_is_a_usage_error(args, option):
    done = CliRunner().invoke(app, ["serve", *args])
    assert done.exit_code == 2, done.output
    assert option in done.output and "Traceback" not in done.output, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)


def test_a_port_in_use_is_refused_before_anything_loads():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = CliRunner().invoke(app, ["serve", "--port", str(port)])
    assert done.exit_code == 2 and "cannot listen on 127.0.0.1" in done.output, done.output


def test_reasonable_values_pass_the_checks():
    serve.check_address("127.0.0.1", 0)
    serve.check_allowed_hosts(["*", "*.example.org", "example.org", "[::1]"])
