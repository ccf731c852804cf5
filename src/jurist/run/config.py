"""What ``jurist run`` was asked to do (RunConfig, composed of its setting groups, each checked where it is
made) and what came of it (RunResult)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from jurist.config import ModelStringOptions
from jurist.engine import RetryPolicy
from jurist.errors import JuristError
from jurist.run.batching import BatchChoice

if TYPE_CHECKING:
    from jurist.run.shards import ShardChoice

Mode = Literal["all", "inference-only", "judge-only"]


@dataclass(frozen=True)
class EngineSettings:
    """How the run's requests are sent: how many at once, how often, retried, cached, probed first, shown."""

    max_concurrency: int = 64
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    min_interval: float = 0.0  # seconds between request starts, shared by processes naming throttle_file
    throttle_file: Path | None = None  # default: ~/.cache/jurist/throttle.lock
    cache: bool = True  # the machine-wide request cache (engine/cache/store.py)
    cache_path: Path | None = None  # default: $JURIST_CACHE_DIR or ~/.cache/jurist
    cache_only: bool = False  # send nothing: answer from the cache under each endpoint's last identity
    check: bool = True  # probe the models-file endpoints a run will use before it starts
    progress: bool = True
    local: bool = False  # --local: models with a serve block run in this process (jurist.engine.local)

    def __post_init__(self) -> None:
        if self.cache_only and not self.cache:
            raise JuristError(
                "--cache-only and --no-cache exclude each other: --cache-only answers from the cache"
            )


@dataclass(frozen=True)
class ScoringSettings:
    """The options that shape the scores, checked by the scoring door's own check (as ``jurist show``'s
    are)."""

    method: str = "winrate"  # any `jurist show` method: winrate | bt
    style_control: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()  # score each of these categories alone, against its own baseline
    length_controlled: bool = False  # AlpacaEval's LC win rate
    ensemble: bool = False  # pool the judges' battles into one score
    n_bootstrap: int = 100
    seed: int = 0
    ci_level: float = 0.90
    strong_weight: int = 3
    anchor: Path | None = None  # --anchor: a replacement.json whose map re-anchors the scores

    def __post_init__(self) -> None:
        from jurist.families import ScoreRequest

        method: Any = self.method
        ScoreRequest(method=method, style_control=self.style_control, ci_level=self.ci_level).check()

    def recorded(self) -> dict[str, Any]:
        """run.json's ``scoring``: what ``jurist show`` scores with."""
        return {
            "method": self.method,
            "style_control": list(self.style_control),
            "categories": list(self.categories),
            "length_controlled": self.length_controlled,
            "ensemble": self.ensemble,
            "strong_weight": self.strong_weight,
            "bootstrap": self.n_bootstrap,
            "seed": self.seed,
            "ci_level": self.ci_level,
            "resample": "questions",
            **({"anchor": str(self.anchor.resolve())} if self.anchor is not None else {}),
        }


@dataclass(frozen=True)
class BudgetSettings:
    """What the run directory may spend (jurist.run.budget) and the prices it is counted at."""

    prices_file: Path | None = None  # --prices: alias or served name -> price (jurist.prices)
    max_cost: float | None = None  # --max-cost USD over the run directory's requests
    max_tokens: int | None = None  # --max-tokens: prompt + completion tokens over the run directory


@dataclass(frozen=True)
class JudgeCardSettings:
    """The judge card's probes (docs/judge-card.md)."""

    items: int | None = None  # probe items per judge-card probe; None: the default; 0: no card
    gate: bool = False  # --judge-gate: a flagged judge-card probe ends the run with exit 4
    gold: Path | None = None  # --gold: human labels the card's gold agreement is read against


@dataclass
class RunConfig:
    """Everything ``jurist run`` needs, resolved from the command line: what to run, and its setting
    groups."""

    bench: str = "starter"
    bench_options: dict[str, str] = field(default_factory=dict)  # -B key=value, for the benchmark
    models_file: Path | None = None
    models: list[str] = field(default_factory=list)
    baseline: str | None = None
    judges: list[str] = field(default_factory=list)
    # --base-url, --api-key and -M: what model strings (openai/NAME, vllm/NAME, a path …) take
    model_strings: ModelStringOptions = field(default_factory=ModelStringOptions)
    out: Path | None = None
    limit: int | None = None
    limit_sample: Literal["first", "stratified", "shuffled"] = "first"  # which questions --limit keeps
    limit_seed: int = 0  # seed of a stratified --limit
    samples: int | None = None  # answers per prompt; None: the benchmark's default
    mode: Mode = "all"
    rejudge_invalid: bool = False
    judge_protocol: str | None = None
    judge_prompt: Path | None = None  # a file of templates replacing the protocol's prompts
    answers_file: Path | None = None  # --answers: score these answers (one model's) instead of generating
    output_format: str = "table"  # how the final scores are printed: table | json | csv | markdown
    engine: EngineSettings = field(default_factory=EngineSettings)
    scoring: ScoringSettings = field(default_factory=ScoringSettings)
    budget: BudgetSettings = field(default_factory=BudgetSettings)
    card: JudgeCardSettings = field(default_factory=JudgeCardSettings)
    batching: BatchChoice = field(default_factory=BatchChoice)  # --batch, --batch-*: jurist.run.batching
    shard: ShardChoice | None = None  # --shard I/N, --shards N: this process runs one part (run/shards.py)


@dataclass
class RunResult:
    exit_code: int
    leaderboard: list[dict[str, Any]]
    failures: int
    requests: int
    run_dir: Path
