"""vLLM's OpenAI-compatible server on 127.0.0.1, on the GPUs its spec was placed on.

The command is ``vllm serve MODEL --host 127.0.0.1 --port P --served-model-name NAME
--tensor-parallel-size K [--max-model-len N] ARGS``, or ``python -m vllm.entrypoints.openai.api_server
--model MODEL ...`` where the console script cannot run (:mod:`jurist.engine.servers.vllm_launch` finds
which); the GPUs become its ``CUDA_VISIBLE_DEVICES``. A CPU build also gets ``--enforce-eager`` (unless the
args choose compilation themselves) and ``VLLM_CPU_KVCACHE_SPACE`` (unless set). Its ``/v1/models`` says
``max_model_len``: the served context.

Warm swaps (``jurist sweep --warm-swap``): a server kept for swaps starts with ``--enable-sleep-mode``,
``VLLM_SERVER_DEV_MODE=1`` and the slot-neutral served name :data:`SWAP_SERVED_NAME` (vLLM keeps its launch
name, so a checkpoint's own name would be wrong after the first swap), and :meth:`VllmServer.swap_to`
moves it to other weights of the same architecture (:func:`swap_blocker`) without a restart.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurist.config import ModelSpec, arg_value
from jurist.engine.servers.base import HOST, ManagedServer, SwapFailed
from jurist.engine.servers.vllm_launch import VllmLaunch, cpu_flags, find_vllm, vllm_environment
from jurist.errors import JuristError

VLLM_HINT = "pip install 'jurist[vllm]'"
# Flags jurist sets itself, and the serve field to use instead where there is one.
_OWN_FLAGS = {
    "--host": None,
    "--port": None,
    "--served-model-name": None,
    "--tensor-parallel-size": "tensor_parallel",
    "-tp": "tensor_parallel",
    "--max-model-len": "n_ctx",
}


def _int_arg(args: Sequence[str], *names: str) -> int:
    value = arg_value(args, *names)
    try:
        return int(value) if value is not None else 1
    except ValueError:
        raise JuristError(f"serve args: {names[0]} {value!r} is not a whole number") from None


class VllmServer(ManagedServer):
    """One model (a local directory or a hub id), served under ``served_name``."""

    name = "vLLM server"
    requires_gpus = True

    def __init__(
        self,
        model: str,
        *,
        served_name: str,
        tensor_parallel: int | None = None,
        max_model_len: int | None = None,
        args: Sequence[str] = (),
        startup_timeout: float = 300.0,
        log_path: Path | None = None,
        gpu_ids: list[int] | None = None,
    ) -> None:
        super().__init__(startup_timeout=startup_timeout, log_path=log_path, gpu_ids=gpu_ids)
        self.model = model
        self.served_name = served_name
        self.args = list(args)
        self.tensor_parallel = tensor_parallel or (len(gpu_ids) if gpu_ids else 1)
        self.max_model_len = max_model_len
        self.swappable = False  # started for warm swaps (keep_for_swaps)
        self.launch: VllmLaunch | None = None  # how vLLM starts here (check_installed finds it)
        self._check_args()

    @classmethod
    def from_spec(cls, spec: ModelSpec, log_path: Path | None = None) -> VllmServer:
        """The server of a models-file entry with ``serve: {kind: vllm}`` (gpus already placed as ids)."""
        serve = spec.serve
        assert serve is not None
        return cls(
            serve.model,
            served_name=spec.model,
            tensor_parallel=serve.tensor_parallel,
            max_model_len=serve.n_ctx,
            args=serve.args,
            startup_timeout=serve.startup_timeout,
            log_path=log_path,
            gpu_ids=serve.gpus if isinstance(serve.gpus, list) else None,
        )

    def _check_args(self) -> None:
        """Refuse what would contradict jurist's own flags or leave GPUs idle, before anything starts."""
        for arg in self.args:
            flag = arg.partition("=")[0]
            if flag in _OWN_FLAGS:
                instead = _OWN_FLAGS[flag]
                use = f"use serve: {instead}" if instead else "jurist sets it"
                raise JuristError(f"serve args: {flag} is not allowed ({use})")
        if self.gpu_ids is None:
            return
        pipeline = _int_arg(self.args, "--pipeline-parallel-size", "-pp")
        data = _int_arg(self.args, "--data-parallel-size", "-dp")
        used = self.tensor_parallel * pipeline * data
        if used != len(self.gpu_ids):
            shape = f"tensor_parallel {self.tensor_parallel}"
            shape += f" x pipeline {pipeline}" if pipeline != 1 else ""
            shape += f" x data parallel {data}" if data != 1 else ""
            raise JuristError(
                f"{shape} uses {used} GPU(s) but gpus gives {len(self.gpu_ids)} "
                f"({','.join(str(g) for g in self.gpu_ids)}): make them equal "
                "(or add --pipeline-parallel-size / --data-parallel-size to args)"
            )

    def check_installed(self) -> None:
        self.launch = find_vllm()
        if self.launch is None:
            raise JuristError(
                f"vLLM is not installed (no `vllm` executable on PATH, no importable vllm): {VLLM_HINT}"
            )

    def command(self) -> list[str]:
        launch = self.launch
        assert launch is not None  # check_installed ran first
        cmd = [*launch.prefix, *launch.model_args(self.model), "--host", HOST, "--port", str(self.port)]
        cmd += ["--served-model-name", self.served_name]
        cmd += ["--tensor-parallel-size", str(self.tensor_parallel)]
        if self.max_model_len:
            cmd += ["--max-model-len", str(self.max_model_len)]
        if self.swappable and SLEEP_MODE_FLAG not in self.args:
            cmd.append(SLEEP_MODE_FLAG)
        if launch.cpu:
            cmd += cpu_flags(self.args)
        return cmd + self.args

    def environment(self) -> dict[str, str] | None:
        """This process's environment with the server's GPUs and what vLLM needs here
        (:func:`vllm_environment`); dev mode for a server kept for swaps."""
        cpu = self.launch is not None and self.launch.cpu
        env = vllm_environment(dict(super().environment() or os.environ), cpu=cpu)
        if self.swappable:
            env[DEV_MODE_ENV] = "1"
        return env

    @property
    def answers_to(self) -> str:
        return self.served_name

    def swaps_unavailable(self) -> str | None:
        launch = self.launch or find_vllm()
        if launch is not None and launch.cpu:  # measured: it refuses to start, after ~40 s of imports
            return "vLLM's sleep mode is not supported on CPU (this is a CPU build of vLLM)"
        return None

    def keep_for_swaps(self) -> bool:
        if self.swaps_unavailable() is not None:
            return False
        self.swappable = True
        self.served_name = SWAP_SERVED_NAME
        return True

    def swap_blocker(self, model: str) -> str | None:
        if not self.swappable:
            return "the server was not started for swaps"
        return swap_blocker(self.model, model)

    def swap_to(self, model: str) -> None:
        """vLLM's level-2 sleep, a weight reload from ``model``, and a wake-up (:func:`swap_steps`)."""
        if not self.swappable:
            raise SwapFailed("the server was not started with sleep mode")
        for method, path, body in swap_steps(model):
            self._dev_call(method, path, body)
        self.model = model

    def _dev_call(self, method: str, path: str, body: dict[str, Any] | None) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            raise SwapFailed("the server is no longer running")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(  # noqa: S310 (loopback only)
            f"http://{HOST}:{self.port}{path}",
            data=data if data is not None else b"",
            method=method,
            headers={"Content-Type": "application/json"},
        )
        what = f"{method} {path}" + (f" {body['method']}" if body and "method" in body else "")
        try:  # a reload reads every weight file: it may take as long as a start
            with urllib.request.urlopen(request, timeout=self.startup_timeout) as reply:  # noqa: S310
                reply.read()
        except urllib.error.HTTPError as exc:
            why = (
                " (no dev endpoints: VLLM_SERVER_DEV_MODE unset, or an older vLLM)" if exc.code == 404 else ""
            )
            raise SwapFailed(f"{what} answered HTTP {exc.code}{why}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise SwapFailed(f"{what} failed: {getattr(exc, 'reason', exc)}") from None

    def served_context_length(self) -> int | None:
        """``max_model_len`` of the served model's entry in ``/v1/models``."""
        entries = [e for e in self.models_listing if e.get("id") == self.served_name] or self.models_listing
        for entry in entries:
            value = entry.get("max_model_len")
            if isinstance(value, int) and value > 0:
                return value
        return self.max_model_len


# -- warm swaps ---------------------------------------------------------------------------------------------
# What vLLM documents, checked against its docs and code (not run on a GPU here):
# * docs/features/sleep_mode.md on vLLM's main branch (docs.vllm.ai "latest", read 2026-11): online serving
#   needs VLLM_SERVER_DEV_MODE=1 and --enable-sleep-mode; POST /sleep?level=N, POST /wake_up with optional
#   tags (weights, kv_cache), POST /collective_rpc, GET /is_sleeping; and for level 2 exactly this HTTP
#   order: sleep?level=2, wake_up?tags=weights, collective_rpc {"method": "reload_weights"},
#   wake_up?tags=kv_cache. Sleep mode is CUDA-only on the v0.10.2 page (sleep levels and wake-up tags
#   documented there), CUDA and ROCm on "latest". The v0.14.0 API reference shows the sleep router attached
#   only under VLLM_SERVER_DEV_MODE.
# * Not in the docs, read in vLLM's code only: the GPU worker's update_config(overrides) (load_config and
#   model_config only; it came with vLLM PR 20095, mid-2025), which is how the reload is pointed at another
#   folder: reload_weights loads through the model loader from model_config.model. POST /reset_prefix_cache
#   is another dev-mode endpoint (in the API server's dev block, later vllm/entrypoints/serve/cache): the
#   prefix cache must not answer from blocks the old weights computed.
# Any step that fails (a 404 from a vLLM without them, a 500) makes the caller stop the server and start
# the next checkpoint cold.
SLEEP_MODE_FLAG = "--enable-sleep-mode"
DEV_MODE_ENV = "VLLM_SERVER_DEV_MODE"
SWAP_SERVED_NAME = "jurist-checkpoint"
"""The name a server kept for swaps answers to, whichever checkpoint it holds (requests carry it)."""


def swap_steps(model: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    """The calls that move a sleep-mode vLLM server to the weights in ``model``, in order."""
    return [
        ("POST", "/sleep?level=2", None),  # weights and KV cache discarded
        ("POST", "/wake_up?tags=weights", None),  # weight memory back, nothing in it
        (
            "POST",
            "/collective_rpc",
            {"method": "update_config", "args": [{"model_config": {"model": model}}]},
        ),
        ("POST", "/collective_rpc", {"method": "reload_weights"}),
        ("POST", "/wake_up?tags=kv_cache", None),
        ("POST", "/reset_prefix_cache", None),
    ]


# What the API server reads once at launch (tokenizer, chat template, default sampling) or that shapes the
# model: a swap keeps these, so they must be the same in both checkpoints.
_LAUNCH_FILES = (
    "config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
    "special_tokens_map.json", "added_tokens.json", "tokenizer.model", "vocab.json", "merges.txt",
    "chat_template.jinja", "chat_template.json", "preprocessor_config.json",
)  # fmt: skip
_PATH_KEYS = ("_name_or_path", "name_or_path", "transformers_version")  # differ between saves, harmlessly


def swap_blocker(served: str, model: str) -> str | None:
    """Why a server holding the folder ``served`` should not swap to the folder ``model`` (None: it may):
    both must be local folders whose architecture, tokenizer, chat template and generation defaults (the
    files in :data:`_LAUNCH_FILES`) are the same, as for checkpoints of one training run."""
    old, new = Path(served).expanduser(), Path(model).expanduser()
    if not old.is_dir() or not new.is_dir():
        return f"{model if not new.is_dir() else served} is not a local model folder"
    for name in _LAUNCH_FILES:
        if _launch_file(old / name) != _launch_file(new / name):
            return f"{new.name}'s {name} differs from {old.name}'s"
    return None


def _launch_file(path: Path) -> Any:
    """A launch file's content for comparison (JSON parsed, paths and versions left out); None: absent."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if path.suffix != ".json":
        return data
    try:
        parsed = json.loads(data)
    except ValueError:
        return data
    if isinstance(parsed, dict):
        return {k: v for k, v in parsed.items() if k not in _PATH_KEYS}
    return parsed
