"""A short search of a seat's own card moves, to check a move against the foundation plays the
seat could make instead: what the hint and the coach both ask before they speak, so that the
teacher never suggests what the coach then blames.

The table of values (``nerts_lan.bots.values``) ranks moves one at a time, and a high-valued
move can still be worse than a plain foundation play: moving a lone ace onto a two to open a
space, when sending the ace to its foundation opens the same space and scores. So a move is
weighed by where it leads: the best score the team can reach with it and ``SEARCH_DEPTH - 1``
more card moves of this seat (no flips: the stock is unseen), on the team's redacted view only
(a card hidden there is never moved). A foundation play is *better* than a move when it leads
strictly further; on a tie the table's choice stands.

Pure and deterministic, like the rest of ``nerts_lan.bots``.
"""

from __future__ import annotations

from typing import Final

from nerts_lan.bots.values import HIDDEN_CARD
from nerts_lan.rules.actions import Action, Play, SlideUnder
from nerts_lan.rules.engine import apply, legal_actions
from nerts_lan.rules.state import Rejection, State, Tableau

__all__ = ["SEARCH_DEPTH", "better_foundation_play", "outlook"]

SEARCH_DEPTH: Final = 2
"""Card moves the search looks at: the move weighed and one more. Two is enough to see that a
space opened by a foundation play scores one more than the same space opened by a work move, and
costs a few hundred engine steps at most (it runs only when a foundation play is there)."""


def outlook(view: State, player: str, move: Action, depth: int = SEARCH_DEPTH) -> int | None:
    """The best score of ``player``'s team reachable by ``move`` and then up to ``depth - 1``
    more card moves of ``player`` (None: the rules refuse ``move``). ``view``: what the team
    sees (``redact``)."""
    after = apply(view, move)
    if isinstance(after, Rejection):
        return None
    team = view.table.player_team[player]
    return _best_score(*_visible(after, team), player, team, depth - 1)


def better_foundation_play(view: State, player: str, move: Action) -> Action | None:
    """The foundation play ``player`` can make now that leads strictly further than ``move``
    (the one that leads furthest; the first of equals), or None when no foundation play beats
    it (or ``move`` is one). ``view``: what the player's team sees."""
    if _is_foundation_play(move):
        return None
    plays = [action for action in _card_moves(view, player) if _is_foundation_play(action)]
    if not plays:
        return None
    bar = outlook(view, player, move)
    best: Action | None = None
    for play in plays:
        reach = outlook(view, player, play)
        if reach is not None and (bar is None or reach > bar):
            best, bar = play, reach
    return best


# --- helpers ------------------------------------------------------------------------------------


def _best_score(state: State, unseen_nerts: int, player: str, team: int, depth: int) -> int:
    best = _team_score(state, team) - 2 * unseen_nerts
    if depth <= 0:
        return best
    for action in _card_moves(state, player):
        after = apply(state, action)
        if not isinstance(after, Rejection):
            searchable, unseen = _visible(after, team)
            reach = _best_score(searchable, unseen_nerts + unseen, player, team, depth - 1)
            best = max(best, reach)
    return best


def _visible(state: State, team: int) -> tuple[State, int]:
    """``state`` with the team's nerts pile or waste set aside when its top is a hidden card
    (the next nerts card, the waste below the top: unseen, so never moved), and how many nerts
    cards were set aside (they still count against the score)."""
    own = state.teams[team]
    nerts_hidden = bool(own.nerts) and own.nerts[-1] == HIDDEN_CARD
    waste_hidden = bool(own.waste) and own.waste[-1] == HIDDEN_CARD
    if not (nerts_hidden or waste_hidden):
        return state, 0
    seen = Tableau(
        nerts=() if nerts_hidden else own.nerts,
        work=own.work,
        stock=own.stock,
        waste=() if waste_hidden else own.waste,
        stuck=own.stuck,
    )
    teams = (*state.teams[:team], seen, *state.teams[team + 1 :])
    return state.with_teams(teams), len(own.nerts) if nerts_hidden else 0


def _card_moves(state: State, player: str) -> list[Play | SlideUnder]:
    """The plays and slides ``player`` may make (of cards the team sees: see ``_visible``)."""
    return [
        action
        for action in legal_actions(state, player)
        if isinstance(action, (Play, SlideUnder)) and action.card != HIDDEN_CARD
    ]


def _team_score(state: State, team: int) -> int:
    """The round's score of ``team`` as things stand (``round_scores`` without the caller's
    bonus): +1 per own card on the foundations, -2 per nerts card left."""
    own = sum(owners.count(team) for owners in state.f_owners)
    return own - 2 * len(state.teams[team].nerts)


def _is_foundation_play(action: Action) -> bool:
    return type(action) is Play and action.target.kind == "foundation"
