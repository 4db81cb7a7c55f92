"""Ensemble members registered by name, as a model folder lists them (a registry like spaCy's factories).

A folder's ``apollo_restore.json`` holds::

    "ensemble": {"members": [{"name": "neural", "weight": 1.0},
                             {"name": "infini", "weight": 1.0, "options": {"direction": "forward"}},
                             {"name": "length", "weight": 8.0}],
                 "search": {"hint_slack": 5, "beam_width": 40},
                 "chosen_by": "docs/notes/… (a pointer)"}

Each name is a factory registered here with :func:`register_member`, with the class it builds.
The class declares the member once, in class attributes: its ``kind``
(:data:`~apollo_restore.restoration.restorer.MemberKind`), whether it ``batches`` (searches several
gaps together), its ``options`` (the declared model, in :mod:`apollo_restore.schema.folder`, of what
a folder's entry may set: an unknown option, or a value of the wrong type, is a numbered error
naming the file and the field) and ``in_words`` (what it is, for people: the model's label). The
registry reads them from the class (a class that lacks one is refused when it registers), the
:class:`~apollo_restore.restoration.members.ensemble.Ensemble` reads ``kind`` and ``batches`` from
the member built, and a member built with others than its class's is refused (:func:`build_member`).

    from apollo_restore.restoration.members.registry import build_member, member_entries
    from apollo_restore.restoration.members.registry import register_member, write_member_weights

    @register_member("length", LengthPrior)
    def _length(spec: MemberSpec) -> Restorer: ...
"""

from __future__ import annotations

import copy
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apollo_restore.data.orthography import default_forms
from apollo_restore.errors import Errors, ModelFolderError
from apollo_restore.inputs import check_regular
from apollo_restore.model.folder import META_FILE, check_meta, read_meta, write_meta
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.members.document_copy import DocumentCopy
from apollo_restore.restoration.members.document_words import DocumentWords, Vocabulary
from apollo_restore.restoration.members.ensemble import LengthPrior
from apollo_restore.restoration.members.infini import InfiniMember, load_infini
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.members.ngram import NgramRestorer, load_ngram
from apollo_restore.restoration.restorer import Restorer, member_kind
from apollo_restore.schema.base import SchemaError, Settings, check, folder_error
from apollo_restore.schema.folder import BACKWARD, EnsembleEntry, MemberEntry


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


@dataclass(frozen=True)
class Factory:
    """A registered member: its name, the class it builds (which declares its ``kind``,
    ``batches``, ``options`` and ``in_words``), and the function that builds it."""

    name: str
    member: type
    make: Callable[..., Restorer]

    @property
    def options(self) -> type[Settings]:
        """The declared model of the options a folder's entry of it may set."""
        return self.member.options


_FACTORIES: dict[str, Factory] = {}


def register_member(name: str, member: type) -> Callable[[Callable[..., Restorer]], Callable[..., Restorer]]:
    """Register ``make(spec, **options) → member`` under ``name``: it builds members of class
    ``member``, whose class attributes declare what the member is (known before anything loads).

    Raises:
        TypeError: ``member`` declares no :data:`~apollo_restore.restoration.restorer.MemberKind`,
            no ``batches`` bool, no ``options`` model or no ``in_words`` text.
        ValueError: ``name`` is registered already.
    """
    member_kind(member)
    declared = {
        "batches": isinstance(getattr(member, "batches", None), bool),
        "options": isinstance(getattr(member, "options", None), type) and issubclass(member.options, Settings),
        "in_words": isinstance(getattr(member, "in_words", None), str),
    }
    for attribute, ok in declared.items():
        if not ok:
            raise TypeError(
                f"ensemble member {name!r}: {member.__name__} declares no class attribute {attribute} "
                f"(batches: True or False; options: a schema Settings model; in_words: text)"
            )

    def register(make: Callable[..., Restorer]) -> Callable[..., Restorer]:
        if name in _FACTORIES:
            raise ValueError(f"an ensemble member named {name!r} is registered already")
        _FACTORIES[name] = Factory(name, member, make)
        return make

    return register


def member_class(name: str) -> type:
    """The class of the member registered as ``name`` (its ``kind``, ``batches``, ``options``,
    ``in_words``).

    Raises:
        KeyError: no member of that name.
    """
    return _FACTORIES[name].member


def member_options() -> dict[str, type[Settings]]:
    """Each registered member's options model, by name, in the order they were registered (for
    the schema's reference)."""
    return {name: factory.options for name, factory in _FACTORIES.items()}


def member_words(label: str) -> str | None:
    """What the member a label names is, in words (``infini_backward``: the ``infini`` member's),
    or ``None`` for a label of no registered member."""
    factory = _FACTORIES.get(label.removesuffix(BACKWARD))
    return factory.member.in_words if factory is not None else None


def known_members() -> list[str]:
    """The registered member names, sorted."""
    return sorted(_FACTORIES)


def _member_file(spec: MemberSpec, name: str) -> Path:
    """A member's file in the model folder (its name checked by the schema: a plain file name).

    Raises:
        FileNotFoundError: no such file there (E501).
        FileError: ``E220`` something there that is not a regular file (a folder, a FIFO, a
            dangling link: :func:`~apollo_restore.inputs.check_regular`).
    """
    path = spec.folder / name
    if not os.path.lexists(path):
        raise FileNotFoundError(Errors.E501.format(folder=spec.folder, member=spec.field, path=path))
    check_regular(path)
    return path


# -- the members --------------------------------------------------------------------------------


@register_member("neural", NeuralMember)
def _neural(spec: MemberSpec) -> Restorer:
    return NeuralMember.load(spec.folder, config=spec.search, device=spec.device)


@register_member("infini", InfiniMember)
def _infini(spec: MemberSpec, direction: str = "forward", **options: Any) -> Restorer:
    return load_infini(direction, search=spec.search, **options)


@register_member("ngram", NgramRestorer)
def _ngram(spec: MemberSpec, file: str) -> Restorer:
    path = _member_file(spec, file)
    try:
        return load_ngram(path, search=spec.search)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:  # np.load of another file
        field, expected = f"{spec.field}.options.file", "an n-gram file written by apollo-restore ngram"
        raise ModelFolderError("E519", path, field=field, expected=expected, reason=str(err)[:120]) from None


@register_member("length", LengthPrior)
def _length(spec: MemberSpec) -> Restorer:
    return LengthPrior()


@register_member("copy", DocumentCopy)
def _copy(spec: MemberSpec) -> Restorer:
    return DocumentCopy(search=spec.search)


@register_member("words", DocumentWords)
def _words(spec: MemberSpec, vocabulary: bool = False) -> Restorer:
    return DocumentWords(vocabulary=Vocabulary(default_forms().keys) if vocabulary else None, search=spec.search)


# -- reading a folder's entry -------------------------------------------------------------------


def member_entries(folder: Path, ensemble: Any, search: RestoreConfig, device: str = "cpu") -> list[MemberEntry]:
    """The checked member entries of a folder's ``ensemble`` entry, in order (nothing is loaded):
    the entry against :class:`~apollo_restore.schema.folder.EnsembleEntry`, each member's options
    against its class's declared model (the entries hold the options the file sets, checked, and
    their place in the file).

    Raises:
        ModelFolderError: ``E520`` an entry of the old format (``"weights"``, no ``"members"``);
            ``E505`` a value the schema refuses (a weight that is not a finite number in its
            bounds, an option of the wrong type or out of bounds); ``E521`` an unknown member
            name; ``E522`` a key the entry, a member or its options do not take.
        FileNotFoundError: a file a member names is missing (E501).
        FileError: ``E220`` a file a member names is not a regular file.
    """
    file = folder / META_FILE
    declared = ensemble_entry(file, ensemble)
    out = []
    for i, entry in enumerate(declared.members):
        field = f"ensemble.members[{i}]"
        if entry.name not in _FACTORIES:
            known = ", ".join(known_members())
            raise ModelFolderError("E521", file, field=f"{field}.name", value=entry.name, known=known)
        factory = _FACTORIES[entry.name]
        try:
            options = check(factory.options, entry.options, f"{field}.options")
        except SchemaError as err:
            raise folder_error(file, err) from None
        checked = options.model_dump(exclude_unset=True)
        if "file" in checked:  # a member's file: there before anything loads
            _member_file(MemberSpec(folder, search, device, field), checked["file"])
        out.append(entry.replace(options=checked).at(field))
    return out


def ensemble_entry(file: Path, ensemble: Any) -> EnsembleEntry:
    """A folder's ``ensemble`` entry as declared (:class:`~apollo_restore.schema.folder.EnsembleEntry`).

    Raises:
        ModelFolderError: ``E520`` an entry of the old format; ``E505``/``E522`` what the schema refuses.
    """
    if not isinstance(ensemble, dict):
        raise ModelFolderError("E520", file)
    return check_meta(file, {"ensemble": ensemble}).ensemble


def build_member(folder: Path, entry: MemberEntry, search: RestoreConfig, device: str = "cpu") -> Restorer:
    """The member ``entry`` describes, built by its registered factory (of the kind its class declares).

    Raises:
        TypeError: the member built declares no kind or ``batches``, or others than the class
            registered for it.
    """
    factory = _FACTORIES[entry.name]
    member = factory.make(MemberSpec(folder, search, device, entry.field), **entry.options)
    declared = factory.member
    kind, batches = member_kind(member), getattr(member, "batches", None)
    if kind != declared.kind:
        raise TypeError(f"member {entry.name!r} is a {declared.__name__} ({declared.kind}) but built a {kind} member")
    if batches is not declared.batches:
        raise TypeError(
            f"member {entry.name!r} is a {declared.__name__} (batches={declared.batches}) but built a member "
            f"declaring batches={batches!r} (declare a class attribute batches)"
        )
    return member


def write_member_weights(folder: str | Path, weights: dict[str, float]) -> None:
    """Set the weights of a folder's ensemble members (by
    :attr:`~apollo_restore.schema.folder.MemberEntry.label`: ``neural``, ``infini``,
    ``infini_backward``, ``length``, …) in its ``apollo_restore.json``, written
    atomically; every other field is kept (the tuner writes what it fitted with this).

    Raises:
        ModelFolderError: the folder's ensemble entry is broken (see :func:`member_entries`).
        ValueError: a label the folder's members do not have, or a weight that is not a finite
            number ≥ 0 (E505).
    """
    folder = Path(folder)
    meta = read_meta(folder)
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
    for entry, raw in zip(entries, meta["ensemble"]["members"]):
        if entry.label in weights:
            raw["weight"] = weights[entry.label]
    ensemble_entry(path, meta["ensemble"])  # the weights written are what the schema reads back
    return meta
