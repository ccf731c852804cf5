"""Time ``jurist show`` on a synthetic Arena-Hard v2.0 run of realistic size (prints, asserts nothing).

The data mirrors the set-up of arena-hard.md section 4.2, where upstream's ``show_result.py`` took 14.7 s and
1.72 GB without style control and 101 s with it: 27 models x the 750 real v2.0 question uids x 2 games, in
upstream's judgment shape (``games[].score``, a judgment text and the full judge prompt embedding the
question and both answers, ~20 MB per model), plus answer files with style metadata. Answers are the real
o3-mini and sky-t1-32b answers (with their upstream metadata) mixed per model; labels come from an
ordinal-logit judge that likes strength and a little length; about 0.5% of games are null.

Steps: generate (seeded) -> ``jurist import arena-hard`` -> ``jurist show`` without and with style control,
each command a subprocess whose wall time and peak RSS (``getrusage(RUSAGE_CHILDREN)`` in a fresh wrapper
process per run) are measured. Run: ``.venv/bin/python bench/bench_show.py [--work DIR] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e_systems import with_bytecode  # noqa: E402

ENV = with_bytecode(os.environ)
"""Bytecode cached outside the checkout even where the host sets ``PYTHONDONTWRITEBYTECODE``: an installed
jurist has its ``.pyc`` files, and compiling the tree again at every ``jurist show`` is not its cost."""

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arena-hard"
QUESTIONS = SHARED / "data" / "arena-hard-v2.0" / "question.jsonl"
O3_MINI = SHARED / "data" / "arena-hard-v2.0" / "model_answer" / "o3-mini-2025-01-31.jsonl"
SKY = SHARED / "extra" / "lmarena-pr68" / "data" / "arena-hard-v2.0" / "model_answer" / "sky-t1-32b.jsonl"
BASELINES = {"hard_prompt": "o3-mini-2025-01-31", "creative_writing": "gemini-2.0-flash-001"}
LABELS = ("B>>A", "B>A", "A=B", "A>B", "A>>B")  # from the model's side when the model is A: worst first
UPSTREAM = {  # arena-hard.md section 4.2: wall seconds and peak RSS in GB on 2 cores
    "no style": (14.7, 1.72),
    "style control": (101.0, 1.77),
    "2 judges ensemble, creative": (32.8, 2.62),
}
SYSTEM = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI "
    "assistants to the user prompt displayed below. You will be given assistant A's answer and assistant "
    "B's answer. Your job is to evaluate which assistant's answer is better. " * 4
)

# The wrapper runs one command and reports its wall time and its children's peak RSS (in a fresh process,
# so earlier measurements cannot leak into the maximum).
_WRAPPER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = usage.ru_utime + usage.ru_stime
report = {"wall": wall, "cpu": cpu, "rss_mb": usage.ru_maxrss / 1024, "rc": proc.returncode}
report["stderr"] = proc.stderr[-2000:]
print(json.dumps(report))
"""


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _answer(record: dict[str, Any]) -> str:
    return str(record["messages"][-1]["content"]["answer"])


def _answer_line(model: str, uid: str, source: dict[str, Any]) -> str:
    record = {
        "uid": uid,
        "ans_id": f"{model}-{uid}",
        "model": model,
        "messages": [source["messages"][0], {"role": "assistant", "content": {"answer": _answer(source)}}],
        "tstamp": 1744155079.0,
        "metadata": source["metadata"],
    }
    return json.dumps(record, ensure_ascii=False)


def _bodies(rng: np.random.Generator, n: int = 64) -> list[str]:
    """A pool of judge explanations (~1.5 kB each), drawn once: building one per game is the slow part."""
    words = [
        "Assistant A",
        "Assistant B",
        "accurate",
        "concise",
        "the code",
        "misses",
        "explains",
        "edge case",
    ]
    return [" ".join(rng.choice(words, 220)) for _ in range(n)]


_BODIES: list[str] = []


def _judgment_text(label: str, rng: np.random.Generator) -> str:
    if not _BODIES:
        _BODIES.extend(_bodies(rng))
    body = _BODIES[int(rng.integers(len(_BODIES)))]
    return f"My own answer would be brief.\n\nEvaluation: {body}.\n\nMy final verdict is [[{label}]]."


def _game(
    label: str | None, a: str, b: str, question: str, rng: np.random.Generator
) -> dict[str, Any] | None:
    if label is None:
        return None
    user = (
        f"<|User Prompt|>\n{question}\n\n<|The Start of Assistant A's Answer|>\n{a}\n"
        f"<|The End of Assistant A's Answer|>\n\n<|The Start of Assistant B's Answer|>\n{b}\n"
        "<|The End of Assistant B's Answer|>"
    )
    return {
        "score": label,
        "judgment": {"answer": _judgment_text(label, rng)},
        "prompt": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
    }


def _labels(d: float, rng: np.random.Generator) -> list[str | None]:
    """Two games' labels, from the model's side (game 2 has the model in position A)."""
    out: list[str | None] = []
    for _ in range(2):
        if rng.random() < 0.005:
            out.append(None)
            continue
        z = d + rng.logistic()
        out.append(LABELS[int(np.searchsorted([-2.5, -0.6, 0.6, 2.5], z))])
    return out


def _mirror(label: str) -> str:
    return {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}[label]


def generate(root: Path, n_models: int, judges: list[str], seed: int = 0) -> None:
    """Write data/arena-hard-v2.0/{question.jsonl, model_answer/, model_judgment/<judge>/}."""
    rng = np.random.default_rng(seed)
    bench = root / "data" / "arena-hard-v2.0"
    (bench / "model_answer").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(QUESTIONS, bench / "question.jsonl")
    questions = _read_jsonl(QUESTIONS)
    o3 = {r["uid"]: r for r in _read_jsonl(O3_MINI)}
    sky = {r["uid"]: r for r in _read_jsonl(SKY)}
    sources = {"o3-mini-2025-01-31": {u: o3[u] for u in o3}}
    sources["gemini-2.0-flash-001"] = {q["uid"]: sky.get(q["uid"], o3[q["uid"]]) for q in questions}
    strength = np.sort(rng.normal(0.0, 1.3, n_models))
    for k in range(n_models):
        share = rng.uniform(0.1, 0.9)  # how often this model answers like sky-t1 (longer, more markdown)
        pick = {
            q["uid"]: sky[q["uid"]] if q["uid"] in sky and rng.random() < share else o3[q["uid"]]
            for q in questions
        }
        sources[f"synth-model-{k:02d}"] = pick
    for model, answers in sources.items():
        lines = [_answer_line(model, uid, record) for uid, record in answers.items()]
        (bench / "model_answer" / f"{model}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for judge in judges:
        folder = bench / "model_judgment" / judge
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(n_models):
            model = f"synth-model-{k:02d}"
            with open(folder / f"{model}.jsonl", "w", encoding="utf-8") as fh:
                for q in rng.permutation(len(questions)):  # upstream appends in completion order
                    fh.write(
                        json.dumps(_judgment_line(questions[q], model, strength[k], sources, rng)) + "\n"
                    )


def _judgment_line(
    question: dict[str, Any], model: str, strength: float, sources: dict[str, Any], rng: np.random.Generator
) -> dict[str, Any]:
    uid, category = question["uid"], question["category"]
    baseline = BASELINES[category]
    ans_m, ans_b = sources[model][uid], sources[baseline][uid]
    len_m, len_b = ans_m["metadata"]["token_len"], ans_b["metadata"]["token_len"]
    d = strength + 0.8 * (len_m - len_b) / max(len_m + len_b, 1)
    g1_label, g2_label = _labels(d, rng)
    text_m, text_b = _answer(ans_m), _answer(ans_b)
    games = [
        _game(None if g1_label is None else _mirror(g1_label), text_b, text_m, question["prompt"], rng),
        _game(g2_label, text_m, text_b, question["prompt"], rng),
    ]
    return {
        "uid": uid,
        "category": category,
        "judge": "gpt-4.1",
        "model": model,
        "baseline": baseline,
        "games": games,
    }


def measure(command: list[str], repeat: int) -> dict[str, float]:
    """Best wall time and the largest peak RSS over ``repeat`` runs, each in its own wrapper process."""
    walls, cpus, rss = [], [], []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", _WRAPPER, *command], capture_output=True, text=True, check=True, env=ENV
        )
        report = json.loads(out.stdout)
        if report["rc"] != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{report['stderr']}")
        walls.append(report["wall"])
        cpus.append(report["cpu"])
        rss.append(report["rss_mb"])
    return {"wall": min(walls), "wall_median": float(np.median(walls)), "cpu": min(cpus), "rss_mb": max(rss)}


def _size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-bench-show"))
    parser.add_argument("--models", type=int, default=27)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--two-judges", action="store_true", help="also generate gemini-2.5 and time --ensemble"
    )
    parser.add_argument("--keep", action="store_true", help="reuse generated data and the imported run")
    args = parser.parse_args()
    if not QUESTIONS.is_file():
        raise SystemExit(f"shared data not found at {SHARED}")
    data, run = args.work / "data-root", args.work / "run"
    judges = ["gpt-4.1"] + (["gemini-2.5"] if args.two_judges else [])
    jurist = [sys.executable, "-m", "jurist"]
    if not (args.keep and run.is_dir()):
        shutil.rmtree(args.work, ignore_errors=True)
        start = time.perf_counter()
        generate(data, args.models, judges)
        print(f"generated {_size_mb(data):,.0f} MB of upstream files in {time.perf_counter() - start:.1f} s")
        imported = measure(
            [*jurist, "import", "arena-hard", str(data), "--bench", "arena-hard-v2.0", "--out", str(run)], 1
        )
        battles_mb = (run / "battles.jsonl").stat().st_size / 1e6
        print(
            f"jurist import arena-hard: {imported['wall']:.1f} s, peak RSS {imported['rss_mb']:.0f} MB "
            f"-> run dir {_size_mb(run):,.0f} MB (battles.jsonl {battles_mb:.1f} MB)"
        )
    cases = {
        # --method winrate: Arena-Hard v2.0's own scoring style-controls hard prompts by default (its
        # official scoring, recorded in run.json), so the plain case says so explicitly
        "no style": ["--category", "hard_prompt", "--judge", "gpt-4.1", "--method", "winrate"],
        "style control": [
            "--category",
            "hard_prompt",
            "--judge",
            "gpt-4.1",
            "--style-control",
            "length,markdown",
        ],
        "both categories": [
            "--category",
            "hard_prompt",
            "--category",
            "creative_writing",
            "--judge",
            "gpt-4.1",
            "--method",
            "winrate",
        ],
    }
    if args.two_judges:
        cases["2 judges ensemble, creative"] = ["--category", "creative_writing", "--ensemble"]
    load = os.getloadavg()[0]
    print(
        f"\ncpus: {os.cpu_count()}, load average {load:.1f}; {args.models} models x 750 questions x 2 games"
    )
    print(f"best of {args.repeat} runs (wall, cpu = user + sys), median wall, largest peak RSS")
    header = f"{'jurist show':28s} {'wall s':>7s} {'median':>7s} {'cpu s':>6s} {'RSS MB':>7s}"
    print(f"{header}   upstream show_result.py (2 cores)")
    for name, extra in cases.items():
        result = measure([*jurist, "show", str(run), "--format", "json", *extra], args.repeat)
        upstream = UPSTREAM.get(name)
        ref = (
            f"{upstream[0]:.1f} s, {upstream[1]:.2f} GB"
            if upstream
            else "crashes (bug 3)"
            if "both" in name
            else ""
        )
        print(
            f"{name:28s} {result['wall']:7.2f} {result['wall_median']:7.2f} {result['cpu']:6.2f} "
            f"{result['rss_mb']:7.0f}   {ref}"
        )
    print("\ntargets: no style <= 1.5 s and <= 300 MB; style control <= 5 s")


if __name__ == "__main__":
    main()
