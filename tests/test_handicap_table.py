"""Handicaps at a table (issue 25): agreed once in the log's Create, folded the same by every
peer, never changed by a later frame, and refused naming the field when out of range."""

from __future__ import annotations

from typing import Any

from nerts_lan.rules.handicap import Handicap
from nerts_lan.rules.state import Options, state_digest
from nerts_lan.table.commands import AddBot, Create, Ready, Sit, Start, TableSettings
from nerts_lan.table.machine import TableMachine, TablePhase
from nerts_lan.table.session import EntryIgnored, IgnoredKind
from tests.test_table import Log, kitchen

HEAD_START = Handicap(pile=10, work=5, score=150)


def _created(handicaps: tuple[tuple[str, Handicap], ...]) -> Log:
    return kitchen(Log(["a", "b", "c"]), Options(target=15, handicaps=handicaps))


def _start(log: Log) -> None:
    log.post("a", Sit(0))
    log.post("b", Sit(1))
    log.post("a", AddBot(3, "hard"))
    for peer in ("a", "b"):
        log.post(peer, Ready(True))
    log.post("a", Start())


def _sizes(machine: TableMachine) -> list[tuple[int, int]]:
    view = machine.replica.view  # type: ignore[union-attr]
    return [(len(t.nerts), len(t.work)) for t in view.teams]


def test_every_peer_deals_the_hosts_handicaps_to_the_seated_teams() -> None:
    # Green has a handicap but nobody sits there: the round's table leaves it out.
    log = _created((("Blue", HEAD_START), ("Green", Handicap(score=200))))
    _start(log)
    machines = log.machines.values()
    assert {m.phase for m in machines} == {TablePhase.PLAYING}
    assert len({state_digest(m.replica.view) for m in machines}) == 1  # type: ignore[union-attr]
    a = log.machines["a"]
    assert a.round_table is not None
    assert a.round_table.team_names == ("Red", "Blue", "Purple")
    assert a.round_table.options.handicaps == (("Blue", HEAD_START),)
    assert _sizes(a)[:2] == [(13, 4), (10, 5)]
    assert all(_sizes(m) == _sizes(a) for m in machines)


def test_a_later_frame_claiming_another_handicap_changes_nothing() -> None:
    log = _created((("Blue", HEAD_START),))
    before = {m.digest() for m in log.machines.values()}
    claim = Options(target=15, handicaps=(("Red", Handicap(pile=5, score=400)),))
    log.post("c", Create(TableSettings("Kitchen", claim, teams=4)))
    log.post("a", Create(TableSettings("Kitchen", claim, teams=4)))
    assert {m.digest() for m in log.machines.values()} == before
    last = log.events["a"][-1]
    assert isinstance(last, EntryIgnored) and last.kind is IgnoredKind.REFUSED
    assert last.reason == "the table was already created"
    _start(log)
    a = log.machines["a"]
    assert a.round_table is not None
    assert a.round_table.options.handicaps == (("Blue", HEAD_START),)
    assert _sizes(a)[:2] == [(13, 4), (10, 5)]


def _create_wire(handicaps: Any) -> dict[str, Any]:
    wire = Create(TableSettings("Kitchen", teams=2)).to_wire()
    wire["settings"]["options"]["handicaps"] = handicaps
    return wire


def test_a_create_frame_with_a_bad_handicap_is_refused_naming_the_field() -> None:
    cases = [
        ({"Blue": {"score": 1000}}, "handicap of team 'Blue': handicap field 'score' must be"),
        ({"Blue": {"pile": -1}}, "handicap of team 'Blue': handicap field 'pile' must be"),
        ({"Blue": {"work": 2}}, "handicap field 'work' must be from 3 to 6"),
        ({"Blue": {"lives": 3}}, "unknown handicap field 'lives'"),
        ({"Green": {"work": 5}}, "names 'Green', not one of this table's teams"),
        ("all of them", "option 'handicaps' must map team names to handicaps"),
    ]
    for handicaps, message in cases:
        log = Log(["a", "b"])
        log.join("a", "b")
        log.post_wire("a", _create_wire(handicaps))
        last = log.events["a"][-1]
        assert isinstance(last, EntryIgnored) and last.kind is IgnoredKind.MALFORMED
        assert message in last.reason, (handicaps, last.reason)
        assert log.machines["a"].settings is None and log.machines["b"].settings is None


def test_a_snapshot_of_a_handicapped_table_restores_the_same_table() -> None:
    log = _created((("Blue", HEAD_START),))
    _start(log)
    a = log.machines["a"]
    restored = TableMachine.from_snapshot("c", a.snapshot())
    assert restored.digest() == a.digest()
    assert restored.settings is not None and restored.settings.options == a.settings.options  # type: ignore[union-attr]
