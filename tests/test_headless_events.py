"""What a headless peer prints for the table's events around seats, leaves and rejoins, from a
real table machine fed a real order of commands (``headless.record_of``)."""

from __future__ import annotations

from typing import Any

from nerts_lan.headless.play import record_of
from nerts_lan.rules.state import Options
from nerts_lan.table.commands import Create, Hello, Sit, Start, TableCommand, TableSettings
from nerts_lan.table.machine import TableMachine
from nerts_lan.table.session import LeftBehind, TablePaused


def _kitchen() -> tuple[TableMachine, list[Any]]:
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
    _, events = _kitchen()
    printed = _printed(events)
    assert [r["reason"] for r in printed if r["event"] == "ignored"] == [
        "only the host may do that"
    ], printed


def test_a_peer_that_left_is_told_from_one_that_went_silent() -> None:
    machine, _ = _kitchen()
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
