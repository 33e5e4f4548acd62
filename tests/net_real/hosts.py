"""Peer processes on the hosts of a network lab, as the namespace tests start them, and the check
they share: every round two peers saw end ended with the same hash."""

from __future__ import annotations

from pathlib import Path

from .netlab import NetLab
from .peers import PeerProcess

SLOW = ["--bot", "hard", "--bot-delay", "0.3"]
"""Bots slow enough for a round to outlast what a test does to the network."""


def peer_on(lab: NetLab, host: int, tmp: Path, *args: str, bots: list[str] = SLOW) -> PeerProcess:
    """``nerts-lan ARGS`` on namespace ``host``, with that host's data folder."""
    where = ["--interface", lab.address(host), *bots, "--headless", "--verbose"]
    return PeerProcess([*args, *where], tmp / f"h{host}", prefix=lab.prefix(host))


def same_hashes(first: PeerProcess, *others: PeerProcess, ended: bool = True) -> None:
    """Every round two peers saw end ended with the same hash; if ``ended``, ``first`` and each
    of ``others`` saw one end (a round of slow bots may outlast a test that says otherwise)."""
    seen = {r["round"]: r["state_hash"] for r in first.events("round_over")}
    assert seen or not ended, "no round ended"
    for peer in others:
        theirs = {r["round"]: r["state_hash"] for r in peer.events("round_over")}
        assert theirs or not ended, "no round ended at " + str(peer.lines[:1])
        assert all(seen[n] == h for n, h in theirs.items()), (seen, theirs)
