"""Models named on the command line, the way the ecosystem names them, with no models file to write.

A name that is not an alias of the models file (an alias always wins) is read as a **model string**:

- ``openai/NAME``: OpenAI's API; its key from ``--api-key`` or ``OPENAI_API_KEY``, its URL from
  ``--base-url``, else ``OPENAI_BASE_URL``, else https://api.openai.com/v1 (the OpenAI SDK's order).
- ``anthropic/NAME``: Anthropic's native Messages API; its key from ``--api-key`` or ``ANTHROPIC_API_KEY``,
  its URL from ``--base-url``, else https://api.anthropic.com/v1.
- ``vllm/NAME``, ``sglang/NAME``, ``llamacpp/NAME``, ``ollama/NAME``, ``lmstudio/NAME``: a server that is
  already running and speaks the OpenAI wire format, at ``--base-url``, else the provider's conventional
  local address (:data:`SERVER_PROVIDERS`); no key needed (``--api-key`` or ``<PROVIDER>_API_KEY`` if set).
- ``litellm/PROVIDER/NAME``: through LiteLLM, which finds the provider's own key variable.
- ``hf/ORG/NAME`` (a hub id) or a path (a folder, or a ``.gguf`` file): a server jurist starts itself
  (vLLM; llama.cpp for ``.gguf``), or the model in-process with ``--local``. A path is a name that exists
  on disk, starts with ``/``, ``./``, ``../`` or ``~``, or ends in ``.gguf``.

The rule that tells them apart is the prefix alone: a string never changes meaning with the flags beside
it, ``vllm/NAME`` always reaches a running server, and jurist starts one only when handed weights (a hub id
said as such, or a path). An endpoint string may carry its own URL, ``vllm/NAME@http://gpu1:8000/v1``;
``--base-url`` and ``--api-key`` apply to every endpoint string that names none, and ``-M KEY=VALUE``
settings to every string (``-M batch=true``: every request of every string through its provider's batch
API, so only ``openai/`` and ``anthropic/`` strings take it; ``--batch judges`` batches the judges alone).
Each becomes the same :class:`~jurist.config.specs.ModelSpec` a models-file
entry would, its alias the string as given.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from jurist.config.checked import FieldError
from jurist.config.models_file import load_dotenv_values, openai_base_url
from jurist.config.specs import (
    ANTHROPIC_API_BASE,
    ANTHROPIC_KEY_ENV,
    DEFAULT_KEY_ENV,
    PASSTHROUGH_PARAMS,
    Endpoint,
    ModelSpec,
    ServeSpec,
)
from jurist.errors import JuristError
from jurist.redact import register_secret


@dataclass(frozen=True)
class ServerProvider:
    """An OpenAI-compatible server program: where it listens by default, the variable of its optional
    key, and how many requests a model on it may have in flight."""

    base_url: str
    key_env: str
    parallel: int


SERVER_PROVIDERS: Mapping[str, ServerProvider] = {
    # vLLM and SGLang batch hundreds of sequences: 64 in flight keeps them busy (--max-concurrency caps all).
    "vllm": ServerProvider("http://localhost:8000/v1", "VLLM_API_KEY", 64),
    "sglang": ServerProvider("http://localhost:30000/v1", "SGLANG_API_KEY", 64),
    # llama.cpp's server, Ollama and LM Studio decode a few requests at a time; more only queue.
    "llamacpp": ServerProvider("http://localhost:8080/v1", "LLAMACPP_API_KEY", 8),
    "ollama": ServerProvider("http://localhost:11434/v1", "OLLAMA_API_KEY", 8),
    "lmstudio": ServerProvider("http://localhost:1234/v1", "LMSTUDIO_API_KEY", 8),
}
HUB_PREFIX = "hf"
PROVIDERS = ("openai", "anthropic", *SERVER_PROVIDERS, "litellm", HUB_PREFIX)
BATCH_PROVIDERS = ("openai", "anthropic")
"""The strings whose provider has a batch API (``-M batch=true``)."""
GIVEN_KEY = "--api-key (given on the command line)"

GENERATION_KEYS = (
    "max_tokens",
    "temperature",
    "parallel",
    "timeout",
    "max_reply_mb",
    "system_prompt",
    "structured_output",
    "logprobs",
    "sample_batching",
    "tokenizer",
    *PASSTHROUGH_PARAMS,
)
"""``-M`` keys every model string takes: what a models-file entry says about sampling and requests."""
SERVE_KEYS = ("gpus", "tensor_parallel", "n_ctx", "startup_timeout", "args")
"""``-M`` keys of a server jurist starts (``hf/ID`` or a path): its ``serve:`` block's fields."""
BATCH_KEY = "batch"
"""``-M batch=true``: every request of the strings through their provider's batch API (docs/batch.md)."""
SETTING_KEYS = (*GENERATION_KEYS, BATCH_KEY, *SERVE_KEYS)
_TEXT_KEYS = frozenset({"system_prompt", "structured_output", "tokenizer", "reasoning_effort"})


def parse_settings(values: Iterable[str]) -> dict[str, Any]:
    """``-M KEY=VALUE`` (repeatable) as settings, each checked now: an unknown key or a value the models
    file would refuse is a one-line error. Values are YAML (``0.7``, ``true``, ``[0, 1]``)."""
    settings: dict[str, Any] = {}
    for item in values:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise JuristError(f"-M {item!r}: expected KEY=VALUE (for example -M temperature=0.7)")
        if key not in SETTING_KEYS:
            close = difflib.get_close_matches(key, SETTING_KEYS, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise JuristError(f"-M {key}: unknown setting{hint}; valid keys: {', '.join(SETTING_KEYS)}")
        try:
            value = text if key in _TEXT_KEYS else yaml.safe_load(text)
        except yaml.YAMLError:
            value = text  # the check below says what the value should be
        settings[key] = value
        try:
            if key in SERVE_KEYS:
                ServeSpec.model_validate({"kind": "vllm", "model": "-", key: value})
            else:
                ModelSpec.model_validate({"model": "-", key: value})
        except FieldError as exc:
            raise JuristError(f"-M {item}: {exc.msg}") from None
    return settings


def _http_url(url: str, what: str) -> str:
    parts = urlsplit(url.strip())
    if parts.username is not None or parts.password is not None:  # checked first: never echoed
        raise JuristError(f"{what}: no user or password in the URL (a key goes in --api-key)")
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise JuristError(f"{what} {url[:200]!r} is not an http:// or https:// URL")
    return url.strip().rstrip("/")


@dataclass(frozen=True)
class ModelStringOptions:
    """What the command line says about every model string that says nothing of its own: ``--base-url``,
    ``--api-key`` and the ``-M`` settings. The key is never shown (``repr``) and is registered as a secret."""

    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    settings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.base_url is not None:
            object.__setattr__(self, "base_url", _http_url(self.base_url, "--base-url"))
        if self.api_key is not None:
            if not self.api_key.strip() or "\n" in self.api_key or "\r" in self.api_key:
                raise JuristError("--api-key: a key is one line of text")
            register_secret(self.api_key)

    def without_key(self) -> ModelStringOptions:
        """These options without the key (what may travel to other processes or hosts)."""
        return replace(self, api_key=None)


def looks_like_path(name: str) -> bool:
    """Whether a name that is no alias and has no provider prefix names weights on disk."""
    return (
        name.startswith(("/", "./", "../", "~"))
        or name.lower().endswith(".gguf")
        or os.path.exists(os.path.expanduser(name))
    )


def _own_url(name: str) -> tuple[str, str | None]:
    """``NAME@http://host/v1`` split into the name and its own URL (an ``@`` elsewhere is the name's)."""
    for scheme in ("@http://", "@https://"):
        at = name.find(scheme)
        if at > 0:
            return name[:at], _http_url(name[at + 1 :], f"model {name[:at]!r}: its URL")  # never echoed whole
    return name, None


class _Builder:
    """Turns one command's model strings into specs, noting which options some string took."""

    def __init__(self, options: ModelStringOptions, env: Mapping[str, str]) -> None:
        self.options = options
        self.env = env
        self.took_url = self.took_key = self.took_serve = False

    def key(self, variable: str | None) -> tuple[str | None, str | None]:
        if self.options.api_key is not None:
            self.took_key = True
            return self.options.api_key, GIVEN_KEY
        value = self.env.get(variable) if variable else None
        register_secret(value)
        return (value, variable) if value else (None, None)

    def url(self, own: str | None, default: str | None) -> str | None:
        if own is not None:
            return own
        if self.options.base_url is not None:
            self.took_url = True
            return self.options.base_url
        return default

    def spec(self, name: str) -> ModelSpec | None:
        body, own = _own_url(name)
        prefix, sep, rest = body.partition("/")
        if sep and prefix in PROVIDERS and not rest.strip("/"):
            raise JuristError(f"model {name!r}: name the model after the provider ({prefix}/NAME)")
        if not sep or prefix not in PROVIDERS:
            if own is not None or not looks_like_path(body):
                return None
            return self._served(name, body, None)
        if prefix == HUB_PREFIX:
            if own is not None:
                raise JuristError(f"model {name!r}: jurist serves hf/ models itself; a URL does not apply")
            return self._served(name, rest, rest)
        settings = {k: v for k, v in self.options.settings.items() if k in GENERATION_KEYS}
        if self.options.settings.get(BATCH_KEY):
            if prefix not in BATCH_PROVIDERS:
                raise JuristError(
                    f"-M batch=true: model {name!r} has no batch API (only openai/ and anthropic/ strings "
                    "do); to batch only the judges, --batch judges"
                )
            settings[BATCH_KEY] = True
        endpoint = Endpoint()
        if prefix == "openai":
            endpoint.api_base = self.url(own, None) or openai_base_url(self.env)
            endpoint.with_key(*self.key(DEFAULT_KEY_ENV))
            body_fields: dict[str, Any] = {"model": rest}
        elif prefix == "anthropic":
            endpoint.api_base = self.url(own, None) or ANTHROPIC_API_BASE
            endpoint.with_key(*self.key(ANTHROPIC_KEY_ENV))
            body_fields = {"model": rest, "api_type": "anthropic"}
        elif prefix == "litellm":
            if "/" not in rest.strip("/"):
                raise JuristError(f"model {name!r}: LiteLLM routes by provider: litellm/PROVIDER/NAME")
            endpoint.api_base = self.url(own, None)
            endpoint.with_key(*self.key(None))
            body_fields = {"model": rest, "api_type": "litellm"}
        else:
            server = SERVER_PROVIDERS[prefix]
            endpoint.api_base = self.url(own, server.base_url)
            endpoint.with_key(*self.key(server.key_env))
            body_fields = {"model": rest, "parallel": server.parallel}
        return self._validated(name, {**body_fields, **settings, "endpoints": [endpoint]})

    def _served(self, name: str, weights: str, hub_id: str | None) -> ModelSpec:
        """A server jurist starts (or ``--local`` runs in-process) on a hub id or local weights."""
        if hub_id is not None:
            kind, location, served = "vllm", hub_id, hub_id
        else:
            path = Path(weights).expanduser()
            if not path.exists():
                raise JuristError(
                    f"model {name!r}: no such file or folder (a checkpoint path; a hub id is hf/ORG/NAME)"
                )
            path = path.resolve()
            if path.is_dir():
                kind = "vllm"
            elif path.suffix.lower() == ".gguf":
                kind = "llama.cpp"
            else:
                raise JuristError(
                    f"model {name!r}: a checkpoint is a folder (served by vLLM) or a .gguf file (llama.cpp)"
                )
            location, served = str(path), path.stem if kind == "llama.cpp" else path.name
        if self.options.settings.get(BATCH_KEY):
            raise JuristError(
                f"-M batch=true: model {name!r} is served by jurist and has no batch API (only openai/ and "
                "anthropic/ strings do); to batch only the judges, --batch judges"
            )
        serve = {k: v for k, v in self.options.settings.items() if k in SERVE_KEYS}
        self.took_serve = self.took_serve or bool(serve)
        generation = {k: v for k, v in self.options.settings.items() if k in GENERATION_KEYS}
        try:
            block = ServeSpec.model_validate({**serve, "kind": kind, "model": location})
        except FieldError as exc:
            raise JuristError(f"model {name!r}: -M {_first_error(exc)}") from None
        return self._validated(name, {**generation, "model": served, "serve": block})

    @staticmethod
    def _validated(name: str, body: dict[str, Any]) -> ModelSpec:
        try:
            return ModelSpec.model_validate({**body, "alias": name})
        except FieldError as exc:
            raise JuristError(f"model {name!r}: {_first_error(exc)}") from None


def _first_error(exc: FieldError) -> str:
    return f"{exc.where or 'model'}: {exc.msg}"


def models_from_strings(
    names: Iterable[str],
    options: ModelStringOptions | None = None,
    *,
    defined: Mapping[str, ModelSpec] | None = None,
    env: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> dict[str, ModelSpec]:
    """The specs of those ``names`` that are model strings and not already ``defined`` (a models-file alias
    wins). A name that is neither is left out: the caller says it is undefined (:func:`undefined_model`).

    Options that no string of ``names`` takes are an error, never silently unused: ``--base-url`` or
    ``--api-key`` with no endpoint string naming no URL, ``-M`` with no string at all, a server's ``-M``
    key (``gpus``, ``n_ctx``…) with no server for jurist to start."""
    options = options or ModelStringOptions()
    defined = defined or {}
    if env is None:
        env = {**load_dotenv_values(), **os.environ}
    builder = _Builder(options, env)
    specs: dict[str, ModelSpec] = {}
    unknown: list[str] = []
    for name in dict.fromkeys(names):
        if name in defined:
            continue
        string = (labels or {}).get(name, name)
        spec = builder.spec(string)
        if spec is not None:
            if string != name:  # labelled (string_labels): the row reads the label, run.json the string
                spec = spec.model_copy(update={"alias": name, "model_string": string})
            specs[name] = spec
        else:
            unknown.append(name)
    closest = closest_name(unknown[0], defined) if unknown else None
    guess = closest[0] if closest else f"vllm/{unknown[0]}" if unknown else ""
    meant = f"; {unknown[0]!r} is neither an alias nor a string: {guess}?" if unknown else ""
    for flag, given, took, which in (
        ("--base-url", options.base_url is not None, builder.took_url, "model strings naming no URL"),
        ("--api-key", options.api_key is not None, builder.took_key, "model strings reaching an API"),
        ("-M " + ",".join(options.settings), bool(options.settings), bool(specs), "model strings"),
    ):
        if given and not took:
            raise JuristError(
                f"{flag} applies to {which} (openai/NAME, vllm/NAME …), and no model of this command is "
                f"one (a models-file alias keeps its own settings{meant})"
            )
    if not builder.took_serve and any(key in SERVE_KEYS for key in options.settings):
        keys = ", ".join(key for key in options.settings if key in SERVE_KEYS)
        raise JuristError(
            f"-M {keys}: applies to a server jurist starts (hf/ORG/NAME or a path), and none is"
        )
    return specs


def closest_name(name: str, aliases: Iterable[str] = ()) -> tuple[str, str] | None:
    """The spelling most likely meant by an undefined ``name``, and what was wrong with it in words: the
    string with its provider prefix one typo away corrected (``opnai/gpt-4`` -> ``openai/gpt-4``), else the
    models-file alias one typo away."""
    prefix, sep, rest = name.partition("/")
    close = difflib.get_close_matches(prefix.lower(), PROVIDERS, n=1, cutoff=0.6) if sep and rest else []
    if close and prefix not in PROVIDERS:
        return f"{close[0]}/{rest}", f"{prefix!r} is no provider"
    alias = difflib.get_close_matches(name, [a for a in aliases if a != name], n=1, cutoff=0.6)
    return (alias[0], "no alias is spelt so") if alias else None
