"""The ``apollo-restore`` command: a module per command family, assembled in :mod:`.app`.

Lazy imports: each command imports the package code it runs inside its function, not at the top
of its module, so that ``apollo-restore --help`` (and every command's start) never loads torch,
transformers or a model it does not use. This paragraph gives the reason once for every module
of the CLI (``tests/test_layers.py`` reads it).
"""
