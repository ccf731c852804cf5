"""The floor of bench/bench_e2e.py: the least a client can do to send the same requests, so that the table
shows how close to the limit any client gets on this machine, not only the systems compared.

It sends what the others send (answers only: one answer per question; full run: then two judge games per
answer, asked as soon as the answer is back), with ``--conc`` requests in flight over one aiohttp session,
and does nothing else: no retries, no cache, no files but the answers it writes, no parsing beyond taking
the answer text out of the reply. The questions are Arena-Hard's (``uid``, ``prompt``) or IFEval's
(``key``, ``prompt``). Whatever time it spends above R·L/C is the cost of Python, the HTTP
round trips and the server's own turnaround, which every client pays.

Usage: ``python bench/e2e_floor.py --questions FILE --base-url URL --conc N [--full] --out FILE
[--limit N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import deque
from pathlib import Path

import aiohttp

CANDIDATE = "bench-model"
JUDGE = "judge-good"


def question_id(question: dict[str, str]) -> str:
    """Arena-Hard's ``uid``, or IFEval's ``key``."""
    return str(question["uid"] if "uid" in question else question["key"])


def body(model: str, prompt: str) -> bytes:
    messages = [{"role": "user", "content": prompt}]
    return json.dumps({"model": model, "messages": messages, "max_tokens": 2048, "temperature": 0.0}).encode()


async def run(questions: list[dict[str, str]], url: str, conc: int, full: bool, out: Path) -> None:
    work: deque[tuple[str, dict[str, str], str]] = deque(("answer", q, "") for q in questions)
    total = len(questions) * (3 if full else 1)
    started = 0
    ready = asyncio.Event()
    headers = {"Content-Type": "application/json", "Authorization": "Bearer floor"}
    connector = aiohttp.TCPConnector(limit=conc)
    with out.open("w", encoding="utf-8") as answers:
        async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

            async def worker() -> None:
                nonlocal started
                while True:
                    while not work:
                        if started >= total:
                            return
                        ready.clear()
                        await ready.wait()
                    kind, question, answer = work.popleft()
                    started += 1
                    if started == total:
                        ready.set()  # the idle workers may leave
                    if kind == "answer":
                        data = body(CANDIDATE, question["prompt"])
                    else:
                        data = body(JUDGE, f"{question['prompt']}\n\n[A]\n{answer}\n\n[B]\n{kind}")
                    async with session.post(url, data=data) as response:
                        reply = await response.read()
                    if kind == "answer":
                        text = json.loads(reply)["choices"][0]["message"]["content"]
                        answers.write(json.dumps({"uid": question_id(question), "answer": text}) + "\n")
                        if full:  # its two games go ahead of the answers still waiting
                            work.appendleft(("game 2", question, text))
                            work.appendleft(("game 1", question, text))
                            ready.set()

            await asyncio.gather(*(worker() for _ in range(conc)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--conc", type=int, required=True)
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    args = parser.parse_args()
    with args.questions.open(encoding="utf-8") as fh:
        questions = [json.loads(line) for line in fh if line.strip()][: args.limit]
    url = args.base_url.rstrip("/") + "/chat/completions"
    asyncio.run(run(questions, url, args.conc, args.full, args.out))


if __name__ == "__main__":
    main()
