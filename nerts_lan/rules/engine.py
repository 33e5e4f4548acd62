"""The Nerts rules engine: a pure, deterministic fold of ordered actions over a round's state.

Every peer replays the same ordered log and must reach the same state, so this module uses only
the standard library, no randomness, no clock and no floats. States are immutable and share
their unchanged piles, which makes a snapshot free (keep the reference) and a rollback cheap
(replay the few pending actions from it).

- ``apply(state, action)`` returns the next ``State``, or a ``Rejection`` with a short reason that
  changes nothing (a race lost, a card no longer where the action says, a target that no longer
  takes it).
  A reaction (``React``) is accepted with the state unchanged; how often a player may react is
  the log's to judge (``nerts_lan.rules.reactions``).
- ``legal_actions(state, player)`` lists what a player may do now, for bots, hints and auto-move.
- ``replay(initial, actions)`` folds a log and returns the final state and each action's result.
- ``state_digest(state)`` is a canonical hash, identical on every machine.

The values it folds over (``Options``, ``Table``, ``Tableau``, ``State``, ``Outcome``,
``Rejection``, ``RejectionKind``, ``state_digest``) live in ``nerts_lan.rules.state``; this module
re-exports them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NamedTuple, TypeVar

from nerts_lan.rules.actions import (
    Action,
    CallNerts,
    DeclareStuck,
    Flip,
    Play,
    React,
    SlideUnder,
)
from nerts_lan.rules.cards import DECK, card_color, card_rank
from nerts_lan.rules.deal import deal_team
from nerts_lan.rules.handicap import scaled_score
from nerts_lan.rules.piles import ANY_FOUNDATION, NERTS, WASTE, Pile, work_pile
from nerts_lan.rules.state import (
    Outcome,
    Rejection,
    RejectionKind,
    State,
    Table,
    Tableau,
    next_wanted,
)

__all__ = [
    "DEAD_ROUND_ROTATIONS",
    "apply",
    "deal_round",
    "legal_actions",
    "replay",
    "round_scores",
]

DEAD_ROUND_ROTATIONS: Final = 3
"""Rotations with no card played after which the next all-stuck moment ends the round."""


def deal_round(table: Table, seed: str) -> State:
    """The opening state of a round: every team's deck dealt from the round ``seed``."""
    options = table.options
    teams = []
    for index, name in enumerate(table.team_names):
        nerts, work, stock = deal_team(seed, index, options.pile_of(name), options.work_of(name))
        teams.append(Tableau(nerts=nerts, work=work, stock=stock, waste=(), stuck=False))
    return State(table, tuple(teams))


def apply(state: State, action: Action) -> State | Rejection:
    """The state after ``action``, or the ``Rejection`` saying why it changes nothing."""
    if state.outcome is not None:
        return _ROUND_OVER
    team = state.table.player_team.get(action.by)
    if team is None:
        return Rejection(f"{action.by} is not at this table", RejectionKind.NOT_AT_TABLE)
    match action:
        case Play():
            return _play(state, team, action)
        case SlideUnder():
            return _slide_under(state, team, action)
        case Flip():
            return _flip(state, team)
        case DeclareStuck():
            return _declare_stuck(state, team)
        case CallNerts():
            return _call_nerts(state, team, action)
        case React():
            return state  # a word to the table: nothing of the round changes
    raise TypeError(f"not an action: {type(action).__name__}")


def replay(initial: State, actions: Iterable[Action]) -> tuple[State, list[Rejection | None]]:
    """Fold ``actions`` in order; the final state and, per action, None or its rejection."""
    state = initial
    results: list[Rejection | None] = []
    for action in actions:
        after = apply(state, action)
        if type(after) is Rejection:
            results.append(after)
        else:
            state = after  # type: ignore[assignment]
            results.append(None)
    return state, results


def legal_actions(state: State, player: str) -> list[Action]:
    """Every action ``player`` may make now that the rules accept.

    Plays to the foundations name ``f`` (any foundation). Work-pile moves include every legal
    stack move, even ones that change nothing of value; bots and hints choose among them.

    It reads only what the player's team can see (the nerts and waste top cards, the work piles,
    whether the stock and waste are empty, the foundations), never a face-down card: bots rely on
    this to decide from a redacted state.
    """
    team = state.table.player_team.get(player)
    if state.outcome is not None or team is None:
        return []
    tableau = state.teams[team]
    singles: list[tuple[int, Pile]] = []
    if tableau.nerts:
        singles.append((tableau.nerts[-1], NERTS))
    if tableau.waste:
        singles.append((tableau.waste[-1], WASTE))
    hand = len(singles)  # the nerts and waste tops come first
    for index, pile in enumerate(tableau.work):
        if pile:
            singles.append((pile[-1], _WORK_PILES[index]))
    actions = _foundation_plays(state, player, singles)
    actions += _plays_onto_work(tableau.work, player, singles[:hand])
    actions += _stack_moves(tableau.work, player)
    if tableau.stock or tableau.waste:
        actions.append(Flip(player))
    actions.append(DeclareStuck(player))
    if not tableau.nerts:
        actions.append(CallNerts(player))
    return actions


def round_scores(state: State) -> dict[str, int]:
    """Each team's score as things stand: +1 per own card on foundations, -2 per nerts card left,
    and the caller bonus to the calling team; a positive score then takes the team's handicap
    multiplier (``scaled_score``: whole percent, half a point rounds up)."""
    table = state.table
    counts = [0] * len(table.team_names)
    for owners in state.f_owners:
        for owner in owners:
            counts[owner] += 1
    scores = {}
    for index, name in enumerate(table.team_names):
        scores[name] = counts[index] - 2 * len(state.teams[index].nerts)
    outcome = state.outcome
    if outcome is not None and outcome.caller is not None:
        caller_team = table.player_team[outcome.caller]
        scores[table.team_names[caller_team]] += table.options.caller_bonus
    for name, handicap in table.options.handicaps:
        scores[name] = scaled_score(scores[name], handicap.score)
    return scores


# --- helpers ------------------------------------------------------------------------------------

_RANK: Final = tuple(card_rank(c) for c in range(52))
_COLOR: Final = tuple(card_color(c) for c in range(52))
_WORK_PILES: Final = tuple(work_pile(i) for i in range(9))
_ROUND_OVER: Final = Rejection("the round is over", RejectionKind.ROUND_OVER)
_T = TypeVar("_T")


class _Foundations(NamedTuple):
    """The three parallel foundation tuples of a ``State``."""

    cards: tuple[tuple[int, ...], ...]
    owners: tuple[tuple[int, ...], ...]
    wanted: tuple[int, ...]


def _fits_on(card: int, onto: int) -> bool:
    """True when ``card`` may lie on ``onto`` in a work pile: one rank lower, the other colour."""
    return _RANK[onto] == _RANK[card] + 1 and _COLOR[onto] != _COLOR[card]


def _foundation_plays(state: State, player: str, singles: list[tuple[int, Pile]]) -> list[Action]:
    """Plays of the top cards ``singles`` to ``f`` that some foundation (or a new one) takes."""
    f_next = state.f_next
    kings = state.table.options.kings
    actions: list[Action] = []
    for card, source in singles:
        rank = _RANK[card]
        if card in f_next or rank == 1 or (kings and rank == 13):
            actions.append(Play(player, DECK[card], source, ANY_FOUNDATION))
    return actions


def _plays_onto_work(
    work: tuple[tuple[int, ...], ...], player: str, hand: list[tuple[int, Pile]]
) -> list[Action]:
    """Plays and slides under of the nerts and waste tops ``hand`` onto the work piles."""
    has_space = () in work
    actions: list[Action] = []
    for card, source in hand:
        for index, pile in enumerate(work):
            target = _WORK_PILES[index]
            if not pile or _fits_on(card, pile[-1]):
                actions.append(Play(player, DECK[card], source, target))
            elif has_space and _fits_on(pile[0], card):
                actions.append(SlideUnder(player, DECK[card], source, target))
    return actions


def _stack_moves(work: tuple[tuple[int, ...], ...], player: str) -> list[Action]:
    """Every move of a work pile's card (with the cards on it) onto another work pile."""
    actions: list[Action] = []
    rank, color = _RANK, _COLOR  # the hot loop of bots: no call per pair of cards
    for source_index, pile in enumerate(work):
        source = _WORK_PILES[source_index]
        for card in pile:
            below, other_color = rank[card] + 1, 1 - color[card]
            for index, dest in enumerate(work):
                if index == source_index:
                    continue
                if not dest or (rank[dest[-1]] == below and color[dest[-1]] == other_color):
                    actions.append(Play(player, DECK[card], source, _WORK_PILES[index]))
    return actions


# A card played (a play or a slide under, by any team) ends the player's team's stuck declaration
# and resets the count of fruitless rotations: ``_card_played`` builds every such state.


def _card_played(
    state: State, team: int, tableau: Tableau, foundations: _Foundations | None = None
) -> State:
    """The state after ``team`` played a card, leaving it ``tableau`` (and ``foundations``)."""
    teams = list(state.teams)
    teams[team] = tableau.with_stuck(False) if tableau.stuck else tableau
    if foundations is None:
        foundations = _Foundations(state.f_cards, state.f_owners, state.f_next)
    return State(
        state.table,
        tuple(teams),
        f_cards=foundations.cards,
        f_owners=foundations.owners,
        f_next=foundations.wanted,
        rotations=0,
    )


def _no_such_pile(action: Play | SlideUnder) -> Rejection | None:
    """Why a card move names a pile no card move may name (the stock), or None."""
    for pile in (action.source, action.target):
        if pile.kind == "stock":
            return Rejection(f"there is no pile {pile}")
    return None


def _not_on_top(tableau: Tableau, source: Pile, card: int) -> Rejection | None:
    """Why ``card`` cannot leave ``source``, the nerts pile or the waste, or None."""
    if source.kind == "nerts":
        if not tableau.nerts or tableau.nerts[-1] != card:
            return Rejection(f"{DECK[card]} is not on top of the nerts pile")
    elif not tableau.waste or tableau.waste[-1] != card:
        return Rejection(f"{DECK[card]} is not on top of the waste")
    return None


def _moving(tableau: Tableau, action: Play) -> tuple[int, ...] | Rejection:
    """The cards a play moves: the card, with every card on it in a work pile."""
    source, card = action.source, action.card
    if source.kind == "nerts" or source.kind == "waste":
        return _not_on_top(tableau, source, card) or (card,)
    if source.kind == "work":
        assert source.index is not None
        if source.index >= len(tableau.work):
            return Rejection(f"there is no pile {source}")
        pile = tableau.work[source.index]
        if card not in pile:
            return Rejection(f"{card} is not in {source}")
        return pile[pile.index(card) :]
    return Rejection("cards never leave a foundation")


def _play(state: State, team: int, action: Play) -> State | Rejection:
    problem = _no_such_pile(action)
    if problem is not None:
        return problem
    tableau = state.teams[team]
    moving = _moving(tableau, action)
    if isinstance(moving, Rejection):
        return moving
    if action.target.kind == "work":
        return _play_to_work(state, team, action, moving)
    if action.target.kind == "foundation":
        return _play_to_foundation(state, team, action, moving)
    place = "nerts pile" if action.target.kind == "nerts" else "waste"
    return Rejection(f"nothing can be played onto the {place}")


def _play_to_work(
    state: State, team: int, action: Play, moving: tuple[int, ...]
) -> State | Rejection:
    tableau = state.teams[team]
    card, source, target = action.card, action.source, action.target
    assert target.index is not None
    if target.index >= len(tableau.work):
        return Rejection(f"there is no pile {target}")
    if source == target:
        return Rejection(f"{card} is already in {target}")
    dest = tableau.work[target.index]
    if dest and not _fits_on(card, dest[-1]):
        return Rejection(f"{target} does not take {card}")
    changed = tableau.take_top(source, len(moving)).with_work(target.index, dest + moving)
    return _card_played(state, team, changed)


def _play_to_foundation(
    state: State, team: int, action: Play, moving: tuple[int, ...]
) -> State | Rejection:
    card, target = action.card, action.target
    if len(moving) != 1:
        return Rejection(f"only the top card of {action.source} can go to a foundation")
    slot = _foundation_slot(state, target, card)
    if isinstance(slot, Rejection):
        return slot
    if slot == len(state.f_next):
        foundations = _Foundations(
            (*state.f_cards, (card,)),
            (*state.f_owners, (team,)),
            (*state.f_next, card + 1 if _RANK[card] == 1 else card - 1),
        )
    else:
        cards = state.f_cards[slot] + (card,)
        foundations = _Foundations(
            _replaced(state.f_cards, slot, cards),
            _replaced(state.f_owners, slot, state.f_owners[slot] + (team,)),
            _replaced(state.f_next, slot, next_wanted(cards)),
        )
    changed = state.teams[team].take_top(action.source)
    return _card_played(state, team, changed, foundations)


def _foundation_slot(state: State, target: Pile, card: int) -> int | Rejection:
    """The foundation that takes ``card`` at ``target`` (``len(f_next)``: a new one), or why
    none does."""
    f_next = state.f_next
    if target.index is not None:
        if target.index >= len(f_next):
            return Rejection(f"there is no pile {target}")
        if f_next[target.index] != card:
            return Rejection(f"{target} does not take {card}")
        return target.index
    if card in f_next:
        return f_next.index(card)
    if _RANK[card] == 1 or (_RANK[card] == 13 and state.table.options.kings):
        return len(f_next)
    return Rejection(f"no foundation takes {card}")


def _replaced(items: tuple[_T, ...], index: int, item: _T) -> tuple[_T, ...]:
    """``items`` with the one at ``index`` replaced by ``item``."""
    return (*items[:index], item, *items[index + 1 :])


def _slide_under(state: State, team: int, action: SlideUnder) -> State | Rejection:
    problem = _no_such_pile(action)
    if problem is not None:
        return problem
    card, source, target = action.card, action.source, action.target
    tableau = state.teams[team]
    if source.kind != "nerts" and source.kind != "waste":
        return Rejection("only the nerts or waste top card can slide under")
    problem = _not_on_top(tableau, source, card)
    if problem is not None:
        return problem
    if target.kind != "work":
        return Rejection("a card slides only under a work pile")
    work = tableau.work
    assert target.index is not None
    if target.index >= len(work):
        return Rejection(f"there is no pile {target}")
    if () not in work:
        return Rejection("sliding under needs an empty work pile")
    dest = work[target.index]
    if not dest:
        return Rejection(f"{target} is empty: play onto it instead")
    if not _fits_on(dest[0], card):
        return Rejection(f"{card} cannot slide under {target}")
    changed = tableau.take_top(source).with_work(target.index, (card, *dest))
    return _card_played(state, team, changed)


def _flip(state: State, team: int) -> State | Rejection:
    """Turn up to ``flip`` cards, or turn the waste over; a stuck declaration stands."""
    tableau = state.teams[team]
    stock = tableau.stock
    if stock:
        count = min(state.table.options.flip, len(stock))
        turned = stock[: len(stock) - count - 1 : -1] if count < len(stock) else stock[::-1]
        new_stock, new_waste = stock[: len(stock) - count], tableau.waste + turned
    elif tableau.waste:
        new_stock, new_waste = tableau.waste[::-1], ()
    else:
        return Rejection("the stock and the waste are both empty")
    changed = Tableau(
        nerts=tableau.nerts,
        work=tableau.work,
        stock=new_stock,
        waste=new_waste,
        stuck=tableau.stuck,
    )
    return state.with_team(team, changed)


def _declare_stuck(state: State, team: int) -> State | Rejection:
    tableau = state.teams[team]
    declared = state if tableau.stuck else state.with_team(team, tableau.with_stuck(True))
    if not all(t.stuck for t in declared.teams):
        return declared
    if state.rotations >= DEAD_ROUND_ROTATIONS:
        return _ended(declared, Outcome("dead"))
    return State(
        state.table,
        tuple(_rotate(t) for t in declared.teams),
        f_cards=state.f_cards,
        f_owners=state.f_owners,
        f_next=state.f_next,
        rotations=state.rotations + 1,
    )


def _rotate(tableau: Tableau) -> Tableau:
    """Re-form the stock (stock in order, then the waste as turned) and move its top card to the
    bottom; the waste empties and the stuck declaration ends."""
    # In turning order: the stock from its top down, then the waste from its bottom up.
    order = tableau.stock[::-1] + tableau.waste
    if order:
        order = order[1:] + order[:1]
    return Tableau(nerts=tableau.nerts, work=tableau.work, stock=order[::-1], waste=(), stuck=False)


def _call_nerts(state: State, team: int, action: CallNerts) -> State | Rejection:
    if state.teams[team].nerts:
        return Rejection("the nerts pile is not empty")
    return _ended(state, Outcome("nerts", action.by))


def _ended(state: State, outcome: Outcome) -> State:
    """``state`` with the round ended by ``outcome``."""
    return State(
        state.table,
        state.teams,
        f_cards=state.f_cards,
        f_owners=state.f_owners,
        f_next=state.f_next,
        rotations=state.rotations,
        outcome=outcome,
    )
