"""AlpacaEval results imported as a jurist run.

Reads ``results/<model>/model_outputs.json[.gz]`` and ``<annotator>/annotations.json[.gz]``. A soft
preference p (P(model beats baseline)) becomes two battles weighted p and 1 - p: the same likelihood as a
soft label, so win rate, Bradley-Terry and style control all see exactly AlpacaEval's numbers.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from jurist.errors import InputError, JuristError
from jurist.interop.common import (
    ImportSummary,
    StyleFn,
    check_new_run_dir,
    field_error,
    fresh_run_dir,
    json_or_gz,
    read_json_document,
    store_answers,
    store_judgments,
    write_jsonl,
    write_run_json,
)
from jurist.judging import judgment_key, preference_battles
from jurist.store import RunDir

ALPACA_ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
ALPACA_BASELINE = "gpt4_1106_preview"  # AlpacaEval 2.0's "gpt4_turbo" reference outputs


def alpaca_uid(instruction: str) -> str:
    """A stable question id for an AlpacaEval instruction (outputs files carry none)."""
    return hashlib.sha256(instruction.encode("utf-8")).hexdigest()[:16]


def _alpaca_rows(path: Path) -> list[dict[str, Any]]:
    rows = read_json_document(path)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise InputError(path, "", "expected a JSON list of objects")
    return rows


def _alpaca_text(row: dict[str, Any], name: str, path: Path, index: int) -> str:
    value = row.get(name)
    if not isinstance(value, str):
        raise field_error(path, f"record {index}", name, "expected a string")
    return value


def read_alpaca_outputs(path: Path, model: str) -> dict[str, dict[str, Any]]:
    """uid -> jurist answer from ``model_outputs.json[.gz]`` (instruction as prompt, dataset as category)."""
    answers: dict[str, dict[str, Any]] = {}
    for index, row in enumerate(_alpaca_rows(path)):
        instruction = _alpaca_text(row, "instruction", path, index)
        uid = alpaca_uid(instruction)
        answers[uid] = {
            "kind": "answer",
            "uid": uid,
            "sample": 0,
            "model": model,
            "category": str(row.get("dataset") or "default"),
            "answer": _alpaca_text(row, "output", path, index),
            "prompt": instruction,
            "source": "alpaca-eval",
        }
    return answers


def alpaca_probability(preference: Any, path: Path, index: int) -> float | None:
    """P(model output wins) from AlpacaEval's preference (1..2; legacy 0 is a tie); None when missing."""
    if preference is None:
        return None
    if not isinstance(preference, (int, float)) or isinstance(preference, bool):
        raise field_error(path, f"record {index}", "preference", "expected a number in [1, 2]")
    value = float(preference)
    if math.isnan(value):
        return None
    if value == 0.0:
        return 0.5
    if not 1.0 <= value <= 2.0:
        raise field_error(path, f"record {index}", "preference", f"{value} is outside [1, 2]")
    return value - 1.0


def battles_from_preference(judgment: dict[str, Any]) -> list[dict[str, Any]]:
    """Two battles weighted p and 1 - p for a soft preference p = P(model beats baseline) (the same
    outcomes as jurist's own AlpacaEval judgments give)."""
    return preference_battles(judgment)


def read_alpaca_annotations(
    path: Path, *, model: str, annotator: str, baseline: str
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Judgments (one per instruction) and the outputs the annotations embed (uid -> answer, for fallback)."""
    judgments: dict[str, dict[str, Any]] = {}
    embedded: dict[str, dict[str, Any]] = {}
    for index, row in enumerate(_alpaca_rows(path)):
        instruction = _alpaca_text(row, "instruction", path, index)
        uid = alpaca_uid(instruction)
        p = alpaca_probability(row.get("preference"), path, index)
        category = str(row.get("dataset") or "default")
        judgments[uid] = {
            "kind": "preference",
            "key": judgment_key(annotator, model, baseline, uid, "", "", "import:alpaca-eval"),
            "uid": uid,
            "sample": 0,
            "category": category,
            "judge": annotator,
            "model": model,
            "baseline": baseline,
            "protocol": "alpaca-eval-import",
            "preference": row.get("preference"),
            "p_model": p,
            "invalid": p is None,
            "source": "alpaca-eval",
        }
        for side, who in (("output_1", baseline), ("output_2", model)):
            if isinstance(row.get(side), str):
                embedded.setdefault(who, {})[uid] = {
                    "kind": "answer",
                    "uid": uid,
                    "sample": 0,
                    "model": who,
                    "category": category,
                    "answer": row[side],
                    "prompt": instruction,
                    "source": "alpaca-eval",
                }
    return list(judgments.values()), embedded


def _alpaca_baseline(results_dir: Path, annotator: str) -> str:
    """The reference generator named in the annotations (``generator_1``), else AlpacaEval 2.0's."""
    for model_dir in sorted(results_dir.iterdir()):
        path = json_or_gz(model_dir / annotator / "annotations.json")
        if path is not None:
            rows = _alpaca_rows(path)
            names = Counter(str(r.get("generator_1")) for r in rows if r.get("generator_1"))
            if names:
                return names.most_common(1)[0][0]
    return ALPACA_BASELINE


def read_alpaca_results(
    results_dir: Path, *, annotator: str, baseline: str
) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """(model -> uid -> answer, model -> judgments) from every ``results/<model>/`` folder.

    Outputs come from ``model_outputs.json[.gz]``; an output found only inside the annotations is used too.
    """
    answers: dict[str, dict[str, dict[str, Any]]] = {}
    embedded: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    judgments: dict[str, list[dict[str, Any]]] = {}
    for model_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        model = model_dir.name  # not generator_2: NullModel's annotations call it "example"
        outputs = json_or_gz(model_dir / "model_outputs.json")
        if outputs is not None:
            answers[model] = read_alpaca_outputs(outputs, model)
        annotations = json_or_gz(model_dir / annotator / "annotations.json")
        if annotations is not None and model != baseline:
            judgments[model], inline = read_alpaca_annotations(
                annotations, model=model, annotator=annotator, baseline=baseline
            )
            for who, per_uid in inline.items():
                for uid, answer in per_uid.items():
                    embedded[who].setdefault(uid, answer)
    for who, per_uid in embedded.items():
        for uid, answer in per_uid.items():
            answers.setdefault(who, {}).setdefault(uid, answer)
    return answers, judgments


def _store_alpaca_judgments(
    run: RunDir, judgments: dict[str, list[dict[str, Any]]], order: list[str], summary: ImportSummary
) -> list[dict[str, Any]]:
    """Write judgments/<annotator>/<model>.jsonl in the baseline's instruction order; return the battles."""
    position = {uid: n for n, uid in enumerate(order)}
    battles: list[dict[str, Any]] = []
    for model, records in sorted(judgments.items()):
        records.sort(key=lambda r: position.get(r["uid"], len(position)))
        judge = records[0]["judge"] if records else ALPACA_ANNOTATOR
        store_judgments(run, judge, model, records, summary)
        for record in records:
            battles.extend(battles_from_preference(record))
    return battles


def import_alpaca_eval(
    results_dir: Path, out: Path, *, annotator: str = ALPACA_ANNOTATOR, style: StyleFn | None = None
) -> ImportSummary:
    """Write a jurist run directory from AlpacaEval ``results/`` (outputs and per-instruction preferences)."""
    if not results_dir.is_dir():
        raise JuristError(f"{results_dir}: no such results directory")
    check_new_run_dir(out)
    baseline = _alpaca_baseline(results_dir, annotator)
    summary = ImportSummary(format="alpaca-eval", source=str(results_dir), bench="alpaca-eval")
    answers, judgments = read_alpaca_results(results_dir, annotator=annotator, baseline=baseline)
    if not answers and not judgments:  # the wrong folder: an empty run would "succeed" with 0 models
        raise JuristError(
            f"{results_dir}: no AlpacaEval results found (looked for <model>/model_outputs.json[.gz] and "
            f"<model>/{annotator}/annotations.json[.gz] in its sub-folders)"
        )
    run = fresh_run_dir(out)
    store_answers(run, answers, style, summary)
    battles = _store_alpaca_judgments(run, judgments, list(answers.get(baseline, {})), summary)
    summary.baselines = {"default": baseline}
    summary.battles = write_jsonl(run.battles, battles)
    write_run_json(run, summary, {"annotator": annotator})
    return summary
