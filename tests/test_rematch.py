"""A rematch: once a match is over, anyone at the table starts a new one with the same people,
every seat moved on one team (partners change), the scores from zero, the same on every peer."""

from __future__ import annotations

from typing import Any

import pytest

from nerts_lan.bots.bot import Bot
from nerts_lan.lab.simgame import play_game
from nerts_lan.rules.state import Options
from nerts_lan.table.commands import (
    Act,
    AddBot,
    Create,
    Hello,
    Ready,
    Rematch,
    Sit,
    Start,
    TableSettings,
    command_from_wire,
)
from nerts_lan.table.machine import TablePhase
from nerts_lan.table.seating import Seating
from nerts_lan.table.session import EntryIgnored, MatchEnded, RoundStarted
from tests.test_table import Log

OPTIONS = Options(target=1, pile=3)
"""A match over after a round or two: a small nerts pile, and any positive total wins."""


def _seated(partnership: bool = False) -> Log:
    # The deals follow from the salt. With a target of 1 a match ends once a team scores; some
    # deals (the salt "") leave every team stuck and negative for round after round.
    log = Log(["a", "b", "c"], salt="den")
    log.join("a")
    teams = 2 if partnership else 3
    log.post(
        "a", Create(TableSettings("Den", OPTIONS, teams=teams, per_team=2 if partnership else 1))
    )
    log.join("b", "c")
    for peer, name in (("a", "Ann"), ("b", "Bo"), ("c", "Cy")):
        log.post(peer, Hello(name))
    log.post("a", Sit(0))
    log.post("b", Sit(1))
    if partnership:
        log.post("c", Sit(0))
        log.post("a", AddBot(1, "hard"))
    else:
        log.post("c", Sit(2))
    for peer in ("a", "b", "c"):
        log.post(peer, Ready(True))
    log.post("a", Start())
    return log


def _play_the_match_out(log: Log) -> None:
    """Every seat played by a hard bot from its own laptop until the match is over."""
    a = log.machines["a"]
    bots: dict[str, Bot] = {}
    for _ in range(20_000):
        if a.phase is TablePhase.OVER:
            return
        assert a.phase is TablePhase.PLAYING and a.replica is not None
        moved = False
        for seat in list(a.seating.seats):
            state = a.replica.view
            bot = bots.setdefault(seat.player, Bot(seat.player, "hard", seed=seat.player))
            action = bot.decide(state, 0.0)
            if action is not None and a.phase is TablePhase.PLAYING:
                assert seat.controller is not None
                log.post(seat.controller, Act.of(a.round_number, action))
                moved = True
        if not moved:
            for seat in list(a.seating.seats):
                if a.phase is TablePhase.PLAYING:
                    assert seat.controller is not None
                    log.post(
                        seat.controller, Act(a.round_number, {"by": seat.player, "do": "stuck"})
                    )
    pytest.fail("the match never ended")


def _teams(log: Log, peer: str = "a") -> dict[int, list[str]]:
    seats = log.machines[peer].seating.seats
    return {t: [s.player for s in seats if s.team == t] for t in sorted({s.team for s in seats})}


def test_a_rematch_keeps_the_people_moves_every_seat_and_starts_from_zero() -> None:
    log = _seated()
    _play_the_match_out(log)
    a = log.machines["a"]
    before = _teams(log)
    ended_after = a.round_number
    assert any(isinstance(e, MatchEnded) for e in log.events["a"])

    log.post("b", Rematch(ended_after))  # anyone at the table may ask, not only the host

    assert a.phase is TablePhase.PLAYING and a.round_number == ended_after + 1
    assert _teams(log) == {0: before[2], 1: before[0], 2: before[1]}
    assert (
        a.match is not None
        and a.match.rounds == ()
        and a.match.totals == dict.fromkeys(a.match.team_names, 0)
    )
    started = [e for e in log.events["c"] if isinstance(e, RoundStarted)][-1]
    assert started.number == ended_after + 1
    assert started.state.table.team_players == ((before[2][0],), (before[0][0],), (before[1][0],))
    assert len({m.digest() for m in log.machines.values()}) == 1

    _play_the_match_out(log)  # the rematch is a whole match of its own
    assert sum(isinstance(e, MatchEnded) for e in log.events["a"]) == 2


def test_two_players_asking_at_once_start_one_rematch() -> None:
    log = _seated()
    _play_the_match_out(log)
    a = log.machines["a"]
    ended_after = a.round_number
    log.post("b", Rematch(ended_after))
    log.post("c", Rematch(ended_after))  # the same press, ordered after: the match is on
    assert a.round_number == ended_after + 1
    ignored = [e for e in log.events["a"] if isinstance(e, EntryIgnored)]
    assert ignored[-1].reason == "no match is over to play again"
    assert len({m.digest() for m in log.machines.values()}) == 1


def test_no_rematch_while_a_match_is_on() -> None:
    log = _seated()
    a = log.machines["a"]
    log.post("b", Rematch(a.round_number))
    assert a.phase is TablePhase.PLAYING and a.round_number == 1
    assert [e for e in log.events["a"] if isinstance(e, EntryIgnored)][-1].reason == (
        "no match is over to play again"
    )


def test_a_partnership_rematch_changes_the_partners() -> None:
    log = _seated(partnership=True)
    assert _teams(log) == {0: ["Ann", "Cy"], 1: ["Bo", "Bot 1"]}
    _play_the_match_out(log)
    log.post("a", Rematch(log.machines["a"].round_number))
    assert _teams(log) == {0: ["Ann", "Bot 1"], 1: ["Bo", "Cy"]}
    assert all(len(players) == 2 for players in _teams(log).values())


def test_at_a_table_with_head_starts_everyone_keeps_their_seat_and_its_head_start() -> None:
    from dataclasses import replace

    from nerts_lan.rules.handicap import Handicap

    log = Log(["a", "b", "c"])
    log.join("a")
    options = replace(OPTIONS, handicaps=(("Blue", Handicap(pile=2)),))
    log.post("a", Create(TableSettings("Den", options, teams=3)))
    log.join("b", "c")
    for peer, name, team in (("a", "Ann", 0), ("b", "Bo", 1), ("c", "Cy", 2)):
        log.post(peer, Hello(name))
        log.post(peer, Sit(team))
        log.post(peer, Ready(True))
    log.post("a", Start())
    before = _teams(log)
    _play_the_match_out(log)
    log.post("c", Rematch(log.machines["a"].round_number))
    a = log.machines["a"]
    assert a.phase is TablePhase.PLAYING and _teams(log) == before  # Bo keeps Blue's head start
    assert a.replica is not None and len(a.replica.view.teams[1].nerts) == 2


def test_a_lone_team_has_nowhere_to_move() -> None:
    seating = Seating()
    settings = TableSettings("Solo", OPTIONS, teams=2)
    seating.sit("a", "Ann", 0, settings)
    seating.rotate(partnership=False)
    assert [(s.player, s.team) for s in seating.seats] == [("Ann", 0)]


@pytest.mark.parametrize("payload", [{"k": "rematch"}, {"k": "rematch", "r": "3"}])
def test_a_rematch_without_its_round_is_malformed(payload: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="round"):
        command_from_wire(payload)


@pytest.mark.parametrize("seed", [1, 2])
def test_at_a_simulated_lan_table_the_rematch_is_one_new_match_everywhere(seed: int) -> None:
    """Three real table peers over the simulated network, every one asking for a rematch when
    its match is over (the first to ask starts it): one rematch, seats moved, one state."""
    game = play_game(seed, 3, options=OPTIONS, rounds=20, until=60.0, rematches=1)
    machines = [app.table.machine for app in game.members()]
    assert len(machines) == 3
    assert {m.phase for m in machines} == {TablePhase.OVER}  # the rematch, played out too
    assert len({m.digest() for m in machines}) == 1
    first = {s.player: s.team for s in _first_seating(game.members()[0])}
    now = {s.player: s.team for s in machines[0].seating.seats}
    teams = sorted(set(first.values()))
    assert now == {p: teams[(teams.index(t) + 1) % len(teams)] for p, t in first.items()}
    digests = [app.round_digests for app in game.members()]
    assert all(d == digests[0] for d in digests) and len(digests[0]) >= 2


def _first_seating(app: Any) -> list[Any]:
    """The seats as the table's first match dealt them: its log folded up to the first deal."""
    from nerts_lan.table.machine import TableMachine

    machine = TableMachine(app.peer)
    for peer in app.founders:
        machine.member_joined(peer)
    for key, payload in app.stable_log:
        machine.stable_entry(key, payload)
        if machine.phase is TablePhase.PLAYING:
            return list(machine.seating.seats)
    raise AssertionError("no deal in the log")
