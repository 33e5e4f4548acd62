"""Every laptop of a table killed at once and restarted, each on its own host of a network lab
(real processes in namespaces, mDNS across the bridge): nobody is left to rejoin, so the host
brings the match back from its match log and the match goes on with its next round, the scores of
the rounds before kept, one state on every laptop (issue 24: the match restarted from round 1).
The same on 127.0.0.1 is tests/net_real/test_resume_restart.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net_real.hosts import table_of_three
from tests.net_real.netlab import NetLab
from tests.net_real.peers import PeerProcess

pytestmark = pytest.mark.netns

BOTS = ["--bot", "hard", "--bot-delay", "0.05"]


def test_everyone_killed_and_restarted_on_three_hosts_goes_on_with_the_match(
    lab3: NetLab, tmp_path: Path
) -> None:
    peers = _table(lab3, tmp_path)
    try:
        first_id = peers[0].wait_for("hosting")["id"]
        for peer in peers:  # round 2 is stable on every laptop, and in every log
            peer.wait_for("round_over", timeout=60, round=2)
        before = [r["scores"] for r in peers[0].events("round_over")][:2]
        for peer in peers:
            peer.kill()

        again = _table(lab3, tmp_path)
        peers += again
        assert again[0].wait_for("previous_table_gone", timeout=30)["id"] == first_id
        resumed = again[0].wait_for("match_resumed", timeout=30)
        assert resumed["from"] == first_id and resumed["round"] == 3
        teams = list(before[0])
        assert resumed["totals"] == {team: before[0][team] + before[1][team] for team in teams}
        for peer in again:
            assert peer.finish(90) == 0, (peer.lines[-6:], peer.stderr[-2000:])
    finally:
        for peer in peers:
            peer.stop()

    started = [[r["round"] for r in peer.events("round_started")] for peer in again]
    assert started[0][0] == 3 and all(set(s) <= {3, 4} for s in started), started  # not round 1
    finals = {(r["round"], r["state_hash"]) for p in again for r in p.events("round_over")[-1:]}
    assert len(finals) == 1 and next(iter(finals))[0] == 4, finals


def _table(lab: NetLab, tmp: Path) -> list[PeerProcess]:
    """Ann hosts on host 0, Bo and Cy join from hosts 1 and 2, each host with its data folder
    (a restart finds its log); a target no four rounds reach."""
    return table_of_three(
        lab, tmp, "Blackout", "--rounds", "4", bots=BOTS,
        hosting_only=("--target", "1000"), joining_only=("--wait", "25"),
    )  # fmt: skip
