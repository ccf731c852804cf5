"""vLLM's OpenAI-compatible server (``vllm serve``) on 127.0.0.1, on the GPUs its spec was placed on.

The command is ``vllm serve MODEL --host 127.0.0.1 --port P --served-model-name NAME
--tensor-parallel-size K [--max-model-len N] ARGS``; the GPUs become its ``CUDA_VISIBLE_DEVICES``. vLLM is
not a dependency of jurist: the ``vllm`` executable is looked up on PATH (then beside this Python, for an
environment that is not activated). Its ``/v1/models`` says ``max_model_len``: the served context.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from jurist.config import ModelSpec, arg_value
from jurist.engine.servers.base import HOST, ManagedServer
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


def vllm_executable() -> str | None:
    """Where ``vllm`` is: on PATH, else in the bin directory of the Python running jurist."""
    return shutil.which("vllm") or shutil.which("vllm", path=str(Path(sys.executable).parent))


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
        if vllm_executable() is None:
            raise JuristError(f"vLLM is not installed (no `vllm` executable on PATH): {VLLM_HINT}")

    def command(self) -> list[str]:
        executable = vllm_executable()
        assert executable is not None  # check_installed ran first
        cmd = [executable, "serve", self.model, "--host", HOST, "--port", str(self.port)]
        cmd += ["--served-model-name", self.served_name]
        cmd += ["--tensor-parallel-size", str(self.tensor_parallel)]
        if self.max_model_len:
            cmd += ["--max-model-len", str(self.max_model_len)]
        return cmd + self.args

    def served_context_length(self) -> int | None:
        """``max_model_len`` of the served model's entry in ``/v1/models``."""
        entries = [e for e in self.models_listing if e.get("id") == self.served_name] or self.models_listing
        for entry in entries:
            value = entry.get("max_model_len")
            if isinstance(value, int) and value > 0:
                return value
        return self.max_model_len
