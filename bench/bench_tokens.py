"""o200k token counting: jurist.tokens.o200k against tiktoken, side by side, each in a fresh interpreter.

What the answer stage pays for every answer's ``token_len``: the time to build the counter, the memory it
adds (resident once built, and at the build's peak, from ``/proc/self/status`` and ``ru_maxrss``), and
the CPU per answer counting Arena-Hard v2.0 texts: the 750 prompts (what the end-to-end benchmark's mock
answers echo) and o3-mini's 750 answers, with the piece cache cold (first pass) and warm (second pass).
Both must give the same total, or the benchmark stops.

Usage: ``python bench/bench_tokens.py [--rounds 3]`` (medians of the rounds).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
V2 = ROOT.parent / "shared" / "data" / "arena-hard" / "data" / "arena-hard-v2.0"

CHILD = r"""
import gc, json, resource, sys, time
sys.path[:0] = [sys.argv[2], sys.argv[3]]
def rss():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS")) / 1024
texts = json.load(open(sys.argv[4]))
import jurist.tokens.style, o200k_oracle  # both measured from here: the modules around the counters imported
gc.collect()
before, start = rss(), time.perf_counter()
if sys.argv[1] == "tiktoken":
    from o200k_oracle import tiktoken_count as count
    count("warm")
else:
    from jurist.tokens.style import count_tokens as count
    count("warm")
out = {"build_s": time.perf_counter() - start, "resident_mb": rss() - before,
       "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before}
for name in ("prompts", "answers"):
    for cache in ("cold", "warm"):
        cpu = time.process_time()
        total = sum(count(text) for text in texts[name])
        out[f"{name}_{cache}_us"] = (time.process_time() - cpu) / len(texts[name]) * 1e6
        out[f"{name}_tokens"] = total
out["final_resident_mb"] = rss() - before
print(json.dumps(out))
"""


def texts() -> dict[str, list[str]]:
    prompts = [json.loads(line)["prompt"] for line in (V2 / "question.jsonl").open(encoding="utf-8")]
    answers = []
    with (V2 / "model_answer" / "o3-mini-2025-01-31.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            answers.append(json.loads(line)["messages"][-1]["content"]["answer"])
    return {"prompts": prompts, "answers": answers}


def measure(system: str, corpus: Path) -> dict[str, float]:
    argv = [sys.executable, "-c", CHILD, system, str(ROOT / "src"), str(ROOT / "tests"), str(corpus)]
    result = subprocess.run(argv, capture_output=True, text=True, check=True)
    return dict(json.loads(result.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    corpus = Path("/tmp") / f"bench_tokens_{Path(sys.executable).stat().st_ino}.json"
    corpus.write_text(json.dumps(texts()))
    runs: dict[str, list[dict[str, float]]] = {"tiktoken": [], "jurist.tokens.o200k": []}
    try:
        for _ in range(args.rounds):
            for system, rows in runs.items():
                rows.append(measure(system, corpus))
    finally:
        corpus.unlink()
    for key in ("prompts_tokens", "answers_tokens"):
        totals = {system: rows[0][key] for system, rows in runs.items()}
        if len(set(totals.values())) != 1:
            raise SystemExit(f"the counts differ: {key} {totals}")
    columns = ["build_s", "resident_mb", "peak_mb", "final_resident_mb"]
    columns += ["prompts_cold_us", "prompts_warm_us", "answers_cold_us", "answers_warm_us"]
    print(
        f"o200k counts of Arena-Hard v2.0 texts, medians of {args.rounds} fresh interpreters; µs: CPU a text"
    )
    print(f"{'system':14s}" + "".join(f"{column:>18s}" for column in columns))
    for system, rows in runs.items():
        cells = [statistics.median(row[column] for row in rows) for column in columns]
        print(f"{system:14s}" + "".join(f"{cell:18.2f}" for cell in cells))
    print(
        f"same counts: {runs['tiktoken'][0]['prompts_tokens']:.0f} prompt and "
        f"{runs['tiktoken'][0]['answers_tokens']:.0f} answer tokens"
    )


if __name__ == "__main__":
    main()
