"""The memory layer's errors: refusals a person can act on, in the one error tree."""

from __future__ import annotations

from vaultmem.errors import UsageError, VaultmemError


class Refused(UsageError):
    """A value, title, key or date vaultmem will not write; the message says what to do instead."""


class LoopNotFound(VaultmemError):
    """No open loop matches a REF (an id or text): it was resolved, edited or never existed."""

    exit_code = 1


class LoopAmbiguous(VaultmemError):
    """A REF's text matches several open loops; the message lists them and nothing changed."""

    exit_code = 1


class LoopChanged(VaultmemError):
    """The task changed in the note since it was listed (edited, checked or deleted)."""

    exit_code = 1
