"""A reaction between two headless peers on 127.0.0.1 (real zeroconf, real TCP): sent by one
with a ``react`` line on its standard input, printed by the other."""

from __future__ import annotations

from pathlib import Path

from tests.net_real.peers import PeerProcess, headless

SLOW = ["--bot", "hard", "--bot-delay", "0.5"]
"""Bots slow enough that the round is still in play when the reaction is sent."""


def test_a_reaction_sent_by_one_headless_peer_is_printed_by_the_other(tmp_path: Path) -> None:
    host = PeerProcess(
        headless("host", "Ann", "Reaction table", *SLOW, "--players", "2", "--rounds", "1"),
        tmp_path / "ann",
    )
    peers = [host]
    try:
        host.wait_for("hosting")
        bo = PeerProcess(
            headless("join", "Bo", "Reaction table", *SLOW, "--rounds", "1"), tmp_path / "bo"
        )
        peers.append(bo)
        for peer in peers:
            peer.wait_for("round_started", timeout=60, round=1)
        host.tell("react gg")
        heard = bo.wait_for("reaction", timeout=30, player="Ann")
        assert heard == {"event": "reaction", "player": "Ann", "says": "gg"}
        assert host.wait_for("reaction", timeout=30, player="Ann")["says"] == "gg"
    finally:
        for peer in peers:
            peer.stop()
