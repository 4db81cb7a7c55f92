"""Run configuration files: YAML (or JSON) mappings plus dotted ``key=value`` overrides, as the
mapping a settings model (:mod:`apollo_restore.schema.training`) checks.

Values of overrides are parsed as YAML scalars (``steps=100`` → int, ``bf16=false`` → bool,
``lr=1e-5`` → float, ``weights.ddb=2`` sets one entry of a mapping); the model checks every value
against its field (type and bounds) and refuses unknown keys: there is one type checker, pydantic.

    TrainConfig.from_dict(load_config(Path("configs/default_cpu.yaml"), ["steps=100"], TrainConfig))
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from apollo_restore.inputs import read_text


class _Loader(yaml.SafeLoader):
    """YAML's safe loader, reading ``1e-5`` (no dot) as a number as YAML 1.2 does (YAML 1.1 reads
    it as a string)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _default(cls: type[BaseModel], name: str) -> Any:
    """A copy of the default of field ``name`` of the settings ``cls`` when it is a mapping, else
    ``{}`` (a nested settings model fills its own defaults)."""
    info = cls.model_fields.get(name)
    value = info.get_default(call_default_factory=True) if info is not None else None
    return copy.deepcopy(value) if isinstance(value, dict) else {}


def load_config(path: Path | None, overrides: list[str], cls: type[BaseModel] | None = None) -> dict[str, Any]:
    """The mapping in ``path`` (empty when ``None``) with ``overrides`` applied.

    A dotted override (``weights.ddb=2``) sets one entry of a mapping: of the file's mapping when
    the file has the key, else of the default of ``cls``'s field (so the other default entries
    are kept).

    Raises:
        FileError: the file cannot be read, is not UTF-8 or is too large (a ``ValueError``).
        ValueError: an override is not ``key=value``, or the file is not YAML or not a mapping.
    """
    values: dict[str, Any] = {}
    if path is not None:
        try:
            loaded = yaml.load(read_text(path), Loader=_Loader)
        except yaml.YAMLError as err:
            raise ValueError(f"{path} is not YAML: {err}") from None
        if not isinstance(loaded, dict):
            raise ValueError(f"{path} must hold a mapping of options")
        values.update(loaded)
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"override {item!r} is not key=value")
        *parents, leaf = key.split(".")
        target = values
        for depth, parent in enumerate(parents):
            if parent not in target:
                target[parent] = _default(cls, parent) if depth == 0 and cls is not None else {}
            target = target[parent]
            if not isinstance(target, dict):
                raise ValueError(f"override {item!r}: {parent!r} is not a mapping")
        target[leaf] = yaml.load(raw, Loader=_Loader)
    return values
