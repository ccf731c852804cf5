"""The judge-accuracy family: JudgeBench's judges scored by their accuracy against its labels.

Used through :mod:`jurist.families` and its registry; nothing here is imported from outside the package.
"""
