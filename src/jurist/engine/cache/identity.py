"""Which model answered: the identity the request cache keys every answer on.

A served model name says little: ``vllm serve /ckpt/step_120 --served-model-name model`` and the same
command on ``step_240`` both answer to ``model``, and so do two servers on two machines. An answer is
therefore cached under :class:`Identity`: where it came from (the normalised base URL) and what the server
or the files say the weights are, on top of the name.

* A server someone else runs is asked once per endpoint per engine (one ``GET /v1/models``, a few seconds
  at most): vLLM and SGLang report the weights path as ``root`` (and a LoRA adapter's ``parent``),
  llama.cpp's server reports the model file as the entry's ``id`` (or, under ``--alias``, a ``meta``
  fingerprint of the file: parameters, size, vocabulary). A hosted API reports the name only: its answers
  are keyed by base URL and name, which is all it lets anyone know.
* A server jurist starts (``serve:``, and ``--local``) is known from its files: the path, and the size and
  modification time of each weight and config file (a hub id: the commit the local hub cache resolves it
  to). Its base URL is left out, since its port changes at every start; nothing needs to be started to
  know it, so a run answered wholly from the cache starts no server.
* Where the server answers but cannot say (no ``/v1/models``, a 4xx, several models none of which is the
  one asked), the identity falls back to base URL and name, said once (:attr:`Identity.note`).
* A server that does not answer at all (refused, timed out, 5xx) is ``unreachable``: nothing is looked up
  for it, since it cannot say which weights it would answer with, and the weights it reported last are not
  assumed: it is most often down because it is being restarted on the next checkpoint, under the same name
  and port. Once it answers a request it is asked again, and the answer is stored under what it says then.
* ``--cache-only`` is the one exception, asked for by name: nothing is sent and nothing is asked, and each
  endpoint is taken to serve what it last said it serves (the cache records it whenever one answers), so a
  run can be scored again from the cache while its servers are down. The run names that identity and when
  it was seen; a request the cache cannot answer fails (recorded, and sent by the next run without it).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from jurist.config import ModelSpec, arg_value

if TYPE_CHECKING:
    from jurist.engine.cache.store import RequestCache
    from jurist.engine.wire.transport import EndpointClient

log = logging.getLogger("jurist.cache")

_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0"}
_DEFAULT_PORTS = {"http": 80, "https": 443}
# What an entry of /v1/models says about the weights: vLLM/SGLang ``root`` (the path or hub id the
# weights were loaded from) and ``parent`` (a LoRA adapter's base), llama.cpp's ``meta`` (a fingerprint of
# the GGUF file). ``created`` is left out: vLLM sets it to the time of the request.
_IDENTIFYING = ("root", "parent", "meta")
# The files of a model directory that make it the model it is (a README or a log written there does not).
UNREACHABLE = "unreachable"
LEARN_TIMEOUT_S = 5.0  # one GET /v1/models per endpoint and engine, never longer than this
_ASK_AGAIN_S = 30.0  # an endpoint that answers requests but not GET /models is asked again this seldom
_said: set[str] = set()  # fallbacks said already in this process
_PHASE_WORDS = {"generate": "answers", "judge": "judgments", "reask": "re-asked judgments"}
_MODEL_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".json", ".model", ".tiktoken", ".txt")


@dataclass(frozen=True, slots=True)
class Identity:
    """What answered a request, as far as it can be known.

    ``where``: the normalised base URL, or ``serve:<kind>`` for a server jurist manages. ``weights``: what
    the server or the files say the weights are ("" when nothing beyond the name is known). ``source``:
    how it was learned (``server``, ``files``, ``name``: the server reports nothing more, ``unknown``: it
    answered but could not say, ``unreachable``: it did not answer, so nothing is known yet). ``note``: why
    it is weaker than it could be.
    """

    where: str
    name: str
    weights: str = ""
    source: str = "name"
    note: str = ""
    seen: str = ""  # recalled under --cache-only: when the endpoint last said so (nothing asked now)

    @property
    def known(self) -> bool:
        """Whether answers may be looked up and stored under it (an unreachable server said nothing)."""
        return self.source != UNREACHABLE

    def key_text(self) -> str:
        """What the cache key holds of it (how it was learned is not part of which model it is)."""
        return f"{self.where}\0{self.name}\0{self.weights}"

    def describe(self) -> str:
        """One phrase for the run's output (a server's own words cut at 200 characters)."""
        weights = self.weights if len(self.weights) <= 200 else self.weights[:199] + "…"
        if self.source == "files":
            return f"{self.name} served by jurist from {weights}"
        seen = f", as it last said on {self.seen}; not asked" if self.seen else ""
        if self.weights:
            return f"{self.name} at {self.where} ({weights}{seen})"
        return f"{self.name} at {self.where} (identified by name only{seen})"


def normalise_base_url(url: str) -> str:
    """The base URL as a key: lower-case scheme and host, loopback names as one, default ports, user
    information and a trailing slash dropped (``http://LOCALHOST:80/v1/`` is ``http://127.0.0.1/v1``)."""
    parts = urlsplit(url.strip())
    if not parts.scheme or not parts.netloc:
        return url.strip().rstrip("/")
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if host in _LOOPBACK:
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), parts.query, ""))


def from_models_listing(payload: Any, where: str, name: str) -> Identity:
    """The identity ``GET /v1/models`` gives for ``name``: its entry (or the only one: a server of one
    model that answers any name, like llama.cpp's), reduced to the fields that say which weights."""
    data = payload.get("data") if isinstance(payload, dict) else None
    entries = [entry for entry in data if isinstance(entry, dict)] if isinstance(data, list) else []
    if not entries:
        return unknown(where, name, "its /v1/models lists no model")
    matching = [entry for entry in entries if entry.get("id") == name]
    if not matching and len(entries) > 1:
        ids = ", ".join(str(entry.get("id"))[:80] for entry in entries[:5])
        return unknown(where, name, f"its /v1/models lists {ids} but not {name!r}")
    entry = (matching or entries)[0]
    facts = {field: entry[field] for field in _IDENTIFYING if entry.get(field) not in (None, "", {})}
    if entry.get("id") != name:  # a single-model server: its id is what it serves (llama.cpp: the file)
        facts["id"] = entry.get("id")
    if not facts:
        return Identity(normalise_base_url(where), name, "", "name")
    if set(facts) == {"root"} and isinstance(facts["root"], str):
        weights = f"root {facts['root']}"
    else:
        weights = json.dumps(facts, sort_keys=True, separators=(",", ":"), default=str)
    return Identity(normalise_base_url(where), name, weights, "server")


def unknown(where: str, name: str, why: str) -> Identity:
    """The fallback: base URL and name, with why nothing more is known."""
    return Identity(normalise_base_url(where), name, "", "unknown", why)


def managed_identity(kind: str, model: str, name: str, revision: str | None = None) -> Identity:
    """A ``serve:`` model's identity from its files (blocking: stats a directory; call in a thread)."""
    path = Path(model).expanduser()
    if path.is_file():
        weights = f"{path.resolve()} [{_file_fingerprint(path)}]"
    elif path.is_dir():
        weights = f"{path.resolve()} [{_directory_fingerprint(path)}]"
    else:
        weights = f"hub {model}@{_hub_commit(model, revision) or revision or 'unresolved'}"
    return Identity(f"serve:{kind}", name, weights, "files")


def _file_fingerprint(path: Path) -> str:
    """Size and times; the change time too, which every write sets and no copy can carry over, so weights
    overwritten in place with their old size and modification time (``cp -p``, ``rsync -t``) are new."""
    stat = path.stat()
    return f"{stat.st_size} bytes, mtime {stat.st_mtime_ns}, ctime {stat.st_ctime_ns}"


def _directory_fingerprint(path: Path) -> str:
    """A digest of the names, sizes and times of the model's files, and of its small JSON files' text
    (a config rewritten within the same second still changes it)."""
    digest = hashlib.sha256()
    for file in sorted(path.iterdir()):
        if not file.is_file() or not file.name.endswith(_MODEL_SUFFIXES):
            continue
        stat = file.stat()
        digest.update(f"{file.name}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ctime_ns}\0".encode())
        if file.suffix == ".json" and stat.st_size <= 1 << 20:
            digest.update(file.read_bytes())
    return f"sha256 {digest.hexdigest()[:16]}"


def _hub_commit(model: str, revision: str | None) -> str | None:
    """The commit the local hub cache resolves a hub id to (what a server would load), if downloaded."""
    if model.count("/") != 1:
        return None
    home = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(Path.home(), ".cache", "huggingface"), "hub"
    )
    ref = Path(home) / ("models--" + model.replace("/", "--")) / "refs" / (revision or "main")
    try:
        return ref.read_text().strip() or None
    except OSError:
        return None


def endpoint_key(identity: Identity) -> str:
    """How the cache's table of last-seen identities names an endpoint: base URL and served name."""
    return f"{identity.where}\0{identity.name}"


def recalled(cache: RequestCache | None, where: str, name: str) -> Identity:
    """What the endpoint at ``where`` serving ``name`` last said it serves (``--cache-only``): the identity
    it had, with when it was seen; ``unreachable`` when it never answered through this cache."""
    where = normalise_base_url(where)
    seen = cache.last_identity(f"{where}\0{name}") if cache is not None else None
    if seen is None:
        return Identity(where, name, "", UNREACHABLE, "it never answered through this request cache")
    fields, when = seen
    day = time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
    return Identity(where, name, fields.get("weights", ""), fields.get("source", "name"), seen=day)


class Identities:
    """What may answer one alias's requests, learned once per engine (one identity per endpoint; the
    files' for a server jurist starts, whatever its endpoints, none of which need exist yet). With a
    ``cache``, what an endpoint says is recorded there; ``cache_only`` asks nothing and recalls it."""

    def __init__(self, spec: ModelSpec, cache: RequestCache | None = None, cache_only: bool = False) -> None:
        self.spec = spec
        self._cache = cache
        self._cache_only = cache_only
        self._known: list[Identity] | None = None
        self._lock = asyncio.Lock()
        self._asked_again: dict[int, float] = {}  # endpoint (id) -> when it was last asked again

    async def of(self, endpoints: list[EndpointClient]) -> list[Identity]:
        """Every identity (an endpoint's is also kept on it, :attr:`EndpointClient.identity`)."""
        if self._known is None:
            async with self._lock:
                if self._known is None:
                    self._known = await self._learn(endpoints)
        return self._known

    async def _learn(self, endpoints: list[EndpointClient]) -> list[Identity]:
        spec = self.spec
        if spec.serve is not None:
            revision = arg_value(spec.serve.args, "--revision")
            kind, model = spec.serve.kind, spec.serve.model
            return [await asyncio.to_thread(managed_identity, kind, model, spec.model, revision)]
        if spec.api_type == "litellm":  # a provider's SDK: nothing to ask, the name is all it tells
            for endpoint in endpoints:
                endpoint.identity = Identity(normalise_base_url(endpoint.base_url), endpoint.model_name)
        elif self._cache_only:
            for endpoint in endpoints:
                endpoint.identity = recalled(self._cache, endpoint.base_url, endpoint.model_name)
        else:
            timeout = min(LEARN_TIMEOUT_S, spec.timeout)
            found = await asyncio.gather(*(learn(endpoint, timeout) for endpoint in endpoints))
            for endpoint, identity in zip(endpoints, found, strict=True):
                endpoint.identity = identity
                self._remember(identity)
        return [endpoint.identity for endpoint in endpoints if endpoint.identity is not None]

    def _remember(self, identity: Identity) -> None:
        if self._cache is not None and identity.known:
            fields = {"weights": identity.weights, "source": identity.source}
            self._cache.remember_identity(endpoint_key(identity), fields)

    async def answered(self, endpoints: list[EndpointClient], by: Identity | None) -> Identity | None:
        """The identity to store an answer under: ``by``, or, where ``by`` was unreachable when asked, what
        the endpoint says now that it answers (asked again at most every 30 s); None: not to be cached."""
        if by is None:
            known = self._known or []
            return known[0] if len(known) == 1 and known[0].known else None
        if by.known:
            return by
        async with self._lock:
            endpoint = next((ep for ep in endpoints if _same(ep, by)), None)
            if endpoint is None:
                return None
            if endpoint.identity is None or not endpoint.identity.known:
                now = time.monotonic()
                if now - self._asked_again.get(id(endpoint), -_ASK_AGAIN_S) >= _ASK_AGAIN_S:
                    self._asked_again[id(endpoint)] = now
                    endpoint.identity = await learn(endpoint, min(LEARN_TIMEOUT_S, self.spec.timeout))
                    self._remember(endpoint.identity)
                    self._known = [ep.identity for ep in endpoints if ep.identity is not None]
            if endpoint.identity is not None and endpoint.identity.known:
                return endpoint.identity
        not_cached(by)
        return None


def _same(endpoint: EndpointClient, identity: Identity) -> bool:
    return normalise_base_url(endpoint.base_url) == identity.where and endpoint.model_name == identity.name


async def learn(endpoint: EndpointClient, timeout: float) -> Identity:
    """The identity of what answers at ``endpoint`` (one ``GET /models``). A server that cannot be reached
    (or answers 5xx: still starting) is ``unreachable``: nothing is looked up for it, and it is asked again
    once it has answered a request (:meth:`~jurist.engine.client.ModelClient.identities`). One that answers
    but cannot say is keyed by base URL and name, said once."""
    where, name = endpoint.base_url, endpoint.model_name
    try:
        status, body = await endpoint.models(timeout)
    except (aiohttp.ClientError, OSError, asyncio.TimeoutError, ValueError) as exc:
        detail = f": {exc}" if str(exc) else ""
        return Identity(normalise_base_url(where), name, "", UNREACHABLE, f"{type(exc).__name__}{detail}")
    if status >= 500:
        return Identity(
            normalise_base_url(where), name, "", UNREACHABLE, f"GET /models answered HTTP {status}"
        )
    if status != 200:
        return _said_once(unknown(where, name, f"GET /models answered HTTP {status}"))
    try:
        payload = json.loads(body)
    except ValueError:
        return _said_once(unknown(where, name, "GET /models answered no JSON"))
    identity = from_models_listing(payload, where, name)
    return _said_once(identity) if identity.source == "unknown" else identity


def not_cached(identity: Identity) -> None:
    """Say once that a server's answers are not cached: it answered, but would not say what it serves."""
    said = f"{identity.where}\0{identity.name}\0unreachable"
    if said not in _said:
        _said.add(said)
        log.warning(
            "request cache: %s at %s answered but GET /models did not (%s): its answers are not cached",
            identity.name, identity.where, identity.note,
        )  # fmt: skip


def _said_once(identity: Identity) -> Identity:
    """Say once per process why an endpoint's answers are keyed by less than its weights."""
    said = f"{identity.where}\0{identity.name}\0{identity.note}"
    if said not in _said:
        _said.add(said)
        log.warning(
            "request cache: %s at %s cannot say which weights it serves (%s); its answers are cached "
            "by base URL and name only, so a checkpoint swapped behind them is not told apart",
            identity.name, identity.where, identity.note,
        )  # fmt: skip
    return identity


def cache_report(sources: Counter[tuple[str, str, str]]) -> list[str]:
    """The run's lines about answers that came from the cache, not a server: how many, of which phase,
    from which identity (``sources``: (phase, alias, identity described) -> count)."""
    lines = []
    if sources:
        parts = []
        for phase in sorted({phase for phase, _, _ in sources}):
            rows = {(alias, where): n for (ph, alias, where), n in sources.items() if ph == phase}
            whence = "; ".join(f"{alias}: {where}" for alias, where in sorted(rows))
            parts.append(f"{sum(rows.values())} {_PHASE_WORDS.get(phase, phase + ' replies')} ({whence})")
        lines.append("from the request cache, not sent: " + ", ".join(parts))
    return lines
