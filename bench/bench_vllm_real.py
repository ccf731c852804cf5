"""Generation throughput on a real vLLM server: jurist's engine against vLLM's own benchmark client, at the
same concurrency, the same prompts' length and the same number of tokens per reply.

One server (jurist's managed :class:`VllmServer`, vLLM's CPU build here) serves a checkpoint; each round
runs both legs on it, in alternating order (a slow spell of a shared machine falls on both):

* ``jurist``: N chat requests through ``Engine`` (cache off) at concurrency C, ``max_tokens`` T with
  ``ignore_eos`` (vLLM's extra field, passed through), so every reply is T tokens;
* ``vllm bench``: ``vllm.benchmarks.serve`` (what ``vllm bench serve`` runs) with ``--dataset-name random
  --random-output-len T --ignore-eos --num-prompts N --max-concurrency C`` against the chat endpoint.

tok/s is completion tokens over the wall time of the N requests; the table shows medians over rounds.
Needs the vLLM environment ``./dev test`` builds and a checkpoint folder (tests/real_vllm/smollm2_hf.py):
``PATH=.venv-vllm/bin:$PATH python bench/bench_vllm_real.py CKPT [--n 32] [--concurrency 16] [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from jurist.config import ModelSpec
from jurist.engine.client import Engine
from jurist.engine.servers.vllm import VllmServer

NAME = "bench"
_VLLM_LEG = """
import argparse, json, sys
from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser
parser = FlexibleArgumentParser()
add_cli_args(parser)
result = main(parser.parse_args(sys.argv[1:]))
print("JURIST-BENCH " + json.dumps({k: result[k] for k in ("duration", "total_output_tokens")}))
"""


async def jurist_leg(url: str, n: int, concurrency: int, tokens: int, input_words: int) -> tuple[float, int]:
    spec = ModelSpec.model_validate(
        {"alias": NAME, "model": NAME, "endpoints": [{"api_base": url}], "parallel": concurrency,
         "temperature": 0.0, "timeout": 600}
    )  # fmt: skip
    engine = Engine({NAME: spec}, max_concurrency=concurrency)
    try:
        client = engine.client(NAME)
        prompts = [" ".join(f"word{i}x{k}" for k in range(input_words)) for i in range(n)]
        started = time.perf_counter()
        done = await asyncio.gather(
            *(
                client.complete(
                    [{"role": "user", "content": p}], cache="off", max_tokens=tokens, ignore_eos=True
                )
                for p in prompts
            )
        )
        wall = time.perf_counter() - started
    finally:
        await engine.aclose()
    return wall, sum(c.completion_tokens or 0 for c in done)


def vllm_leg(server: VllmServer, n: int, concurrency: int, tokens: int, input_len: int) -> tuple[float, int]:
    assert server.launch is not None
    python = server.launch.prefix[0] if server.launch.model_flag else "python"
    args = [
        "--backend", "openai-chat", "--base-url", f"http://127.0.0.1:{server.port}",
        "--endpoint", "/v1/chat/completions", "--model", NAME, "--tokenizer", server.model,
        "--dataset-name", "random", "--random-input-len", str(input_len), "--random-output-len", str(tokens),
        "--ignore-eos", "--num-prompts", str(n), "--max-concurrency", str(concurrency), "--seed", "1",
    ]  # fmt: skip
    done = subprocess.run([python, "-c", _VLLM_LEG, *args], capture_output=True, text=True, check=False)
    line = [row for row in done.stdout.splitlines() if row.startswith("JURIST-BENCH ")]
    if done.returncode != 0 or not line:
        raise SystemExit(f"vllm bench failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    result = json.loads(line[-1].split(" ", 1)[1])
    return float(result["duration"]), int(result["total_output_tokens"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--n", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--input-len", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    log = Path(tempfile.mkdtemp(prefix="jurist-bench-vllm-")) / "server.log"
    server = VllmServer(
        options.checkpoint, served_name=NAME, max_model_len=2048, startup_timeout=1200, log_path=log
    )
    rates: dict[str, list[float]] = {"jurist": [], "vllm bench": []}
    with server:
        for round_ in range(options.rounds):
            order = ["jurist", "vllm bench"] if round_ % 2 == 0 else ["vllm bench", "jurist"]
            for leg in order:
                if leg == "jurist":  # about input_len tokens of prompt, as the random dataset's
                    wall, tokens = asyncio.run(
                        jurist_leg(
                            server.base_url,
                            options.n,
                            options.concurrency,
                            options.tokens,
                            options.input_len // 3,
                        )
                    )
                else:
                    wall, tokens = vllm_leg(
                        server, options.n, options.concurrency, options.tokens, options.input_len
                    )
                rates[leg].append(tokens / wall)
                rate = tokens / wall
                print(f"round {round_ + 1} {leg:>10}: {tokens} tokens in {wall:.1f} s = {rate:.1f} tok/s")
    jurist_rate, vllm_rate = (statistics.median(rates[k]) for k in ("jurist", "vllm bench"))
    shape = f"{options.n} requests x {options.tokens} tokens"
    print(f"\nconcurrency {options.concurrency}, {shape}, median of {options.rounds} rounds")
    print(f"{'client':>12} | tok/s\n{'jurist':>12} | {jurist_rate:.1f}\n{'vllm bench':>12} | {vllm_rate:.1f}")
    print(f"{'ratio':>12} | {100 * jurist_rate / vllm_rate:.0f}%")


if __name__ == "__main__":
    main()
