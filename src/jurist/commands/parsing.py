"""How a jurist command reads its command line (every command's class, :class:`JuristCommand`): options
that may stand alone (``--style-control``, ``--ray``), flags shown without a type, and typer's coercion of
an option built only where a value came."""

from __future__ import annotations

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


class _CoercedWhenGiven:
    """typer's coercion of one parameter, built the first time there is a value to coerce. Typer (0.29)
    builds a pydantic ``TypeAdapter`` for every parameter as it coerces its value, None included, which it
    then hands back unchanged; ``jurist run`` leaves most of its 58 options unset, and building theirs was
    ~10 ms of its start. An unset option gives what typer's own coercion gives it: None (``()`` where the
    option takes several values)."""

    def __init__(self, param: Any) -> None:
        self._param = param
        self._built: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        if self._built is None:
            from typer._coercion import build_runtime_param

            self._built = build_runtime_param(self._param.type_descriptor)
        return self._built.coerce(value, param=param, ctx=ctx)


class JuristCommand(typer.core.TyperCommand):
    """Every jurist command: a flag's help shows no type (a flag takes no value), and the options of
    :data:`BARE_VALUES` may stand alone."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, typer.core.TyperOption) and param.is_flag and param.metavar is None:
                param.metavar = ""  # what typer's help prints in the type column
            if getattr(param, "_runtime_param", False) is None and hasattr(param, "type_descriptor"):
                typing.cast("Any", param)._runtime_param = _CoercedWhenGiven(param)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.metavar is None:
            option.metavar = ""
        return option

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
