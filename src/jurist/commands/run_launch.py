"""What ``jurist run`` does once its options are a RunConfig: the checks that need several options at
once, then a dry run, Ray shards, several tasks, an adaptive run or the plain pipeline, and what follows
the run (tracking, the gate). Apart from the option parsing so ``run``'s own body stays a parser."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jurist.errors import JuristError

if TYPE_CHECKING:
    from jurist.commands.options import AdaptiveFlags
    from jurist.run import RunConfig, RunResult, TaskFlags


@dataclass(frozen=True)
class Launch:
    """The options of ``jurist run`` that choose how the run is carried out, not what it is."""

    bench: str
    tasks: str | None
    suite: Path | None
    flags: TaskFlags
    dry_run: bool
    ray: str | None
    shards: int | None
    ray_retries: int
    track: list[str] | None
    step: int | None
    gate: Path | None
    adaptive: AdaptiveFlags
    sample_seed: int

    @property
    def several(self) -> bool:
        return self.tasks is not None or self.suite is not None

    def check(self, config: RunConfig) -> None:
        """Every file and every combination of these options, before anything is spent."""
        if config.scoring.anchor is not None:
            from jurist.families import read_replacement

            read_replacement(config.scoring.anchor)
        if self.gate is not None:
            from jurist.decide import read_policy

            read_policy(self.gate)
        self.adaptive.check()
        if self.adaptive.adaptive and (self.several or self.dry_run):
            raise JuristError("--adaptive runs one benchmark (not --tasks, --suite or --dry-run)")
        if self.dry_run and self.track:
            raise JuristError("--track logs what a run scored: a --dry-run scores nothing")
        if self.dry_run and self.several:
            raise JuristError(
                "--dry-run plans one benchmark: run it per task, with --bench and --out OUT/TASK"
            )
        if self.ray is not None and (self.several or self.dry_run):
            raise JuristError("--ray shards one benchmark's run: --tasks, --suite and --dry-run do not apply")

    def run(self, config: RunConfig) -> int:
        """The run as asked; its exit code."""
        from jurist.run import resume_collection

        resume_collection()  # imported and parsed: the rest of the process's life is collected as usual
        self.check(config)
        if self.dry_run:
            from jurist.run import dry_run as estimate

            return estimate(config)
        if self.ray is not None:
            from jurist.commands.merge import merge_ray_shards

            return merge_ray_shards(config, self.ray, self.shards or 1, self.ray_retries)
        from jurist.run import sigterm_as_interrupt

        with sigterm_as_interrupt():
            result = self._result(config)
        if self.track and self.step is not None:
            from jurist.run import run_rows, track_rows

            rows = result.leaderboard if self.several else run_rows(self.bench, result)
            track_rows(self.track, self.step, rows, config.scoring.ci_level, result.run_dir)
        if self.gate is not None:
            from jurist.decide import gate_directories

            return gate_directories(self.gate, [result.run_dir], result.exit_code)
        return result.exit_code

    def _result(self, config: RunConfig) -> RunResult:
        if self.several:
            from jurist.config import load_suite
            from jurist.run import parse_tasks, run_tasks, task_settings

            suite_file = load_suite(self.suite) if self.suite is not None else None
            names = (
                parse_tasks(self.tasks)
                if self.tasks is not None
                else list(suite_file.tasks)
                if suite_file
                else []
            )
            return run_tasks(config, names, settings=task_settings(names, self.flags, suite_file))
        if self.adaptive.adaptive:
            from jurist.decide import AdaptiveSettings, run_adaptive

            adaptive = self.adaptive
            rule = AdaptiveSettings(
                adaptive.target_ci,
                adaptive.versus(),
                adaptive.delta,
                config.scoring.ci_level,
                adaptive.adaptive_round,
                self.sample_seed,
            )
            return run_adaptive(config, rule)
        from jurist.run import run_pipeline

        return run_pipeline(config)
