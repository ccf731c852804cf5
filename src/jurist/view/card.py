"""A run's judge card read for the browser: each judge's probes and, per probe item, what the judge was
shown before and after the probe changed it, with both verdicts.

judge_card.json keeps per item only who and which verdicts (``items``), not the texts the probe sent, so
the texts are rebuilt here from the run's own answers with the same functions the probes used
(:mod:`jurist.audit.perturb`): the padding after the shorter answer, the note planted in the worse one
and the filler of the same length after the other, the off-topic answer a rubric grader was shown. A
changed answer is kept as its original (shared by every item that shows it) and what the probe added
after it, so the page shows the addition as such. A run without a card gets one line saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jurist.audit import CARD_FILE, RULES, perturb, read_card
from jurist.errors import JuristError
from jurist.rules import visible_text
from jurist.store import answer_text
from jurist.view.collect import Files, Judged, RunData
from jurist.view.layouts import JUDGMENTS, grades_one_answer

NO_CARD = "no judge card in this run"
_EXTRA = ("kappa", "ece", "against")
"""A probe's numbers besides its interval, shown beside it."""

Prompt = Callable[[str], str | None]
"""uid -> the question's prompt as the run's benchmark gives it (None where the view has none)."""


def card_view(run: RunData, files: Files, prompt: Prompt) -> dict[str, Any]:
    """The card of ``run`` for the page: ``{"note": ...}`` alone when the run has none (an old run, one
    with ``--no-judge-card``) or it cannot be read."""
    if not (run.root / CARD_FILE).is_file():
        return {"note": NO_CARD}
    try:
        document = read_card(run.root)
    except JuristError as exc:
        return {"note": f"the judge card cannot be read: {exc}"}
    texts = _Texts(run, files, prompt)
    warnings = [str(line) for line in document.get("warnings") or []]
    judges = []
    for name, audit in (document.get("judges") or {}).items():
        if not isinstance(audit, Mapping):
            continue
        alone = grades_one_answer(audit.get("kind"))  # a grader (the rubric kind): answers shown alone
        probes = [
            _probe(str(probe), found, str(name), alone, texts)
            for probe, found in (audit.get("probes") or {}).items()
            if isinstance(found, Mapping)
        ]
        judges.append(
            {
                "judge": str(name),
                "kind": audit.get("kind"),
                "judge_requests": audit.get("judge_requests"),
                "probe_budget": audit.get("probe_budget"),
                "probe_requests": audit.get("probe_requests"),
                "failed_probe_requests": audit.get("failed_probe_requests"),
                "notes": [str(note) for note in audit.get("notes") or []],
                "warnings": [line for line in warnings if line.startswith(f"{name}: ")],
                "probes": probes,
            }
        )
    return {
        "seed": document.get("seed"),
        "sample": document.get("sample"),
        "warnings": warnings,
        "judges": judges,
        "prompts": texts.prompts,
        "answers": texts.answers,
    }


class _Texts:
    """The run's answers and prompts the card's items show, each read once and kept by a short key."""

    def __init__(self, run: RunData, files: Files, prompt: Prompt) -> None:
        self.run, self.files, self.prompt_of = run, files, prompt
        self.prompts: dict[str, str] = {}
        self.answers: dict[str, str] = {}
        """``model|uid|sample`` -> the answer's text (a baseline's is its sample 0's)."""

    def prompt(self, uid: str) -> str | None:
        if uid not in self.prompts:
            found = self.prompt_of(uid)
            if found is None:
                return None
            self.prompts[uid] = found
        return self.prompts[uid]

    def answer(self, model: str, uid: str, sample: int) -> str | None:
        """The key of ``model``'s answer, its text kept under it; None when the run has no such answer."""
        for at in (sample, 0) if sample else (0,):  # baselines answer once, as sample 0
            slot = self.run.slots.get((uid, at))
            ref = slot.answers.get(model) if slot else None
            if ref is None:
                continue
            key = f"{model}|{uid}|{at}"
            if key not in self.answers:
                text = answer_text(self.files.read(ref))
                if text is None:
                    return None
                self.answers[key] = text
            return key
        return None

    def judgment(self, judge: str, model: str, uid: str, sample: int) -> dict[str, Any] | None:
        """The judge's stored judgment of ``model``'s answer (a record of its kind, not a point)."""
        slot = self.run.slots.get((uid, sample))
        found: list[Judged] = [
            j
            for j in (slot.judged if slot else [])
            if (j.judge, j.model) == (judge, model) and j.layout in JUDGMENTS
        ]
        return self.files.read(found[-1].ref) if found else None


def _probe(name: str, found: Mapping[str, Any], judge: str, alone: bool, texts: _Texts) -> dict[str, Any]:
    rule = RULES.get(name)
    entry: dict[str, Any] = {
        "probe": name,
        "title": rule.title if rule else name,
        "meaning": (rule.plus if rule else "") or "",
        **{key: found.get(key) for key in ("estimate", "ci_low", "ci_high", "n", "threshold", "direction")},
        "flagged": found.get("flagged") is True,
        "note": found.get("note"),
        "extra": {key: found[key] for key in _EXTRA if key in found},
    }
    items = found.get("items")
    if isinstance(items, list):
        entry["items"] = [
            _item(name, item, judge, alone, texts) for item in items if isinstance(item, Mapping)
        ]
    return entry


def _item(probe: str, item: Mapping[str, Any], judge: str, alone: bool, texts: _Texts) -> dict[str, Any]:
    """One probe item: its verdicts as stored in the card, and per answer shown, the original's key and
    what the probe changed (``added`` after it, or the answer ``replaced`` whole). ``alone``: the judge
    grades an answer on its own (:func:`~jurist.view.layouts.grades_one_answer`), else against a
    baseline's."""
    model, uid = str(item.get("model", "")), str(item.get("uid", ""))
    sample = item.get("sample", 0) if isinstance(item.get("sample"), int) else 0
    record = texts.judgment(judge, model, uid, sample) or {}
    out: dict[str, Any] = {"model": model, "uid": uid, "sample": sample}
    out["verdicts"] = {key: item[key] for key in item if key not in ("model", "uid", "sample")}
    prompt = texts.prompt(uid)
    out["prompt"] = uid if prompt is not None else None
    if alone:
        out["sides"], out["note"] = _rubric_sides(probe, model, uid, sample, texts)
        out["criterion"] = _criterion(record, item.get("item"))
        return out
    baseline = str(record.get("baseline") or "")
    game = _game(record, item.get("game"))
    if game is not None:
        out["positions"] = {"A": game.get("a"), "B": game.get("b")}
    out["sides"], out["note"] = _pair_sides(probe, item, model, baseline, uid, sample, prompt, texts)
    return out


def _game(record: Mapping[str, Any], number: Any) -> Mapping[str, Any] | None:
    for n, game in enumerate(record.get("games") or []):
        if isinstance(game, Mapping) and game.get("game", n + 1) == number:
            return game
    return None


def _criterion(record: Mapping[str, Any], index: Any) -> str | None:
    for n, entry in enumerate(record.get("items") or []):
        if isinstance(entry, Mapping) and entry.get("item", n) == index:
            text = entry.get("criterion", entry.get("name"))
            return str(text) if text is not None else None
    return None


def _side(model: str, key: str | None, original: str | None, changed: str | None) -> dict[str, Any]:
    """An answer as shown: unchanged (``changed`` None), extended (``added``), or replaced whole."""
    side: dict[str, Any] = {"model": model, "key": key}
    if changed is None or original is None:
        return side
    if changed.startswith(original):
        side["added"] = changed[len(original) :]
    else:
        side["replaced"] = changed
    return side


def _pair_sides(
    probe: str,
    item: Mapping[str, Any],
    model: str,
    baseline: str,
    uid: str,
    sample: int,
    prompt: str | None,
    texts: _Texts,
) -> tuple[list[dict[str, Any]], str | None]:
    keys = {name: texts.answer(name, uid, sample) for name in (baseline, model) if name}
    if not baseline or any(key is None for key in keys.values()):
        return [], "the answers this item showed are not in the run directory"
    answers = {name: texts.answers[str(key)] for name, key in keys.items()}
    changed: dict[str, str] = {}
    note = None
    if probe == "verbosity" and item.get("padded") in answers:
        shorter = str(item["padded"])
        longer = baseline if shorter == model else model
        changed[shorter] = perturb.padded(
            answers[shorter], longer_than=len(answers[longer]), question=prompt or ""
        )
        if prompt is None:
            note = "the question is not available: the padding's restatement of it is not shown"
    elif probe == "injection" and item.get("planted") in answers:
        worse = str(item["planted"])
        better = baseline if worse == model else model
        changed[worse], changed[better] = perturb.planted(answers[worse], answers[better])
    elif probe == "position":
        note = "the same answers, shown in the other order"
    elif probe == "self_consistency":
        note = "the same request asked again, unchanged, as a new sample"
    sides = [_side(name, keys[name], answers[name], changed.get(name)) for name in (baseline, model)]
    return sides, note


def _rubric_sides(
    probe: str, model: str, uid: str, sample: int, texts: _Texts
) -> tuple[list[dict[str, Any]], str | None]:
    key = texts.answer(model, uid, sample)
    if key is None:
        return [], "the answer this item graded is not in the run directory"
    original = texts.answers[key]
    if probe == "lenience":
        return [_side(model, key, original, perturb.OFF_TOPIC)], "an off-topic answer graded in its place"
    if probe == "rubric_verbosity":
        shown, _ = visible_text(original)
        prompt = texts.prompt(uid)
        padded = perturb.padded(shown, longer_than=len(shown), question=prompt or "")
        note = None if prompt is not None else "the question is not available: its restatement is not shown"
        if shown != original:
            return [
                _side(model, key, original, padded)
            ], note or "graded on the answer's visible text, padded"
        return [_side(model, key, original, padded)], note
    return [_side(model, key, original, None)], "the same item graded again, unchanged, as a new sample"
