"""Subcommands of the ``jurist`` CLI beyond ``run``, one module each."""
