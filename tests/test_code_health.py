"""The codebase's own promises: ruff and mypy are clean, and every text file names its encoding.
(The import rules are the folder rules, in tests/test_folder_rules.py.)"""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_NOT_INSTALLED = "{} is not installed here (the Windows lane has none: the Linux suite runs it)"


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
        if isinstance(func.value, ast.Name) and func.value.id in ("os", "webbrowser", "wave"):
            return False  # os.open gives a descriptor; webbrowser.open a page; wave is binary
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
        ("wave.open(buffer, 'wb')", False),
    ],
)
def test_the_encoding_check_tells_text_from_binary(call: str, flagged: bool) -> None:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    assert _opens_text_without_encoding(node) is flagged
