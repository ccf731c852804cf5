"""Exceptions that end a command with a clear one-line message (exit code 2)."""

from __future__ import annotations


class JuristError(Exception):
    """A usage or input problem the user must fix; printed as one line, exit code 2."""


class InputError(JuristError):
    """Bad input data: the message names the file, line (or alias) and field."""

    def __init__(self, path: object, where: str, message: str) -> None:
        self.path = str(path)
        self.where = where
        super().__init__(f"{self.path}: {where}: {message}" if where else f"{self.path}: {message}")
