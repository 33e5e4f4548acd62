"""Reactions: entries of the ordered log that change nothing of the round, one a second per
player by the log's timestamps (the same on every peer), refused for another laptop's seat and
when malformed."""

from __future__ import annotations

import pytest

from nerts_lan.rules.actions import MalformedError, React, action_from_wire
from nerts_lan.rules.engine import apply
from nerts_lan.rules.state import RejectionKind, state_digest
from nerts_lan.table.replica import ActionApplied, ActionRejected, Replica
from tests.kit import layout, team

STATE = layout(team("red", ("ann",), nerts="2S 9C"), team("blue", ("bo",), waste="2S"))
SECOND = 1_000_000


def _seats(peer: str, action: object) -> str | None:
    """Laptop A plays ann, laptop B plays bo."""
    plays = {"A": "ann", "B": "bo"}
    return None if plays.get(peer) == getattr(action, "by", None) else "not from that laptop"


def _replica(local: str = "A") -> Replica:
    return Replica(STATE, local, _seats, table_time=True)


def test_a_reaction_is_accepted_and_changes_nothing_of_the_round() -> None:
    replica = _replica()
    nice = React("ann", "nice")
    assert apply(STATE, nice) is STATE
    events = replica.add((5 * SECOND, "A"), nice)
    assert events == [ActionApplied((5 * SECOND, "A"), nice, local=True)]
    assert state_digest(replica.view) == state_digest(STATE)
    replica.stabilize((5 * SECOND, "A"))
    assert replica.stable_digest() == state_digest(STATE)
    assert replica.stable_reacted == {"ann": 5 * SECOND}


def test_one_reaction_a_second_is_judged_by_the_log_the_same_in_any_arrival_order() -> None:
    entries = [
        ((10 * SECOND, "A"), React("ann", "nice")),
        ((10 * SECOND + 400_000, "A"), React("ann", "wow")),  # too soon: refused
        ((10 * SECOND + 500_000, "B"), React("bo", "gg")),  # another player's: its own second
        ((11 * SECOND, "A"), React("ann", "oops")),  # a second after the last accepted
    ]
    outcomes = []
    for order in (entries, entries[::-1], [entries[2], entries[0], entries[3], entries[1]]):
        replica = _replica("B")
        for key, action in order:
            replica.add(key, action.to_wire())
        outcomes.append([None if r is None else r.kind for _, _, r in replica.pending])
        replica.stabilize(entries[-1][0])
        assert replica.stable_reacted == {"ann": 11 * SECOND, "bo": 10 * SECOND + 500_000}
    assert outcomes == [[None, RejectionKind.TOO_SOON, None, None]] * 3


def test_a_reaction_refused_for_being_too_soon_says_so() -> None:
    replica = _replica()
    replica.add((SECOND, "A"), React("ann", "hot"))
    (refused,) = replica.add((SECOND + 10, "A"), React("ann", "hot"))
    assert isinstance(refused, ActionRejected) and refused.kind is RejectionKind.TOO_SOON
    assert refused.reason == "ann reacted less than a second ago"


def test_a_reaction_for_a_seat_the_laptop_does_not_play_is_refused() -> None:
    replica = _replica()
    (refused,) = replica.add((SECOND, "B"), React("ann", "gg"))  # B plays bo, not ann
    assert isinstance(refused, ActionRejected) and refused.kind is RejectionKind.NOT_YOUR_SEAT
    (refused,) = replica.add((2 * SECOND, "A"), React("zed", "gg"))
    assert isinstance(refused, ActionRejected) and refused.kind is RejectionKind.NOT_YOUR_SEAT


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ({"by": "ann", "do": "react", "say": "<script>" * 40}, "unknown reaction '<script><script"),
        ({"by": "ann", "do": "react", "say": 7}, "'say' must be a string, not a number"),
        ({"by": "ann", "do": "react"}, "'say' must be a string, not null"),
        ({"by": "", "do": "react", "say": "nice"}, "field 'by' must be 1 to 64 characters long"),
    ],
)
def test_a_malformed_reaction_is_a_refused_entry_saying_what_is_wrong(
    payload: dict[str, object], said: str
) -> None:
    with pytest.raises(MalformedError) as raised:
        action_from_wire(payload)
    assert said in str(raised.value)
    replica = _replica()
    (refused,) = replica.add((SECOND, "A"), payload)
    assert isinstance(refused, ActionRejected) and refused.kind is RejectionKind.MALFORMED
    assert said in refused.reason and len(refused.reason) < 120


def test_a_reaction_round_trips_its_wire_form() -> None:
    for say in ("nice", "wow", "oops", "hot", "gg"):
        react = React("ann", say)
        assert action_from_wire(react.to_wire()) == react


def test_practice_counts_its_entries_so_no_rate_limit_applies() -> None:
    replica = Replica(STATE, "A")
    replica.add((1, "A"), React("ann", "nice"))
    assert isinstance(replica.add((2, "A"), React("ann", "wow"))[0], ActionApplied)


def test_a_reaction_from_someone_not_at_the_table_is_refused() -> None:
    assert apply(STATE, React("zed", "gg")).kind is RejectionKind.NOT_AT_TABLE  # type: ignore[union-attr]


def test_at_a_table_every_peer_takes_and_prints_the_same_reactions() -> None:
    from nerts_lan.headless.play import record_of
    from nerts_lan.table.commands import Act
    from nerts_lan.table.machine import TableMachine
    from tests.test_table import Log, _start, kitchen

    log = kitchen(Log(["a", "b", "c"]))
    _start(log)
    number = log.machines["a"].round_number
    for clock, peer, player, say in [
        (10 * SECOND, "b", "Bo", "wow"),
        (10 * SECOND + 100, "c", "Bo", "gg"),  # Cy's laptop does not play Bo: refused
        (10 * SECOND + 500_000, "b", "Bo", "nice"),  # half a second after Bo's last: refused
        (12 * SECOND, "a", "Ann", "hot"),
    ]:
        log.clock = clock - 1
        log.post(peer, Act.of(number, React(player, say)))
    for peer, machine in log.machines.items():
        printed = [record_of(event) for event in log.events[peer]]
        assert [line for line in printed if line and line["event"] == "reaction"] == [
            {"event": "reaction", "player": "Bo", "says": "wow"},
            {"event": "reaction", "player": "Ann", "says": "hot"},
        ], peer
        assert machine.digest() == log.machines["a"].digest()
    # A peer that catches up from a snapshot knows who reacted lately, as the others do.
    snapshot = log.machines["a"].snapshot()
    caught_up = TableMachine.from_snapshot("d", snapshot)
    assert caught_up.replica is not None
    assert caught_up.replica.stable_reacted == {"Bo": 10 * SECOND, "Ann": 12 * SECOND}


def test_a_scenario_with_a_reaction_ends_as_without_it_and_a_bad_one_is_malformed() -> None:
    import json
    from pathlib import Path

    from nerts_lan.rules.scenario import parse_scenario_text, run_scenario

    golden = Path(__file__).parent / "scenarios" / "rules_example.json"
    data = json.loads(golden.read_text(encoding="utf-8"))
    without = run_scenario(parse_scenario_text(json.dumps(data)))
    data["actions"].insert(1, {"by": "ann", "do": "react", "say": "wow"})
    with_it = run_scenario(parse_scenario_text(json.dumps(data)))
    assert (with_it["state"], with_it["scores"]) == (without["state"], without["scores"])
    assert with_it["results"][1] == {"ok": True}
    data["actions"][1]["say"] = "boo"
    with pytest.raises(MalformedError, match=r"actions\[1\]: unknown reaction 'boo'"):
        run_scenario(parse_scenario_text(json.dumps(data)))
