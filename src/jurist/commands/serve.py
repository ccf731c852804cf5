"""``jurist serve reward``: a benchmark's judging protocol as an HTTP reward for RL trainers (a thin
wrapper over :mod:`jurist.serve`; docs/reward.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from jurist.commands.parsing import use_jurist_command
from jurist.errors import JuristError

serve_app = typer.Typer(no_args_is_help=True, help="Serve a benchmark's judge as a reward for RL trainers.")


def _bench_options(values: list[str] | None) -> dict[str, str]:
    options: dict[str, str] = {}
    for value in values or []:
        key, sep, text = value.partition("=")
        if not sep or not key:
            raise JuristError(f"-B {value!r}: expected KEY=VALUE")
        options[key] = text
    return options


@serve_app.command("reward")
def reward(
    bench: Annotated[str, typer.Option("--bench", help="the benchmark whose protocol gives the reward")],
    judge: Annotated[str | None, typer.Option("--judge", help="judge alias or model string")] = None,
    models_file: Annotated[
        Path | None, typer.Option("--models-file", help="api_config.yaml-style file")
    ] = None,
    bench_option: Annotated[list[str] | None, typer.Option("-B", "--bench-option", help="KEY=VALUE")] = None,
    baseline: Annotated[str | None, typer.Option("--baseline", help="as jurist run --baseline")] = None,
    judge_protocol: Annotated[str | None, typer.Option("--judge-protocol")] = None,
    judge_prompt: Annotated[Path | None, typer.Option("--judge-prompt")] = None,
    reward_rule: Annotated[
        str, typer.Option("--reward", help="pairwise: debiased (both games) | gen-base (NeMo-Gym's one game)")
    ] = "debiased",
    loose: Annotated[
        bool, typer.Option("--loose", help="rules: the loose evaluation (computed and shown too)")
    ] = False,
    invalid_reward: Annotated[
        float, typer.Option("--invalid-reward", help="what an invalid verdict gets where a number is needed")
    ] = 0.0,
    host: Annotated[
        str, typer.Option("--host", help="address to bind (beyond 127.0.0.1 needs --token-file)")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="0: any free port")] = 8431,
    token_file: Annotated[
        Path | None, typer.Option("--token-file", help="file holding the bearer token")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="the service's directory (usage log, steps)")
    ] = None,
    cache: Annotated[bool, typer.Option("--cache/--no-cache", help="the request cache")] = True,
    max_cost: Annotated[float | None, typer.Option("--max-cost", help="USD over the directory")] = None,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens")] = None,
    prices: Annotated[Path | None, typer.Option("--prices")] = None,
    max_concurrency: Annotated[int, typer.Option("--max-concurrency", min=1)] = 64,
    rule_workers: Annotated[
        int | None,
        typer.Option(
            "--rule-workers",
            min=1,
            show_default=False,
            help="rules: processes checking answers (1: the server's own; default: usable cores, up to 8)",
        ),
    ] = None,
    max_batch: Annotated[int, typer.Option("--max-batch", min=1, help="items per request")] = 1024,
    max_body_mb: Annotated[float, typer.Option("--max-body-mb", min=0.001, help="request body size")] = 32.0,
) -> None:
    """Serve POST /verify (NeMo-Gym), /get_reward (OpenRLHF), /v1/reward, GET /health, /metrics."""
    from jurist.serve import Bounds, Listen, RewardServer, ServeSettings, serve_forever

    if reward_rule not in ("debiased", "gen-base"):
        raise JuristError(f"--reward {reward_rule!r}: debiased | gen-base")
    rule: Literal["debiased", "gen-base"] = "gen-base" if reward_rule == "gen-base" else "debiased"
    settings = ServeSettings(
        bench=bench, judge=judge, models_file=models_file, bench_options=_bench_options(bench_option),
        baseline=baseline, judge_protocol=judge_protocol, judge_prompt=judge_prompt, reward=rule,
        loose=loose, invalid_reward=invalid_reward, out=out, cache=cache, max_cost=max_cost,
        max_tokens=max_tokens, prices_file=prices, max_concurrency=max_concurrency, rule_workers=rule_workers,
    )  # fmt: skip
    bounds = Bounds(max_body_bytes=int(max_body_mb * 1024 * 1024), max_batch=max_batch)
    server = RewardServer(settings, Listen(host, port, token_file), bounds)

    def ready(url: str) -> None:
        service = server.service
        assert service is not None
        typer.echo(
            f"serving {service.bench.name} ({service.family}) rewards at {url}; spend per step in "
            f"{service.root / 'steps.jsonl'} (Ctrl-C stops)",
            err=True,
        )

    serve_forever(server, ready)


def register(app: typer.Typer) -> None:
    use_jurist_command(serve_app)
    app.add_typer(serve_app, name="serve")
