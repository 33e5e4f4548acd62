"""A laptop that sleeps (its lid closed: SIGSTOP), with real processes in network namespaces.

Stopped longer than the table waits for a silent member (``exclude_timeout``, 3 s), it is let
go and a bot plays its seat; woken up (SIGCONT) it says it was away, rejoins and is back in its
seat within seconds. Stopped until the table ended, it says so and exits rather than hang. The
issue's real two and ten minutes run with ``NERTS_SLOW=1 -m slow``.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.lan.whereabouts import ENDED_WHILE_AWAY
from nerts_lan.matchlog.file import read_match_log
from tests.net_real.hosts import peer_on, same_hashes, table_of_three
from tests.net_real.netlab import NetLab
from tests.net_real.peers import PeerProcess
from tests.waiting import until

pytestmark = pytest.mark.netns

RUN_SLOW = os.environ.get("NERTS_SLOW") == "1"


def _played_for(peer: PeerProcess, player: str, by_other_than: str) -> int:
    """Actions of ``player`` in ``peer``'s match log made by another peer than
    ``by_other_than`` (a bot standing in for it)."""
    path = Path(peer.wait_for("joined")["log"])
    records, _ = read_match_log(path)
    return sum(1 for r in records if _is_act_of(r, player) and r[2] != by_other_than)


def _is_act_of(record: list[Any], player: str) -> bool:
    if record[0] != "entry" or not isinstance(record[3], dict):
        return False
    action = record[3].get("a")
    return record[3].get("k") == "act" and isinstance(action, dict) and action.get("by") == player


def _sleep_and_wake(peers: list[PeerProcess], at_least: float = 0.0) -> tuple[str, float]:
    """Stop Cy (``peers[2]``) until the table let it go and a bot played its seat (and for
    ``at_least`` seconds: the lid stays closed that long), then wake it: its peer id and how long
    it says it slept."""
    cy = peers[2]
    cy_id = cy.wait_for("joined")["peer"]
    for peer in peers:
        peer.wait_for("round_started", timeout=30)
    os.kill(cy.pid, signal.SIGSTOP)
    closed = time.monotonic()
    try:
        gone = peers[0].wait_for("peer_gone", timeout=15, peer=cy_id)
        assert gone["players"] == ["Cy"]
        until(lambda: _played_for(peers[0], "Cy", cy_id) >= 1, timeout=20)
        time.sleep(max(0.0, closed + at_least - time.monotonic()))  # the scenario's duration
    finally:
        os.kill(cy.pid, signal.SIGCONT)
    return cy_id, float(cy.wait_for("away", timeout=10)["seconds"])


def test_a_laptop_asleep_longer_than_the_table_waits_is_back_in_its_seat(
    lab3: NetLab, tmp_path: Path
) -> None:
    peers = table_of_three(lab3, tmp_path, "Nap " + lab3.tag, "--rounds", "2")
    try:
        cy_id, slept = _sleep_and_wake(peers)
        assert slept >= 3.0
        cy = peers[2]
        back = cy.wait_for("back_at_table", timeout=15)
        assert back["seconds"] == slept
        assert cy.events("rejoining")  # the table had let it go: it joined again
        peers[0].wait_for("peer_returned", timeout=15, peer=cy_id)
        for peer in peers:
            assert peer.finish(90) == 0, peer.stderr[-3000:]
        same_hashes(*peers)
        assert not cy.events("table_gone")
    finally:
        for peer in peers:
            peer.stop()


def test_a_laptop_asleep_until_the_table_ended_says_so_and_stops(
    lab3: NetLab, tmp_path: Path
) -> None:
    """Bo sleeps; Ann's table lets it go, a bot plays Bo's seat to the end of the match and
    Ann leaves. Bo, woken up, finds no table: it says so within seconds and exits, no hang."""
    table = "Long nap " + lab3.tag
    hosting = ["host", "--name", "Ann", "--table", table, "--players", "2", "--rounds", "1"]
    quick = ["--bot", "hard", "--bot-delay", "0.1"]  # the round outlasts the exclusion, barely
    ann = peer_on(lab3, 0, tmp_path, *hosting, bots=quick)
    joining = ["join", "--name", "Bo", "--table", table, "--rounds", "1"]
    bo = peer_on(lab3, 1, tmp_path, *joining, bots=quick)
    try:
        bo_id = bo.wait_for("joined")["peer"]
        bo.wait_for("round_started", timeout=30)
        os.kill(bo.pid, signal.SIGSTOP)
        try:
            ann.wait_for("peer_gone", timeout=15, peer=bo_id)
            assert ann.finish(90) == 0, ann.stderr[-3000:]  # the match ended without Bo
            assert _played_for(ann, "Bo", bo_id) >= 1  # a bot played Bo's seat meanwhile
        finally:
            os.kill(bo.pid, signal.SIGCONT)
        assert bo.wait_for("away", timeout=10)["seconds"] >= 3.0
        assert bo.wait_for("table_gone", timeout=20)["message"] == ENDED_WHILE_AWAY
        assert bo.finish(15) == 1
        assert not bo.events("back_at_table")
    finally:
        ann.stop()
        bo.stop()


@pytest.mark.slow
@pytest.mark.skipif(not RUN_SLOW, reason="real minutes: set NERTS_SLOW=1")
@pytest.mark.parametrize("minutes", [2, 10])
@pytest.mark.timeout(900)
def test_a_laptop_asleep_for_minutes_is_back_in_its_seat(
    lab3: NetLab, tmp_path: Path, minutes: int
) -> None:
    """The issue's two and ten minutes with the lid closed, for real (the match outlasts them)."""
    bots = ["--bot", "easy", "--bot-delay", "3"]
    peers = table_of_three(lab3, tmp_path, f"{minutes} minutes " + lab3.tag, bots=bots)
    try:
        cy_id, slept = _sleep_and_wake(peers, at_least=60.0 * minutes)
        assert slept >= 60.0 * minutes
        assert peers[2].wait_for("back_at_table", timeout=20)["seconds"] == slept
        peers[0].wait_for("peer_returned", timeout=20, peer=cy_id)
        assert all(peer.running for peer in peers)
    finally:
        for peer in peers:
            peer.stop()
    same_hashes(*peers, ended=False)  # slow bots: a round may outlast the test
