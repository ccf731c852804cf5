"""The run's hook for the judge card (:mod:`jurist.audit`): once the judge stage has ended, the run's
judgments are read once and each judge is probed through the run's own engine (limits, cache, budget,
ledger phase ``probe``); judge_card.json is written before the run is scored, and printed under the
leaderboard when it is. The probes never reach the leaderboard: scoring reads the run's judgments only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.audit import CARD_FILE, GATE_EXIT, MIN_ITEMS, flagged, read_card, write_card
from jurist.engine import Engine
from jurist.errors import JuristError
from jurist.judging import JudgeItem
from jurist.report import print_card, table_console
from jurist.run.budget import Estimate
from jurist.run.work import JudgeWork

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.run.plan import RunPlan

log = logging.getLogger("jurist.card")


def card_wanted(plan: RunPlan) -> bool:
    """A card is made for every run that judges (unless ``--no-judge-card``)."""
    return bool(plan.judges) and plan.mode != "inference-only" and plan.config.card.items != 0


def check_gate(plan: RunPlan) -> None:
    """``--judge-gate`` on a run that makes no card would gate nothing, ``--gold`` on one has no card to
    add to: one line, before any request; a ``--gold`` file with a bad line is refused then too."""
    if plan.config.card.gate and not card_wanted(plan):
        raise JuristError("--judge-gate: this run judges nothing, so it has no judge card to gate on")
    if plan.config.card.gold is not None:
        if not card_wanted(plan):
            raise JuristError("--gold: this run makes no judge card (it judges nothing, or --no-judge-card)")
        from jurist.audit import read_gold

        read_gold(plan.config.card.gold)


def card_modules(plan: RunPlan) -> list[str]:
    """The modules the judge card's probes run on: its machinery and each judge kind's probes (imported
    while the run waits on its judges, :mod:`jurist.run.ahead`); none where no card is made."""
    if not card_wanted(plan):
        return []
    from jurist.judging import judge_kind_probes

    kinds = [judge_kind_probes(kind.name) for kind in plan.kinds.values()]
    return ["jurist.audit.probe_run", *(module for module in kinds if module is not None)]


async def probe_judges(engine: Engine, plan: RunPlan, work: JudgeWork) -> dict[str, Any]:
    """Every judge's probes on the run's own judgments; judge_card.json written, its document returned."""
    from jurist.audit import JudgeCardRun  # the probes' machinery: only where a card is made

    questions = {question.uid: question for question in plan.bench.questions}
    card = JudgeCardRun(
        dict(plan.kinds), questions, seed=plan.config.scoring.seed, sample=plan.config.card.items
    )
    for item, record in work.judged():
        card.add(item.judge, record)
    positions = {question.uid: n for n, question in enumerate(plan.bench.questions)}
    answers = {alias: work.indexes.answers(alias) for alias in [*plan.candidates, *plan.baselines]}
    baselines = {alias: answers[alias] for alias in plan.baselines}

    def fetch(judge: str) -> Callable[[str, str, int], JudgeItem | None]:
        def item(model: str, uid: str, sample: int) -> JudgeItem | None:
            return work.item_at(judge, model, positions[uid], sample, answers[model], baselines)

        return item

    document = await card.probe(engine.client, fetch, lambda: engine.ledger.stopped)
    write_card(plan.run_dir.root, document)
    if plan.config.card.gold is not None:  # --gold: human labels, read against the judgments just stored
        from jurist.audit import gold_card

        try:
            document = await asyncio.to_thread(gold_card, plan.run_dir.root, plan.config.card.gold)
        except JuristError as exc:  # e.g. a task of --tasks that the file labels nothing of: the card stands
            log.warning("--gold: %s", exc)
    return document


def probe_estimates(
    plan: RunPlan, rows: Mapping[tuple[str, str], Estimate]
) -> dict[tuple[str, str], Estimate]:
    """``--dry-run``'s rows for the judge card's probes, as the card would size them from each judge's
    requests (new, cached and on disk), each as large as that judge's average new request: an upper
    bound (a probe finds fewer items than it may send when few judgments qualify, e.g. for injection)."""
    from jurist.audit import DEFAULT_SAMPLE, items_per_probe, request_sets  # the probes: only with a card

    if not card_wanted(plan):
        return {}
    sample = plan.config.card.items or DEFAULT_SAMPLE
    found: dict[tuple[str, str], Estimate] = {}
    for (phase, alias), row in rows.items():
        if phase != "judge" or not row.requests or alias not in plan.kinds:
            continue
        sets = request_sets(plan.kinds[alias], plan.specs[alias])
        asked = plan.config.card.items is not None
        probes = sets * items_per_probe(row.requests + row.cached + row.done, sets, sample, asked=asked)
        if probes:
            scale = probes / row.requests
            found[("probe", alias)] = Estimate(
                requests=probes,
                prompt=round(row.prompt * scale),
                prompt_low=round(row.prompt_low * scale),
                prompt_high=round(row.prompt_high * scale),
                completion=round(row.completion * scale),
                completion_high=None if row.completion_high is None else round(row.completion_high * scale),
                basis=set(row.basis),
            )
    return found


def show_card(document: dict[str, Any], plan: RunPlan, console: Console) -> None:
    """The card's table (stdout, with the table format only) and its warnings (``console``)."""
    out = table_console() if plan.config.output_format == "table" else None
    print_card(document, out=out, err=console)


SHARE_SKIP = "judge requests allow"
"""What the note of a request probe skipped for the tenth's sake says (audit/probe_run.py)."""


def skipped_probe_lines(document: Mapping[str, Any], plan: RunPlan) -> list[str]:
    """For each judge whose request probes the tenth of a small run left out: how many judge requests
    they need, and the ``--judge-card N`` that asks for them anyway (said in the run's closing lines)."""
    from jurist.audit import probes_need, request_sets  # the probes' machinery: only where a card is made

    lines = []
    for judge, entry in (document.get("judges") or {}).items():
        probes = entry.get("probes") or {}
        skipped = [name for name, probe in probes.items() if SHARE_SKIP in str(probe.get("note") or "")]
        if not skipped or judge not in plan.kinds:
            continue
        sets = request_sets(plan.kinds[judge], plan.specs[judge])
        requests, judge_requests = probes_need(sets)
        names = " and ".join(skipped) if len(skipped) < 3 else ", ".join(skipped)
        held, allowed = entry.get("judge_requests", 0), entry.get("probe_budget", 0)
        lines.append(
            f"judge card: {judge}'s {names} probe{'s' * (len(skipped) > 1)} did not run: they need "
            f"{requests} probe requests ({MIN_ITEMS} items in each of {sets} set(s)), and a tenth of its "
            f"{held} judge requests allows {allowed} (a run of "
            f"{judge_requests} judge requests makes them by itself); --judge-card {MIN_ITEMS} asks for them "
            f"anyway (up to {requests} probe requests)"
        )
    return lines


def gate(document: dict[str, Any] | None, plan: RunPlan, exit_code: int, console: Console) -> int:
    """``--judge-gate``: a run that would end with 0 ends with :data:`GATE_EXIT` when a probe is flagged."""
    if not plan.config.card.gate or document is None or exit_code != 0 or not flagged(document):
        return exit_code
    console.print(
        f"--judge-gate: a judge card probe is flagged (judge_card.json); exit {GATE_EXIT}",
        style="red", markup=False, highlight=False,
    )  # fmt: skip
    return GATE_EXIT


def card_summary(root: Path) -> dict[str, dict[str, Any]] | None:
    """A run's judge card cut down to what a sweep keeps per checkpoint: per judge, each probe's
    ``{estimate, ci, n, flagged}`` (``ci`` null where not measured) and that judge's warning lines; None
    when the run has no card (it judged nothing, or ran with ``--no-judge-card``)."""
    if not (root / CARD_FILE).is_file():
        return None
    document = read_card(root)
    warnings = [str(line) for line in document.get("warnings") or []]
    summary: dict[str, dict[str, Any]] = {}
    for judge, audit in (document.get("judges") or {}).items():
        probes = {}
        for name, probe in (audit.get("probes") or {}).items():
            low, high = probe.get("ci_low"), probe.get("ci_high")
            probes[name] = {
                "estimate": probe.get("estimate"),
                "ci": None if low is None or high is None else [low, high],
                "n": probe.get("n", 0),
                "flagged": bool(probe.get("flagged")),
            }
        mine = [line for line in warnings if line.startswith(f"{judge}: ")]
        summary[judge] = {"probes": probes, "warnings": mine}
    return summary
