"""Words for players: cards, piles and refusals in one vocabulary ("4♣", "work pile 2").

The engine's refusal reasons are part of the scenario contract and stay terse ("w1 does not take
5D"); the window says the same thing for a person, from the action, the state and the
``RejectionKind``: a card with no legal move "has nowhere to go", a lost race says who beat the
player to the card and by how much ("Bo beat you to 5♥ by 40 ms"). Pure functions: no pyglet.
"""

from __future__ import annotations

import re
from typing import Final

from nerts_lan.rules.actions import Action, CallNerts, DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.rules.cards import RANK_NAMES, card_color, card_rank, card_suit
from nerts_lan.rules.engine import DEAD_ROUND_ROTATIONS, legal_actions
from nerts_lan.rules.piles import Pile, foundation_pile
from nerts_lan.rules.state import RejectionKind, State, Table
from ui.kit.theme import SUIT_SYMBOLS

__all__ = [
    "TABLE_PAUSED",
    "card_name",
    "head_start",
    "lost_race",
    "move_sentence",
    "pile_name",
    "player_words",
    "refusal",
    "stocks_rotated",
    "team_label",
    "wins",
]

TABLE_PAUSED: Final = "Waiting for the table…"
"""Shown while a LAN table waits for enough of its members (``TablePaused``): at the table and
in its lobby."""


def card_name(card: int) -> str:
    """A card as players write it: ``"4♣"``, ``"10♥"``."""
    return RANK_NAMES[card_rank(card) - 1] + SUIT_SYMBOLS[card_suit(card)]


def pile_name(pile: Pile) -> str:
    """One of the player's piles, or a foundation: "work pile 2", "your nerts pile"."""
    if pile.kind == "work":
        return f"work pile {(pile.index or 0) + 1}"
    if pile.kind == "foundation":
        return "a foundation" if pile.index is None else f"foundation {pile.index + 1}"
    if pile.kind == "waste":
        return "the waste"
    return f"your {pile.kind} pile" if pile.kind == "nerts" else "your stock"


def move_sentence(who: str, action: Action, state: State) -> str:
    """A move as one plain sentence for the readout, who made it first: "You: 5♥ from work
    pile 2 to foundation 3", "Bo: flipped, 7♣ on the waste". ``state`` is the table after the
    move: it says which foundation took the card and what a flip turned up."""
    if isinstance(action, Play):
        target = action.target
        if target.kind == "foundation" and target.index is None:
            index = _foundation_of(state, int(action.card))
            target = foundation_pile(index) if index is not None else target
        source, to = _pile_words(action.source), _pile_words(target)
        return f"{who}: {card_name(action.card)} from {source} to {to}"
    if isinstance(action, SlideUnder):
        return f"{who}: {card_name(action.card)} slid under {_pile_words(action.target)}"
    if isinstance(action, Flip):
        team = state.table.team_of(action.by)
        waste = state.teams[team].waste if team is not None else ()
        if not waste:
            return f"{who}: turned the waste over"
        return f"{who}: flipped, {card_name(waste[-1])} on the waste"
    if isinstance(action, DeclareStuck):
        return f"{who}: stuck"
    return f"{who}: called Nerts!"


def player_words(text: str) -> str:
    """``text`` with the wire's card and pile names in players' words: "w1 does not take 5D"
    becomes "work pile 1 does not take 5♦"."""
    text = _CARD_CODE.sub(lambda m: m[1] + SUIT_SYMBOLS["SHDC".index(m[2])], text)
    text = _WORK_CODE.sub(lambda m: f"work pile {m[1]}", text)
    return _FOUNDATION_CODE.sub(lambda m: f"foundation {m[1]}", text)


def refusal(
    action: Action | None,
    state: State,
    kind: RejectionKind,
    reason: str,
    lost_race_to: str | None = None,
    margin_us: int | None = None,
) -> str:
    """Why the engine refused ``action``, for the player who tried it, as one short sentence.

    ``state`` is the table as it is now (the refused move changed nothing); ``reason`` is the
    engine's, used only when nothing better can be said. A lost race names its winner and, when
    known, the margin (``margin_us``, microseconds of table time).
    """
    if kind is RejectionKind.LOST_RACE:
        return lost_race(action, lost_race_to, margin_us)
    if kind in _REFUSAL_WORDS:
        return _REFUSAL_WORDS[kind]
    if isinstance(action, (Play, SlideUnder)) and _still_there(state, action):
        if not _has_a_place(state, action):
            return f"{card_name(action.card)} has nowhere to go"
        specific = _why_not_there(state, action)
        if specific:
            return specific
    if isinstance(action, Flip):
        return "Your stock and waste are both empty"
    if isinstance(action, CallNerts):
        return "Call Nerts once your nerts pile is empty"
    return _sentence(player_words(reason))


def lost_race(action: Action | None, winner: str | None, margin_us: int | None = None) -> str:
    """A race the player lost: "Bo beat you to 5♥ by 40 ms"; without a card "Bo got there
    first"; without a known margin (practice) no "by"."""
    who = winner or "Another player"
    if isinstance(action, (Play, SlideUnder)):
        said = f"{who} beat you to {card_name(action.card)}"
    else:
        said = f"{who} got there first"
    if margin_us is None:
        return said
    if margin_us < 1000:
        return f"{said} by less than 1 ms"
    if margin_us < 1_000_000:
        return f"{said} by {round(margin_us / 1000)} ms"
    return f"{said} by {margin_us / 1_000_000:.1f} s"


def wins(team: str) -> str:
    """``team`` (as ``team_label`` calls it) won: "Ann wins", "You win", "Ann & Bo win"."""
    return f"{team} win" if team == "You" or " & " in team else f"{team} wins"


def team_label(table: Table, team: int | str) -> str:
    """What a team (its index, or its name in the match) is called on the screen: its players
    ("Ann", "Ann & Bo"), friends at a LAN table being people, not the colour the table names
    their team after ("Red"); the team's own name while nobody sits there."""
    index = table.team_names.index(team) if isinstance(team, str) else team
    players = table.team_players[index]
    return " & ".join(players) if players else table.team_names[index]


def head_start(table: Table, team: int | str) -> str:
    """A team's head start (its handicap, docs/rules.md) as the table shows it, in what it
    does: "Pile 10 · +1 work pile · ×1.5"; empty for none."""
    name = team if isinstance(team, str) else table.team_names[team]
    options = table.options
    return options.handicap_of(name).label(options.pile, options.work)


def stocks_rotated(rotations: int) -> str:
    """What happened when everyone was stuck and the stocks rotated (``rotations`` so far)."""
    left = DEAD_ROUND_ROTATIONS - rotations
    then = (
        "if everyone is stuck again, the round ends"
        if left <= 0
        else "flip on: the order of your stock has changed"
    )
    return f"Everyone was stuck: each stock's top card went to the bottom; {then}"


# --- helpers ------------------------------------------------------------------------------------

_CARD_CODE: Final = re.compile(r"\b(10|[2-9AJQK])([SHDC])\b")
_WORK_CODE: Final = re.compile(r"\bw([1-9][0-9]*)\b")
_FOUNDATION_CODE: Final = re.compile(r"\bf([1-9][0-9]*)\b")

_REFUSAL_WORDS: Final = {
    RejectionKind.ROUND_OVER: "The round is over",
    RejectionKind.NOT_AT_TABLE: "You are watching this match",
    RejectionKind.NOT_YOUR_SEAT: "That seat is not yours",
    RejectionKind.MALFORMED: "That move could not be read",
    RejectionKind.TOO_SOON: "One reaction a second, please",
}


def _pile_words(pile: Pile) -> str:
    """A pile in a sentence about anyone's move: "work pile 2", "the nerts pile"."""
    if pile.kind in ("work", "foundation"):
        return pile_name(pile)
    return "the waste" if pile.kind == "waste" else f"the {pile.kind} pile"


def _foundation_of(state: State, card: int) -> int | None:
    """The foundation ``card`` is on (from 0), if any."""
    for index, cards in enumerate(state.f_cards):
        if card in cards:
            return index
    return None


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _team_of(state: State, action: Play | SlideUnder) -> int | None:
    return state.table.team_of(action.by)


def _still_there(state: State, action: Play | SlideUnder) -> bool:
    """Whether the refused card is still where the move took it from."""
    team = _team_of(state, action)
    if team is None:
        return False
    tableau, source = state.teams[team], action.source
    if source.kind == "work" and source.index is not None and source.index < len(tableau.work):
        return action.card in tableau.work[source.index]
    pile = tableau.nerts if source.kind == "nerts" else tableau.waste
    return source.kind in ("nerts", "waste") and bool(pile) and pile[-1] == action.card


def _has_a_place(state: State, action: Play | SlideUnder) -> bool:
    """Whether the rules accept the card, from where it is, anywhere at all."""
    return any(
        isinstance(other, (Play, SlideUnder))
        and other.card == action.card
        and other.source == action.source
        for other in legal_actions(state, action.by)
    )


def _why_not_there(state: State, action: Play | SlideUnder) -> str | None:
    """The rule a refused play broke, said with the cards in it; None when the engine's reason
    says it as well."""
    if not isinstance(action, Play):
        return None
    card, target = action.card, action.target
    rank = card_rank(card)
    team = _team_of(state, action)
    if team is None:
        return None
    work = state.teams[team].work
    if target.kind == "foundation":
        source = action.source
        if rank == 1 or (source.kind == "work" and work[source.index or 0][-1] != card):
            return None  # the engine's reason says it: only a top card goes to a foundation
        below = card_name(card - 1)
        if state.table.options.kings and rank < 13:
            return f"{card_name(card)} needs {below} or {card_name(card + 1)} on a foundation first"
        return f"{card_name(card)} needs {below} on a foundation first"
    if target.kind != "work" or target.index is None:
        return None
    if target.index >= len(work) or not work[target.index] or target == action.source:
        return None
    onto = card_name(work[target.index][-1])
    if rank == 13:
        return f"{card_name(card)} goes only on an empty work pile, not on {onto}"
    colour = "black" if card_color(card) else "red"
    return f"{card_name(card)} goes on a {colour} {RANK_NAMES[rank]}, not on {onto}"
