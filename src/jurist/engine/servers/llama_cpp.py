"""llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path

from jurist.config import ModelSpec
from jurist.engine.servers.base import HOST, ManagedServer
from jurist.errors import JuristError

LLAMA_CPP_HINT = "pip install 'jurist[embedded]'  (llama-cpp-python[server])"


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
    ) -> None:
        super().__init__(startup_timeout=startup_timeout, log_path=log_path)
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
        from jurist.engine.embedded import EMBEDDED_GGUF, INSTALL_HINT

        weights = Path(spec.serve.model)
        return cls(
            weights,
            alias=spec.model,
            n_ctx=spec.serve.n_ctx,
            args=spec.serve.args,
            startup_timeout=spec.serve.startup_timeout,
            log_path=log_path,
            missing_hint=INSTALL_HINT if weights.name == EMBEDDED_GGUF else None,
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
