"""Joining by address with multicast blocked end to end, across network namespaces: every host
drops 224.0.0.0/4 both ways (a hotel's or a campus's Wi-Fi), so mDNS finds nothing; the joiners
type the host's address (no port: the table listens on the default one), play a round with it
and with each other (reached through the addresses the members gossip, though every peer
listens on every interface), and end with the same state hashes. A private table joined by
address still takes its code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.net_real.netlab import NetLab
from tests.net_real.peers import FAST, PeerProcess

pytestmark = pytest.mark.netns


@pytest.fixture
def lab() -> Iterator[NetLab]:
    lab = NetLab(3)
    try:
        if shutil.which("iptables") is None:
            pytest.skip("iptables is not installed")
        for host in range(3):
            for chain in ("OUTPUT", "INPUT"):
                rule = [chain, "-d", "224.0.0.0/4", "-m", "comment", "--comment", lab.tag]
                subprocess.run(
                    [*lab.prefix(host), "iptables", "-w", "-A", *rule, "-j", "DROP"],
                    check=True,
                    capture_output=True,
                )
        yield lab
    finally:
        lab.close()


def _peer(lab: NetLab, host: int, tmp: Path, *args: str, bound: bool = True) -> PeerProcess:
    """A headless peer on ``host``; ``bound``: on the host's address only (``--interface``),
    else on every interface, as the window by default."""
    command, name = args[0], args[1]
    full = [command, "--headless", "--verbose", "--name", name]
    full += ["--interface", lab.address(host)] if bound else []
    return PeerProcess([*full, *args[2:], *FAST], tmp / name, prefix=lab.prefix(host))


def _tables_seen(lab: NetLab, host: int) -> list[object]:
    where = ["--interface", lab.address(host), "--wait", "1.5"]
    done = subprocess.run(
        [*lab.prefix(host), sys.executable, "-m", "nerts_lan", "tables", "--json", *where],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_two_peers_join_by_address_with_multicast_blocked_and_play_a_round(
    lab: NetLab, tmp_path: Path
) -> None:
    host = _peer(
        lab, 0, tmp_path, "host", "Ann", "--table", "No mDNS", "--players", "3", bound=False
    )
    peers = [host]
    try:
        hosting = host.wait_for("hosting")
        # The table listens on the default port, and says what to type to reach it.
        assert hosting["port"] == 7777 and hosting["addresses"] == [f"{lab.address(0)}:7777"]
        assert _tables_seen(lab, 1) == []  # discovery is blocked indeed
        # One types the address alone (the default port), the other with the port. Every peer
        # listens on every interface (no --interface, as the window by default): each still
        # learns where to reach the others (a hello names the address its connection runs from,
        # not 0.0.0.0).
        for host, name, typed in ((1, "Bo", lab.address(0)), (2, "Cy", f"{lab.address(0)}:7777")):
            peers.append(_peer(lab, host, tmp_path, "join", name, "--address", typed, bound=False))
        for peer in peers[1:]:
            found = peer.wait_for("table_found")
            assert (found["table"], found["address"], found["port"]) == (
                "No mDNS",
                lab.address(0),
                7777,
            )
        for peer in peers:
            peer.wait_for("round_over", timeout=30, round=1)
        hashes = [peer.wait_for("round_over", round=1)["state_hash"] for peer in peers]
        assert hashes[0] == hashes[1] == hashes[2]
        assert not any(peer.events("peer_gone") for peer in peers)  # nobody was cut off
        teams = peers[0].wait_for("round_started")["teams"]
        assert sorted(p for players in teams.values() for p in players) == ["Ann", "Bo", "Cy"]
    finally:
        for peer in peers:
            peer.stop()


def test_a_private_table_by_address_lets_the_right_code_in_and_refuses_a_wrong_one(
    lab: NetLab, tmp_path: Path
) -> None:
    host = _peer(lab, 0, tmp_path, "host", "Ann", "--table", "Secret", "--code", "K7PX")
    peers = [host]
    try:
        host.wait_for("hosting")
        wrong = _peer(lab, 1, tmp_path, "join", "Bo", "--address", lab.address(0), "--code", "ZZ")
        right = _peer(lab, 2, tmp_path, "join", "Cy", "--address", lab.address(0), "--code", "k7px")
        peers += [wrong, right]
        assert wrong.wait_for("table_found")["needs_code"] is True
        assert wrong.finish(30) == 1
        assert wrong.wait_for("error")["message"] == "the table refused us: wrong table code"
        right.wait_for("joined")
        assert right.wait_for("table_found")["host"] == "Ann"
    finally:
        for peer in peers:
            peer.stop()
