"""The shared option groups (jurist.commands.options): a group's flags spread into a command and gathered
back, options that may stand alone read in the parser, and flags shown without a type."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from jurist.commands.options import RequestFlags, StyleControl, grouped
from jurist.commands.parsing import STYLE_BOTH, JuristCommand


@dataclasses.dataclass(frozen=True)
class _Pair:
    left: Annotated[int, typer.Option(help="the left one")] = 1
    right: Annotated[str | None, typer.Option(help="the right one")] = None


def _app(seen: dict[str, Any]) -> typer.Typer:
    app = typer.Typer()

    @app.command(cls=JuristCommand)
    @grouped
    def command(
        *, pair: _Pair, requests: RequestFlags, style_control: StyleControl = None, last: int = 0
    ) -> None:
        seen.update(pair=pair, requests=requests, style_control=style_control, last=last)

    @app.command("other")
    def other() -> None:  # a second command keeps typer from folding the app into one command
        pass

    return app


def test_a_group_is_spread_into_options_and_handed_back_whole() -> None:
    seen: dict[str, Any] = {}
    result = CliRunner().invoke(
        _app(seen), ["command", "--left", "3", "--right", "r", "--max-attempts", "2", "--no-cache"]
    )
    assert result.exit_code == 0, result.output
    assert seen["pair"] == _Pair(3, "r") and seen["last"] == 0
    assert seen["requests"].max_attempts == 2 and seen["requests"].no_cache is True
    assert seen["requests"].retry().max_attempts == 2 and seen["requests"].retry().base_delay == 1.0


def test_style_control_alone_means_both_features_and_a_value_is_its_own() -> None:
    for args, expected in (
        (["--style-control"], STYLE_BOTH),
        (["--style-control", "--last", "4"], STYLE_BOTH),
        (["--style-control", "length"], "length"),
        (["--style-control", "lenght"], "lenght"),  # a misspelt feature, for the check to name
        ([], None),
    ):
        seen: dict[str, Any] = {}
        assert CliRunner().invoke(_app(seen), ["command", *args]).exit_code == 0
        assert seen["style_control"] == expected


def test_flags_show_no_type_in_help() -> None:
    result = CliRunner().invoke(_app({}), ["command", "--help"])
    assert result.exit_code == 0 and "--no-cache" in result.output and "<bool>" not in result.output


@dataclasses.dataclass(frozen=True)
class _Again:
    left: int = 0


def test_two_groups_declaring_one_name_are_refused() -> None:
    def command(*, pair: _Pair, again: _Again) -> None:
        pass

    with pytest.raises(TypeError, match="repeat a name"):
        grouped(command)


def _typed_app(cls: type[Any], seen: dict[str, Any]) -> typer.Typer:
    app = typer.Typer()

    @app.command(cls=cls)
    def command(
        *,
        count: Annotated[int | None, typer.Option()] = None,
        path: Annotated[Path | None, typer.Option()] = None,
        tags: Annotated[list[str] | None, typer.Option("--tag")] = None,
        level: Annotated[float, typer.Option(min=0.5, max=0.9)] = 0.75,
    ) -> None:
        seen.clear()
        seen.update(count=count, path=path, tags=tags, level=level)

    @app.command("other")
    def other() -> None:
        pass

    return app


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--count", "7", "--path", "x/y", "--tag", "a", "--tag", "b"],
        ["--count", "seven"],
        ["--level", "0.95"],
        ["--level", "0.6", "--tag", "only"],
    ],
)
def test_a_jurist_command_coerces_options_as_typer_does(args: list[str]) -> None:
    """A jurist command builds typer's coercion of an option only where a value came (typer builds a
    pydantic adapter for every option, unset ones too); what the command receives, and what it refuses,
    is what typer's own command gives."""
    runner = CliRunner()
    ours: dict[str, Any] = {}
    theirs: dict[str, Any] = {}
    mine = runner.invoke(_typed_app(JuristCommand, ours), ["command", *args])
    plain = runner.invoke(_typed_app(typer.core.TyperCommand, theirs), ["command", *args])
    assert (mine.exit_code, ours) == (plain.exit_code, theirs)
    assert mine.output == plain.output
    assert mine.exit_code == (2 if "seven" in args or "0.95" in args else 0)


def test_only_an_option_with_more_than_a_plain_value_builds_typers_coercion() -> None:
    """An unset option builds nothing; a plain value (a count in digits, a path, text, a default within its
    bounds) is coerced without typer's pydantic adapter; only a value to refuse builds it."""
    seen: dict[str, Any] = {}
    group = typer.main.get_command(_typed_app(JuristCommand, seen))
    command = group.commands["command"]  # type: ignore[attr-defined]
    group.main(["command", "--count", "3", "--path", "p", "--tag", "a"], standalone_mode=False)
    built = {param.name: param._runtime_param._built is not None for param in command.params}
    assert seen == {"count": 3, "path": Path("p"), "tags": ["a"], "level": 0.75}
    assert built == {"count": False, "path": False, "tags": False, "level": False}
    with pytest.raises(typer._click.exceptions.BadParameter):
        group.main(["command", "--level", "0.95"], standalone_mode=False)
    assert command.params[3]._runtime_param._built is not None
    with pytest.raises(typer._click.exceptions.BadParameter):
        group.main(["command", "--count", "3.5"], standalone_mode=False)
    assert command.params[0]._runtime_param._built is not None


_VALUES = ["7", "-2", "+3", "007", "0", "1", "1.5", ".5", "5.", "0.95", "1e3", "-1.5e-2", "inf", "nan",
           "1_000", " 4", "seven", "", "x/y", "~/runs", "a,b", "table", "JSON"]  # fmt: skip


def _jurist_params() -> tuple[Any, list[Any]]:
    from jurist.cli import app

    group = typer.main.get_command(app)
    group.load_all()  # type: ignore[attr-defined]
    params: list[Any] = []

    def walk(command: Any) -> None:
        params.extend(p for p in command.params if hasattr(p, "type_descriptor"))
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    for name in group.list_commands(typer.Context(group)):  # type: ignore[attr-defined]
        walk(group.get_command(typer.Context(group), name))  # type: ignore[attr-defined]
    return typer.Context(group), params


def test_every_jurist_option_coerces_plain_values_as_typers_adapter_does() -> None:
    """Across every option of every jurist command and values a user may type (digits, decimals, signs,
    paths, words): where the plain coercion answers, it answers what typer's pydantic coercion does,
    value and type; where that refuses, the plain coercion leaves it to typer."""
    from typer._click.exceptions import BadParameter
    from typer._coercion import build_runtime_param

    from jurist.commands.parsing import _SLOW, _plain_coercion

    answered = 0
    ctx, params = _jurist_params()
    for param in params:
        multi = param.multiple or param.nargs == -1
        values: list[Any] = [[v] for v in _VALUES] + [_VALUES[:3]] if multi else [*_VALUES]
        values += [param.default] if param.default is not None and not callable(param.default) else []
        runtime = build_runtime_param(param.type_descriptor)
        for value in values:
            plain = _plain_coercion(param.type_descriptor, value, param, ctx)
            if plain is _SLOW:
                continue
            answered += 1
            try:
                theirs = runtime.coerce(value, param=param, ctx=ctx)
            except BadParameter as exc:  # pragma: no cover - a failure says which
                message = f"{param.name}={value!r}: typer refuses ({exc}), plain gave {plain!r}"
                raise AssertionError(message) from exc
            assert (plain, type(plain)) == (theirs, type(theirs)), (param.name, value)
    assert answered > 500  # the plain path is what most options take
