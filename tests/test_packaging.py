"""The wheel ships every package of the game: pyproject.toml lists them by hand (net and ui are
generic top-level names), so a new package must be added there, or the installed game lacks it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_of_the_game_is_in_the_wheel() -> None:
    setuptools = (
        (ROOT / "pyproject.toml").read_text(encoding="utf-8").split("[tool.setuptools]", 1)[1]
    )
    line = re.search(r"^packages = \[(.*)\]$", setuptools, re.M)
    assert line, "pyproject.toml lists no packages under [tool.setuptools]"
    listed = set(re.findall(r'"([^"]+)"', line.group(1)))
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("nerts_lan", "net", "ui")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found == listed, f"missing from pyproject.toml: {sorted(found - listed)}"


def test_the_wheel_carries_the_windows_font_and_its_licence(tmp_path: Path) -> None:
    """Windows and macOS have no DejaVu Sans: without the font in the wheel, the card suits
    vanish from every message there."""
    pytest.importorskip("pip", reason="no pip to build a wheel with (the Windows lane's Python)")
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for top in ("nerts_lan", "net", "ui"):
        # shutil.copy, not copytree's copy2: Python 3.13's copy2 calls Windows' CopyFile2,
        # which Wine 8 lacks (the lane's worker died on it).
        skip = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / top, source / top, ignore=skip, copy_function=shutil.copy)
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
    built = subprocess.run(
        [*pip_wheel, "--wheel-dir", str(tmp_path / "dist"), str(source)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("nerts_lan-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for shipped in ("NertsSans.ttf", "NertsSans-Bold.ttf", "LICENSE-DejaVu.txt"):
        assert f"ui/fonts/{shipped}" in names, f"{shipped} is not in {wheel.name}"
