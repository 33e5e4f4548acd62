"""Property tests: random play from random seeds never breaks the engine's invariants."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nerts_lan.rules.actions import Action, Flip, Play, SlideUnder
from nerts_lan.rules.cards import DECK
from nerts_lan.rules.engine import apply, deal_round, legal_actions, replay, round_scores
from nerts_lan.rules.piles import ANY_FOUNDATION, Pile
from nerts_lan.rules.state import Options, Rejection, State, Table, state_digest

PILES = [
    Pile.parse(name)
    for name in ["nerts", "waste", "f", "f1", "f2", "f9", "w1", "w2", "w3", "w4", "w5", "w6", "w7"]
]


@st.composite
def games(draw: st.DrawFn) -> tuple[State, list[Action]]:
    """A dealt round and a log of mostly legal, sometimes stale or random actions."""
    teams = draw(st.integers(1, 6))
    per_team = draw(st.integers(1, 2))
    work = draw(st.integers(3, 6))
    options = Options(
        flip=draw(st.sampled_from([1, 3])),
        kings=draw(st.booleans()),
        work=work,
        pile=draw(st.integers(1, 52 - work)),
        caller_bonus=draw(st.sampled_from([0, 10])),
    )
    players = tuple(tuple(f"p{t}_{i}" for i in range(per_team)) for t in range(teams))
    table = Table(options, tuple(f"team{t}" for t in range(teams)), players)
    initial = deal_round(table, draw(st.text(max_size=20)))
    rng = random.Random(draw(st.integers(0, 2**32)))
    everyone = [p for team in players for p in team]
    state = initial
    history = [state]
    actions: list[Action] = []
    for _ in range(draw(st.integers(0, 400))):
        player = rng.choice(everyone)
        roll = rng.random()
        if roll < 0.1:
            kind = rng.choice([Play, SlideUnder])
            action: Action = kind(
                player, DECK[rng.randrange(52)], rng.choice(PILES), rng.choice(PILES)
            )
        else:
            view = history[max(0, len(history) - 1 - rng.randrange(3))]
            choices = legal_actions(view, player) or legal_actions(state, player)
            if not choices:
                break
            plays = [a for a in choices if isinstance(a, (Play, SlideUnder))]
            action = rng.choice(plays if plays and roll < 0.8 else choices)
        actions.append(action)
        after = apply(state, action)
        if not isinstance(after, Rejection):
            state = after
            history.append(state)
    return initial, actions


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(games())
def test_every_team_keeps_its_52_distinct_cards(game: tuple[State, list[Action]]) -> None:
    initial, actions = game
    state = initial
    for action in actions:
        after = apply(state, action)
        if not isinstance(after, Rejection):
            state = after
        on_foundations: list[Counter[int]] = [Counter() for _ in state.teams]
        for cards, owners in zip(state.f_cards, state.f_owners):
            for card, owner in zip(cards, owners):
                on_foundations[owner][card] += 1
        for index, tableau in enumerate(state.teams):
            mine = Counter(tableau.cards()) + on_foundations[index]
            assert sorted(mine.elements()) == list(range(52))


@SETTINGS
@given(games())
def test_legal_actions_are_accepted_and_rejections_change_nothing(
    game: tuple[State, list[Action]],
) -> None:
    initial, actions = game
    state = initial
    for action in actions:
        for player in {action.by}:
            for legal in legal_actions(state, player):
                assert not isinstance(apply(state, legal), Rejection), legal
        before = state_digest(state)
        after = apply(state, action)
        if isinstance(after, Rejection):
            assert after.reason and state_digest(state) == before
        else:
            if isinstance(action, (Play, SlideUnder)):
                # Every accepted card move is offered (foundation moves as "any foundation").
                foundation = action.target.kind == "foundation"
                target = ANY_FOUNDATION if foundation else action.target
                offered = {
                    (type(a), a.card, a.source, a.target)
                    for a in legal_actions(state, action.by)
                    if isinstance(a, (Play, SlideUnder))
                }
                assert (type(action), action.card, action.source, target) in offered, action
            state = after


@SETTINGS
@given(games(), st.data())
def test_replay_is_deterministic_and_composes(
    game: tuple[State, list[Action]], data: st.DataObject
) -> None:
    initial, actions = game
    final, results = replay(initial, actions)
    again, results_again = replay(initial, list(actions))
    assert state_digest(final) == state_digest(again) and results == results_again
    cut = data.draw(st.integers(0, len(actions)))
    middle, first = replay(initial, actions[:cut])
    end, rest = replay(middle, actions[cut:])
    assert state_digest(end) == state_digest(final) and end == final
    assert first + rest == results


@SETTINGS
@given(games())
def test_scores_add_up(game: tuple[State, list[Action]]) -> None:
    initial, actions = game
    state, _ = replay(initial, actions)
    scores = round_scores(state)
    on_foundations = sum(len(cards) for cards in state.f_cards)
    left = sum(len(t.nerts) for t in state.teams)
    bonus = state.table.options.caller_bonus if state.outcome and state.outcome.caller else 0
    assert sum(scores.values()) == on_foundations - 2 * left + bonus
    assert set(scores) == set(state.table.team_names)


def test_a_different_log_gives_a_different_hash() -> None:
    table = Table(Options(), ("a", "b"), (("x",), ("y",)))
    initial = deal_round(table, "hash")
    flipped_x = apply(initial, Flip("x"))
    assert not isinstance(flipped_x, Rejection)
    assert state_digest(flipped_x) != state_digest(initial)
    other_table = Table(Options(caller_bonus=10), ("a", "b"), (("x",), ("y",)))
    assert state_digest(deal_round(other_table, "hash")) != state_digest(initial)


@SETTINGS
@given(games())
def test_a_snapshot_round_trips_to_the_same_state(game: tuple[State, list[Action]]) -> None:
    import json

    from nerts_lan.rules.codec import state_from_snapshot, state_snapshot

    initial, actions = game
    state, _ = replay(initial, actions)
    wire = json.loads(json.dumps(state_snapshot(state)))
    assert state_digest(state_from_snapshot(wire)) == state_digest(state)
