"""Time checking IFEval's 541 GPT-4 answers (strict and loose), jurist beside the reference checkers.

jurist's checkers (:mod:`jurist.rules`) run on the reference GPT-4 responses; when ``--reference DIR``
names a folder holding lm-evaluation-harness's copy of the google-research checkers
(``instructions.py``, ``instructions_registry.py``, ``instructions_util.py``; AST-identical to the
reference except a class IFEval does not register, shared/reference/eval-frameworks.md §3.2), the same
answers are checked by them too, in the same process and loop, and their per-instruction outcomes are
compared with jurist's. Get that folder without installing lm-eval (which pulls torch):

    pip download --no-deps lm_eval==0.4.13 && unzip lm_eval-0.4.13-py3-none-any.whl 'lm_eval/tasks/ifeval/*'
    pip install immutabledict
    python bench/bench_rules.py --reference lm_eval/tasks/ifeval

Prints medians over ``--repeat`` rounds, wall and CPU time (CPU time moves less when other work shares
the machine); asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
import types
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
INPUT = SHARED / "ifeval" / "input_data_gpt4_20231107_145030.jsonl"
RESPONSES = SHARED / "ifeval" / "input_response_data_gpt4_20231107_145030.jsonl"


def _rows() -> list[tuple[dict[str, Any], str]]:
    inputs = [json.loads(line) for line in INPUT.read_text().splitlines() if line.strip()]
    responses = {}
    for line in RESPONSES.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            responses[row["prompt"]] = row["response"]
    return [(row, responses[row["prompt"]]) for row in inputs]


def _jurist_round(rows: list[tuple[dict[str, Any], str]]) -> list[tuple[bool, bool]]:
    from jurist.rules.evaluate import check_response
    from jurist.rules.registry import checkers

    table = checkers("ifeval")
    outcomes = []
    for row, response in rows:
        results = check_response(table, response, row["instruction_id_list"], row["kwargs"], row["prompt"])
        outcomes += [(r.strict, r.loose) for r in results]
    return outcomes


def _load_reference(folder: Path) -> Any:
    """lm-eval's ifeval modules imported by path, under a stand-in package (no lm_eval install)."""
    for name in ("lm_eval", "lm_eval.tasks", "lm_eval.tasks.ifeval"):
        package = types.ModuleType(name)
        package.__path__ = [str(folder)] if name.endswith("ifeval") else []
        sys.modules[name] = package
    for module in ("instructions_util", "instructions", "instructions_registry"):
        spec = importlib.util.spec_from_file_location(
            f"lm_eval.tasks.ifeval.{module}", folder / f"{module}.py"
        )
        assert spec is not None and spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = loaded
        spec.loader.exec_module(loaded)
    return sys.modules["lm_eval.tasks.ifeval.instructions_registry"]


def _reference_round(registry: Any, rows: list[tuple[dict[str, Any], str]]) -> list[tuple[bool, bool]]:
    """The reference's strict and loose loops (evaluation_main's test_instruction_following_*)."""
    outcomes = []
    for row, response in rows:
        lines = response.split("\n")
        first, last = "\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip()
        both = "\n".join(lines[1:-1]).strip()
        variants = [response, response.replace("*", ""), first, last, both]
        variants += [first.replace("*", ""), last.replace("*", ""), both.replace("*", "")]
        for index, instruction_id in enumerate(row["instruction_id_list"]):
            checker = registry.INSTRUCTION_DICT[instruction_id](instruction_id)
            kwargs = {k: v for k, v in row["kwargs"][index].items() if v is not None}
            checker.build_description(**kwargs)
            args = checker.get_instruction_args()
            if args and "prompt" in args:
                checker.build_description(prompt=row["prompt"])
            strict = bool(response.strip() and checker.check_following(response))
            loose = any(v.strip() and checker.check_following(v) for v in variants)
            outcomes.append((strict, loose))
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reference", type=Path, help="folder with lm-eval's ifeval checker modules")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("NLTK_DATA", str(SHARED / "nltk_data"))
    rows = _rows()
    import random

    import langdetect

    langdetect.DetectorFactory.seed = 0
    timings: dict[str, list[float]] = {"jurist": [], "reference": []}
    cpu: dict[str, list[float]] = {"jurist": [], "reference": []}
    registry = _load_reference(args.reference) if args.reference else None
    results: dict[str, list[tuple[bool, bool]]] = {}
    _jurist_round(rows)  # warm: NLTK model, langdetect profiles
    if registry is not None:
        _reference_round(registry, rows)
    for _ in range(args.repeat):
        started, used = time.perf_counter(), time.process_time()
        results["jurist"] = _jurist_round(rows)
        timings["jurist"].append(time.perf_counter() - started)
        cpu["jurist"].append(time.process_time() - used)
        if registry is not None:
            random.seed(0)
            started, used = time.perf_counter(), time.process_time()
            results["reference"] = _reference_round(registry, rows)
            timings["reference"].append(time.perf_counter() - started)
            cpu["reference"].append(time.process_time() - used)
    n = len(rows)
    print(f"IFEval GPT-4 answers: {n} answers, {len(results['jurist'])} instructions, strict + loose")
    for name, values in timings.items():
        if values:
            median = statistics.median(values)
            print(
                f"  {name:9s} median {median * 1000 / n:.3f} ms/answer "
                f"(min {min(values) * 1000 / n:.3f}, max {max(values) * 1000 / n:.3f}; "
                f"{len(values)} rounds); CPU {statistics.median(cpu[name]) * 1000 / n:.3f} ms/answer"
            )
    if timings["reference"]:
        ratio = statistics.median(timings["reference"]) / statistics.median(timings["jurist"])
        print(f"  reference / jurist time: {ratio:.2f}x")
        pairs = zip(results["jurist"], results["reference"], strict=True)
        differ = [k for k, (a, b) in enumerate(pairs) if a != b]
        print(f"  instructions whose outcome differs: {len(differ)} {differ[:10]}")


if __name__ == "__main__":
    main()
