"""Gold labels as the judge card reads them, and the gold probes of a preference judge.

A question's gold label says which of its pair is better, with the baseline's answer as A ("A>B": the
baseline's is better). It is found, in this order, in JudgeBench's pair label (its response_A is the
baseline), in ``metadata.gold_label`` (a benchmark or an import that carries human annotations puts them
there), and in an LMArena calibration question's human vote (``-B calibration=K``: both stored answers
judged against each other, model_a's as the baseline, so ``human_winner`` model_a is "A>B"). A placement
question's human vote is about the arena's own two models, not the evaluated one: it is no gold label for
the judged pair (its metadata names the drawn ``opponent``, and is skipped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from jurist.audit.card import ProbeResult, calibration_result
from jurist.audit.verdicts import Preference, preference_decision
from jurist.ratings import gold_agreement
from jurist.store import Question

HUMAN_VOTE = {"model_a": "A>B", "model_b": "B>A"}
"""An arena calibration question's decisive human vote in the pair's order (model_a's answer as A)."""


def gold_label(question: Question) -> str | None:
    """The question's gold verdict with the baseline's answer as A, where it has one (see the module)."""
    metadata = question.metadata
    pair = metadata.get("pair")
    if pair is not None:
        label = getattr(pair, "label", None)
    elif "gold_label" in metadata:
        label = metadata["gold_label"]
    elif "human_winner" in metadata and "opponent" not in metadata:
        label = HUMAN_VOTE.get(str(metadata["human_winner"]))
    else:
        label = None
    return label if label in ("A>B", "B>A") else None


def gold_source(question: Question) -> str:
    """What a question's gold label is, as the card names it."""
    metadata = question.metadata
    if "pair" in metadata:
        return "JudgeBench's labels"
    return "gold labels" if "gold_label" in metadata else "the human votes"


def preference_gold(
    records: Sequence[Preference], questions: Mapping[str, Question], *, seed: int
) -> list[ProbeResult]:
    """Gold agreement (accuracy of the preferred side, one game per pair, and Cohen's kappa) and
    calibration (Brier score of P(model better) against the gold label, with ECE) of a preference judge,
    where its questions carry gold labels; none otherwise. A judgment without a probability counts as no
    verdict (wrong) in the accuracy, as JudgeBench counts a missing verdict, and is left out of
    calibration."""
    labels: list[str] = []
    games: list[list[str | None]] = []
    stated: list[float] = []
    happened: list[float] = []
    calibrated_uids: list[str] = []
    sources: set[str] = set()
    for record in records:
        question = questions.get(record.uid)
        label = gold_label(question) if question is not None else None
        if question is None or label is None:
            continue
        sources.add(gold_source(question))
        p = record.p_model
        labels.append(label)
        games.append([preference_decision(p)])
        if p is not None:
            stated.append(p)
            happened.append(float(label == "B>A"))
            calibrated_uids.append(record.uid)
    if not labels:
        return []
    against = " and ".join(sorted(sources))
    found = gold_agreement(labels, games, seed=seed)
    extra = {"kappa": round(found.kappa, 4), "against": against}
    results = [ProbeResult("gold_agreement", found.accuracy, extra=extra)]
    if stated:
        results.append(calibration_result(stated, happened, calibrated_uids, against=against, seed=seed))
    return results
