"""A one-way cut left in place for the whole match (real processes in namespaces): the laptop the
others cannot hear stops flapping, says why, and the others' rounds start on time.

Before: the cut-off laptop was let go and taken back every 3.3 s for as long as the cut lasted,
never played, never said why, and while it was a member nothing the others played became final,
so every round of theirs started 3.3 to 6.6 s late (the round's seed waits for stable commits).
"""

from __future__ import annotations

from pathlib import Path

from nerts_lan.lan.rejoining import FIRST_WAIT, STREAK_LIMIT
from tests.net_real.hosts import peer_on
from tests.net_real.netlab import NetLab
from tests.net_real.peers import PeerProcess
from tests.waiting import until

FAST = ["--bot", "hard", "--bot-delay", "0.1"]
"""Short rounds: several start and end while the cut-off laptop waits."""


def test_a_laptop_the_others_cannot_hear_stops_flapping_and_the_rounds_go_on(
    lab3: NetLab, tmp_path: Path
) -> None:
    ann, bo, cy = _table(lab3, tmp_path)
    try:
        cy_id = cy.wait_for("joined")["peer"]
        cy.wait_for("round_started", timeout=30)
        lab3.drop_from(2, 1)  # Cy hears nothing from Bo (so no link between them holds)

        first = cy.wait_for("unreachable", timeout=30)
        assert first["exclusions"] == STREAK_LIMIT and first["wait"] == FIRST_WAIT
        assert first["unheard"] == ["Bo"]
        assert "can't hear Bo" in first["message"] and "Trying again in 20 s" in first["message"]
        # It tries again after the wait, is let go once more, and then waits twice as long.
        second = cy.wait_for("unreachable", timeout=FIRST_WAIT + 15, exclusions=STREAK_LIMIT + 1)
        assert second["wait"] == 2 * FIRST_WAIT
        assert len(cy.events("rejoining")) == STREAK_LIMIT + 1  # never more in a row

        while_waiting = _lines_while_away(ann, cy_id, STREAK_LIMIT)
        rounds = [r["round"] for r in while_waiting if r.get("event") == "round_started"]
        assert rounds, f"no round started while Cy waited: {while_waiting}"
        # Nothing held the others' rounds up meanwhile: no view change, no pause.
        stalls = [r for r in while_waiting if r.get("event") in _STALLS]
        assert not stalls, stalls
        # Ann let Cy go once per visit: three in a row, then once after the wait.
        until(lambda: _gone(ann, cy_id) >= STREAK_LIMIT + 1, 10, "Ann letting Cy go again")
        assert _gone(ann, cy_id) == STREAK_LIMIT + 1
    except AssertionError:
        for peer in (ann, bo, cy):
            print("=====", peer.lines[:1], "\n", peer.stderr[-3000:])
        raise
    finally:
        for peer in (ann, bo, cy):
            peer.stop()


def _table(lab: NetLab, tmp: Path) -> list[PeerProcess]:
    """Ann hosts a match that outlasts the test; Bo and Cy join from hosts 1 and 2."""
    table = ["--table", "Left in place", "--rounds", "40"]
    host = ["host", "--name", "Ann", *table, "--players", "3", "--target", "1000"]
    peers = [peer_on(lab, 0, tmp, *host, bots=FAST)]
    try:
        peers[0].wait_for("hosting")
        for index, name in ((1, "Bo"), (2, "Cy")):
            peers.append(peer_on(lab, index, tmp, "join", "--name", name, *table, bots=FAST))
    except BaseException:
        for peer in peers:
            peer.stop()
        raise
    return peers


_STALLS = {"peer_gone", "peer_returned", "peer_went_silent", "table_paused"}
"""What a member's visit costs the others: a view change (it comes, it goes) or a pause."""


def _lines_while_away(peer: PeerProcess, away: str, exclusions: int) -> list[dict[str, object]]:
    """``peer``'s lines between its ``exclusions``-th ``peer_gone`` of ``away`` and the
    ``peer_returned`` of ``away`` after it."""
    gone = [i for i, r in enumerate(peer.lines) if _about(r, "peer_gone", away)]
    start = gone[exclusions - 1] + 1
    back = next(
        i for i in range(start, len(peer.lines)) if _about(peer.lines[i], "peer_returned", away)
    )
    return peer.lines[start:back]


def _gone(peer: PeerProcess, away: str) -> int:
    """How many times ``peer`` saw the table let ``away`` go."""
    return len([r for r in peer.events("peer_gone") if r["peer"] == away])


def _about(record: dict[str, object], event: str, peer: str) -> bool:
    return record.get("event") == event and record.get("peer") == peer
