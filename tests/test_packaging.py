"""The wheel ships every package of the game (pyproject.toml finds them by name: net and ui are
generic top-level names) and the window's font, and nothing of the tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The files of the wheel built from this tree, as pip builds it for a player."""
    tmp_path = tmp_path_factory.mktemp("wheel")
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
    return set(zipfile.ZipFile(wheel).namelist())


def test_every_package_of_the_game_is_in_the_wheel(wheel_names: set[str]) -> None:
    """A folder of the game that the wheel left out is an ImportError on a player's laptop."""
    packages = sorted(
        init.relative_to(ROOT).as_posix()
        for top in ("nerts_lan", "net", "ui")
        for init in (ROOT / top).rglob("__init__.py")
    )
    assert len(packages) > 15
    missing = [package for package in packages if package not in wheel_names]
    assert not missing, f"packages missing from the wheel: {missing}"
    assert not [name for name in wheel_names if name.startswith(("tests/", "scripts/"))]


def test_the_wheel_carries_the_windows_font_and_its_licence(wheel_names: set[str]) -> None:
    """Windows and macOS have no DejaVu Sans: without the font in the wheel, the card suits
    vanish from every message there."""
    for shipped in ("NertsSans.ttf", "NertsSans-Bold.ttf", "LICENSE-DejaVu.txt"):
        assert f"ui/kit/fonts/{shipped}" in wheel_names, f"{shipped} is not in the wheel"
