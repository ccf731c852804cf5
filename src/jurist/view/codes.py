"""One small code per (question, run, model, judge): what the browser filters on without reading texts.

The page lists 10,000 questions x several models and judges and must filter them in milliseconds, so
every judgment is reduced here to one integer and the integers of the whole run travel as one string of
characters (``chr(code + CODE_OFFSET)``), read in the page with ``charCodeAt``. The texts stay in the
per-question payloads. A judgment in games is graded from the judged model's side, game by game, so a
filter can ask "did the model lose either game" or "do the swapped games disagree" directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NONE = 0
"""No judgment (or no answer) for this cell."""
GRADES = ("", "much better", "better", "tie", "worse", "much worse", "no verdict")
"""A game's verdict from the judged model's side: 1 ``>>`` .. 5 ``<<``; 6 the judge gave no label."""
NO_VERDICT = 6
_FROM_A = {"A>>B": 1, "A>B": 2, "A=B": 3, "B>A": 4, "B>>A": 5}
_FROM_B = {"A>>B": 5, "A>B": 4, "A=B": 3, "B>A": 2, "B>>A": 1}

PAIR_BASE = 1
"""Pairwise codes are ``1 + 7 * grade_of_game_1 + grade_of_game_2`` (each grade 0..6): 1..49."""
POINT_PASS, POINT_PARTIAL, POINT_FAIL, POINT_UNSCORED = 50, 51, 52, 53
"""A point record (rule check, rubric grade): value 1, in (0, 1), 0, or None."""
OTHER = 54
"""A record shown as its own fields (a judge kind whose layout is ``fields``, :mod:`jurist.view.layouts`):
shown with its raw fields, never filtered away."""
FAILED = 55
"""The judging request failed (``failures.jsonl``) and no judgment replaced it."""

ANSWER_NONE, ANSWER_OK, ANSWER_EMPTY, ANSWER_FAILED = 0, 1, 2, 3
"""Per (question, run, model): no answer, an answer, an empty or truncated one, a failed request."""

CODE_OFFSET = 35
"""Codes 0..55 become characters 35..90: no quote, no backslash, nothing JSON must escape."""


def game_grade(game: Mapping[str, Any], model: str) -> int:
    """The grade of one game for ``model`` (1 much better .. 5 much worse; 6 no verdict; 0 not its game)."""
    label = game.get("label")
    if game.get("a") == model:
        table = _FROM_A
    elif game.get("b") == model:
        table = _FROM_B
    else:
        return NONE
    if not isinstance(label, str):
        return NO_VERDICT
    return table.get(label, NO_VERDICT)


def pairwise_code(record: Mapping[str, Any], model: str) -> int:
    """The cell code of a judgment in games (a pairwise one): both games' grades for ``model`` (a missing
    game is 0)."""
    games = record.get("games")
    grades = [NONE, NONE]
    if isinstance(games, list):
        for index, game in enumerate(games[:2]):
            if isinstance(game, Mapping):
                grades[index] = game_grade(game, model)
    return PAIR_BASE + 7 * grades[0] + grades[1]


def point_code(value: object) -> int:
    """The cell code of a point record's ``value``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return POINT_UNSCORED
    if value >= 1.0:
        return POINT_PASS
    if value <= 0.0:
        return POINT_FAIL
    return POINT_PARTIAL


def _rank(code: int) -> int:
    """Which code a cell shows when it holds records of several kinds: a verdict, then a grade, then a
    failure, then a record of unknown kind."""
    if PAIR_BASE <= code < POINT_PASS:
        return 4
    if code in _POINTS:
        return 3
    return 2 if code == FAILED else 1 if code == OTHER else 0


def merge_codes(old: int, new: int) -> int:
    """The code of a cell holding several records (a rubric graded item by item, a verdict beside a record
    of a new kind): points combine (all passed, all failed, else partial; any unscored is unscored), else
    the higher-ranked kind wins."""
    if old in _POINTS and new in _POINTS:
        if old == new:
            return old
        return POINT_UNSCORED if POINT_UNSCORED in (old, new) else POINT_PARTIAL
    return new if _rank(new) >= _rank(old) else old


_POINTS = frozenset((POINT_PASS, POINT_PARTIAL, POINT_FAIL, POINT_UNSCORED))


def encode(codes: bytearray) -> str:
    """Codes as the page reads them: one character each."""
    return codes.translate(_TABLE).decode("ascii")


_TABLE = bytes((i + CODE_OFFSET) & 0x7F for i in range(256))
