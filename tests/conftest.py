"""Shared pytest fixtures and the --update-golden option."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DS_ACCELERATOR", "cpu")

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
EXAMPLES = REPO / "examples"


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False, help="rewrite golden files from current output")


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def corpus() -> Path:
    assert CORPUS.is_dir(), f"shared corpus missing at {CORPUS}"
    return CORPUS


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


def assert_yield_or_reason(build: Path, row: dict, bar: int = 50) -> None:
    """The corpus bar: an env with a write tool yields `bar` tasks, or its manifest says why it
    yields fewer (`stats.sampler_rejected`: the reasons its sampled scenarios were refused)."""
    import json

    if row["tasks"] >= bar:
        return
    env = json.loads((build / "manifest.json").read_text())["envs"][row["env"]]
    rejected = (env.get("stats") or {}).get("sampler_rejected") or {}
    assert sum(rejected.values()) > 0, f"{row['env']}: {row['tasks']} tasks (< {bar}) and no reason in its manifest"
