"""The IFEval leg of bench/bench_e2e.py: upstream's 541 prompts (``ifeval/input_data.jsonl`` of the shared
data), one answer each from the same mock, checked by rule; no judge. How each system runs it:

* jurist: ``jurist run --bench ifeval`` of this checkout, the data from ``$JURIST_DATA_DIR`` (the shared
  data folder), request cache on and empty, pre-run check on.
* eval_framework: its ``ifeval`` task, ``--ifeval-input`` on the same file, ``--num-threads`` = the
  concurrency; NLTK's ``punkt_tab`` from the shared data (``NLTK_DATA``, ``--ifeval-skip-nltk-download``).
* inspect: ``inspect eval`` of bench/e2e_inspect_ifeval.py (inspect_evals' IFEval task, its data from the
  same file), provider ``openai-api`` on the mock, ``--max-connections`` = the concurrency. Its NLTK check
  looks for ``punkt`` and ``punkt_tab`` under ``~/.cache/nltk_data`` and downloads what is missing, so the
  run gets a home folder of its own (under the benchmark's cache) where both names lead to the shared
  ``punkt_tab`` (the only one nltk 3.9+ reads): nothing is downloaded.
* floor: bench/e2e_floor.py on the same prompts.

Inspect is not installed by the benchmark: make its venv once, outside the repository, and pass its python
(``--inspect-python``, or ``$JURIST_BENCH_INSPECT_PYTHON``)::

    python3 -m venv /work/venvs/inspect
    /work/venvs/inspect/bin/pip install inspect-ai inspect-evals openai  # openai: its openai-api provider
    # inspect_evals' IFEval scorer needs upstream's checker package, which is not on PyPI:
    /work/venvs/inspect/bin/pip install git+https://github.com/josejg/instruction_following_eval
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import e2e_systems as systems

SHARED_DATA = systems.ROOT.parent / "shared" / "data"
IFEVAL_INPUT = SHARED_DATA / "ifeval" / "input_data.jsonl"
NLTK_DATA = SHARED_DATA / "nltk_data"
INSPECT_TASK = Path(__file__).resolve().parent / "e2e_inspect_ifeval.py"
INSPECT_PYTHON_ENV = "JURIST_BENCH_INSPECT_PYTHON"


def prompts(limit: int | None) -> int:
    """How many prompts the leg sends (one request each): all, or the first ``limit``."""
    with IFEVAL_INPUT.open(encoding="utf-8") as fh:
        count = sum(1 for line in fh if line.strip())
    return count if limit is None else min(limit, count)


def limited(limit: int | None, option: str) -> list[str]:
    """``[option, N]`` to keep the first ``limit`` prompts, nothing for all."""
    return [] if limit is None else [option, str(limit)]


def jurist_launch(
    run: Path, url: str, conc: int, limit: int | None, src: Path = systems.ROOT / "src"
) -> systems.Launch:
    """``jurist run --bench ifeval`` of the source tree ``src``."""
    entry = {"api_type": "openai", "parallel": conc, "max_tokens": 2048, "temperature": 0.0}
    models = {systems.CANDIDATE: {"model": systems.CANDIDATE, "endpoints": [{"api_base": url}], **entry}}
    (run / "models.json").write_text(json.dumps(models))
    argv = [sys.executable, "-m", "jurist", "run", "--bench", "ifeval"]
    argv += ["--models-file", str(run / "models.json"), "--model", systems.CANDIDATE]
    argv += ["--max-concurrency", str(conc), "--no-progress", "--out", str(run / "out")]
    argv += limited(limit, "--limit")
    env = systems.with_bytecode(os.environ)
    env |= {
        "JURIST_CACHE_DIR": str(run / "cache"),
        "PYTHONPATH": str(src),
        "JURIST_DATA_DIR": str(SHARED_DATA),
    }
    return systems.Launch(argv, run, env)


def eval_framework_launch(python: Path, run: Path, url: str, conc: int, limit: int | None) -> systems.Launch:
    argv = [str(python), "-m", "eval_framework", "--task", "ifeval", "--model", systems.CANDIDATE]
    argv += ["--base-url", url, "--api-key", "bench", "--num-threads", str(conc), "--max-tokens", "2048"]
    argv += ["--output-dir", str(run / "out"), "--ifeval-input", str(IFEVAL_INPUT)]
    argv += ["--ifeval-skip-nltk-download", *limited(limit, "--max-examples")]
    env = {**os.environ, "EVAL_THROTTLE_STATE_PATH": str(run / "throttle.state"), "NLTK_DATA": str(NLTK_DATA)}
    return systems.Launch(argv, run, env)


def inspect_home() -> Path:
    """A home folder whose ``.cache/nltk_data/tokenizers`` holds ``punkt`` and ``punkt_tab``, both links
    to the shared ``punkt_tab`` (see the module's docstring)."""
    home = systems.CACHE / "inspect-home"
    tokenizers = home / ".cache" / "nltk_data" / "tokenizers"
    tokenizers.mkdir(parents=True, exist_ok=True)
    target = NLTK_DATA / "tokenizers" / "punkt_tab"
    for name in ("punkt", "punkt_tab"):
        link = tokenizers / name
        if link.is_symlink() and Path(os.readlink(link)) != target:
            link.unlink()  # left by a checkout elsewhere (the cache outlives it), perhaps dangling now
        if not link.exists() and not link.is_symlink():
            link.symlink_to(target)
    return home


def inspect_launch(python: Path, run: Path, url: str, conc: int, limit: int | None) -> systems.Launch:
    """``inspect eval`` of inspect_evals' IFEval task on the local file, as its CLI is typed (the venv's
    ``inspect`` script: ``python -m inspect_ai`` says nothing of an error under ``--display none``)."""
    argv = [str(python.parent / "inspect"), "eval", f"{INSPECT_TASK}@ifeval_local"]
    argv += ["--model", f"openai-api/mock/{systems.CANDIDATE}", "--model-base-url", url]
    argv += ["--max-connections", str(conc), "--max-tokens", "2048", "--temperature", "0"]
    argv += ["--log-dir", str(run / "logs"), "--display", "none", *limited(limit, "--limit")]
    env = {key: value for key, value in os.environ.items() if not key.startswith("INSPECT_")}
    env |= {
        "HOME": str(inspect_home()),
        "IFEVAL_INPUT": str(IFEVAL_INPUT),
        "MOCK_API_KEY": "bench",
        "NLTK_DATA": str(NLTK_DATA),
    }
    return systems.Launch(argv, run, env)


def floor_launch(run: Path, url: str, conc: int, limit: int | None) -> systems.Launch:
    launch = systems.floor_launch(run, IFEVAL_INPUT.parent, url, conc, False, questions=IFEVAL_INPUT)
    launch.argv += limited(limit, "--limit")
    return launch


def find_python(given: Path | None, variable: str) -> Path | None:
    """The interpreter of a peer's venv: ``given`` (an option), else ``$variable``, else none."""
    if given is not None:
        return given
    value = os.environ.get(variable)
    return Path(value) if value else None
