"""Strata test helpers: a store where everything is immediately stale and evictable (the reference's test config)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from stratagate.strata import StrataConfig, StrataStore

DAY = 86400


def immediate_config(**overrides) -> StrataConfig:
    settings = {"decay_thresholds": {"*": 0}, "lru_decay_thresholds": {"*": 0}, "lru_min_access_count": 0}
    return StrataConfig(**{**settings, **overrides})


@pytest.fixture
def store(tmp_path: Path) -> StrataStore:
    created = StrataStore(tmp_path / "strata_data", immediate_config())
    created.init()
    return created


def _write_file(root: Path, relative: str, content: str | bytes, days_old: float = 0) -> Path:
    file = root / relative
    file.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        file.write_bytes(content)
    else:
        file.write_text(content, encoding="utf-8")
    if days_old:
        stamp = time.time() - days_old * DAY
        os.utime(file, (stamp, stamp))
    return file


@pytest.fixture
def write_file():
    """`write_file(root, relative, content, days_old=0)`: create a file, optionally backdated."""
    return _write_file


@pytest.fixture
def immediate():
    """`immediate(**overrides)`: a config where everything is stale and evictable at once."""
    return immediate_config
