"""vaultmem: an Obsidian-style markdown vault as fast, searchable, graph-aware memory."""

__version__ = "0.1.0"
