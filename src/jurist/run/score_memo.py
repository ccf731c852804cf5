"""The last win-rate scoring of a run and what it was computed from, so that a re-run with nothing new
prints it again instead of rescoring.

Rescoring a finished 50k-question run read its 50k judgments, rewrote 100k battles and refit the
bootstrap: ~4.5 s of a re-run that sent nothing. What a scoring depends on is fixed here: the judgments
that belong to the current answers (their keys and where they lie), the state of every answers and
judgments file (style features, token lengths, judgments of earlier runs come from those), the
benchmark, the questions, the run's scoring options and jurist's version. Only when all of them are as
they were, and the files the scoring wrote are unchanged, is the stored report printed again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console

from jurist import __version__
from jurist.run.work import JudgeWork
from jurist.run.outcomes import Outcome, RunView, WinRateReport
from jurist.store.derived import DERIVED, FileState, read_derived, write_derived

KIND = "score-memo/1"
_OUTPUTS = ("battles.jsonl", "leaderboard.json", "ratings.json")


class ScoreMemo:
    """The stored scoring of one run directory (``.derived/scoring.json``)."""

    def __init__(self, run: RunView, work: JudgeWork) -> None:
        self.run, self.work = run, work
        self.path = run.run_dir.root / DERIVED / "scoring.json"
        self._key: str | None = None

    def replay(self, console: Console) -> Outcome | None:
        """Print the stored report and return its outcome when nothing it depends on changed; else None
        (nothing printed)."""
        found = read_derived(self.path, KIND)
        if found is None:
            return None
        _, stored, _ = found
        try:
            if stored["key"] != self.key():
                return None
            root = self.run.run_dir.root
            for name, state in stored["outputs"].items():
                recorded = FileState.from_json(state)
                if recorded is None or not recorded.same(root / name):
                    return None
            report = WinRateReport(**stored["report"])
        except (KeyError, TypeError):
            return None
        try:
            rows = json.loads(self.run.run_dir.leaderboard.read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(rows, list):
            return None
        report.print(console, rows)
        return Outcome(rows, scored=True, report=report)

    def record(self, outcome: Outcome) -> None:
        """Keep ``outcome``'s report with what it was computed from (nothing when it has none)."""
        if outcome.report is None:
            return
        root = self.run.run_dir.root
        outputs = {name: FileState.of(root / name) for name in _OUTPUTS}
        stored = {
            "key": self.key(),
            "outputs": {name: state.to_json() for name, state in outputs.items() if state is not None},
            "report": dataclasses.asdict(outcome.report),
        }
        write_derived(self.path, {"kind": KIND}, stored)

    def key(self) -> str:
        """The digest of everything the scoring depends on (computed once: scoring changes none of it)."""
        if self._key is None:
            digest = hashlib.blake2b(digest_size=20)
            for part in self._parts():
                digest.update(part)
            self._key = digest.hexdigest()
        return self._key

    def _parts(self) -> Iterator[bytes]:
        run, bench = self.run, self.run.bench
        settings = {
            "jurist": __version__,
            "bench": bench.name,
            "info": dict(bench.info),
            "metrics": list(bench.metrics),
            "score_categories": list(bench.score_categories),
            "official_scoring": repr(bench.official_scoring),
            "judges": list(run.judges),
            "candidates": list(run.candidates),
            "baselines": list(run.baselines),
            "kinds": {judge: kind.fingerprint for judge, kind in run.kinds.items()},
            "scoring": run.config.scoring_settings(),
        }
        yield json.dumps(settings, sort_keys=True, default=str).encode()
        for question in bench.questions:
            yield f"\0q{question.uid}\0{question.category}\0{bench.baseline_for(question)}".encode()
        root = run.run_dir.root
        for path in _inputs(root):
            state = FileState.of(path)
            yield f"\0f{path.relative_to(root)}\0{state}".encode()
        yield f"\0j{self.work.judged_digest()}".encode()


def _inputs(root: Path) -> list[Path]:
    """Every answers and judgments file of the run directory (an earlier run's judgments count too)."""
    answers = sorted((root / "answers").glob("*.jsonl"))
    judgments = sorted((root / "judgments").glob("*/*.jsonl"))
    return [*answers, *judgments]
