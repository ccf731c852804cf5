"""Exceptions that end a command with a clear one-line message (exit code 2, or 1 for storage)."""

from __future__ import annotations


class JuristError(Exception):
    """A usage or input problem the user must fix; printed as one line, exit code 2."""


class InputError(JuristError):
    """Bad input data: the message names the file, line (or alias) and field."""

    def __init__(self, path: object, where: str, message: str) -> None:
        self.path = str(path)
        self.where = where
        super().__init__(f"{self.path}: {where}: {message}" if where else f"{self.path}: {message}")


class StorageError(Exception):
    """The disk refused a write (full, over quota, file too large): printed as one line naming the path
    and what was being written, exit code 1; everything written before stays valid and the run resumes."""

    def __init__(self, path: object, what: str, error: OSError) -> None:
        self.path = str(path)
        reason = error.strerror or type(error).__name__
        super().__init__(
            f"could not write {what} to {self.path}: {reason}; everything saved so far is kept, "
            "so free some space and run the same command again to resume"
        )
