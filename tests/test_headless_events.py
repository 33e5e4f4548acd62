"""What a headless peer prints for the table's events around seats, leaves and rejoins, from a
real table machine fed a real order of commands (``headless.record_of``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nerts_lan.headless.play import record_of
from nerts_lan.rules.actions import Flip
from nerts_lan.rules.engine import deal_round
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import Options, Outcome, Table
from nerts_lan.table.commands import Act, Create, Hello, Sit, Start, TableCommand, TableSettings
from nerts_lan.table.lobby_view import SeatStatus
from nerts_lan.table.machine import TableMachine
from nerts_lan.table.replica import RoundEnded
from nerts_lan.table.session import (
    EntryIgnored,
    LeftBehind,
    MatchEnded,
    RoundStarted,
    TablePaused,
)


def kitchen() -> tuple[TableMachine, list[Any]]:
    """Ann's table with Bo and Cy, as Ann's machine folds it; the events it gives."""
    machine = TableMachine("ann")
    events: list[Any] = []
    clock = 0

    def post(peer: str, command: TableCommand) -> None:
        nonlocal clock
        clock += 1
        machine.stable_entry((clock, peer), command.to_wire())
        events.extend(machine.take_events())

    machine.member_joined("ann")
    post("ann", Create(TableSettings("Kitchen", Options(), teams=3)))
    for peer in ("bo", "cy"):
        machine.member_joined(peer)
    for peer, name in (("ann", "Ann"), ("bo", "Bo"), ("cy", "Cy")):
        post(peer, Hello(name))
    post("ann", Sit(0))
    post("bo", Sit(1))
    post("cy", Sit(1))  # Bo and Cy both took the first free team at once: Bo was first
    post("bo", Start())  # only the host starts
    return machine, events


def _printed(events: list[Any]) -> list[dict[str, Any]]:
    return [r for r in map(record_of, events) if r is not None]


def test_a_seat_two_peers_asked_for_at_once_is_lobby_traffic_not_an_ignored_entry() -> None:
    _, events = kitchen()
    printed = _printed(events)
    assert [r["reason"] for r in printed if r["event"] == "ignored"] == [
        "only the host may do that"
    ], printed


def test_a_peer_that_left_is_told_from_one_that_went_silent() -> None:
    machine, _ = kitchen()
    machine.member_gone("bo", left=True)
    machine.member_gone("cy")
    printed = _printed(machine.take_events())
    assert [(r["event"], r["peer"]) for r in printed] == [("peer_left", "bo"), ("peer_gone", "cy")]


def test_a_peer_left_behind_by_the_table_says_it_rejoins_not_that_something_was_ignored() -> None:
    assert record_of(LeftBehind()) == {
        "event": "rejoining",
        "reason": "the table went on without us",
    }


def test_a_paused_table_and_its_return_are_printed() -> None:
    assert record_of(TablePaused(True)) == {
        "event": "table_paused",
        "reason": "waiting for the table",
    }
    assert record_of(TablePaused(False)) == {"event": "table_back"}


WAITING = SeatStatus("ann", "Ann", None, "0badcafe", 7777)
JOINED = SeatStatus("ann", "Ann", None, "0badcafe", 7777, joined=True)
OVER = MatchEnded(Match(("Red", "Blue"), 50))


class _Seat:
    """A LAN seat as the headless loop polls it: each poll the status then and what came."""

    lobby = None
    local_players = ("Ann",)

    def __init__(self, *polls: tuple[SeatStatus, list[Any]]) -> None:
        self._polls = list(polls)
        self.status = WAITING

    def wait(self, timeout: float) -> None:
        pass

    def poll(self) -> list[Any]:
        self.status, events = self._polls.pop(0)
        return events

    def start_error(self) -> None:
        return None

    def close(self, leave: bool) -> None:
        pass


def _played(
    seat: _Seat, monkeypatch: pytest.MonkeyPatch, capsys: Any, rounds: int | None = None
) -> list[dict[str, Any]]:
    """What the headless loop prints for ``seat`` (Ann's), to the match's end (or after
    ``rounds``, its ``--rounds``)."""
    from nerts_lan.headless import play

    monkeypatch.setattr(play, "LeaveRequest", _Staying)
    monkeypatch.setattr(play, "record_new_logs", lambda: None)
    config = play.PeerConfig("Ann", rounds=rounds)
    assert play._play(seat, config) == 0  # type: ignore[arg-type]
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_a_host_taking_its_seat_back_prints_joined_before_the_round_under_way(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The round under way (from the table's snapshot) comes in one poll, the status that says
    the table has us in the next, as a restarted host taking its seat back sees them when a
    poll falls between the network thread's posts."""
    table = Table(Options(), ("Red", "Blue"), (("Ann",), ("Bo",)))
    seat = _Seat(
        (WAITING, []),
        (WAITING, [RoundStarted(2, deal_round(table, "seed"))]),
        (JOINED, [OVER]),
    )
    printed = [line["event"] for line in _played(seat, monkeypatch, capsys)]
    assert printed == ["joined", "round_started", "match_over"]


def test_only_this_peers_own_late_moves_print_as_ignored(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Moves that came after their round, as a rejoined peer catches up through them: Bo's are
    the table's traffic, Ann's own is her player's and prints."""
    machine, _ = kitchen()  # dealing round 1: no round is in play
    for peer, player in (("bo", "Bo"), ("cy", "Cy"), ("ann", "Ann")):
        machine.stable_entry((100, peer), Act.of(1, Flip(player)).to_wire())
    late = machine.take_events()
    assert len(late) == 3 and all(isinstance(event, EntryIgnored) for event in late)

    printed = _played(_Seat((JOINED, [*late, OVER])), monkeypatch, capsys)

    ignored = [line for line in printed if line["event"] == "ignored"]
    assert ignored == [
        {"event": "ignored", "peer": "ann", "reason": "an action outside the round in play"}
    ]
    assert [line["event"] for line in printed] == ["joined", "ignored", "match_over"]


def test_a_peer_leaving_after_its_rounds_prints_nothing_of_the_round_dealt_after_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--rounds 1`` on a busy machine: round 1's end and round 2's deal come in one poll (a
    solo table deals the next round at once). The peer leaves after round 1, so its last line
    is round 1's end, not the start of a round it never plays."""
    table = Table(Options(), ("Red",), (("Ann",),))
    seat = _Seat(
        (JOINED, [RoundStarted(1, deal_round(table, "one"))]),
        (
            JOINED,
            [
                RoundEnded(Outcome("nerts", "Ann"), {"Red": 3}),
                RoundStarted(2, deal_round(table, "two")),
            ],
        ),
    )
    printed = _played(seat, monkeypatch, capsys, rounds=1)
    assert [(line["event"], line.get("round")) for line in printed] == [
        ("joined", None),
        ("round_started", 1),
        ("round_over", 1),
    ]


def test_the_match_ending_with_the_last_round_asked_for_is_still_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = Table(Options(), ("Red", "Blue"), (("Ann",), ("Bo",)))
    seat = _Seat(
        (JOINED, [RoundStarted(1, deal_round(table, "one"))]),
        (JOINED, [RoundEnded(Outcome("nerts", "Ann"), {"Red": 3, "Blue": 0}), OVER]),
    )
    printed = _played(seat, monkeypatch, capsys, rounds=1)
    assert [line["event"] for line in printed] == [
        "joined",
        "round_started",
        "round_over",
        "match_over",
    ]


class _Staying:
    """Nobody asks a headless peer under test to leave."""

    requested = False

    def listen(self) -> None:
        pass

    def left(self) -> None:
        pass

    def reactions_for(self, players: tuple[str, ...]) -> list[Any]:
        return []
