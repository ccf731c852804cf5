"""``jurist sweep`` on the mock: checkpoints are vLLM model folders served by the stand-in
``tests/fake_vllm/vllm`` (the real vLLM server class and its command line; the stand-in records each start
with its CUDA_VISIBLE_DEVICES and process group and serves the mock OpenAI API), CUDA_VISIBLE_DEVICES=0,1,2,3
plays a machine with four GPUs, and the judge is the in-process mock's ``judge-good``. A server factory
wraps each real server to count what it served before it is stopped, so resumes are checked by counting
requests. The real model's sweep is at the end (slow).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, build_sweep_plan, run_config, write_models_file
from jurist.config import ModelSpec, load_models_file
from jurist.engine.servers import ManagedServer, server_for
from jurist.errors import JuristError
from jurist.run.tasks import run_tasks
from jurist.store.jsonl import read_jsonl
from jurist.sweep.checkpoints import find_checkpoints, step_of
from jurist.sweep.launch import run_sweep
from jurist.sweep.plan import SweepPlan, checkpoint_spec, gpu_slots, judging_config
from test_pool import group_gone

FAKE_VLLM_DIR = Path(__file__).resolve().parent / "fake_vllm"
FOUR_GPUS = "0,1,2,3"
RULES = 3  # prompts of the rule-checked task (a tiny IFEval file)
LIMIT = 3  # questions of every task


def use_fake_vllm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-in first on PATH, four pretend GPUs; returns the file its starts are recorded in."""
    interpreter_dir = Path(sys.executable).parent  # `python3` with aiohttp, for the stand-in's shebang
    monkeypatch.setenv(
        "PATH", f"{FAKE_VLLM_DIR}{os.pathsep}{interpreter_dir}{os.pathsep}{os.environ['PATH']}"
    )
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", FOUR_GPUS)
    record = tmp_path / "vllm-starts.jsonl"
    monkeypatch.setenv("FAKE_VLLM_RECORD", str(record))
    monkeypatch.delenv("FAKE_VLLM_MODE", raising=False)
    return record


def starts(record: Path) -> list[dict[str, Any]]:
    """The stand-in's recorded starts: argv, cuda_visible_devices, pid, pgid."""
    return read_jsonl(record) if record.exists() else []


def served_name(start: dict[str, Any]) -> str:
    argv = start["argv"]
    return str(argv[argv.index("--served-model-name") + 1])


def checkpoint_dirs(root: Path, steps: list[int]) -> Path:
    """A training run's folder: one model folder (config.json) per step."""
    for step in steps:
        folder = root / f"step_{step}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text("{}")
    return root


def rule_file(path: Path, n: int = RULES) -> Path:
    """IFEval-format prompts; the mock repeats the prompt, so even ones (no comma) pass no_comma."""
    rows = [
        {
            "key": k,
            "prompt": f"question {k} answer" if k % 2 == 0 else f"question {k}, answer",
            "instruction_id_list": ["punctuation:no_comma"],
            "kwargs": [{}],
        }
        for k in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def sweep_plan(tmp_path: Path, judge_url: str, **options: Any) -> SweepPlan:
    """ifeval (a rule file) and starter, 2 samples, limit 3, judged by the mock's judge-good."""
    models = write_models_file(tmp_path / "judges.yaml", judge_url, {"judge-good": {}})
    arguments: dict[str, Any] = {
        "checkpoints": str(tmp_path / "run"),
        "tasks": "ifeval,starter",
        "bench_options": [f"ifeval:file={rule_file(tmp_path / 'rules.jsonl')}"],
        "samples": 2,
        "limit": LIMIT,
        "models_file": models,
        "judges": ["judge-good"],
        "out": tmp_path / "sweep",
        "progress": False,
        "check": False,
        "max_attempts": 3,
        "retry_base_delay": 0.01,
    }
    return build_sweep_plan(**(arguments | options))


def answers_per_checkpoint(samples: int = 2) -> int:
    return (RULES + LIMIT) * samples


def requests_per_checkpoint() -> int:
    """One request per question: the stand-in, like vLLM, honours ``n``, so both samples come at once."""
    return RULES + LIMIT


def questions_missing(sweep: Path, name: str, samples: int = 2) -> int:
    """Questions of a checkpoint that lack a sample on disk: each costs exactly one request on resume."""
    whole = 0
    for task in ("ifeval", "starter"):
        path = sweep / name / task / "answers" / f"{name}.jsonl"
        seen = Counter(str(r["uid"]) for r in (read_jsonl(path) if path.exists() else []))
        whole += sum(1 for count in seen.values() if count >= samples)
    return requests_per_checkpoint() - whole


class CountingServers:
    """A server factory: each spec's own server (the real kind), with what it served counted just before
    it is stopped (the stand-in's ``/v1/_stats``), and when it started and stopped."""

    def __init__(self, slow_start: dict[str, float] | None = None) -> None:
        self.slow_start = slow_start or {}  # alias -> seconds of extra load time
        self.requests: Counter[str] = Counter()
        self.gpus: dict[str, list[int] | None] = {}
        self.started: dict[str, float] = {}
        self.stopped: dict[str, float] = {}
        self._lock = threading.Lock()

    def __call__(self, spec: ModelSpec, log_path: Path | None) -> ManagedServer:
        server = server_for(spec, log_path)
        start, stop = server.start, server.stop
        alias = spec.alias

        def counted_start() -> None:
            time.sleep(self.slow_start.get(alias, 0.0))
            start()
            with self._lock:
                self.started[alias] = time.monotonic()
                self.gpus[alias] = server.gpu_ids

        def counted_stop() -> None:
            process = server.process
            if process is not None and process.poll() is None and server.port:
                try:
                    with urllib.request.urlopen(f"{server.base_url}/_stats", timeout=5) as reply:  # noqa: S310
                        served = int(json.loads(reply.read())["requests"])
                except OSError:
                    served = 0
                with self._lock:
                    self.requests[alias] += served
            stop()
            with self._lock:
                self.stopped.setdefault(alias, time.monotonic())

        server.start = counted_start  # type: ignore[method-assign]
        server.stop = counted_stop  # type: ignore[method-assign]
        return server


def lines(path: Path) -> int:
    return len(read_jsonl(path)) if path.exists() else 0


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _states(sweep: Path) -> dict[str, tuple[str, str | None]]:
    return {c["name"]: (c["status"], c["error"]) for c in _read(sweep / "sweep.json")["checkpoints"]}


def _answered(sweep: Path, name: str) -> int:
    """Answers on disk of one checkpoint, all tasks (each (question, sample) once)."""
    return sum(lines(sweep / name / task / "answers" / f"{name}.jsonl") for task in ("ifeval", "starter"))


# -- what the command is given ---------------------------------------------------------------------
def test_checkpoints_from_a_run_directory_a_glob_or_a_list(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for name in ("checkpoint-1000", "checkpoint-200", "global_step50", "step_300.gguf", "notes"):
        (run / name).mkdir(parents=True) if not name.endswith(".gguf") else (run / name).touch()
    for folder in ("checkpoint-1000", "checkpoint-200"):
        (run / folder / "config.json").write_text("{}")
    (run / "global_step50" / "model-q4.gguf").touch()  # a llama.cpp export: the folder holds one GGUF
    found = find_checkpoints(str(run))
    assert [(c.name, c.step) for c in found] == [
        ("global_step50", 50), ("checkpoint-200", 200), ("step_300", 300), ("checkpoint-1000", 1000),
    ]  # fmt: skip
    assert found[0].path == (run / "global_step50" / "model-q4.gguf").absolute()
    assert found[0].default_kind == "llama.cpp" and found[1].default_kind == "vllm"
    assert [c.name for c in find_checkpoints(str(run / "checkpoint-*"))] == [
        "checkpoint-200",
        "checkpoint-1000",
    ]
    listed = find_checkpoints(f"{run / 'step_300.gguf'},{run / 'checkpoint-200'},{tmp_path / 'final'}")
    assert [(c.name, c.step) for c in listed] == [("step_300", 300), ("checkpoint-200", 200), ("final", 2)]
    assert find_checkpoints(str(run / "checkpoint-200"))[0].name == "checkpoint-200"  # a model folder itself
    assert step_of("iter_0000100") == 100 and step_of("global_step100") == 100 and step_of("final") is None
    for text, problem in (
        (str(run / "notes"), "no step_"),
        (str(tmp_path / "nowhere"), "does not exist"),
        (str(run / "zzz*"), "matches nothing"),
        (f"{run / 'checkpoint-200'},{tmp_path / 'b' / 'checkpoint-200'}", "the same name"),
        (" , ", "name a directory"),
    ):
        with pytest.raises(JuristError, match=problem):
            find_checkpoints(text)


def test_gpu_slots_are_groups_of_the_tensor_parallel_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", FOUR_GPUS)
    assert gpu_slots("0,1,2,3", None, None) == ((0,), (1,), (2,), (3,))
    assert gpu_slots("0,1,2,3", 2, None) == ((0, 1), (2, 3))
    assert gpu_slots("2", None, None) == ((0,), (1,))  # a count: the first visible ones
    assert gpu_slots("3,", None, None) == ((3,),)  # one id
    assert gpu_slots(None, None, 3) == (None, None, None) and gpu_slots(None, None, None) == (None,)
    for gpus, width, servers, problem in (
        ("0,1,2", 2, None, "does not divide"),
        ("0,7", None, None, "not visible"),
        ("0,0", None, None, "twice"),
        ("5", None, None, "asks for 5 GPU"),
        ("0", None, None, "a count of no GPU"),
        ("a,b", None, None, "give GPU ids"),
        ("0,1", None, 2, "--servers counts CPU servers"),
    ):
        with pytest.raises(JuristError, match=problem):
            gpu_slots(gpus, width, servers)


def test_a_checkpoint_is_a_served_model_and_the_models_file_resumes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    run = checkpoint_dirs(tmp_path / "run", [100])
    (run / "step_200.gguf").touch()
    settings = tmp_path / "settings.yaml"
    settings.write_text(
        "ckpt:\n  model: x\n  max_tokens: 77\n  temperature: 0.3\n  top_p: 0.9\n  system_prompt: Be brief.\n"
        "  serve: {kind: vllm, model: /unused, args: [--max-num-seqs, '32'], startup_timeout: 60}\n"
    )
    plan = build_sweep_plan(
        checkpoints=str(run), tasks="ifeval", samples=4, out=tmp_path / "sweep", check=False
    )
    vllm, gguf = plan.checkpoints
    limited = build_sweep_plan(
        checkpoints=str(run), tasks="ifeval,starter", limit="ifeval=20", out=tmp_path, check=False
    )
    assert limited.limits == {"ifeval": 20}  # starter: all its questions
    assert build_sweep_plan(checkpoints=str(run), tasks="ifeval,starter", limit=5, out=tmp_path).limits == {
        "ifeval": 5, "starter": 5,
    }  # fmt: skip
    spec = checkpoint_spec(plan, vllm, (2, 3))
    assert spec.alias == spec.model == "step_100" and spec.serve is not None
    assert (
        spec.serve.kind == "vllm" and spec.serve.gpus == [2, 3] and spec.serve.model == str(run / "step_100")
    )
    assert spec.parallel == 256 and spec.max_tokens == 1024  # vLLM's --max-num-seqs default
    assert spec.temperature == 0.7 and spec.passthrough_params() == {"seed": 0}  # 4 samples: they differ
    cpu = checkpoint_spec(plan, gguf)
    assert (
        cpu.serve is not None
        and cpu.serve.kind == "llama.cpp"
        and cpu.parallel == 1
        and cpu.max_tokens == 256
    )
    custom = build_sweep_plan(
        checkpoints=str(run / "step_100"), tasks="ifeval", models_file=settings, checkpoint_settings="ckpt",
        out=tmp_path / "sweep", check=False,
    )  # fmt: skip
    spec = checkpoint_spec(custom, custom.checkpoints[0], (1,))
    assert (spec.max_tokens, spec.temperature, spec.system_prompt) == (77, 0.3, "Be brief.")
    assert spec.passthrough_params() == {"top_p": 0.9} and spec.parallel == 32
    assert (
        spec.serve is not None
        and spec.serve.args == ["--max-num-seqs", "32"]
        and spec.serve.startup_timeout == 60
    )
    from jurist.sweep.plan import write_models_file

    loaded = load_models_file(write_models_file(plan), aliases=[])
    assert loaded["step_100"] == checkpoint_spec(plan, vllm)  # no GPU ids: a slot adds its own
    assert loaded["step_200"].serve is not None and loaded["step_200"].serve.model == str(
        run / "step_200.gguf"
    )


def test_bad_sweep_commands_are_one_line_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", FOUR_GPUS)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    monkeypatch.setenv("JURIST_JUDGEBENCH_DIR", str(SHARED_DATA / "judgebench"))
    run = str(checkpoint_dirs(tmp_path / "run", [1, 2]))
    base: dict[str, Any] = {"checkpoints": run, "out": tmp_path / "sweep", "check": False}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"tasks": "no-such-task"}, "neither a known benchmark"),
        ({"tasks": "judgebench"}, "fixed response pairs"),
        ({"tasks": "ifeval,starter", "bench_options": ["version=v1"]}, "say which task"),
        ({"tasks": "starter", "judges": ["j"]}, r"model .j. is not defined \(no --models-file\)"),
        ({"tasks": "ifeval", "judges": ["j"]}, "--judge j: applies to none of the tasks"),
        ({"tasks": "ifeval,starter", "baselines": ["ifeval=b"]}, "ifeval is checked by rule"),
        ({"tasks": "starter", "baselines": ["gone.jsonl"]}, "--baseline gone.jsonl: no such answers file"),
        ({"tasks": "ifeval", "ray": "", "gpus": "0,1"}, "--ray places each checkpoint"),
        ({"tasks": "ifeval", "gpus": "0,1", "local": True}, "--local runs a checkpoint"),
        ({"tasks": "ifeval", "checkpoint_settings": "x"}, "give --models-file too"),
        ({"tasks": "ifeval", "limit": "starter=3"}, "not one of the tasks"),
        ({"tasks": "ifeval", "limit": "0"}, "give a whole number"),
    ]
    for options, problem in cases:
        with pytest.raises(JuristError, match=problem):
            build_sweep_plan(**(base | options))
    assert not (tmp_path / "sweep").exists()  # nothing written for a refused command
    done = subprocess.run(
        [sys.executable, "-m", "jurist", "sweep", "--checkpoints", run, "--tasks", "ifeval",
         "--gpus", "0,1,2", "--tensor-parallel", "2"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "--tensor-parallel 2 does not divide the 3 GPU(s)" in done.stderr


def test_ray_takes_an_optional_address() -> None:
    """``--ray`` alone is a new local Ray instance, in the command's parser (no argv rewriting)."""
    import typer
    from typer.testing import CliRunner

    from jurist.commands.parsing import JuristCommand

    seen: dict[str, Any] = {}
    app = typer.Typer()

    @app.command(cls=JuristCommand)
    def sweep(ray: str | None = typer.Option(None, "--ray"), limit: int = 0) -> None:
        seen["ray"], seen["limit"] = ray, limit

    for args, expected in (
        (["--ray"], "local"), (["--ray", "--limit", "3"], "local"), (["--ray", "head:6379"], "head:6379"),
        ([], None),
    ):  # fmt: skip
        assert CliRunner().invoke(app, args).exit_code == 0
        assert seen["ray"] == expected


# -- sweeps on the stand-in ------------------------------------------------------------------------
def test_a_sweep_runs_every_checkpoint_on_its_gpus_and_a_rerun_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_server: Any
) -> None:
    record = use_fake_vllm(tmp_path, monkeypatch)
    judge = mock_server()
    checkpoint_dirs(tmp_path / "run", [100, 200, 300])
    plan = sweep_plan(tmp_path, judge.base_url, gpus="0,1")
    assert plan.slots == ((0,), (1,))  # three checkpoints on two GPUs: in rounds
    servers = CountingServers()
    assert run_sweep(plan, server_factory=servers).exit_code == 0
    names = [f"step_{n}" for n in (100, 200, 300)]
    started = starts(record)
    assert sorted(served_name(s) for s in started) == names  # one server per checkpoint, each started once
    for start in started:
        assert start["cuda_visible_devices"] in ("0", "1")
        assert start["argv"][start["argv"].index("--tensor-parallel-size") + 1] == "1"
    assert servers.requests == dict.fromkeys(names, requests_per_checkpoint())
    assert judge.stats.requests == len(names) * LIMIT * 2 * 2  # questions x samples x two games
    sweep = plan.out
    doc = _read(sweep / "sweep.json")
    assert (doc["version"], doc["name"], doc["tasks"], doc["samples"], doc["judges"]) == (
        1, "sweep", ["ifeval", "starter"], 2, ["judge-good"],
    )  # fmt: skip
    assert doc["created"].endswith("Z")
    assert [(c["name"], c["step"], c["status"], c["error"]) for c in doc["checkpoints"]] == [
        (name, step, "complete", None) for name, step in zip(names, (100, 200, 300), strict=True)
    ]
    assert doc["checkpoints"][0]["path"] == str((tmp_path / "run" / "step_100").absolute())
    rows = {(r["checkpoint"], r["task"]): r for r in doc["results"]}
    assert len(rows) == len(doc["results"]) == 6
    for name, step in zip(names, (100, 200, 300), strict=True):
        rule = rows[(name, "ifeval")]
        assert (rule["judge"], rule["metric"], rule["step"], rule["n_samples"]) == (
            None,
            "prompt_strict",
            step,
            2,
        )
        assert rule["value"] == pytest.approx(200 / 3)  # two of the three prompts have no comma
        assert rule["per_sample"] == [pytest.approx(200 / 3)] * 2 and rule["std"] == rule["sem"] == 0.0
        assert rule["ci95"][0] <= rule["value"] <= rule["ci95"][1]
        assert (rule["run_dir"], rule["fraction"]) == (f"{name}/ifeval", False)
        pair = rows[(name, "starter")]
        own = next(r for r in _read(sweep / name / "starter" / "leaderboard.json") if r["model"] == name)
        assert (pair["judge"], pair["metric"], pair["value"]) == ("judge-good", "score", own["score"])
        assert pair["ci95"] == [own["ci_low"], own["ci_high"]]
        assert pair["per_sample"] == [pytest.approx(own["score"])] * 2  # the mock answers both samples alike
        for task, answers in (("ifeval", RULES * 2), ("starter", LIMIT * 2)):
            run_json = _read(sweep / name / task / "run.json")
            assert run_json["status"] == "finished" and run_json["scoring"]["ci_level"] == 0.95
            assert lines(sweep / name / task / "answers" / f"{name}.jsonl") == answers
    assert doc["usage"]["total"]["requests"] == 3 * requests_per_checkpoint() + judge.stats.requests
    # each checkpoint's judged run wrote its own card; sweep.json keeps each judge's probes per checkpoint
    cards = {(e["checkpoint"], e["task"], e["judge"]): e for e in doc["judge_card"]}
    assert set(cards) == {(name, "starter", "judge-good") for name in names}  # ifeval has no judge
    for name, step in zip(names, (100, 200, 300), strict=True):
        entry, card = (
            cards[(name, "starter", "judge-good")],
            _read(sweep / name / "starter" / "judge_card.json"),
        )
        probes = card["judges"]["judge-good"]["probes"]
        assert (entry["step"], entry["run_dir"], entry["warnings"]) == (step, f"{name}/starter", [])
        assert set(entry["probes"]) == set(probes) >= {"position", "consistency"}
        for probe, found in entry["probes"].items():
            low, high = probes[probe]["ci_low"], probes[probe]["ci_high"]
            ci = None if low is None else [low, high]
            assert found == {key: probes[probe][key] for key in ("estimate", "n", "flagged")} | {"ci": ci}
    table = (sweep / "sweep.csv").read_text().splitlines()
    assert table[0] == (
        "checkpoint,step,task,judge,metric,value,ci95_low,ci95_high,std,sem,per_sample,n_samples,fraction,run_dir"
    )
    assert len(table) == 7 and table[1].startswith("step_100,100,ifeval,,prompt_strict,66.66")
    assert (sweep / "plots" / "ifeval.png").is_file() and (sweep / "plots" / "all_tasks.svg").is_file()

    again = CountingServers()  # the same command again: every run is done, so nothing is sent
    assert run_sweep(plan, server_factory=again, plots=False).exit_code == 0
    assert len(starts(record)) == 3 and not again.requests and judge.stats.requests == 36
    assert [r["value"] for r in _read(sweep / "sweep.json")["results"]] == [
        r["value"] for r in doc["results"]
    ]
    assert _read(sweep / "sweep.json")["created"] == doc["created"]
    assert _read(sweep / "sweep.json")["judge_card"] == doc["judge_card"]

    # a checkpoint's directory resumes alone with jurist run --tasks (answers, then judging)
    alone = run_config(
        models_file=sweep / "models.yaml",
        models=["step_200"],
        out=sweep / "step_200",
        bench_options={"ifeval:file": str(tmp_path / "rules.jsonl")},
        samples=2,
        limit=LIMIT,
        mode="inference-only",
        progress=False,
        check=False,
    )
    assert run_tasks(alone, ["ifeval", "starter"]).requests == 0
    judged = run_config(**{**alone.__dict__, "models_file": tmp_path / "judges.yaml", "mode": "judge-only"})
    judged.judges = ["judge-good"]
    result = run_tasks(judged, ["ifeval", "starter"])
    assert result.exit_code == 0 and result.requests == 0 and judge.stats.requests == 36


def test_slots_take_checkpoints_from_one_queue_and_judging_overlaps_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_server: Any
) -> None:
    use_fake_vllm(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_VLLM_REPLY_DELAY", "0.05")
    judge = mock_server()
    checkpoint_dirs(tmp_path / "run", [100, 200, 300, 400])
    plan = sweep_plan(tmp_path, judge.base_url, gpus="0,1", max_concurrency=2)
    servers = CountingServers(slow_start={"step_100": 6.0})  # its weights take long to load
    assert run_sweep(plan, server_factory=servers, plots=False).exit_code == 0
    slow = servers.gpus["step_100"]
    others = {tuple(servers.gpus[f"step_{n}"] or ()) for n in (200, 300, 400)}
    assert others == {(1,) if slow == [0] else (0,)}  # the free GPU took every other checkpoint in turn
    events = sorted([(t, 1) for t in servers.started.values()] + [(t, -1) for t in servers.stopped.values()])
    running = [sum(step for _, step in events[: i + 1]) for i in range(len(events))]
    assert max(running) <= 2  # never more servers than slots
    judged = [
        t
        for t, body in zip(judge.stats.arrivals["judge-good"], judge.stats.bodies, strict=True)
        if "[step_200]" in json.dumps(body)
    ]
    assert judged and min(judged) < servers.stopped["step_400"]  # step_200 judged while step_400 answered


def test_a_failing_checkpoint_is_recorded_and_skipped_and_a_rerun_resumes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_server: Any
) -> None:
    record = use_fake_vllm(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_VLLM_REPLY_DELAY", "0.3")
    judge = mock_server()
    run = checkpoint_dirs(tmp_path / "run", [100, 300])
    listing = f"{run / 'step_100'},{run / 'step_200.gguf'},{run / 'step_300'}"  # step_200 is not there
    plan = sweep_plan(tmp_path, judge.base_url, checkpoints=listing, max_concurrency=2)

    def out_of_memory() -> None:  # the kernel's OOM killer takes step_300's server while it answers
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            mine = [s for s in starts(record) if served_name(s) == "step_300"]
            if mine and _answered(plan.out, "step_300"):
                os.killpg(mine[0]["pgid"], signal.SIGKILL)
                return
            time.sleep(0.02)

    killer = threading.Thread(target=out_of_memory, daemon=True)
    killer.start()
    result = run_sweep(plan, plots=False)
    killer.join(10)
    assert result.exit_code == 1
    states = _states(plan.out)
    assert states["step_100"] == ("complete", None)
    assert states["step_200"][0] == "failed" and "does not exist" in str(states["step_200"][1])
    assert states["step_300"][0] == "failed" and "killed by signal 9" in str(states["step_300"][1])
    assert all("\n" not in str(error) for _, error in states.values())
    assert {r["checkpoint"] for r in _read(plan.out / "sweep.json")["results"]} == {"step_100"}
    answered = _answered(plan.out, "step_300")
    assert 0 < answered < answers_per_checkpoint()
    missing = questions_missing(plan.out, "step_300")

    servers = CountingServers()  # the same command again: only step_300's missing answers are asked
    again = run_sweep(plan, server_factory=servers, plots=False)
    assert again.exit_code == 1  # step_200 still has no weights
    assert dict(servers.requests) == {"step_300": missing}
    states = _states(plan.out)
    assert states["step_300"] == ("complete", None) and states["step_200"][0] == "failed"


def test_tensor_parallel_servers_get_their_gpu_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_server: Any
) -> None:
    record = use_fake_vllm(tmp_path, monkeypatch)
    checkpoint_dirs(tmp_path / "run", [1, 2])
    plan = sweep_plan(
        tmp_path, mock_server().base_url, tasks="ifeval", judges=[], gpus="0,1,2,3", tensor_parallel=2
    )
    assert run_sweep(plan, plots=False).exit_code == 0
    seen = sorted(
        (s["cuda_visible_devices"], s["argv"][s["argv"].index("--tensor-parallel-size") + 1])
        for s in starts(record)
    )
    assert seen == [("0,1", "2"), ("2,3", "2")]
    assert _read(plan.out / "sweep.json")["judges"] == []  # a rule task only: no judge ran
    spec = _read(plan.out / "step_1" / "ifeval" / "run.json")["model_specs"]["step_1"]["serve"]
    assert spec["kind"] == "vllm" and spec["tensor_parallel"] == 2


def _sweep_command(tmp_path: Path, judge_url: str, *extra: str) -> list[str]:
    models = write_models_file(tmp_path / "judges.yaml", judge_url, {"judge-good": {}})
    return [
        sys.executable, "-m", "jurist", "sweep", "--checkpoints", str(tmp_path / "run"),
        "--tasks", "ifeval,starter", "-B", f"ifeval:file={rule_file(tmp_path / 'rules.jsonl')}",
        "--limit", str(LIMIT), "--samples", "2", "--models-file", str(models), "--judge", "judge-good",
        "--out", str(tmp_path / "sweep"), "--no-progress", "--no-check", "--no-plots", *extra,
    ]  # fmt: skip


def _wait_for(condition: Any, within: float = 120.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_stopping_a_sweep_stops_its_servers_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_server: Any, stop: signal.Signals
) -> None:
    record = use_fake_vllm(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_VLLM_REPLY_DELAY", "30")
    checkpoint_dirs(tmp_path / "run", [100, 200])
    command = _sweep_command(tmp_path, mock_server().base_url, "--gpus", "0,1")
    unrelated_env = {k: v for k, v in os.environ.items() if k != "FAKE_VLLM_RECORD"}
    from mock_process import free_port

    port = free_port()
    unrelated = subprocess.Popen(  # someone else's server with the same name, not started by the sweep
        ["vllm", "serve", "theirs", "--port", str(port), "--served-model-name", "theirs"],
        env=unrelated_env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    sweep = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: len(starts(record)) == 2 and _answered_requests_started(tmp_path))
        sweep.send_signal(stop)
        _, err = sweep.communicate(timeout=90)
        assert sweep.returncode == 130, err
        for start in starts(record):
            assert group_gone(start["pgid"])  # the servers it started, their workers too
        assert unrelated.poll() is None  # the other vllm of the same name is untouched, and answers
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=10) as reply:  # noqa: S310
            assert reply.status == 200
        states = _states(tmp_path / "sweep")
        assert {status for status, _ in states.values()} == {"incomplete"}
        for name in states:
            assert _read(tmp_path / "sweep" / name / "ifeval" / "run.json")["status"] == "interrupted"
    finally:
        if sweep.poll() is None:
            sweep.kill()
        os.killpg(unrelated.pid, signal.SIGTERM)
        unrelated.wait(30)


def _answered_requests_started(tmp_path: Path) -> bool:
    """Both servers are ready and asked: their run.json files say running."""
    paths = [tmp_path / "sweep" / f"step_{n}" / "ifeval" / "run.json" for n in (100, 200)]
    return all(p.is_file() and _read(p).get("status") == "running" for p in paths)


def test_killed_mid_sweep_a_rerun_sends_only_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_server: Any
) -> None:
    record = use_fake_vllm(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_VLLM_REPLY_DELAY", "0.3")
    judge = mock_server(delay=0.1)
    checkpoint_dirs(tmp_path / "run", [100, 200])
    options = ("--gpus", "0,", "--max-concurrency", "2", "--no-cache")
    sweep = subprocess.Popen(_sweep_command(tmp_path, judge.base_url, *options), cwd=tmp_path)
    out = tmp_path / "sweep"
    try:
        _wait_for(lambda: _answered(out, "step_200") >= 2)
    finally:
        sweep.kill()  # kill -9: nothing is cleaned up, nothing is flushed
        sweep.wait(30)
    for start in starts(record):  # what kill -9 leaves behind: the servers, in their own process groups
        try:
            os.killpg(start["pgid"], signal.SIGKILL)
        except ProcessLookupError:
            pass
    missing = {name: questions_missing(out, name) for name in ("step_100", "step_200")}
    assert missing["step_200"] > 0
    judgments = {
        name: lines(out / name / "starter" / "judgments" / "judge-good" / f"{name}.jsonl") for name in missing
    }
    before = judge.stats.requests

    plan = sweep_plan(tmp_path, judge.base_url, gpus="0,", max_concurrency=2, cache=False)
    servers = CountingServers()
    assert run_sweep(plan, server_factory=servers, plots=False).exit_code == 0
    assert dict(servers.requests) == {name: n for name, n in missing.items() if n}
    unjudged = sum(LIMIT * 2 - judgments[name] for name in missing)
    assert judge.stats.requests - before == 2 * unjudged  # two games per judgment still missing
    assert {status for status, _ in _states(out).values()} == {"complete"}


# -- the real embedded model (slow) -----------------------------------------------------------------
def gguf_run(root: Path, steps: tuple[int, ...] = (100, 200, 300)) -> Path:
    """Three "checkpoints": the embedded SmolLM2 GGUF under three step names."""
    from jurist.engine.local.embedded import embedded_gguf_path

    root.mkdir(parents=True, exist_ok=True)
    for step in steps:
        (root / f"step_{step}.gguf").symlink_to(embedded_gguf_path())
    return root


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (its managed servers), read from /proc while it runs."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _commands(pid: int) -> dict[int, str]:
    """The command line of each process ``pid`` has started so far (read from /proc while it runs)."""
    commands: dict[int, str] = {}
    for child in _children(pid):
        try:
            commands[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # it has already ended
            commands[child] = ""
    return commands


SERVER_COMMANDS = ("llama_cpp.server", "vllm", "llama-server")
"""What a managed model server runs as; a library's own short helper (matplotlib's fc-list when it first
builds its font cache, a fork that only execs) is none of these."""


def _posts(log: Path) -> int:
    """Chat requests a llama.cpp server answered, from its own access log."""
    if not log.exists():
        return 0
    return log.read_text(errors="replace").count('"POST /v1/chat/completions HTTP/1.1" 200')


@pytest.mark.slow
def test_a_real_sweep_killed_mid_way_resumes_with_only_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's sweep, smaller: 3 checkpoints, ifeval and starter (limit 2), 2 samples, llama.cpp
    servers, the embedded judge; kill -9 during the second checkpoint, then the same command again."""
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    gguf_run(tmp_path / "run")
    out = tmp_path / "sweep"
    command = [
        sys.executable, "-m", "jurist", "sweep", "--checkpoints", str(tmp_path / "run"),
        "--tasks", "ifeval,starter", "--limit", "2", "--samples", "2", "--out", str(out),
        "--no-progress", "--no-cache",
    ]  # fmt: skip
    names = [f"step_{n}" for n in (100, 200, 300)]
    sweep = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    servers: set[int] = set()
    try:
        deadline = time.monotonic() + 1200
        while _answered(out, "step_200") < 1:
            servers.update(_children(sweep.pid))
            assert sweep.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        servers.update(_children(sweep.pid))
        sweep.kill()  # kill -9
        sweep.wait(30)
    for pid in servers:  # kill -9 leaves the servers it started running, in their own process groups
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    answers = 4 + 4  # per checkpoint: (2 ifeval + 2 starter questions) x 2 samples
    missing = {name: answers - _answered(out, name) for name in names}
    assert missing["step_100"] == 0 and 0 < missing["step_200"] < answers and missing["step_300"] == answers
    posts = {name: _posts(out / name / "logs" / f"{name}.log") for name in names}
    judged = out / "step_100" / "starter" / "judgments" / "smollm2-135m" / "step_100.jsonl"
    before = judged.read_text() if judged.exists() else ""

    started = time.monotonic()
    again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert again.returncode == 0, again.stderr[-3000:]
    for name in names:  # each server was asked exactly for the answers that were not on disk
        assert _posts(out / name / "logs" / f"{name}.log") - posts[name] == missing[name]
    assert judged.read_text().startswith(before)  # judgments already made were kept, not asked again
    doc = _read(out / "sweep.json")
    assert [(c["name"], c["status"]) for c in doc["checkpoints"]] == [(n, "complete") for n in names]
    assert doc["judges"] == ["smollm2-135m"] and doc["samples"] == 2
    rows = {(r["checkpoint"], r["task"]): r for r in doc["results"]}
    assert set(rows) == {(n, t) for n in names for t in ("ifeval", "starter")}
    for (name, task), row in rows.items():
        assert row["n_samples"] == 2 and len(row["per_sample"]) == 2
        assert (
            row["value"] == pytest.approx(sum(row["per_sample"]) / 2, abs=1e-6) if task == "ifeval" else True
        )
        assert row["std"] is not None and row["sem"] == pytest.approx(row["std"] / 2**0.5)
        assert row["judge"] == ("smollm2-135m" if task == "starter" else None)
        for run_task in ("ifeval", "starter"):
            assert _read(out / name / run_task / "run.json")["status"] == "finished"
    assert doc["usage"]["total"]["requests"] > 0
    assert (out / "plots" / "starter.png").is_file() and (out / "plots" / "all_tasks.png").is_file()
    print(f"resumed sweep: {time.monotonic() - started:.0f} s")


@pytest.mark.slow
def test_a_local_sweep_loads_each_checkpoint_in_process_and_a_rerun_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``jurist sweep --local``: two GGUF "checkpoints" answered by llama-cpp-python inside the sweep's
    own process (no server is started), ifeval limit 2, one sample; the same command again asks nothing."""
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    gguf_run(tmp_path / "run", steps=(100, 200))
    out = tmp_path / "sweep"
    command = [
        sys.executable, "-m", "jurist", "sweep", "--checkpoints", str(tmp_path / "run"), "--local",
        "--tasks", "ifeval", "--limit", "2", "--out", str(out), "--no-progress", "--no-cache",
    ]  # fmt: skip
    names = ["step_100", "step_200"]
    sweep = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    started: dict[int, str] = {}
    while sweep.poll() is None:  # bounded by the sweep itself: its models load in-process
        started.update({pid: c for pid, c in _commands(sweep.pid).items() if c or pid not in started})
        time.sleep(0.05)
    output = sweep.stdout.read() if sweep.stdout else ""
    assert sweep.returncode == 0, output[-3000:]
    servers = {pid: c for pid, c in started.items() if any(name in c for name in SERVER_COMMANDS)}
    assert servers == {}  # no server process: both checkpoints ran inside the sweep
    for name in names:
        run = _read(out / name / "ifeval" / "run.json")
        assert run["status"] == "finished" and run["local"] is True
        assert lines(out / name / "ifeval" / "answers" / f"{name}.jsonl") == 2
        assert not list((out / name).glob("logs/*.log"))  # a server would have left its log
    doc = _read(out / "sweep.json")
    assert [(c["name"], c["status"]) for c in doc["checkpoints"]] == [(n, "complete") for n in names]
    rows = {r["checkpoint"]: r for r in doc["results"] if r["metric"] == "prompt_strict"}
    assert set(rows) == set(names)
    assert rows["step_100"]["value"] == rows["step_200"]["value"]  # the same weights at temperature 0

    again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    for name in names:  # nothing was missing: no answer added, no request counted in the rerun's usage
        assert lines(out / name / "ifeval" / "answers" / f"{name}.jsonl") == 2
        assert _read(out / name / "ifeval" / "run.json")["usage"]["requests"] == 0


def test_a_baseline_model_answers_once_and_every_checkpoint_is_judged_against_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_server: Any
) -> None:
    use_fake_vllm(tmp_path, monkeypatch)
    judge = mock_server()
    checkpoint_dirs(tmp_path / "run", [1, 2])
    models = write_models_file(tmp_path / "both.yaml", judge.base_url, {"judge-good": {}, "base-model": {}})
    plan = sweep_plan(
        tmp_path,
        judge.base_url,
        models_file=models,
        gpus="0,1",
        samples=["1"],
        judges=["starter=judge-good"],
        baselines=["starter=base-model"],
    )
    assert plan.baselines == {"starter": "base-model"} and plan.task_judges == {"starter": ("judge-good",)}
    assert run_sweep(plan, plots=False).exit_code == 0
    assert judge.stats.requests_by_model["base-model"] == LIMIT  # once, for both checkpoints
    assert judge.stats.requests_by_model["judge-good"] == 2 * LIMIT * 2  # two games per question
    for name in ("step_1", "step_2"):
        battles = read_jsonl(plan.out / name / "starter" / "battles.jsonl")
        assert battles and {b["model_b"] for b in battles} | {b["model_a"] for b in battles} == {
            name, "base-model",
        }  # fmt: skip
    doc = _read(plan.out / "sweep.json")
    assert doc["baselines"] == {"starter": "base-model"} and doc["judges"] == ["judge-good"]
    assert all(c["status"] == "complete" for c in doc["checkpoints"])


def test_per_task_samples_limits_and_judges_and_the_example_suite_make_a_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    run = str(checkpoint_dirs(tmp_path / "run", [1]))
    judges = write_models_file(tmp_path / "j.yaml", "http://127.0.0.1:9/v1", {"j": {}, "grader": {}})
    common: dict[str, Any] = {"checkpoints": run, "out": tmp_path / "sweep", "check": False}
    plan = build_sweep_plan(
        **common,
        tasks="ifeval,starter",
        samples=["2", "ifeval=4"],
        limit=["3", "ifeval=5"],
        judges=["starter=j"],
        models_file=judges,
    )
    assert plan.samples == {"ifeval": 4, "starter": 2} and plan.limits == {"ifeval": 5, "starter": 3}
    assert plan.task_judges == {"starter": ("j",)} and plan.judges == ("j",) and plan.most_samples == 4
    (checkpoint,) = plan.checkpoints
    assert checkpoint_spec(plan, checkpoint).temperature == 0.7  # several samples somewhere: they differ
    rules = judging_config(plan, checkpoint, "ifeval")
    assert (rules.judges, rules.samples, rules.limit) == ([], 4, 5)
    pairs = judging_config(plan, checkpoint, "starter")
    assert (pairs.judges, pairs.samples, pairs.limit, pairs.baseline) == (["j"], 2, 3, None)
    example = Path(__file__).resolve().parents[1] / "examples" / "eval-framework-suite.yaml"
    models = write_models_file(
        tmp_path / "m.yaml", "http://127.0.0.1:9/v1", {"grader": {}, "pairwise-judge": {}}
    )
    # --tasks picks from the suite: IFBench is left out, its loader asks for NLTK's tagger (issue 27, 5)
    picked = "ifeval,healthbench,writingbench,arena-hard-v2.0,alpaca-eval"
    suite = build_sweep_plan(**common, suite=example, tasks=picked, models_file=models, limit=["2"])
    assert suite.tasks == tuple(picked.split(","))
    assert suite.samples == {"ifeval": 8, "healthbench": 8, "writingbench": 4} | {
        "arena-hard-v2.0": 1, "alpaca-eval": 1,
    }  # fmt: skip
    assert suite.task_judges["healthbench"] == ("grader",) and suite.judged_tasks == suite.tasks[1:]
    assert suite.limits == dict.fromkeys(suite.tasks, 2)
