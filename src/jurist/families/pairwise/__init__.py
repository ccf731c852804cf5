"""The pairwise family: battles against the baseline(s) scored as win rates, Bradley-Terry, style control or
AlpacaEval's LC win rate; the leaderboard and the judges' sanity; re-anchoring onto a published scale.

Used through :mod:`jurist.families` and its registry; nothing here is imported from outside the package.
"""
