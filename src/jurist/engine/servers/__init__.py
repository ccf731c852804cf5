"""Managed model servers, one module per kind (``serve: {kind: ...}`` in a models file).

``base.py`` holds what every kind shares (port, process group, readiness, log tail, stop);
``llama_cpp.py`` is llama-cpp-python's server. A new kind (``vllm.py`` next) is a :class:`ManagedServer`
subclass with a ``from_spec`` constructor, a name in :data:`jurist.config.ServeKind`, and a line below.
"""

from __future__ import annotations

from pathlib import Path

from jurist.config import ModelSpec
from jurist.engine.servers.base import ManagedServer, free_port

__all__ = ["ManagedServer", "free_port", "server_for"]


def server_for(spec: ModelSpec, log_path: Path | None = None) -> ManagedServer:
    """The (not yet started) server of a spec with a ``serve`` block; kinds import only when used."""
    if spec.serve is None:
        raise ValueError(f"model {spec.alias!r} has no serve block")
    kind = spec.serve.kind
    if kind == "llama.cpp":
        from jurist.engine.servers.llama_cpp import LlamaCppServer

        return LlamaCppServer.from_spec(spec, log_path)
    raise ValueError(f"unknown server kind {kind!r}")  # pragma: no cover - the Literal allows no other
