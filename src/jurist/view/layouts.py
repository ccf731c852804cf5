"""How the browser shows each record it reads, as the judge kind registry says of the record's kind.

Judge kinds are pluggable (:mod:`jurist.judging.kinds`), so no part of the view tells them apart by name:
a kind declares its :data:`~jurist.judging.JudgmentLayout` (games, rubric items, or its own fields), a
kind no registry here knows (a run judged by a plugin not installed where it is viewed) is shown as its
own fields. Two layouts are the view's own: a point record (a rule check, a rubric's per-item points),
which no judge kind is, and a judging request that failed.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

from jurist.errors import JuristError
from jurist.judging import DEFAULT_LAYOUT, JudgmentLayout, judge_kind_layout, judge_kind_outcome

ViewLayout: TypeAlias = Literal["games", "items", "fields", "point", "failure"]
"""A judge kind's :data:`~jurist.judging.JudgmentLayout`, or a point record, or a failed request."""
POINT_RECORD = "point"
"""The ``kind`` field of the store's point records (:class:`jurist.store.PointRecord`)."""
FAILURE: ViewLayout = "failure"
"""The layout (and the kind shown) of a judging request that failed and that nothing replaced."""
JUDGMENTS: frozenset[str] = frozenset(get_args(JudgmentLayout))
"""The layouts of records a judge wrote as its judgment of one answer (not points, not failures)."""


class Layouts:
    """Each record kind's layout for one run, asked of the registry once per kind name; a plugin whose
    layout cannot be read is shown as its own fields, and the run's notes say why."""

    def __init__(self, notes: list[str]) -> None:
        self._notes = notes
        self._known: dict[str, ViewLayout] = {POINT_RECORD: "point"}

    def of(self, kind: str) -> ViewLayout:
        found = self._known.get(kind)
        if found is None:
            found = self._known[kind] = self._asked(kind)
        return found

    def _asked(self, kind: str) -> JudgmentLayout:
        try:
            return judge_kind_layout(kind)
        except JuristError as exc:
            self._notes.append(f"judgments of kind {kind!r} are shown as their own fields: {exc}")
            return DEFAULT_LAYOUT


def grades_one_answer(kind: object) -> bool:
    """Whether judge kind ``kind`` (as a judge card names it) grades an answer on its own (its judgments
    become points) rather than against a baseline's; a kind no registry here knows is read as a battle
    kind, the registry's default."""
    if not isinstance(kind, str):
        return False
    try:
        return judge_kind_outcome(kind) == "point"
    except JuristError:
        return False
