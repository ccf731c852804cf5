"""Arena-Hard's benchmark facts: the baseline model each question category is judged against."""

from __future__ import annotations

ARENA_HARD_BASELINES: dict[str, str] = {
    "hard_prompt": "o3-mini-2025-01-31",
    "coding": "o3-mini-2025-01-31",
    "math": "o3-mini-2025-01-31",
    "creative_writing": "gemini-2.0-flash-001",
    "arena-hard-v0.1": "gpt-4-0314",
}
"""Arena-Hard's baseline per question category (used when a judgment does not name its baseline)."""


def default_baseline(category: str, bench: str) -> str | None:
    """Arena-Hard's baseline for a category, else for the benchmark (v0.1 has a single one)."""
    return ARENA_HARD_BASELINES.get(category) or ARENA_HARD_BASELINES.get(bench)
