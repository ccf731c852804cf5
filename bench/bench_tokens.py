"""o200k token counting (jurist.tokens), measured in fresh interpreters, beside another tree's.

What the answer stage pays for every answer's ``token_len``: the time to build the encoding, the memory it
adds (resident once built, and at the build's peak, from ``/proc/self/status`` and ``ru_maxrss``), and
the CPU per text counting Arena-Hard v2.0 texts: the 750 prompts (what the end-to-end benchmark's mock
answers echo) and o3-mini's 750 answers. Then the degenerate replies counting must stay bounded on: 20 MB
of one character, 200k CJK characters without a break, and 1M characters that leave ASCII every other
character (wall time, and whether the count is exact).

With ``--baseline-src DIR`` (another jurist tree's ``src``, e.g. ``git archive`` of an older commit) both
are measured in alternating rounds and printed one under the other.

Usage: ``python bench/bench_tokens.py [--rounds 3] [--baseline-src DIR]`` (medians of the rounds).
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
import gc, json, random, resource, sys, time
sys.path[:0] = [sys.argv[1]]
def rss():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS")) / 1024
texts = json.load(open(sys.argv[2]))
import jurist.tokens  # measured from here: the package (and tiktoken) imported
from jurist.tokens import count_tokens, measure_tokens
gc.collect()
before, start = rss(), time.perf_counter()
count_tokens("warm")
out = {"build_s": time.perf_counter() - start, "resident_mb": rss() - before,
       "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before}
for name in ("prompts", "answers"):
    cpu = time.process_time()
    out[f"{name}_tokens"] = sum(count_tokens(text) for text in texts[name])
    out[f"{name}_us"] = (time.process_time() - cpu) / len(texts[name]) * 1e6
rng = random.Random(0)
degenerate = {"20MB_a": "a" * 20_000_000, "20MB_newlines": "\n" * 20_000_000,
              "200k_cjk": "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(200_000)),
              "1M_spaced_accents": "\u00e9 " * 500_000}
for name, text in degenerate.items():
    wall = time.perf_counter()
    count = measure_tokens(text)
    out[f"{name}_s"] = time.perf_counter() - wall
    out[f"{name}_exact"] = count.exact
print(json.dumps(out))
"""


def texts() -> dict[str, list[str]]:
    prompts = [json.loads(line)["prompt"] for line in (V2 / "question.jsonl").open(encoding="utf-8")]
    answers = []
    with (V2 / "model_answer" / "o3-mini-2025-01-31.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            answers.append(json.loads(line)["messages"][-1]["content"]["answer"])
    return {"prompts": prompts, "answers": answers}


def measure(corpus: Path, src: Path) -> dict[str, float]:
    argv = [sys.executable, "-c", CHILD, str(src), str(corpus)]
    result = subprocess.run(argv, capture_output=True, text=True, check=True)
    return dict(json.loads(result.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-src", type=Path, help="another tree's src, measured beside this one")
    args = parser.parse_args()
    trees = {"this tree": ROOT / "src"}
    if args.baseline_src is not None:
        trees["baseline"] = args.baseline_src.resolve()
    corpus = Path("/tmp") / f"bench_tokens_{Path(sys.executable).stat().st_ino}.json"
    corpus.write_text(json.dumps(texts()))
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    try:
        for _ in range(args.rounds):
            for name, src in trees.items():
                rows[name].append(measure(corpus, src))
    finally:
        corpus.unlink()
    for name, src in trees.items():
        report(f"{name} ({src})", rows[name])


def report(title: str, rows: list[dict[str, float]]) -> None:
    print(f"jurist.tokens of {title}, medians of {len(rows)} fresh interpreters")
    print(
        f"  build {statistics.median(r['build_s'] for r in rows):.2f} s, resident "
        f"{statistics.median(r['resident_mb'] for r in rows):.1f} MB, "
        f"peak {statistics.median(r['peak_mb'] for r in rows):.1f} MB"
    )
    for name in ("prompts", "answers"):
        print(
            f"  {name}: {statistics.median(r[f'{name}_us'] for r in rows):.1f} µs CPU a text, "
            f"{rows[0][f'{name}_tokens']:.0f} tokens"
        )
    for name in ("20MB_a", "20MB_newlines", "200k_cjk", "1M_spaced_accents"):
        exact = "exact" if rows[0][f"{name}_exact"] else "approximate (flagged)"
        print(f"  {name}: {statistics.median(r[f'{name}_s'] for r in rows):.2f} s, {exact}")


if __name__ == "__main__":
    main()
