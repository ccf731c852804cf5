"""Models file (Arena-Hard's ``api_config.yaml`` shape) and run configuration.

A models file maps an alias to a model: ``model``, ``endpoints: [{api_base, api_key}]`` (or null for the
provider default), ``api_type``, ``parallel``, ``max_tokens``, ``temperature`` and optional ``timeout`` and
``system_prompt``; or, instead of ``endpoints``, a ``serve`` block for a server jurist starts itself (see
:class:`ServeSpec`). Keys may be literal, ``${ENV_VAR}`` references, or absent (then ``OPENAI_API_KEY`` from
the environment or a ``.env`` file is used). Keys never leave this module unmasked: see :mod:`jurist.redact`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from jurist.errors import InputError, JuristError
from jurist.redact import register_secret

DEFAULT_API_BASE = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_ENV_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$|^\$([A-Za-z_][A-Za-z0-9_]*)$")

# Request fields a models file may pass straight through to the chat-completions body.
PASSTHROUGH_PARAMS = (
    "top_p",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "reasoning_effort",
    "top_k",
    "min_p",
)

StructuredDialect = Literal["none", "llama_cpp", "vllm", "openai"]
# Managed server kinds; each has a module under jurist/engine/servers/ (add "vllm" with servers/vllm.py).
ServeKind = Literal["llama.cpp"]


class Endpoint(BaseModel):
    """One base URL of a model; several endpoints are load-balanced."""

    model_config = ConfigDict(extra="allow")

    api_base: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    model_name: str | None = None

    @property
    def base_url(self) -> str:
        return (self.api_base or DEFAULT_API_BASE).rstrip("/")


class ServeSpec(BaseModel):
    """A model server jurist starts on first use and stops when the run ends (``serve:`` in a models file)."""

    model_config = ConfigDict(extra="forbid")

    kind: ServeKind
    model: str  # the weights: a GGUF file for llama.cpp
    n_ctx: int | None = Field(default=None, ge=1)
    args: list[str] = Field(default_factory=list)  # extra command-line arguments for the server
    startup_timeout: float = Field(default=300.0, gt=0)


class ModelSpec(BaseModel):
    """A model alias: where it is served, how to sample from it, and how many requests it may take at once."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    alias: str = ""
    model: str
    endpoints: list[Endpoint] | None = None
    api_type: Literal["openai", "litellm"] = "openai"
    parallel: int = Field(default=8, ge=1, le=4096)
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    timeout: float = Field(default=600.0, gt=0)
    system_prompt: str | None = Field(default=None, alias="sys_prompt")
    structured_output: StructuredDialect = "none"
    logprobs: bool = False
    serve: ServeSpec | None = None  # a managed server: no endpoints until the engine has started it

    @field_validator("endpoints", mode="before")
    @classmethod
    def _null_endpoints(cls, value: Any) -> Any:
        return value or None

    @model_validator(mode="after")
    def _serve_speaks_openai(self) -> ModelSpec:
        if self.serve is not None and self.api_type != "openai":
            raise ValueError("a model with serve: speaks the OpenAI wire format (api_type: openai)")
        return self

    def resolved_endpoints(self) -> list[Endpoint]:
        """Where requests go; the provider default when none are given, none for a server not started yet."""
        if self.endpoints:
            return self.endpoints
        return [] if self.serve is not None else [Endpoint()]

    def passthrough_params(self) -> dict[str, Any]:
        extra = self.model_extra or {}
        return {key: extra[key] for key in PASSTHROUGH_PARAMS if key in extra}

    def public_dict(self) -> dict[str, Any]:
        """The spec as written to ``run.json``: keys replaced by where they came from, never their value."""
        data = self.model_dump(mode="json", by_alias=False)
        data["endpoints"] = [
            {"api_base": ep.base_url, "model_name": ep.model_name, "api_key": "***" if ep.api_key else None}
            for ep in self.resolved_endpoints()
        ]
        return data


def load_dotenv_values(directory: Path | None = None) -> dict[str, str]:
    """Values of ``.env`` in ``directory`` (default: cwd); the process environment takes precedence."""
    from dotenv import dotenv_values

    path = (directory or Path.cwd()) / ".env"
    if not path.is_file():
        return {}
    return {k: v for k, v in dotenv_values(path).items() if v is not None}


def resolve_key(
    raw: str | None,
    env: Mapping[str, str],
    *,
    where: str,
    path: Path,
    default_env: str | None = DEFAULT_KEY_ENV,
) -> str | None:
    """Turn a models-file key (literal, ``${VAR}`` or absent) into the key, registering it as a secret."""
    if raw is None:
        value = env.get(default_env) if default_env else None
    else:
        match = _ENV_REF.match(raw.strip())
        if match:
            name = match.group(1) or match.group(2)
            value = env.get(name)
            if value is None:
                raise InputError(
                    path, where, f"api_key refers to ${{{name}}}, which is not set (env or .env)"
                )
        else:
            value = raw
    register_secret(value)
    return value


def _format_validation_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(model)"
    return f"field {field}: {first['msg']}"


def load_models_file(
    path: str | Path, env: Mapping[str, str] | None = None, *, aliases: Collection[str] | None = None
) -> dict[str, ModelSpec]:
    """Read and validate a models file; errors name the file, the alias and the field.

    With ``aliases``, keys are resolved for those aliases only (the ones a run uses), so an unrelated
    entry whose ``${VAR}`` is unset does not block the run; every unset key of those aliases is reported
    in one error. Other entries keep no key at all.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "", "models file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise InputError(path, where, f"not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(path, "", "expected a mapping of alias -> model settings at the top level")
    if env is None:
        env = {**load_dotenv_values(path.parent), **load_dotenv_values(), **os.environ}
    specs: dict[str, ModelSpec] = {}
    problems: list[str] = []
    for alias, body in data.items():
        where = f"model {alias!r}"
        if not isinstance(body, dict):
            raise InputError(path, where, "expected a mapping of settings")
        try:
            spec = ModelSpec.model_validate({**body, "alias": str(alias)})
        except ValidationError as exc:
            raise InputError(path, where, _format_validation_error(exc)) from None
        if spec.serve is not None:
            if spec.endpoints:
                raise InputError(path, where, "serve: and endpoints: exclude each other (jurist starts it)")
            weights = Path(spec.serve.model).expanduser()
            if spec.serve.kind == "llama.cpp" and not weights.is_absolute():  # relative to the models file
                spec.serve.model = str((path.parent / weights).resolve())
            specs[str(alias)] = spec
            continue
        spec.endpoints = spec.resolved_endpoints()
        used = aliases is None or str(alias) in aliases
        for i, endpoint in enumerate(spec.endpoints):
            if not used:
                endpoint.api_key = None  # never a "${VAR}" text standing in for a key
                continue
            # OPENAI_API_KEY is the default only for OpenAI-wire models; LiteLLM finds providers' own keys.
            default_env = DEFAULT_KEY_ENV if spec.api_type == "openai" else None
            try:
                endpoint.api_key = resolve_key(
                    endpoint.api_key,
                    env,
                    where=f"{where}: endpoints[{i}]",
                    path=path,
                    default_env=default_env,
                )
            except InputError as exc:
                if aliases is None:
                    raise
                problems.append(str(exc))
        specs[str(alias)] = spec
    if problems:
        raise JuristError("; ".join(problems))  # every problem of the run's aliases, in one line
    return specs
