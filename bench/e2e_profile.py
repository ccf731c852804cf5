"""Where jurist's time goes on one leg of bench/bench_e2e.py, split at the server's own timestamps: start
(launch to the first request), steady state (first request to the last reply) and finish (last reply to
exit). Prints, for each phase, its length and the functions that held the time: self time (the frame on
top of the stack) and inclusive time of jurist's own functions (those on the stack for nearly the whole
phase, ``main`` and its like, left out: they say nothing); then the same for each idle gap, a stretch of
50 ms or more inside the steady state with no request in flight.

It runs ``jurist run`` exactly as bench/bench_e2e.py does, against a fresh bench/e2e_mock.py, under py-spy
(``record --format chrometrace --idle``: a sample of every thread's stack ``--rate`` times a second, idle
ones too, so that intervals add up to wall time). The trace's times count from py-spy's launch, which is
put at the measured launch on the monotonic clock the mock's spans use; jurist's exit is its last sample
(py-spy's own exit comes later: it writes the trace then). Only the main
thread is attributed: a thread's own share is printed on its own line. Waiting in the event loop's
``select`` (or in a lock) is reported as ``(idle)``.

With ``--native`` py-spy also samples C frames: where the time goes in C calls and
in the interpreter's teardown, which no Python frame shows.

py-spy is not one of jurist's dependencies: ``python3 -m venv /work/venvs/prof && /work/venvs/prof/bin/pip
install py-spy`` and pass ``--py-spy /work/venvs/prof/bin/py-spy`` (or ``$JURIST_BENCH_PYSPY``).

Usage: ``PYTHONPATH=src .venv/bin/python bench/e2e_profile.py --leg ifeval|answers|full [--conc 32]
[--latency 0.2] [--rate 100] [--top 12] [--limit N] [--judge-card] [--eval-framework-python P]
[--trace FILE] [--native]`` (answers and full need eval_framework's bundled Arena-Hard baselines, as
bench_e2e.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import bench_e2e
import e2e_ifeval as ifeval
import e2e_systems as systems

from mock_process import stop_process

IDLE_TOPS = frozenset({"select", "poll", "epoll", "wait", "acquire", "sleep", "_worker"})
Frame = tuple[str, str, int]  # name, file, line


def frame_label(frame: Frame) -> str:
    name, filename, _line = frame
    if "/jurist/" in filename:
        module = "jurist." + filename.split("/jurist/", 1)[1].removesuffix(".py").replace("/", ".")
    elif "site-packages/" in filename:
        module = filename.split("site-packages/", 1)[1].removesuffix(".py").replace("/", ".")
    else:
        module = Path(filename).stem
    return f"{module}:{name}"


def intervals(events: list[dict[str, object]]) -> dict[int, list[tuple[float, float, tuple[Frame, ...]]]]:
    """Each thread's ``(from, to, stack)`` spans (µs of the trace) out of py-spy's begin/end events."""
    by_thread: dict[int, list[dict[str, object]]] = defaultdict(list)
    for event in events:
        by_thread[int(str(event["tid"]))].append(event)
    out: dict[int, list[tuple[float, float, tuple[Frame, ...]]]] = {}
    for tid, mine in by_thread.items():
        mine.sort(key=lambda e: float(str(e["ts"])))  # stable: B/E order at one instant kept
        stack: list[Frame] = []
        spans: list[tuple[float, float, tuple[Frame, ...]]] = []
        previous = float(str(mine[0]["ts"]))
        for event in mine:
            moment = float(str(event["ts"]))
            if moment > previous and stack:
                spans.append((previous, moment, tuple(stack)))
            previous = moment
            args = event.get("args") or {}
            assert isinstance(args, dict)
            frame = (str(event["name"]), str(args.get("filename", "")), int(args.get("line", 0)))
            if event["ph"] == "B":
                stack.append(frame)
            elif stack:
                stack.pop()
        out[tid] = spans
    return out


def phase_report(
    spans: list[tuple[float, float, tuple[Frame, ...]]], begin: float, end: float, top: int
) -> list[str]:
    """Self and inclusive seconds of the main thread between ``begin`` and ``end`` (µs of the trace)."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for start, stop, stack in spans:
        seconds = (min(stop, end) - max(start, begin)) / 1e6
        if seconds <= 0:
            continue
        top_frame = stack[-1]
        own["(idle)" if top_frame[0] in IDLE_TOPS else frame_label(top_frame)] += seconds
        for label in {frame_label(frame) for frame in stack if "/jurist/" in frame[1]}:
            inclusive[label] += seconds
    lines = ["  self time (s):"]
    lines += [f"    {seconds:7.3f}  {label}" for label, seconds in own.most_common(top)]
    lines += ["  inclusive time of jurist's functions (s):"]
    length = (end - begin) / 1e6
    telling = [(label, seconds) for label, seconds in inclusive.most_common() if seconds < 0.9 * length]
    lines += [f"    {seconds:7.3f}  {label}" for label, seconds in telling[:top]]
    return lines


def launch_for(args: argparse.Namespace, run: Path, work: Path, url: str) -> systems.Launch:
    if args.leg == "ifeval":
        return ifeval.jurist_launch(run, url, args.conc, args.limit)
    python = ifeval.find_python(args.eval_framework_python, bench_e2e.EVALFW_PYTHON_ENV)
    python = python or systems.ensure_venv("venv-eval-framework", systems.EVAL_FRAMEWORK)
    data = systems.build_data(work, systems.eval_framework_data(python), args.limit)
    full = args.leg == "full"
    return systems.jurist_launch(run, data, url, args.conc, full, judge_card=args.judge_card)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leg", choices=bench_e2e.MODES, default="ifeval")
    parser.add_argument("--conc", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rate", type=int, default=100, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=12, help="functions listed per phase")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--judge-card", action="store_true", help="full leg: the judge card on")
    parser.add_argument("--eval-framework-python", type=Path, default=None)
    parser.add_argument("--py-spy", type=Path, default=os.environ.get("JURIST_BENCH_PYSPY"))
    parser.add_argument("--trace", type=Path, default=None, help="keep py-spy's chrometrace here")
    parser.add_argument("--native", action="store_true", help="sample C frames too (py-spy --native)")
    args = parser.parse_args()
    spy = args.py_spy or shutil.which("py-spy")
    if spy is None:
        raise SystemExit("py-spy not found: --py-spy PATH or $JURIST_BENCH_PYSPY (see --help)")
    with tempfile.TemporaryDirectory(prefix="jurist-profile-") as tmp:
        work = Path(tmp)
        run = systems.clear_run(work / "run")
        trace = args.trace or work / "trace.json"
        mock, url = bench_e2e.spawn_mock(args.latency)
        try:
            launch = launch_for(args, run, work / "data", url)
            spied = [str(spy), "record", "-f", "chrometrace", "--idle", "-r", str(args.rate)]
            spied += ["--native"] if args.native else []
            launch.argv = [*spied, "-o", str(trace), "--", *launch.argv]
            code, wall, cpu, _rss, launched, exited = bench_e2e.measure(launch, run / "output.log", 900.0)
            spans = bench_e2e.mock_spans(url)
        finally:
            stop_process(mock)
        if code != 0 or not spans:
            tail = (run / "output.log").read_text()[-3000:]
            raise SystemExit(f"exit {code}, {len(spans)} requests\n{tail}")
        threads = intervals(json.loads(trace.read_text()))
    main_tid = min(threads, key=lambda tid: threads[tid][0][0])  # the first thread sampled
    last_ts = max(stop for spans_ in threads.values() for _, stop, _ in spans_)
    offset = launched  # trace µs → monotonic seconds
    ended = offset + last_ts / 1e6  # jurist's last sample: its exit
    first = min(start for start, _ in spans)
    last = max(end for _, end in spans)
    to_ts = lambda moment: (moment - offset) * 1e6  # noqa: E731
    phases = [
        ("start (launch to the first request)", launched, first),
        ("steady state (first request to the last reply)", first, last),
        ("finish (last reply to exit)", last, ended),
    ]
    print(
        f"jurist {args.leg}: {len(spans)} requests, wall {wall:.2f} s under py-spy (its last sample "
        f"{ended - launched:.2f} s, py-spy's exit {exited - launched:.2f} s), CPU {cpu:.2f} s with py-spy's"
    )
    for tid, spans_ in threads.items():
        if tid != main_tid:
            busy = sum(b - a for a, b, stack in spans_ if stack[-1][0] not in IDLE_TOPS) / 1e6
            print(f"other thread {tid}: {busy:.2f} s not idle")
    main_end = offset + threads[main_tid][-1][1] / 1e6
    print(
        f"main thread's last Python frame to the last sample: {ended - main_end:.2f} s "
        "(interpreter teardown: no Python frame on the main thread, other threads idle)"
    )
    for title, begin, end in phases:
        print(f"\n{title}: {end - begin:.2f} s")
        print("\n".join(phase_report(threads[main_tid], to_ts(begin), to_ts(end), args.top)))
    for begin, end in idle_gaps(spans):
        print(f"\nidle gap (nothing in flight) {begin - launched:.2f}-{end - launched:.2f} s after launch")
        print("\n".join(phase_report(threads[main_tid], to_ts(begin), to_ts(end), args.top)))


def idle_gaps(spans: list[tuple[float, float]], least: float = 0.05) -> list[tuple[float, float]]:
    """The stretches of at least ``least`` seconds, between the first request and the last reply, with no
    request in flight: where the client had work it did not send (the table's ``idle``)."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    gaps: list[tuple[float, float]] = []
    level, previous = 0, events[0][0]
    for moment, step in events:
        if level == 0 and moment - previous >= least:
            gaps.append((previous, moment))
        previous = moment
        level += step
    return gaps


if __name__ == "__main__":
    main()
