"""Capture and review: transcripts propose memories, a person decides what the vault keeps.

Pure parts (no files, no index): `transcript` reads the chat formats into turns, `extract`
proposes candidates by rules, `llm_extract` validates a model's proposals, `gates` applies the
configured quality gates, `note` renders and parses the capture note (docs/capture.md), `flags`
checks candidates against the vault's current facts. The core (`vaultmem.capturing`) reads the
vault and writes through the one write path and the memory layer.
"""
