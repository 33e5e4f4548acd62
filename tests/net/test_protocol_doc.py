"""docs/protocol.md specifies the core part by part: each private part of the core names the
section that describes it, and that section exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARTS = ["log", "guard", "liveness", "membership", "agreement", "grounds", "viewchange"]
PARTS += ["slotvote", "transfer", "joining", "timers", "recovery"]


@pytest.mark.parametrize("module", PARTS)
def test_each_part_points_at_its_section_of_the_protocol(module: str) -> None:
    source = (ROOT / "net" / "_order" / f"{module}.py").read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(source)) or ""
    named = re.search(r'"([^"]+)"\s+in\s+docs/protocol\.md', docstring.replace("\n", " "))
    assert named, f"net/_order/{module}.py does not name its section of docs/protocol.md"
    headings = re.findall(
        r"^#+ (.+)$", (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8"), re.M
    )
    assert any(h.startswith(named.group(1)) for h in headings), (named.group(1), headings)
