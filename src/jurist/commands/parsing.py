"""How a jurist command reads its command line (every command's class, :class:`JuristCommand`): options
that may stand alone (``--style-control``, ``--ray``), flags shown without a type, and typer's coercion of
an option done without pydantic where the value is plain (most are), built only where one is not."""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import typer
import typer.core
from typer._click.parser import _OptionParser

STYLE_BOTH = "length,markdown"
"""``--style-control`` alone: both features."""
RAY_LOCAL = "local"
"""``--ray`` alone: a new Ray instance on this machine."""


def _is_style_value(token: str) -> bool:
    """Whether the token after ``--style-control`` is its value: a feature list, or a word that is no path
    on disk (``lenght``: a misspelt feature, named as such, not read as a run directory)."""
    from jurist.families import STYLE_FEATURES

    parts = [part.strip() for part in token.split(",")]
    if all(part in (*STYLE_FEATURES, "all") for part in parts):
        return True
    return not token.startswith("-") and "/" not in token and not Path(token).exists()


BARE_VALUES: dict[str, tuple[str, Callable[[str], bool]]] = {
    "--style-control": (STYLE_BOTH, _is_style_value),
    "--ray": (RAY_LOCAL, lambda token: not token.startswith("-")),
}
"""Option -> (its value when given alone, whether the next token is its value instead)."""


class _BareValueParser(_OptionParser):
    """An option of :data:`BARE_VALUES` given alone (last, before another option, or, for
    ``--style-control``, before a run directory) takes its bare value: typer's parser has no optional
    values."""

    def _get_value_from_state(self, option_name: str, option: Any, state: Any) -> str | Sequence[str]:
        bare = BARE_VALUES.get(option_name)
        if bare is not None:
            value, takes_next = bare
            if not state.rargs or not takes_next(state.rargs[0]):
                return value
        return super()._get_value_from_state(option_name, option, state)


_SLOW = object()
"""What :func:`_plain_coercion` returns for a value it leaves to typer's own coercion."""
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _plain_coercion(descriptor: Any, value: Any, param: Any, ctx: Any) -> Any:
    """What typer's coercion gives the plain values of jurist's options, without building its pydantic
    adapter: text as given, a choice and a path as typer's own coercions make them, a count or a rate in plain
    digits within its bounds, an option's own default, a list of these. Anything else (a parser, a
    number typed otherwise or out of bounds, a list of choices, a value to refuse) is :data:`_SLOW`,
    left to typer and its own message."""
    info = descriptor.parameter_info
    if info.parser is not None or descriptor.file_annotation is not None:
        return _SLOW
    annotation = descriptor.annotation
    if descriptor.is_choice:  # typer's own choice coercion, which its adapter wraps
        if typing.get_origin(annotation) is list or not isinstance(value, str):
            return _SLOW
        try:
            from typer._param_types import coerce_cli_choice

            return coerce_cli_choice(
                value, choices=descriptor.choices, case_sensitive=info.case_sensitive, ctx=ctx
            )
        except (ImportError, ValueError):  # a typer without it: its own coercion, as before
            return _SLOW
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        if not isinstance(value, (list, tuple)):
            return _SLOW
        items = [_plain_item(item, info, entry, param, ctx) for entry in value]
        return _SLOW if any(entry is _SLOW for entry in items) else items
    return _plain_item(annotation, info, value, param, ctx)


def _plain_item(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
    if annotation is str:
        return value if isinstance(value, str) else _SLOW
    if annotation in (int, float):
        if info.clamp:
            return _SLOW
        if type(value) is not annotation:
            digits = _INTEGER if annotation is int else _DECIMAL
            if not (isinstance(value, str) and digits.fullmatch(value)):
                return _SLOW
            value = annotation(value)
        within = (info.min is None or value >= info.min) and (info.max is None or value <= info.max)
        return value if within else _SLOW
    if isinstance(annotation, type) and issubclass(annotation, Path) and isinstance(value, (str, Path)):
        try:
            from typer._param_types import coerce_cli_path
        except ImportError:  # a typer without it: its own coercion, as before
            return _SLOW

        path_type = info.path_type or annotation
        if isinstance(path_type, type) and issubclass(path_type, Path) and not isinstance(value, path_type):
            value = path_type(value)  # what typer's coerce_cli_path has pydantic make of a text (~60 ms)
        return coerce_cli_path(value, info, path_type=path_type, param=param, ctx=ctx)
    return _SLOW


class _CoercedWhenGiven:
    """typer's coercion of one parameter, built the first time there is a value it is needed for. Typer
    (0.29) builds a pydantic ``TypeAdapter`` for every parameter as it coerces its value, None included,
    which it then hands back unchanged: importing pydantic and building the adapters was ~25 ms of every
    command's start, and jurist's options are plain text, paths and numbers (:func:`_plain_coercion`).
    An unset option gives what typer's own coercion gives it: None (``()`` where it takes several)."""

    def __init__(self, param: Any) -> None:
        self._param = param
        self._built: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        if not (isinstance(value, str) and (param.multiple or param.nargs == -1)):
            plain = _plain_coercion(self._param.type_descriptor, value, param, ctx)
            if plain is not _SLOW:
                return plain
        if self._built is None:
            from typer._coercion import build_runtime_param

            self._built = build_runtime_param(self._param.type_descriptor)
        return self._built.coerce(value, param=param, ctx=ctx)


def coerce_when_given(param: Any) -> Any:
    """``param`` (a typer option or argument) coerced as :class:`_CoercedWhenGiven` says; others as they are.
    ``--help`` too: its unset value is None, not False, so typer would build its adapter."""
    if getattr(param, "_runtime_param", False) is None and hasattr(param, "type_descriptor"):
        typing.cast("Any", param)._runtime_param = _CoercedWhenGiven(param)
    return param


class JuristCommand(typer.core.TyperCommand):
    """Every jurist command: a flag's help shows no type (a flag takes no value), and the options of
    :data:`BARE_VALUES` may stand alone."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, typer.core.TyperOption) and param.is_flag and param.metavar is None:
                param.metavar = ""  # what typer's help prints in the type column
            coerce_when_given(param)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.metavar is None:
            option.metavar = ""
        return coerce_when_given(option)

    def make_parser(self, ctx: Any) -> _OptionParser:
        parser = _BareValueParser(ctx)
        for param in self.get_params(ctx):
            param.add_to_parser(parser, ctx)
        return parser


def use_jurist_command(app: typer.Typer) -> None:
    """Every command of a command group (``jurist judges``, ``jurist import`` ...) a :class:`JuristCommand`,
    unless it names a class of its own."""
    for command in app.registered_commands:
        if command.cls is None or command.cls is typer.core.TyperCommand:
            command.cls = JuristCommand
    for group in app.registered_groups:
        if group.typer_instance is not None:
            use_jurist_command(group.typer_instance)


__all__ = ["BARE_VALUES", "RAY_LOCAL", "STYLE_BOTH", "JuristCommand", "use_jurist_command"]
