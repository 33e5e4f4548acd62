"""The scenario runner: golden scenarios, and malformed input that exits 2 with one clear line."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.cli.main import main

SCENARIOS = Path(__file__).parent / "scenarios"
GOLDEN = sorted(p for p in SCENARIOS.glob("*.json") if not p.name.endswith(".expected.json"))


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_scenarios_give_their_expected_results(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scenario", str(path)]) == 0
    result = json.loads(capsys.readouterr().out)
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text(encoding="utf-8"))
    assert result == expected


def test_the_scenario_command_reads_standard_input_in_a_fresh_process() -> None:
    text = (SCENARIOS / "rules_example.json").read_text(encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "nerts_lan", "scenario", "-"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    expected = json.loads((SCENARIOS / "rules_example.expected.json").read_text(encoding="utf-8"))
    assert json.loads(done.stdout) == expected


def test_a_malformed_scenario_in_a_fresh_process_exits_2_with_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nerts_lan", "scenario", "-"],
        input="{nope",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "not valid JSON" in done.stderr


def _base() -> dict[str, Any]:
    return json.loads((SCENARIOS / "rules_example.json").read_text(encoding="utf-8"))


def _with(change: Any) -> str:
    data = _base()
    change(data)
    return json.dumps(data)


def _set(path: str, value: Any) -> Any:
    """A change that sets a dotted path (numbers index lists) in the scenario."""

    def change(data: Any) -> None:
        *parents, last = path.split(".")
        node = data
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        if value is _DELETE:
            del node[int(last) if last.isdigit() else last]
        else:
            node[int(last) if last.isdigit() else last] = copy.deepcopy(value)

    return change


_DELETE = object()

MALFORMED = [
    ("not json", "{", "not valid JSON"),
    ("not an object", "[1, 2]", "a scenario must be a JSON object"),
    ("NaN", '{"teams": NaN}', "NaN is not a number"),
    ("missing teams", _with(_set("teams", _DELETE)), "missing the field 'teams'"),
    ("missing actions", _with(_set("actions", _DELETE)), "missing the field 'actions'"),
    ("teams not a list", _with(_set("teams", {})), "teams must be a list"),
    ("no teams", _with(_set("teams", [])), "1 to 8 teams"),
    ("bad card", _with(_set("teams.0.nerts.0", "1C")), "bad card name '1C'"),
    ("lower-case card", _with(_set("teams.0.stock.0", "2c")), "bad card name '2c'"),
    ("card not a string", _with(_set("teams.0.stock.0", 7)), "must be a card name"),
    ("card twice", _with(_set("teams.0.stock.0", "AS")), "AS is twice in the same deck"),
    (
        "card twice via a foundation",
        _with(_set("foundations", [{"cards": ["AS"], "owners": ["red"]}])),
        "AS is twice in the same deck",
    ),
    (
        "player twice",
        _with(_set("teams.0.players", ["ann", "ann"])),
        "player name 'ann' is used twice",
    ),
    ("unknown player", _with(_set("actions.0.by", "zed")), "unknown player 'zed'"),
    ("unknown action", _with(_set("actions.0.do", "jump")), "unknown action 'jump'"),
    ("do not a string", _with(_set("actions.0.do", 3)), "'do' must be a string"),
    ("by missing", _with(_set("actions.0.by", _DELETE)), "'by' must be a string"),
    ("card missing in a play", _with(_set("actions.0.card", _DELETE)), "'card' must be a string"),
    ("unknown option", _with(_set("options.speed", 2)), "unknown option 'speed'"),
    ("bad flip", _with(_set("options.flip", 2)), "option 'flip' must be 1 or 3"),
    ("flip as bool", _with(_set("options.flip", True)), "option 'flip' must be a whole number"),
    ("flip as float", _with(_set("options.flip", 3.0)), "option 'flip' must be a whole number"),
    ("kings as int", _with(_set("options.kings", 1)), "option 'kings' must be true or false"),
    ("work out of range", _with(_set("options.work", 7)), "option 'work' must be from 3 to 6"),
    (
        "work count differs",
        _with(_set("options.work", 5)),
        "has 4 piles but the 'work' option is 5",
    ),
    ("bad pile name", _with(_set("actions.0.from", "stock")), "bad pile name 'stock'"),
    ("pile w0", _with(_set("actions.0.to", "w0")), "bad pile name 'w0'"),
    (
        "illegal work run",
        _with(_set("teams.0.work.1", ["KH", "QH"])),
        "is not a legal run: QH on KH",
    ),
    (
        "illegal foundation",
        _with(_set("foundations", [{"cards": ["2H"], "owners": ["red"]}])),
        "must start with an ace",
    ),
    (
        "foundation gap",
        _with(_set("foundations", [{"cards": ["AH", "3H"], "owners": ["red", "red"]}])),
        "not a legal run: 3H on AH",
    ),
    (
        "owners length",
        _with(_set("foundations", [{"cards": ["AH", "2H"], "owners": ["red"]}])),
        "has 2 cards but 1 owners",
    ),
    (
        "unknown owner",
        _with(_set("foundations", [{"cards": ["AH"], "owners": ["green"]}])),
        "unknown team 'green'",
    ),
    ("seed with piles", _with(_set("seed", "x")), "gives 'nerts' together with 'seed'"),
    (
        "seed not text",
        json.dumps({"seed": 5, "teams": [{"name": "a", "players": ["b"]}], "actions": []}),
        "'seed' must be a string",
    ),
    ("stuck not bool", _with(_set("teams.0.stuck", "yes")), "stuck must be true or false"),
    ("empty name", _with(_set("teams.0.name", "")), "must be 1 to 64 characters"),
    ("nested too deep", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
]


@pytest.mark.parametrize(
    "text, message", [(t, m) for _, t, m in MALFORMED], ids=[name for name, _, _ in MALFORMED]
)
def test_malformed_scenarios_exit_2_naming_the_problem(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(text, encoding="utf-8")
    assert main(["scenario", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("nerts-lan scenario: error: ")
    assert message in lines[0]


def test_a_missing_file_or_binary_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scenario", str(tmp_path / "absent.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    assert main(["scenario", str(binary)]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err


def test_unknown_extra_fields_are_ignored(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = _base()
    data["comment"] = "from a bug report"
    data["teams"][0]["colour"] = "red"
    data["actions"][0]["note"] = "first"
    path = tmp_path / "extra.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["scenario", str(path)]) == 0
    expected = json.loads((SCENARIOS / "rules_example.expected.json").read_text(encoding="utf-8"))
    assert json.loads(capsys.readouterr().out) == expected


def test_rejected_is_not_malformed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = _base()
    data["actions"] = [
        {"by": "ann", "do": "play", "card": "9H", "from": "w3", "to": "w5"},
        {"by": "ann", "do": "play", "card": "9H", "from": "w3", "to": "f3"},
        {"by": "ann", "do": "play", "card": "9H", "from": "w3", "to": "waste"},
        {"by": "ann", "do": "play", "card": "KH", "from": "w3", "to": "w4"},
    ]
    path = tmp_path / "rejected.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["scenario", str(path)]) == 0
    reasons = [r["reason"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert reasons == [
        "there is no pile w5",
        "there is no pile f3",
        "nothing can be played onto the waste",
        "KH is not in w3",
    ]
