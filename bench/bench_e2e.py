"""jurist against its peers end to end, side by side in one invocation: the same Arena-Hard v2.0 questions,
the same mock server (tests/mock_openai.py with a fixed latency per request), the same number of requests
in flight, answers only and the full run (answers, then two judged games per question); and the IFEval
leg (``--modes ifeval``): upstream's 541 prompts answered and checked by rule (bench/e2e_ifeval.py).

Systems (bench/e2e_systems.py says how each is set up): jurist (this checkout), eval_framework (PyPI
``llm-eval-framework``, the seed framework, installed into a venv of its own on first use) and, with
``--arena-hard-auto DIR`` (a checkout, or a bare git directory), arena-hard-auto's gen_answer/gen_judgment;
with ``--jurist-ref DIR`` (another jurist source tree, e.g. ``git archive HEAD`` unpacked), that version as
system ``jurist-ref``, to measure a change against the code before it in the same conditions;
``jurist-card``, jurist's full run with its judge card on (the others run with it off); ``inspect``
(Inspect AI with inspect_evals' IFEval task, IFEval leg only; ``--inspect-python`` or
``$JURIST_BENCH_INSPECT_PYTHON``, a venv made as bench/e2e_ifeval.py says, else skipped); and
``floor`` (bench/e2e_floor.py), no harness at all but the same requests from one aiohttp session: what any
client pays on this machine above the limit.

Each run gets a fresh mock process that records the start and end of every request (bench/e2e_mock.py),
so the figures below come from the server's side as well as the client's:

* wall: launch to exit of the client process; CPU: user+sys of the client's process tree (``wait4``);
  RSS: its peak resident set (``ru_maxrss``, the largest process of the tree);
* req, req/s: requests the server saw (probes included), per wall second;
* in flight: mean requests in flight between the first request's start and the last one's end; peak;
  at C: the share of that time with C (or more) in flight: how saturated the server was kept;
* limit: R·L/C, the fastest R requests of latency L can finish at C in flight (R: the work, 1 request per
  answer, 3 per question for a full run); over: wall minus the limit;
* start: launch to the first request; idle: time inside the window with nothing in flight; tail: the
  last request's end to exit;
* others: cores kept busy by processes other than the client and the mock during the run (the host's
  busy time from ``/proc/stat`` less both): how much the machine's other work competed with it.

Every figure is the median of ``--rounds`` runs (wall also shows min-max); the rounds interleave the
systems, so background load falls on all of them alike. A short untimed warm-up runs each system once
first, on its first leg (answers to 2·C questions, or 2·C IFEval prompts for a system on that leg
only). The load average is printed: this is a shared 2-core machine.

Usage: ``python bench/bench_e2e.py [--rounds 3] [--conc 32] [--latency 0.2] [--limit N]
[--systems jurist jurist-card eval_framework inspect arena-hard-auto floor] [--modes answers full ifeval]
[--arena-hard-auto DIR] [--jurist-ref DIR] [--eval-framework-python P] [--inspect-python P] [--json F]``.
bench/e2e_profile.py profiles one of jurist's legs (start, steady state, finish).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import e2e_ifeval as ifeval  # noqa: E402
import e2e_systems as systems  # noqa: E402

import mock_process  # noqa: E402
from mock_process import stop_process  # noqa: E402

MOCK = Path(__file__).resolve().parent / "e2e_mock.py"
SYSTEMS = ("jurist", "jurist-card", "eval_framework", "inspect", "arena-hard-auto", "floor")
MODES = ("answers", "full", "ifeval")
# The legs each system runs: Inspect only IFEval (inspect_evals has no Arena-Hard v2.0 task to match),
# arena-hard-auto only Arena-Hard, jurist-card (jurist with its judge card on) only the judged run.
LEGS = {"inspect": ("ifeval",), "arena-hard-auto": ("answers", "full"), "jurist-card": ("full",)}
EVALFW_PYTHON_ENV = "JURIST_BENCH_EVALFW_PYTHON"


def runs_leg(system: str, mode: str) -> bool:
    return mode in LEGS.get(system, MODES)


@dataclass
class Run:
    """What one run of one system measured."""

    system: str
    mode: str
    returncode: int
    wall: float
    cpu: float
    rss_mb: float
    requests: int
    load: float  # the 1-minute load average at the run's end
    others: float  # cores busy with other processes than the client and the mock, on average over the run
    flight: dict[str, float] = field(default_factory=dict)


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU seconds the whole host has spent since boot, every core, idle and iowait left out."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(
        int, Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def process_seconds(pid: int) -> float:
    """User+sys CPU seconds of one live process (``/proc/PID/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def spawn_mock(latency: float) -> tuple[subprocess.Popen[bytes], str]:
    """bench/e2e_mock.py on a port of its own, answering (tests/mock_process.py starts and waits for it)."""
    process, urls = mock_process.spawn_mock(1, ["--delay", str(latency)], script=MOCK)
    return process, urls[0]


def mock_spans(url: str) -> list[tuple[float, float]]:
    with urllib.request.urlopen(f"{url}/_spans", timeout=30) as resp:  # noqa: S310 (loopback)
        return [(start, end) for start, end in json.loads(resp.read())["spans"]]


def flight_stats(
    spans: list[tuple[float, float]], conc: int, launched: float, exited: float
) -> dict[str, float]:
    """In-flight figures of the server's request spans (monotonic seconds, like ``launched``/``exited``)."""
    if not spans:
        return {}
    first = min(start for start, _ in spans)
    last = max(end for _, end in spans)
    window = max(last - first, 1e-9)
    # Ends sort before starts at the same instant: a slot handed over is not counted twice.
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    level = peak = 0
    at_limit = idle = 0.0
    previous = first
    for moment, step in events:
        if level >= conc:
            at_limit += moment - previous
        elif level == 0:
            idle += moment - previous
        previous = moment
        level += step
        peak = max(peak, level)
    busy = sum(end - start for start, end in spans)
    return {
        "mean": busy / window,
        "peak": float(peak),
        "at_limit": at_limit / window,
        "start": first - launched,
        "idle": idle,
        "tail": exited - last,
    }


def measure(
    launch: systems.Launch, log: Path, timeout: float
) -> tuple[int, float, float, float, float, float]:
    """Run ``launch`` to its end; returns exit code, wall, CPU of the tree, peak RSS MB, launch and exit
    times (monotonic). ``wait4`` reports the child with every descendant it waited for."""
    with log.open("wb") as out:
        launched = time.monotonic()
        process = subprocess.Popen(
            launch.argv, cwd=launch.cwd, env=launch.env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        watchdog = threading.Timer(timeout, process.kill)
        watchdog.start()
        _, status, usage = os.wait4(process.pid, 0)
        exited = time.monotonic()
        watchdog.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return process.returncode, exited - launched, cpu, usage.ru_maxrss / 1024, launched, exited


class Bench:
    """Set-up shared by every run: venvs, the data folder, the work folder."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        given = ifeval.find_python(args.eval_framework_python, EVALFW_PYTHON_ENV)
        self.ef_python = given or systems.ensure_venv("venv-eval-framework", systems.EVAL_FRAMEWORK)
        self.inspect_python = ifeval.find_python(args.inspect_python, ifeval.INSPECT_PYTHON_ENV)
        bundled = systems.eval_framework_data(self.ef_python)
        self.data = systems.build_data(work / "main", bundled, args.limit)
        self.warm = systems.build_data(work / "warm", bundled, 2 * args.conc)
        self.aha: tuple[Path, Path] | None = None
        if "arena-hard-auto" in args.systems:
            code = systems.arena_hard_auto_code(args.arena_hard_auto)
            self.aha = (systems.ensure_venv("venv-arena-hard-auto", systems.ARENA_HARD_AUTO), code)
        self.questions = sum(1 for _ in (self.data / "question.jsonl").open(encoding="utf-8"))
        self.prompts = ifeval.prompts(args.limit)

    def requests(self, mode: str) -> int:
        """The requests one run of the leg sends, probes left out."""
        return {"answers": self.questions, "full": 3 * self.questions, "ifeval": self.prompts}[mode]

    def launch(self, system: str, mode: str, run: Path, data: Path, url: str) -> systems.Launch:
        if mode == "ifeval":  # the warm-up's is the first 2·C prompts
            limit = self.args.limit if data is self.data else 2 * self.args.conc
            return self.ifeval_launch(system, run, url, limit)
        full, conc = mode == "full", self.args.conc
        if system in ("jurist", "jurist-card"):
            return systems.jurist_launch(run, data, url, conc, full, judge_card=system == "jurist-card")
        if system == "jurist-ref":
            assert self.args.jurist_ref is not None
            return systems.jurist_launch(run, data, url, conc, full, src=self.args.jurist_ref / "src")
        if system == "floor":
            return systems.floor_launch(run, data, url, conc, full)
        if system == "eval_framework":
            return systems.eval_framework_launch(self.ef_python, run, data.parent.parent, url, conc, full)
        assert self.aha is not None
        return systems.arena_hard_auto_launch(self.aha[0], self.aha[1], run, data, url, conc, full)

    def ifeval_launch(self, system: str, run: Path, url: str, limit: int | None) -> systems.Launch:
        conc = self.args.conc
        if system == "jurist":
            return ifeval.jurist_launch(run, url, conc, limit)
        if system == "jurist-ref":
            assert self.args.jurist_ref is not None
            return ifeval.jurist_launch(run, url, conc, limit, src=self.args.jurist_ref / "src")
        if system == "eval_framework":
            return ifeval.eval_framework_launch(self.ef_python, run, url, conc, limit)
        if system == "inspect":
            assert self.inspect_python is not None
            return ifeval.inspect_launch(self.inspect_python, run, url, conc, limit)
        return ifeval.floor_launch(run, url, conc, limit)

    def run(self, system: str, mode: str, tag: str, data: Path | None = None) -> Run:
        data = data or self.data
        run = systems.clear_run(self.work / "runs" / f"{system}-{mode}-{tag}")
        mock, url = spawn_mock(self.args.latency)
        try:
            launch = self.launch(system, mode, run, data, url)
            host, server = busy_seconds(), process_seconds(mock.pid)
            code, wall, cpu, rss, launched, exited = measure(launch, run / "output.log", self.args.timeout)
            host, server = busy_seconds() - host, process_seconds(mock.pid) - server
            spans = mock_spans(url)
        finally:
            stop_process(mock)
        others = max(0.0, host - cpu - server) / wall
        result = Run(system, mode, code, wall, cpu, rss, len(spans), os.getloadavg()[0], others)
        result.flight = flight_stats(spans, self.args.conc, launched, exited)
        expected = self.requests(mode) if data is self.data else 0
        if code != 0 or len(spans) < expected:
            tail = (run / "output.log").read_text(errors="replace")[-3000:]
            raise SystemExit(f"{system} {mode}: exit {code}, {len(spans)} of {expected} requests\n{tail}")
        return result


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


TITLES = {
    "answers": "Arena-Hard v2.0, answers only",
    "full": "Arena-Hard v2.0, full run (answers + 2 judged games per question)",
    "ifeval": "IFEval, answers checked by rule",
}


def table(runs: list[Run], mode: str, work: int, conc: int, latency: float) -> list[str]:
    limit = work * latency / conc
    title = TITLES[mode]
    lines = [f"{title}: {work} requests, limit R·L/C = {work}·{latency:g}/{conc} = {limit:.2f} s"]
    head = (
        f"{'system':<16}{'wall s (min-max)':>23}{'CPU s':>8}{'RSS MB':>8}{'req':>6}{'req/s':>7}"
        f"{'in flight':>10}{'peak':>5}{'at C':>6}{'over limit':>17}{'start':>7}{'idle':>6}{'tail':>6}"
        f"{'others':>7}"
    )
    lines += [head, "-" * len(head)]
    for system in dict.fromkeys(r.system for r in runs):
        mine = [r for r in runs if r.system == system and r.mode == mode]
        if not mine:
            continue
        walls = [r.wall for r in mine]
        wall = median(walls)
        flight = {key: median([r.flight.get(key, float("nan")) for r in mine]) for key in mine[0].flight}
        span = f"{wall:.2f} ({min(walls):.2f}-{max(walls):.2f})"
        over = f"+{wall - limit:.2f} ({wall / limit:.2f}x)"
        cpu, rss = median([r.cpu for r in mine]), median([r.rss_mb for r in mine])
        requests, rate = median([r.requests for r in mine]), median([r.requests / r.wall for r in mine])
        lines.append(
            f"{system:<16}{span:>23}{cpu:>8.2f}{rss:>8.0f}{requests:>6.0f}{rate:>7.1f}"
            f"{flight['mean']:>10.1f}{flight['peak']:>5.0f}{100 * flight['at_limit']:>5.0f}%{over:>17}"
            f"{flight['start']:>7.2f}{flight['idle']:>6.2f}{flight['tail']:>6.2f}"
            f"{median([r.others for r in mine]):>7.2f}"
        )
    return lines


def peer_version(python: Path, *distributions: str) -> str:
    """``name version`` of each distribution installed for ``python`` (a peer's venv)."""
    code = "import sys, importlib.metadata as m; print(' '.join(f'{d} {m.version(d)}' for d in sys.argv[1:]))"
    done = subprocess.run([str(python), "-c", code, *distributions], capture_output=True, text=True)
    return done.stdout.strip() or f"{'/'.join(distributions)} (version unknown)"


def versions(bench: Bench) -> str:
    from importlib.metadata import version

    parts = [f"jurist {version('jurist')}", peer_version(bench.ef_python, "llm-eval-framework")]
    if "inspect" in bench.args.systems and bench.inspect_python is not None:
        parts.append(peer_version(bench.inspect_python, "inspect-ai", "inspect-evals"))
    if bench.aha is not None:
        parts.append(f"arena-hard-auto {bench.aha[1].name.removeprefix('arena-hard-auto-') or 'checkout'}")
    return ", ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--conc", type=int, default=32, help="requests in flight, every system")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the mock takes per request")
    parser.add_argument(
        "--limit", type=int, default=None, help="only the first N questions (and IFEval prompts)"
    )
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--arena-hard-auto", type=Path, default=None, help="checkout or bare git dir")
    parser.add_argument(
        "--jurist-ref", type=Path, default=None, help="another jurist tree: system jurist-ref"
    )
    parser.add_argument(
        "--eval-framework-python", type=Path, default=None,
        help=f"eval_framework's venv python (else ${EVALFW_PYTHON_ENV}, else a venv made under the cache)",
    )  # fmt: skip
    parser.add_argument(
        "--inspect-python", type=Path, default=None,
        help=f"Inspect's venv python (else ${ifeval.INSPECT_PYTHON_ENV}); bench/e2e_ifeval.py: making one",
    )  # fmt: skip
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds one run may take")
    parser.add_argument("--json", type=Path, default=None, help="write every run's figures here")
    args = parser.parse_args()
    if "arena-hard-auto" in args.systems and args.arena_hard_auto is None:
        print("arena-hard-auto skipped: no --arena-hard-auto DIR given", file=sys.stderr)
        args.systems = [s for s in args.systems if s != "arena-hard-auto"]
    if (
        "inspect" in args.systems
        and ifeval.find_python(args.inspect_python, ifeval.INSPECT_PYTHON_ENV) is None
    ):
        print(f"inspect skipped: no --inspect-python nor ${ifeval.INSPECT_PYTHON_ENV}", file=sys.stderr)
        args.systems = [s for s in args.systems if s != "inspect"]
    if args.jurist_ref is not None:
        if not (args.jurist_ref / "src" / "jurist" / "__init__.py").is_file():  # else the venv's jurist runs
            sys.exit(f"--jurist-ref {args.jurist_ref}: no src/jurist there (give the tree above src)")
        args.systems.insert(1 if "jurist" in args.systems else 0, "jurist-ref")
    load_before = os.getloadavg()
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="jurist-bench-e2e-") as tmp:
        bench = Bench(args, Path(tmp))
        for system in args.systems:
            warm_leg = next((mode for mode in args.modes if runs_leg(system, mode)), None)
            if warm_leg is not None:
                bench.run(system, "answers" if warm_leg == "full" else warm_leg, "warm", bench.warm)
        for round_no in range(args.rounds):
            for system in args.systems:
                for mode in (mode for mode in args.modes if runs_leg(system, mode)):
                    result = bench.run(system, mode, str(round_no))
                    runs.append(result)
                    print(
                        f"round {round_no + 1} {system} {mode}: {result.wall:.2f} s wall, "
                        f"{result.cpu:.2f} s CPU, {result.rss_mb:.0f} MB, load {result.load:.1f}, "
                        f"other processes {result.others:.2f} cores",
                        flush=True,
                    )
    loads, others = [r.load for r in runs], [r.others for r in runs]
    print(
        f"\n{bench.questions} Arena-Hard v2.0 questions, {bench.prompts} IFEval prompts, "
        f"mock latency {args.latency:g} s, "
        f"{args.conc} in flight, medians of {args.rounds}; {versions(bench)}; {os.cpu_count()} CPUs; "
        f"load average before {load_before[0]:.1f}, at the end of each run median {median(loads):.1f} "
        f"({min(loads):.1f}-{max(loads):.1f}); other processes kept {median(others):.2f} cores busy "
        f"(median over runs; {min(others):.2f}-{max(others):.2f})"
    )
    for mode in args.modes:
        print()
        print("\n".join(table(runs, mode, bench.requests(mode), args.conc, args.latency)))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=1))


if __name__ == "__main__":
    main()
