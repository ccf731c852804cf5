"""Pre-flight checks: does every endpoint answer, and does every remote one have a key?

A run that meets a dead endpoint or a missing key after an hour of generation has wasted the hour; one
tiny request per endpoint (``max_tokens`` 1) finds both before any work starts. Every problem is collected,
so a single check lists everything there is to fix instead of stopping at the first. Keys are never part
of a report: messages pass through the engine's masking, and only endpoint URLs are named.

What retrying cannot fix refuses (a rejected key, an unknown model, a bad request, the same error on
every attempt); what it can is a warning and the run goes on (an attempt failed and a later one got
through, a 429, a 503 that says when to come back). Which aliases are probed at all is the run's choice
(:meth:`jurist.run.pipeline.Pipeline._precheck`): only those with requests still to send.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp

from jurist.config import (
    DEFAULT_KEY_ENV,
    REPLACE_HINT,
    RETIREMENT_SOURCE,
    Endpoint,
    ModelSpec,
    retirement_phrase,
)
from jurist.engine.client import ModelClient, RequestFailed
from jurist.engine.pacing.limits import ConcurrencyLimits
from jurist.engine.pacing.retry import RetryPolicy
from jurist.errors import JuristError
from jurist.money import Ledger
from jurist.redact import mask

log = logging.getLogger("jurist.check")
PROBE_MESSAGES = [{"role": "user", "content": "Reply with one word: ok"}]
MISSING_KEY = f"no API key for a hosted API (--api-key, api_key in the models file, or {DEFAULT_KEY_ENV})"
# A probe tries an endpoint up to three times, briefly: a refused port or HTTP 500 on every attempt is
# known in about a second, and a long Retry-After does not hang the run's start (it is a warning).
PROBE_POLICY = RetryPolicy(max_attempts=3, base_delay=0.3, max_delay=1.5, max_retry_after=3.0)
ONE_ATTEMPT = RetryPolicy(max_attempts=1)  # each attempt is the probe's own, so its outcome is seen
LISTING_TIMEOUT_S = 5.0  # GET /models, asked only to say which models a server serves instead
_GAVE_UP = re.compile(r" \(gave up after \d+ attempts?, [\d.]+ s\)$")
HOSTED_KEY_HOSTS = (
    "api.openai.com",
    "openai.azure.com",
    "api.anthropic.com",
    "generativelanguage.googleapis.com",
    "api.mistral.ai",
    "api.groq.com",
    "api.together.xyz",
    "api.together.ai",
    "openrouter.ai",
    "api.deepseek.com",
    "api.fireworks.ai",
    "api.x.ai",
    "api.cohere.com",
    "api.cohere.ai",
    "api.perplexity.ai",
    "api.cerebras.ai",
    "integrate.api.nvidia.com",
    "router.huggingface.co",
    "api-inference.huggingface.co",
)
"""Hosted APIs that answer nothing without a key (a host or any of its subdomains): only these are refused
for having none. Any other server (a lab's vLLM on gpu1.lab.org, a proxy) may well need no key, and one
that does says so in the probe's HTTP 401, which refuses the run all the same."""


@dataclass(frozen=True)
class EndpointCheck:
    """The outcome for one endpoint of one alias; ``problem`` is None when it is usable."""

    alias: str
    endpoint: str
    problem: str | None = None
    latency_s: float | None = None
    note: str | None = None
    warn: bool = False  # usable, but with transient trouble (``note`` says which): a warning

    @property
    def ok(self) -> bool:
        return self.problem is None

    def line(self) -> str:
        """One line for people: ``alias  endpoint  problem`` (or ``ok`` with the latency)."""
        if self.problem is not None:
            return mask(f"{self.alias}  {self.endpoint}  {self.problem}")
        detail = f"ok ({self.latency_s:.2f} s)" if self.latency_s is not None else "ok"
        return mask(f"{self.alias}  {self.endpoint}  {detail}" + (f"; {self.note}" if self.note else ""))


def needs_key(url: str) -> bool:
    """Whether ``url`` is a hosted API that answers nothing without a key (:data:`HOSTED_KEY_HOSTS`)."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return any(host == known or host.endswith("." + known) for known in HOSTED_KEY_HOSTS)


def key_problem(endpoint: Endpoint) -> str | None:
    """A hosted API with no key cannot work; any other server (vLLM, llama.cpp, a lab's or a proxy)
    may need none, and the probe finds out."""
    if endpoint.api_key or not needs_key(endpoint.base_url):
        return None
    return MISSING_KEY


def endpoint_name(spec: ModelSpec, endpoint: Endpoint) -> str:
    """How a report names an endpoint: its URL, or the LiteLLM route when litellm picks the provider."""
    if spec.api_type == "litellm" and not endpoint.api_base:
        return f"litellm:{endpoint.model_name or spec.model}"
    return endpoint.base_url


def is_transient(exc: RequestFailed) -> bool:
    """A failure that retrying could fix later (5xx, 429, timeouts, dropped or garbled replies, a refused
    connection: a server still starting), as opposed to what it cannot (a rejected key, an unknown model,
    a bad request, an invalid URL). Transient or not, the same failure on every attempt is a refusal."""
    return exc.kind in ("server_error", "rate_limited", "timeout", "unreadable", "connection")


def _signature(exc: RequestFailed) -> tuple[str, int | None]:
    """What makes two failures "the same error": their kind and HTTP status (the text varies by attempt)."""
    return exc.kind, exc.status


def _text(exc: RequestFailed) -> str:
    """The failure's own words, without the one-attempt client's "gave up after 1 attempts" tail."""
    return _GAVE_UP.sub("", str(exc))


def _describe(exc: RequestFailed) -> str:
    if exc.kind == "connection":
        return f"unreachable: {_text(exc)}"
    if exc.kind == "timeout":
        return f"no answer: {_text(exc)}"
    if exc.status in (401, 403):
        return f"key rejected (HTTP {exc.status}): {_text(exc)}"
    return _text(exc)


async def _listing(client: ModelClient, timeout: float) -> list[str] | None:
    """The model ids the endpoint's ``GET /models`` lists, or None where it lists none or cannot say."""
    try:
        status, body = await client.endpoints[0].models(min(timeout, LISTING_TIMEOUT_S))
        data = json.loads(body).get("data") if status == 200 else None
    except (aiohttp.ClientError, OSError, asyncio.TimeoutError, ValueError, AttributeError, IndexError):
        return None
    if not isinstance(data, list):
        return None
    ids = [str(entry.get("id")) for entry in data if isinstance(entry, dict) and entry.get("id")]
    return ids or None


async def _refusal(client: ModelClient, exc: RequestFailed, timeout: float) -> str:
    """Why a failure that retrying cannot fix refuses the run; a 4xx that may be a model the server does
    not serve names what its ``GET /models`` lists instead."""
    served = client.endpoints[0].model_name if client.endpoints else client.spec.model
    if exc.kind != "client_error" or exc.status not in (400, 404, 422):
        return _describe(exc)
    listed = await _listing(client, timeout)
    if exc.status == 404 or (listed is not None and served not in listed):
        lists = f"; the server lists {', '.join(listed[:8])}" if listed else ""
        retired = retirement_phrase(served)
        if retired is not None:  # the reference judge of a benchmark may be among them
            return (
                f"unknown model {served!r} (HTTP {exc.status}): {retired} ({RETIREMENT_SOURCE}); "
                f"{REPLACE_HINT.format(bench='BENCH')}"
            )
        return f"unknown model {served!r} (HTTP {exc.status}{lists}): {_text(exc)}"
    return _describe(exc)


async def _probe(
    spec: ModelSpec,
    endpoint: Endpoint,
    limits: ConcurrencyLimits,
    policy: RetryPolicy,
    timeout: float,
    ledger: Ledger | None = None,
) -> EndpointCheck:
    """Send one-token requests to exactly this endpoint (each counted in ``ledger``'s check phase), one
    attempt at a time, up to ``policy.max_attempts``, so that every attempt's outcome is known.

    What retrying cannot fix (a rejected key, an unknown model, a bad request) refuses at the first
    attempt; the same error on every attempt (a refused connection, HTTP 500 each time) refuses too. A
    failure that a later attempt got past, a 429, or a 503 with ``Retry-After`` is a warning: the run
    retries each of its own requests. A timeout is tried twice at most: each costs the whole ``timeout``.
    """
    single = spec.model_copy(update={"endpoints": [endpoint], "timeout": min(spec.timeout, timeout)})
    name = endpoint_name(spec, endpoint)
    client = ModelClient(single, limits, ONE_ATTEMPT, ledger=ledger)
    failures: list[RequestFailed] = []
    try:
        for attempt in range(1, policy.max_attempts + 1):
            try:
                completion = await client.complete(PROBE_MESSAGES, max_tokens=1, phase="check")
            except RequestFailed as exc:
                if exc.kind == "budget":  # nothing was sent; the run stops at its first request
                    return EndpointCheck(spec.alias, name, note="not probed: the budget has no room left")
                if not is_transient(exc):
                    return EndpointCheck(spec.alias, name, await _refusal(client, exc, timeout))
                retry_after = exc.retry_after  # a 503 that says when to come back: busy, not broken
                if exc.status == 429 or (exc.status == 503 and retry_after is not None):
                    wait = f", Retry-After {retry_after:g} s" if retry_after is not None else ""
                    note = f"busy (HTTP {exc.status}{wait}) right now; the run waits and retries"
                    return EndpointCheck(spec.alias, name, note=note, warn=True)
                failures.append(exc)
                timeouts = sum(failure.kind == "timeout" for failure in failures)
                if attempt < policy.max_attempts and timeouts < 2:
                    await asyncio.sleep(policy.delay(attempt, retry_after))
                    continue
                break
            if not failures:
                return EndpointCheck(spec.alias, name, latency_s=completion.latency_s)
            note = f"flaky: {len(failures)} of {attempt} attempts failed ({_text(failures[-1])})"
            return EndpointCheck(spec.alias, name, latency_s=completion.latency_s, note=note, warn=True)
    finally:
        await client.aclose()
    if len({_signature(failure) for failure in failures}) == 1:  # the same error on every attempt
        return EndpointCheck(
            spec.alias, name, f"failed all {len(failures)} attempts: {_describe(failures[-1])}"
        )
    last = _text(failures[-1])
    note = f"flaky: every attempt failed, each differently (last: {last}); the run retries its own"
    return EndpointCheck(spec.alias, name, note=note, warn=True)


async def check_endpoints(
    specs: Mapping[str, ModelSpec],
    aliases: Iterable[str] | None = None,
    *,
    known: Mapping[tuple[str, int], str] | None = None,
    timeout: float = 30.0,
    max_concurrency: int = 16,
    policy: RetryPolicy = PROBE_POLICY,
    ledger: Ledger | None = None,
) -> list[EndpointCheck]:
    """Check every endpoint of ``aliases`` (default: all), probing them concurrently.

    ``known`` maps (alias, endpoint index) to a problem already found (e.g. an unset ``${VAR}`` key);
    such an endpoint is reported with it and not probed, like one that lacks a key. A managed server
    (``serve``) is reported as such and not probed: it is jurist's own and not started yet. Results keep the
    order of ``aliases`` and of each alias's endpoints; an alias missing from ``specs`` is a problem too.
    """
    known = known or {}
    limits = ConcurrencyLimits(max_concurrency)
    slots: list[EndpointCheck | asyncio.Task[EndpointCheck]] = []
    for alias in list(specs) if aliases is None else list(dict.fromkeys(aliases)):
        spec = specs.get(alias)
        if spec is None:
            slots.append(
                EndpointCheck(alias, "-", "not defined (neither a models-file alias nor a model string)")
            )
            continue
        if spec.serve is not None:  # ours, and not up yet: jurist starts it on first use
            where = f"serve: {spec.serve.kind} {spec.serve.model}"
            slots.append(EndpointCheck(alias, where, note="started by jurist on first use; not probed"))
            continue
        for index, endpoint in enumerate(spec.resolved_endpoints()):
            problem = known.get((alias, index))
            if problem is None and spec.api_type != "litellm":  # litellm finds provider keys itself
                problem = key_problem(endpoint)
            if problem is not None:
                slots.append(EndpointCheck(alias, endpoint_name(spec, endpoint), problem))
            else:
                slots.append(asyncio.create_task(_probe(spec, endpoint, limits, policy, timeout, ledger)))
    return [slot if isinstance(slot, EndpointCheck) else await slot for slot in slots]


def run_checks(
    specs: Mapping[str, ModelSpec],
    aliases: Iterable[str] | None = None,
    *,
    known: Mapping[tuple[str, int], str] | None = None,
    timeout: float = 30.0,
    ledger: Ledger | None = None,
) -> list[EndpointCheck]:
    """:func:`check_endpoints` from synchronous code (its own event loop)."""
    return asyncio.run(check_endpoints(specs, aliases, known=known, timeout=timeout, ledger=ledger))


def require_ready(
    specs: Mapping[str, ModelSpec],
    aliases: Iterable[str],
    *,
    timeout: float = 30.0,
    ledger: Ledger | None = None,
    remedies: str = "pass --no-check to skip",
) -> None:
    """The pre-run check: raise one error, one line, naming every problem of the aliases a run is about to
    use (its probes counted in ``ledger``, the run's, under phase "check"), and ``remedies`` beside fixing
    them; transient trouble is a warning, one line per endpoint, and the run goes on."""
    selected = [alias for alias in dict.fromkeys(aliases) if alias in specs]
    if not selected:
        return
    results = run_checks(specs, selected, timeout=timeout, ledger=ledger)
    for result in results:
        if result.warn:
            log.warning("pre-run check: %s", result.line())
    problems = [result for result in results if not result.ok]
    if problems:
        listed = "; ".join(result.line() for result in problems)
        raise JuristError(
            f"pre-run check found {len(problems)} problem(s) (fix them, or {remedies}): {listed}"
        )
