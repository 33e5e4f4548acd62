"""The codebase's own promises: imports point one way, and ruff and mypy are clean."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE_MODULES = [
    "cards",
    "actions",
    "codec",
    "deal",
    "engine",
    "piles",
    "scenario",
    "scoring",
    "state",
]


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add("." if node.level else (node.module or "").split(".")[0])
    return names


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_the_engine_imports_only_the_standard_library(module: str) -> None:
    imported = _imports(ROOT / "nerts_lan" / f"{module}.py") - {".", "__future__"}
    outside = {name for name in imported if name not in sys.stdlib_module_names}
    assert not outside, f"nerts_lan/{module}.py imports {sorted(outside)}"


def test_net_knows_nothing_of_nerts() -> None:
    for path in sorted((ROOT / "net").rglob("*.py")):
        imported = _imports(path)
        assert "nerts_lan" not in imported and "ui" not in imported, path


def test_ui_reaches_the_network_only_through_nerts_lan() -> None:
    """The window draws and sends intents: sockets, mDNS and the ordering core stay behind
    ``nerts_lan`` (every import counts, those inside functions too)."""
    modules = sorted((ROOT / "ui").rglob("*.py"))
    assert modules
    for path in modules:
        reached = _imports(path) & {"net", "zeroconf", "socket"}
        assert not reached, f"{path.relative_to(ROOT)} imports {sorted(reached)}"


def test_the_engine_sees_no_network_and_no_window() -> None:
    for path in sorted((ROOT / "nerts_lan").glob("*.py")):
        if path.stem in ("cli", "bench", "__main__"):
            continue  # the composition root wires the packages together
        imported = _imports(path)
        assert "ui" not in imported and "pyglet" not in imported, path


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_ruff_is_clean() -> None:
    done = subprocess.run(
        ["ruff", "check", "."], cwd=ROOT, capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.skipif(shutil.which("mypy") is None, reason="mypy is not installed")
def test_mypy_is_clean() -> None:
    done = subprocess.run(
        ["mypy"], cwd=ROOT, capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:]
