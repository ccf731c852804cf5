"""``jurist sweep --watch`` follows a training run: checkpoints evaluated once each, as they become complete,
with their points in sweep.json and in TensorBoard and MLflow (read back with their own readers), stopped
cleanly by SIGTERM and resumed with only the checkpoints added since. Checkpoints are served by the
stand-in ``tests/fake_vllm/vllm`` (see test_sweep.py); the task is rule-checked, so no judge is needed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jurist.errors import JuristError
from jurist.sweep.watch import CheckpointWatcher, WatchRules, fingerprint
from test_sweep import rule_file, starts, use_fake_vllm

SETTLE = 2.0


def checkpoint(root: Path, step: int, *, age: float = 3600.0) -> Path:
    """A complete model folder whose files were last written ``age`` seconds ago."""
    folder = root / f"step_{step}"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_text("{}" if name.endswith(".json") else "weights")
        past = time.time() - age
        os.utime(folder / name, (past, past))
    return folder


def rules(root: Path, **options: Any) -> WatchRules:
    return WatchRules(root, **({"settle_s": SETTLE, "poll_s": 0.1} | options))


def names(found: list[Any]) -> list[str]:
    return [c.name for c in found]


def test_a_checkpoint_is_complete_once_its_files_have_settled(tmp_path: Path) -> None:
    run = tmp_path / "run"
    checkpoint(run, 100)
    (run / "logs").mkdir()  # not a checkpoint
    fresh = checkpoint(run, 200, age=0)
    watcher = CheckpointWatcher(rules(run))
    now = time.time()
    assert names(watcher.look(now)) == []  # seen once: not yet known to be unchanged
    assert names(watcher.look(now)) == ["step_100"]  # old and unchanged: complete at once
    (fresh / "model.safetensors").write_text("weights, still being written")
    assert names(watcher.look(now + SETTLE)) == []  # it changed since the last look
    assert names(watcher.look(time.time() + SETTLE / 2)) == []  # unchanged, but not for --settle yet
    assert names(watcher.look(time.time() + SETTLE)) == ["step_200"]
    assert names(watcher.look(time.time() + 10 * SETTLE)) == []  # each checkpoint is handed out once
    assert watcher.stop_reason is None and set(watcher.ready_at) == {"step_100", "step_200"}


def test_an_empty_folder_a_temporary_file_and_the_ready_file(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "step_100").mkdir(parents=True)
    watcher = CheckpointWatcher(rules(run))
    later = time.time() + 10 * SETTLE
    assert watcher.look(later) == [] and watcher.look(later) == []  # no file yet: never complete
    ready = CheckpointWatcher(rules(run, ready_file="DONE"))
    checkpoint(run, 200)
    assert ready.look(later) == [] and ready.look(later) == []  # settled, but the ready file is what counts
    (run / "step_200" / "DONE").write_text("")
    assert names(ready.look(time.time())) == ["step_200"]  # at once, however fresh
    assert fingerprint(run / "missing") == ()


def test_watching_stops_at_until_step_or_the_stop_file(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for step in (100, 200, 300):
        checkpoint(run, step)
    until = CheckpointWatcher(rules(run, until_step=200))
    until.look()
    assert names(until.look()) == ["step_100", "step_200"]  # step_300 is past it: not evaluated
    assert until.stop_reason == "--until-step 200 reached (step_200)"
    assert until.look() == []
    stop_file = tmp_path / "STOP"
    stopping = CheckpointWatcher(rules(run, stop_file=stop_file), known={"step_100"})
    stopping.look()
    assert names(stopping.look()) == ["step_200", "step_300"]  # an earlier sweep finished step_100
    assert stopping.stop_reason is None
    stop_file.write_text("")
    assert stopping.look() == [] and stopping.stop_reason == f"the stop file {stop_file} appeared"


def test_bad_watch_options_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(JuristError, match="is not a folder"):
        WatchRules(tmp_path / "missing")
    with pytest.raises(JuristError, match="give a file name"):
        WatchRules(tmp_path, ready_file="a/b")
    command = [sys.executable, "-m", "jurist", "sweep", "--checkpoints", str(tmp_path), "--tasks", "ifeval"]
    for extra, said in (
        (["--settle", "5"], "--settle applies to --watch only"),
        (["--track", "neptune:x"], "give tensorboard:DIR, mlflow:URI"),
    ):
        done = subprocess.run([*command, *extra], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and said in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def _wait_for(condition: Any, within: float = 120.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.1)


def _document(sweep: Path) -> dict[str, Any]:
    try:
        data = json.loads((sweep / "sweep.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _complete(sweep: Path) -> set[str]:
    return {c["name"] for c in _document(sweep).get("checkpoints", []) if c["status"] == "complete"}


def _tensorboard_scalars(directory: Path) -> dict[str, dict[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(directory))
    events.Reload()
    return {tag: {e.step: e.value for e in events.Scalars(tag)} for tag in events.Tags()["scalars"]}


def _mlflow_metrics(store: Path) -> dict[str, dict[int, float]]:
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store.resolve().as_uri())
    (experiment,) = [e for e in client.search_experiments() if e.name == "sweep"]
    (run,) = client.search_runs([experiment.experiment_id])
    return {
        key: {m.step: m.value for m in client.get_metric_history(run.info.run_id, key)}
        for key in run.data.metrics
    }


def test_a_watched_sweep_follows_training_logs_its_trackers_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = use_fake_vllm(tmp_path, monkeypatch)
    run, sweep = tmp_path / "run", tmp_path / "sweep"
    checkpoint(run, 100)
    tensorboard, mlflow = tmp_path / "tb", tmp_path / "mlruns"
    command = [
        sys.executable, "-m", "jurist", "sweep", "--watch", "--checkpoints", str(run),
        "--settle", str(SETTLE),
        "--tasks", "ifeval", "-B", f"ifeval:file={rule_file(tmp_path / 'rules.jsonl')}", "--limit", "3",
        "--gpus", "0,", "--out", str(sweep), "--no-progress", "--no-check", "--no-plots",
        "--track", f"tensorboard:{tensorboard}", "--track", f"mlflow:{mlflow}",
    ]  # fmt: skip
    first = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: _complete(sweep) == {"step_100"})
        # step_200 is written over ~3 s (longer than --settle): evaluated only once it has settled
        folder = run / "step_200"
        folder.mkdir()
        (folder / "config.json").write_text("{}")
        last_write = time.time()
        for piece in range(6):
            with (folder / "model.safetensors").open("a") as handle:
                handle.write(f"shard piece {piece}\n")
            last_write = time.time()
            time.sleep(0.5)
        _wait_for(lambda: _complete(sweep) == {"step_100", "step_200"})
        first.send_signal(signal.SIGTERM)
        _, err = first.communicate(timeout=90)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 130, err
    served = [start["argv"][1] for start in starts(record)]
    assert [Path(path).name for path in served] == ["step_100", "step_200"]  # each evaluated once
    second_start = os.stat(sweep / "step_200" / "ifeval" / "run.json").st_ctime
    assert second_start >= last_write + SETTLE - 0.5  # not while its files were changing
    document = _document(sweep)
    timing = {c["name"]: c for c in document["checkpoints"]}
    assert timing["step_200"]["ready_to_first_request_s"] >= 0 and timing["step_200"]["ready_at"]

    checkpoint(run, 300)
    checkpoint(run, 400)  # past --until-step: not evaluated
    again = subprocess.run([*command, "--until-step", "300"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "--until-step 300 reached (step_300)" in again.stderr
    served = [Path(start["argv"][1]).name for start in starts(record)]
    assert served == ["step_100", "step_200", "step_300"]  # only what was added since
    document = _document(sweep)
    assert [(c["name"], c["status"]) for c in document["checkpoints"]] == [
        ("step_100", "complete"), ("step_200", "complete"), ("step_300", "complete"),
    ]  # fmt: skip
    expected = {(row["metric"], row["step"]): row["value"] for row in document["results"]}
    assert {step for _, step in expected} == {100, 200, 300}
    for scalars in (_tensorboard_scalars(tensorboard), _mlflow_metrics(mlflow)):
        logged = {(key, step): value for key, steps in scalars.items() for step, value in steps.items()}
        for (metric, step), value in expected.items():
            assert logged[(f"jurist/ifeval/{metric}", step)] == pytest.approx(value)
        assert {step for _, step in logged} == {100, 200, 300}  # once per step, none twice
    tracked = json.loads((sweep / "tracked.json").read_text())
    assert set(tracked) == {f"tensorboard:{tensorboard}", f"mlflow:{mlflow}"}


def test_a_tracker_that_fails_is_back_filled_by_the_next_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from jurist.track import Trackers, sweep_points

    rows = [
        {"checkpoint": f"step_{s}", "step": s, "task": "ifeval", "judge": None, "metric": "acc",
         "value": s / 10, "ci95": [s / 10 - 1, s / 10 + 1], "std": 0.5}
        for s in (100, 200)
    ]  # fmt: skip
    blocked = tmp_path / "tb"
    blocked.write_text("a file where the event folder should be")
    failing = Trackers([f"tensorboard:{blocked}"], tmp_path, "sweep")
    failing.log_rows(rows)
    failing.close()
    assert "its 8 point(s) are kept and logged by the next run" in caplog.text
    blocked.unlink()
    Trackers([f"tensorboard:{blocked}"], tmp_path, "sweep").log_rows(rows)
    scalars = _tensorboard_scalars(blocked)
    assert scalars["jurist/ifeval/acc"] == {100: 10.0, 200: 20.0}
    assert scalars["jurist/ifeval/acc_ci95_high"] == {100: 11.0, 200: 21.0}
    assert len(sweep_points(rows)) == 8


def _wandb_history(run_file: Path) -> list[dict[str, Any]]:
    """The history records of an offline W&B run file (W&B's LevelDB-style log of protobuf records)."""
    import struct

    from wandb.proto import wandb_internal_pb2

    data = run_file.read_bytes()
    assert data[:4] == b":W&B"
    block, position, pending, history = 32768, 7, b"", []
    while position + 7 <= len(data):
        if block - position % block < 7:  # a block's tail too short for a header is padding
            position += block - position % block
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        chunk = data[position + 7 : position + 7 + length]
        position += 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):  # a whole record (FULL, or LAST of its pieces)
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            if record.WhichOneof("record_type") == "history":
                items = record.history.item
                history.append({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in items})
    return history


def test_wandb_offline_resumes_the_training_run_and_logs_on_its_step_axis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wandb")
    from jurist.track import Point, Trackers

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    trackers = Trackers(["wandb:lab/rl-run/train123"], tmp_path, "sweep")
    try:
        trackers.log([Point(120, "jurist/ifeval/acc", 41.0), Point(240, "jurist/ifeval/acc", 47.5)])
    finally:
        trackers.close()
    # W&B's core process writes the offline file; finish() may return before it has (it flushes on exit)
    _wait_for(lambda: len(list(tmp_path.glob("wandb/offline-run-*-train123/run-train123.wandb"))) == 1)
    (run_file,) = tmp_path.glob("wandb/offline-run-*-train123/run-train123.wandb")
    _wait_for(lambda: len(_wandb_history(run_file)) == 2, within=60)
    logged = [(h["jurist/step"], h["jurist/ifeval/acc"]) for h in _wandb_history(run_file)]
    assert logged == [(120, 41.0), (240, 47.5)]


def test_a_plain_run_logs_its_headline_at_the_step_given(tmp_path: Path, mock_server: Any) -> None:
    from conftest import write_models_file

    models = write_models_file(tmp_path / "m.yaml", mock_server().base_url, {"strong": {}})
    tensorboard = tmp_path / "tb"
    command = [
        sys.executable, "-m", "jurist", "run", "--bench", "ifeval", "-B",
        f"file={rule_file(tmp_path / 'rules.jsonl')}", "--models-file", str(models), "--model", "strong",
        "--out", str(tmp_path / "run"), "--no-progress", "--no-check",
        "--track", f"tensorboard:{tensorboard}",
    ]  # fmt: skip
    refused = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--track needs --step" in refused.stderr
    done = subprocess.run([*command, "--step", "500"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    metric = row["headline"]
    scalars = _tensorboard_scalars(tensorboard)
    assert scalars[f"jurist/ifeval/{metric}"] == {500: pytest.approx(row[metric])}
    assert set(scalars) == {f"jurist/ifeval/{metric}{end}" for end in ("", "_ci90_low", "_ci90_high")}
    again = subprocess.run([*command, "--step", "500"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and _tensorboard_scalars(tensorboard) == scalars  # never logged twice


def test_a_rerun_past_until_step_stops_at_the_first_look(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for step in (100, 200):
        checkpoint(run, step)
    watcher = CheckpointWatcher(rules(run, until_step=200), known={"step_100", "step_200"})
    assert watcher.look() == []
    assert watcher.stop_reason == "--until-step 200 already reached (step_200 was evaluated before)"


def test_a_checkpoint_on_disk_when_the_stop_file_appears_is_evaluated_or_named_skipped(
    tmp_path: Path,
) -> None:
    run, stop_file = tmp_path / "run", tmp_path / "STOP"
    checkpoint(run, 100)  # complete long ago, not yet looked at twice
    checkpoint(run, 200, age=0)  # written just before the stop file
    growing = checkpoint(run, 300, age=0)  # still being written when watching gives up
    stop_file.write_text("")
    watcher = CheckpointWatcher(rules(run, stop_file=stop_file))
    start = time.time()
    handed = watcher.look(start)
    assert handed == [] and watcher.stop_reason is None  # not dropped: looked at a while longer
    handed += watcher.look(start + 0.1)
    assert names(handed) == ["step_100"]
    (growing / "model.safetensors").write_text("more weights")
    handed += watcher.look(start + SETTLE + 0.1)  # step_200 has settled; step_300 changed again
    assert names(handed) == ["step_100", "step_200"] and watcher.stop_reason is None
    (growing / "model.safetensors").write_text("even more weights")
    assert watcher.look(start + SETTLE + 0.3) == []  # past the grace (--settle and two looks)
    assert watcher.stop_reason == f"the stop file {stop_file} appeared"
    assert set(watcher.skipped) == {"step_300"} and "not complete" in watcher.skipped["step_300"][1]


def test_a_watched_sweep_with_plots_a_stop_file_at_start_and_a_rerun_past_until_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plots on (one writer: exit 0, no "could not write a plot"); a stop file there from the start
    still evaluates the complete checkpoint and names the one without its ready file as skipped (exit
    4); run again with --until-step at a step already evaluated, it stops at its first look."""
    from jurist.sweep.watch import SKIPPED_EXIT

    record = use_fake_vllm(tmp_path, monkeypatch)
    run, sweep, stop_file = tmp_path / "run", tmp_path / "sweep", tmp_path / "STOP"
    for step in (100, 150):  # judged side by side: their plot redraws would race without one writer
        (checkpoint(run, step) / "DONE").write_text("")
    checkpoint(run, 200)  # no ready file: never complete
    stop_file.write_text("")
    command = [
        sys.executable, "-m", "jurist", "sweep", "--watch", "--checkpoints", str(run),
        "--ready-file", "DONE", "--stop-file", str(stop_file),
        "--tasks", "ifeval", "-B", f"ifeval:file={rule_file(tmp_path / 'rules.jsonl')}", "--limit", "3",
        "--gpus", "0,", "--out", str(sweep), "--no-progress", "--no-check",
    ]  # fmt: skip
    first = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert first.returncode == SKIPPED_EXIT, first.stderr
    assert "could not write a plot" not in first.stderr and (sweep / "plots").is_dir()
    assert "step_200: skipped: not complete" in " ".join(first.stderr.split())
    statuses = {c["name"]: c["status"] for c in _document(sweep)["checkpoints"]}
    assert statuses == {"step_100": "complete", "step_150": "complete", "step_200": "skipped"}
    started = len(starts(record))
    again = subprocess.run(
        [*command, "--until-step", "150"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stderr
    said = " ".join(again.stderr.split())  # the console wraps long lines
    assert "--until-step 150 already reached (step_150 was evaluated before)" in said
    assert len(starts(record)) == started  # nothing served again
