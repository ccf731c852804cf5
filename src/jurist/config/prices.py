"""What a model costs: a ``price`` per million tokens, from the models file or a lab's own price file.

jurist ships no price table: prices change, and a stale table would print wrong dollars with confidence.
A models-file entry may carry ``price: {input, output, cached_input}`` (USD per 1M tokens; for requests
sent through a batch API also ``batch_input`` and ``batch_output``, or a ``batch_discount``; for prompt
tokens written to a provider's prompt cache, ``cache_write``), and
``--prices FILE`` (YAML or JSON) maps aliases or served model names to prices, so a lab keeps one table
for all its models files (:func:`jurist.run.budget.resolve_prices` says which price a model gets). Tokens
a server does not report are counted by :mod:`jurist.tokens`, to be priced all the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import yaml

from jurist.config.checked import Bounds, Checked, FieldError, checked
from jurist.errors import InputError

PER_TOKENS = 1_000_000
"""Prices are quoted per this many tokens, as providers publish them."""
DEFAULT_BATCH_DISCOUNT = 0.5
"""What a batch request costs of a synchronous one where the price names no batch rates: OpenAI's Batch
API and Anthropic's Message Batches both bill half."""
ANTHROPIC_CACHE_READ = 0.1
ANTHROPIC_CACHE_WRITE = 1.25
"""What Anthropic bills a prompt token read from its prompt cache, and one written to it (5-minute cache),
of the input price: the rates an ``api_type: anthropic`` model's price gets where it names none."""


@checked(frozen=True)
class Price(Checked):
    """USD per 1M tokens. ``cached_input``: prompt tokens the server served from its own prompt cache
    (``usage.prompt_tokens_details.cached_tokens``); unset, they cost as much as any input token.
    ``cache_write``: prompt tokens the server wrote to its prompt cache (Anthropic's
    ``cache_creation_input_tokens``); unset, the input rate. ``batch_input`` / ``batch_output``: the
    rates of a request answered through a batch API; unset, the synchronous rate times ``batch_discount``
    (default :data:`DEFAULT_BATCH_DISCOUNT`)."""

    input: Annotated[float, Bounds(ge=0.0)]
    output: Annotated[float, Bounds(ge=0.0)]
    cached_input: Annotated[float, Bounds(ge=0.0)] | None = None
    cache_write: Annotated[float, Bounds(ge=0.0)] | None = None
    batch_input: Annotated[float, Bounds(ge=0.0)] | None = None
    batch_output: Annotated[float, Bounds(ge=0.0)] | None = None
    batch_discount: Annotated[float, Bounds(gt=0.0, le=1.0)] | None = None

    def batch_rates(self) -> Price:
        """The price of a request answered through a batch API (cache reads and writes discounted alike)."""
        share = DEFAULT_BATCH_DISCOUNT if self.batch_discount is None else self.batch_discount
        cached = None if self.cached_input is None else self.cached_input * share
        written = None if self.cache_write is None else self.cache_write * share
        return Price(
            input=self.input * share if self.batch_input is None else self.batch_input,
            output=self.output * share if self.batch_output is None else self.batch_output,
            cached_input=cached,
            cache_write=written,
        )

    def with_anthropic_cache_rates(self) -> Price:
        """This price with Anthropic's prompt-cache rates where it names none (reads 0.1x, writes 1.25x the
        input rate)."""
        return self.model_copy(
            update={
                "cached_input": self.input * ANTHROPIC_CACHE_READ
                if self.cached_input is None
                else self.cached_input,
                "cache_write": self.input * ANTHROPIC_CACHE_WRITE
                if self.cache_write is None
                else self.cache_write,
            }
        )

    def cost(
        self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, cache_write_tokens: int = 0
    ) -> float:
        """Dollars for one reply's tokens (reasoning tokens are part of ``completion_tokens``, as billed;
        ``cached_tokens`` and ``cache_write_tokens`` are parts of ``prompt_tokens``)."""
        cached = min(max(cached_tokens, 0), prompt_tokens)
        written = min(max(cache_write_tokens, 0), prompt_tokens - cached)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        write_rate = self.input if self.cache_write is None else self.cache_write
        dollars = (
            (prompt_tokens - cached - written) * self.input + cached * cached_rate + written * write_rate
        )
        return (dollars + completion_tokens * self.output) / PER_TOKENS


def _read_mapping(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(path, "", f"cannot read the price file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(path, "", "not UTF-8 text") from None
    try:
        return json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        if isinstance(exc, json.JSONDecodeError):
            where = f"line {exc.lineno}"
        raise InputError(path, where, f"not valid {path.suffix.lstrip('.') or 'YAML'}: {exc}") from None


def load_prices(path: str | Path) -> dict[str, Price]:
    """A price file: ``name: {input, output[, cached_input]}`` per alias or served model name.

    Errors name the file, the entry and the field, like the models file's do."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "", "price file not found")
    data = _read_mapping(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(path, "", "expected a mapping of model name -> {input, output, cached_input}")
    prices: dict[str, Price] = {}
    for name, body in data.items():
        where = f"price {name!r}"
        if not isinstance(body, dict):
            raise InputError(path, where, "expected {input: USD per 1M tokens, output: ...}")
        try:
            prices[str(name)] = Price.model_validate(body)
        except FieldError as exc:
            raise InputError(path, where, f"field {exc.where or '(price)'}: {exc.msg}") from None
    return prices
