"""Former home of the leaderboard table; kept so ``from jurist.report.table import print_leaderboard``
still works. New code imports :mod:`jurist.report.formats`."""

from jurist.report.formats import print_leaderboard, render_table

__all__ = ["print_leaderboard", "render_table"]
