"""The wheel ships every package of the game: pyproject.toml lists them by hand (net and ui are
generic top-level names), so a new package must be added there, or the installed game lacks it."""

from __future__ import annotations

import re
from pathlib import Path

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
