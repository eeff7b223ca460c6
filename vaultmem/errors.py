"""The one error tree: messages fit to show a person, naming the next command to run."""

from __future__ import annotations


class VaultmemError(Exception):
    """Base of every error vaultmem expects; front-ends print the message and exit."""

    exit_code = 1


class VaultNotFound(VaultmemError):
    """The vault folder is missing or none was given."""

    exit_code = 2


class UsageError(VaultmemError):
    """The arguments do not make sense together."""

    exit_code = 2


class NoIndex(VaultmemError):
    """The vault has not been indexed yet."""

    exit_code = 3


class SchemaMismatch(VaultmemError):
    """The index was built by another schema version."""

    exit_code = 3


class IndexDamaged(VaultmemError):
    """The index file cannot be read or written (damaged pages, a folder in its place)."""

    exit_code = 3


class IndexBusy(VaultmemError):
    """Another process holds the reindex lock."""

    exit_code = 4


class NoteNotFound(VaultmemError):
    """No note matches a path, title or alias."""

    exit_code = 1


class ConfigError(VaultmemError):
    """`.vaultmem/config.toml` cannot be read."""

    exit_code = 2


class ModelServerDown(VaultmemError):
    """An embedding or text model server (Ollama, an OpenAI-compatible server) is not reachable."""

    exit_code = 5


class ModelServerError(VaultmemError):
    """A model server answered, but not usefully (an HTTP error, not JSON, malformed vectors)."""

    exit_code = 5


class ChangedOnDisk(VaultmemError):
    """A note changed (or was deleted, renamed, swapped) on disk since it was read: not written."""

    exit_code = 6


class CannotEdit(VaultmemError):
    """vaultmem will not change this file: read-only, outside the vault, not a regular file,
    too large, in an encoding that cannot hold the new text, or the disk refused the write."""

    exit_code = 1


class EditDoesNotApply(UsageError):
    """The change does not fit the note's text: no such line, heading, task or property."""


class NoteExists(VaultmemError):
    """Creating or restoring a note would overwrite one that exists: refused."""

    exit_code = 1
