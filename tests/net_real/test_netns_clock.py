"""A laptop whose moves reach the table late (its frames held 100 ms on the way out, as a slow
one-way link or a clock held back looks), each laptop on its own host of a network lab (real
processes in namespaces): the others flag it (``clock_lags``), it keeps its seat (a late clock is
bounded and flagged, never a ground for removal), and every round ends with one state everywhere.
That its late moves win no race is the simulator's to show (tests/net/test_clock_bound.py: at
most 5 % of races played 20 ms late)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net_real.hosts import table_of_three
from tests.net_real.netlab import NetLab

pytestmark = pytest.mark.netns

BOTS = ["--bot", "hard", "--bot-delay", "0.1"]
HELD = {"NERTS_LAN_LINK_DELAY_MS": "100,100"}


def test_a_laptop_whose_moves_arrive_late_is_flagged_and_the_table_goes_on_as_one(
    lab3: NetLab, tmp_path: Path
) -> None:
    peers = table_of_three(
        lab3, tmp_path, "Laggy", "--rounds", "2", bots=BOTS, env_of={2: HELD}
    )  # Cy, on host 2, is the late one
    try:
        cy_id = peers[2].wait_for("joined", timeout=40)["peer"]
        for honest in peers[:2]:
            flagged = honest.wait_for("clock_lags", timeout=60)
            assert flagged["name"] == "Cy" and flagged["peer"] == cy_id
            assert flagged["lag_ms"] >= 10
        for peer in peers:
            assert peer.finish(120) == 0, (peer.lines[-6:], peer.stderr[-2000:])
    finally:
        for peer in peers:
            peer.stop()
    # Cy kept its seat: nobody let it go, and it never had to find its way back.
    for honest in peers[:2]:
        assert not [r for r in honest.events("peer_gone") if r["peer"] == cy_id], honest.lines
    assert not peers[2].events("rejoining"), peers[2].lines
    for number in (1, 2):
        hashes = {
            r["state_hash"] for p in peers for r in p.events("round_over") if r["round"] == number
        }
        assert len(hashes) == 1, (number, hashes)
