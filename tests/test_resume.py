"""A match brought back from a match log (``nerts_lan.lan.resume``): when it is, what the new
table's first entry folds to on every peer, and the logs that are not trusted with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nerts_lan.lan.comeback import live_table
from nerts_lan.lan.resume import NotResumable, Resumable, match_to_resume
from nerts_lan.matchlog.file import MatchLogWriter
from nerts_lan.rules.actions import MalformedError
from nerts_lan.rules.state import Options
from nerts_lan.table.commands import (
    AddBot,
    Create,
    Hello,
    ResumedMatch,
    Sit,
    TableSettings,
    command_from_wire,
)
from nerts_lan.table.machine import TableMachine, TablePhase
from nerts_lan.table.session import EntryIgnored

SETTINGS = TableSettings("Kitchen", Options(), teams=3)
ANN, BO = "ann-1", "bo-2"


def resumable_log(
    folder: Path,
    table_id: str,
    rounds: list[list[int]],
    phase: str = "seeding",
    ann: str = ANN,
    **more: Any,
) -> Path:
    """Ann's log (her peer id: ``ann``) of a table named Kitchen where Ann, Bo and a bot sat,
    after ``rounds`` (their scores); ``more``: fields of its last snapshot to change."""
    path = folder / f"{table_id}-{ann}.nlog"
    writer = MatchLogWriter(path)
    machine = TableMachine(ann)
    for peer in (ann, BO):
        writer.member("joined", peer)
        machine.member_joined(peer)
    entries = [(ann, Create(SETTINGS)), (ann, Hello("Ann")), (BO, Hello("Bo"))]
    entries += [(ann, Sit(0)), (BO, Sit(1)), (ann, AddBot(2, "easy"))]
    for ts, (peer, command) in enumerate(entries, start=1):
        writer.entry(ts, peer, command.to_wire())
        machine.stable_entry((ts, peer), command.to_wire())
    snapshot = {**machine.snapshot(), "phase": phase, "round": len(rounds), "rounds": rounds}
    writer.snapshot(len(entries), {**snapshot, **more})
    writer.close()
    return path


def _resumed_table(resumed: ResumedMatch, host: str = ANN) -> TableMachine:
    """The new table once its host's first entry is stable."""
    machine = TableMachine(host)
    machine.member_joined(host)
    machine.stable_entry((1, host), Create(SETTINGS, resumed).to_wire())
    return machine


def test_a_match_whose_rounds_ended_goes_on_with_its_next_round_and_its_scores(
    tmp_path: Path,
) -> None:
    path = resumable_log(tmp_path, "a1b2c3d4", [[10, -2, 4], [7, 12, -1]])
    decision = match_to_resume(path, "a1b2c3d4", ANN)
    assert isinstance(decision, Resumable)
    assert decision.next_round == 3 and decision.settings == SETTINGS
    assert list(decision.totals.values()) == [17, 10, 3]  # in team order
    table = _resumed_table(decision.match)
    assert table.phase is TablePhase.SEEDING and table.round_number == 3
    assert table.match is not None and table.match.totals == decision.totals
    assert table.resumed_from == "a1b2c3d4"
    # Ann plays her seat and runs the bot; a bot plays Bo's seat until Bo is back.
    assert {seat.player: (seat.controller, seat.bot) for seat in table.seats} == {
        "Ann": (ANN, None),
        "Bo": (ANN, SETTINGS.takeover_level),
        "Bot 1": (ANN, "easy"),
    }
    table.member_returned(BO)
    assert table.seat_of("Bo") is not None and table.seat_of("Bo").controller == BO


def test_every_peer_folds_the_resumed_entry_alike_and_a_snapshot_carries_it(
    tmp_path: Path,
) -> None:
    path = resumable_log(tmp_path, "a1b2c3d4", [[10, -2, 4]])
    decision = match_to_resume(path, "a1b2c3d4", ANN)
    assert isinstance(decision, Resumable)
    wire = Create(SETTINGS, decision.match).to_wire()
    assert command_from_wire(wire) == Create(SETTINGS, decision.match)
    ours, theirs = _resumed_table(decision.match), _resumed_table(decision.match)
    assert ours.digest() == theirs.digest()
    joiner = TableMachine.from_snapshot(BO, ours.snapshot())
    assert joiner.digest() == ours.digest() and joiner.resumed_from == "a1b2c3d4"
    assert "resumed_from" not in TableMachine(ANN).snapshot()  # other tables' hashes unchanged


def test_a_finished_match_or_one_without_an_ended_round_is_not_resumed(tmp_path: Path) -> None:
    over = resumable_log(tmp_path, "0000000a", [[60, 1, 2], [50, 3, 4]], phase="over")
    decision = match_to_resume(over, "0000000a", ANN)
    assert isinstance(decision, NotResumable) and not decision.told
    fresh = resumable_log(tmp_path, "0000000b", [])
    decision = match_to_resume(fresh, "0000000b", ANN)
    assert isinstance(decision, NotResumable) and not decision.told


def test_a_damaged_log_is_told_in_one_line_and_not_resumed(tmp_path: Path) -> None:
    path = resumable_log(tmp_path, "0000000c", [[10, -2, 4]])
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # a flipped byte in the middle: later records are lost
    path.write_bytes(bytes(data))
    decision = match_to_resume(path, "0000000c", ANN)
    assert isinstance(decision, NotResumable) and decision.told
    assert "damaged" in decision.reason and "\n" not in decision.reason
    torn = resumable_log(tmp_path, "0000000d", [[10, -2, 4]])
    with torn.open("ab") as file:
        file.write(b"\x00\x00\x01")  # a torn last record: an ordinary crash
    assert isinstance(match_to_resume(torn, "0000000d", ANN), Resumable)
    junk = tmp_path / f"0000000e-{ANN}.nlog"
    junk.write_bytes(b"not a log at all")
    decision = match_to_resume(junk, "0000000e", ANN)
    assert isinstance(decision, NotResumable) and decision.told
    missing = match_to_resume(tmp_path / "gone.nlog", "0000000f", ANN)
    assert isinstance(missing, NotResumable) and "cannot read" in missing.reason


def test_another_players_log_or_a_match_the_table_would_refuse_is_not_resumed(
    tmp_path: Path,
) -> None:
    path = resumable_log(tmp_path, "0000000a", [[10, -2, 4]])
    foreign = tmp_path / "0000000a-cy-3.nlog"
    foreign.write_bytes(path.read_bytes())  # Ann's log under Cy's name
    decision = match_to_resume(foreign, "0000000a", "cy-3")
    assert isinstance(decision, NotResumable) and "not written by this player" in decision.reason
    lopsided = resumable_log(
        tmp_path, "0000000b", [[10, -2, 4]], seats=[["Ann", 0, ANN, ANN, None]] * 2
    )
    decision = match_to_resume(lopsided, "0000000b", ANN)
    assert isinstance(decision, NotResumable) and decision.told


@pytest.mark.parametrize(
    "resumed",
    [
        {"from": "x", "seats": [], "rounds": [[1]]},
        {"from": "x", "seats": [["Ann", 0, None, None]], "rounds": [[1]]},
        {"from": "x", "seats": [["Ann", 0, ANN, "hard"]], "rounds": [[1]]},
        {"from": "x", "seats": [["Ann", 0, ANN, None]], "rounds": [[10**9]]},
        {"from": "x", "seats": [["Ann", "0", ANN, None]], "rounds": [[1]]},
        {"from": "", "seats": [["Ann", 0, ANN, None]], "rounds": [[1]]},
        "everything",
    ],
)
def test_a_hostile_resumed_entry_is_malformed(resumed: Any) -> None:
    wire = {**Create(SETTINGS).to_wire(), "resumed": resumed}
    with pytest.raises(MalformedError):
        command_from_wire(wire)


def test_a_resumed_entry_the_table_refuses_leaves_it_uncreated() -> None:
    seat = ("Ann", 0, ANN, None)
    for resumed in [
        ResumedMatch("x", (seat,), ((500,),)),  # over already
        ResumedMatch("x", (seat, ("Bo", 0, BO, None)), ((1,),)),  # two on a singles team
        ResumedMatch("x", (seat, ("Ann", 1, BO, None)), ((1, 2),)),  # one name twice
        ResumedMatch("x", (seat,), ((1, 2),)),  # scores of teams it does not have
    ]:
        table = _resumed_table(resumed)
        assert table.settings is None and table.match is None
        assert any(isinstance(event, EntryIgnored) for event in table.take_events())


def test_a_log_whose_match_a_newer_table_went_on_with_is_no_live_table(tmp_path: Path) -> None:
    old = resumable_log(tmp_path, "0000000a", [[10, -2, 4]])
    decision = match_to_resume(old, "0000000a", ANN)
    assert isinstance(decision, Resumable)
    newer = tmp_path / f"0000000b-{ANN}.nlog"
    writer = MatchLogWriter(newer)
    writer.member("joined", ANN)
    writer.entry(1, ANN, Create(SETTINGS, decision.match).to_wire())
    writer.entry(2, ANN, Hello("Ann").to_wire())
    writer.member("left", ANN)
    writer.close()
    # Ann left the resumed table on purpose: neither it nor the table it continued is offered.
    assert live_table(tmp_path, ANN, "Kitchen") is None
