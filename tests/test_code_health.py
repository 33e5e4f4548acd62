"""The codebase's own promises: imports point one way, and ruff and mypy are clean."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_NOT_INSTALLED = "{} is not installed here (the Windows lane has none: the Linux suite runs it)"
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
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
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


@pytest.mark.skipif(shutil.which("ruff") is None, reason=_NOT_INSTALLED.format("ruff"))
def test_ruff_is_clean() -> None:
    done = subprocess.run(
        ["ruff", "check", "."], cwd=ROOT, capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.skipif(shutil.which("mypy") is None, reason=_NOT_INSTALLED.format("mypy"))
def test_mypy_is_clean() -> None:
    done = subprocess.run(
        ["mypy"], cwd=ROOT, capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:]


# Where each call that opens a text file takes its mode and its encoding positionally.
_TEXT_CALLS = {
    # name: (index of the mode argument or None, index of the encoding argument)
    "read_text": (None, 0),
    "write_text": (None, 1),
    "fdopen": (1, 3),
}
_OPEN_POSITIONS = {"builtin": (1, 3), "method": (0, 2)}


def _opens_text_without_encoding(call: ast.Call) -> bool:
    """Whether ``call`` opens, reads or writes a file in text mode and leaves the encoding to the
    locale (cp1252 on most Windows laptops): ``open(p)``, ``p.open("a")``, ``p.read_text()``."""
    func = call.func
    if isinstance(func, ast.Name) and func.id == "open":
        mode_at, encoding_at = _OPEN_POSITIONS["builtin"]
    elif isinstance(func, ast.Attribute) and func.attr == "open":
        if isinstance(func.value, ast.Name) and func.value.id in ("os", "webbrowser"):
            return False  # os.open gives a descriptor; webbrowser.open a page
        io_open = isinstance(func.value, ast.Name) and func.value.id == "io"
        mode_at, encoding_at = _OPEN_POSITIONS["builtin" if io_open else "method"]
    elif isinstance(func, ast.Attribute) and func.attr in _TEXT_CALLS:
        mode_at, encoding_at = _TEXT_CALLS[func.attr]
    else:
        return False
    keywords = {k.arg: k.value for k in call.keywords}
    if "encoding" in keywords or len(call.args) > encoding_at:
        return False
    mode = keywords.get("mode")
    if mode is None and mode_at is not None and len(call.args) > mode_at:
        mode = call.args[mode_at]
    binary = isinstance(mode, ast.Constant) and isinstance(mode.value, str) and "b" in mode.value
    return not binary


def test_every_text_file_is_opened_with_an_encoding() -> None:
    """Windows reads and writes text in the locale's code page unless told otherwise: a log,
    a setting or a source file with "♥" or "→" in it breaks there. Every text-mode open names
    its encoding."""
    found = []
    for folder in ("nerts_lan", "net", "ui", "tests", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            found += [
                f"{path.relative_to(ROOT).as_posix()}:{node.lineno}: {ast.unparse(node)[:80]}"
                for node in ast.walk(tree)
                if isinstance(node, ast.Call) and _opens_text_without_encoding(node)
            ]
    assert not found, "text opened without encoding=:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("call", "flagged"),
    [
        ("open(path)", True),
        ("open(path, 'a', buffering=1)", True),
        ("open(path, 'rb')", False),
        ("open(path, mode='wb')", False),
        ("open(path, 'w', encoding='utf-8')", False),
        ("path.open('a')", True),
        ("path.open()", True),
        ("path.open('r+b')", False),
        ("path.read_text()", True),
        ("path.read_text(errors='replace')", True),
        ("path.read_text('utf-8')", False),
        ("path.write_text(text)", True),
        ("path.write_text(text, 'utf-8')", False),
        ("os.fdopen(fd, 'w')", True),
        ("os.fdopen(fd, 'wb')", False),
        ("os.open(path, os.O_RDONLY)", False),
    ],
)
def test_the_encoding_check_tells_text_from_binary(call: str, flagged: bool) -> None:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    assert _opens_text_without_encoding(node) is flagged
