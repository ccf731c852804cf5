"""jurist-plain-language: an example jurist plugin, a small rubric benchmark with its own grader prompt.

Installed, it adds ``jurist run --bench plain-language`` through the ``jurist.benchmarks`` entry point
(see pyproject.toml); jurist imports :mod:`jurist_plain_language.benchmark` only when that name is used.
"""
