"""The fault soak (scripts/soak_faults.py) still runs: a very short run strikes one fault of each
kind, reports how each struck peer came back, and leaves no namespace or process behind.

This checks the script, not the game: it passes whether or not the peers came back in time (the
soak's exit status says that; a long run is the measure, see the script's docstring)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.net_real.netlab import require_iptables

pytestmark = pytest.mark.netns

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "soak_faults.py"
KINDS = ["blip", "kill", "long_cut", "one_way_cut", "stop"]


def test_a_short_soak_strikes_each_fault_once_and_cleans_up(tmp_path: Path) -> None:
    require_iptables()  # the soak's cuts are iptables rules
    figures_file = tmp_path / "figures.json"
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            *("--minutes", "3", "--faults", "5", "--every", "0.5", "0.5", "--shortest"),
            *("--watch", "8", "--steady", "1", "--bot-delay", "0.05"),
            *("--guessers", "2", "--idle", "20", "--silent", "5"),
            *("--workdir", str(tmp_path / "peers"), "--json", str(figures_file)),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    figures = json.loads(figures_file.read_text(encoding="utf-8"))
    faults = figures["fault_log"]
    assert sorted(fault["kind"] for fault in faults) == KINDS
    for fault in faults:
        struck = 2 if fault["kind"] == "one_way_cut" else 1
        assert len(fault["back_s"]) == struck, fault
    assert figures["rounds_played"] > 0 and figures["stranger"]["opened"] > 0
    assert figures["descriptors"]["host"]["peak"] > 0
    tag = re.search(r"lab (nl[0-9a-f]+)", done.stdout)
    assert tag is not None, done.stdout[:2000]
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert tag.group(1) not in namespaces
    assert not _processes_with(str(tmp_path).encode()), "the soak left processes running"


def _processes_with(folder: bytes) -> list[int]:
    """The processes whose environment names ``folder`` (every peer's data folder is in it)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if folder in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue  # gone meanwhile
    return found
