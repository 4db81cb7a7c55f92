"""The schema's building blocks: strict models, bounded fields, and one way to turn a refusal into
the numbered error of the door that read the file.

    from apollo_restore.schema.base import Settings, whole, number, check, folder_error
    class Search(Settings):
        hint_slack: whole(0, 20, "letters searched beyond a hint") = 2
    search = check(Search, data, "ensemble.search")     # SchemaError naming the field, or the model
    except SchemaError as err: raise folder_error(path, err)   # E505 / E522 naming file and field

Every model is strict (no ``"5"`` for 5, no ``true`` for 1), refuses keys it does not declare,
and refuses NaN and infinities unless a field says otherwise. Every number has bounds, chosen so
that a setting within them runs on a 2-core, 24 GiB machine: a value that could exhaust memory or
time is refused when the file is read, before any work.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Annotated, Any, Self, TypeVar, Union, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from apollo_restore.errors import ModelFolderError

M = TypeVar("M", bound=BaseModel)
#: Characters of a refused value shown in a message.
SHOWN_CHARS = 80


class Settings(BaseModel):
    """A declared settings object: strict types, no undeclared key, finite numbers, immutable."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (field → value), checked as a new one is (``dataclasses.replace``
        of a settings object)."""
        return type(self)(**{**{name: getattr(self, name) for name in type(self).model_fields}, **changes})


class Record(BaseModel):
    """A declared record (what made a file: measurements, provenance): its declared fields are
    checked, other keys are kept as written (read by people and reports, never by scoring)."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True, allow_inf_nan=False)


def whole(least: int, most: int, what: str = "") -> Any:
    """An ``int`` field from ``least`` to ``most`` (inclusive); ``what`` it counts, for the reference."""
    return Annotated[int, Field(ge=least, le=most, description=_said(f"a whole number from {least} to {most}", what))]


def number(least: float, most: float, what: str = "", above: bool = False) -> Any:
    """A finite ``float`` field in ``[least, most]`` (``(least, most]`` with ``above``); JSON
    integers are read as numbers too."""
    bounds = {"gt" if above else "ge": least, "le": most}
    shown = f"a number in {'(' if above else '['}{_num(least)}, {_num(most)}]"
    return Annotated[float, Field(**bounds, description=_said(shown, what))]


def text(most: int, what: str = "", pattern: str | None = None) -> Any:
    """A ``str`` field of 1 to ``most`` characters (matching ``pattern`` when given)."""
    shown = f"text of 1 to {most} characters" + (f" matching {pattern}" if pattern else "")
    return Annotated[str, Field(min_length=1, max_length=most, pattern=pattern, description=_said(shown, what))]


def _num(x: float) -> str:
    return f"{x:g}"


def _said(expected: str, what: str) -> str:
    return f"{expected} ({what})" if what else expected


@dataclass(frozen=True)
class Problem:
    """The first thing wrong with a value, as a message names it.

    Attributes:
        field: dotted place in the file (``ensemble.members[2].weight``).
        value: what the file holds there (``"missing"`` for a required key that is absent).
        expected: what it must be, in words.
        unknown: the key a settings object does not take (``None`` when it is not that).
        known: the keys it takes, comma-separated (with ``unknown``).
    """

    field: str
    value: Any
    expected: str
    unknown: str | None = None
    known: str = ""


class SchemaError(ValueError):
    """A value the schema refuses; :attr:`problem` says where and why (see the door's error
    functions, e.g. :func:`folder_error`, for the numbered message)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"{problem.field} = {problem.value!r}; it must be {problem.expected}")
        self.problem = problem


class _Shown:
    """A long value, shown cut (its ``repr`` at most :data:`SHOWN_CHARS` characters)."""

    def __init__(self, value: Any) -> None:
        self.text = repr(value)

    def __repr__(self) -> str:
        return self.text if len(self.text) <= SHOWN_CHARS else self.text[: SHOWN_CHARS - 1] + "…"


def check(model: type[M], data: Any, prefix: str = "") -> M:
    """``data`` (parsed JSON) as ``model``, or a :class:`SchemaError` naming the first refused field
    (under ``prefix``, the object's place in its file).

    Raises:
        SchemaError: a key ``model`` does not declare, a missing required key, a value of another
            type or outside its bounds.
    """
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise SchemaError(problem_of(err, model, prefix)) from None
    except RecursionError:  # a value nested deeper than validation follows
        raise SchemaError(Problem(prefix or "the file", _Shown(data), "a settings object of a few levels")) from None


def problem_of(err: ValidationError, model: type[BaseModel], prefix: str = "") -> Problem:
    """The :class:`Problem` of a pydantic refusal's first error."""
    first = err.errors(include_url=False)[0]
    loc = _fields_only(model, tuple(first["loc"]))
    field = _dotted(prefix, loc)
    if first["type"] == "extra_forbidden":
        owner = _model_at(model, loc[:-1])
        known = ", ".join(owner.model_fields) if owner is not None else ""
        parent = _dotted(prefix, loc[:-1]) or "the file"
        return Problem(parent, _Shown(first.get("input")), "a declared key", str(loc[-1]), known or "none")
    ctx = first.get("ctx") or {}
    if "field" in ctx:  # a check across fields names the field it refuses (``num_attention_heads``)
        return Problem(_dotted(prefix, (*loc, ctx["field"])), _Shown(ctx.get("value")), first["msg"])
    expected = _description(model, loc) or first["msg"].removeprefix("Value error, ").removeprefix("Input should be ")
    value = "missing" if first["type"] == "missing" else _Shown(first.get("input"))
    return Problem(field, value, expected)


def _fields_only(model: type[BaseModel], loc: tuple) -> tuple:
    """``loc`` without the branch names pydantic adds inside a union (``constrained-float``,
    ``list[float]``): the keys and indices as the file has them."""
    out: list = []
    current: Any = model
    for part in loc:
        annotation = _unannotated(current)
        if _is_union(annotation):
            branches = [a for a in annotation.__args__ if a is not type(None)]
            annotation = _unannotated(branches[0])
            if len(branches) > 1 and isinstance(part, str):
                current = branches[0]
                continue  # a branch of the union (``constrained-float``): not a key of the file
        out.append(part)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            info = annotation.model_fields.get(part) if isinstance(part, str) else None
            current = info.annotation if info is not None else None
        else:
            args = getattr(annotation, "__args__", ())
            current = args[-1] if args else None  # list[X] → X, dict[str, X] → X
    return tuple(out)


def _unannotated(annotation: Any) -> Any:
    while hasattr(annotation, "__metadata__"):
        annotation = annotation.__origin__
    return annotation


def _is_union(annotation: Any) -> bool:
    return type(annotation) is types.UnionType or get_origin(annotation) is Union


def _dotted(prefix: str, loc: tuple) -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _model_at(model: Any, loc: tuple) -> type[BaseModel] | None:
    """The settings model at ``loc`` under ``model`` (``None`` where none is declared)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            current = _inner(current)
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return None
        current = _inner(current.model_fields[part].annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _inner(annotation: Any) -> Any:
    """The model inside ``list[X]``, ``dict[str, X]``, ``X | None``: the first argument that is a model."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner(arg)
        if found is not None:
            return found
    return None


def _description(model: type[BaseModel], loc: tuple) -> str | None:
    """The declared description of the field at ``loc`` (what it must be), if any."""
    owner = _model_at(model, tuple(p for p in loc[:-1]))
    last = loc[-1] if loc else None
    if owner is None or not isinstance(last, str) or last not in owner.model_fields:
        return None
    info = owner.model_fields[last]
    return info.description or _described(info.annotation)


def _described(annotation: Any) -> str | None:
    """The description inside an ``Annotated[..., Field(description=...)] | None`` (``or null`` added)."""
    for arg in getattr(annotation, "__args__", ()):
        for meta in getattr(arg, "__metadata__", ()):
            if getattr(meta, "description", None):
                return meta.description + (" or null" if type(None) in annotation.__args__ else "")
    return None


def folder_error(path: object, err: SchemaError) -> ModelFolderError:
    """The numbered error of a model folder's file ``path``: ``E522`` for a key that is not
    declared, ``E505`` for any other refusal."""
    p = err.problem
    if p.unknown is not None:
        return ModelFolderError("E522", path, field=p.field, option=p.unknown, name=f"{p.field}", known=p.known)
    return ModelFolderError("E505", path, field=p.field, value=p.value, expected=p.expected)
