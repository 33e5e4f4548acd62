"""A laptop that moves: its address changes mid-game (a lease renewed, Wi-Fi roaming), with real
processes in network namespaces. The peer redials the others from its new address and keeps its
seat without an exclusion; its new listening address reaches the others; the mDNS advert follows
a host that moved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.net_real.hosts import peer_on, same_hashes, table_of_three
from tests.net_real.netlab import NetLab
from tests.net_real.peers import PeerProcess

pytestmark = pytest.mark.netns

"""Bots slow enough that a round lasts while a peer moves."""


def moved_address(lab: NetLab, host: int) -> str:
    """Where ``host`` moves to: another address of the same network."""
    return f"10.213.{lab.subnet}.{host + 101}"


def move(lab: NetLab, host: int, old: str, new: str) -> None:
    """Change ``host``'s address from ``old`` to ``new``, as a lease renewal that hands out
    another address does (the old one goes first: for a moment the laptop has none)."""
    ip = ["ip", "-n", lab.hosts[host], "addr"]
    subprocess.run([*ip, "del", f"{old}/24", "dev", "eth0"], check=True, capture_output=True)
    subprocess.run([*ip, "add", f"{new}/24", "dev", "eth0"], check=True, capture_output=True)


def _tables_seen_from(lab: NetLab, host: int) -> list[dict[str, object]]:
    done = subprocess.run(
        [
            *lab.prefix(host),
            sys.executable,
            "-m",
            "nerts_lan",
            "tables",
            "--interface",
            lab.address(host),
            "--json",
            "--wait",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("mover", [2, 0], ids=["a-joiner-moves", "the-host-moves"])
def test_a_peer_whose_address_changes_mid_round_keeps_its_seat(
    lab3: NetLab, tmp_path: Path, mover: int
) -> None:
    """Mid-round, one laptop's address changes: it says so, redials from the new address and
    plays on in its seat; nobody excludes it, the round ends with the same hash everywhere, and
    the others dial its new address (its hello and the gossip carry it)."""
    peers = table_of_three(lab3, tmp_path, "Roaming " + lab3.tag, "--rounds", "1")
    try:
        for peer in peers:
            peer.wait_for("joined")
        for peer in peers:
            peer.wait_for("round_started", timeout=30)
        old, new = lab3.address(mover), moved_address(lab3, mover)
        move(lab3, mover, old, new)
        moved = peers[mover].wait_for("address_changed", timeout=10)
        assert (moved["old"], moved["new"]) == (old, new)
        peers[mover].wait_for("reconnected", timeout=10)
        for peer in peers:
            assert peer.finish(90) == 0, peer.stderr[-3000:]
        same_hashes(*peers)
        for peer in peers:
            assert not peer.events("peer_gone"), "nobody was excluded"
            assert not peer.events("rejoining")
    finally:
        for peer in peers:
            peer.stop()


def test_the_advert_of_a_host_that_moved_gives_its_new_address(
    lab3: NetLab, tmp_path: Path
) -> None:
    """A host in its lobby moves: a player looking for tables then finds it at the new address,
    and joins it there."""
    table = "Lobby move " + lab3.tag
    hosting = ["host", "--name", "Ann", "--table", table, "--players", "2", "--rounds", "1"]
    ann = peer_on(lab3, 0, tmp_path, *hosting)
    bo: PeerProcess | None = None
    try:
        ann.wait_for("hosting")
        assert [t["address"] for t in _tables_seen_from(lab3, 1)] == [lab3.address(0)]
        new = moved_address(lab3, 0)
        move(lab3, 0, lab3.address(0), new)
        ann.wait_for("address_changed", timeout=10)
        assert [t["address"] for t in _tables_seen_from(lab3, 1)] == [new]
        joining = ["join", "--name", "Bo", "--table", table, "--rounds", "1"]
        bo = peer_on(lab3, 1, tmp_path, *joining)
        assert bo.wait_for("table_found")["address"] == new
        assert bo.finish(60) == 0, bo.stderr[-3000:]
        assert ann.finish(30) == 0, ann.stderr[-3000:]
        same_hashes(ann, bo)
    finally:
        ann.stop()
        if bo is not None:
            bo.stop()


def test_a_peer_without_an_address_longer_than_the_table_waits_comes_back(
    lab3: NetLab, tmp_path: Path
) -> None:
    """The old lease goes and the new one comes only after the table let the laptop go: it
    comes back within seconds of getting its new address, as a returning member (a bot played
    its seat meanwhile), and plays the match to its end with the others."""
    peers = table_of_three(lab3, tmp_path, "Lease gap " + lab3.tag, "--rounds", "1")
    try:
        cy_id = peers[2].wait_for("joined")["peer"]
        for peer in peers:
            peer.wait_for("round_started", timeout=30)
        old, new = lab3.address(2), moved_address(lab3, 2)
        ip = ["ip", "-n", lab3.hosts[2], "addr"]
        subprocess.run([*ip, "del", f"{old}/24", "dev", "eth0"], check=True, capture_output=True)
        gone = peers[0].wait_for("peer_gone", timeout=15, peer=cy_id)
        assert gone["players"] == ["Cy"]
        subprocess.run([*ip, "add", f"{new}/24", "dev", "eth0"], check=True, capture_output=True)
        assert peers[2].wait_for("address_changed", timeout=10)["new"] == new
        peers[0].wait_for("peer_returned", timeout=15, peer=cy_id)
        peers[1].wait_for("peer_returned", timeout=15, peer=cy_id)
        for peer in peers:
            assert peer.finish(90) == 0, peer.stderr[-3000:]
        same_hashes(*peers)
    finally:
        for peer in peers:
            peer.stop()
