"""``apollo-restore export``: a text as it came in, with the readings chosen for its gaps marked."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from apollo_restore.cli.common import fail, read_text_argument


def export_command(
    text: str = typer.Argument(
        None, help="Leiden text or an EpiDoc XML file: the text, a path to a file, or '-' (or nothing) for stdin."
    ),
    reading: list[str] = typer.Option(
        None, "--reading", help="GAP=READING: the reading chosen for a gap, gaps numbered from 1 (1=δευτέρου)."
    ),
    fmt: str = typer.Option("leiden", "--format", help="leiden or epidoc."),
    out: Path = typer.Option(None, "--out", help="Write to this file (default: standard output)."),
    force: bool = typer.Option(False, "--force", help="Replace --out if it exists."),
) -> None:
    """Write the text as it came in, with each chosen reading in its gap marked as the machine's
    (Leiden ⁅reading⁆⁽ᵐ¹⁾ and an apparatus; EpiDoc <supplied resp="#apollo-restore" cert="low">):
    with no --reading, the text itself, byte for byte."""
    import apollo_restore
    from apollo_restore.data.outputs import check_writable, write_atomic
    from apollo_restore.errors import FileError

    source = read_text_argument(text, keep_bom=True)
    bom = "\ufeff" if source.startswith("\ufeff") else ""  # given back, as every other byte is
    source = source.removeprefix(bom)
    readings: dict[int, str] = {}
    for item in reading or []:
        gap, sep, value = item.partition("=")
        if not sep or not gap.strip().isdecimal():
            raise typer.BadParameter(f"{item!r} must look like GAP=READING (1=δευτέρου)", param_hint="--reading")
        readings[int(gap)] = value.strip()
    if fmt not in ("leiden", "epidoc"):
        raise typer.BadParameter(f"{fmt!r}: give leiden or epidoc", param_hint="--format")
    try:
        content = bom + apollo_restore.export(source, readings, format=fmt)
    except ValueError as err:
        fail(err)
    if out is None:
        typer.echo(content, nl=False)
        return
    try:
        check_writable(out)  # E205: a folder, a missing or read-only folder
        if os.path.lexists(out) and not force:
            raise FileError("E207", str(out))
        write_atomic(out, content.encode("utf-8"))
    except FileError as err:
        fail(err)
    except OSError as err:
        fail(FileError("E205", str(out), reason=err.strerror or str(err)))


def register(app: typer.Typer) -> None:
    app.command("export")(export_command)
