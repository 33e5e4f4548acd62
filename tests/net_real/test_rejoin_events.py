"""What headless peers print around leaves and rejoins, on 127.0.0.1 with real processes: a
deliberate leave is not a crash, and a peer the table went on without says it rejoins, once."""

from __future__ import annotations

import os
import secrets
import signal
from collections import Counter
from pathlib import Path

import pytest

from tests.net_real.peers import PeerProcess, headless
from tests.platforms import not_on_windows
from tests.waiting import until

SLOW = ["--bot", "hard", "--bot-delay", "0.3"]


def _unique(name: str) -> str:
    return f"{name} {secrets.token_hex(3)}"  # other tests host tables on 127.0.0.1 too


@pytest.mark.parametrize(
    "asked",
    [
        pytest.param("leave", id="leave-line"),
        pytest.param("SIGTERM", marks=not_on_windows("terminating a process sends no signal")),
        pytest.param("SIGHUP", marks=not_on_windows("no SIGHUP (a closed console: CTRL_CLOSE)")),
    ],
)
def test_a_peer_that_leaves_on_purpose_is_printed_as_left_not_gone(
    tmp_path: Path, asked: str
) -> None:
    """A peer asked to leave (by a ``leave`` line on its standard input, on every OS; SIGTERM;
    SIGHUP, its terminal closed) says goodbye: the others print it as left, not as a crash."""
    table = _unique("Goodbye")
    ann = PeerProcess(headless("host", "Ann", table, "--players", "3"), tmp_path / "ann")
    bo = PeerProcess(headless("join", "Bo", table), tmp_path / "bo")
    try:
        ann.wait_for("hosting")
        bo_id = bo.wait_for("joined")["peer"]
        if asked == "leave":
            bo.process.stdin.write("hello\n")  # type: ignore[union-attr]
            bo.leave()
        else:
            bo.process.send_signal(getattr(signal, asked))
        assert bo.finish(30) == 0
        ann.wait_for("peer_left", timeout=15, peer=bo_id)
        assert not ann.events("peer_gone")
        if asked == "leave":
            until(lambda: "ignored 'hello' on standard input" in bo.stderr, what="the word")
    finally:
        ann.stop()
        bo.stop()


def test_a_goodbye_on_a_slow_link_is_resent_until_heard_not_lost_with_the_closing_peer(
    tmp_path: Path,
) -> None:
    """Bo's frames are held 300 ms (a bad Wi-Fi link, where a lost notice is sent again later):
    his goodbye must still reach Ann before he closes, or she waits for a timeout, sees him as
    gone, and a table of two or three left alone can no longer agree on anything (a CI run lost
    a whole table so: the last laptop never heard the others' leaves at 30 % loss)."""
    table = _unique("Slow goodbye")
    ann = PeerProcess(headless("host", "Ann", table, "--players", "3"), tmp_path / "ann")
    held = {"NERTS_LAN_LINK_DELAY_MS": "300,300"}
    bo = PeerProcess(headless("join", "Bo", table), tmp_path / "bo", env=held)
    try:
        ann.wait_for("hosting")
        bo_id = bo.wait_for("joined")["peer"]
        bo.leave()
        assert bo.finish(30) == 0
        ann.wait_for("peer_left", timeout=15, peer=bo_id)
        assert not ann.events("peer_gone")
    finally:
        ann.stop()
        bo.stop()


@not_on_windows("no SIGSTOP/SIGCONT to freeze a process as a closed lid does")
def test_a_peer_the_table_went_on_without_says_it_rejoins_and_starts_no_round_twice(
    tmp_path: Path,
) -> None:
    """Cy is stopped (a laptop lid) until the table lets it go, then continued: it rejoins and
    catches up from a snapshot of the round under way. Three laptops: at two, each half of a
    table that a pause splits may go on alone (issue 14), and then Cy need not rejoin."""
    table = _unique("Lid")
    rounds = ["--rounds", "3", *SLOW]
    ann = PeerProcess(headless("host", "Ann", table, "--players", "3", *rounds), tmp_path / "ann")
    bo = PeerProcess(headless("join", "Bo", table, *rounds), tmp_path / "bo")
    cy = PeerProcess(headless("join", "Cy", table, *rounds), tmp_path / "cy")
    try:
        ann.wait_for("hosting")
        cy.wait_for("round_started", timeout=30)
        cy_id = cy.wait_for("joined")["peer"]
        os.kill(cy.pid, signal.SIGSTOP)
        try:
            ann.wait_for("peer_gone", timeout=20, peer=cy_id)
        finally:
            os.kill(cy.pid, signal.SIGCONT)
        ann.wait_for("peer_returned", timeout=20, peer=cy_id)
        assert cy.finish(120) == 0, cy.stderr[-3000:]
        assert ann.finish(120) == 0, ann.stderr[-3000:]
        printed = [r["event"] for r in cy.lines]
        assert "rejoining" in printed, cy.lines
        # An action that raced a round's end may be ignored; our own rejoin never is.
        own = [r for r in cy.events("ignored") if "removed from the table" in r["reason"]]
        assert not own, cy.lines
        # Nor are the others' moves that came after their round, which it catches up through.
        assert all(r["peer"] == cy_id for r in cy.events("ignored")), cy.lines
        started = Counter(r["round"] for r in cy.events("round_started"))
        assert started and set(started.values()) == {1}, cy.lines
        ann_hashes = {r["round"]: r["state_hash"] for r in ann.events("round_over")}
        assert all(ann_hashes[r["round"]] == r["state_hash"] for r in cy.events("round_over"))
    finally:
        ann.stop()
        bo.stop()
        cy.stop()
