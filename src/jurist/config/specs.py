"""What a model is to jurist: an alias with endpoints (or a ``serve`` block for a server jurist starts itself,
:class:`ServeSpec`), generation settings and a price (:class:`ModelSpec`), in Arena-Hard's ``api_config.yaml``
shape. Keys never leave this package unmasked: see :mod:`jurist.redact`."""

from __future__ import annotations

import re
import typing
from collections.abc import Sequence
from dataclasses import field
from typing import Annotated, Any, ClassVar, Literal

from jurist.config.checked import Bounds, Checked, FieldError, checked
from jurist.config.prices import Price

DEFAULT_API_BASE = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
ANTHROPIC_API_BASE = "https://api.anthropic.com/v1"
ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
KEY_ENV_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$|^\$([A-Za-z_][A-Za-z0-9_]*)$")

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


@checked()
class Endpoint(Checked):
    """One base URL of a model; several endpoints are load-balanced."""

    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    model_name: str | None = None

    @property
    def base_url(self) -> str:
        return (self.api_base or DEFAULT_API_BASE).rstrip("/")

    def with_key(self, key: str | None, source: str | None) -> Endpoint:
        """This endpoint holding ``key``, which came from ``source`` (recorded; the key never is)."""
        self.api_key = key
        # Where the key came from, for run.json (never the key): a variable's name or "--api-key (given on
        # the command line)". An attribute of this endpoint, not a field: no models file sets it.
        self.__dict__["key_from"] = source if key else None
        return self

    @property
    def key_from(self) -> str | None:
        return typing.cast("str | None", self.__dict__.get("key_from"))


def _check_gpu_ids(value: int | list[int] | None) -> None:
    if isinstance(value, int) and value < 1:
        raise FieldError(("gpus",), "a GPU count is at least 1 (leave gpus out for none)")
    if isinstance(value, list):
        if not value:
            raise FieldError(("gpus",), "an empty list of GPU ids (leave gpus out for none)")
        if min(value) < 0 or len(set(value)) != len(value):
            raise FieldError(("gpus",), f"GPU ids are distinct indices >= 0, not {value}")


def arg_value(args: Sequence[str], *names: str) -> str | None:
    """The value a command line gives a flag (``--flag V`` or ``--flag=V``; the last one wins)."""
    value = None
    for i, arg in enumerate(args):
        flag, eq, inline = arg.partition("=")
        if flag in names:
            value = inline if eq else (args[i + 1] if i + 1 < len(args) else None)
    return value


@checked()
class ServeSpec(Checked):
    """A model server jurist starts on first use and stops when the run ends (``serve:`` in a models file)."""

    kind: ServeKind
    model: str  # the weights: a GGUF file (llama.cpp), a local directory or a hub id (vllm)
    # A count (jurist picks ids among the GPUs it sees) or the ids themselves: the server's
    # CUDA_VISIBLE_DEVICES. Explicit ids are also how a sweep places one server per GPU.
    gpus: int | list[int] | None = None
    tensor_parallel: Annotated[int, Bounds(ge=1)] | None = None  # vLLM --tensor-parallel-size; default: #gpus
    n_ctx: Annotated[int, Bounds(ge=1)] | None = None  # llama.cpp --n_ctx, vLLM --max-model-len
    args: list[str] = field(default_factory=list)  # extra command-line arguments for the server
    startup_timeout: Annotated[float, Bounds(gt=0)] = 300.0

    def check(self) -> None:
        _check_gpu_ids(self.gpus)
        if self.tensor_parallel is None:
            return
        if self.kind != "vllm":
            raise ValueError(f"tensor_parallel applies to kind vllm, not {self.kind}")
        count = self.gpu_count
        if count is not None and count % self.tensor_parallel:
            raise ValueError(
                f"tensor_parallel {self.tensor_parallel} does not divide the {count} GPU(s) of gpus"
            )

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


@checked()
class ModelSpec(Checked):
    """A model alias: where it is served, how to sample from it, and how many requests it may take at once.
    Keys it does not name are kept (:attr:`model_extra`): the pass-through sampling parameters."""

    EXTRA: ClassVar[str] = "allow"
    ALIASES: ClassVar[dict[str, str]] = {"sys_prompt": "system_prompt"}
    DUMP_EXCLUDED: ClassVar[frozenset[str]] = frozenset({"api_key"})

    alias: str = ""
    model: str
    endpoints: list[Endpoint] | None = None
    # The key of every endpoint that names none; excluded from dumps so it never reaches run.json.
    api_key: str | None = field(default=None, repr=False)
    api_type: Literal["openai", "openai-responses", "anthropic", "litellm"] = "openai"
    """The wire: OpenAI chat completions, Anthropic's native Messages API (``model: anthropic/NAME`` says
    it too), or LiteLLM."""
    parallel: Annotated[int, Bounds(ge=1, le=4096)] = 8
    max_tokens: Annotated[int, Bounds(ge=1)] | None = None
    temperature: Annotated[float, Bounds(ge=0.0, le=2.0)] | None = None
    timeout: Annotated[float, Bounds(gt=0)] = 600.0
    max_reply_mb: Annotated[float, Bounds(gt=0)] = 64.0  # reply bodies cut here, flagged (engine/reply_cap)
    system_prompt: str | None = None  # also read as sys_prompt (Arena-Hard's name)
    structured_output: StructuredDialect = "none"
    logprobs: bool = False
    sample_batching: bool | None = None
    """Ask for a question's missing samples in one request with ``n`` (vLLM, SGLang, OpenAI share the
    prompt's prefill): None tries it once and keeps it only if the server returns every choice."""
    batch: bool = False
    """Send every request of this model through its provider's batch API (OpenAI's Batch API, Anthropic's
    Message Batches): about half the price, answers within 24 hours (see docs/batch.md)."""
    serve: ServeSpec | None = None  # a managed server: no endpoints until the engine has started it
    price: Price | None = None  # USD per 1M tokens (input, output, cached_input); never sent to the server
    tokenizer: Annotated[str, Bounds(min_length=1)] | None = None
    """What counts this model's tokens where no server does (dry run, replies without usage): o200k,
    cl100k, a GGUF file, a tokenizer.json or its directory, or a hub id (see jurist.tokens.counters)."""

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        """``model: anthropic/NAME`` with no ``api_type``: Anthropic's Messages API, the model ``NAME``."""
        if "api_type" not in data and str(data.get("model", "")).startswith("anthropic/"):
            return {**data, "api_type": "anthropic", "model": str(data["model"]).removeprefix("anthropic/")}
        return data

    def check(self) -> None:
        if self.endpoints == []:  # says what leaving it out says (a reading, not an assignment)
            object.__setattr__(self, "endpoints", None)
        if self.batch and (self.serve is not None or self.api_type == "litellm"):
            raise ValueError(
                "batch: true needs a provider's batch API (api_type openai or anthropic, no serve:)"
            )
        if self.serve is not None and self.api_type != "openai":
            raise ValueError("a model with serve: speaks the OpenAI wire format (api_type: openai)")
        if self.serve is not None and "parallel" not in self.model_fields_set:
            # A served model that does not set ``parallel`` keeps its server's slots busy, no more.
            self.parallel = min(self.serve.slots(), 4096)

    def resolved_endpoints(self) -> list[Endpoint]:
        """Where requests go; the provider default when none are given, none for a server not started yet."""
        if self.endpoints:
            return self.endpoints
        return [] if self.serve is not None else [Endpoint(api_key=self.api_key)]

    def passthrough_params(self) -> dict[str, Any]:
        extra = self.model_extra
        return {key: extra[key] for key in PASSTHROUGH_PARAMS if key in extra}

    def public_dict(self) -> dict[str, Any]:
        """The spec as written to ``run.json``: keys replaced by where they came from, never their value."""
        data = self.model_dump(mode="json", by_alias=False)
        data.pop("api_key", None)  # excluded already (DUMP_EXCLUDED); never let a change bring it back
        data["endpoints"] = [
            {"api_base": ep.base_url, "model_name": ep.model_name, "api_key": "***" if ep.api_key else None}
            | ({"api_key_from": ep.key_from} if ep.api_key and ep.key_from else {})
            for ep in self.resolved_endpoints()
        ]
        return data
