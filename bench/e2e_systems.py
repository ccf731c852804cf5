"""The systems bench/bench_e2e.py compares, each set up so that it does the same work as the others: the same
Arena-Hard v2.0 questions and baseline answers (one data folder all three read), the same mock server, the
same number of requests in flight, the same candidate and judge names. What each one is, and how it runs:

* jurist: ``jurist run`` of this checkout (the interpreter running the benchmark), request cache on and
  empty, pre-run check on: a first run as a user types it; its bytecode cached (outside the checkout) as
  an installed package's is; the judge card off (``--no-judge-card``). ``jurist-card``: the same with
  the judge card on (its probes are requests of their own, counted in ``req``).
* eval_framework: PyPI ``llm-eval-framework`` (pinned) in a venv of its own (``--eval-framework-python``
  or ``$JURIST_BENCH_EVALFW_PYTHON``: one made beforehand, e.g. ``/work/venvs/evalfw``), its
  ``arena-hard`` task with ``--arena-hard-dir`` on the shared data folder, ``--num-threads`` = the
  concurrency, its default request throttle (5 ms between starts) on a state file of the run's own.
* floor: bench/e2e_floor.py, no harness at all: the same requests from one aiohttp session and nothing
  else, to show what any client pays on this machine above R·L/C.
* arena-hard-auto: upstream's ``gen_answer.py`` then ``gen_judgment.py`` from a checkout (or a bare git
  directory, read with ``git archive``), run in a folder laid out as upstream expects, ``parallel`` = the
  concurrency, in a venv with its requirements (pinned; gradio, plotly and scikit-learn left out: these
  two scripts never import them).

The IFEval leg (Inspect AI among the systems) is bench/e2e_ifeval.py. Venvs and extracted code live under
``$XDG_CACHE_HOME/jurist-bench-e2e`` (default ``~/.cache``), never in the repository.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "arena-hard"
QUESTIONS = SHARED / "data" / "arena-hard-v2.0" / "question.jsonl"
PROMPTS_DIR = SHARED / "official-prompts"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jurist-bench-e2e"
BENCH = "arena-hard-v2.0"
CANDIDATE = "bench-model"
JUDGE = "judge-good"  # the mock's rule judge: a verdict label every time
BASELINES = ("o3-mini-2025-01-31", "gemini-2.0-flash-001")
EVAL_FRAMEWORK = ("llm-eval-framework==0.1.0",)
# arena-hard-auto's requirements.txt (196f6b8) at the versions measured, less what the scripts never import
ARENA_HARD_AUTO = (
    "openai==3.54.0",
    "tiktoken==0.14.0",
    "numpy==2.4.6",
    "pandas==3.1.1",
    "shortuuid==1.0.13",
    "tqdm==4.70.1",
    "pyyaml==6.0.3",
    "requests==2.34.2",
    "boto3==1.44.5",
)
ARENA_HARD_AUTO_FILES = ("gen_answer.py", "gen_judgment.py", "utils", "config/arena-hard-v2.0.yaml")
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


@dataclass
class Launch:
    """One command to time: what to run, where, with which environment."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]


def ensure_venv(name: str, requirements: tuple[str, ...]) -> Path:
    """A venv under the cache with exactly ``requirements`` installed (once); returns its python."""
    folder = CACHE / name
    python = folder / "bin" / "python"
    stamp = folder / ".requirements"
    wanted = "\n".join(requirements)
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    print(f"setting up {folder} ({' '.join(requirements)})", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)
    stamp.write_text(wanted)
    return python


def eval_framework_data(python: Path) -> Path:
    """eval_framework's bundled Arena-Hard v2.0 folder (questions and both baselines' answers)."""
    found = sorted(
        python.parent.parent.glob(f"lib/python*/site-packages/eval_framework/tasks/arena_hard/data/{BENCH}")
    )
    if not found:
        raise SystemExit(f"eval_framework's bundled {BENCH} data not found under {python.parent.parent}")
    return found[0]


def build_data(work: Path, bundled: Path, limit: int | None) -> Path:
    """``work/data/arena-hard-v2.0``: the questions (the first ``limit``) and both baselines' answers.

    eval_framework's gemini-2.0-flash-001 file lacks two hard_prompt questions, which no system judges
    against gemini; they are filled from o3-mini's rows so that every system finds a complete file (jurist
    ships a baseline only when its file covers every question)."""
    data = work / "data" / BENCH
    (data / "model_answer").mkdir(parents=True, exist_ok=True)
    lines = QUESTIONS.read_bytes().splitlines(keepends=True)[:limit]  # bytes: only \n ends a line
    (data / "question.jsonl").write_bytes(b"".join(lines))
    if limit is None and (bundled / "question.jsonl").read_bytes() != QUESTIONS.read_bytes():
        raise SystemExit("eval_framework's bundled question.jsonl differs from the shared one")
    uids = [json.loads(line)["uid"] for line in lines]
    rows = {name: _rows_by_uid(bundled / "model_answer" / f"{name}.jsonl") for name in BASELINES}
    for name in BASELINES:
        with (data / "model_answer" / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for uid in uids:
                row = rows[name].get(uid) or {**rows[BASELINES[0]][uid], "model": name}
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return data


def _rows_by_uid(path: Path) -> dict[str, dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return {row["uid"]: row for row in map(json.loads, fh)}


def jurist_launch(
    run: Path, data: Path, url: str, conc: int, full: bool, src: Path = ROOT / "src", judge_card: bool = False
) -> Launch:
    """``jurist run`` of the source tree ``src`` (this checkout's unless told); the judge card off unless
    ``judge_card`` (the peers do the same work without one; its probes are jurist's own extra work)."""
    entry = {"api_type": "openai", "parallel": conc, "max_tokens": 2048, "temperature": 0.0}
    models = {
        alias: {"model": alias, "endpoints": [{"api_base": url}], **entry} for alias in (CANDIDATE, JUDGE)
    }
    (run / "models.json").write_text(json.dumps(models))  # JSON is YAML
    argv = [sys.executable, "-m", "jurist", "run", "--bench", str(data / "question.jsonl")]
    argv += ["--models-file", str(run / "models.json"), "--model", CANDIDATE, "--max-concurrency", str(conc)]
    argv += ["--no-progress", "--out", str(run / "out")]
    argv += ["--judge", JUDGE] if full else ["--inference-only"]
    if full and not judge_card and (src / "jurist" / "audit").is_dir():
        argv += ["--no-judge-card"]
    env = {**with_bytecode(os.environ), "JURIST_CACHE_DIR": str(run / "cache"), "PYTHONPATH": str(src)}
    if PROMPTS_DIR.is_dir():
        env["JURIST_ARENA_HARD_PROMPTS"] = str(PROMPTS_DIR)
    return Launch(argv, run, env)


def with_bytecode(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with Python's bytecode cache on, kept under the benchmark's cache (not in the checkout): a
    source tree on ``PYTHONPATH`` is otherwise compiled again at every launch where the host sets
    ``PYTHONDONTWRITEBYTECODE`` (this one does: 0.1 s of jurist's start), while a venv's packages have
    theirs from pip."""
    out = {key: value for key, value in env.items() if key != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(CACHE / "pycache")
    return out


def floor_launch(
    run: Path, data: Path, url: str, conc: int, full: bool, questions: Path | None = None
) -> Launch:
    """bench/e2e_floor.py: the same requests from the least client (this interpreter, its aiohttp), on
    ``data``'s question.jsonl or the ``questions`` file given (IFEval's prompts)."""
    questions = questions or data / "question.jsonl"
    argv = [sys.executable, str(ROOT / "bench" / "e2e_floor.py"), "--questions", str(questions)]
    argv += ["--base-url", url, "--conc", str(conc), "--out", str(run / "answers.jsonl")]
    argv += ["--full"] if full else []
    return Launch(argv, run, with_bytecode(os.environ))


def eval_framework_launch(python: Path, run: Path, work: Path, url: str, conc: int, full: bool) -> Launch:
    argv = [str(python), "-m", "eval_framework", "--task", "arena-hard", "--model", CANDIDATE]
    argv += ["--base-url", url, "--api-key", "bench", "--num-threads", str(conc)]
    argv += ["--output-dir", str(run / "out"), "--arena-hard-dir", str(work)]
    argv += ["--judge-model", JUDGE] if full else ["--inference-only"]
    env = {**os.environ, "EVAL_THROTTLE_STATE_PATH": str(run / "throttle.state")}
    return Launch(argv, run, env)


def arena_hard_auto_code(source: Path) -> Path:
    """The scripts the benchmark runs: ``source`` itself when it is a checkout, else extracted once from a
    bare git directory (``git archive HEAD``, read-only) into the cache."""
    if (source / "gen_answer.py").is_file():
        return source
    head = subprocess.run(
        ["git", "--git-dir", str(source), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    code = CACHE / f"arena-hard-auto-{head[:12]}"
    if not (code / "gen_judgment.py").is_file():
        archive = subprocess.run(
            ["git", "--git-dir", str(source), "archive", "--format=tar", "HEAD", *ARENA_HARD_AUTO_FILES],
            check=True,
            capture_output=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(code, filter="data")
    return code


def tiktoken_cache() -> Path:
    """tiktoken's cache folder holding o200k_base (arena-hard-auto counts answer tokens with it and would
    download it): the ranks file jurist reads offline, under the name tiktoken looks for."""
    from jurist.tokens import find_o200k_ranks_file

    folder = CACHE / "tiktoken"
    target = folder / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if not target.exists():
        folder.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzip.decompress(find_o200k_ranks_file().read_bytes()))
    return folder


def arena_hard_auto_launch(
    python: Path, code: Path, run: Path, data: Path, url: str, conc: int, full: bool
) -> Launch:
    """Upstream's layout in ``run``: ``data/<bench>/`` (links to the shared questions and baselines; its
    answers and judgments are written there) and ``config/`` pointing both aliases at the mock."""
    import yaml

    own = run / "data" / BENCH
    (own / "model_answer").mkdir(parents=True)
    (own / "question.jsonl").symlink_to(data / "question.jsonl")
    for name in BASELINES:
        (own / "model_answer" / f"{name}.jsonl").symlink_to(data / "model_answer" / f"{name}.jsonl")
    config = run / "config"
    config.mkdir()
    entry = {"api_type": "openai", "parallel": conc, "max_tokens": 2048, "temperature": 0.0}
    endpoints = [{"api_base": url, "api_key": "bench"}]
    api = {alias: {"model": alias, "endpoints": endpoints, **entry} for alias in (CANDIDATE, JUDGE)}
    (config / "api_config.yaml").write_text(json.dumps(api))
    (config / "gen_answer_config.yaml").write_text(
        json.dumps({"bench_name": BENCH, "model_list": [CANDIDATE]})
    )
    judging = yaml.safe_load((code / "config" / f"{BENCH}.yaml").read_text())
    judging |= {"judge_model": JUDGE, "model_list": [CANDIDATE], "bench_name": BENCH}
    (config / f"{BENCH}.yaml").write_text(json.dumps(judging))
    answer = f"{shlex.quote(str(python))} {shlex.quote(str(code / 'gen_answer.py'))}"
    judge = f"{shlex.quote(str(python))} {shlex.quote(str(code / 'gen_judgment.py'))}"
    script = f"{answer} && exec {judge}" if full else f"exec {answer}"
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tiktoken_cache()), "OPENAI_API_KEY": "bench"}
    return Launch(["/bin/sh", "-c", script], run, env)


def clear_run(run: Path) -> Path:
    if run.exists():
        shutil.rmtree(run)
    run.mkdir(parents=True)
    return run
