"""``jurist merge SHARD_DIR… --out RUN``: the shards of one run (``--shard I/N``) joined into one run
directory, each item once, then scored through the one scoring door, so ``jurist show RUN`` gives what
one process running the whole run would have.

The rules (docs/scale-out.md):

- **Same plan.** Every shard's ``shard.json`` holds the facts of the whole run (benchmark and its
  options, models, judges, protocols, samples, scoring); a shard whose facts differ is refused in one line
  naming the field, before anything is written.
- **Each item once.** A record file's lines are grouped by question and sample; each group is taken from
  one shard, the question's owner first. A group that another shard holds too, with other content, was
  done twice: it is left out and counted, with the requests and tokens it cost (the usage log keeps every
  request, since every one was paid for).
- **Nothing missing in silence.** Every question the owners map names and no shard answered (or judged)
  is named with the shard that owned it; the merge still scores what is there and exits 1.
- **Repeatable.** ``RUN`` is written anew from the shards every time, so a merge is repeated as more shards
  finish.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jurist.errors import JuristError
from jurist.run.merge_checks import ShardDir, check_same_plan, read_shards
from jurist.store import RunDir, RunDirLock

SKIPPED_FILES = {"batches.jsonl", "usage.jsonl", "failures.jsonl"}
"""Record files not grouped by item: a batch journal stays with the shard that polls it; the usage log and
the failure log are every shard's, appended whole."""

Group = tuple[str, int]


@dataclass
class MergeReport:
    """What a merge did: the shards read, the items taken, those done twice and what they cost, and what
    is missing, by owner."""

    out: Path
    shards: list[ShardDir]
    items: int = 0
    duplicates: int = 0
    duplicate_requests: int = 0
    duplicate_tokens: int = 0
    missing: dict[int, list[str]] = field(default_factory=dict)
    absent_shards: list[int] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing

    def lines(self) -> list[str]:
        """What the merge did, in a few lines."""
        given = ", ".join(f"{s.index}/{s.count}" for s in self.shards)
        out = [f"merged {len(self.shards)} shard(s) ({given}) into {self.out}: {self.items} item(s)"]
        if self.duplicates:
            out.append(
                f"{self.duplicates} item(s) were done by more than one shard and kept once: "
                f"{self.duplicate_requests} duplicate request(s), {self.duplicate_tokens} token(s)"
            )
        for owner, uids in sorted(self.missing.items()):
            shown = ", ".join(uids[:8]) + (f" and {len(uids) - 8} more" if len(uids) > 8 else "")
            why = "its shard was not given" if owner in self.absent_shards else "not done in its shard"
            out.append(f"missing {len(uids)} question(s) of shard {owner} ({why}): {shown}")
        return out


def checked_shards(paths: Sequence[Path], out: Path) -> list[ShardDir]:
    """The shards at ``paths``, read, of one plan, and ``out`` a place a merge may write."""
    shards = read_shards(paths)
    check_same_plan(shards)
    _check_out(out, shards)
    return shards


def merge_shards(shards: list[ShardDir], out: Path) -> MergeReport:
    """Join the run shards (:func:`checked_shards`) into ``out`` (written anew) and return what was done;
    scoring is the caller's (:func:`jurist.commands.merge`), through the door."""
    if shards[0].kind != "run":
        raise JuristError(f"{shards[0].root}: a sweep's shard, joined by jurist.sweep")
    report = MergeReport(out, shards)
    lock = RunDirLock(out)
    lock.acquire()
    try:
        _clear_records(out)
        owners = shards[0].owners
        for relative in _record_files(shards):
            report.items += _merge_file(relative, shards, owners, out, report)
        _append_whole(shards, "usage.jsonl", out)
        _append_whole(shards, "failures.jsonl", out)
        _copy_folder(shards, "prompts", out)
        report.absent_shards = sorted(set(range(shards[0].count)) - {s.index for s in shards})
        report.missing = _missing(shards[0], out)
        _write_run_json(shards, out, report)
    finally:
        lock.release()
    return report


def _check_out(out: Path, shards: Sequence[ShardDir]) -> None:
    if out.exists() and not out.is_dir():
        raise JuristError(f"--out: {out} is a file, not a run directory")
    resolved = out.resolve()
    for shard in shards:
        if shard.root.resolve() == resolved:
            raise JuristError(f"--out: {out} is one of the shards; merge into a directory of its own")
    if (out / "shard.json").exists():
        raise JuristError(f"--out: {out} is a shard (it holds shard.json); merge into a directory of its own")
    for name in ("run.json", "sweep.json"):
        _refuse_other_run(out, name)


def _refuse_other_run(out: Path, name: str) -> None:
    run_json = out / name
    if run_json.exists():
        try:
            fields = json.loads(run_json.read_text(encoding="utf-8"))
        except ValueError:
            fields = None
        if not isinstance(fields, dict) or "merged_from" not in fields:
            raise JuristError(
                f"--out: {out} holds a run that is not a merge; merge into a new directory "
                "(a merge writes its directory anew)"
            )


def _clear_records(out: Path) -> None:
    """The previous merge's records removed (a merge writes ``out`` anew from the shards)."""
    for name in ("answers", "judgments", "points", "prompts"):
        if (out / name).is_dir():
            shutil.rmtree(out / name)
    for path in out.glob("*.jsonl") if out.is_dir() else ():
        path.unlink()


def _record_files(shards: Sequence[ShardDir]) -> list[str]:
    """Every record file any shard holds, as a path relative to its directory."""
    found: set[str] = set()
    for shard in shards:
        for path in shard.root.rglob("*.jsonl"):
            relative = path.relative_to(shard.root)
            if relative.parts[0] == "logs" or (len(relative.parts) == 1 and relative.name in SKIPPED_FILES):
                continue
            found.add(relative.as_posix())
    return sorted(found)


def _groups(path: Path) -> tuple[dict[Group, list[bytes]], list[bytes]]:
    """A record file's whole lines grouped by (uid, sample), and the lines with no uid; a torn last line
    (a shard killed inside a write, not yet resumed) is left out."""
    grouped: dict[Group, list[bytes]] = {}
    loose: list[bytes] = []
    if not path.is_file():
        return grouped, loose
    for line in path.read_bytes().splitlines(keepends=True):
        if not line.endswith(b"\n") or not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        uid = record.get("uid") if isinstance(record, dict) else None
        if uid is None:
            loose.append(line)
            continue
        sample = record.get("sample", 0)
        grouped.setdefault((str(uid), sample if isinstance(sample, int) else 0), []).append(line)
    return grouped, loose


def _merge_file(
    relative: str, shards: Sequence[ShardDir], owners: Mapping[str, int], out: Path, report: MergeReport
) -> int:
    """One record file joined: each (uid, sample) group from its owner's shard, else the first shard that
    holds it; other shards' differing copies counted as done twice. Returns the groups written."""
    read = sorted(((shard, *_groups(shard.root / relative)) for shard in shards), key=lambda r: r[0].index)
    chosen: dict[Group, list[bytes]] = {}
    for group in dict.fromkeys(g for _, grouped, _ in read for g in grouped):
        holders = [(shard, grouped[group]) for shard, grouped, _ in read if group in grouped]
        owner = owners.get(group[0])
        pick = next((h for h in holders if h[0].index == owner), holders[0])
        chosen[group] = pick[1]
        for holder in holders:
            if holder is not pick and holder[1] != pick[1]:
                _count_duplicate(holder[1], report)
    loose = list(dict.fromkeys(line for _, _, lines in read for line in lines))
    target = out / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as handle:
        handle.writelines(loose)
        for group in sorted(chosen):
            handle.writelines(chosen[group])
    return len(chosen)


def _count_duplicate(lines: Iterable[bytes], report: MergeReport) -> None:
    """A group done twice: one item, its requests (a game each for a judgment, one for an answer) and its
    tokens, from the records' own usage."""
    report.duplicates += 1
    for line in lines:
        record = json.loads(line)
        games = record.get("games") or []
        usages = [game.get("usage") or {} for game in games] or [record.get("usage") or {}]
        for usage in usages:
            if not isinstance(usage, dict) or usage.get("cached"):
                continue
            report.duplicate_requests += 1
            report.duplicate_tokens += int(usage.get("prompt_tokens") or 0) + int(
                usage.get("completion_tokens") or 0
            )


def _append_whole(shards: Sequence[ShardDir], name: str, out: Path) -> None:
    with (out / name).open("wb") as handle:
        for shard in shards:
            path = shard.root / name
            if path.is_file():
                data = path.read_bytes()
                handle.write(data[: data.rfind(b"\n") + 1])  # whole lines only


def _copy_folder(shards: Sequence[ShardDir], name: str, out: Path) -> None:
    for shard in shards:
        if (shard.root / name).is_dir():
            shutil.copytree(shard.root / name, out / name, dirs_exist_ok=True)


def _present(path: Path) -> set[Group]:
    return set(_groups(path)[0])


def _missing(first: ShardDir, out: Path) -> dict[int, list[str]]:
    """Per owning shard, the questions some candidate has no answer (or judgment) for in ``out``."""
    facts, run_dir = first.plan, RunDir(out)
    samples = int(facts.get("samples") or 1)
    files = [run_dir.answers(model) for model in facts.get("models") or ()]
    if facts.get("mode") != "inference-only":
        for judge in facts.get("judges") or ():
            files.extend(run_dir.judgments(judge, model) for model in facts.get("models") or ())
    present = [_present(path) for path in files]
    missing: dict[int, list[str]] = {}
    for uid, owner in first.owners.items():
        if any((uid, sample) not in held for held in present for sample in range(samples)):
            missing.setdefault(owner, []).append(uid)
    return missing


def _write_run_json(shards: Sequence[ShardDir], out: Path, report: MergeReport) -> None:
    """run.json of the merged run: the first shard's, with the whole run's facts in place of its part's
    (questions, selection, categories) and where each shard came from."""
    first = shards[0]
    fields = {k: v for k, v in first.run_json.items() if k not in ("shard", "run_id", "status", "updated")}
    present_categories = {
        json.loads(line).get("category")
        for path in out.glob("answers/*.jsonl")
        for line in path.read_bytes().splitlines()
        if line.strip()
    }
    categories = [c for c in first.plan.get("score_categories") or () if c in present_categories]
    scoring = dict(fields.get("scoring") or {})
    official = {**(scoring.get("official") or {}), "categories": categories if len(categories) > 1 else []}
    scoring["official"] = official
    info = dict(first.plan.get("bench_info") or {})
    if first.plan.get("selection"):
        info["selection"] = first.plan["selection"]
    still = [entry for shard in shards for entry in shard.run_json.get("still_failing") or ()]
    fields.update(
        scoring=scoring,
        bench_info=info,
        n_questions=first.plan.get("n_questions"),
        merged_from=[shard.summary() for shard in shards],
        merge={
            "complete": report.complete,
            "missing": {str(k): v for k, v in report.missing.items()},
            "duplicates": report.duplicates,
            "duplicate_requests": report.duplicate_requests,
            "merged_at": time.time(),
        },
        failures=sum(int(shard.run_json.get("failures") or 0) for shard in shards),
        still_failing=still,
        exit_code=0 if report.complete and not still else 1,
    )
    RunDir(out).write_run_json(uuid.uuid4().hex[:12], "finished", fields)


__all__ = ["MergeReport", "checked_shards", "merge_shards"]
