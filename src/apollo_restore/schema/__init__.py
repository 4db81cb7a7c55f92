"""One declared schema for everything a model folder, a job or a tool reads: types, required keys
and bounds for every number, checked where the file is read and nowhere else.

* :mod:`~apollo_restore.schema.base`: strict models, bounded fields, refusals as numbered errors;
* :mod:`~apollo_restore.schema.folder`: ``apollo_restore.json`` (members and their options, search,
  presentation) and ``calibration.json``;
* :mod:`~apollo_restore.schema.attribution`: ``attribution.json`` (the attribution folder's settings);
* :mod:`~apollo_restore.schema.training`: a training run's settings (``RecipeConfig``, ``TrainConfig``,
  ``AttributionTrainConfig``);
* :mod:`~apollo_restore.schema.answers`: the attribution's request and answer (``AttributeRequest``,
  ``Attribution``), every door's;
* :mod:`~apollo_restore.schema.limits`, :mod:`~apollo_restore.schema.evaluation`: what a request
  and a server allow; what an evaluation asks;
* :mod:`~apollo_restore.schema.jobs`: one line of a gap set and of a predictions file;
* :mod:`~apollo_restore.schema.search`: the search settings every restorer runs with (``RestoreConfig``);
* :mod:`~apollo_restore.schema.reference`: the Markdown reference generated from all of them.

The reference in ``docs/model-folders.md`` is generated from these models
(``python scripts/schema_reference.py``), so the document cannot drift from the code.
"""
