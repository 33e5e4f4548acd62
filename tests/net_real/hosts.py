"""Peer processes on the hosts of a network lab, as the namespace tests start them, and the check
they share: every round two peers saw end ended with the same hash."""

from __future__ import annotations

from pathlib import Path

from tests.net_real.netlab import NetLab
from tests.net_real.peers import PeerProcess

SLOW = ["--bot", "hard", "--bot-delay", "0.3"]
"""Bots slow enough for a round to outlast what a test does to the network."""


def peer_on(
    lab: NetLab,
    host: int,
    tmp: Path,
    *args: str,
    bots: list[str] = SLOW,
    env: dict[str, str] | None = None,
) -> PeerProcess:
    """``nerts-lan ARGS`` on namespace ``host``, with that host's data folder (and ``env``)."""
    where = ["--interface", lab.address(host), *bots, "--headless", "--verbose"]
    return PeerProcess([*args, *where], tmp / f"h{host}", prefix=lab.prefix(host), env=env)


def table_of_three(
    lab: NetLab,
    tmp: Path,
    table: str,
    *rounds: str,
    bots: list[str] = SLOW,
    hosting_only: tuple[str, ...] = (),
    joining_only: tuple[str, ...] = (),
    env_of: dict[int, dict[str, str]] | None = None,
) -> list[PeerProcess]:
    """Ann hosts ``table`` for three on host 0; Bo and Cy join from hosts 1 and 2 (``rounds``:
    options all three take, such as ``--rounds 1``; ``hosting_only`` and ``joining_only``:
    options of the host's or the joiners' command alone; ``env_of``: the environment a host's
    peer gets besides). Stopped again if the table is not hosted."""
    env_of = env_of or {}
    hosting = ["host", "--name", "Ann", "--table", table, "--players", "3", *rounds]
    hosting += hosting_only
    peers = [peer_on(lab, 0, tmp, *hosting, bots=bots, env=env_of.get(0))]
    try:
        peers[0].wait_for("hosting")
        for host, name in ((1, "Bo"), (2, "Cy")):
            joining = ["join", "--name", name, "--table", table, *rounds, *joining_only]
            peers.append(peer_on(lab, host, tmp, *joining, bots=bots, env=env_of.get(host)))
    except BaseException:
        for peer in peers:
            peer.stop()
        raise
    return peers


def same_hashes(first: PeerProcess, *others: PeerProcess, ended: bool = True) -> None:
    """Every round two peers saw end ended with the same hash; if ``ended``, ``first`` and each
    of ``others`` saw one end (a round of slow bots may outlast a test that says otherwise)."""
    seen = {r["round"]: r["state_hash"] for r in first.events("round_over")}
    assert seen or not ended, "no round ended"
    for peer in others:
        theirs = {r["round"]: r["state_hash"] for r in peer.events("round_over")}
        assert theirs or not ended, "no round ended at " + str(peer.lines[:1])
        assert all(seen[n] == h for n, h in theirs.items()), (seen, theirs)
