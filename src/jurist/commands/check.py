"""``jurist check``: probe every endpoint of a models file and list every problem in one go."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any

import typer

from jurist.commands.parsing import JuristCommand
from jurist.errors import InputError, JuristError

_ENV_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$|^\$([A-Za-z_][A-Za-z0-9_]*)$")


def _unset_key_refs(path: Path, env: dict[str, str]) -> dict[tuple[str, int], str]:
    """(alias, endpoint index) -> variable name, for ``${VAR}`` keys whose variable is unset.

    ``load_models_file`` stops at the first such key, which is right for a run but not for a check whose
    job is to report all problems at once.
    """
    import yaml

    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}  # load_models_file reports these properly
    found: dict[tuple[str, int], str] = {}
    if not isinstance(data, dict):
        return found
    for alias, body in data.items():
        endpoints = body.get("endpoints") if isinstance(body, dict) else None
        for index, endpoint in enumerate(endpoints if isinstance(endpoints, list) else []):
            raw = endpoint.get("api_key") if isinstance(endpoint, dict) else None
            match = _ENV_REF.match(raw.strip()) if isinstance(raw, str) else None
            if match:
                name = match.group(1) or match.group(2)
                if name not in env:
                    found[(str(alias), index)] = name
    return found


def check(
    aliases: Annotated[
        list[str] | None,
        typer.Argument(help="aliases or model strings to check (default: every alias in the file)"),
    ] = None,
    models_file: Annotated[
        Path | None, typer.Option("--models-file", help="api_config.yaml-style file")
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.1, help="seconds to wait for each endpoint")] = 30.0,
    base_url: Annotated[str | None, typer.Option(help="URL of the model strings' server")] = None,
    api_key: Annotated[str | None, typer.Option(help="key of the model strings", show_default=False)] = None,
    model_setting: Annotated[
        list[str] | None, typer.Option("-M", "--model-setting", help="model-string setting KEY=VALUE")
    ] = None,
) -> None:
    """Send a one-token request to each endpoint and check keys; exit 1 if anything is wrong."""
    from jurist.config import (
        ModelStringOptions,
        load_dotenv_values,
        load_models_file,
        models_from_strings,
        parse_settings,
    )
    from jurist.engine import run_checks

    selected = [part.strip() for value in aliases or [] for part in value.split(",") if part.strip()]
    strings = ModelStringOptions(base_url, api_key, parse_settings(model_setting or []))
    specs: dict[str, Any] = {}
    known: dict[tuple[str, int], str] = {}
    if models_file is not None:
        if not models_file.is_file():
            raise InputError(models_file, "", "models file not found")
        env = {**load_dotenv_values(models_file.parent), **load_dotenv_values(), **os.environ}
        unset = _unset_key_refs(models_file, env)
        known = {
            where: f"api_key refers to ${{{name}}}, which is not set (env or .env)"
            for where, name in unset.items()
        }
        # Unset variables load as empty keys here, so loading goes on; ``known`` reports them instead.
        specs = load_models_file(models_file, env={**env, **dict.fromkeys(unset.values(), "")})
    elif not selected:
        raise JuristError("jurist check: name models to check (model strings), or give --models-file")
    specs.update(models_from_strings(selected, strings, defined=specs))
    results = run_checks(specs, selected or None, known=known, timeout=timeout)
    problems = [result for result in results if not result.ok]
    for result in results:
        typer.echo(result.line())
    endpoints = len(results)
    if problems:
        typer.echo(f"{len(problems)} problem(s) in {endpoints} endpoint(s)", err=True)
        raise typer.Exit(1)
    typer.echo(f"all {endpoints} endpoint(s) answered", err=True)


def register(app: typer.Typer) -> None:
    app.command("check", cls=JuristCommand)(check)
