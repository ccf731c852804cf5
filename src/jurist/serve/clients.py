"""verl-style ``compute_score`` helpers: one that calls a running ``jurist serve reward``, one that runs the
same service in this process.

verl calls ``compute_score(data_source, solution_str, ground_truth, extra_info, ...)`` and takes a float or
a dict with ``score``. Here ``solution_str`` is the answer; the question is ``extra_info["uid"]``, else
``ground_truth`` as a uid, else ``extra_info["question"]``; ``extra_info`` may also carry
``baseline_answer``, ``sample`` and ``step`` (the training step the ledger counts spend under). The dict
returned holds ``score`` and what decided it. A judge failure raises :class:`RewardError`: never a 0.
The HTTP helper needs only the standard library, so a trainer's environment needs nothing installed.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULT_URL = "http://127.0.0.1:8431"
URL_VARIABLE = "JURIST_REWARD_URL"
TOKEN_VARIABLE = "JURIST_REWARD_TOKEN_FILE"


class RewardError(RuntimeError):
    """The reward could not be had (a judge failed, the request was refused): the sample has none."""


def reward_item(solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None) -> dict[str, Any]:
    """The /v1/reward item verl's arguments make (see the module docstring)."""
    extra = dict(extra_info or {})
    item: dict[str, Any] = {"answer": solution_str}
    uid = extra.get("uid", ground_truth if isinstance(ground_truth, (str, int)) else None)
    if uid is not None and not isinstance(uid, bool):
        item["uid"] = str(uid)
    elif isinstance(extra.get("question"), str):
        item["question"] = extra["question"]
    for name in (
        "question",
        "baseline_answer",
        "category",
        "sample",
        "step",
        "instruction_id_list",
        "kwargs",
    ):
        if name in extra and name not in item and extra[name] is not None:
            item[name] = extra[name]
    return item


def score_dict(result: Mapping[str, Any], invalid_reward: float) -> dict[str, Any]:
    """verl's dict: ``score`` (the invalid reward where there is none, flagged) and scalar extras."""
    if result.get("error"):
        raise RewardError(f"{result.get('uid')}: {result['error']}")
    reward = result.get("reward")
    cost = result.get("cost") or {}
    return {
        "score": float(invalid_reward if reward is None else reward),
        "jurist_invalid": float(reward is None),
        "jurist_judge_requests": float(cost.get("requests") or 0),
        "jurist_cache_hits": float(cost.get("cache_hits") or 0),
    }


class HttpScorer:
    """Calls ``POST /v1/reward`` of a running server."""

    def __init__(
        self, url: str | None = None, token_file: Path | None = None, *, timeout: float = 180.0
    ) -> None:
        self.url = (url or os.environ.get(URL_VARIABLE) or DEFAULT_URL).rstrip("/")
        path = token_file or (Path(os.environ[TOKEN_VARIABLE]) if os.environ.get(TOKEN_VARIABLE) else None)
        self._token = path.read_text(encoding="utf-8").strip() if path is not None else None
        self.timeout = timeout

    def post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        """One JSON request; a refused one raises :class:`RewardError` (its one line)."""
        headers = {"Content-Type": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        data = json.dumps(payload).encode("utf-8")
        request = urllib.request.Request(f"{self.url}{path}", data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - http(s) URL
                body: dict[str, Any] = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            why = exc.read()[:500].decode("utf-8", "replace")
            raise RewardError(f"{self.url}: HTTP {exc.code}: {why}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise RewardError(f"{self.url}: {exc}") from None
        return body

    def score_items(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each item's /v1/reward result."""
        results: list[dict[str, Any]] = self.post("/v1/reward", {"items": items})["items"]
        return results

    def compute_score(
        self,
        data_source: Any,
        solution_str: str,
        ground_truth: Any = None,
        extra_info: Mapping[str, Any] | None = None,
        invalid_reward: float = 0.0,
        **_: Any,
    ) -> dict[str, Any]:
        (result,) = self.score_items([reward_item(solution_str, ground_truth, extra_info)])
        return score_dict(result, invalid_reward)


_default: HttpScorer | None = None


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's ``custom_reward_function``: the server at ``$JURIST_REWARD_URL`` (token from
    ``$JURIST_REWARD_TOKEN_FILE``)."""
    global _default
    if _default is None:
        _default = HttpScorer()
    return _default.compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)


def reward_func(queries: list[str], prompts: list[str], labels: list[Any], **_: Any) -> dict[str, Any]:
    """OpenRLHF's ``--remote_rm_url /path/to/clients.py``: the batch posted to ``/get_reward`` of the
    server at ``$JURIST_REWARD_URL``, with the token of ``$JURIST_REWARD_TOKEN_FILE`` (OpenRLHF's own
    HTTP client sends none); ``rewards`` and ``scores`` as tensors where torch is installed."""
    scorer = HttpScorer()
    body = scorer.post("/get_reward", {"query": queries, "prompts": prompts, "labels": labels})
    try:
        import torch
    except ImportError:
        return body
    logs = {name: torch.tensor(values) for name, values in (body.get("extra_logs") or {}).items()}
    return {
        "rewards": torch.tensor(body["rewards"]),
        "scores": torch.tensor(body["scores"]),
        "extra_logs": logs,
    }


class InProcessScorer:
    """The reward service itself in this process (no HTTP), its engine in a thread's event loop."""

    def __init__(self, settings: Any) -> None:
        from jurist.serve.service import RewardService

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="jurist-scorer")
        self._thread.start()

        async def build() -> RewardService:
            return RewardService.build(settings)

        self.service = asyncio.run_coroutine_threadsafe(build(), self._loop).result()

    def compute_score(
        self,
        data_source: Any,
        solution_str: str,
        ground_truth: Any = None,
        extra_info: Mapping[str, Any] | None = None,
        invalid_reward: float = 0.0,
        **_: Any,
    ) -> dict[str, Any]:
        from jurist.serve.shapes import item_of, outcome_dict

        item = item_of(reward_item(solution_str, ground_truth, extra_info), "compute_score")
        prepared = self.service.prepare(item)
        outcome = asyncio.run_coroutine_threadsafe(self.service.reward(item, prepared), self._loop).result()
        return score_dict(outcome_dict(outcome, self.service.family_reward), invalid_reward)

    def close(self) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self.service.aclose(), self._loop).result(60)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(60)
            self._loop.close()


__all__ = [
    "HttpScorer",
    "InProcessScorer",
    "RewardError",
    "compute_score",
    "reward_func",
    "reward_item",
    "score_dict",
]
