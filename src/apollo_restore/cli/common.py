"""What several commands share: a text argument read through the input layer, bounded options,
numbered failures (exit status 2, one line, never a traceback).

Bounds on option values are typer's (``min=``/``max=`` on ``typer.Option``: ``Invalid value for
'--threads': Input should be less than or equal to 8``, exit 2); the numbered checks behind them
(requests, files) are the core's, reported by :func:`fail`.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer
from annotated_types import Ge, Le
from pydantic import BaseModel
from typer.models import OptionInfo

from apollo_restore.errors import ExtraMissing, FileError
from apollo_restore.inputs import STDIN, read_text, source_name

#: Most torch threads a command may ask: one per core, as the core's check
#: (:func:`apollo_restore.restoration.threads.choose_threads`, ``E311``) and ``serve`` allow (more
#: only slow torch down; thousands take minutes to start and a hundred thousand crash it).
MAX_THREADS = os.cpu_count() or 1
#: Most results a listing command prints (documents, readings).
MAX_LIMIT = 1000
#: Largest seed (numpy's generators take 32-bit seeds).
MAX_SEED = 2**32 - 1

_FILE_NAME = re.compile(r"^(?:\S*[/\\]\S*|[^\s/\\]+\.[A-Za-z0-9]{1,5})$")  # a path, or one word with an extension


def threads_option(help: str) -> OptionInfo:
    """The ``--threads`` option, from 1 to :data:`MAX_THREADS` (default ``None``: the command's choice)."""
    return typer.Option(None, "--threads", min=1, max=MAX_THREADS, help=help)


def setting_option(model: type[BaseModel], name: str, *flags: str, help: str, bounded: bool = True) -> OptionInfo:
    """The option that sets field ``name`` of the settings ``model`` (e.g.
    :class:`~apollo_restore.schema.search.RestoreConfig`): the field's default, its bounds as
    typer's ``min``/``max`` (unless not ``bounded``: a check behind the option refuses them with
    its own number), ``help`` followed by what the field must be (a flag's ``help`` alone).

        k: int = setting_option(RestoreConfig, "k", "--k", help="Candidates per gap")
    """
    info = model.model_fields[name]
    bounds: dict[str, Any] = {}
    for meta in info.metadata if bounded else ():
        if isinstance(meta, Ge):
            bounds["min"] = meta.ge
        elif isinstance(meta, Le):
            bounds["max"] = meta.le
    said = f"{help}: {info.description}." if info.description and info.annotation is not bool else f"{help}."
    return typer.Option(info.default, *flags, help=said, **bounds)


def fail(err: Exception) -> NoReturn:
    """Print ``err``'s numbered message and exit with status 2."""
    typer.echo(f"error: {err}", err=True)
    raise typer.Exit(2) from err


#: The modules of each optional extra that commands need (import names: ``yaml`` is PyYAML); the
#: package alone restores, serves, exports, predicts and evaluates without them (pyproject.toml).
TRAIN_MODULES = ("transformers", "tokenizers", "yaml", "matplotlib")
SCALE_MODULES = ("peft",)
_DISTRIBUTIONS = {"yaml": "pyyaml"}  # what pip installs, where the import name differs


def run_line_job(run: Callable[[], int], partial: Path, what: str) -> int:
    """``run()`` (a resumable line job's run: the lines it wrote), its failures as the CLI gives
    them: ``E205`` (a full disk: the lines written so far stay) a numbered error, Ctrl-C exit 130
    with where the ``what`` made so far are, for the same command to continue."""
    try:
        return run()
    except FileError as err:
        fail(err)
    except KeyboardInterrupt:
        typer.echo(
            f"stopped: the {what} made so far are in {partial}; run the same command again to continue", err=True
        )
        raise typer.Exit(130) from None


def require_extra(command: str, *modules: str) -> None:
    """Stop ``command`` with a numbered message naming the extra to install when one of
    ``modules`` is not installed (``E606`` for :data:`TRAIN_MODULES`, else ``E607``), before it
    imports any of them: a missing extra is one line, never a traceback.

    Raises:
        typer.Exit: status 2.
    """
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    for code, extra in (("E606", TRAIN_MODULES), ("E607", SCALE_MODULES)):
        names = [m for m in missing if m in extra]
        if names:
            fail(ExtraMissing(code, command, [_DISTRIBUTIONS.get(m, m) for m in names]))


def finite(value: float | None) -> float | None:
    """A ``typer.Option`` callback refusing infinities (and NaN) where a range has no upper bound."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value


def read_text_argument(text: str | None, keep_bom: bool = False) -> str:
    """A command's TEXT argument: the text itself, a file's content, or stdin (``-`` or nothing;
    with a prompt when it is a terminal). Files and stdin are read through
    :func:`apollo_restore.inputs.read_text` (bounded, strict UTF-8; a byte-order mark kept as
    ``"\ufeff"`` with ``keep_bom``).

    Raises:
        typer.Exit: status 2 when the file or stdin cannot be read (``E202``–``E204``), also
            when a name that looks like a file name (one word with an extension, or a path)
            names no file (``E202``).
    """
    if text is None or text == STDIN:
        if sys.stdin.isatty():
            typer.echo("Paste a Leiden text, then press Ctrl-D (Ctrl-Z Enter on Windows):", err=True)
        return _read(STDIN, keep_bom)
    if not text.strip() or "[" in text or "\n" in text or len(text.encode("utf-8", "surrogatepass")) > 255:
        return text  # the text itself (no file name holds brackets here; "" is an empty text: E300)
    if Path(text).exists():
        return _read(text, keep_bom)  # a file, a device or a folder (refused as E202)
    if _FILE_NAME.match(text):
        fail(FileError("E202", text, reason="no such file (to give a text, write it with its gaps marked, e.g. [.5])"))
    return text


def text_name(text: str | None, source: str) -> str:
    """How messages name what :func:`read_text_argument` read from ``text``: the file's path,
    standard input, or ``the text`` when it was given itself."""
    if text is None or text == STDIN:
        return source_name(STDIN)
    return text if source is not text else "the text"


def _read(path: str, keep_bom: bool = False) -> str:
    try:
        return read_text(path, keep_bom=keep_bom)
    except FileError as err:
        fail(err)
