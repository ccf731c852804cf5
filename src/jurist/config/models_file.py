"""Reading a models file: strict YAML (duplicate keys and unknown fields refused, each error naming the
file, line and field), keys resolved from the environment or ``.env`` and registered as secrets, every
entry checked into a :class:`~jurist.config.specs.ModelSpec`."""

from __future__ import annotations

import difflib
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from jurist.config.checked import FieldError, field_names
from jurist.config.specs import (
    ANTHROPIC_API_BASE,
    ANTHROPIC_KEY_ENV,
    DEFAULT_API_BASE,
    DEFAULT_KEY_ENV,
    KEY_ENV_REF,
    PASSTHROUGH_PARAMS,
    Endpoint,
    ModelSpec,
)
from jurist.errors import InputError, JuristError
from jurist.redact import register_secret

_DEFAULT_KEY_ENVS = {"openai": DEFAULT_KEY_ENV, "anthropic": ANTHROPIC_KEY_ENV}


def load_dotenv_values(directory: Path | None = None) -> dict[str, str]:
    """Values of ``.env`` in ``directory`` (default: cwd); the process environment takes precedence.
    python-dotenv is imported only when there is a file to read (4 ms of a run's start otherwise)."""
    path = (directory or Path.cwd()) / ".env"
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

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
        match = KEY_ENV_REF.match(raw.strip())
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


def openai_base_url(env: Mapping[str, str]) -> str:
    """Where an OpenAI-wire model with no ``api_base`` of its own is sent: ``OPENAI_BASE_URL`` when set (as
    the OpenAI SDK reads it: an explicit base URL first, then this variable, then the default), else
    https://api.openai.com/v1. Read, like keys, from the environment or ``.env``: a key for a proxy read
    from ``.env`` must never be sent to api.openai.com because its URL was not."""
    value = env.get("OPENAI_BASE_URL")
    if value is None:
        return DEFAULT_API_BASE
    if has_credentials(value):
        raise JuristError(f"OPENAI_BASE_URL: {CREDENTIALS_IN_URL}")
    if _not_http(value.strip() or "none:"):
        raise JuristError(f"OPENAI_BASE_URL {value[:200]!r} is not an http:// or https:// URL")
    return value.strip()


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
    {name for name in field_names(ModelSpec) if name != "alias"}
    | set(ModelSpec.ALIASES)
    | set(PASSTHROUGH_PARAMS)
)
_ENDPOINT_FIELDS = frozenset(field_names(Endpoint))


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


def _format_validation_error(exc: FieldError) -> str:
    return f"field {exc.where or '(model)'}: {exc.msg}"


CREDENTIALS_IN_URL = (
    "the URL holds a user or password (user:key@host), which would travel in every request and its "
    "logs; give the key as api_key (or ${VAR}) and the URL without it (not shown here)"
)
MAX_FILE_BYTES = 16 * 1024 * 1024
"""The largest models or suite file read (a models file is a few KB; anything larger is not one)."""


def has_credentials(url: str | None) -> bool:
    """``url`` carries a user or password (``http://user:key@host``): refused before any request."""
    try:
        parts = urlsplit((url or "").strip())
        return parts.username is not None or parts.password is not None
    except ValueError:
        return False


def read_config_bytes(path: Path, what: str) -> bytes:
    """A config file's bytes, bounded (:data:`MAX_FILE_BYTES`), or a one-line :class:`InputError`."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            limit = MAX_FILE_BYTES // 2**20
            raise InputError(path, "", f"{size:,} bytes: too large for a {what} (at most {limit} MiB)")
        return path.read_bytes()
    except OSError as exc:
        raise InputError(path, "", f"cannot be read ({exc.strerror or type(exc).__name__})") from None


def yaml_too_deep(path: Path) -> InputError:
    """The one line for YAML nested deeper than the reader can follow (instead of a RecursionError)."""
    return InputError(path, "", "nested too deeply to read (hundreds of levels: not a settings file)")


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


def _read_yaml(path: Path) -> tuple[str, dict[Any, Any]]:
    """The file's text and its top-level mapping; bad bytes, YAML or shape as one line naming the file."""
    raw = read_config_bytes(path, "models file")
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
    except RecursionError:
        raise yaml_too_deep(path) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(path, "", "expected a mapping of alias -> model settings at the top level")
    return text, data


def _served(path: Path, where: str, spec: ModelSpec) -> ModelSpec:
    """A model jurist serves itself: no key, no endpoints; its weights found beside the models file."""
    assert spec.serve is not None
    if spec.api_key is not None:
        raise InputError(path, where, "api_key has no use with serve: (jurist starts the server)")
    if spec.endpoints:
        raise InputError(path, where, "serve: and endpoints: exclude each other (jurist starts it)")
    weights = Path(spec.serve.model).expanduser()
    beside = path.parent / weights  # a relative path is relative to the models file
    if not weights.is_absolute() and (spec.serve.kind == "llama.cpp" or beside.exists()):
        spec.serve.model = str(beside.resolve())  # vllm: else a hub id, passed as given
    return spec


def _resolve_endpoints(
    path: Path, text: str, alias: object, spec: ModelSpec, env: Mapping[str, str], problems: list[str] | None
) -> None:
    """Each endpoint's key and base URL, in place; with ``problems``, an unset key is noted there (every
    one is reported together) instead of raised."""
    where = f"model {alias!r}"
    model_key, spec.api_key = spec.api_key, None  # copied into the endpoints, kept nowhere else
    for i, endpoint in enumerate(spec.endpoints or []):
        if endpoint.api_key is None:  # the model's key serves every endpoint that names none
            endpoint.api_key = model_key
        # OPENAI_API_KEY is the default only for OpenAI-wire models, ANTHROPIC_API_KEY for Anthropic's;
        # LiteLLM finds providers' own keys.
        default_env = _DEFAULT_KEY_ENVS.get(spec.api_type)
        if spec.api_type == "anthropic" and endpoint.api_base is None:
            endpoint.api_base = ANTHROPIC_API_BASE
        try:
            endpoint.api_key = resolve_key(
                endpoint.api_key, env, where=f"{where}: endpoints[{i}]", path=path, default_env=default_env
            )
        except InputError as exc:
            if problems is None:
                raise
            problems.append(str(exc))
        if endpoint.api_base is None and spec.api_type in ("openai", "openai-responses"):
            endpoint.api_base = openai_base_url(env)  # the provider default, as the OpenAI SDK finds it
        if has_credentials(endpoint.api_base):
            where_line = _line_of(text, alias, i) + f"{where}: endpoints[{i}]"
            raise InputError(path, where_line, f"api_base: {CREDENTIALS_IN_URL}")
        if _not_http(endpoint.api_base):  # e.g. ftp://: every request would fail, after every retry
            where_line = _line_of(text, alias, i) + f"{where}: endpoints[{i}]"
            shown = repr(endpoint.api_base)[:200]
            raise InputError(path, where_line, f"api_base {shown} is not an http:// or https:// URL")


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
    text, data = _read_yaml(path)
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
        except FieldError as exc:
            raise InputError(path, where, _format_validation_error(exc)) from None
        if spec.tokenizer is not None:
            spec.tokenizer = _tokenizer_location(path, where, spec.tokenizer)
        if spec.serve is not None:
            specs[str(alias)] = _served(path, where, spec)
            continue
        spec.endpoints = spec.resolved_endpoints()
        if aliases is None or str(alias) in aliases:
            _resolve_endpoints(path, text, alias, spec, env, problems if aliases is not None else None)
        else:
            spec.api_key = None  # kept nowhere
            for endpoint in spec.endpoints:
                endpoint.api_key = None  # never a "${VAR}" text standing in for a key
        specs[str(alias)] = spec
    if problems:
        raise JuristError("; ".join(problems))  # every problem of the run's aliases, in one line
    return specs
