"""Several hosts in network namespaces: discovery, partnership, loss and delay, crash, partition."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.net_real.netlab import NetLab
from tests.net_real.peers import FAST, PeerProcess
from tests.waiting import until


@pytest.fixture
def lab3() -> Iterator[NetLab]:
    lab = NetLab(3)
    yield lab
    lab.close()


def _host(lab: NetLab, tmp: Path, table: str, *extra: str, bot: list[str] = FAST) -> PeerProcess:
    return PeerProcess(
        [
            "host",
            "--headless",
            "--verbose",
            "--name",
            "Ann",
            "--table",
            table,
            "--interface",
            lab.address(0),
            *bot,
            *extra,
        ],
        tmp / "h0",
        prefix=lab.prefix(0),
    )


def _join(
    lab: NetLab,
    host: int,
    tmp: Path,
    name: str,
    table: str,
    *extra: str,
    bot: list[str] = FAST,
    env: dict[str, str] | None = None,
) -> PeerProcess:
    return PeerProcess(
        [
            "join",
            "--headless",
            "--verbose",
            "--name",
            name,
            "--table",
            table,
            "--interface",
            lab.address(host),
            *bot,
            *extra,
        ],
        tmp / f"h{host}",
        prefix=lab.prefix(host),
        env=env,
    )


def _same_hashes(peers: list[PeerProcess]) -> dict[int, str]:
    """Every round that two peers both saw end ended with the same state hash; the first peer
    saw every round."""
    hashes = [{r["round"]: r["state_hash"] for r in p.events("round_over")} for p in peers]
    assert hashes[0], "no round ended"
    for other in hashes[1:]:
        assert other, "a peer saw no round end"
        assert set(other) <= set(hashes[0])
        assert all(hashes[0][r] == h for r, h in other.items())
    return hashes[0]


def test_a_table_is_discovered_from_another_host(lab3: NetLab, tmp_path: Path) -> None:
    host = _host(lab3, tmp_path, "Over the wire", "--players", "2")
    try:
        host.wait_for("hosting")
        done = subprocess.run(
            [
                *lab3.prefix(1),
                sys.executable,
                "-m",
                "nerts_lan",
                "tables",
                "--interface",
                lab3.address(1),
                "--json",
                "--wait",
                "3",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        tables = [json.loads(line) for line in done.stdout.splitlines()]
        assert len(tables) == 1
        assert tables[0]["table"] == "Over the wire" and tables[0]["host"] == "Ann"
        assert tables[0]["address"] == lab3.address(0) and tables[0]["state"] == "lobby"
        assert tables[0]["seats"] == "1/4"
    finally:
        host.stop()


def test_a_two_by_two_partnership_game_across_four_hosts(tmp_path: Path) -> None:
    lab = NetLab(4)
    peers: list[PeerProcess] = []
    try:
        peers.append(
            _host(
                lab,
                tmp_path,
                "Pairs",
                "--partnership",
                "--teams",
                "2",
                "--players",
                "4",
                "--target",
                "25",
            )
        )
        peers[0].wait_for("hosting")
        for index, name in ((1, "Bo"), (2, "Cy"), (3, "Di")):
            peers.append(_join(lab, index, tmp_path, name, "Pairs"))
        try:
            for peer in peers:
                assert peer.finish(120) == 0, peer.stderr[-2000:]
        except AssertionError:
            for peer in peers:
                peer.stop()
                print("=====", peer.lines[:2], "\n", peer.stderr[-20000:])
            raise
        teams = peers[0].wait_for("round_started")["teams"]
        assert sorted(len(players) for players in teams.values()) == [2, 2]
        _same_hashes(peers)
        totals = [p.wait_for("match_over")["totals"] for p in peers]
        assert all(t == totals[0] for t in totals)
    finally:
        for peer in peers:
            peer.stop()
        lab.close()


def test_a_round_over_a_lossy_slow_link_ends_the_same_everywhere(
    lab3: NetLab, tmp_path: Path
) -> None:
    lab3.lose(2, 0.1)  # 10 % of packets to and from host 2 are dropped
    peers = [_host(lab3, tmp_path, "Lossy", "--players", "3", "--rounds", "1")]
    try:
        peers[0].wait_for("hosting")
        peers.append(_join(lab3, 1, tmp_path, "Bo", "Lossy", "--rounds", "1"))
        peers.append(
            _join(
                lab3,
                2,
                tmp_path,
                "Cy",
                "Lossy",
                "--rounds",
                "1",
                env={"NERTS_LAN_LINK_DELAY_MS": "20,60"},
            )
        )
        for peer in peers:
            assert peer.finish(120) == 0, peer.stderr[-2000:]
        _same_hashes(peers)
    finally:
        for peer in peers:
            peer.stop()


def test_a_peer_killed_mid_round_and_restarted_on_its_host(lab3: NetLab, tmp_path: Path) -> None:
    slow = ["--bot", "hard", "--bot-delay", "0.3"]
    peers = [_host(lab3, tmp_path, "Crash", "--players", "3", "--rounds", "2", bot=slow)]
    try:
        peers[0].wait_for("hosting")
        peers.append(_join(lab3, 1, tmp_path, "Bo", "Crash", "--rounds", "2", bot=slow))
        cy = _join(lab3, 2, tmp_path, "Cy", "Crash", "--rounds", "2", bot=slow)
        cy.wait_for("round_started", timeout=30)
        cy_id = cy.wait_for("joined")["peer"]
        cy.kill()
        peers[0].wait_for("peer_gone", timeout=15, peer=cy_id)
        again = _join(lab3, 2, tmp_path, "Cy", "Crash", "--rounds", "2", bot=slow)
        peers.append(again)
        peers[0].wait_for("peer_returned", timeout=30, peer=cy_id)
        for peer in peers:
            assert peer.finish(120) == 0, peer.stderr[-2000:]
        _same_hashes(peers[:2])
        late = {r["round"]: r["state_hash"] for r in again.events("round_over")}
        early = {r["round"]: r["state_hash"] for r in peers[0].events("round_over")}
        assert late and all(early[r] == h for r, h in late.items())
    finally:
        cy.stop()
        for peer in peers:
            peer.stop()


@pytest.mark.parametrize("seconds", [1.5, 6.0], ids=["short", "long"])
def test_a_partition_that_heals(lab3: NetLab, tmp_path: Path, seconds: float) -> None:
    """Short: nobody is excluded. Long: the cut-off peer is excluded, then rejoins and
    catches up. Either way every peer ends with the same hashes."""
    slow = ["--bot", "hard", "--bot-delay", "0.3"]
    peers = [_host(lab3, tmp_path, "Split", "--players", "3", "--rounds", "2", bot=slow)]
    try:
        peers[0].wait_for("hosting")
        peers.append(_join(lab3, 1, tmp_path, "Bo", "Split", "--rounds", "2", bot=slow))
        peers.append(_join(lab3, 2, tmp_path, "Cy", "Split", "--rounds", "2", bot=slow))
        peers[2].wait_for("round_started", timeout=30)
        time.sleep(1.0)
        lab3.cut(2)
        time.sleep(seconds)
        lab3.heal(2)
        try:
            for peer in peers:
                assert peer.finish(90) == 0, peer.stderr[-2000:]
        except AssertionError:
            for peer in peers:
                peer.stop()
                print("=====", peer.lines[:1], "\n", peer.stderr[-8000:])
            raise
        _same_hashes(peers)
        cy_id = peers[2].wait_for("joined")["peer"]
        excluded = [r for r in peers[0].events("peer_gone") if r["peer"] == cy_id]
        assert bool(excluded) == (seconds > 3.0)
    finally:
        for peer in peers:
            peer.stop()


def _drop_from(lab: NetLab, host: int, source: int, delete: bool = False) -> None:
    """Drop, inside ``host``'s namespace, every packet that comes from ``source``: a one-way cut
    (what ``host`` sends still arrives; nothing of ``source`` gets back)."""
    if shutil.which("iptables") is None:
        pytest.skip("iptables is not installed")
    rule = ["INPUT", "-s", lab.address(source), "-j", "DROP"]
    action = "-D" if delete else "-A"
    subprocess.run(
        [*lab.prefix(host), "iptables", "-w", action, *rule],
        check=True,
        capture_output=True,
        text=True,
    )


def test_a_peer_excluded_by_a_one_way_cut_comes_back_once_it_heals(
    lab3: NetLab, tmp_path: Path
) -> None:
    """Host 2 hears nothing from host 1 for 20 s (host 1 still hears host 2): host 2 is
    excluded, and once the cut heals it rejoins and plays on. It used to hang forever in its
    rejoin, closing the old node."""
    slow = ["--bot", "hard", "--bot-delay", "0.3"]
    # The match outlasts the cut (the test ends it once Cy is back). A private table: its
    # links come back through the coded handshake, where a 2 s blip once hung too.
    long = ("--rounds", "20", "--code", "plum-4477")
    # A target no 20 rounds reach: excluded three times in a row during the cut, Cy waits
    # 20 s before trying again (issue 24's back-off), and the match must still be on by then.
    hosting = ("--players", "3", "--target", "1000", *long)
    peers = [_host(lab3, tmp_path, "One way", *hosting, bot=slow)]
    try:
        peers[0].wait_for("hosting")
        peers.append(_join(lab3, 1, tmp_path, "Bo", "One way", *long, bot=slow))
        peers.append(_join(lab3, 2, tmp_path, "Cy", "One way", *long, bot=slow))
        cy_id = peers[2].wait_for("joined")["peer"]
        peers[2].wait_for("round_started", timeout=30)
        _drop_from(lab3, 2, 1)
        try:
            peers[0].wait_for("peer_gone", timeout=30, peer=cy_id)
        finally:
            time.sleep(ONE_WAY_CUT_SECONDS)
            _drop_from(lab3, 2, 1, delete=True)
        try:
            peers[0].wait_for("peer_returned", timeout=30, peer=cy_id)
            # Cy may have come back before the cut healed and been let go again: it plays on
            # in some round dealt after the heal, once its back-off is over.
            healed_at = max(r["round"] for r in peers[0].events("round_started"))
            until(
                lambda: any(r["round"] > healed_at for r in peers[2].events("round_over")),
                120,
                "Cy ending a round dealt after the heal",
            )
            back_in = min(
                r["round"] for r in peers[2].events("round_over") if r["round"] > healed_at
            )
            peers[0].wait_for("round_over", timeout=30, round=back_in)
        except AssertionError:
            print("===== Cy's stderr\n", peers[2].stderr[-6000:])
            raise
        _same_hashes(peers)
    finally:
        for peer in peers:
            peer.stop()


ONE_WAY_CUT_SECONDS = 17.0
"""How long the one-way cut lasts after the exclusion (the reported hang: 20 s in all)."""
