"""``apollo-restore parallels``: parallel passages for a gap or a phrase."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from apollo_restore.cli.common import MAX_LIMIT, fail, read_text_argument, text_name


def parallels_command(
    text: str = typer.Argument(
        None,
        help="Leiden text with gaps ([.5], [- - -], ...), a phrase without brackets, a path to a text file, "
        "or '-' (or nothing) for stdin.",
    ),
    index: Path = typer.Option(
        None,
        "--index",
        help="Index folder (default: $APOLLO_RESTORE_INDEX, else the index over the packaged training text, "
        "built in the user cache on first use).",
    ),
    hint: list[str] = typer.Option(
        None, "--hint", help="GAP=HINT overrides, gaps numbered from 1 as printed: 1=7, 2=5-8, 3=ca.7, 4=none."
    ),
    max_between: int = typer.Option(
        40, "--max-between", min=0, max=1000, help="Most letters between the contexts of a gap."
    ),
    limit: int = typer.Option(10, "--limit", min=1, max=MAX_LIMIT, help="Readings (gap) or documents (phrase) shown."),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON (with each document's URL)."),
) -> None:
    """Show where the gap's contexts stand together in the training corpus, and what stands
    between them (readings in edition form, documents linked to their editions); or, for a
    phrase, where it stands."""
    from apollo_restore.cli.restore import parse_hint
    from apollo_restore.data.readers.leiden import find_gaps
    from apollo_restore.data.textchecks import check_no_machine_reading, read_source
    from apollo_restore.errors import LeidenError, RequestError
    from apollo_restore.restoration.request import validate
    from apollo_restore.retrieve.gaps import text_parallels
    from apollo_restore.retrieve.parallels import ParallelIndex
    from apollo_restore.schema.limits import DEFAULT_REQUEST_LIMITS
    from apollo_restore.schema.restoration import RestoreRequest

    source = read_text_argument(text)
    try:  # a machine reading ⁅…⁆ is no letter of the text: refused before the index is opened
        check_no_machine_reading(source)
        # read as every door reads it (an EpiDoc file by its edition, Beta Code converted)
        leiden = read_source(source, DEFAULT_REQUEST_LIMITS, text_name(text, source))[0]
    except RequestError as err:
        fail(err)
    try:
        idx = ParallelIndex.open(index, progress=lambda msg: typer.echo(msg, err=True))
    except (FileNotFoundError, ValueError) as err:
        fail(err)
    if not _has_gap(leiden, find_gaps, LeidenError):
        try:
            result = idx.phrase_parallels(leiden, limit=limit)
        except ValueError as err:
            raise typer.BadParameter(str(err), param_hint="TEXT") from err
        if as_json:
            typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
            return
        _print_phrase(result)
        return
    try:
        hints = dict(parse_hint(h) for h in hint or [])
        request = validate(RestoreRequest(source, hints, None, 1), name=text_name(text, source))
    except (LeidenError, RequestError) as err:
        fail(err)
    gaps = text_parallels(idx, request, max_between=max_between, limit=limit)
    if as_json:
        typer.echo(json.dumps([g.to_dict() for g in gaps], ensure_ascii=False, indent=1))
        return
    _print(gaps)


def _has_gap(leiden: str, find_gaps, error: type[Exception]) -> bool:
    """Whether a text read as Leiden has a gap (malformed Leiden: yes, so that the restoration's
    reading names the problem)."""
    try:
        return bool(find_gaps(leiden))
    except error:
        return True


def _console():
    from rich.console import Console

    return Console(highlight=False, emoji=False)


def _link(doc: str, url: str | None) -> str:
    """Rich markup: the document id, a terminal hyperlink (OSC 8) to its edition where known."""
    from rich.markup import escape

    return f"[link={url}]{escape(doc)}[/link]" if url else escape(doc)


def _print_phrase(result) -> None:
    """Where a phrase stands: one snippet per document, the id linked (followed by its URL
    where the output is not a terminal)."""
    from rich.markup import escape

    console = _console()
    sources = ", ".join(f"{k} {v}" for k, v in result.by_source.items())
    console.print(f"«{result.phrase}»: {result.count} occurrences in {result.n_docs} documents ({sources or 'none'})")
    for hit in result.hits:
        found = escape(f"…{hit.text[: hit.start]}[{hit.text[hit.start : hit.end]}]{hit.text[hit.end :]}…")
        url = "" if console.is_terminal else f"  {hit.url or 'no link'}"
        console.print(f"  {_link(hit.doc, hit.url)}: {found}{url}", soft_wrap=True)


def _print(gaps) -> None:
    """Each gap's readings in edition form; document ids are terminal hyperlinks (OSC 8) where
    the terminal shows them, else followed by their URLs."""
    from rich.markup import escape

    console = _console()
    for gap in gaps:
        where = " ".join(filter(None, [gap.left and f"«…{gap.left}»", "[ ]", gap.right and f"«{gap.right}…»"]))
        alone = "" if bool(gap.left) == bool(gap.right) else f" ({'left' if gap.left else 'right'} context only)"
        found = f"{gap.total} parallels{alone}" + ("" if gap.anchor else " (context too short)")
        console.print(f"[bold]gap {gap.gap}[/bold] · {gap.hint.format()} · {escape(where)}: {found}")
        for g in gap.groups:
            more = f" +{g.n_docs - len(g.docs)}" if g.n_docs > len(g.docs) else ""
            names = g.labels or g.docs  # the corpus named where the id does not say it (IOSPE 3.26)
            docs = ", ".join(_link(d, url) for d, url in zip(names, g.urls))
            console.print(f"  {g.count:>5}× {escape(g.display or g.between)}   ({docs}{more})")
            if not console.is_terminal:
                for d, url in zip(names, g.urls):
                    console.print(f"          {escape(d)}: {url or 'no link'}", soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("parallels")(parallels_command)
