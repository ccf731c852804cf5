"""The placement family: judged battles placed among an arena's human votes (or a judge's temperature
fitted to them).

Used through :mod:`jurist.families` and its registry; nothing here is imported from outside the package.
"""
