"""The table fold: lobby, seats, commit-reveal seed, authorised actions, lost seats, the match."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from nerts_lan.rules.actions import Flip, MalformedError
from nerts_lan.rules.engine import legal_actions
from nerts_lan.rules.state import Options, state_digest
from nerts_lan.table.commands import (
    Act,
    AddBot,
    Commit,
    Create,
    Hello,
    Ready,
    RemoveBot,
    Reveal,
    Sit,
    Stand,
    Start,
    TableCommand,
    TableSettings,
    command_from_wire,
)
from nerts_lan.table.machine import CommitDue, RevealDue, TableMachine, TablePhase, commit_digest
from nerts_lan.table.replica import ActionRejected, Ranking, replay_log
from nerts_lan.table.session import (
    EntryIgnored,
    IgnoredKind,
    MatchEnded,
    PeerGone,
    PeerReturned,
    RoundStarted,
)
from net import OrderingCore


class Log:
    """A hand-made total order fed to several machines, as the network core would."""

    def __init__(self, peers: list[str], rank: Ranking | None = None, salt: str = "") -> None:
        self.machines = {peer: TableMachine(peer, rank) for peer in peers}
        self.salt = salt  # what the nonces are made of: another salt, other deals
        self.clock = 0
        self.nonces: dict[tuple[str, int], bytes] = {}
        self.events: dict[str, list[Any]] = {}

    def join(self, *peers: str) -> None:
        for machine in self.machines.values():
            for peer in peers:
                machine.member_joined(peer)

    def post(self, peer: str, command: TableCommand) -> None:
        self.post_wire(peer, command.to_wire())

    def post_wire(self, peer: str, payload: Any) -> None:
        """A payload as it came over the network, hostile or not."""
        self.clock += 1
        for machine in self.machines.values():
            machine.stable_entry((self.clock, peer), payload)
        self._duties()

    def gone(self, peer: str) -> None:
        for name, machine in self.machines.items():
            if name != peer:
                machine.member_gone(peer)
        self._duties()

    def back(self, peer: str) -> None:
        for name, machine in self.machines.items():
            if name != peer:
                machine.member_returned(peer)
        self._duties()

    def _duties(self) -> None:
        # Each machine's duties are carried out by its own peer, as the session does.
        for peer, machine in list(self.machines.items()):
            for event in machine.take_events():
                self.events.setdefault(peer, []).append(event)
                if isinstance(event, CommitDue):
                    # Deterministic, so that a test plays the same deals on every run.
                    seed = f"{self.salt}/{peer}/{event.round}/{self.clock}"
                    nonce = hashlib.sha256(seed.encode()).digest()
                    self.nonces[(peer, event.round)] = nonce
                    self.post(peer, Commit(event.round, commit_digest(nonce)))
                elif isinstance(event, RevealDue):
                    nonce = self.nonces[(peer, event.round)]
                    self.post(peer, Reveal(event.round, nonce.hex()))


@pytest.fixture
def table() -> Log:
    return kitchen(Log(["a", "b", "c"]))


def kitchen(log: Log, options: Options | None = None) -> Log:
    """Ann creates the Kitchen table (``options``, or a target of 15); Bo and Cy join it."""
    log.join("a")
    log.post("a", Create(TableSettings("Kitchen", options or Options(target=15), teams=4)))
    log.join("b", "c")
    for peer, name in (("a", "Ann"), ("b", "Bo"), ("c", "Cy")):
        log.post(peer, Hello(name))
    return log


def _start(log: Log) -> None:
    log.post("a", Sit(0))
    log.post("b", Sit(1))
    log.post("a", AddBot(2, "hard"))
    for peer in ("a", "b"):
        log.post(peer, Ready(True))
    log.post("a", Start())


def test_seats_readiness_and_the_start_are_agreed(table: Log) -> None:
    a = table.machines["a"]
    table.post("a", Sit(0))
    table.post("b", Sit(0))  # full in singles mode
    assert [s.player for s in a.seats] == ["Ann"]
    assert any(
        isinstance(e, EntryIgnored) and "team Red is full" in e.reason for e in table.events["a"]
    )
    table.post("b", Sit(1))
    table.post("c", AddBot(2, "hard"))  # only the host adds bots
    assert a.can_start() == "waiting for Ann, Bo to be ready"
    table.post("b", Start())  # only the host starts
    assert a.phase is TablePhase.LOBBY
    table.post("a", Ready(True))
    table.post("b", Ready(True))
    assert a.can_start() is None
    table.post("a", Start())
    assert {m.phase for m in table.machines.values()} == {TablePhase.PLAYING}
    digests = {state_digest(m.replica.view) for m in table.machines.values()}  # type: ignore[union-attr]
    assert len(digests) == 1
    assert a.round_table is not None and a.round_table.team_names == ("Red", "Blue")


def test_the_seed_depends_on_every_members_nonce(table: Log) -> None:
    _start(table)
    first = table.machines["a"].replica.view  # type: ignore[union-attr]
    again = Log(["a", "b", "c"], salt="again")
    again.join("a")
    again.post("a", Create(TableSettings("Kitchen", Options(target=15), teams=4)))
    again.join("b", "c")
    for peer, name in (("a", "Ann"), ("b", "Bo"), ("c", "Cy")):
        again.post(peer, Hello(name))
    _start(again)
    second = again.machines["a"].replica.view  # type: ignore[union-attr]
    assert state_digest(first) != state_digest(second)  # other nonces, another deal


def test_a_bad_reveal_contributes_nothing_and_does_not_stall_the_round(table: Log) -> None:
    a = table.machines["a"]
    table.post("a", Sit(0))
    table.post("a", Ready(True))
    # c cheats: its reveal will not match. Intercept its duties by hand.
    original = table._duties

    def cheating_duties() -> None:
        for event in table.machines["c"].take_events():
            if isinstance(event, RevealDue):
                table.post("c", Reveal(event.round, "00" * 32))
            elif isinstance(event, CommitDue):
                table.post("c", Commit(event.round, "ab" * 32))
        original()

    table._duties = cheating_duties  # type: ignore[method-assign]
    table.post("a", Start())
    assert a.phase is TablePhase.PLAYING and a.reveals["c"] == ""


def test_actions_count_only_from_the_laptop_that_plays_the_seat(table: Log) -> None:
    _start(table)
    a, b = table.machines["a"], table.machines["b"]
    state = a.replica.view  # type: ignore[union-attr]
    flip = next(x for x in legal_actions(state, "Ann") if type(x).__name__ == "Flip")
    table.post("b", Act.of(1, flip))  # b forges Ann's flip
    assert any(
        isinstance(e, ActionRejected) and "not played from that laptop" in e.reason
        for e in table.events["a"]
    )
    table.post("a", Act.of(1, flip))
    table.post("a", Act(1, {"by": "Bot 1", "do": "flip"}))  # a runs the bot
    assert a.digest() == b.digest()
    assert a.replica.stable.teams[0].waste and a.replica.stable.teams[2].waste  # type: ignore[union-attr]


def test_a_lost_member_is_played_by_a_bot_and_takes_its_seat_back(table: Log) -> None:
    _start(table)
    table.gone("b")
    a = table.machines["a"]
    seat = a.seat_of("Bo")
    assert seat is not None and seat.controller == "a" and seat.bot == "medium"
    assert any(isinstance(e, PeerGone) and e.players == ("Bo",) for e in table.events["a"])
    table.post("a", Act(1, {"by": "Bo", "do": "flip"}))
    assert a.replica.stable.teams[1].waste  # type: ignore[union-attr]
    table.back("b")
    seat = a.seat_of("Bo")
    assert seat is not None and seat.controller == "b" and seat.bot is None
    assert any(isinstance(e, PeerReturned) for e in table.events["a"])


def test_rounds_follow_each_other_and_scores_carry_over(table: Log) -> None:
    _start(table)
    a = table.machines["a"]
    for number in range(1, 4):
        assert a.phase is TablePhase.PLAYING and a.round_number == number
        # Everyone declares stuck until the round dies: quick, fruitless rounds.
        while a.phase is TablePhase.PLAYING and a.round_number == number:
            for player, peer in (("Ann", "a"), ("Bo", "b"), ("Bot 1", "a")):
                if a.phase is TablePhase.PLAYING and a.round_number == number:
                    table.post(peer, Act(number, {"by": player, "do": "stuck"}))
    # Dead rounds cost every team its nerts pile: nobody reaches the target, the match goes on
    # with round 4 dealt, and the scores are agreed on every peer.
    assert a.match is not None and a.match.totals == {"Red": -78, "Blue": -78, "Green": -78}
    assert len({m.digest() for m in table.machines.values()}) == 1
    assert not any(isinstance(e, MatchEnded) for e in table.events["a"])
    assert sum(isinstance(e, RoundStarted) for e in table.events["a"]) == 4


def test_a_snapshot_restores_the_same_table(table: Log) -> None:
    _start(table)
    a = table.machines["a"]
    table.post("a", Act(1, {"by": "Ann", "do": "flip"}))
    restored = TableMachine.from_snapshot("c", a.snapshot())
    assert restored.digest() == a.digest()
    assert restored.phase is TablePhase.PLAYING and restored.seat_of("Bo") is not None


def test_a_tie_the_draw_gives_to_the_higher_peer_id_is_folded_in_the_core_order() -> None:
    """Ann's and Bo's flips carry the same timestamp and the core's draw puts Bo's first. Every
    machine held both tentatively, and Di caught up from a snapshot taken between the two: each
    folds both flips, Bo's then Ann's, nothing taken as 'already had', and all agree."""
    rank = OrderingCore("a", ["a", "b", "c"], 0.0, salt=b"tie table").rank
    log = kitchen(Log(["a", "b", "c"], rank))
    _start(log)
    a = log.machines["a"]
    assert a.replica is not None and a.phase is TablePhase.PLAYING
    dealt = a.replica.stable
    tie = next(t for t in range(log.clock + 1, log.clock + 99) if rank((t, "b")) < rank((t, "a")))
    log.clock = tie
    ann, bo = (tie, "a"), (tie, "b")
    flips = {ann: {"by": "Ann", "do": "flip"}, bo: {"by": "Bo", "do": "flip"}}
    for machine in log.machines.values():
        for key in (ann, bo):
            machine.tentative_entry(key, Act(1, flips[key]).to_wire())
    for machine in log.machines.values():
        machine.stable_entry(bo, Act(1, flips[bo]).to_wire())
    log.machines["d"] = TableMachine.from_snapshot("d", a.snapshot(), rank)
    for machine in log.machines.values():
        machine.stable_entry(ann, Act(1, flips[ann]).to_wire())
    expected = state_digest(replay_log(dealt, [(bo, flips[bo]), (ann, flips[ann])]))
    assert expected != state_digest(replay_log(dealt, [(bo, flips[bo])]))  # Ann's flip counts
    for name, machine in log.machines.items():
        assert machine.replica is not None and machine.replica.pending == [], name
        assert state_digest(machine.replica.stable) == expected, name
    assert len({m.digest() for m in log.machines.values()}) == 1


@pytest.mark.parametrize(
    "payload",
    [
        None,
        5,
        "x",
        [],
        {"k": 3},
        {"k": "sit", "team": "one"},
        {"k": "sit", "team": 99},
        {"k": "hello", "name": ""},
        {"k": "hello", "name": "x" * 500},
        {"k": "ready", "on": 1},
        {"k": "commit", "r": 1, "d": "zz"},
        {"k": "act", "r": 1, "a": "flip"},
        {"k": "create", "settings": {"name": "again"}},
    ],
)
def test_hostile_entries_are_ignored_identically(table: Log, payload: Any) -> None:
    before = {m.digest() for m in table.machines.values()}
    table.post_wire("c", payload)
    after = {m.digest() for m in table.machines.values()}
    assert len(before) == 1 and after == before
    assert isinstance(table.events["a"][-1], EntryIgnored)


def _end_round_dead(log: Log) -> None:
    a = log.machines["a"]
    number = a.round_number
    while a.phase is TablePhase.PLAYING and a.round_number == number:
        for seat in list(a.seats):
            if a.phase is TablePhase.PLAYING and a.round_number == number:
                log.post(
                    seat.controller or "a",
                    Act(number, {"by": seat.player, "do": "stuck"}),
                )


def test_someone_joining_mid_match_watches_then_takes_a_bots_seat_next_round(table: Log) -> None:
    _start(table)
    # The newcomer catches up from a snapshot, then everyone sees it join.
    table.machines["d"] = TableMachine.from_snapshot("d", table.machines["a"].snapshot())
    table.join("d")
    table.post("d", Hello("Di"))
    table.post("d", Sit(0))  # Ann's seat is a person's: refused
    assert isinstance(table.events["a"][-1], EntryIgnored)
    table.post("d", Sit(2))  # the bot's seat
    a = table.machines["a"]
    assert a.claims == {"d": "Bot 1"}
    table.post("d", Act(1, {"by": "Bot 1", "do": "flip"}))
    assert any(
        isinstance(e, ActionRejected) and "not played from that laptop" in e.reason
        for e in table.events["a"]
    )  # it watches this round
    _end_round_dead(table)
    seat = a.seat_of("Di")
    assert seat is not None and seat.team == 2 and seat.controller == "d" and seat.bot is None
    assert a.replica is not None and a.replica.view.table.team_of("Di") == 2
    table.post("d", Act(2, {"by": "Di", "do": "flip"}))
    assert a.replica.stable.teams[2].waste
    assert len({m.digest() for m in table.machines.values()}) == 1


WIRE_FORMS: list[tuple[TableCommand, dict[str, Any]]] = [
    (Hello("Ann"), {"k": "hello", "name": "Ann"}),
    (Sit(1), {"k": "sit", "team": 1}),
    (Stand(), {"k": "stand"}),
    (Ready(False), {"k": "ready", "on": False}),
    (AddBot(2, "easy"), {"k": "bot", "team": 2, "level": "easy"}),
    (RemoveBot("Bot 1"), {"k": "unbot", "player": "Bot 1"}),
    (Start(), {"k": "start"}),
    (Commit(3, "ab" * 32), {"k": "commit", "r": 3, "d": "ab" * 32}),
    (Reveal(3, "cd" * 32), {"k": "reveal", "r": 3, "n": "cd" * 32}),
    (Act.of(2, Flip("Ann")), {"k": "act", "r": 2, "a": {"by": "Ann", "do": "flip"}}),
]


@pytest.mark.parametrize(("command", "wire"), WIRE_FORMS)
def test_every_command_has_one_wire_form_and_parses_back(
    command: TableCommand, wire: dict[str, Any]
) -> None:
    # The wire form goes over the network and into saved match logs: it never changes.
    assert command.to_wire() == wire
    assert command_from_wire(wire) == command


def test_create_carries_the_settings_on_the_wire() -> None:
    settings = TableSettings("Den", Options(target=20), teams=2, per_team=2)
    wire = Create(settings).to_wire()
    assert wire == {"k": "create", "settings": settings.to_wire()}
    assert command_from_wire(wire) == Create(settings)


@pytest.mark.parametrize(
    "payload",
    [None, {"k": "dance"}, {"k": "sit"}, {"k": "bot", "team": 0, "level": "god"}, {"k": "unbot"}],
)
def test_a_payload_not_of_a_commands_form_is_malformed(payload: Any) -> None:
    with pytest.raises(MalformedError):
        command_from_wire(payload)


def test_malformed_entries_are_told_apart_from_refused_ones(table: Log) -> None:
    table.post_wire("b", {"k": "sit", "team": "one"})
    assert table.events["a"][-1] == EntryIgnored(
        "b", "team must be a number", IgnoredKind.MALFORMED
    )
    table.post("b", Start())
    last = table.events["a"][-1]
    assert isinstance(last, EntryIgnored) and last.kind is IgnoredKind.REFUSED
    assert last.reason == "only the host may do that"
    assert table.machines["a"].phase is TablePhase.LOBBY


def test_a_phase_prints_as_the_word_adverts_and_snapshots_carry() -> None:
    assert [str(phase) for phase in TablePhase] == [
        "lobby",
        "seeding",
        "revealing",
        "playing",
        "over",
    ]
    assert f"{TablePhase.OVER}" == "over" and TablePhase.LOBBY == "lobby"
    assert str(IgnoredKind.MALFORMED) == "malformed"
