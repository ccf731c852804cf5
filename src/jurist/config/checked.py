"""Checked settings records: a models file's entry (:class:`~jurist.config.specs.ModelSpec`, its endpoints,
its ``serve:`` block, its price) as a dataclass whose fields are converted and checked from their
annotations, whether it is built from a mapping (:meth:`Checked.model_validate`) or by keyword.

Pydantic did this before. Importing it and building the four schemas was about 80 ms of every run's
start (issue 41: a third of what jurist adds to an interpreter and aiohttp), while these records use a
small part of it: scalars read leniently from YAML or ``-M`` text (``"8"`` for an integer), bounds,
literals, nested records, unknown fields refused or kept, and the calls the code makes on them, under
pydantic's names (``model_validate``, ``model_copy``, ``model_dump``, ``model_fields_set``,
``model_extra``), so they read as they did. Nothing else in jurist should grow on this: it is the
models file's checker, not a general one.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda decorated: decorated


R = TypeVar("R", bound="Checked")
C = TypeVar("C", bound=type)


class FieldError(ValueError):
    """The first problem a record found: where (``loc``, e.g. ``("serve", "gpus", 0)``) and what."""

    def __init__(self, loc: tuple[str | int, ...], msg: str) -> None:
        super().__init__(f"{'.'.join(str(part) for part in loc) or '(model)'}: {msg}")
        self.loc, self.msg = loc, msg

    def under(self, *outer: str | int) -> FieldError:
        return FieldError((*outer, *self.loc), self.msg)

    @property
    def where(self) -> str:
        """The field's dotted path, empty for a check of the whole record."""
        return ".".join(str(part) for part in self.loc)


@dataclasses.dataclass(frozen=True)
class Bounds:
    """Limits of a number (or a text's length), given as ``Annotated[int, Bounds(ge=1)]``."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    min_length: int | None = None

    def check(self, value: Any) -> str | None:
        if self.min_length is not None:
            return f"at least {self.min_length} character(s)" if len(value) < self.min_length else None
        if self.ge is not None and not value >= self.ge:
            return f"must be >= {self.ge:g}"
        if self.gt is not None and not value > self.gt:
            return f"must be > {self.gt:g}"
        if self.le is not None and not value <= self.le:
            return f"must be <= {self.le:g}"
        return None


_TRUE = frozenset({"true", "yes", "on", "1", "t", "y"})
_FALSE = frozenset({"false", "no", "off", "0", "f", "n"})


def _scalar(value: Any, kind: type) -> Any:
    """``value`` as ``kind`` (str, bool, int, float), read leniently as a YAML file or ``-M`` text gives
    it; raises ValueError naming what was expected."""
    if kind is str:
        if isinstance(value, str):
            return value
        raise ValueError("expected text")
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise ValueError("expected true or false")
    if kind not in (int, float):
        raise TypeError(f"a settings record has no reading of {kind!r} fields")
    if isinstance(value, bool):  # True is an int to Python, never a count or a rate in a settings file
        raise ValueError(f"expected {'an integer' if kind is int else 'a number'}, not {value}")
    if isinstance(value, int) or (isinstance(value, float) and (kind is float or value.is_integer())):
        return kind(value)
    if isinstance(value, str):
        try:
            return kind(value.strip())
        except ValueError:
            pass
    raise ValueError("expected an integer" if kind is int else "expected a number")


def _union(value: Any, options: tuple[Any, ...], loc: tuple[str | int, ...]) -> Any:
    """The first option ``value`` already is, else the first it converts to (``gpus: 2`` is a count,
    ``gpus: [0, 1]`` a list of ids, ``gpus: "2"`` a count)."""
    if value is None and type(None) in options:
        return None
    options = tuple(option for option in options if option is not type(None))
    for option in options:
        plain = typing.get_origin(option) or option
        if isinstance(plain, type) and isinstance(value, plain) and not isinstance(value, bool):
            return convert(value, option, loc)
    first: FieldError | None = None
    for option in options:
        try:
            return convert(value, option, loc)
        except FieldError as exc:
            first = first or exc
    raise first or FieldError(loc, "expected a value")


def convert(value: Any, annotation: Any, loc: tuple[str | int, ...]) -> Any:
    """``value`` checked and converted to ``annotation`` (the few shapes the settings records use)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *marks = typing.get_args(annotation)
        value = convert(value, base, loc)
        for mark in marks:
            problem = mark.check(value) if isinstance(mark, Bounds) and value is not None else None
            if problem:
                raise FieldError(loc, problem)
        return value
    if annotation is Any:
        return value
    if origin is typing.Union or origin is types.UnionType:
        return _union(value, typing.get_args(annotation), loc)
    if origin is Literal:
        allowed = typing.get_args(annotation)
        if value in allowed and isinstance(value, str):
            return value
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        raise FieldError(loc, f"expected one of {', '.join(repr(a) for a in allowed)}, not {shown}")
    if origin is list:
        if not isinstance(value, (list, tuple)):
            raise FieldError(loc, "expected a list")
        (item,) = typing.get_args(annotation)
        return [convert(entry, item, (*loc, i)) for i, entry in enumerate(value)]
    if isinstance(annotation, type) and issubclass(annotation, Checked):
        if isinstance(value, annotation):
            return value
        if not isinstance(value, Mapping):
            raise FieldError(loc, "expected a mapping of settings")
        try:
            return annotation.model_validate(value)
        except FieldError as exc:
            raise exc.under(*loc) from None
    if value is None:
        raise FieldError(loc, "expected a value, not null")
    try:
        return _scalar(value, annotation)
    except ValueError as exc:
        raise FieldError(loc, str(exc)) from None


class Checked:
    """A checked settings record; subclasses are made by :func:`checked`. ``EXTRA``: what an unknown key
    of :meth:`model_validate` does ("forbid": refused; "allow": kept, :attr:`model_extra`); ``ALIASES``:
    other names a field is read by; ``DUMP_EXCLUDED``: fields no dump ever holds (a key)."""

    EXTRA: ClassVar[str] = "forbid"
    ALIASES: ClassVar[Mapping[str, str]] = {}
    DUMP_EXCLUDED: ClassVar[frozenset[str]] = frozenset()
    _hints: ClassVar[dict[str, Any] | None] = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        self = super().__new__(cls)
        given = frozenset(cls.ALIASES.get(key, key) for key in kwargs)
        object.__setattr__(self, "_fields_set", given)  # what the caller gave: see exclude_unset
        object.__setattr__(self, "_extra", {})
        object.__setattr__(self, "_built", False)
        return self

    def __post_init__(self) -> None:
        hints = type(self)._field_hints()
        for name in field_names(type(self)):
            object.__setattr__(self, name, convert(getattr(self, name), hints[name], (name,)))
        object.__setattr__(self, "_built", True)
        self.check()

    def __setattr__(self, name: str, value: Any) -> None:
        """A field assigned once the record is built counts as given (as pydantic counts it)."""
        object.__setattr__(self, name, value)
        if self.__dict__.get("_built") and name in field_names(type(self)):
            object.__setattr__(self, "_fields_set", self.model_fields_set | {name})

    def check(self) -> None:
        """A subclass's checks of the whole record, after its fields are converted (raise ValueError)."""

    @classmethod
    def _field_hints(cls) -> dict[str, Any]:
        if cls.__dict__.get("_hints") is None:
            cls._hints = typing.get_type_hints(cls, include_extras=True)
        return typing.cast("dict[str, Any]", cls._hints)

    @classmethod
    def model_validate(cls: type[R], data: Mapping[str, Any]) -> R:
        """A record from a mapping, every field checked: raises :class:`FieldError` at the first problem."""
        if not isinstance(data, Mapping):
            raise FieldError((), "expected a mapping of settings")
        names = field_names(cls)
        given = {str(key): value for key, value in cls.prepare(dict(data)).items()}
        named = {cls.ALIASES.get(key, key) for key in given}
        for key in given:
            if cls.ALIASES.get(key, key) not in names and cls.EXTRA != "allow":
                raise FieldError((key,), "not a field of this record (unknown)")
        for name in names:
            if name not in named and _required(cls, name):
                raise FieldError((name,), "missing (required)")
        try:
            return cls(**given)  # the constructor (:func:`checked`) reads aliases and keeps extra keys
        except FieldError:
            raise
        except ValueError as exc:
            raise FieldError((), str(exc)) from None

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        """A subclass's rewriting of the mapping before it is read (a shorthand spelt out)."""
        return data

    @property
    def model_fields_set(self) -> frozenset[str]:
        """The fields the record was given (by keyword, or by :meth:`model_copy`'s update)."""
        return typing.cast("frozenset[str]", self.__dict__["_fields_set"])

    @property
    def model_extra(self) -> dict[str, Any]:
        """The keys kept that are no field (``EXTRA = "allow"``)."""
        return typing.cast("dict[str, Any]", self.__dict__["_extra"])

    def model_copy(self: R, update: Mapping[str, Any] | None = None) -> R:
        """A shallow copy with ``update`` applied as given (not checked again, as pydantic's is not)."""
        clone = copy.copy(self)
        object.__setattr__(clone, "_extra", dict(self.model_extra))
        names = field_names(type(self))
        for key, value in (update or {}).items():
            if key in names:
                object.__setattr__(clone, key, value)
            else:
                clone.model_extra[key] = value
        object.__setattr__(clone, "_fields_set", self.model_fields_set | set(update or {}))
        return clone

    def model_dump(
        self,
        *,
        mode: str = "python",
        by_alias: bool = False,
        exclude: set[str] | frozenset[str] | None = None,
        exclude_unset: bool = False,
        exclude_none: bool = False,
    ) -> dict[str, Any]:
        """The record as plain data: nested records as mappings, its extra keys after its fields."""
        aliases = {field: alias for alias, field in self.ALIASES.items()} if by_alias else {}
        skip = self.DUMP_EXCLUDED | (exclude or frozenset())
        data: dict[str, Any] = {}
        for name in field_names(type(self)):
            if name in skip or (exclude_unset and name not in self.model_fields_set):
                continue
            value = _plain(getattr(self, name), mode, exclude_none)
            if value is None and exclude_none:
                continue
            data[aliases.get(name, name)] = value
        for key, value in self.model_extra.items():
            if key not in skip and not (value is None and exclude_none):
                data[key] = _plain(value, mode, exclude_none)
        return data


def _plain(value: Any, mode: str, exclude_none: bool) -> Any:
    if isinstance(value, Checked):
        return value.model_dump(mode=mode, exclude_none=exclude_none)
    if isinstance(value, (list, tuple)):
        items = [_plain(item, mode, exclude_none) for item in value]
        return items if mode == "json" or isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {key: _plain(item, mode, exclude_none) for key, item in value.items()}
    if mode == "json" and isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass_transform(kw_only_default=True, field_specifiers=(dataclasses.field,))
def checked(*, frozen: bool = False) -> Callable[[C], C]:
    """A :class:`Checked` subclass made a keyword-only dataclass whose constructor also takes the other
    names of its fields (``ALIASES``) and, with ``EXTRA = "allow"``, keys it does not name, as
    :meth:`Checked.model_validate` does (``ModelSpec(model="m", top_p=0.9)``)."""

    def make(cls: C) -> C:
        made: Any = dataclasses.dataclass(kw_only=True, frozen=frozen)(cls)
        names = set(field_names(made))
        init = made.__init__

        @functools.wraps(init)
        def __init__(self: Any, **given: Any) -> None:
            named = {made.ALIASES.get(key, key): value for key, value in given.items()}
            unknown = [key for key in named if key not in names]
            extra = {key: named.pop(key) for key in unknown} if made.EXTRA == "allow" else {}
            init(self, **named)  # an unknown name left in (EXTRA "forbid") is refused as a TypeError
            self.model_extra.update(extra)

        made.__init__ = __init__
        return typing.cast("C", made)

    return make


def field_names(cls: type[Checked]) -> tuple[str, ...]:
    """The record's fields, in their order."""
    return tuple(f.name for f in dataclasses.fields(typing.cast("Any", cls)))


def _required(cls: type[Checked], name: str) -> bool:
    spec = next(f for f in dataclasses.fields(typing.cast("Any", cls)) if f.name == name)
    return spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING
