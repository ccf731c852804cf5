"""Subcommands of the ``jurist`` CLI beyond ``run``, one module each (typer wrappers only; each exposes
``register(app)``). Nothing but :mod:`jurist.cli` imports this package.
"""
