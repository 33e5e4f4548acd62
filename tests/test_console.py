"""Every command survives a console or pipe that cannot encode its characters, and a headless
JSON line is the same bytes on every OS.

Windows Python writes a pipe (``nerts-lan doctor | more``) in the locale's code page, cp1252 in
most places, which has no "→" and no suits; an old terminal or a C locale is ASCII. Here the real
command runs in a subprocess with ``PYTHONIOENCODING`` set to each, its output a pipe; in the
Windows lane (Windows CPython under Wine) the same tests run with the lane's own cp1252 pipe too
(``default``), and check that Windows writes "\\n", not "\\r\\n", at the end of a JSON line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nerts_lan.cli.console import HANDLER, use_stand_ins
from tests.test_history import write_log

ROOT = Path(__file__).resolve().parent.parent
ENCODINGS = ["ascii", "cp1252", "default"]
NAME = "Zoë ♥→"
"""A player name as a laptop may send it: what cp1252 has (ë) and lacks (♥, →)."""


def _nerts_lan(encoding: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NERTS_LAN_CONFIG_DIR": str(tmp_path / "config"),
        "NERTS_LAN_DATA": str(tmp_path / "data"),
    }
    env.pop("PYTHONIOENCODING", None)
    env.pop("PYTHONUTF8", None)
    if encoding != "default":
        env["PYTHONIOENCODING"] = encoding
    return subprocess.run(
        [sys.executable, "-m", "nerts_lan", *args],
        capture_output=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _written_as(encoding: str) -> str:
    """The encoding the subprocess writes a pipe in."""
    if encoding != "default":
        return encoding
    return "cp1252" if sys.platform == "win32" else "utf-8"


def _no_crash(done: subprocess.CompletedProcess[bytes], encoding: str) -> str:
    stderr = done.stderr.decode(_written_as(encoding), errors="replace")
    assert b"Traceback" not in done.stderr and "UnicodeEncodeError" not in stderr, stderr
    return done.stdout.decode(_written_as(encoding))  # every byte is in the stream's encoding


def test_stand_ins_say_what_the_character_meant() -> None:
    use_stand_ins(None, None)  # registers the handler
    text = "Q♥ → J♣ · Zoë ×2… ⁴ 漢"
    assert text.encode("ascii", errors=HANDLER) == b"QH -> JC . Zoe x2... 4 ?"
    assert text.encode("cp1252", errors=HANDLER) == "QH -> JC · Zoë ×2… 4 ?".encode("cp1252")
    assert text.encode("utf-8", errors=HANDLER) == text.encode("utf-8")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_doctor_sim_and_help_survive_a_console_with_no_arrows(
    encoding: str, tmp_path: Path
) -> None:
    doctor = _nerts_lan(encoding, tmp_path, "doctor")
    assert doctor.returncode in (0, 1), doctor.stderr  # 1: a problem found, told, not a crash
    shown = _no_crash(doctor, encoding)
    assert "network" in shown
    sim = _nerts_lan(encoding, tmp_path, "sim", "--teams", "2", "--rounds", "1")
    assert sim.returncode == 0 and "round wins" in _no_crash(sim, encoding)
    usage = _nerts_lan(encoding, tmp_path, "--help")
    assert usage.returncode == 0 and "doctor" in _no_crash(usage, encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_names_beyond_the_console_are_written_as_stand_ins(encoding: str, tmp_path: Path) -> None:
    write_log(tmp_path / "data" / "logs")
    stats = _nerts_lan(encoding, tmp_path, "stats", "--player", NAME)
    assert stats.returncode == 0, stats.stderr
    shown = _no_crash(stats, encoding)
    expected = {"ascii": "Zoe H->: 0/0", "cp1252": "Zoë H->: 0/0", "utf-8": "Zoë ♥→: 0/0"}
    assert shown.startswith(expected[_written_as(encoding)]), shown
    missing = _nerts_lan(encoding, tmp_path, "scenario", str(tmp_path / "♥→.json"))
    assert missing.returncode == 2
    said = missing.stderr.decode(_written_as(encoding))
    assert "error: cannot read" in said and ("♥→.json" in said or "H->.json" in said), said


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_headless_json_line_is_the_same_bytes_everywhere(encoding: str, tmp_path: Path) -> None:
    """What Linux writes: ``json.dumps`` (ASCII, its escapes for the rest) and one "\\n"."""
    log = write_log(tmp_path / "data" / "logs")
    replay = _nerts_lan(encoding, tmp_path, "replay", str(log), "--headless", "--coach")
    stats = _nerts_lan(encoding, tmp_path, "stats", "--json", "--player", NAME)
    doctor = _nerts_lan(encoding, tmp_path, "doctor", "--json")  # its advice has arrows
    assert replay.returncode == 0 and stats.returncode == 0, replay.stderr + stats.stderr
    assert doctor.returncode in (0, 1), doctor.stderr
    for done in (replay, stats, doctor):
        lines = done.stdout.split(b"\n")
        assert lines[-1] == b"" and len(lines) >= 2
        for line in lines[:-1]:
            assert line == json.dumps(json.loads(line)).encode("ascii"), line  # no "\r" either
    assert b'"coach"' in replay.stdout and b'"Zo\\u00eb \\u2665\\u2192"' in stats.stdout
