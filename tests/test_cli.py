"""The ``nerts-lan`` command line, run for real (``python -m nerts_lan``): every usage error of
every subcommand exits 2 with one line that names it, and the headless commands never load the
window (no ``ui``, no pyglet)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nerts_lan.cli.parser import build_parser
from nerts_lan.cli.rules import options_from_args
from nerts_lan.rules.state import Options

ROOT = Path(__file__).resolve().parent.parent
HEADLESS = ["--headless", "--interface", "127.0.0.1"]


def _nerts_lan(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NERTS_LAN_CONFIG_DIR": str(tmp_path / "config"),
        "NERTS_LAN_DATA": str(tmp_path / "data"),
    }
    return subprocess.run(
        [sys.executable, "-m", "nerts_lan", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # nerts-lan (the window)
        (["--width", "0"], "nerts-lan: error: --width must be from 320 to 16384 pixels"),
        (["--height", "tall"], "nerts-lan: error: argument --height: invalid int value"),
        (["--colour"], "nerts-lan: error: unrecognized arguments: --colour"),
        (["dance"], "nerts-lan: error: argument {practice,"),
        # practice
        (["practice", "--opponents", "9"], "nerts-lan practice: error: opponents must be from 0"),
        (["practice", "--level", "expert"], "nerts-lan practice: error: argument --level: invalid"),
        (["practice", "--flip", "2"], "nerts-lan practice: error: option 'flip' must be 1 or 3"),
        (["practice", "--work", "9"], "nerts-lan practice: error: option 'work' must be from 3"),
        (["practice", "--height", "99999"], "nerts-lan practice: error: --height must be from"),
        # scenario
        (["scenario"], "nerts-lan scenario: error: the following arguments are required: file"),
        (["scenario", "/no/such/scenario.json"], "nerts-lan scenario: error: cannot read /no/"),
        # bench
        (["bench", "--only"], "nerts-lan bench: error: argument --only: expected one argument"),
        (["bench", "--slow"], "nerts-lan bench: error: unrecognized arguments: --slow"),
        (["bench", "--only", "nope"], "nerts-lan bench: error: unknown group 'nope' (choose"),
        # host
        (["host"], "nerts-lan host: error: host needs --headless here: the window hosts tables"),
        (["host", *HEADLESS, "--bot-delay", "500"], "host: error: --bot-delay must be from 0"),
        (["host", *HEADLESS, "--players", "99"], "host: error: --players must be from 1 to 16"),
        (["host", *HEADLESS, "--team", "9"], "host: error: --team must be from 1 to 8"),
        (["host", *HEADLESS, "--rounds", "0"], "host: error: --rounds must be at least 1"),
        (["host", *HEADLESS, "--code", " - "], "host: error: --code must not be empty"),
        (["host", *HEADLESS, "--name", "x" * 40], "host: error: --name must be 1 to 32"),
        (["host", *HEADLESS, "--flip", "2"], "host: error: option 'flip' must be 1 or 3"),
        (["host", *HEADLESS, "--teams", "9"], "host: error: a table has 1 to 8 teams"),
        (["host", *HEADLESS, "--table", "t" * 41], "host: error: a table name must be 1 to 40"),
        (["host", *HEADLESS, "--bot", "expert"], "host: error: argument --bot: invalid choice"),
        (["host", *HEADLESS, "--lost-seat", "x"], "host: error: argument --lost-seat: invalid"),
        # join
        (["join"], "nerts-lan join: error: join needs --headless here: the window joins tables"),
        (["join", *HEADLESS, "--wait", "0"], "join: error: --wait must be from 0 to 60 seconds"),
        (["join", *HEADLESS, "--team", "0"], "join: error: --team must be from 1 to 8"),
        (["join", *HEADLESS, "--timeout", "soon"], "join: error: argument --timeout: invalid"),
        (["join", *HEADLESS, "--address", "10.0.0.9:0"], "join: error: --address: the port"),
        (["join", *HEADLESS, "--address", "ta ble"], "join: error: --address: 'ta ble' is not"),
        (["join", *HEADLESS, "--address", "[::1]:7777"], "join: error: --address: '[::1]:7777'"),
        # replay
        (["replay"], "nerts-lan replay: error: the following arguments are required: file"),
        (["replay", "/no/such/log"], "nerts-lan replay: error: cannot read /no/such/log"),
        (["replay", "--headless", "/no/such/log"], "nerts-lan replay: error: cannot read /no/"),
        (["replay", "{empty}"], "replay: error: {empty} is not a nerts-lan match log"),
        (["replay", "{empty}", "--width", "9"], "nerts-lan replay: error: --width must be from"),
        # tables
        (["tables", "--wait", "0"], "nerts-lan tables: error: --wait must be from 0 to 60"),
        (["tables", "--wait", "x"], "nerts-lan tables: error: argument --wait: invalid float"),
        # sim
        (["sim", "--teams", "9"], "nerts-lan sim: error: --teams must be from 1 to 8"),
        (["sim", "--flip", "2"], "nerts-lan sim: error: option 'flip' must be 1 or 3"),
        (["sim", "--rounds", "2", "--matches", "2"], "sim: error: argument --matches: not allowed"),
    ],
)
def test_every_usage_error_exits_2_with_one_line_naming_it(
    args: list[str], message: str, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    args = [arg.replace("{empty}", str(empty)) for arg in args]
    done = _nerts_lan(*args, tmp_path=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.endswith("\n"), done.stderr
    assert done.stderr.startswith("nerts-lan")
    assert message.replace("{empty}", str(empty)) in done.stderr


_LOADED = """
import runpy, sys
sys.argv = ["nerts-lan", *sys.argv[1:]]
try:
    runpy.run_module("nerts_lan", run_name="__main__")
except SystemExit as exit_:
    status = exit_.code
loaded = sorted({m.split(".")[0] for m in sys.modules} & {"ui", "pyglet"})
print("status", status, "loaded", *loaded)
"""


def _loaded_by(*args: str, tmp_path: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NERTS_LAN_DATA": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    return done.stdout.splitlines()[-1]


def test_sim_loads_no_window(tmp_path: Path) -> None:
    assert _loaded_by("sim", "--rounds", "1", "--levels", "instant", tmp_path=tmp_path) == (
        "status 0 loaded"
    )


def test_a_headless_usage_error_loads_no_window(tmp_path: Path) -> None:
    assert _loaded_by("host", *HEADLESS, "--team", "9", tmp_path=tmp_path) == "status 2 loaded"


@pytest.mark.realnet
def test_headless_host_and_tables_load_no_window(tmp_path: Path) -> None:
    """Each runs for real on 127.0.0.1: the host until its timeout (no one joins), then a list."""
    host = _loaded_by("host", *HEADLESS, "--players", "2", "--timeout", "0.5", tmp_path=tmp_path)
    assert host == "status 1 loaded"  # timed out: the status of an error it cannot play on from
    tables = _loaded_by("tables", "--interface", "127.0.0.1", "--wait", "0.2", tmp_path=tmp_path)
    assert tables == "status 0 loaded"


@pytest.mark.parametrize("command", ["practice", "host", "sim"])
def test_the_rule_options_are_the_same_for_every_table_command(command: str) -> None:
    """One definition: the same flags, the defaults given (a saved choice) for those left out."""
    parser = build_parser()
    left_out = parser.parse_args([command])
    assert options_from_args(left_out) == Options()
    assert options_from_args(left_out, Options(flip=1, work=5)) == Options(flip=1, work=5)
    rules = ["--flip", "1", "--caller-bonus", "5", "--target", "50", "--kings", "--pile", "10"]
    given = parser.parse_args([command, *rules, "--work", "6"])
    chosen = Options(flip=1, caller_bonus=5, target=50, kings=True, pile=10, work=6)
    assert options_from_args(given, Options(flip=3, work=5)) == chosen


_WINDOW_COMMANDS = {"run_window", "run_practice", "run_replay", "_window_config"}
_WITHOUT_PYGLET = {"run_sounds"}
"""Commands that use a part of ``ui`` made of the standard library alone (the sound bank): a
test below checks that they load no pyglet."""


def test_the_command_line_loads_the_window_only_in_the_window_commands() -> None:
    """Building the parser and the headless commands never import ``ui``: only the functions
    that open the window do (and type hints, which never run)."""
    for path in sorted((ROOT / "nerts_lan" / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for function, node in _imports_with_their_function(tree):
            modules = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            if any(module.split(".")[0] in ("ui", "pyglet") for module in modules):
                allowed = _WINDOW_COMMANDS | _WITHOUT_PYGLET | {"TYPE_CHECKING"}
                assert function in allowed, (path.name, function)


def test_the_sounds_command_loads_no_window() -> None:
    code = (
        "import sys; from nerts_lan.cli.main import main; status = main(['sounds', '--json']); "
        "print('pyglet' in sys.modules, status, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8", cwd=ROOT
    )
    assert done.stderr.strip().splitlines()[-1] == "False 0"


def _imports_with_their_function(tree: ast.Module) -> list[tuple[str, ast.Import | ast.ImportFrom]]:
    found: list[tuple[str, ast.Import | ast.ImportFrom]] = []
    for top in tree.body:
        if isinstance(top, ast.FunctionDef):
            scope = top.name
        elif isinstance(top, ast.If) and ast.unparse(top.test) == "TYPE_CHECKING":
            scope = "TYPE_CHECKING"
        else:
            scope = "<module>"
        for node in ast.walk(top):
            if isinstance(node, ast.Import) or (
                isinstance(node, ast.ImportFrom) and not node.level
            ):
                found.append((scope, node))
    return found
