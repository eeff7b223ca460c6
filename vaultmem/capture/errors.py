"""Capture's errors, in the one error tree: what was wrong with the input and what to do."""

from __future__ import annotations

from vaultmem.errors import UsageError, VaultmemError


class BadTranscript(UsageError):
    """A transcript that cannot be read: empty, binary, too large, or in no known shape."""


class BadModelOutput(VaultmemError):
    """A model's extraction that does not fit the schema: nothing was written."""

    exit_code = 5


class CaptureNotFound(VaultmemError):
    """No pending capture or item matches an id."""

    exit_code = 1


class CaptureChanged(VaultmemError):
    """A capture note (or an item's target) changed since it was read: nothing was written."""

    exit_code = 6
