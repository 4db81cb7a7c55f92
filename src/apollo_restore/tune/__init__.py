"""Fit a model folder's settings on validation gaps and write them into it (``apollo-restore tune``).

    apollo-restore tune --model my-model --prepared data/prepared --what weights,demotions,calibration --force

Modules: :mod:`~apollo_restore.tune.run` (the one function the command calls), ``gaps`` (the
validation gaps), ``measure`` (the objective), ``weights`` (ensemble member weights and hint
slack), ``demotions`` (factors of doubtful readings), ``calibration`` (the calibration), ``folder``
(what is read from and written into the model folder). Only the CLI imports this package.
"""
