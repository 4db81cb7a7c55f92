"""``python -m apollo_restore`` → the ``apollo-restore`` command."""

from apollo_restore.cli.app import app

app()
