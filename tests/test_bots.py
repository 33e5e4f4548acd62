"""Bots: fair (they see only what their team sees), legal, never stalling, level by level."""

from __future__ import annotations

import random
import statistics

import pytest

from nerts_lan.bots.bot import HIDDEN_CARD, LEVELS, Bot, redact
from nerts_lan.rules.actions import Action, CallNerts, DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.rules.cards import Card
from nerts_lan.rules.engine import apply, deal_round, legal_actions
from nerts_lan.rules.piles import Pile
from nerts_lan.rules.state import Options, Rejection, State, Table, Tableau


def _table(teams: int = 2, players: int = 1, **options: int | bool) -> Table:
    return Table(
        Options(**options),  # type: ignore[arg-type]
        tuple(f"team{i + 1}" for i in range(teams)),
        tuple(tuple(f"t{i + 1}p{j + 1}" for j in range(players)) for i in range(teams)),
    )


def _cards(names: str) -> tuple[int, ...]:
    return tuple(Card.parse(name) for name in names.split())


def _play_with_bots(
    state: State, bots: list[Bot], max_actions: int = 3000
) -> tuple[State, list[Action]]:
    """Bots take turns on the current state (no delays) until the round ends."""
    done: list[Action] = []
    while state.outcome is None and len(done) < max_actions:
        acted = False
        for bot in bots:
            action = bot.decide(state)
            if action is None:
                continue
            acted = True
            after = apply(state, action)
            assert type(after) is not Rejection, (action, after)
            state = after  # type: ignore[assignment]
            done.append(action)
            if state.outcome is not None:
                break
        assert acted, "every bot waits: the round stalls"
    return state, done


def _mid_round_states(count: int) -> list[State]:
    """States from real rounds, after some play (some with a partnership)."""
    states = []
    for number in range(count):
        table = _table(teams=3, players=1 + number % 2)
        state = deal_round(table, f"view-{number}")
        bots = [Bot(p, "instant", number) for team in table.team_players for p in team]
        for _ in range(10 + 7 * number):
            for bot in bots:
                action = bot.decide(state)
                after = apply(state, action) if action is not None else None
                if isinstance(after, State) and after.outcome is None:
                    state = after
        states.append(state)
    return states


def _shuffle_hidden(state: State, team: int, rng: random.Random) -> State:
    """Another deal that looks the same to ``team``: its face-down cards (stock, nerts below
    the top, waste below the top) change places, and every other team's stock is reshuffled."""
    teams = list(state.teams)
    own = teams[team]
    hidden = list(own.stock) + list(own.nerts[:-1]) + list(own.waste[:-1])
    rng.shuffle(hidden)
    stock, rest = tuple(hidden[: len(own.stock)]), hidden[len(own.stock) :]
    nerts_below, waste_below = rest[: max(len(own.nerts) - 1, 0)], rest[len(own.nerts) - 1 :]
    teams[team] = Tableau(
        nerts=(*nerts_below, *own.nerts[-1:]) if own.nerts else (),
        work=own.work,
        stock=stock,
        waste=(*waste_below, *own.waste[-1:]) if own.waste else (),
        stuck=own.stuck,
    )
    for index, other in enumerate(teams):
        if index != team:
            other_stock = list(other.stock)
            rng.shuffle(other_stock)
            teams[index] = Tableau(
                nerts=other.nerts,
                work=other.work,
                stock=tuple(other_stock),
                waste=other.waste,
                stuck=other.stuck,
            )
    return state.with_teams(tuple(teams))


def test_redact_shows_only_face_up_cards() -> None:
    state = _mid_round_states(3)[2]
    view = redact(state, 0)
    for real, seen in zip(state.teams, view.teams):
        assert set(seen.stock) <= {HIDDEN_CARD} and len(seen.stock) == len(real.stock)
        assert seen.nerts[:-1] == (HIDDEN_CARD,) * (len(real.nerts) - 1)
        assert seen.nerts[-1:] == real.nerts[-1:]
        assert seen.waste[-1:] == real.waste[-1:] and len(seen.waste) == len(real.waste)
        assert seen.work == real.work and seen.stuck == real.stuck
    assert view.f_cards == state.f_cards and view.f_next == state.f_next


def test_choices_do_not_depend_on_hidden_cards() -> None:
    rng = random.Random(7)
    states = _mid_round_states(12)
    changed = 0
    for number, state in enumerate(states):
        for player in (state.table.team_players[0][-1], state.table.team_players[1][0]):
            team = state.table.team_of(player)
            assert team is not None
            other = _shuffle_hidden(state, team, rng)
            changed += other != state
            for level in LEVELS:
                first = Bot(player, level, number).decide(state, 1.0)
                second = Bot(player, level, number).decide(other, 1.0)
                assert first == second, (level, player)
    assert changed >= 20  # the hidden cards really differed


def test_bots_play_legal_actions_to_the_end_of_a_round() -> None:
    for number in range(6):
        table = _table(teams=1 + number % 4, players=1 + number % 2)
        state = deal_round(table, f"legal-{number}")
        level = LEVELS[number % len(LEVELS)]
        bots = [Bot(p, level, number) for team in table.team_players for p in team]
        final, done = _play_with_bots(state, bots)
        assert final.outcome is not None
        assert any(type(action) is Play for action in done)


def test_each_decision_is_among_the_legal_actions() -> None:
    for state in _mid_round_states(6):
        for team in state.table.team_players:
            for player in team:
                action = Bot(player, "hard", 3).decide(state, 0.0)
                if action is not None:
                    assert action in legal_actions(state, player)


def _dead_end_state(teams: int = 1) -> State:
    """A solo layout with no useful move: only JH can shuttle between QS and QC."""
    table = _table(teams=teams)
    nerts = _cards("AS AH AD AC 10S 10C JD QD QH 2S 2H 2D JS")
    work = (_cards("KH QS JH"), _cards("KD QC"), _cards("KS"), _cards("KC"))
    used = set(nerts) | {card for pile in work for card in pile}
    stock = tuple(card for card in range(52) if card not in used)
    tableau = Tableau(nerts=nerts, work=work, stock=stock, waste=(), stuck=False)
    return State(table, (tableau,) * teams)


def test_a_bot_declares_stuck_after_a_fruitless_pass_and_never_shuttles() -> None:
    state = _dead_end_state()
    bot = Bot("t1p1", "hard", 1)
    flips = 0
    while True:
        action = bot.decide(state)
        assert action is not None
        if type(action) is DeclareStuck:
            break
        assert type(action) is Flip, action  # never JH back and forth
        flips += 1
        state = apply(state, action)  # type: ignore[assignment]
    assert 10 <= flips <= 14  # 30 stock cards, 3 at a time: one whole pass and no more
    final, done = _play_with_bots(state, [bot])
    assert final.outcome is not None and final.outcome.ending == "dead"
    assert not any(type(action) in (Play, SlideUnder) for action in done)
    assert len(done) < 200


def test_a_stuck_bot_waits_instead_of_flipping_forever() -> None:
    state = _dead_end_state(teams=2)
    bot = Bot("t1p1", "hard", 1)
    actions = []
    for _ in range(100):
        action = bot.decide(state)
        if action is None:
            break
        actions.append(action)
        state = apply(state, action)  # type: ignore[assignment]
    assert actions[-1] == DeclareStuck("t1p1")
    assert state.teams[0].stuck and bot.decide(state) is None


def _nerts_done_state(rival_nerts: int, teams: int = 2) -> State:
    """Team 1 has emptied its nerts pile; 2H is ready on its waste for the AH foundation."""
    table = _table(teams=teams)
    own = Tableau(
        nerts=(),
        work=(_cards("KS"), _cards("QH"), _cards("9C"), _cards("8D")),
        stock=_cards("3C"),
        waste=_cards("5S 2H"),
        stuck=False,
    )
    rival = Tableau(
        nerts=_cards("4S 4H 4D 4C 5H 5D 5C 6S 6H 6D 6C 7S 7H")[-rival_nerts:],
        work=(_cards("KH"), _cards("KD"), _cards("KC"), _cards("QS")),
        stock=(),
        waste=(),
        stuck=False,
    )
    teams_ = (own, *(rival,) * (teams - 1))
    return State.with_foundations(table, teams_, [(_cards("AH"), (1,))])


def test_nerts_call_when_a_rival_is_close_and_play_on_when_safe() -> None:
    assert Bot("t1p1", "hard").decide(_nerts_done_state(rival_nerts=2)) == CallNerts("t1p1")
    assert Bot("t1p1", "easy").decide(_nerts_done_state(rival_nerts=12)) == CallNerts("t1p1")
    play_on = Bot("t1p1", "hard").decide(_nerts_done_state(rival_nerts=12))
    assert play_on == Play("t1p1", Card.parse("2H"), Pile.parse("waste"), Pile.parse("f"))
    solo = _nerts_done_state(rival_nerts=1, teams=1)
    final, done = _play_with_bots(solo, [Bot("t1p1", "hard")])
    assert done == [
        Play("t1p1", Card.parse("2H"), Pile.parse("waste"), Pile.parse("f")),
        CallNerts("t1p1"),
    ]
    assert final.outcome is not None and final.outcome.caller == "t1p1"


def test_a_partner_leaves_the_stock_to_its_partner_until_that_one_stops() -> None:
    state = _dead_end_state()
    table = _table(teams=1, players=2)
    state = State(table, state.teams)
    helper = Bot("t1p2", "hard", 1)
    assert helper.decide(state, now=0.0) is None
    assert helper.decide(state, now=0.5) is None  # a partner may flip any moment now
    assert helper.decide(state, now=5.0) == Flip("t1p2")  # it has not: take the stock over


@pytest.mark.parametrize(("level", "mean"), [("easy", 1.2), ("medium", 0.7), ("hard", 0.35)])
def test_reaction_delays_have_the_level_mean_and_vary(level: str, mean: float) -> None:
    bot = Bot("ann", level, 5)
    delays = [
        bot.reaction_delay(Play("ann", Card.parse("AS"), Pile.parse("nerts"), Pile.parse("f")))
        for _ in range(2000)
    ]
    assert statistics.fmean(delays) == pytest.approx(mean, rel=0.1)
    assert statistics.pstdev(delays) > 0.15 * mean
    assert min(delays) > 0
    flips = [bot.reaction_delay(Flip("ann")) for _ in range(2000)]
    assert statistics.fmean(flips) < statistics.fmean(delays)
    scaled = Bot("ann", level, 5, delay_scale=0.1)
    assert statistics.fmean(scaled.reaction_delay() for _ in range(2000)) < 0.15 * mean


def test_instant_and_unscaled_bots_do_not_wait() -> None:
    assert Bot("ann", "instant").reaction_delay() == 0.0
    assert Bot("ann", "easy", delay_scale=0).reaction_delay() == 0.0


def test_bad_levels_and_scales_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown bot level"):
        Bot("ann", "expert")
    with pytest.raises(ValueError, match="delay scale"):
        Bot("ann", "easy", delay_scale=-1)
    with pytest.raises(ValueError, match="delay scale"):
        Bot("ann", "easy", delay_scale=float("nan"))


def test_a_bot_off_the_table_or_after_the_end_waits() -> None:
    state = deal_round(_table(), "x")
    assert Bot("stranger", "hard").decide(state) is None
    over = apply(_nerts_done_state(rival_nerts=3), CallNerts("t1p1"))
    assert isinstance(over, State) and Bot("t1p1", "hard").decide(over) is None
