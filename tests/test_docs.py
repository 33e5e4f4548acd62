"""The documents a clone carries are whole and true: docs/rules.md has every section the engine and
the scenario contract rest on, its example is the golden scenario and what the engine answers, no
file points outside the repository for the rules, every path the README and docs/ name exists,
and the README is a front page that still holds the test command .ci/run reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nerts_lan.rules.scenario import parse_scenario_text, run_scenario

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "docs" / "rules.md"
SCENARIOS = ROOT / "tests" / "scenarios"

# The sections tests/test_rules.py tests rule by rule, and those the scenario contract needs.
RULE_SECTIONS = [
    "Tables, teams, decks",
    "The deal",
    "Foundations (shared)",
    "What can move where (one team's own cards)",
    "Stock and waste",
    "Everyone plays at once: races",
    "Stuck",
    "Ending a round",
]
CONTRACT_SECTIONS = [
    "Scenario files: the engine's plain contract",
    "Cards and piles",
    "An example",
    "The result",
    "Malformed vs rejected",
    "The seeded deal",
]
# Where the files of the tree live, and what may name a path in the documents.
TOP = ("nerts_lan/", "net/", "ui/", "tests/", "scripts/", "docs/", ".ci/", ".github/")
SEARCHED = ("nerts_lan", "net", "ui", "tests", "scripts", "docs", ".ci", ".github")
SEARCHED_FILES = ("README.md", "pyproject.toml")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".json", ".txt", ".cfg", ".ini", ""}
# The one thing CI takes from beside the clone: the Windows lane's Wine and Python installer.
OUTSIDE_ALLOWED = "shared/windows/setup.sh"


@pytest.mark.parametrize("section", RULE_SECTIONS + CONTRACT_SECTIONS)
def test_the_rules_have_every_section_the_engine_rests_on(section: str) -> None:
    assert section in _headings(RULES), f"docs/rules.md has no section {section!r}"


def test_the_rules_example_is_the_golden_scenario_and_what_the_engine_answers() -> None:
    text = RULES.read_text(encoding="utf-8")
    example, result = (json.loads(block) for block in _json_blocks(text)[:2])
    golden = (SCENARIOS / "rules_example.json").read_text(encoding="utf-8")
    expected = json.loads((SCENARIOS / "rules_example.expected.json").read_text(encoding="utf-8"))
    assert example == json.loads(golden)
    assert result == expected
    assert run_scenario(parse_scenario_text(json.dumps(example))) == result


def test_the_rules_name_every_default_the_engine_has() -> None:
    """The options' defaults of ``nerts_lan.rules.state.Options`` are the ones the page states."""
    text = " ".join(RULES.read_text(encoding="utf-8").split())
    for stated in (
        "`pile` is the nerts pile's size (default 13)",
        "`work` is the number of work piles (default 4, from 3 to 6)",
        "Option `kings` (default off)",
        "Option `caller_bonus` (default 0; 10 is common)",
        "option `target`, default 100",
        "A **flip** turns 3 cards (option `flip`: 3 or 1)",
    ):
        assert stated in text, stated


def test_no_file_points_outside_the_repository_for_the_rules() -> None:
    outside = re.compile(r"RULES\.md|\.\./shared|\$shared|shared/")
    found = []
    for path in _tree_files():
        if path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if outside.search(line) and not (
                OUTSIDE_ALLOWED in line or "NERTS_SHARED" in line or "shared/ beside" in line
            ):
                found.append(f"{path.relative_to(ROOT).as_posix()}:{number}: {line.strip()}")
    assert not found, "points outside the repository (the rules are docs/rules.md):\n" + "\n".join(
        found
    )


@pytest.mark.parametrize(
    "document",
    ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))],
)
def test_every_path_a_document_names_exists(document: str) -> None:
    path = ROOT / document
    text = path.read_text(encoding="utf-8")
    named = {
        token.split()[0].rstrip(".,:;")
        for token in re.findall(r"`([^`\n]+)`", text)
        if token.startswith(TOP)
    }
    linked = {
        (path.parent / target.split("#")[0]).resolve().relative_to(ROOT).as_posix()
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
        if "://" not in target
    }
    missing = sorted(name for name in named | linked if not (ROOT / name).exists())
    assert not missing, f"{document} names paths that do not exist: {missing}"


def test_the_readme_is_a_front_page_with_the_test_command_ci_runs() -> None:
    """``.ci/run`` runs the first fenced block after the marker: one command that installs the
    test extra and runs pytest, as a player's clone would."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 170, "the README is a front page: the rest goes in docs/"
    after = text.split("<!-- test-command -->", 1)[1]
    fenced = re.match(r"\s*```sh\n(.*?)\n```", after, re.S)
    assert fenced, "no fenced command right after <!-- test-command -->"
    command = fenced.group(1).strip()
    assert "\n" not in command
    assert command.endswith("pip install -e '.[test]' && python -m pytest"), command
    for section in ("Install and play", "Commands", "Where a change goes"):
        assert f"## {section}" in text


# --- helpers -------------------------------------------------------------------------------------


def _headings(path: Path) -> list[str]:
    return re.findall(r"^#+ (.+?)\s*$", path.read_text(encoding="utf-8"), re.M)


def _json_blocks(text: str) -> list[str]:
    return re.findall(r"^```json\n(.*?)^```", text, re.M | re.S)


def _tree_files() -> list[Path]:
    files = [ROOT / name for name in SEARCHED_FILES]
    for folder in SEARCHED:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts:
                files.append(path)
    return [path for path in files if path.exists()]
