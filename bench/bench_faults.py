"""The fault suite: ``jurist run`` against a mock server failing a share of all requests, re-run until done.

For each fault rate: the mock OpenAI server (tests/mock_openai.py) in a process of its own gives each
request, probes included, a random fault with that probability (429, 500, 503, a dropped connection, a
garbage body, or a slow but good reply), from a seeded RNG. ``jurist run`` (candidates, a baseline, two
judges; the pre-run check on) is started again while it exits 1 (requests still missing), at most
``--max-runs`` times in all. Checked:

* no run refused (exit 2), and the last one exits 0;
* 0 lost: every expected answer (model, question) and judgment (judge, model, question) is on disk;
* 0 duplicated: no key appears twice across ``answers/*.jsonl`` and ``judgments/*/*.jsonl``;
* the verdicts equal those of a fault-free run (``--reference``; the mock's judges are deterministic).

Reported: runs needed, attempts per request (the server's count per distinct request body, all runs
together), attempts per answer and per judgment (from the records' ``usage`` plus the failed attempts in
``failures.jsonl``), peak open files and peak RSS of the jurist processes.

Usage: ``python bench/bench_faults.py [--rates 0.2 0.4] [--questions 300] [--models 3] [--judges 2]``.
tests/test_fault_suite.py runs a small version of :func:`run_suite`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
PROMPTS_DIR = ROOT.parent / "shared" / "data" / "arena-hard" / "official-prompts"
BASELINE = "base"
JUDGES = ("judge-good", "judge-p80")  # the mock's rule judge, and one right 80% of the time (seeded)


@dataclass
class SuiteResult:
    """What one fault rate gave; ``problems`` is empty when nothing was lost, duplicated or refused."""

    rate: float
    exit_codes: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    peak_fds: int = 0
    peak_rss_mb: float = 0.0
    server: dict[str, Any] = field(default_factory=dict)
    per_request: tuple[float, int] = (0.0, 0)  # mean, max
    per_answer: tuple[float, int] = (0.0, 0)
    per_judgment: tuple[float, int] = (0.0, 0)
    labels: dict[tuple[str, str, str], list[str | None]] = field(default_factory=dict)


def write_inputs(folder: Path, n: int, models: list[str], judges: list[str], url: str) -> tuple[Path, Path]:
    questions = folder / "question.jsonl"
    with questions.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"uid": f"q{i}", "prompt": f"Question {i}: why is the sky blue?"}) + "\n")
    entry = {"api_type": "openai", "parallel": 64, "max_tokens": 64, "temperature": 0.0, "timeout": 30}
    data = {
        alias: {"model": alias, "endpoints": [{"api_base": url}], **entry}
        for alias in [*models, BASELINE, *judges]
    }
    models_file = folder / "models.json"  # JSON is YAML
    models_file.write_text(json.dumps(data))
    return questions, models_file


def _lines(path: Path) -> list[dict[str, Any]]:
    return (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    )


def check_run_dir(
    root: Path, n: int, models: list[str], judges: list[str]
) -> tuple[list[str], dict[str, Any]]:
    """Problems (lost or duplicated records) and the records found, by key."""
    problems: list[str] = []
    uids = {f"q{i}" for i in range(n)}
    answers: dict[tuple[str, str], dict[str, Any]] = {}
    for alias in [*models, BASELINE]:
        seen = Counter((r["uid"], r.get("sample", 0)) for r in _lines(root / "answers" / f"{alias}.jsonl"))
        dup = [key for key, count in seen.items() if count > 1]
        lost = uids - {uid for uid, _ in seen}
        if dup or lost:
            problems.append(f"answers of {alias}: {len(lost)} lost, {len(dup)} duplicated")
        for record in _lines(root / "answers" / f"{alias}.jsonl"):
            answers[(alias, record["uid"])] = record
    judgments: dict[tuple[str, str, str], dict[str, Any]] = {}
    for judge in judges:
        for model in models:
            records = _lines(root / "judgments" / judge / f"{model}.jsonl")
            keys = Counter(r["key"] for r in records)
            by_uid = Counter((r["uid"], r.get("sample", 0)) for r in records)
            dup = [key for key, count in keys.items() if count > 1] + [k for k, c in by_uid.items() if c > 1]
            lost = uids - {uid for uid, _ in by_uid}
            if dup or lost:
                problems.append(f"judgments of {judge} on {model}: {len(lost)} lost, {len(dup)} duplicated")
            for record in records:
                judgments[(judge, model, record["uid"])] = record
    return problems, {"answers": answers, "judgments": judgments}


def _attempts(found: dict[str, Any], failures: list[dict[str, Any]]) -> tuple[list[int], list[int]]:
    """Attempts per answer and per judgment: the stored usage plus every failed attempt before it."""
    failed: Counter[tuple[str, ...]] = Counter()
    for record in failures:
        if record["stage"] == "generate":
            failed[("answer", record["model"], record["uid"])] += int(record.get("attempts") or 1)
        else:
            failed[("judge", record["judge"], record["model"], record["uid"])] += int(
                record.get("attempts") or 1
            )
    per_answer = [
        int(record.get("usage", {}).get("attempts") or 0) + failed[("answer", alias, uid)]
        for (alias, uid), record in found["answers"].items()
    ]
    per_judgment = []
    for (judge, model, uid), record in found["judgments"].items():
        used = sum(
            int(game.get("usage", {}).get("attempts") or 0)
            + int(game.get("reask_usage", {}).get("attempts") or 0)
            for game in record["games"]
        )
        per_judgment.append(used + failed[("judge", judge, model, uid)])
    return per_answer, per_judgment


def _mean_max(values: list[int]) -> tuple[float, int]:
    return (statistics.fmean(values), max(values)) if values else (0.0, 0)


def run_suite(
    folder: Path,
    rate: float,
    *,
    questions: int = 300,
    n_models: int = 3,
    judges: tuple[str, ...] = JUDGES,
    conc: int = 64,
    max_runs: int = 3,
    seed: int = 0,
    extra_args: tuple[str, ...] = (),
) -> SuiteResult:
    """Run jurist against a mock failing ``rate`` of requests until it exits 0 (``max_runs`` at most)."""
    from mock_process import mock_stats, run_watched, spawn_mock, stop_process

    models = [f"m{i}" for i in range(n_models)]
    folder.mkdir(parents=True, exist_ok=True)
    result = SuiteResult(rate)
    options = ["--count-keys", "--seed", str(seed)] + (["--fault-rate", str(rate)] if rate else [])
    mock, (url,) = spawn_mock(1, options)
    try:
        question_file, models_file = write_inputs(folder, questions, models, list(judges), url)
        args = [sys.executable, "-m", "jurist", "run", "--bench", str(question_file)]
        args += ["--models-file", str(models_file), "--baseline", BASELINE, "--max-concurrency", str(conc)]
        args += [arg for alias in models for arg in ("--model", alias)]
        args += [arg for judge in judges for arg in ("--judge", judge)]
        args += ["--no-progress", "--out", "run", "--bootstrap", "20", *extra_args]
        env = {
            **os.environ,
            "JURIST_CACHE_DIR": str(folder / "cache"),
            "JURIST_ARENA_HARD_PROMPTS": str(PROMPTS_DIR),
            "PYTHONPATH": str(ROOT / "src"),
        }
        for _ in range(max_runs):
            run = run_watched(args, cwd=folder, env=env, timeout=1800)
            result.exit_codes.append(run.returncode)
            result.seconds += run.seconds
            result.peak_fds = max(result.peak_fds, run.peak_fds)
            result.peak_rss_mb = max(result.peak_rss_mb, run.peak_rss_mb)
            if run.returncode == 2:
                result.problems.append(f"run {len(result.exit_codes)} refused (exit 2): {run.stderr[-500:]}")
                break
            if run.returncode == 0:
                break
            if run.returncode != 1:
                result.problems.append(
                    f"run {len(result.exit_codes)} exit {run.returncode}: {run.stderr[-2000:]}"
                )
                break
        result.server = mock_stats(url)
    finally:
        stop_process(mock)
    if result.exit_codes[-1] != 0:
        result.problems.append(
            f"not done after {len(result.exit_codes)} runs (exit codes {result.exit_codes})"
        )
    problems, found = check_run_dir(folder / "run", questions, models, list(judges))
    result.problems += problems
    histogram = {int(n): count for n, count in result.server.get("attempts", {}).items()}
    per_request = [n for n, count in histogram.items() for _ in range(count)]
    result.per_request = _mean_max(per_request)
    per_answer, per_judgment = _attempts(found, _lines(folder / "run" / "failures.jsonl"))
    result.per_answer, result.per_judgment = _mean_max(per_answer), _mean_max(per_judgment)
    result.labels = {key: [g["label"] for g in record["games"]] for key, record in found["judgments"].items()}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rates", type=float, nargs="+", default=[0.2, 0.4])
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--judges", type=int, default=2, choices=[1, 2])
    parser.add_argument("--conc", type=int, default=64)
    parser.add_argument("--max-runs", type=int, default=3, help="the first run plus re-runs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-reference", action="store_true", help="skip the fault-free run")
    args = parser.parse_args()
    judges = JUDGES[: args.judges]
    suite = {"questions": args.questions, "n_models": args.models, "judges": judges, "conc": args.conc}
    reference = None
    if not args.no_reference:
        with tempfile.TemporaryDirectory(prefix="jurist-bench-faults-") as tmp:
            reference = run_suite(Path(tmp), 0.0, max_runs=1, **suite)  # type: ignore[arg-type]
    results = []
    for rate in args.rates:
        with tempfile.TemporaryDirectory(prefix="jurist-bench-faults-") as tmp:
            result = run_suite(Path(tmp), rate, max_runs=args.max_runs, seed=args.seed, **suite)  # type: ignore[arg-type]
        if reference is not None and result.labels != reference.labels:
            differ = sum(result.labels.get(k) != v for k, v in reference.labels.items())
            result.problems.append(f"{differ} judgments differ from the fault-free run")
        results.append(result)
        print(f"rate {rate:.0%}: exit codes {result.exit_codes}, {result.seconds:.0f} s", flush=True)
    items = f"{args.questions} questions x {args.models} models x {len(judges)} judges"
    print(f"\n{items}, concurrency {args.conc}, at most {args.max_runs} runs")
    header = (
        f"{'faults':>6} {'runs':>5} {'exit codes':>11} {'injected':>9} {'requests':>9} {'att/request':>12}"
    )
    print(
        header
        + f" {'att/answer':>11} {'att/judgment':>13} {'peak fds':>9} {'peak RSS MB':>12} {'seconds':>8}"
    )
    for r in ([reference] if reference else []) + results:
        injected = sum(r.server.get("injected", {}).values())
        print(
            f"{r.rate:>6.0%} {len(r.exit_codes):>5} {','.join(map(str, r.exit_codes)):>11} {injected:>9} "
            f"{r.server.get('requests', 0):>9} {r.per_request[0]:>7.2f} /{r.per_request[1]:>3} "
            f"{r.per_answer[0]:>6.2f} /{r.per_answer[1]:>3} "
            f"{r.per_judgment[0]:>8.2f} /{r.per_judgment[1]:>3} "
            f"{r.peak_fds:>9} {r.peak_rss_mb:>12.1f} {r.seconds:>8.0f}"
        )
    print("attempts: mean / max; a judgment is two games (and their re-asks)")
    bad = [(r.rate, p) for r in results for p in r.problems]
    for rate, problem in bad:
        print(f"PROBLEM at {rate:.0%}: {problem}")
    print(
        "no run refused, 0 lost, 0 duplicated" + ("" if reference is None else ", verdicts as without faults")
    )
    if bad:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
