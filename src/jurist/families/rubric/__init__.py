"""The rubric family: HealthBench's and WritingBench's graded items scored as each reference does, the
suite's :class:`jurist.benchmarks.base.RubricSuite` saying how.

Used through :mod:`jurist.families` and its registry; nothing here is imported from outside the package.
"""
