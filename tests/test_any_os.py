"""The paths a player reaches without a window run where POSIX-only modules and calls are absent
(as on Windows): a fresh interpreter with ``fcntl``, ``resource``, ``termios``, ``pwd``... made
unimportable and the POSIX-only parts of ``os`` and ``signal`` removed imports every module of
``nerts_lan`` and ``net`` (and the window's settings), then plays: the simulator, a practice round
against bots, two laptops' match on the simulated network (the same table peer the laptops run),
a log replayed with the coach, the stats, a scenario and the data folders.

What this cannot check here (the real Windows/macOS asyncio loops, mDNS beside the OS's own
responder, the window on other GL drivers) is listed in docs/portability.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_history import write_log

ROOT = Path(__file__).resolve().parent.parent

BLOCKED_MODULES = ("fcntl", "resource", "termios", "tty", "pty", "pwd", "grp", "syslog", "crypt")
POSIX_ONLY = {
    "os": (
        "fork", "forkpty", "getuid", "geteuid", "getgid", "getegid", "setsid", "getpgid",
        "killpg", "uname", "sync", "fchown", "chown", "lchown", "getloadavg", "sched_setaffinity",
        "nice", "wait3", "wait4", "WNOHANG", "O_NOFOLLOW", "mkfifo", "getpwuid",
    ),
    "signal": (
        "SIGKILL", "SIGSTOP", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGALRM", "SIGPIPE",
        "SIGQUIT", "SIGCONT", "SIGTSTP", "alarm", "pause", "setitimer", "getitimer",
        "siginterrupt", "pthread_kill", "pthread_sigmask", "sigwait",
    ),
}  # fmt: skip

PRELUDE = f"""
import importlib, importlib.abc, os, signal, sys
# The standard library's own platform layers load first, as they would on any OS: only our code
# must do without what follows.
import asyncio, subprocess, selectors, socket, sqlite3, tempfile, logging, json, shutil
import msgpack, platformdirs, tqdm, zeroconf, ifaddr, spake2

class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED_MODULES!r}:
            raise ImportError(f"{{name}} is not available on this OS")
        return None

sys.meta_path.insert(0, Blocked())
for name in {BLOCKED_MODULES!r}:
    sys.modules.pop(name, None)
for module, names in {POSIX_ONLY!r}.items():
    for attribute in names:
        if hasattr(sys.modules[module], attribute):
            delattr(sys.modules[module], attribute)
"""

SCRIPT = """
import json, pkgutil, sys
from pathlib import Path

import pytest
import nerts_lan, net
for package in (nerts_lan, net):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not module.name.endswith(".__main__"):  # that one runs the command line
            importlib.import_module(module.name)
import ui.config
from nerts_lan.bots.bot import Bot
from nerts_lan.cli.main import main
from nerts_lan.rules.state import Options
from nerts_lan.practice import PracticeConfig, PracticeSession
from nerts_lan.table.replica import RoundEnded
from nerts_lan.lab.simgame import play_game

log, scenario = sys.argv[1], sys.argv[2]
assert main(["sim", "--rounds", "2", "--levels", "instant", "--progress", "--json"]) == 0
assert main(["replay", log, "--headless", "--coach"]) == 0
assert main(["stats", "--json"]) == 0
assert main(["scenario", scenario]) == 0

practice = PracticeSession(PracticeConfig(opponents=1, level="hard", seed="any-os"))
me, now, ended = Bot("You", "hard", "any-os"), 0.0, []
while not ended and now < 3600:
    now += 0.25
    ended = [e for e in practice.poll(now) if isinstance(e, RoundEnded)]
    action = None if ended else me.decide(practice.view, now)
    if action is not None:
        practice.submit(action)
assert ended, "the practice round never ended"
assert practice.logged_round() is not None

game = play_game(3, 2, rounds=1, options=Options(pile=5, target=10), until=60.0)
assert all(app.round_digests for app in game.apps.values())
print(json.dumps({"practice": ended[0].outcome.ending, "ui": ui.config.config_dir().name}))
"""


def test_the_headless_paths_run_without_posix_only_modules(tmp_path: Path) -> None:
    log = write_log(tmp_path / "data" / "logs")
    scenario = ROOT / "tests" / "scenarios" / "race_two_teams.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NERTS_LAN_DATA": str(tmp_path / "data"),
        "NERTS_LAN_CONFIG_DIR": str(tmp_path / "config"),
    }
    code = PRELUDE + "\nimport importlib\n" + SCRIPT
    done = subprocess.run(
        [sys.executable, "-c", code, str(log), str(scenario)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert json.loads(lines[-1])["ui"] == "config"
    assert any('"event": "coach"' in line for line in lines)
    assert any(line.startswith('{"name": "p01"') for line in lines)  # the stats, from the log
    assert "2/2" in done.stderr  # tqdm's bar


def test_a_headless_peer_is_named_after_the_login_on_every_os(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nerts_lan.cli.commands import _peer_config
    from nerts_lan.cli.parser import build_parser

    args = build_parser().parse_args(["join", "--headless"])
    monkeypatch.delenv("USER", raising=False)
    monkeypatch.delenv("LOGNAME", raising=False)
    monkeypatch.setenv("USERNAME", "Ann")  # what Windows sets
    assert _peer_config(args, "join").name == "Ann"
    monkeypatch.delenv("USERNAME")
    assert _peer_config(args, "join").name == "player"


def test_the_namespace_tests_say_windows_has_no_namespaces(monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.geteuid`` is POSIX only: on Windows the namespace tests (and the bench's) are skipped
    with a reason naming Windows, not failed with an AttributeError."""
    from nerts_lan.lab import netlab

    monkeypatch.delattr(os, "geteuid", raising=False)
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(netlab.NetLabUnavailable, match="Windows: network namespaces are Linux"):
        netlab.require_root_and_ip()
