"""Run configuration files: YAML (or JSON) mappings plus dotted ``key=value`` overrides.

Values of overrides are parsed as YAML scalars (``steps=100`` → int, ``bf16=false`` → bool,
``weights.ddb=2`` sets one entry of a mapping). Unknown keys are rejected by the dataclass
that receives the mapping.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")


def from_mapping(cls: type[T], values: dict[str, Any], what: str = "option") -> T:
    """Build the config dataclass ``cls`` from a mapping; unknown keys raise ``ValueError``
    naming them (``what`` names the kind of option in the message)."""
    unknown = sorted(set(values) - {f.name for f in fields(cls)})
    if unknown:
        raise ValueError(f"unknown {what}(s): {', '.join(unknown)}")
    return cls(**values)


def load_config(path: Path | None, overrides: list[str]) -> dict[str, Any]:
    """The mapping in ``path`` (empty when ``None``) with ``overrides`` applied.

    Raises:
        ValueError: an override is not ``key=value`` or the file is not a mapping.
    """
    values: dict[str, Any] = {}
    if path is not None:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if not isinstance(loaded, dict):
            raise ValueError(f"{path} must hold a mapping of options")
        values.update(loaded)
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"override {item!r} is not key=value")
        target = values
        *parents, leaf = key.split(".")
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = yaml.safe_load(raw)
    return values
