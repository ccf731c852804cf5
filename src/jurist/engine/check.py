"""Pre-flight checks: does every endpoint answer, and does every remote one have a key?

A run that meets a dead endpoint or a missing key after an hour of generation has wasted the hour; one
tiny request per endpoint (``max_tokens`` 1) finds both before any work starts. Every problem is collected,
so a single check lists everything there is to fix instead of stopping at the first. Keys are never part
of a report: messages pass through the engine's masking, and only endpoint URLs are named.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from jurist.config import DEFAULT_KEY_ENV, Endpoint, ModelSpec
from jurist.engine.client import ModelClient, RequestFailed
from jurist.engine.ledger import Ledger
from jurist.engine.limits import ConcurrencyLimits
from jurist.engine.retry import RetryPolicy
from jurist.errors import JuristError
from jurist.redact import mask

log = logging.getLogger("jurist.check")
PROBE_MESSAGES = [{"role": "user", "content": "Reply with one word: ok"}]
MISSING_KEY = f"no API key (set api_key in the models file, or {DEFAULT_KEY_ENV})"
# A probe retries transient faults as any request does, but briefly: it must not hang a run's start on a
# long Retry-After, and a fault that outlives its retries is reported as flaky, not as bad input.
PROBE_POLICY = RetryPolicy(max_attempts=4, base_delay=0.3, max_delay=1.5, max_retry_after=3.0)
_LOCAL_SUFFIXES = (".local", ".localhost", ".internal", ".lan", ".home.arpa")


@dataclass(frozen=True)
class EndpointCheck:
    """The outcome for one endpoint of one alias; ``problem`` is None when it is usable."""

    alias: str
    endpoint: str
    problem: str | None = None
    latency_s: float | None = None
    note: str | None = None
    flaky: bool = False  # transient faults outlived the probe's retries: a warning, not a refusal

    @property
    def ok(self) -> bool:
        return self.problem is None

    def line(self) -> str:
        """One line for people: ``alias  endpoint  problem`` (or ``ok`` with the latency)."""
        if self.problem is not None:
            return mask(f"{self.alias}  {self.endpoint}  {self.problem}")
        detail = f"ok ({self.latency_s:.2f} s)" if self.latency_s is not None else "ok"
        return mask(f"{self.alias}  {self.endpoint}  {detail}" + (f"; {self.note}" if self.note else ""))


def is_local_url(url: str) -> bool:
    """True for servers that typically need no key: loopback, private addresses, bare LAN host names."""
    host = (urlsplit(url).hostname or "").lower()
    if not host:
        return False
    if host == "localhost" or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host  # a single-label name such as "gpu-node-3" resolves on the local network
    return address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified


def key_problem(endpoint: Endpoint) -> str | None:
    """A remote endpoint with no key cannot work; a local server (vLLM, llama.cpp) usually needs none."""
    if endpoint.api_key or is_local_url(endpoint.base_url):
        return None
    return MISSING_KEY


def endpoint_name(spec: ModelSpec, endpoint: Endpoint) -> str:
    """How a report names an endpoint: its URL, or the LiteLLM route when litellm picks the provider."""
    if spec.api_type == "litellm" and not endpoint.api_base:
        return f"litellm:{endpoint.model_name or spec.model}"
    return endpoint.base_url


def is_transient(exc: RequestFailed) -> bool:
    """A failure that retrying could fix later (5xx, 429, timeouts, dropped or garbled replies), as opposed
    to what it cannot (a rejected key, an unknown model, a name that does not resolve, a refused port)."""
    if exc.kind in ("server_error", "rate_limited", "timeout", "unreadable"):
        return True
    if exc.kind == "connection":
        return "ClientConnector" not in str(exc)  # DNS failure or refused connection: not a hiccup
    return False


def _describe(exc: RequestFailed) -> str:
    if exc.kind == "connection":
        return f"unreachable: {exc}"
    if exc.kind == "timeout":
        return f"no answer: {exc}"
    if exc.status in (401, 403):
        return f"key rejected: {exc}"
    if exc.status == 404:
        return f"not found (check api_base and the model name): {exc}"
    return str(exc)


async def _probe(
    spec: ModelSpec,
    endpoint: Endpoint,
    limits: ConcurrencyLimits,
    policy: RetryPolicy,
    timeout: float,
    ledger: Ledger | None = None,
) -> EndpointCheck:
    """Send one one-token request to exactly this endpoint (counted in ``ledger``'s check phase)."""
    single = spec.model_copy(update={"endpoints": [endpoint], "timeout": min(spec.timeout, timeout)})
    name = endpoint_name(spec, endpoint)
    client = ModelClient(single, limits, policy, ledger=ledger)
    try:
        completion = await client.complete(PROBE_MESSAGES, max_tokens=1, phase="check")
    except RequestFailed as exc:
        if exc.kind == "budget":  # nothing was sent; the run stops at its first request
            return EndpointCheck(spec.alias, name, note="not probed: the budget has no room left")
        if exc.status == 429:  # reachable and authenticated, only busy right now
            return EndpointCheck(spec.alias, name, note="rate limited (HTTP 429) right now")
        if is_transient(exc):
            note = f"flaky: {exc}; the run retries each of its own requests"
            return EndpointCheck(spec.alias, name, note=note, flaky=True)
        return EndpointCheck(spec.alias, name, _describe(exc))
    finally:
        await client.aclose()
    return EndpointCheck(spec.alias, name, latency_s=completion.latency_s)


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
            slots.append(EndpointCheck(alias, "-", "not defined in the models file"))
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
) -> None:
    """The pre-run check: raise one error listing every problem of the aliases a run is about to use
    (its probes counted in ``ledger``, the run's, under phase "check")."""
    selected = [alias for alias in dict.fromkeys(aliases) if alias in specs]
    if not selected:
        return
    results = run_checks(specs, selected, timeout=timeout, ledger=ledger)
    for result in results:
        if result.flaky:
            log.warning("pre-run check: %s", result.line())
    problems = [result for result in results if not result.ok]
    if problems:
        lines = "\n".join(f"  {result.line()}" for result in problems)
        raise JuristError(
            f"pre-run check found {len(problems)} problem(s) (fix them, or pass --no-check to skip):\n{lines}"
        )
