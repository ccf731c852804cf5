"""Managed model servers, one module per kind (``serve: {kind: ...}`` in a models file).

``base.py`` holds what every kind shares (port, process group, readiness, log tail, context length, stop);
``llama_cpp.py`` is llama-cpp-python's server, ``vllm.py`` vLLM's. A new kind is a :class:`ManagedServer`
subclass with a ``from_spec`` constructor, a name in :data:`jurist.config.ServeKind`, and a line in
:func:`server_class`. :func:`placed` turns a spec's GPU count into ids before its server is made.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from jurist.config import ModelSpec, ServeKind
from jurist.engine.servers.base import ManagedServer, SwapFailed, free_port
from jurist.engine.servers.gpus import VisibleGpus, check_visible, pick_gpus, visible_gpus

__all__ = ["ManagedServer", "SwapFailed", "free_port", "placed", "server_for", "slots"]


def server_class(kind: ServeKind) -> type[ManagedServer]:
    """The class of a kind of server; each is imported only when used."""
    if kind == "llama.cpp":
        from jurist.engine.servers.llama_cpp import LlamaCppServer

        return LlamaCppServer
    if kind == "vllm":
        from jurist.engine.servers.vllm import VllmServer

        return VllmServer
    raise ValueError(f"unknown server kind {kind!r}")  # pragma: no cover - the Literal allows no other


def slots(spec: ModelSpec) -> int:
    """How many requests the spec's server decodes at once (its default ``parallel``)."""
    if spec.serve is None:
        raise ValueError(f"model {spec.alias!r} has no serve block")
    return spec.serve.slots()


def placed(spec: ModelSpec, busy: Collection[int] = (), visible: VisibleGpus | None = None) -> ModelSpec:
    """The spec with its GPUs as explicit ids: a count picked among the visible GPUs that ``busy`` leaves
    free. A GPU server (vLLM) with no ``gpus`` gets ``tensor_parallel`` of them (default 1) when jurist
    sees any, and its explicit ids must be visible; a CPU server (llama.cpp) ignores a count when no GPU
    is visible and takes explicit ids as given."""
    serve = spec.serve
    if serve is None:
        return spec
    strict = server_class(serve.kind).requires_gpus
    if not strict and not isinstance(serve.gpus, int):  # a CPU server: no ids, or its own as given
        return spec
    if visible is None:
        visible = visible_gpus()
    if isinstance(serve.gpus, list):
        check_visible(serve.gpus, visible)
        return spec
    if not visible.ids and (serve.gpus is None or not strict):
        return spec  # vLLM left to find its own GPU (and say so when it finds none); llama.cpp on CPU
    count = serve.gpus if serve.gpus is not None else serve.tensor_parallel or 1
    ids = pick_gpus(count, visible, busy)
    return spec.model_copy(update={"serve": serve.model_copy(update={"gpus": ids})})


def server_for(spec: ModelSpec, log_path: Path | None = None) -> ManagedServer:
    """The (not yet started) server of a spec with a ``serve`` block, on the GPUs :func:`placed` gives it."""
    if spec.serve is None:
        raise ValueError(f"model {spec.alias!r} has no serve block")
    return server_class(spec.serve.kind).from_spec(placed(spec), log_path)
