"""The ``apollo-restore`` command: one sub-command per file in this package."""

from __future__ import annotations

import logging

import typer

from apollo_restore.cli import evaluate, index, ngram, parallels, prepare, provenance, restore, scale, serve, train

# plain click help: no "<bool>" placeholders on flags, no boxes cutting long lines
app = typer.Typer(
    add_completion=False, no_args_is_help=True, rich_markup_mode=None, help="Restore lacunae in Ancient Greek texts."
)
for module in (prepare, train, restore, index, parallels, provenance, serve, evaluate, ngram, scale):
    module.register(app)


@app.callback()
def main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress details.")) -> None:
    """Restore lacunae in fragmentary Ancient Greek texts with a fill-in-the-middle model."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
