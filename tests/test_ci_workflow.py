"""The hosted runners' workflow (.github/workflows/ci.yml) cannot run here: it is at least valid
YAML that says what docs/testing.md says it does, Windows, macOS and Ubuntu on the oldest and newest
Python the project allows, the Windows lane's selection of tests, and the wheel gate once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip(
    "yaml",
    reason="PyYAML (a test extra) is missing: the Windows lane has only pytest and the game's",
)

ROOT = Path(__file__).resolve().parent.parent
SELECTION = 'python -m pytest -m "not window and not netns and not slow"'


def _workflow() -> dict[Any, Any]:
    text = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    loaded = yaml.safe_load(text)
    assert isinstance(loaded, dict)
    return loaded


def _runs(job: dict[str, Any]) -> list[str]:
    return [step["run"].strip() for step in job["steps"] if "run" in step]


def test_the_workflow_runs_the_lane_selection_on_windows_macos_and_ubuntu() -> None:
    workflow = _workflow()
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert {"push", "pull_request"} <= set(triggers)
    tests = workflow["jobs"]["tests"]
    matrix = tests["strategy"]["matrix"]
    assert set(matrix["os"]) == {"ubuntu-latest", "windows-latest", "macos-latest"}
    assert matrix["python"] == ["3.10", "3.13"]  # strings: a bare 3.10 is the number 3.1
    assert tests["runs-on"] == "${{ matrix.os }}"
    assert _runs(tests) == ['python -m pip install -e ".[test]"', SELECTION]


def test_the_workflow_runs_the_wheel_gate_once() -> None:
    jobs = _workflow()["jobs"]
    gates = [name for name, job in jobs.items() if any("wheel_gate.py" in r for r in _runs(job))]
    assert gates == ["wheel-gate"]
    assert "strategy" not in jobs["wheel-gate"]
