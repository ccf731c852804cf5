"""Behaviour unchanged across issue 25's consolidation: run directories written by jurist at 30ef78b,
re-run with the code under test, must send 0 requests and leave the same scores, and ``jurist show`` must
print what the old code printed.

The recorded runs (one folder each: ``manifest.json``, ``inputs/``, ``run/`` as the old code left it, and
``printed/``: what the old code printed for the run, its re-run and ``jurist show``) are made once with the
old commit and kept outside the repository::

    git worktree add --detach /work/wt/old 30ef78b
    .venv/bin/python bench/check_behaviour.py record --src /work/wt/old/src /work/golden

The check copies each recorded folder to a temporary place, runs the manifest's ``jurist run`` command with
``--src`` on PYTHONPATH against this script's mock server (tests/mock_openai.py's, which counts every
request and probe), and compares every file of the run directory (``.derived/`` aside; run.json with the one
the old code's own re-run left), the run's stdout/stderr and ``jurist show`` (table and json) with the
recorded ones. Every difference is listed with its file, key and both values::

    .venv/bin/python bench/check_behaviour.py check --src /work/main/src /work/golden [--only NAME ...]

``--fresh`` runs each recorded command from nothing instead (its inputs only, the same mock) and compares
the requests per model and the score files (leaderboard, ratings, summary, judgebench, elo_ratings,
calibration) with the old code's first run. ``--without-derived`` drops the recorded ``.derived/`` first,
so code that still has the old scoring memo rescores. Exit status 0 when no run sent a request and nothing
differs, else 1. Checking the old code itself (``--src /work/wt/old/src``) gives 0 differences: what
differs on every re-run whatever the code (run.json's id and clock, the mock's port) is listed apart.
``list`` prints the recorded commands; ``export`` copies recorded runs to tests/fixtures/v0_30ef78b.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from check_behaviour_cases import API_BASE, CASES, Case, golden_mock, models_file, write_inputs  # noqa: E402
from check_behaviour_diff import (  # noqa: E402
    MISSING,
    Difference,
    compare_files,
    compare_json_text,
    compare_text,
    compare_trees,
)

OLD_COMMIT = "30ef78b"
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
STOPWORDS = Path.home() / ".cache" / "jurist-tests" / "nltk_stopwords"
"""NLTK's stop-word list as tests/conftest.py unpacks it (IFBench's ratio:stop_words), used where present."""
TIMEOUT_S = 600
NOT_COMPARED = (".derived/",)
"""Folders of a run directory not compared: the old code's derived indexes and scoring memo (issue 25
removes them; the old code itself rewrites them on every re-run of a copy, their inodes and times changed)."""
VOLATILE = {("run.json", "run_id"), ("run.json", "updated"), ("summary.json", "tstamp")}
"""(file, key) that differ on every re-run, whatever the code (a fresh id, the clock): listed, not counted."""
BOOKKEEPING = "run.json"
"""Written anew by each invocation (its own usage, its own ledger rows): compared with the run.json the old
code left after its own re-run (``printed/rerun-files/``), not with the first run's."""


def environment(src: Path, cache: Path, data: Path, nltk: list[str]) -> dict[str, str]:
    """What a jurist child process runs with: this process's environment without any JURIST_* variable,
    plus the variables a manifest lists (``manifest_env``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JURIST_")}
    env.update(manifest_env(str(src.resolve()), str(cache), data, nltk))
    return env


def manifest_env(src: str, cache: str, data: Path, nltk: list[str]) -> dict[str, str]:
    return {
        "PYTHONPATH": src,
        "JURIST_CACHE_DIR": cache,  # fresh and empty each time: nothing answered from a request cache
        "JURIST_DATA_DIR": str(data),
        "NLTK_DATA": os.pathsep.join(nltk),
        "COLUMNS": "160",  # rich's tables as wide on every machine
        "NO_COLOR": "1",
        "TZ": "UTC",
    }


def jurist(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@contextmanager
def served(models_yaml: str, folder: Path) -> Iterator[Any]:
    """The mock on 127.0.0.1, and ``folder/inputs/models.yaml`` (``models_yaml`` with its URL for
    ``{api_base}``)."""
    server = golden_mock()
    server.start()
    try:
        (folder / "inputs" / "models.yaml").write_text(models_yaml.replace(API_BASE, server.base_url))
        yield server
    finally:
        server.stop()


def sent(server: Any) -> int:
    """Every request the mock saw: chat requests and max_tokens=1 ones (probes, AlpacaEval's judge)."""
    return int(server.stats.requests + server.stats.probes)


def show(
    run_copy: Path, shown: list[str], env: dict[str, str]
) -> dict[str, subprocess.CompletedProcess[str]]:
    """``jurist show DIR`` as a table and as json for each of ``shown``, in ``run_copy`` (a throw-away
    copy of the case folder); named show[-TASK] and show_json[-TASK]."""
    outputs = {}
    for folder in shown:
        suffix = "" if folder == "run" else "-" + folder.removeprefix("run/").replace("/", "-")
        outputs[f"show{suffix}"] = jurist(["show", folder], run_copy, env)
        outputs[f"show_json{suffix}"] = jurist(["show", folder, "--format", "json"], run_copy, env)
    return outputs


def rerun(
    folder: Path, manifest: dict[str, Any], src: Path, tmp: Path, data: Path, derived: bool = True
) -> dict[str, Any]:
    """The recorded run re-run by the code in ``src`` on a copy (without its ``.derived/`` folders unless
    ``derived``): what it printed, what it sent, its copy."""
    nltk = manifest["nltk_data"]
    missing = [p for p in nltk if not Path(p).is_dir()]
    if missing:
        raise SystemExit(f"{manifest['name']}: NLTK data {missing} used when recorded is not here")
    ignore = None if derived else shutil.ignore_patterns(NOT_COMPARED[0].rstrip("/"))
    shown_at = tmp / "show"
    shutil.copytree(folder / "run", shown_at / "run", symlinks=True, ignore=ignore)
    env = environment(src, tmp / "cache-show", data, nltk)
    outputs = show(shown_at, manifest.get("shown", ["run"]), env)
    work = tmp / "work"
    shutil.copytree(folder / "inputs", work / "inputs", symlinks=True)
    shutil.copytree(folder / "run", work / "run", symlinks=True, ignore=ignore)
    env = environment(src, tmp / "cache-run", data, nltk)
    with served(manifest["models_yaml"], work) as server:
        outputs["rerun"] = jurist(manifest["args"], work, env)
        count, by_model = sent(server), dict(server.stats.requests_by_model)
    return {"outputs": outputs, "sent": count, "by_model": by_model, "run": work / "run"}


def printed(folder: Path, name: str) -> tuple[str, str, int]:
    base = folder / "printed"
    code = json.loads((base / "exit_codes.json").read_text())[name]
    return (base / f"{name}.stdout").read_text(), (base / f"{name}.stderr").read_text(), int(code)


def keep_printed(folder: Path, outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    base = folder / "printed"
    base.mkdir(exist_ok=True)
    codes_file = base / "exit_codes.json"
    codes = json.loads(codes_file.read_text()) if codes_file.exists() else {}
    for name, done in outputs.items():
        (base / f"{name}.stdout").write_text(done.stdout)
        (base / f"{name}.stderr").write_text(done.stderr)
        codes[name] = done.returncode
    codes_file.write_text(json.dumps(codes, indent=2, sort_keys=True) + "\n")


def check_case(folder: Path, src: Path, data: Path, derived: bool) -> tuple[int, list[Difference]]:
    """Requests the re-run sent and every difference from the recording."""
    manifest = json.loads((folder / "manifest.json").read_text())
    with tempfile.TemporaryDirectory(prefix=f"jurist-check-{folder.name}-") as tmp:
        again = rerun(folder, manifest, src, Path(tmp), data, derived)
        kept = folder / "printed" / "rerun-files"
        own = {p.relative_to(kept).as_posix(): p for p in kept.rglob(BOOKKEEPING)}
        diffs = list(compare_trees(folder / "run", again["run"], "run/", NOT_COMPARED, own))
        for name, done in again["outputs"].items():
            stdout, stderr, code = printed(folder, name)
            if done.returncode != code:
                diffs.append(Difference(f"jurist {name}", "exit code", code, done.returncode))
            # --format json prints the rows as JSON (compared by value); a table is compared as text
            diffs += compare_json_text(stdout, done.stdout, f"jurist {name} stdout")
            diffs += compare_text(stderr, done.stderr, f"jurist {name} stderr")
    if again["sent"]:
        diffs.append(Difference("mock server", "requests by model", {}, again["by_model"]))
    return again["sent"], diffs


SCORES = ("leaderboard.json", "ratings.json", "summary.json", "judgebench.json", "elo_ratings.json",
          "calibration.json", "tasks_summary.json")  # fmt: skip
"""The files a fresh run (``check --fresh``) is compared by: its scores (answers and judgments carry
times and arrive in another order each run)."""


def fresh_case(folder: Path, src: Path, data: Path) -> list[Difference]:
    """The recorded command run from nothing by the code in ``src`` (inputs only, the same mock): the same
    exit code, the same requests per model and the same score files as the old code's first run."""
    manifest = json.loads((folder / "manifest.json").read_text())
    with tempfile.TemporaryDirectory(prefix=f"jurist-fresh-{folder.name}-") as tmp:
        work = Path(tmp) / "work"
        shutil.copytree(folder / "inputs", work / "inputs", symlinks=True)
        env = environment(src, Path(tmp) / "cache", data, manifest["nltk_data"])
        with served(manifest["models_yaml"], work) as server:
            done = jurist(manifest["args"], work, env)
            by_model = dict(server.stats.requests_by_model)
        diffs = []
        if done.returncode != manifest["first_run"]["exit_code"]:
            diffs.append(
                Difference("jurist run", "exit code", manifest["first_run"]["exit_code"], done.returncode)
            )
        if by_model != manifest["mock"]["requests_by_model"]:
            diffs.append(
                Difference(
                    "mock server", "requests by model", manifest["mock"]["requests_by_model"], by_model
                )
            )
        old, new = folder / "run", work / "run"
        names = {p.relative_to(old).as_posix() for p in old.rglob("*.json") if p.name in SCORES}
        names |= {p.relative_to(new).as_posix() for p in new.rglob("*.json") if p.name in SCORES}
        for name in sorted(names):
            if not (new / name).is_file() or not (old / name).is_file():
                present = ("present", MISSING) if (old / name).is_file() else (MISSING, "present")
                diffs.append(Difference(f"run/{name}", "file", *present))
            else:
                diffs += compare_files(old / name, new / name, f"run/{name}")
    return diffs


def volatile(diff: Difference) -> bool:
    """A difference every re-run has: a fresh id, the clock, the mock's port in run.json's endpoints, and
    a path into the temporary copy the run was made or re-run in (its ``work/`` folder)."""
    if (diff.file.rsplit("/", 1)[-1], diff.where) in VOLATILE:
        return True
    if not diff.file.endswith(BOOKKEEPING):
        return False
    old, new = str(diff.old), str(diff.new)
    if "/work/" in old and "/work/" in new and old.split("/work/", 1)[1] == new.split("/work/", 1)[1]:
        return True
    port = old.startswith("http://127.0.0.1:") and new.startswith("http://127.0.0.1:")
    return port and old.split("/", 3)[3:] == new.split("/", 3)[3:]


def report(name: str, count: int | None, found: list[Difference], limit: int) -> bool:
    """Print one run's verdict and differences (``count``: requests a re-run sent; None for a fresh run)."""
    diffs = [d for d in found if not volatile(d)]
    ok = not count and not diffs
    what = "a fresh run" if count is None else f"{count} requests sent"
    print(f"{name}: {'same' if ok else 'DIFFERS'} ({what}, {len(diffs)} differences)")
    noted = sorted({f"{d.file} {d.where}" for d in found if volatile(d)})
    if noted:
        print(f"  differ on every re-run, not counted: {'; '.join(noted)}")
    by_file: dict[str, list[Difference]] = {}
    for diff in diffs:
        by_file.setdefault(diff.file, []).append(diff)
    for file, found in by_file.items():
        for diff in found[: limit or None]:
            print(f"  {diff}")
        if limit and len(found) > limit:
            print(f"  {file}: {len(found) - limit} more differences (--all prints them)")
    return ok


def record_case(case: Case, into: Path, src: Path, data: Path, nltk: list[str]) -> None:
    """Run ``case`` with the old code into ``into/<name>``, then re-run it with the old code as a check."""
    folder = into / case.name
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "inputs").mkdir(parents=True)
    write_inputs(case, folder / "inputs", data)
    models_yaml = models_file(case.aliases)
    with tempfile.TemporaryDirectory(prefix="jurist-record-") as tmp:
        env = environment(src, Path(tmp) / "cache", data, nltk)
        with served(models_yaml, folder) as server:
            first = jurist(list(case.args), folder, env)
            count, by_model = sent(server), dict(server.stats.requests_by_model)
    keep_printed(folder, {"first_run": first})
    commit = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    manifest = {
        "name": case.name,
        "family": case.family,
        "about": case.about,
        "jurist_commit": commit or OLD_COMMIT,
        "command": ["python", "-m", "jurist", *case.args],
        "args": list(case.args),
        "cwd": "the case folder (a copy of it): inputs/ and run/ are relative to it",
        "env": manifest_env("<the jurist src under test>", "<a fresh empty folder>", data, nltk),
        "nltk_data": nltk,
        "mock": {
            "server": "bench/check_behaviour_cases.py GoldenMock (tests/mock_openai.py MockOpenAI, no "
            "faults, no delay) on 127.0.0.1, a free port; inputs/models.yaml is models_yaml with its URL "
            "for {api_base}",
            "requests_by_model": by_model,
        },
        "models_yaml": models_yaml,
        "shown": list(case.shown),
        "first_run": {"exit_code": first.returncode, "requests_sent": count},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    with tempfile.TemporaryDirectory(prefix="jurist-record-") as tmp:
        again = rerun(folder, manifest, src, Path(tmp), data)
        keep_printed(folder, again["outputs"])
        for written in again["run"].rglob(BOOKKEEPING):
            kept = folder / "printed" / "rerun-files" / written.relative_to(again["run"])
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(written, kept)
        same = list(compare_trees(folder / "run", again["run"], "run/", NOT_COMPARED + (BOOKKEEPING,)))
        same = [d for d in same if not d.file.endswith(BOOKKEEPING) and not volatile(d)]
    manifest["rerun_by_recording_code"] = {"requests_sent": again["sent"], "differences": len(same)}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"{case.name}: exit {first.returncode}, {count} requests; re-run by the same code: "
          f"{again['sent']} requests, {len(same)} differences")  # fmt: skip
    for diff in same:
        print(f"  {diff}")


MACHINE_MARKS = ("/work/", "/tmp/", "/root/", "/home/", "Bearer ", "sk-")
"""Text a committed fixture must not hold: this machine's absolute paths, a credential's look."""


def export_case(folder: Path, into: Path) -> None:
    """A recorded run as a test fixture (tests/test_old_runs.py): inputs/ (the models file left out),
    run/ and a manifest without this machine's paths; refused when a file holds :data:`MACHINE_MARKS`."""
    manifest = json.loads((folder / "manifest.json").read_text())
    target = into / folder.name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(folder / "inputs", target / "inputs", ignore=shutil.ignore_patterns("models.yaml"))
    shutil.copytree(folder / "run", target / "run")
    keep = ("name", "family", "about", "jurist_commit", "args", "models_yaml", "first_run")
    fixture = {key: manifest[key] for key in keep} | {"recorded_with": "bench/check_behaviour.py record"}
    (target / "manifest.json").write_text(json.dumps(fixture, indent=2) + "\n")
    for path in target.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            found = [mark for mark in MACHINE_MARKS if mark in text]
            if found:
                shutil.rmtree(target)
                raise SystemExit(f"{path.relative_to(into)} holds {found}: not exported")
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    print(f"{folder.name}: exported to {target} ({size} bytes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("action", choices=("record", "check", "list", "export"))
    parser.add_argument(
        "folder", type=Path, nargs="?", help="where the recorded runs are (record: are written)"
    )
    parser.add_argument("--src", type=Path, help="the jurist source tree to run (its src/ folder)")
    parser.add_argument("--only", action="append", default=[], help="this recorded run only (repeatable)")
    parser.add_argument("--into", type=Path, help="export: the fixtures folder (tests/fixtures/v0_30ef78b)")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="the shared benchmark data")
    parser.add_argument("--all", action="store_true", help="print every difference (default: 40 a file)")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="check: run each recorded command from nothing (inputs only) and compare the requests per\n"
        "model and the score files with the old code's first run",
    )
    parser.add_argument(
        "--without-derived", action="store_true",
        help="check: drop the recorded .derived/ folders first (the old code's scoring memo then cannot\n"
        "replay the stored scores: code that still has it rescores from the run's files)",
    )  # fmt: skip
    args = parser.parse_intermixed_args()
    if args.action == "list":
        for case in CASES:
            print(f"{case.name:20} {case.family:15} jurist {' '.join(case.args)}")
        return
    if args.folder is None:
        parser.error(f"{args.action} needs the folder of the recorded runs")
    if args.action == "export":
        if args.into is None or not args.only:
            parser.error("export needs --into and the runs to export (--only NAME ...)")
        for name in args.only:
            export_case(args.folder / name, args.into)
        return
    if args.src is None or not (args.src / "jurist" / "__init__.py").is_file():
        parser.error("--src must name a folder holding the jurist package")
    data = args.data_dir.resolve()
    if args.action == "record":
        nltk = [str(data / "nltk_data")] + ([str(STOPWORDS)] if STOPWORDS.is_dir() else [])
        for case in CASES:
            if not args.only or case.name in args.only:
                record_case(case, args.folder.resolve(), args.src, data, nltk)
        return
    names = sorted(p.parent.name for p in args.folder.glob("*/manifest.json"))
    names = [n for n in names if not args.only or n in args.only]
    if not names:
        raise SystemExit(f"no recorded run (*/manifest.json) in {args.folder}")
    failed = []
    for name in names:
        count: int | None
        if args.fresh:
            count, diffs = None, fresh_case(args.folder / name, args.src, data)
        else:
            count, diffs = check_case(args.folder / name, args.src, data, not args.without_derived)
        if not report(name, count, diffs, 0 if args.all else 40):
            failed.append(name)
    print(f"\n{len(names) - len(failed)} of {len(names)} recorded runs unchanged"
          + (f"; differ: {', '.join(failed)}" if failed else ""))  # fmt: skip
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
