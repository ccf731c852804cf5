"""JudgeBench (ScalerLab, Tan et al. 2025) as data plus scoring; this module makes no network calls itself.

Each JudgeBench pair holds two responses to one question from the same strong model, exactly one of them
objectively correct, so ``label`` ("A>B" or "B>A") measures whether a judge can tell right from wrong.

Protocol and metric (reproduced from upstream ``utils/metrics.compute_final_metrics``):

* Game 1 shows (response_A, response_B); game 2 shows them swapped, (response_B, response_A). Stored
  outputs keep game 2's decision as the judge said it about the swapped presentation, so it is
  un-swapped ("A>B" <-> "B>A"; "A=B" and failures unchanged) before it is compared with the label.
* Each game scores +1 if its (un-swapped) decision equals the label, -1 if it is the opposite label, and
  0 for a tie ("A=B") or a failure (no decision). A pair is correct iff the sum is > 0, so
  right+right and right+tie/failure count; right+wrong (position bias) and tie+tie do not.
* Accuracy is ``100 * correct / pairs`` overall and per source group. Single-game runs (one judgment per
  pair) score ``100 * mean(decision == label)``, as upstream does.

Position consistency (ours; upstream counts the complement without reporting it): the percentage of pairs
whose game-1 decision equals the un-swapped game-2 decision, where both games produced a decision. A tie
in both orders is consistent; a failure in either game makes the pair inconsistent, because we cannot
claim agreement with a verdict that does not exist. ``failed`` counts games (not pairs) with no decision.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast

from jurist.errors import InputError, JuristError

Label = Literal["A>B", "B>A"]
Decision = Literal["A>B", "B>A", "A=B"]
Group = Literal["knowledge", "reasoning", "math", "coding"]

GROUPS: tuple[Group, ...] = ("knowledge", "reasoning", "math", "coding")
LABELS: tuple[Label, ...] = ("A>B", "B>A")
HUB_DATASET = "ScalerLab/JudgeBench"
# Split name -> the response model whose pairs it holds (the upstream data file names embed it).
SPLITS: dict[str, str] = {"gpt": "gpt-4o-2024-05-13", "claude": "claude-3-5-sonnet-20240620"}

# Five-level verdicts collapse to their direction: JudgeBench scores direction only (upstream arena_hard
# maps ">>" to ">" when parsing).
_DECISIONS: dict[str, Decision] = {
    "A>B": "A>B",
    "A>>B": "A>B",
    "B>A": "B>A",
    "B>>A": "B>A",
    "A=B": "A=B",
}
_PAIR_TEXT_FIELDS = ("question", "response_model", "response_A", "response_B")


@dataclass(frozen=True)
class Pair:
    """One JudgeBench item: a question, two responses from the same model, and which one is correct."""

    pair_id: str
    original_id: int | None
    source: str
    question: str
    response_model: str
    response_A: str  # noqa: N815 - the upstream field name, kept so records read like the data
    response_B: str  # noqa: N815
    label: Label

    @property
    def group(self) -> Group:
        """The reporting group of ``source`` (knowledge / reasoning / math / coding)."""
        return source_group(self.source)


class JudgeScore(NamedTuple):
    """JudgeBench result for one judge on one pair set; accuracies and consistency are percentages.

    A group with no pairs scores NaN; ``consistency`` is NaN for single-game runs.
    """

    judge: str
    overall: float
    knowledge: float
    reasoning: float
    math: float
    coding: float
    consistency: float
    failed: int
    n: int
    response_model: str = ""


GamePair = tuple[str | None, ...]
"""One pair's verdicts: ``(game1,)`` or ``(game1, game2)``; see ``score_decisions``."""


# --------------------------------------------------------------------------------------------------
# Source groups and the per-game rule


def source_group(source: str) -> Group:
    """Map an upstream ``source`` to its reporting group; raises ``ValueError`` for unknown sources."""
    if source.startswith("mmlu-pro"):
        return "knowledge"
    if source.startswith("livebench-reasoning"):
        return "reasoning"
    if source.startswith("livebench-math"):
        return "math"
    if source.startswith("livecodebench"):
        return "coding"
    raise ValueError(
        f"unknown JudgeBench source {source!r} (expected mmlu-pro-*, livebench-*, livecodebench)"
    )


def normalize_decision(decision: str | None) -> Decision | None:
    """Return the three-way decision for a verdict string (``>>`` collapses to ``>``); None stays None."""
    if decision is None:
        return None
    try:
        return _DECISIONS[decision]
    except KeyError:
        raise ValueError(
            f"unknown decision {decision!r} (expected one of {sorted(_DECISIONS)} or null)"
        ) from None


def unswap(decision: Decision | None) -> Decision | None:
    """Express a swapped-order decision in the pair's own order: A>B <-> B>A; ties and failures unchanged."""
    if decision == "A>B":
        return "B>A"
    if decision == "B>A":
        return "A>B"
    return decision


def game_points(decision: Decision | None, label: Label) -> int:
    """+1 if the decision (already in the pair's order) matches the label, -1 if opposite, else 0."""
    if decision == label:
        return 1
    if decision is not None and decision == unswap(label):
        return -1
    return 0


def pair_points(label: Label, decision_1: Decision | None, decision_2_unswapped: Decision | None) -> int:
    """The two-game sum in [-2, 2]; the pair counts as correct when it is positive."""
    return game_points(decision_1, label) + game_points(decision_2_unswapped, label)


# --------------------------------------------------------------------------------------------------
# Scoring


def _percent(hits: int, total: int) -> float:
    return 100.0 * hits / total if total else math.nan


def _score_games(
    judge: str,
    response_model: str,
    items: Sequence[tuple[Group, Label, tuple[Decision | None, ...]]],
) -> JudgeScore:
    """Score pairs whose games are already in the pair's own order (game 2 un-swapped)."""
    game_counts = {len(games) for _, _, games in items}
    if len(game_counts) > 1:
        raise ValueError(f"judge {judge!r}: pairs mix single-game and two-game judgments")
    two_games = game_counts != {1}
    correct = dict.fromkeys(GROUPS, 0)
    totals = dict.fromkeys(GROUPS, 0)
    consistent = failed = 0
    for group, label, games in items:
        totals[group] += 1
        failed += sum(decision is None for decision in games)
        if two_games:
            first, second = games
            hit = pair_points(label, first, second) > 0
            consistent += first is not None and first == second
        else:
            hit = games[0] == label
        correct[group] += hit
    n = len(items)
    return JudgeScore(
        judge=judge,
        overall=_percent(sum(correct.values()), n),
        knowledge=_percent(correct["knowledge"], totals["knowledge"]),
        reasoning=_percent(correct["reasoning"], totals["reasoning"]),
        math=_percent(correct["math"], totals["math"]),
        coding=_percent(correct["coding"], totals["coding"]),
        consistency=_percent(consistent, n) if two_games and n else math.nan,
        failed=failed,
        n=n,
        response_model=response_model,
    )


def score_decisions(
    pairs: Sequence[Pair],
    decisions: Sequence[GamePair] | Mapping[str, GamePair],
    *,
    judge: str = "judge",
    game2_order: Literal["as_shown", "unswapped"] = "as_shown",
) -> JudgeScore:
    """Score a judge's verdicts on ``pairs`` with the exact JudgeBench rule.

    ``decisions`` is aligned with ``pairs`` (a sequence) or keyed by ``pair_id`` (a mapping; every pair must
    be present). Each entry is ``(game1,)`` for a single-game run or ``(game1, game2)``: "A>B", "B>A",
    "A=B" (five-level "A>>B"/"B>>A" are accepted) or None for a failed game. Game 1 is the verdict on
    (response_A, response_B). By default (``game2_order="as_shown"``) game 2 is the verdict exactly as
    the judge gave it on the swapped presentation (response_B shown as "A"), as upstream stores it, and
    is un-swapped here; pass ``game2_order="unswapped"`` if you already mapped it back to the pair's order.
    """
    if game2_order not in ("as_shown", "unswapped"):
        raise ValueError(f"game2_order must be 'as_shown' or 'unswapped', not {game2_order!r}")
    if isinstance(decisions, Mapping):
        missing = [pair.pair_id for pair in pairs if pair.pair_id not in decisions]
        if missing:
            raise ValueError(f"no decisions for {len(missing)} pair(s), e.g. {missing[0]!r}")
        ordered = [decisions[pair.pair_id] for pair in pairs]
    else:
        if len(decisions) != len(pairs):
            raise ValueError(f"{len(decisions)} decision entries for {len(pairs)} pairs")
        ordered = list(decisions)
    items: list[tuple[Group, Label, tuple[Decision | None, ...]]] = []
    models: set[str] = set()
    for pair, games in zip(pairs, ordered, strict=True):
        if len(games) not in (1, 2):
            raise ValueError(f"pair {pair.pair_id!r}: expected 1 or 2 decisions, got {len(games)}")
        normalized = tuple(normalize_decision(decision) for decision in games)
        if len(normalized) == 2 and game2_order == "as_shown":
            normalized = (normalized[0], unswap(normalized[1]))
        items.append((pair.group, pair.label, normalized))
        models.add(pair.response_model)
    return _score_games(judge, ",".join(sorted(models)), items)


# --------------------------------------------------------------------------------------------------
# Reading pairs


def _field_error(path: object, line: int, field: str, message: str) -> InputError:
    return InputError(path, f"line {line}, field {field!r}", message)


def _pair_from_record(record: Mapping[str, Any], path: object, line: int) -> Pair:
    """Validate one JSON object into a ``Pair``; errors name the file, line and field."""
    texts: dict[str, str] = {}
    pair_id = record.get("pair_id")
    if not isinstance(pair_id, str) or not pair_id:
        raise _field_error(path, line, "pair_id", f"expected a non-empty string, got {pair_id!r}")
    for field in ("source", *_PAIR_TEXT_FIELDS):
        if field not in record:
            raise _field_error(path, line, field, "missing")
        value = record[field]
        if not isinstance(value, str):
            raise _field_error(path, line, field, f"expected a string, got {type(value).__name__}")
        texts[field] = value
    try:
        source_group(texts["source"])
    except ValueError as exc:
        raise _field_error(path, line, "source", str(exc)) from None
    original = record.get("original_id")
    original_id: int | None
    if original is None:
        original_id = None
    elif isinstance(original, bool):
        raise _field_error(path, line, "original_id", f"expected an integer or null, got {original!r}")
    elif isinstance(original, int):
        original_id = original
    elif isinstance(original, float) and original.is_integer():
        original_id = int(original)
    elif isinstance(original, str) and original.strip().lstrip("-").isdigit():
        original_id = int(original)
    else:
        raise _field_error(path, line, "original_id", f"expected an integer or null, got {original!r}")
    label = record.get("label")
    if label not in LABELS:
        raise _field_error(path, line, "label", f"expected 'A>B' or 'B>A', got {label!r}")
    return Pair(
        pair_id=pair_id,
        original_id=original_id,
        source=texts["source"],
        question=texts["question"],
        response_model=texts["response_model"],
        response_A=texts["response_A"],
        response_B=texts["response_B"],
        label=cast(Label, label),
    )


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of a .jsonl or .jsonl.gz file."""
    try:
        handle = (
            gzip.open(path, "rt", encoding="utf-8")
            if path.name.endswith(".gz")
            else path.open(encoding="utf-8")
        )
    except OSError as exc:
        raise InputError(path, "", f"cannot open: {exc.strerror or exc}") from None
    with handle:
        try:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    record = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise InputError(path, f"line {number}", f"invalid JSON: {exc.msg}") from None
                if not isinstance(record, dict):
                    raise InputError(
                        path, f"line {number}", f"expected a JSON object, got {type(record).__name__}"
                    )
                yield number, record
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise InputError(path, "", f"cannot read: {exc}") from None


def _resolve_split(split: str, data_dir: str | os.PathLike[str] | None) -> Path:
    root = data_dir if data_dir is not None else os.environ.get("JURIST_JUDGEBENCH_DIR")
    if root is None:
        raise JuristError(
            f"JudgeBench split {split!r} needs a local copy: pass data_dir= or set JURIST_JUDGEBENCH_DIR "
            f"to the folder holding upstream's data/*.jsonl, or use load_pairs_from_hub({split!r})"
        )
    base = Path(root)
    name = f"dataset=judgebench,response_model={SPLITS[split]}.jsonl"
    for candidate in (base / name, base / "data" / name):
        if candidate.exists():
            return candidate
    raise InputError(base, "", f"no {name} for split {split!r} in this folder or its data/ subfolder")


def load_pairs(
    path_or_split: str | os.PathLike[str], *, data_dir: str | os.PathLike[str] | None = None
) -> list[Pair]:
    """Read JudgeBench pairs from a local .jsonl(.gz) file or a split name ("gpt"/"claude") in ``data_dir``.

    Split names resolve to upstream's file names inside ``data_dir`` (or ``$JURIST_JUDGEBENCH_DIR``), so the
    same call works on a checkout of the upstream repository. Duplicate ``pair_id``s are rejected.
    """
    text = os.fspath(path_or_split)
    path = _resolve_split(text, data_dir) if text in SPLITS and not Path(text).exists() else Path(text)
    pairs: list[Pair] = []
    seen: dict[str, int] = {}
    for number, record in _read_jsonl(path):
        pair = _pair_from_record(record, path, number)
        if pair.pair_id in seen:
            raise _field_error(path, number, "pair_id", f"duplicate of line {seen[pair.pair_id]}")
        seen[pair.pair_id] = number
        pairs.append(pair)
    if not pairs:
        raise InputError(path, "", "no JudgeBench pairs in file")
    return pairs


def load_pairs_from_hub(split: str, *, revision: str | None = None) -> list[Pair]:
    """Download a split ("gpt": 350 pairs, "claude": 270) of the HF dataset ``ScalerLab/JudgeBench``.

    ``datasets`` is imported here so the rest of the harness works without it; pin ``revision`` (a commit
    hash) for reproducible runs.
    """
    if split not in SPLITS:
        raise JuristError(f"unknown JudgeBench split {split!r}; choose one of {', '.join(SPLITS)}")
    try:
        import datasets  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise JuristError(
            "loading JudgeBench from the Hub needs the 'datasets' package: pip install datasets"
        ) from None
    rows = datasets.load_dataset(HUB_DATASET, split=split, revision=revision)
    where = f"hf://datasets/{HUB_DATASET}[{split}]"
    return [_pair_from_record(row, where, number) for number, row in enumerate(rows, start=1)]


# --------------------------------------------------------------------------------------------------
# Upstream outputs/ files


def _output_files(path: Path) -> list[Path]:
    """The outputs/*.jsonl and *.jsonl.gz files under ``path``; a .jsonl wins over its own .gz copy."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(path, "", "no such file or folder")
    plain = {p.name: p for p in path.glob("*.jsonl")}
    zipped = [p for p in path.glob("*.jsonl.gz") if p.name[: -len(".gz")] not in plain]
    return sorted([*plain.values(), *zipped], key=lambda p: p.name)


def _stored_decision(entry: object, path: Path, line: int, game: int) -> tuple[Decision | None, str | None]:
    """A stored judgment entry -> (decision, judge_model); a null entry is a failed game."""
    field = f"judgments[{game}]"
    if entry is None:
        return None, None
    if not isinstance(entry, dict):
        raise _field_error(path, line, field, f"expected an object or null, got {type(entry).__name__}")
    raw = entry.get("decision")
    if raw is not None and not isinstance(raw, str):
        raise _field_error(path, line, f"{field}.decision", f"expected a string or null, got {raw!r}")
    try:
        decision = normalize_decision(raw)
    except ValueError as exc:
        raise _field_error(path, line, f"{field}.decision", str(exc)) from None
    inner = entry.get("judgment")
    model = inner.get("judge_model") if isinstance(inner, dict) else None
    return decision, model if isinstance(model, str) and model else None


def _model_from_file_name(path: Path) -> str | None:
    for part in path.name.removesuffix(".gz").removesuffix(".jsonl").split(","):
        if part.startswith("judge_model="):
            return part[len("judge_model=") :] or None
    return None


def _read_output_file(path: Path) -> list[tuple[str, str, Pair, tuple[Decision | None, ...], int]]:
    """Return (judge_name, judge_model or "", pair, raw games, line) per stored line of one outputs file."""
    rows: list[tuple[str, str | None, Pair, tuple[Decision | None, ...], int]] = []
    file_model: str | None = None
    for number, record in _read_jsonl(path):
        pair = _pair_from_record(record, path, number)
        judge_name = record.get("judge_name")
        if not isinstance(judge_name, str) or not judge_name:
            raise _field_error(path, number, "judge_name", f"expected a non-empty string, got {judge_name!r}")
        judgments = record.get("judgments")
        if not isinstance(judgments, list) or len(judgments) not in (1, 2):
            raise _field_error(path, number, "judgments", "expected a list of 1 or 2 entries (one per game)")
        games: list[Decision | None] = []
        line_model: str | None = None
        for game, entry in enumerate(judgments):
            decision, model = _stored_decision(entry, path, number, game)
            games.append(decision)
            line_model = line_model or model
        file_model = file_model or line_model
        rows.append((judge_name, line_model, pair, tuple(games), number))
    # A line whose games all failed carries no judge_model; attribute it to the file's judge.
    fallback = file_model or _model_from_file_name(path) or ""
    return [(name, model or fallback, pair, games, number) for name, model, pair, games, number in rows]


def score_stored_outputs(path: str | os.PathLike[str]) -> list[JudgeScore]:
    """Score upstream JudgeBench ``outputs/`` files (one file or a folder of .jsonl/.jsonl.gz).

    Lines are grouped per (judge_name, judge_model, response_model); each group yields one ``JudgeScore``
    named ``"<judge_name>:<judge_model>"``, in file-name order. Game 2 is stored as the judge said it on
    the swapped presentation and is un-swapped before scoring.
    """
    root = Path(path)
    groups: dict[tuple[str, str, str], list[tuple[Group, Label, tuple[Decision | None, ...]]]] = {}
    seen: dict[tuple[str, str, str], dict[str, str]] = {}
    files = _output_files(root)
    if not files:
        raise InputError(root, "", "no outputs *.jsonl or *.jsonl.gz files here")
    for file in files:
        for judge_name, judge_model, pair, games, number in _read_output_file(file):
            key = (judge_name, judge_model, pair.response_model)
            where = f"{file.name} line {number}"
            earlier = seen.setdefault(key, {})
            if pair.pair_id in earlier:
                raise _field_error(
                    file, number, "pair_id", f"judged twice by this judge (also {earlier[pair.pair_id]})"
                )
            earlier[pair.pair_id] = where
            unswapped = games if len(games) == 1 else (games[0], unswap(games[1]))
            groups.setdefault(key, []).append((pair.group, pair.label, unswapped))
    scores: list[JudgeScore] = []
    for (judge_name, judge_model, response_model), items in groups.items():
        try:
            scores.append(_score_games(f"{judge_name}:{judge_model}", response_model, items))
        except ValueError as exc:
            raise InputError(root, "", str(exc)) from None
    return scores
