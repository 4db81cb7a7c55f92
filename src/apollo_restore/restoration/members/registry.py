"""Ensemble members registered by name, as a model folder lists them (a registry like spaCy's factories).

A folder's ``apollo_restore.json`` holds::

    "ensemble": {"members": [{"name": "neural", "weight": 1.0},
                             {"name": "infini", "weight": 1.0, "options": {"direction": "forward"}},
                             {"name": "length", "weight": 8.0}],
                 "search": {"hint_slack": 5, "beam_width": 40},
                 "chosen_by": "docs/notes/… (a pointer)"}

Each name is a factory registered here with :func:`register_member`: it checks its options (an
unknown one, or a value of the wrong type, is a numbered error naming the file and the field) and
builds the member. Each member class declares its
:data:`~apollo_restore.restoration.filler.MemberKind` in a ``kind`` attribute,
which is what the :class:`~apollo_restore.restoration.members.ensemble.Ensemble` reads (never its type).

    from apollo_restore.restoration.members.registry import build_member, member_entries
    from apollo_restore.restoration.members.registry import register_member, write_member_weights
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apollo_restore.data.formats import is_json_number
from apollo_restore.data.orthography import default_forms
from apollo_restore.errors import Errors, ModelFolderError
from apollo_restore.model.folder import META_FILE, write_meta
from apollo_restore.model.verify import check_whole
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.filler import GapFiller, MemberKind, kind_of
from apollo_restore.restoration.members.document_copy import DocumentCopy
from apollo_restore.restoration.members.document_words import DocumentWords, Vocabulary
from apollo_restore.restoration.members.ensemble import LengthPrior
from apollo_restore.restoration.members.infini import load_infini
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.members.ngram import load_ngram


@dataclass(frozen=True)
class MemberSpec:
    """What a factory is given besides its options.

    Attributes:
        folder: the model folder.
        search: the folder's search settings (every member searches with them).
        device: where a neural member runs (``"cpu"``, ``"cuda"``).
        field: the member's place in the file, for messages (``"ensemble.members[2]"``).
    """

    folder: Path
    search: RestoreConfig
    device: str
    field: str

    @property
    def file(self) -> Path:
        """The file the member is declared in."""
        return self.folder / META_FILE


#: An option checker: ``(spec, field, value) → value`` or a :class:`ModelFolderError` (E505).
Check = Callable[[MemberSpec, str, Any], Any]


@dataclass(frozen=True)
class Factory:
    """A registered member: its name, the checkers of its options, and the function that builds it."""

    name: str
    kind: MemberKind
    make: Callable[..., GapFiller]
    options: dict[str, Check]


_FACTORIES: dict[str, Factory] = {}


def register_member(
    name: str, kind: MemberKind, **options: Check
) -> Callable[[Callable[..., GapFiller]], Callable[..., GapFiller]]:
    """Register ``make(spec, **options) → member`` under ``name``: it builds members of ``kind``
    (the ``kind`` their class declares: known before anything loads); ``options`` name the
    options it takes and how each is checked.

    Raises:
        ValueError: ``name`` is registered already.
    """

    def register(make: Callable[..., GapFiller]) -> Callable[..., GapFiller]:
        if name in _FACTORIES:
            raise ValueError(f"an ensemble member named {name!r} is registered already")
        _FACTORIES[name] = Factory(name, kind, make, options)
        return make

    return register


def known_members() -> list[str]:
    """The registered member names, sorted."""
    return sorted(_FACTORIES)


# -- option checkers ----------------------------------------------------------------------------


def _bad(spec: MemberSpec, field: str, value: Any, expected: str) -> ModelFolderError:
    return ModelFolderError("E505", spec.file, field=field, value=value, expected=expected)


def _flag(spec: MemberSpec, field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _bad(spec, field, value, "true or false")
    return value


def _whole(spec: MemberSpec, field: str, value: Any) -> int:
    return check_whole(spec.file, field, value, 1)


def _number(value: Any) -> bool:
    """A finite JSON number."""
    return is_json_number(value) and math.isfinite(value)


def _discount(spec: MemberSpec, field: str, value: Any) -> float | list[float]:
    if _number(value) or (isinstance(value, list) and len(value) == 3 and all(map(_number, value))):
        return value
    raise _bad(spec, field, value, "a number, or a list of three numbers")


def _direction(spec: MemberSpec, field: str, value: Any) -> str:
    if value not in ("forward", "backward"):
        raise _bad(spec, field, value, '"forward" or "backward"')
    return value


def _file(spec: MemberSpec, field: str, value: Any) -> Path:
    if not isinstance(value, str) or not value or Path(value).is_absolute() or ".." in Path(value).parts:
        raise _bad(spec, field, value, "the name of a file in the model folder")
    path = spec.folder / value
    if not path.is_file():
        raise FileNotFoundError(Errors.E501.format(folder=spec.folder, member=spec.field, path=path))
    return path


# -- the members --------------------------------------------------------------------------------


@register_member("neural", "neural")
def _neural(spec: MemberSpec) -> GapFiller:
    return NeuralMember.load(spec.folder, config=spec.search, device=spec.device)


@register_member("infini", "classical", direction=_direction, discount=_discount, max_context=_whole)
def _infini(spec: MemberSpec, direction: str = "forward", **options: Any) -> GapFiller:
    return load_infini(direction, search=spec.search, **options)


@register_member("ngram", "classical", file=_file)
def _ngram(spec: MemberSpec, file: Path | None = None) -> GapFiller:
    if file is None:
        raise _bad(spec, f"{spec.field}.options.file", None, "the name of an n-gram file in the model folder")
    return load_ngram(file, search=spec.search)


@register_member("length", "prior")
def _length(spec: MemberSpec) -> GapFiller:
    return LengthPrior()


@register_member("copy", "document")
def _copy(spec: MemberSpec) -> GapFiller:
    return DocumentCopy(search=spec.search)


@register_member("words", "document", vocabulary=_flag)
def _words(spec: MemberSpec, vocabulary: bool = False) -> GapFiller:
    return DocumentWords(vocabulary=Vocabulary(default_forms().keys) if vocabulary else None, search=spec.search)


# -- reading a folder's entry -------------------------------------------------------------------


@dataclass(frozen=True)
class MemberEntry:
    """One checked member entry: its name, weight, checked options and place in the file."""

    name: str
    weight: float
    options: dict[str, Any]
    field: str

    @property
    def kind(self) -> MemberKind:
        """The kind of member it builds."""
        return _FACTORIES[self.name].kind

    @property
    def label(self) -> str:
        """How reports and :func:`write_member_weights` name it: the name, ``_backward`` added for
        a member reading right to left (``infini_backward``)."""
        return f"{self.name}_backward" if self.options.get("direction") == "backward" else self.name


def member_entries(folder: Path, ensemble: Any, search: RestoreConfig, device: str = "cpu") -> list[MemberEntry]:
    """The checked member entries of a folder's ``ensemble`` entry, in order (nothing is loaded).

    Raises:
        ModelFolderError: ``E520`` an entry of the old format (``"weights"``, no ``"members"``);
            ``E505`` a weight that is not a finite number ≥ 0, or an option of the wrong type;
            ``E521`` an unknown member name; ``E522`` an option the member (or the entry) does not take.
        FileNotFoundError: a file a member names is missing (E501).
    """
    file = folder / META_FILE
    if not isinstance(ensemble, dict) or "members" not in ensemble:
        raise ModelFolderError("E520", file)
    extra = sorted(set(ensemble) - {"members", "search", "chosen_by"})
    if extra:
        known = "members, search, chosen_by"
        raise ModelFolderError("E522", file, field="ensemble", option=extra[0], name="the ensemble entry", known=known)
    members = ensemble["members"]
    if not isinstance(members, list) or not members:
        raise ModelFolderError("E505", file, field="ensemble.members", value=members, expected="a list of members")
    out = []
    for i, entry in enumerate(members):
        field = f"ensemble.members[{i}]"
        if not isinstance(entry, dict):
            raise ModelFolderError("E505", file, field=field, value=entry, expected='{"name", "weight", "options"}')
        name = entry.get("name")
        if name not in _FACTORIES:
            raise ModelFolderError("E521", file, field=f"{field}.name", value=name, known=", ".join(known_members()))
        weight = entry.get("weight")
        if not _number(weight) or weight < 0:
            raise ModelFolderError(
                "E505", file, field=f"{field}.weight", value=weight, expected="a finite number of at least 0"
            )
        extra = sorted(set(entry) - {"name", "weight", "options"})
        if extra:
            raise ModelFolderError(
                "E522", file, field=field, option=extra[0], name="a member entry", known="name, weight, options"
            )
        options = entry.get("options", {})
        if not isinstance(options, dict):
            raise ModelFolderError("E505", file, field=f"{field}.options", value=options, expected="a JSON object")
        factory = _FACTORIES[name]
        spec = MemberSpec(folder, search, device, field)
        checked = {}
        for key, value in options.items():
            if key not in factory.options:
                known = ", ".join(sorted(factory.options)) or "none"
                raise ModelFolderError(
                    "E522", file, field=f"{field}.options", option=key, name=f"the {name!r} member", known=known
                )
            checked[key] = factory.options[key](spec, f"{field}.options.{key}", value)
        out.append(MemberEntry(name, float(weight), checked, field))
    return out


def build_member(folder: Path, entry: MemberEntry, search: RestoreConfig, device: str = "cpu") -> GapFiller:
    """The member ``entry`` describes, built by its registered factory (of the kind it declares).

    Raises:
        TypeError: the factory built a member of another kind than it was registered with.
    """
    member = _FACTORIES[entry.name].make(MemberSpec(folder, search, device, entry.field), **entry.options)
    if kind_of(member) != entry.kind:
        raise TypeError(f"member {entry.name!r} is registered as {entry.kind} but built a {kind_of(member)} member")
    return member


def write_member_weights(folder: str | Path, weights: dict[str, float]) -> None:
    """Set the weights of a folder's ensemble members (by :attr:`MemberEntry.label`: ``neural``,
    ``infini``, ``infini_backward``, ``length``, …) in its ``apollo_restore.json``, written
    atomically; every other field is kept (the tuner writes what it fitted with this).

    Raises:
        ModelFolderError: the folder's ensemble entry is broken (see :func:`member_entries`).
        ValueError: a label the folder's members do not have, or a weight that is not a finite
            number ≥ 0 (E505).
    """
    folder = Path(folder)
    meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    write_meta(folder, with_member_weights(folder, meta, weights))


def with_member_weights(folder: Path, meta: dict[str, Any], weights: dict[str, float]) -> dict[str, Any]:
    """``meta`` (the folder's ``apollo_restore.json``) with its members' weights set by label,
    every other field kept; checked as :func:`write_member_weights` says.

    Raises:
        ModelFolderError, ValueError: as :func:`write_member_weights`.
    """
    path = folder / META_FILE
    meta = copy.deepcopy(meta)
    entries = member_entries(folder, meta.get("ensemble"), RestoreConfig())
    labels = [e.label for e in entries]
    unknown = sorted(set(weights) - set(labels))
    if unknown:
        raise ValueError(f"{path} has no ensemble member {unknown[0]!r}; its members: {', '.join(labels)}")
    for label, weight in weights.items():
        if not _number(weight) or weight < 0:
            raise ModelFolderError("E505", path, field=label, value=weight, expected="a finite number of at least 0")
    for entry, raw in zip(entries, meta["ensemble"]["members"]):
        if entry.label in weights:
            raw["weight"] = float(weights[entry.label])
    return meta
