"""Fixtures for the conformance suites: the shared data folders, skipped when absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.edgecase_data import EDGECASES, KEPANO_VAULT, absent


@pytest.fixture(scope="session")
def edgecases() -> Path:
    """The edge-case data folder (../shared/data/edgecases relative to the project root)."""
    if not EDGECASES.is_dir():
        pytest.skip(absent(EDGECASES))
    return EDGECASES


@pytest.fixture(scope="session")
def kepano_vault() -> Path:
    """A real properties-centric vault; read-only, so every index goes under a tmp path."""
    if not KEPANO_VAULT.is_dir():
        pytest.skip(absent(KEPANO_VAULT))
    return KEPANO_VAULT
