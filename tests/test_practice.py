"""Practice mode without a window: bots play, rounds end, the match goes on, our moves count."""

from __future__ import annotations

import pytest

from nerts_lan.bots.bot import Bot
from nerts_lan.practice import PracticeConfig, PracticeSession
from nerts_lan.rules.actions import Flip, Play
from nerts_lan.rules.cards import Card
from nerts_lan.rules.piles import Pile
from nerts_lan.rules.state import Options, RejectionKind
from nerts_lan.table.replica import ActionApplied, ActionRejected, RoundEnded
from nerts_lan.table.session import MatchEnded, RoundStarted, Session
from tests.kit import layout, piles, team


def _run(
    session: PracticeSession, until: float, step: float = 0.05, play_along: bool = False
) -> list[object]:
    """Poll until ``until``; with ``play_along`` the local seat plays too (as a bot would)."""
    me = Bot(session.local_players[0], "instant", "me")
    events: list[object] = []
    now = 0.0
    while now < until:
        events.extend(session.poll(now))
        if play_along and not session.waiting_for_next_round and session.round_number:
            action = me.decide(session.view)
            if action is not None:
                session.submit(action)
        now += step
    return events


def test_it_is_a_session() -> None:
    session: Session = PracticeSession(PracticeConfig(seed="s"))
    assert session.local_players == ("You",)
    assert session.table.team_names == ("You", "Ada", "Bo", "Cyd")


def test_the_first_poll_deals_round_one() -> None:
    session = PracticeSession(PracticeConfig(seed="s", opponents=2))
    events = session.poll(0.0)
    assert isinstance(events[0], RoundStarted) and events[0].number == 1
    assert len(session.view.teams) == 3


def test_bots_play_and_the_round_ends_with_scores_in_the_match() -> None:
    session = PracticeSession(PracticeConfig(seed="bots", opponents=2, delay_scale=0.05))
    events = _run(session, until=120.0, play_along=True)
    bot_moves = [e for e in events if isinstance(e, ActionApplied) and not e.local]
    assert len(bot_moves) > 50
    ended = [e for e in events if isinstance(e, RoundEnded)]
    assert len(ended) == 1
    assert session.match.rounds == (tuple(ended[0].scores[n] for n in session.table.team_names),)
    assert session.waiting_for_next_round


def test_rounds_follow_each_other_until_the_match_is_won() -> None:
    config = PracticeConfig(
        seed="match", opponents=2, delay_scale=0.05, intermission=1.0, options=Options(target=30)
    )
    session = PracticeSession(config)
    events = _run(session, until=900.0, step=0.1, play_along=True)
    started = [e.number for e in events if isinstance(e, RoundStarted)]
    assert started[:3] == [1, 2, 3]
    won = [e for e in events if isinstance(e, MatchEnded)]
    assert won and won[0].match.winner is not None
    assert max(won[0].match.totals.values()) >= 30


def test_next_round_waits_for_the_player_by_default() -> None:
    session = PracticeSession(PracticeConfig(seed="wait", opponents=1, delay_scale=0.05))
    _run(session, until=200.0, play_along=True)
    assert session.waiting_for_next_round and session.round_number == 1
    assert not any(isinstance(e, RoundStarted) for e in session.poll(500.0))
    session.next_round()
    assert [e.number for e in session.poll(501.0) if isinstance(e, RoundStarted)] == [2]


def _known_deal() -> PracticeSession:
    state = layout(
        team("You", ("You",), nerts="9C AS", work=("2S", "6S", "", "2C"), stock="3S 4S 5S"),
        team("Ada", ("Ada",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D"),
    )
    config = PracticeConfig(opponents=1, seed="known", delay_scale=1e6)
    return PracticeSession(config, first_deal=state)


def test_the_local_players_intents_apply_at_once() -> None:
    session = _known_deal()
    session.poll(0.0)
    session.submit(Play("You", Card.parse("AS"), Pile.parse("nerts"), Pile.parse("f")))
    session.submit(Flip("You"))
    events = session.poll(0.1)
    assert [type(e) for e in events] == [ActionApplied, ActionApplied]
    assert all(e.local for e in events if isinstance(e, ActionApplied))
    assert piles(session.view)["nerts"] == ["9C"]
    assert piles(session.view)["waste"] == ["5S", "4S", "3S"]


def test_a_refused_intent_comes_back_with_the_reason() -> None:
    session = _known_deal()
    session.poll(0.0)
    session.submit(Play("You", Card.parse("9C"), Pile.parse("nerts"), Pile.parse("w2")))
    (event,) = session.poll(0.1)
    assert isinstance(event, ActionRejected) and event.local
    assert event.reason == "9C is not on top of the nerts pile"
    assert event.kind is RejectionKind.ILLEGAL


def test_a_move_that_lost_the_race_names_who_got_there_first() -> None:
    state = layout(
        team("You", ("You",), nerts="9C 2S", work=("", "", "", "")),
        team("Ada", ("Ada",), nerts="KD QD 9H 2S", work=("KC", "KH", "KS", "QC")),
        foundations=(("AS", "Ada"),),
    )
    config = PracticeConfig(opponents=1, seed="race", level="instant")
    session = PracticeSession(config, first_deal=state)
    session.poll(0.0)
    session.poll(0.01)  # the instant bot plays its 2S on the ace
    session.submit(Play("You", Card.parse("2S"), Pile.parse("nerts"), Pile.parse("f1")))
    rejected = [e for e in session.poll(0.02) if isinstance(e, ActionRejected)]
    assert rejected and rejected[0].lost_race_to == "Ada"
    assert rejected[0].kind is RejectionKind.LOST_RACE


def test_only_the_local_player_submits() -> None:
    session = _known_deal()
    with pytest.raises(ValueError):
        session.submit(Flip("Ada"))


def test_partnership_puts_a_bot_beside_the_player() -> None:
    config = PracticeConfig(player="Sam", opponents=1, partners=True, seed="p")
    table = PracticeSession(config).table
    assert table.team_players[0][0] == "Sam" and len(table.team_players[0]) == 2
    assert all(len(players) == 2 for players in table.team_players)


@pytest.mark.parametrize(
    "changes",
    [{"opponents": 8}, {"opponents": -1}, {"level": "godlike"}, {"player": ""}],
)
def test_bad_configs_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        PracticeConfig(**changes)  # type: ignore[arg-type]


def test_a_paused_practice_stands_still_and_goes_on_where_it_stopped() -> None:
    def new() -> PracticeSession:
        session = PracticeSession(PracticeConfig(opponents=2, seed="pause"))
        session.poll(0.0)
        return session

    paused, straight = new(), new()
    paused.pause(1.0)
    assert paused.paused
    assert not any(isinstance(e, ActionApplied) for e in _poll_until(paused, 1.0, 60.0))
    paused.resume(60.0)
    assert not paused.paused
    # The same game as one never paused, 59 seconds later: the bots' moves are only delayed.
    later = _poll_until(paused, 60.0, 75.0)
    sooner = _poll_until(straight, 1.0, 16.0)
    assert [e for e in later if isinstance(e, ActionApplied)]
    assert [str(e) for e in later] == [str(e) for e in sooner]
    assert paused.view == straight.view


def _poll_until(session: PracticeSession, start: float, until: float) -> list[object]:
    """Every event of polling each 50 ms from ``start`` to ``until``."""
    events: list[object] = []
    for step in range(round((until - start) / 0.05)):
        events.extend(session.poll(start + step * 0.05))
    return events
