"""Models file (Arena-Hard's ``api_config.yaml`` shape) and run configuration.

A models file maps an alias to a model: ``model``, ``endpoints: [{api_base, api_key}]`` (or null for the
provider default), ``api_type``, ``parallel``, ``max_tokens``, ``temperature`` and optional ``timeout`` and
``system_prompt``; or, instead of ``endpoints``, a ``serve`` block for a server jurist starts itself (see
:class:`ServeSpec`). Keys may be literal, ``${ENV_VAR}`` references, or absent (then ``OPENAI_API_KEY`` from
the environment or a ``.env`` file is used). Keys never leave this module unmasked: see :mod:`jurist.redact`.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from jurist.errors import InputError, JuristError
from jurist.prices import Price
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
# Managed server kinds; each has a module under jurist/engine/servers/.
ServeKind = Literal["llama.cpp", "vllm"]
VLLM_DEFAULT_MAX_NUM_SEQS = 256  # vLLM's --max-num-seqs when args do not set it


class Endpoint(BaseModel):
    """One base URL of a model; several endpoints are load-balanced."""

    model_config = ConfigDict(extra="forbid")

    api_base: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    model_name: str | None = None

    @property
    def base_url(self) -> str:
        return (self.api_base or DEFAULT_API_BASE).rstrip("/")


def arg_value(args: Sequence[str], *names: str) -> str | None:
    """The value a command line gives a flag (``--flag V`` or ``--flag=V``; the last one wins)."""
    value = None
    for i, arg in enumerate(args):
        flag, eq, inline = arg.partition("=")
        if flag in names:
            value = inline if eq else (args[i + 1] if i + 1 < len(args) else None)
    return value


class ServeSpec(BaseModel):
    """A model server jurist starts on first use and stops when the run ends (``serve:`` in a models file)."""

    model_config = ConfigDict(extra="forbid")

    kind: ServeKind
    model: str  # the weights: a GGUF file (llama.cpp), a local directory or a hub id (vllm)
    # A count (jurist picks ids among the GPUs it sees) or the ids themselves: the server's
    # CUDA_VISIBLE_DEVICES. Explicit ids are also how a sweep places one server per GPU.
    gpus: int | list[int] | None = None
    tensor_parallel: int | None = Field(default=None, ge=1)  # vLLM --tensor-parallel-size; default: #gpus
    n_ctx: int | None = Field(default=None, ge=1)  # llama.cpp --n_ctx, vLLM --max-model-len
    args: list[str] = Field(default_factory=list)  # extra command-line arguments for the server
    startup_timeout: float = Field(default=300.0, gt=0)

    @field_validator("gpus")
    @classmethod
    def _gpu_ids(cls, value: int | list[int] | None) -> int | list[int] | None:
        if isinstance(value, int) and value < 1:
            raise ValueError("a GPU count is at least 1 (leave gpus out for none)")
        if isinstance(value, list):
            if not value:
                raise ValueError("an empty list of GPU ids (leave gpus out for none)")
            if min(value) < 0 or len(set(value)) != len(value):
                raise ValueError(f"GPU ids are distinct indices >= 0, not {value}")
        return value

    @model_validator(mode="after")
    def _parallel_fits_gpus(self) -> ServeSpec:
        if self.tensor_parallel is None:
            return self
        if self.kind != "vllm":
            raise ValueError(f"tensor_parallel applies to kind vllm, not {self.kind}")
        count = self.gpu_count
        if count is not None and count % self.tensor_parallel:
            raise ValueError(
                f"tensor_parallel {self.tensor_parallel} does not divide the {count} GPU(s) of gpus"
            )
        return self

    @property
    def gpu_count(self) -> int | None:
        """How many GPUs ``gpus`` asks for (None: not said)."""
        return len(self.gpus) if isinstance(self.gpus, list) else self.gpus

    def slots(self) -> int:
        """How many requests the server decodes at once: a served model's default ``parallel``.

        llama-cpp-python's server decodes one request at a time (more only queue in it); vLLM batches up
        to ``--max-num-seqs``. Known here rather than in ``jurist.engine.servers`` because loading a models
        file must know it and this module sits below the engine.
        """
        if self.kind == "llama.cpp":
            return 1
        seqs = arg_value(self.args, "--max-num-seqs")
        try:
            return max(1, int(seqs)) if seqs is not None else VLLM_DEFAULT_MAX_NUM_SEQS
        except ValueError:
            return VLLM_DEFAULT_MAX_NUM_SEQS  # vLLM refuses such args itself, with its own message


class ModelSpec(BaseModel):
    """A model alias: where it is served, how to sample from it, and how many requests it may take at once."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    alias: str = ""
    model: str
    endpoints: list[Endpoint] | None = None
    # The key of every endpoint that names none; excluded from dumps so it never reaches run.json.
    api_key: str | None = Field(default=None, repr=False, exclude=True)
    api_type: Literal["openai", "litellm"] = "openai"
    parallel: int = Field(default=8, ge=1, le=4096)
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    timeout: float = Field(default=600.0, gt=0)
    max_reply_mb: float = Field(default=64.0, gt=0)  # reply bodies cut here, flagged (engine/reply_cap)
    system_prompt: str | None = Field(default=None, alias="sys_prompt")
    structured_output: StructuredDialect = "none"
    logprobs: bool = False
    sample_batching: bool | None = None
    """Ask for a question's missing samples in one request with ``n`` (vLLM, SGLang, OpenAI share the
    prompt's prefill): None tries it once and keeps it only if the server returns every choice."""
    serve: ServeSpec | None = None  # a managed server: no endpoints until the engine has started it
    price: Price | None = None  # USD per 1M tokens (input, output, cached_input); never sent to the server
    tokenizer: str | None = Field(default=None, min_length=1)
    """What counts this model's tokens where no server does (dry run, replies without usage): o200k,
    cl100k, a GGUF file, a tokenizer.json or its directory, or a hub id (see jurist.engine.tokenizers)."""

    @field_validator("endpoints", mode="before")
    @classmethod
    def _null_endpoints(cls, value: Any) -> Any:
        return value or None

    @model_validator(mode="after")
    def _serve_speaks_openai(self) -> ModelSpec:
        if self.serve is not None and self.api_type != "openai":
            raise ValueError("a model with serve: speaks the OpenAI wire format (api_type: openai)")
        return self

    @model_validator(mode="after")
    def _served_parallel(self) -> ModelSpec:
        """A served model that does not set ``parallel`` keeps its server's slots busy, no more."""
        if self.serve is not None and "parallel" not in self.model_fields_set:
            self.parallel = min(self.serve.slots(), 4096)
        return self

    def resolved_endpoints(self) -> list[Endpoint]:
        """Where requests go; the provider default when none are given, none for a server not started yet."""
        if self.endpoints:
            return self.endpoints
        return [] if self.serve is not None else [Endpoint(api_key=self.api_key)]

    def passthrough_params(self) -> dict[str, Any]:
        extra = self.model_extra or {}
        return {key: extra[key] for key in PASSTHROUGH_PARAMS if key in extra}

    def public_dict(self) -> dict[str, Any]:
        """The spec as written to ``run.json``: keys replaced by where they came from, never their value."""
        data = self.model_dump(mode="json", by_alias=False)
        data.pop("api_key", None)  # excluded already; never let a dump setting bring it back
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
    if value is not None and ("\n" in value or "\r" in value):
        # Never shown: a multi-line value is most often a pasted key with its line break (YAML "|").
        raise InputError(path, where, "api_key contains a line break; a key is one line")
    register_secret(value)
    return value


class _DuplicateKey(Exception):
    def __init__(self, key: object, line: int, first: int, top: bool) -> None:
        self.key, self.line, self.first, self.top = key, line, first, top


class _StrictLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no type stubs here
    """SafeLoader that refuses a key given twice in one mapping (PyYAML silently keeps the last one, so
    a second entry for an alias would replace the first without a word)."""

    _root: yaml.Node | None = None

    def construct_document(self, node: yaml.Node) -> Any:
        self._root = node
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise _DuplicateKey(key, line, seen[key], node is self._root)
            except TypeError:  # an unhashable key: the base class reports it
                break
            seen[key] = line
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


# Fields a models-file entry may hold: ModelSpec's own, their aliases, and the pass-through sampling
# parameters. Anything else is refused: a misspelt "parralel" would otherwise be sent to the server as a
# request field or silently do nothing.
_MODEL_FIELDS = frozenset(
    {name for name in ModelSpec.model_fields if name != "alias"} | {"sys_prompt"} | set(PASSTHROUGH_PARAMS)
)
_ENDPOINT_FIELDS = frozenset(Endpoint.model_fields)


def _unknown_field(path: Path, where: str, field: object, known: frozenset[str]) -> InputError:
    close = difflib.get_close_matches(str(field), sorted(known), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return InputError(path, where, f"unknown field {field!r}{hint}")


def _check_fields(path: Path, where: str, body: Mapping[Any, Any]) -> None:
    for name in body:
        if name not in _MODEL_FIELDS:
            raise _unknown_field(path, where, name, _MODEL_FIELDS)
    endpoints = body.get("endpoints")
    if isinstance(endpoints, list):
        for i, entry in enumerate(endpoints):
            if isinstance(entry, Mapping):
                for name in entry:
                    if name not in _ENDPOINT_FIELDS:
                        raise _unknown_field(path, f"{where}: endpoints[{i}]", name, _ENDPOINT_FIELDS)


def _tokenizer_location(path: Path, where: str, value: str) -> str:
    """A ``tokenizer:`` path made absolute (relative to the models file); a file named that is not there
    is refused now rather than mid-run. Encodings (o200k, cl100k) and hub ids (org/name) pass as given."""
    if value.strip().lower().removesuffix("_base") in ("o200k", "cl100k"):
        return value
    local = (path.parent / Path(value).expanduser()).resolve()
    if local.exists():
        return str(local)
    if Path(value).suffix.lower() in (".gguf", ".json") or value.startswith((".", "/", "~")):
        raise InputError(path, where, f"field tokenizer: no file {value!r} (paths are from the models file)")
    return value


def _format_validation_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(model)"
    return f"field {field}: {first['msg']}"


def _not_http(url: str | None) -> bool:
    """A base URL an OpenAI-compatible client cannot reach: not http(s), or no host (None: the default)."""
    parts = urlsplit((url or DEFAULT_API_BASE).strip())
    return parts.scheme.lower() not in ("http", "https") or not parts.netloc


def _line_of(text: str, alias: object, index: int) -> str:
    """``"line N: "`` of endpoint ``index``'s ``api_base`` under ``alias`` in the models file ("" if not
    found: the YAML is valid here, only the node is looked for)."""
    for key, body in getattr(yaml.compose(text), "value", []):
        if key.value != str(alias):
            continue
        for field, endpoints in getattr(body, "value", []):
            if field.value == "endpoints" and index < len(getattr(endpoints, "value", [])):
                entry = endpoints.value[index]
                for name, node in getattr(entry, "value", []):
                    if name.value == "api_base":
                        return f"line {node.start_mark.line + 1}: "
    return ""


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
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(path, f"line {line}", "not UTF-8 text (save the file as UTF-8)") from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (safe)
    except _DuplicateKey as dup:
        what = f"model {dup.key!r} is" if dup.top else f"key {dup.key!r} is"
        raise InputError(
            path, f"line {dup.line}", f"{what} given twice (first at line {dup.first})"
        ) from None
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
        _check_fields(path, where, body)
        try:
            spec = ModelSpec.model_validate({**body, "alias": str(alias)})
        except ValidationError as exc:
            raise InputError(path, where, _format_validation_error(exc)) from None
        if spec.tokenizer is not None:
            spec.tokenizer = _tokenizer_location(path, where, spec.tokenizer)
        if spec.serve is not None:
            if spec.api_key is not None:
                raise InputError(path, where, "api_key has no use with serve: (jurist starts the server)")
            if spec.endpoints:
                raise InputError(path, where, "serve: and endpoints: exclude each other (jurist starts it)")
            weights = Path(spec.serve.model).expanduser()
            beside = path.parent / weights  # a relative path is relative to the models file
            if not weights.is_absolute() and (spec.serve.kind == "llama.cpp" or beside.exists()):
                spec.serve.model = str(beside.resolve())  # vllm: else a hub id, passed as given
            specs[str(alias)] = spec
            continue
        spec.endpoints = spec.resolved_endpoints()
        used = aliases is None or str(alias) in aliases
        model_key, spec.api_key = spec.api_key, None  # copied into the endpoints, kept nowhere else
        for i, endpoint in enumerate(spec.endpoints):
            if not used:
                endpoint.api_key = None  # never a "${VAR}" text standing in for a key
                continue
            if endpoint.api_key is None:  # the model's key serves every endpoint that names none
                endpoint.api_key = model_key
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
            if _not_http(endpoint.api_base):  # e.g. ftp://: every request would fail, after every retry
                where_line = _line_of(text, alias, i) + f"{where}: endpoints[{i}]"
                shown = repr(endpoint.api_base)[:200]
                raise InputError(path, where_line, f"api_base {shown} is not an http:// or https:// URL")
        specs[str(alias)] = spec
    if problems:
        raise JuristError("; ".join(problems))  # every problem of the run's aliases, in one line
    return specs
