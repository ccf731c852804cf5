"""Peak memory and open files of ``jurist run`` as the number of questions grows.

For each question count N: an Arena-Hard v2.0 question file of N questions (``{uid, category, prompt}``),
the mock OpenAI server (tests/mock_openai.py) in a process of its own, and ``jurist run`` (answers of
``--models`` candidates and the baseline, then one judge, two games per answer) in a subprocess at
``--conc`` requests in flight. Peak RSS is the kernel's ``ru_maxrss`` of the jurist process (``wait4``),
peak open files a poll of ``/proc/<pid>/fd``. A flat run costs the same at 2k and 20k questions; the
"per question" column is the slope between the smallest and the largest N.

``--trace`` runs jurist under tracemalloc instead (several times slower) and prints, at the moment traced
memory peaked, the source lines that had allocated the most live memory: what holds memory as N grows.

``--rerun`` runs the same command a second time once everything is on disk and prints its wall time, peak
RSS and requests (none are due): what resuming a finished run costs.

Usage: ``python bench/bench_memory.py [--questions 2000 20000] [--models 8] [--conc 256] [--trace]
[--rerun]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
PROMPTS_DIR = ROOT.parent / "shared" / "data" / "arena-hard" / "official-prompts"
JUDGE = "judge-good"
BASELINE = "base"


def write_inputs(folder: Path, n: int, models: list[str], urls: list[str]) -> tuple[Path, Path]:
    """The question file and the models file (aliases spread over the mock's ports)."""
    questions = folder / "question.jsonl"
    with questions.open("w") as fh:
        for i in range(n):
            prompt = f"Question {i}: explain in two sentences why the sky looks blue during the day."
            fh.write(json.dumps({"uid": f"q{i}", "category": "hard_prompt", "prompt": prompt}) + "\n")
    entry = {"api_type": "openai", "parallel": 256, "max_tokens": 64, "temperature": 0.0, "timeout": 60}
    aliases = [*models, BASELINE, JUDGE]
    data = {
        alias: {"model": alias, "endpoints": [{"api_base": urls[i % len(urls)]}], **entry}
        for i, alias in enumerate(aliases)
    }
    models_file = folder / "models.json"  # JSON is YAML
    models_file.write_text(json.dumps(data))
    return questions, models_file


def jurist_args(questions: Path, models_file: Path, models: list[str], conc: int) -> list[str]:
    args = ["run", "--bench", str(questions), "--models-file", str(models_file)]
    args += ["--baseline", BASELINE, "--judge", JUDGE, "--max-concurrency", str(conc)]
    args += [arg for alias in models for arg in ("--model", alias)]
    return args + ["--no-progress", "--no-check", "--out", "run", "--bootstrap", "20"]


def measure(n: int, n_models: int, conc: int, trace: bool, top: int, rerun: bool = False) -> dict[str, Any]:
    from mock_process import mock_stats, run_watched, spawn_mock, stop_process

    models = [f"m{i}" for i in range(n_models)]
    with tempfile.TemporaryDirectory(prefix="jurist-bench-memory-") as tmp:
        folder = Path(tmp)
        mock, urls = spawn_mock(4)
        try:
            questions, models_file = write_inputs(folder, n, models, urls)
            env = {  # bytecode cached outside the checkout, as an installed jurist has it (e2e_systems)
                **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "jurist-bench-pycache"),
                "JURIST_CACHE_DIR": str(folder / "cache"),
                "JURIST_ARENA_HARD_PROMPTS": str(PROMPTS_DIR),
                "PYTHONPATH": str(ROOT / "src"),
            }
            head = [sys.executable, "-m", "jurist"]
            if trace:
                head = [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--child-trace",
                    str(folder / "trace.json"),
                ]
                head += ["--top", str(top), "--"]
            run = run_watched(
                head + jurist_args(questions, models_file, models, conc), cwd=folder, env=env, timeout=7200
            )
            requests = mock_stats(urls[0])["requests"]
            again = None
            if rerun and run.returncode == 0:  # everything is on disk: the same command sends nothing
                argv = head + jurist_args(questions, models_file, models, conc)
                again = run_watched(argv, cwd=folder, env=env, timeout=7200)
                rerun_requests = mock_stats(urls[0])["requests"] - requests
        finally:
            stop_process(mock)
        if run.returncode != 0:
            raise SystemExit(f"jurist exited {run.returncode} at N={n}:\n{run.stderr[-3000:]}")
        result: dict[str, Any] = {
            "questions": n,
            "models": n_models,
            "requests": requests,
            "seconds": run.seconds,
            "peak_rss_mb": run.peak_rss_mb,
            "peak_fds": run.peak_fds,
        }
        if again is not None:
            if again.returncode != 0:
                raise SystemExit(f"the re-run exited {again.returncode} at N={n}:\n{again.stderr[-3000:]}")
            result |= {
                "rerun_seconds": again.seconds,
                "rerun_rss_mb": again.peak_rss_mb,
                "rerun_requests": rerun_requests,
            }
        if trace:
            result["trace"] = json.loads((folder / "trace.json").read_text())
        return result


def child_trace(out: Path, top: int, args: list[str]) -> None:
    """Run the jurist CLI under tracemalloc; at exit write the top holders seen at each checkpoint.

    Checkpoints: whenever traced memory has grown by 15% since the last one (polled each second), and at
    the entry of each stage (generate, judge, scoring), where what the previous stage left is still held.
    """
    import atexit
    import functools
    import tracemalloc

    tracemalloc.start(6)
    shots: list[dict[str, Any]] = []
    started = time.monotonic()
    stop = threading.Event()
    lock = threading.Lock()
    grown = [0.0]

    def snapshot(label: str) -> None:
        with lock:
            current, _ = tracemalloc.get_traced_memory()
            snap = tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen *>")]
            )
            grown[0] = max(grown[0], current)
            shots.append(
                {
                    "label": label,
                    "at_s": round(time.monotonic() - started, 1),
                    "traced_mb": current / 2**20,
                    "lines": [
                        {"where": f"{s.traceback[0].filename}:{s.traceback[0].lineno}",
                         "mb": s.size / 2**20, "blocks": s.count}
                        for s in snap.statistics("lineno")[:top]
                    ],
                }
            )  # fmt: skip

    def watch() -> None:
        while not stop.wait(1.0):
            current, _ = tracemalloc.get_traced_memory()
            if current > 1.15 * grown[0]:
                snapshot("grown")

    def at_entry(module: Any, name: str) -> None:
        inner = getattr(module, name)
        if asyncio.iscoroutinefunction(inner):

            async def wrapped_async(*a: Any, **k: Any) -> Any:
                snapshot(f"entering {name}")
                return await inner(*a, **k)

            setattr(module, name, functools.wraps(inner)(wrapped_async))
        else:

            def wrapped(*a: Any, **k: Any) -> Any:
                snapshot(f"entering {name}")
                return inner(*a, **k)

            setattr(module, name, functools.wraps(inner)(wrapped))

    def finish() -> None:
        stop.set()
        _, peak = tracemalloc.get_traced_memory()
        out.write_text(json.dumps({"traced_peak_mb": peak / 2**20, "shots": shots}, indent=1))

    import asyncio

    import jurist.run.judge
    import jurist.run.pipeline

    at_entry(jurist.run.judge, "generate")  # the answer stage (the judge stage runs beside it)
    at_entry(jurist.run.pipeline, "score_finished_run")
    atexit.register(finish)
    threading.Thread(target=watch, daemon=True).start()
    from jurist.cli import main as jurist_main

    sys.argv = ["jurist", *args]
    jurist_main()


def report(results: list[dict[str, Any]]) -> None:
    print(
        f"{'questions':>9} {'models':>6} {'requests':>9} {'seconds':>8} {'peak RSS MB':>12} {'peak fds':>9}"
    )
    for r in results:
        print(
            f"{r['questions']:>9} {r['models']:>6} {r['requests']:>9} {r['seconds']:>8.1f} "
            f"{r['peak_rss_mb']:>12.1f} {r['peak_fds']:>9}"
        )
    for r in results:
        if "rerun_seconds" in r:
            print(
                f"N={r['questions']}: the same command again (everything on disk): "
                f"{r['rerun_seconds']:.2f} s, peak RSS {r['rerun_rss_mb']:.1f} MB, "
                f"{r['rerun_requests']} requests"
            )
    if len(results) >= 2:
        low, high = results[0], results[-1]
        slope = (high["peak_rss_mb"] - low["peak_rss_mb"]) / (high["questions"] - low["questions"])
        print(f"peak RSS per extra question: {1024 * slope:.2f} KB")
    for r in results:
        trace = r.get("trace")
        if not trace:
            continue
        print(f"\nN={r['questions']}: traced peak {trace['traced_peak_mb']:.1f} MB")
        for shot in trace["shots"]:
            if shot["label"] == "grown" and shot is not trace["shots"][-1]:
                continue  # the last growth checkpoint, and the stage entries
            print(f"- {shot['label']} at {shot['at_s']} s: {shot['traced_mb']:.1f} MB traced; top lines:")
            for line in shot["lines"]:
                where = line["where"].replace(str(ROOT) + "/", "")
                print(f"  {line['mb']:8.1f} MB {line['blocks']:>9} blocks  {where}")


def main() -> None:
    if "--child-trace" in sys.argv:
        split = sys.argv.index("--")
        own = argparse.ArgumentParser()
        own.add_argument("--child-trace", type=Path)
        own.add_argument("--top", type=int, default=15)
        options = own.parse_args(sys.argv[1:split])
        child_trace(options.child_trace, options.top, sys.argv[split + 1 :])
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument(
        "--models", type=int, default=8, help="candidate models (plus a baseline and a judge)"
    )
    parser.add_argument("--conc", type=int, default=256)
    parser.add_argument("--trace", action="store_true", help="find the top holders with tracemalloc")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--rerun", action="store_true", help="then run the same command again and time it (sends nothing)"
    )
    args = parser.parse_args()
    results = []
    for n in args.questions:
        result = measure(n, args.models, args.conc, args.trace, args.top, args.rerun)
        results.append(result)
        print(f"N={n}: {result['seconds']:.1f} s, peak RSS {result['peak_rss_mb']:.1f} MB", flush=True)
    report(results)


if __name__ == "__main__":
    main()
