"""Shared fixtures of the Python module's tests.

The `bugu` command is ``$BUGU_CLI`` (default ``target/debug/bugu``) and the Rust side of the
cross-front-end tests is ``$BUGU_TYPED_KEYS`` (default ``target/debug/examples/typed_keys``); both
are built by ``cargo test --workspace``, which ``scripts/test`` runs first.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]


def _program(variable: str, default: str) -> Path:
    path = Path(os.environ.get(variable) or REPO_ROOT / default)
    assert path.exists(), f"{path} is not built: run `cargo test --workspace` (or set ${variable})"
    return path


@pytest.fixture(scope="session")
def cli() -> Path:
    return _program("BUGU_CLI", "target/debug/bugu")


@pytest.fixture(scope="session")
def typed_keys() -> Path:
    return _program("BUGU_TYPED_KEYS", "target/debug/examples/typed_keys")
