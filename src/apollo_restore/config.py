"""Run configuration files: YAML (or JSON) mappings plus dotted ``key=value`` overrides.

Values of overrides are parsed as YAML scalars (``steps=100`` → int, ``bf16=false`` → bool,
``weights.ddb=2`` sets one entry of a mapping). :func:`from_mapping` checks every value against
the type of the dataclass field it sets (``bf16=maybe`` or ``steps=abc`` is a ``ValueError``
naming the key, the type and the value) and rejects unknown keys; a field whose type is itself
a config dataclass takes a nested mapping (``section.key=value``).
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml

from apollo_restore.inputs import read_text

T = TypeVar("T")


def from_mapping(cls: type[T], values: dict[str, Any], what: str = "option") -> T:
    """Build the config dataclass ``cls`` from a mapping (``what`` names the kind of option
    in messages); fields left out keep their defaults.

    Raises:
        ValueError: an unknown key, or a value of the wrong type for its field.
    """
    return _build(cls, values, what, "")


def _build(cls: type[T], values: dict[str, Any], what: str, prefix: str) -> T:
    unknown = sorted(set(values) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        raise ValueError(f"unknown {what}(s): {', '.join(prefix + key for key in unknown)}")
    hints = typing.get_type_hints(cls)
    return cls(**{key: _checked(prefix + key, value, hints[key], what) for key, value in values.items()})


def _type_name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")


def _checked(key: str, value: Any, tp: Any, what: str) -> Any:
    """``value`` as a value of type ``tp`` (an int widened to float, a YAML ``1e-5`` string
    parsed as float, a mapping built into a nested config dataclass)."""
    fail = ValueError(f"{what} {key!r} expects {_type_name(tp)}, got {value!r}")
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for arm in (a for a in args if a is not type(None)):
            try:
                return _checked(key, value, arm, what)
            except ValueError:
                continue
        raise fail
    if dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        if not isinstance(value, dict):
            raise fail
        return _build(tp, value, what, f"{key}.")
    if origin is dict:
        if not isinstance(value, dict):
            raise fail
        kt, vt = args or (Any, Any)
        return {_checked(key, k, kt, what): _checked(f"{key}.{k}", v, vt, what) for k, v in value.items()}
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise fail
        return origin(_checked(f"{key}[{i}]", v, args[0] if args else Any, what) for i, v in enumerate(value))
    if tp is bool:
        if not isinstance(value, bool):
            raise fail
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail
        return value
    if tp is float:
        if isinstance(value, str):  # YAML 1.1 reads 1e-5 (no dot) as a string
            try:
                return float(value)
            except ValueError:
                raise fail from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail
        return float(value)
    if tp is str and isinstance(value, Path):
        return str(value)
    if isinstance(tp, type) and not isinstance(value, tp):
        raise fail
    return value


def _default(cls: type, name: str) -> Any:
    """A copy of the default of field ``name`` of dataclass ``cls`` when it is a mapping, else
    ``{}`` (a nested config dataclass fills its own defaults)."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            return copy.deepcopy(value) if isinstance(value, dict) else {}
    return {}


def load_config(path: Path | None, overrides: list[str], cls: type | None = None) -> dict[str, Any]:
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
            loaded = yaml.safe_load(read_text(path))
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
        target[leaf] = yaml.safe_load(raw)
    return values
