"""The ``apollo-restore`` command: one sub-command per file in this package."""

from __future__ import annotations

import logging

import typer
from typer.core import TyperGroup

from apollo_restore.cli import (
    attribute,
    evaluate,
    export,
    index,
    ngram,
    parallels,
    prepare,
    provenance,
    restore,
    scale,
    serve,
    train,
)
from apollo_restore.cli import tune as tune_cli
from apollo_restore.errors import Errors

#: click's usage error, as the installed typer raises it (newer typers carry their own click)
UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


class NumberedUsage(TyperGroup):
    """The command group whose usage errors (an option out of range, a missing or unknown one,
    from click or from a command's own check) carry the number ``E601``, as every other error
    does; the exit status stays 2."""

    def make_context(self, *args, **kwargs) -> typer.Context:
        try:
            return super().make_context(*args, **kwargs)
        except UsageError as err:
            raise _numbered(err) from None

    def invoke(self, ctx: typer.Context):
        try:
            return super().invoke(ctx)
        except UsageError as err:
            raise _numbered(err) from None


def _numbered(err: UsageError) -> UsageError:
    """``err`` with its message as ``E601`` (once: an error already numbered is kept)."""
    message = err.format_message()
    if message.startswith("[E"):
        return err
    return UsageError(Errors.E601.format(message=message), err.ctx)


# plain click help: no "<bool>" placeholders on flags, no boxes cutting long lines
app = typer.Typer(
    cls=NumberedUsage,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Restore lacunae in Ancient Greek texts.",
)
for module in (prepare, train, restore, export, index, parallels, provenance, serve, evaluate, ngram, scale, tune_cli,
               attribute):  # fmt: skip
    module.register(app)


@app.callback()
def main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress details.")) -> None:
    """Restore lacunae in fragmentary Ancient Greek texts with a fill-in-the-middle model."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
