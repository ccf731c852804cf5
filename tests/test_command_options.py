"""The shared option groups (jurist.commands.options): a group's flags spread into a command and gathered
back, options that may stand alone read in the parser, and flags shown without a type."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from jurist.commands.options import STYLE_BOTH, JuristCommand, RequestFlags, StyleControl, grouped


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
