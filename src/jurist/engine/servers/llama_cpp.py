"""llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) on 127.0.0.1.

It runs on the CPU here; ``gpus`` only becomes its ``CUDA_VISIBLE_DEVICES`` (for a CUDA build of
llama-cpp-python with ``--n_gpu_layers`` in ``args``). Its ``/v1/models`` does not say the context size, so
that is read from the server's own log line (``llama_context: n_ctx = N``), else taken from ``n_ctx``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from jurist.config import ModelSpec
from jurist.engine.servers.base import HOST, ManagedServer
from jurist.errors import JuristError

LLAMA_CPP_HINT = "pip install 'jurist[embedded]'  (llama-cpp-python[server])"
_LOGGED_N_CTX = re.compile(r"^llama_(?:new_)?context(?:_with_model)?: n_ctx\s*=\s*(\d+)", re.MULTILINE)


class LlamaCppServer(ManagedServer):
    """One GGUF model, served under ``alias`` (the model name requests carry)."""

    name = "llama.cpp server"

    def __init__(
        self,
        model_path: Path,
        *,
        alias: str,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        args: Sequence[str] = (),
        startup_timeout: float = 300.0,
        log_path: Path | None = None,
        missing_hint: str | None = None,
        gpu_ids: list[int] | None = None,
    ) -> None:
        super().__init__(startup_timeout=startup_timeout, log_path=log_path, gpu_ids=gpu_ids)
        self.model_path = model_path
        self.alias = alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.args = list(args)
        self.missing_hint = missing_hint

    @classmethod
    def from_spec(cls, spec: ModelSpec, log_path: Path | None = None) -> LlamaCppServer:
        """The server of a models-file entry with ``serve: {kind: llama.cpp}``."""
        assert spec.serve is not None
        from jurist.engine.local.embedded import EMBEDDED_GGUF, INSTALL_HINT

        weights = Path(spec.serve.model)
        gpus = spec.serve.gpus
        return cls(
            weights,
            alias=spec.model,
            n_ctx=spec.serve.n_ctx,
            args=spec.serve.args,
            startup_timeout=spec.serve.startup_timeout,
            log_path=log_path,
            missing_hint=INSTALL_HINT if weights.name == EMBEDDED_GGUF else None,
            gpu_ids=gpus if isinstance(gpus, list) else None,  # a count with no GPU in sight: the CPU
        )

    def check_installed(self) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise JuristError(f"llama-cpp-python is not installed: {LLAMA_CPP_HINT}")
        if not self.model_path.is_file():
            hint = f": {self.missing_hint}" if self.missing_hint else ""
            raise JuristError(f"the llama.cpp model file {self.model_path} does not exist{hint}")

    def command(self) -> list[str]:
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_path),
            "--model_alias",
            self.alias,
            "--host",
            HOST,
            "--port",
            str(self.port),
        ]
        if self.n_ctx:
            cmd += ["--n_ctx", str(self.n_ctx)]
        if self.n_threads:
            cmd += ["--n_threads", str(self.n_threads)]
        return cmd + self.args

    def served_context_length(self) -> int | None:
        logged = _LOGGED_N_CTX.findall(self.log_since_start())
        return int(logged[-1]) if logged else self.n_ctx
