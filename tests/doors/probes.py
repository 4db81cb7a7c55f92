"""The reliability probes of issue 24: what a new user or an attacker tries, each with what must
happen, run against this checkout; the next audit starts from them.

    python tests/doors/probes.py                 # every probe: a Markdown table, exit 1 when one fails
    python tests/doors/probes.py --fast          # the quick ones (what tests/doors/test_probes.py runs)
    python tests/doors/probes.py --part model    # one part: model, serve, web, predict, input, options
    python tests/doors/probes.py --skip burst-real-model    # all but the 2-minute real-model burst

Each :class:`Probe` says what is tried and what is expected, and its function returns whether
that happened with the outcome seen (exit status and first line, HTTP status and error code).
CLI probes that could hang or eat the machine when the checks they test are missing (``serve``
binds and serves, ``/dev/zero`` on stdin, thousands of threads, a killed ``predict``) run in a
subprocess with a time limit; the others run in this process (``typer``'s test runner, the web
app through its ASGI interface, a stand-in restorer: no model is loaded for the web probes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

GREEK = "ἔτους δευτέρου Αὐτοκράτορος Καίσαρος [.5] τοῦ κυρίου καὶ ἔλαβον παρὰ σοῦ τὰς δραχμάς"
BGU = (
    "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [.4] χαίρειν. "
    "ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν [.12] πυρρὰν κεχαραγμένην"
)
#: Seconds a subprocess probe may run before it counts as hanging.
SUBPROCESS_LIMIT_S = 120
#: Address space of a subprocess probe (bytes): an unbounded read or thousands of thread stacks
#: fail there, not on the machine.
SUBPROCESS_MEMORY = 3 * 1024**3


@dataclass(frozen=True)
class Probe:
    """One probe: ``run(workdir)`` returns ``(passed, actual outcome)``.

    Attributes:
        name: short id.
        part: model, serve, web, predict, input or options.
        tried: what is tried, in words.
        expected: what must happen.
        fast: runs in a few seconds without loading a model's weights for restoring (CI runs these).
    """

    name: str
    part: str
    tried: str
    expected: str
    run: Callable[[Path], tuple[bool, str]]
    fast: bool = True


# -- ways to run things -------------------------------------------------------------------------


def cli(*args: str, stdin: str | None = None) -> tuple[int, str, bool]:
    """``apollo-restore ARGS`` in this process: ``(exit status, output, ended in a traceback)``."""
    from typer.testing import CliRunner

    from apollo_restore.cli.app import app

    done = CliRunner().invoke(app, list(args), input=stdin)
    crashed = done.exception is not None and not isinstance(done.exception, SystemExit)
    output = done.output + (f"\n{type(done.exception).__name__}: {done.exception}" if crashed else "")
    return done.exit_code, output, crashed


def cli_process(*args: str, stdin=None, limit_s: float = SUBPROCESS_LIMIT_S) -> tuple[int, str, bool]:
    """``python -m apollo_restore ARGS`` in a subprocess killed after ``limit_s``: exit status
    (``-9`` when killed for time), output, and whether it ended in a traceback."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "apollo_restore", *args],
            stdin=stdin,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=limit_s,
            preexec_fn=_bounded,
        )
    except subprocess.TimeoutExpired as err:
        output = (err.stdout or b"").decode(errors="replace") if isinstance(err.stdout, bytes) else err.stdout or ""
        return -9, output + f"\n(still running after {limit_s:g} s)", False
    output = done.stdout + done.stderr
    return done.returncode, output, "Traceback (most recent call last)" in output


def _bounded() -> None:
    """In a probe's subprocess: at most :data:`SUBPROCESS_MEMORY` of address space."""
    resource.setrlimit(resource.RLIMIT_AS, (SUBPROCESS_MEMORY, SUBPROCESS_MEMORY))


def refused(outcome: tuple[int, str, bool], code: str = "") -> tuple[bool, str]:
    """Exit status 2 with ``code`` (``"E506"``, or ``""`` for a usage error) and no traceback."""
    status, output, crashed = outcome
    lines = [line for line in output.splitlines() if line.strip()]
    shown = next((line for line in lines if code and f"[{code}]" in line), None)
    if crashed:  # the exception, on a traceback's last line
        shown = lines[-1] if lines else ""
    shown = shown or next((line for line in lines if "rror" in line), lines[-1] if lines else "")
    passed = status == 2 and not crashed and (f"[{code}]" in output if code else True)
    return passed, f"exit {status}{' (traceback)' if crashed else ''}: {shown.strip()[:140]}"


# -- model folders ------------------------------------------------------------------------------


def _model_copy(workdir: Path) -> Path:
    from apollo_restore.restoration.config import DEFAULT_MODEL

    folder = workdir / "model"
    shutil.rmtree(folder, ignore_errors=True)
    return Path(shutil.copytree(DEFAULT_MODEL, folder))


def broken_model(corrupt: Callable[[Path], None], code: str) -> Callable[[Path], tuple[bool, str]]:
    """A probe: restore with a copy of the shipped folder corrupted by ``corrupt``."""

    def run(workdir: Path) -> tuple[bool, str]:
        folder = _model_copy(workdir)
        corrupt(folder)
        return refused(cli("restore", GREEK, "--model", str(folder)), code)

    return run


def _weights(edit: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def corrupt(folder: Path) -> None:
        path = folder / "model.safetensors"
        path.write_bytes(edit(path.read_bytes()))

    return corrupt


def _config(**fields) -> Callable[[Path], None]:
    def corrupt(folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, **fields}))

    return corrupt


def _write(name: str, text: str) -> Callable[[Path], None]:
    return lambda folder: (folder / name).write_text(text)


def _more_tokens(folder: Path) -> None:
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    vocab.update({f"q{i}": len(vocab) + i for i in range(5)})
    (folder / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _calibration_without_conditions(folder: Path) -> None:
    data = json.loads((folder / "calibration.json").read_text())
    data.pop("kinds")
    (folder / "calibration.json").write_text(json.dumps(data))


MODEL_PROBES = [
    Probe("weights-truncated", "model", "model.safetensors cut in half", "exit 2, E506 naming the file",
          broken_model(_weights(lambda b: b[: len(b) // 2]), "E506")),
    Probe("weights-empty", "model", "an empty model.safetensors", "exit 2, E506",
          broken_model(_weights(lambda b: b""), "E506")),
    Probe("weights-random", "model", "model.safetensors of random bytes", "exit 2, E506",
          broken_model(_weights(lambda b: os.urandom(4096)), "E506")),
    Probe("config-3-layers", "model", "config.json: 3 layers, the weights have 6", "exit 2, E507 (not a silent load)",
          broken_model(_config(num_hidden_layers=3), "E507")),
    Probe("config-12-layers", "model", "config.json: 12 layers", "exit 2, E507 (not KeyError)",
          broken_model(_config(num_hidden_layers=12), "E507")),
    Probe("config-12-heads", "model", "config.json: 12 attention heads", "exit 2, E509 (not RuntimeError)",
          broken_model(_config(num_attention_heads=12), "E509")),
    Probe("config-json-list", "model", "config.json holds a JSON list", "exit 2, E504 (not TypeError)",
          broken_model(_write("config.json", "[6, 6]"), "E504")),
    *[
        Probe(f"invalid-json-{name.split('.')[0]}", "model", f"{name} is not valid JSON",
              "exit 2, E503 naming the file, line and column", broken_model(_write(name, '{"a": 1,\n "b": }'), "E503"))
        for name in ("config.json", "generation_config.json", "apollo_restore.json", "calibration.json")
    ],
    Probe("tokenizer-too-large", "model", "tokenizer.json with 5 tokens more than the model's vocab_size",
          "exit 2, E512 (not an IndexError at the first gap)", broken_model(_more_tokens, "E512")),
    Probe("calibration-no-conditions", "model", "calibration.json valid JSON but without its conditions",
          "exit 2, E505 naming file and field", broken_model(_calibration_without_conditions, "E505")),
]  # fmt: skip


# -- serve options -------------------------------------------------------------------------------


def serve_with(*args: str) -> Callable[[Path], tuple[bool, str]]:
    """A probe: ``serve ARGS`` in a subprocess (were the option not checked, it would load and serve)."""
    return lambda workdir: refused(cli_process("serve", *args, limit_s=60))


SERVE_PROBES = [
    Probe(f"serve-{'-'.join(a).lstrip('-')}", "serve", f"serve {' '.join(a)}", "exit 2 usage error, no traceback",
          serve_with(*a))
    for a in (("--threads", "-3"), ("--max-concurrent", "0"), ("--port", "99999"), ("--max-queued", "0"),
              ("--request-timeout", "nan"), ("--host", "999.1.1.1"), ("--allowed-host", "a*b"))
]  # fmt: skip


# -- the web API (a stand-in restorer; no model) ----------------------------------------------------


def _stand_in(seconds: float = 0.0):
    """A restorer answering one reading per gap after ``seconds`` (:class:`tests.stubs.FixedReadings`)."""
    from tests.stubs import FixedReadings

    return FixedReadings([("αβγ", 0.0)], name="probe", seconds=seconds)


class _Parallels:
    def parallels(self, prefix, suffix, k):
        return [{"between": "ωρου", "count": 1, "n_docs": 1, "docs": ["bgu.1.100"], "examples": []}]

    def provenance(self, text, min_run):
        return {}


def _client():
    from fastapi.testclient import TestClient

    from apollo_restore.web.app import create_app

    return TestClient(create_app(_stand_in(), parallels=_Parallels()))


def web_status(method: str, path: str, status: int, code: str = "", **kwargs) -> Callable[[Path], tuple[bool, str]]:
    """A probe: one request to the app; passes on ``status`` (and error ``code``)."""

    def run(workdir: Path) -> tuple[bool, str]:
        r = _client().request(method, path, **kwargs)
        got = (
            r.json().get("error", {}).get("code", "")
            if r.headers.get("content-type", "").startswith("application/json") and r.status_code >= 400
            else ""
        )
        leaked = "root:" in r.text
        passed = r.status_code == status and (not code or got == code) and not leaked
        return passed, f"{r.status_code} {got}{' (leaked /etc/passwd)' if leaked else ''}".strip()

    return run


def no_cors(workdir: Path) -> tuple[bool, str]:
    r = _client().options(
        "/api/restore", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    )
    allowed = r.headers.get("access-control-allow-origin")
    return allowed is None, f"{r.status_code}, Access-Control-Allow-Origin: {allowed}"


def burst(seconds_per_gap: float, n: int, limit_s: float) -> Callable[[Path], tuple[bool, str]]:
    """A probe: ``n`` simultaneous two-gap requests to a server whose restorer sleeps per gap."""

    def run(workdir: Path) -> tuple[bool, str]:
        import httpx

        from apollo_restore.schema.limits import Limits
        from apollo_restore.web.app import create_app
        from apollo_restore.web.limits import measure_cost

        limits = Limits(max_concurrent=2, request_timeout_s=limit_s)
        restorer = _stand_in(seconds_per_gap)
        app = create_app(restorer, limits=limits)
        measure_cost(app.state.gate, restorer)

        async def fire():
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=10 * limit_s) as c:

                async def one():
                    started = time.perf_counter()
                    r = await c.post("/api/restore", json={"text": BGU, "k": 1})
                    return r.status_code, time.perf_counter() - started, "retry-after" in r.headers

                return await asyncio.gather(*(one() for _ in range(n)))

        results = asyncio.run(fire())
        served = [t for s, t, _ in results if s == 200]
        late = [t for s, t, _ in results if s != 200 and t > 0.5 * limit_s]
        passed = (
            served
            and all(t <= limit_s for t in served)
            and not late
            and all(s == 200 or (s == 503 and retry) for s, _, retry in results)
        )
        return bool(passed), (
            f"{len(served)} × 200 (max {max(served or [0]):.2f} s), {n - len(served)} × 503 "
            f"({len(late)} of them after {0.5 * limit_s:g} s)"
        )

    return run


def parallels_pin(pins: dict) -> Callable[[Path], tuple[bool, str]]:
    """A probe: the same pins to /api/restore and /api/parallels; both must refuse with one code."""

    def run(workdir: Path) -> tuple[bool, str]:
        client = _client()
        codes = []
        for path in ("/api/restore", "/api/parallels"):
            r = client.post(path, json={"text": BGU, "pins": pins})
            codes.append((r.status_code, r.json().get("error", {}).get("code", "")))
        return codes[0] == codes[1] and codes[0][0] == 422, f"restore {codes[0]}, parallels {codes[1]}"

    return run


WEB_PROBES = [
    Probe("parallels-pin-no-such-gap", "web", "/api/parallels with a pin for gap 7 of a 2-gap text",
          "422 E307, as /api/restore", parallels_pin({"7": "ωρου"})),
    Probe("parallels-pin-leiden", "web", "/api/parallels with a pin holding Leiden brackets",
          "422 E307, as /api/restore", parallels_pin({"0": "ωρ[ου]"})),
    Probe("burst-beyond-capacity", "web", "60 simultaneous requests, 0.2 s each, 2 slots, 2 s limit (a stand-in)",
          "each 200 within the limit or 503 + Retry-After at once", burst(0.1, 60, 2.0)),
    Probe("host-header", "web", "a request with Host: evil.example", "400",
          web_status("GET", "/api/health", 400, headers={"host": "evil.example"})),
    Probe("body-too-large", "web", "a 1 MB JSON body", "413 H001",
          web_status("POST", "/api/restore", 413, "H001", content=b"{" + b" " * 1_000_000 + b"}",
                     headers={"content-type": "application/json"})),
    Probe("static-traversal", "web", "GET /static/../../../../etc/passwd (encoded)", "404, nothing read",
          web_status("GET", "/static/..%2f..%2f..%2f..%2fetc%2fpasswd", 404)),
    Probe("epidoc-xxe", "web", "an EpiDoc upload with an external entity on /etc/passwd", "422, nothing read",
          web_status("POST", "/api/epidoc", 422, files={"file": (
              "x.xml", b"<!DOCTYPE x [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><TEI>&e;</TEI>", "text/xml")})),
    Probe("cors-preflight", "web", "a CORS preflight from another origin", "no Access-Control-Allow-Origin", no_cors),
    Probe("lone-surrogate", "web", "a text with a lone surrogate (\\ud800)", "422 E309",
          web_status("POST", "/api/restore", 422, "E309", content=b'{"text": "\\ud800 [.3] \\u03b1\\u03b2\\u03b3"}',
                     headers={"content-type": "application/json"})),
    Probe("burst-real-model", "web", "150 simultaneous typical requests, real model, 60 s limit",
          "see benchmarks/web_load.py --requests 150 --time-limit 60 (BENCHMARKS.md, Reliability)",
          lambda workdir: web_load(), fast=False),
]  # fmt: skip


def web_load() -> tuple[bool, str]:
    """The real-model burst: ``benchmarks/web_load.py`` (its exit status and verdict line)."""
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "web_load.py"
    done = subprocess.run(
        [sys.executable, str(script), "--requests", "150", "--time-limit", "60"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    verdict = next((line for line in done.stdout.splitlines() if line.startswith("Every answer")), done.stderr[-200:])
    return done.returncode == 0, verdict


# -- part A: predict, the input layer, other options (merged separately) -------------------------


def _gapset(workdir: Path, rows: list[dict], name: str = "gaps.jsonl") -> Path:
    path = workdir / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _gap(i: int, **fields) -> dict:
    row = {"id": f"g{i}", "source": "ddb", "doc": "d", "prefix": "ετους δευτερου αυτοκρατορος ",
           "suffix": " του κυριου και ελαβον", "target": "καισαρος", "hint": 8, "kind": "synthetic"}  # fmt: skip
    return {**row, **fields}


def predict_keeps_out(workdir: Path) -> tuple[bool, str]:
    out = workdir / "out.jsonl"
    out.write_text("precious\n")
    outcome = refused(cli("predict", "--gaps", str(_gapset(workdir, [_gap(0, hint=500)])), "--out", str(out)))
    kept = out.read_text() == "precious\n"
    return outcome[0] and kept, outcome[1] + ("" if kept else "; --out was overwritten")


def predict_out_is_gaps(workdir: Path) -> tuple[bool, str]:
    gaps = _gapset(workdir, [_gap(0)])
    before = gaps.read_text()
    outcome = refused(cli("predict", "--gaps", str(gaps), "--out", str(gaps)))
    kept = gaps.read_text() == before
    return outcome[0] and kept, outcome[1] + ("" if kept else "; the gap set was replaced")


def predict_refuses(rows: list[dict] | bytes, code: str = "") -> Callable[[Path], tuple[bool, str]]:
    def run(workdir: Path) -> tuple[bool, str]:
        gaps = workdir / "gaps.jsonl"
        if isinstance(rows, bytes):
            gaps.write_bytes(rows)
        else:
            _gapset(workdir, rows)
        return refused(cli("predict", "--gaps", str(gaps), "--out", str(workdir / "p.jsonl")), code)

    return run


def predict_missing_dir(workdir: Path) -> tuple[bool, str]:
    out = workdir / "no" / "such" / "dir" / "p.jsonl"
    return refused(cli("predict", "--gaps", str(_gapset(workdir, [_gap(0)])), "--out", str(out)))


def _written_lines(workdir: Path, gaps: Path) -> set[bytes]:
    """Every complete prediction line in the files ``predict`` wrote so far (its output or a
    temporary file beside it)."""
    found: set[bytes] = set()
    for path in workdir.iterdir():
        if path.is_file() and path != gaps:
            found.update(line for line in path.read_bytes().splitlines(keepends=True) if line.endswith(b"\n"))
    return found


def predict_resumes(workdir: Path) -> tuple[bool, str]:
    """Kill ``predict`` once it has written 3 of 8 predictions, run it again: every gap exactly
    once, and the lines written before the kill kept as they were (each holds its own
    milliseconds: a gap predicted again would differ)."""
    gaps = _gapset(workdir, [_gap(i) for i in range(8)])
    out = workdir / "p.jsonl"
    args = ["predict", "--gaps", str(gaps), "--out", str(out), "--k", "2", "--neural-only"]
    proc = subprocess.Popen([sys.executable, "-m", "apollo_restore", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + SUBPROCESS_LIMIT_S
    while time.monotonic() < deadline and proc.poll() is None and len(_written_lines(workdir, gaps)) < 3:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _written_lines(workdir, gaps)
    resume = ["--resume"] if "--resume" in cli_process("predict", "--help", limit_s=60)[1] else []
    status, _, _ = cli_process(*args, *resume)
    lines = out.read_bytes().splitlines(keepends=True) if out.exists() else []
    ids = [json.loads(line)["id"] for line in lines]
    kept = before <= set(lines)
    passed = status == 0 and sorted(ids) == [f"g{i}" for i in range(8)] and kept
    return passed, (
        f"exit {status}: {len(before)} lines before the kill, {len(lines)} after the re-run, "
        f"{len(set(ids))} distinct ids of 8, the first ones {'kept' if kept else 'predicted again'}"
    )


def restore_gaps(text: str, want: int) -> Callable[[Path], tuple[bool, str]]:
    """A probe: restoring ``text`` is refused with a numbered error, or finds ``want`` gaps."""

    def run(workdir: Path) -> tuple[bool, str]:
        status, output, crashed = cli("restore", text, "--json", "--k", "1", "--neural-only")
        if status == 2 and not crashed and "[E" in output:
            return True, f"exit 2: {output.strip().splitlines()[-1][:120]}"
        try:
            gaps = len(json.loads(output)["gaps"])
        except (ValueError, KeyError):
            return False, f"exit {status}{' (traceback)' if crashed else ''}: {output.strip()[:120]}"
        return gaps == want and "[[" not in output, f"exit {status}: {gaps} gap(s)"

    return run


def restore_prints_flat(text: str) -> Callable[[Path], tuple[bool, str]]:
    """A probe: restoring ``text`` is refused with a numbered error, or prints a restored text
    with no bracket inside another."""

    def run(workdir: Path) -> tuple[bool, str]:
        status, output, crashed = cli("restore", text, "--k", "1", "--neural-only")
        if status == 2 and not crashed and "[E" in output:
            return True, f"exit 2: {output.strip().splitlines()[-1][:120]}"
        restored = output.splitlines()[1] if len(output.splitlines()) > 1 else output
        nested = re.search(r"\[[^\[\]]*\[", restored)
        return status == 0 and not nested, f"exit {status}: printed {ascii(nested.group()) if nested else 'flat'}"

    return run


def restore_file(content: bytes | None, code: str = "") -> Callable[[Path], tuple[bool, str]]:
    def run(workdir: Path) -> tuple[bool, str]:
        path = workdir / "text.txt"
        if content is None:
            path.mkdir(exist_ok=True)  # a folder where a file is expected
        else:
            path.write_bytes(content)
        return refused(cli("restore", str(path)), code)

    return run


def restore_stdin_zero(workdir: Path) -> tuple[bool, str]:
    with open("/dev/zero", "rb") as zero:
        return refused(cli_process("restore", "-", stdin=zero, limit_s=60))


def prepare_symlink_loop(workdir: Path) -> tuple[bool, str]:
    corpus = workdir / "ddb"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "ddb", corpus, dirs_exist_ok=True)
    (corpus / "loop").symlink_to(corpus / "loop")
    status, output, crashed = cli("prepare", "--corpus", f"ddb={corpus}", "--out", str(workdir / "prepared"))
    written = (workdir / "prepared" / "documents.parquet").exists()
    seen = f"exit {status}{' (traceback)' if crashed else ''}, documents written: {written}"
    return status == 0 and not crashed and written, seen


def prepare_out_is_file(workdir: Path) -> tuple[bool, str]:
    corpus = Path(__file__).resolve().parents[1] / "fixtures" / "ddb"
    out = workdir / "a-file"
    out.write_text("x")
    return refused(cli("prepare", "--corpus", f"ddb={corpus}", "--out", str(out)))


CLI_PROBES = [
    Probe("predict-keeps-out", "predict", "predict with a 500-letter hint over an existing --out",
          "exit 2 before the model loads; --out untouched", predict_keeps_out),
    Probe("predict-out-is-gaps", "predict", "predict --out equal to --gaps", "exit 2; the gap set untouched",
          predict_out_is_gaps),
    Probe("predict-missing-dir", "predict", "predict --out in a missing folder", "exit 2 numbered, no traceback",
          predict_missing_dir),
    Probe("predict-duplicate-ids", "predict", "a gap set with one id twice", "exit 2 numbered",
          predict_refuses([_gap(0), _gap(0)])),
    Probe("predict-latin-context", "predict", "a gap whose context is Latin", "exit 2, E308",
          predict_refuses([_gap(0, prefix="arma virumque cano troiae ", suffix=" qui primus ab oris")], "E308")),
    Probe("predict-control-chars", "predict", "a gap whose context holds U+0007", "exit 2, E309",
          predict_refuses([_gap(0, prefix="ετους \u0007δευτερου ")], "E309")),
    Probe("predict-invalid-utf8", "predict", "a gap set with invalid UTF-8", "exit 2, E203 naming file, byte and line",
          predict_refuses(b'{"id": "g0", "prefix": "\xff"}\n', "E203")),
    Probe("predict-killed-resumes", "predict", "SIGKILL predict after 3 of 8 gaps, run it again",
          "every gap exactly once", predict_resumes, fast=False),
    *[
        Probe(f"invisible-{name}", "input", f"[.{{{name}}}8] inside gap markup", "refused, or one 8-letter gap",
              restore_gaps(GREEK.replace("[.5]", f"[.{char}8]"), 1), fast=False)
        for name, char in (("zwj", "\u200d"), ("zwsp", "\u200b"), ("lrm", "\u200e"), ("bom", "\ufeff"),
                           ("shy", "\u00ad"), ("cgj", "\u034f"), ("acute", "\u0301"))
    ],
    Probe("invisible-rlo", "input", "[\\u202e.8]", "refused (numbered), or no nested brackets printed",
          restore_prints_flat(GREEK.replace("[.5]", "[\u202e.8]")), fast=False),
    Probe("restore-file-invalid-utf8", "input", "restore FILE with invalid UTF-8", "exit 2 numbered, no traceback",
          restore_file(b"\xff\xfe [.5] \xff")),
    Probe("restore-file-is-folder", "input", "restore text.txt where text.txt is a folder", "exit 2, no traceback",
          restore_file(None)),
    Probe("restore-stdin-unbounded", "input", "restore - < /dev/zero", "exit 2 numbered (bounded read), no MemoryError",
          restore_stdin_zero, fast=False),
    Probe("restore-threads-4096", "options", "restore --threads 4096", "exit 2 usage error (not 169 s)",
          lambda w: refused(cli_process("restore", GREEK, "--threads", "4096", limit_s=60)), fast=False),
    Probe("restore-threads-100000", "options", "restore --threads 100000", "exit 2 usage error (not a segfault)",
          lambda w: refused(cli_process("restore", GREEK, "--threads", "100000", limit_s=60)), fast=False),
    Probe("restore-k-0", "options", "restore --k 0", "exit 2", lambda w: refused(cli("restore", GREEK, "--k", "0"))),
    Probe("prepare-symlink-loop", "input", "a symlink loop inside a corpus folder", "prepare finishes with documents",
          prepare_symlink_loop),
    Probe("prepare-out-is-file", "input", "prepare --out naming a file", "exit 2 numbered, no traceback",
          prepare_out_is_file),
]  # fmt: skip

PROBES = MODEL_PROBES + SERVE_PROBES + WEB_PROBES + CLI_PROBES


def run_probe(probe: Probe) -> tuple[bool, str, float]:
    """``(passed, actual outcome, seconds)``, in a fresh temporary folder; an exception is a failure."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"abuse-{probe.name}-") as tmp:
        try:
            passed, actual = probe.run(Path(tmp))
        except Exception as err:  # a probe that crashes has found something
            passed, actual = False, f"{type(err).__name__}: {str(err)[:120]}"
    return passed, actual.replace(tmp, "TMP"), time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="only the quick probes (as CI runs them)")
    parser.add_argument("--part", action="append", help="only this part (repeatable)")
    parser.add_argument("--name", action="append", help="only the probe of this name (repeatable)")
    parser.add_argument("--skip", action="append", default=[], help="leave out the probe of this name (repeatable)")
    args = parser.parse_args()
    chosen = [
        p
        for p in PROBES
        if (not args.fast or p.fast)
        and p.part in (args.part or [p.part])
        and p.name in (args.name or [p.name])
        and p.name not in args.skip
    ]
    print("| probe | part | tried | expected | actual | s | result |")
    print("|---|---|---|---|---|---:|---|")
    failed = 0
    for probe in chosen:
        passed, actual, seconds = run_probe(probe)
        result = "pass" if passed else "**FAIL**"
        failed += not passed
        actual = actual.replace("|", "\\|")
        cells = (probe.name, probe.part, probe.tried, probe.expected, actual, f"{seconds:.1f}", result)
        print("| " + " | ".join(cells) + " |", flush=True)
    print(f"\n{len(chosen)} probes, {failed} failed.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: tests.stubs
    sys.exit(main())
