"""The replica: optimistic local play, rollback on reorder, stable prefix, events."""

from __future__ import annotations

import random

import pytest

from nerts_lan.rules.actions import CallNerts, Flip, Play
from nerts_lan.rules.cards import Card
from nerts_lan.rules.engine import apply, deal_round, legal_actions
from nerts_lan.rules.piles import Pile
from nerts_lan.rules.state import Options, Rejection, RejectionKind, Table, state_digest
from nerts_lan.table.replica import (
    ActionApplied,
    ActionRejected,
    Ranking,
    Replica,
    RoundEnded,
    replay_log,
)
from net import OrderingCore
from tests.kit import layout, piles, team


def _race_table() -> tuple[Replica, Replica]:
    state = layout(
        team("red", ("ann",), nerts="2S"),
        team("blue", ("bo",), waste="2S"),
        foundations=(("AS", "red"),),
    )
    return Replica(state, "A"), Replica(state, "B")


ANN_2S = Play("ann", Card.parse("2S"), Pile.parse("nerts"), Pile.parse("f1"))
BO_2S = Play("bo", Card.parse("2S"), Pile.parse("waste"), Pile.parse("f1"))


def test_a_local_action_shows_at_once_and_is_not_stable_yet() -> None:
    replica, _ = _race_table()
    events = replica.add((1, "A"), ANN_2S)
    assert events == [ActionApplied((1, "A"), ANN_2S, local=True)]
    assert piles(replica.view)["nerts"] == []
    assert piles(replica.stable)["nerts"] == ["2S"]


def test_a_race_is_decided_by_the_order_and_the_loser_snaps_back() -> None:
    a, b = _race_table()
    # Both play 2S at once: ann's action has timestamp 3, bo's timestamp 2, so bo's comes first.
    a.add((3, "A"), ANN_2S)
    b.add((2, "B"), BO_2S)
    events = a.add((2, "B"), BO_2S)
    assert (
        ActionRejected(
            (3, "A"),
            ANN_2S,
            "f1 does not take 2S",
            local=True,
            kind=RejectionKind.LOST_RACE,
            lost_race_to="bo",
            winner_key=(2, "B"),
        )
        in events
    )
    assert piles(a.view)["nerts"] == ["2S"]  # ann's card went back
    assert a.rebuilds == 1
    b_events = b.add((3, "A"), ANN_2S)
    assert b_events == [ActionRejected((3, "A"), ANN_2S, "f1 does not take 2S", local=False)]
    for replica in (a, b):
        replica.stabilize((3, "A"))
    assert a.stable_digest() == b.stable_digest()
    assert a.stable.f_owners == ((0, 1),)


def _lost_race(events: list[object]) -> ActionRejected:
    (lost,) = [e for e in events if isinstance(e, ActionRejected)]
    assert lost.kind is RejectionKind.LOST_RACE
    return lost


def test_a_lost_race_names_the_winner_and_by_how_much_in_table_time() -> None:
    state = _race_table()[0].stable
    tentative = Replica(state, "A", table_time=True)
    tentative.add((1_040_000, "A"), ANN_2S)
    lost = _lost_race(tentative.add((1_000_000, "B"), BO_2S))
    # Bo's entry arrived late but was stamped 40 ms earlier in table time: it wins.
    assert (lost.key, lost.lost_race_to) == ((1_040_000, "A"), "bo")
    assert (lost.winner_key, lost.margin_us) == ((1_000_000, "B"), 40_000)
    # The same from the stable stream alone (Bo's entry never shown tentatively).
    stable_only = Replica(state, "A", table_time=True)
    stable_only.add((1_040_000, "A"), ANN_2S)
    lost = _lost_race(stable_only.settle((1_000_000, "B"), BO_2S.to_wire()))
    assert (lost.winner_key, lost.margin_us) == ((1_000_000, "B"), 40_000)


def test_a_lost_race_has_no_margin_when_the_keys_are_not_table_time() -> None:
    state = _race_table()[0].stable
    counted = Replica(state, "A")  # practice: its keys count entries
    counted.add((7, "A"), ANN_2S)
    lost = _lost_race(counted.add((6, "B"), BO_2S))
    assert (lost.lost_race_to, lost.winner_key, lost.margin_us) == ("bo", (6, "B"), None)
    # A winner stamped by a Lamport counter alone (not yet synchronised): no margin either.
    lamport = Replica(state, "A", table_time=True)
    lamport.add((90_000_000_000, "A"), ANN_2S)
    lost = _lost_race(lamport.add((12, "B"), BO_2S))
    assert (lost.winner_key, lost.margin_us) == ((12, "B"), None)


def test_a_tie_in_timestamps_is_broken_by_peer_id_everywhere() -> None:
    a, b = _race_table()
    a.add((5, "A"), ANN_2S)
    b.add((5, "B"), BO_2S)
    a.add((5, "B"), BO_2S)
    b.add((5, "A"), ANN_2S)
    assert state_digest(a.view) == state_digest(b.view)
    assert a.view.f_owners == ((0, 0),)  # "A" sorts before "B": ann wins


def test_malformed_payloads_are_rejected_entries_not_crashes() -> None:
    replica, _ = _race_table()
    events = replica.add((1, "B"), {"by": "bo", "do": "teleport"})
    assert isinstance(events[0], ActionRejected) and "malformed action" in events[0].reason
    assert events[0].kind is RejectionKind.MALFORMED
    events = replica.add((2, "B"), b"\x00garbage")
    assert isinstance(events[0], ActionRejected)
    events = replica.add((3, "A"), ANN_2S.to_wire())
    assert events == [ActionApplied((3, "A"), ANN_2S, local=True)]


def test_the_round_ends_once_the_nerts_call_is_stable() -> None:
    state = layout(team("red", ("ann",), nerts="AS"), caller_bonus=5)
    replica = Replica(state, "A")
    replica.add((1, "A"), Play("ann", Card.parse("AS"), Pile.parse("nerts"), Pile.parse("f")))
    replica.add((2, "A"), CallNerts("ann"))
    assert replica.view.over and not replica.stable.over
    assert replica.stabilize((1, "A")) == []
    events = replica.stabilize((2, "A"))
    assert len(events) == 1 and isinstance(events[0], RoundEnded)
    assert events[0].scores == {"red": 6}


def test_any_arrival_order_gives_the_same_view_and_stable_state() -> None:
    table = Table(Options(), ("a", "b", "c"), (("x",), ("y",), ("z",)))
    initial = deal_round(table, "arrival")
    rng = random.Random(7)
    entries = []
    view = initial
    for ts in range(1, 150):
        peer = rng.choice("xyz")
        action = rng.choice(legal_actions(view, peer) or [Flip(peer)])
        entries.append(((ts, peer), action))
        after = apply(view, action)
        if not isinstance(after, Rejection):
            view = after
    expected = replay_log(initial, entries)
    digests = set()
    for trial in range(5):
        order = entries[:]
        random.Random(trial).shuffle(order)
        replica = Replica(initial, "x")
        for key, action in order:
            replica.add(key, action)
        assert state_digest(replica.view) == state_digest(expected)
        replica.stabilize(entries[len(entries) // 2][0])
        replica.stabilize(entries[-1][0])
        digests.add(replica.stable_digest())
    assert digests == {state_digest(expected)}


def test_entries_cut_off_with_an_excluded_peer_are_retracted_and_the_view_recovers() -> None:
    a, _ = _race_table()
    a.add((2, "B"), BO_2S)
    events = a.add((3, "A"), ANN_2S)
    assert isinstance(events[0], ActionRejected)
    events = a.retract([(2, "B")])
    assert events == [ActionApplied((3, "A"), ANN_2S, local=True)]
    assert a.view.f_owners == ((0, 0),)
    assert a.retract([(9, "Z")]) == []


def test_a_local_play_on_a_retracted_card_comes_back_refused_not_silently_gone() -> None:
    """A player removed from the table had played 2♠; ours went on it. Its entries are cut off
    (``EntriesRetracted``): our 3♠ no longer counts, and the player is told (a refusal)."""
    state = layout(
        team("red", ("ann",), nerts="3S"),
        team("blue", ("bo",), waste="2S"),
        foundations=(("AS", "red"),),
    )
    ann = Replica(state, "A")
    ann_3s = Play("ann", Card.parse("3S"), Pile.parse("nerts"), Pile.parse("f1"))
    ann.add((2, "B"), BO_2S)
    assert ann.add((3, "A"), ann_3s) == [ActionApplied((3, "A"), ann_3s, local=True)]
    events = ann.retract([(2, "B")])
    assert len(events) == 1 and isinstance(events[0], ActionRejected)
    assert events[0].key == (3, "A") and events[0].local
    assert piles(ann.view)["nerts"] == ["3S"]


def test_a_peer_may_act_only_for_the_players_it_controls() -> None:
    seats = {"ann": "A", "bo": "B"}

    def authorize(peer: str, action: object) -> str | None:
        player = action.by  # type: ignore[attr-defined]
        return None if seats.get(player) == peer else f"{player} is not played from {peer}"

    state = layout(
        team("red", ("ann",), nerts="2S"),
        team("blue", ("bo",), waste="2S"),
        foundations=(("AS", "red"),),
    )
    replica = Replica(state, "A", authorize)
    events = replica.add((1, "B"), ANN_2S)  # B forges an action in ann's name
    assert events == [
        ActionRejected(
            (1, "B"), ANN_2S, "ann is not played from B", False, RejectionKind.NOT_YOUR_SEAT
        )
    ]
    replica.add((2, "A"), ANN_2S)
    replica.stabilize((2, "A"))
    assert replica.stable.f_owners == ((0, 0),)


def _core_rank() -> tuple[Ranking, int]:
    """The rank of a real ordering core between A and B, and a timestamp at which its draw puts
    B's entry before A's (the opposite of the peer ids' order)."""
    rank = OrderingCore("A", ["A", "B"], 0.0, salt=b"tie table").rank
    tie = next(ts for ts in range(1, 100) if rank((ts, "B")) < rank((ts, "A")))
    return rank, tie


def test_a_tie_the_draw_gives_to_the_higher_peer_id_is_folded_in_the_core_order() -> None:
    """Ann and Bo play the same 2♠ with equal timestamps and the draw puts Bo first: the stable
    stream gives Bo's then Ann's. Every replica folds both, in that order (Bo's counts, Ann's is
    refused at its place), whatever it held tentatively; nothing is taken as 'already had'."""
    rank, tie = _core_rank()
    state = _race_table()[0].stable
    ann, bo = (tie, "A"), (tie, "B")
    expected = replay_log(state, [(bo, BO_2S), (ann, ANN_2S)])
    both = Replica(state, "A", rank=rank)  # held both tentatively
    assert both.add(ann, ANN_2S) == [ActionApplied(ann, ANN_2S, local=True)]
    lost = both.add(bo, BO_2S)
    assert [(e.key, e.kind) for e in lost if isinstance(e, ActionRejected)] == [
        (ann, RejectionKind.LOST_RACE)
    ]
    own_only = Replica(state, "A", rank=rank)  # Bo's never reached it tentatively
    own_only.add(ann, ANN_2S)
    nothing = Replica(state, "B", rank=rank)  # a joiner: the stable stream only
    for replica in (both, own_only, nothing):
        replica.settle(bo, BO_2S)
        replica.settle(ann, ANN_2S)
        assert replica.stable_count == 2 and replica.pending == []
        assert replica.stable_digest() == state_digest(expected)
        assert state_digest(replica.view) == state_digest(expected)
    assert expected.f_owners == ((0, 1),)  # Bo's 2♠ is on the foundation


def test_an_entry_tied_with_a_stable_one_and_ranked_after_it_is_still_shown() -> None:
    """Bo's entry is stable; Ann's, with the same timestamp and a lower peer id, arrives
    tentatively afterwards: the core ranks it after Bo's, so it is new, not 'already had'."""
    rank, tie = _core_rank()
    replica = Replica(_race_table()[0].stable, "B", rank=rank)
    replica.settle((tie, "B"), Flip("bo"))
    assert not replica.has((tie, "A"))
    assert replica.add((tie, "A"), ANN_2S) == [ActionApplied((tie, "A"), ANN_2S, local=False)]
    assert replica.has((tie, "A")) and replica.has((tie, "B"))
    with pytest.raises(ValueError):
        replica.add((tie - 1, "A"), Flip("ann"))  # ranks before the stable prefix
