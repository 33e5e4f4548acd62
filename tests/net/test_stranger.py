"""A stranger on the LAN sends well-formed but forged frames to every member of a running table.

The frames decode (the codec's own fuzzing is in test_messages.py): it is their fields that lie —
timestamps far ahead or behind, views and epochs that never were, members' names, removals,
decisions, snapshots nobody asked for, hashes of states nobody has. After each barrage the honest
members must still end with one view of themselves, the same ordered log and the same state, and
every entry they submitted must be in it.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from net._order.messages import (
    Accept,
    Accepted,
    Action,
    Expulsion,
    Heartbeat,
    JoinRequest,
    LeaveNotice,
    Message,
    Prepare,
    Promise,
    Snapshot,
    SnapshotRequest,
    StateHash,
    ViewDecision,
    encode_message,
)
from net._order.wirefields import MAX_INT, Removal
from net.events import LogEntry
from net.testing.simnet import HashChainApp, LinkModel, SimNetwork
from tests.net.scenarios import FAST, Scenario, check_agreement

HONEST = ["ann", "bo", "cy"]
STRANGER = "mallory"
NAMES = st.sampled_from([*HONEST, STRANGER, "ghost"])
TS = st.one_of(st.integers(0, 400), st.integers(0, MAX_INT))
INCARNATION = st.integers(0, 3)
SEEN = st.dictionaries(NAMES, st.tuples(INCARNATION, TS), max_size=4)
EPOCH = st.integers(0, 5)
REMOVAL = st.builds(Removal, INCARNATION, TS, st.sampled_from(["excluded", "left"]))
ENTRIES = st.lists(
    st.builds(
        LogEntry, TS, NAMES, st.one_of(st.none(), st.integers(-(2**31), 2**31), st.text(max_size=5))
    ),
    max_size=3,
).map(tuple)
MEMBERS = st.dictionaries(NAMES, INCARNATION, max_size=4)


def _forged() -> st.SearchStrategy[Message]:
    head: dict[str, Any] = {"ts": TS, "incarnation": INCARNATION, "seen": SEEN}
    return st.one_of(
        st.builds(
            Action,
            **head,
            payload=st.one_of(st.none(), st.integers(-(2**31), 2**31), st.binary(max_size=8)),
        ),
        st.builds(Heartbeat, **head),
        st.builds(
            StateHash, **head, index=st.integers(0, 500), digest=st.binary(min_size=16, max_size=16)
        ),
        st.builds(JoinRequest, **head),
        st.builds(LeaveNotice, **head),
        st.builds(Prepare, **head, epoch=EPOCH, ballot=st.integers(1, 5)),
        st.builds(
            Promise,
            **head,
            epoch=EPOCH,
            ballot=st.integers(1, 5),
            proposer=NAMES,
            clock=TS,
            frozen=st.dictionaries(NAMES, st.tuples(INCARNATION, TS), max_size=3),
            observed=MEMBERS,
            reasons=st.dictionaries(NAMES, REMOVAL, max_size=2),
            additions=MEMBERS,
            accepted=st.integers(0, 5),
            accepted_by=NAMES,
            value_marker=TS,
            value_removals=st.dictionaries(NAMES, REMOVAL, max_size=2),
            value_additions=MEMBERS,
            entries=ENTRIES,
        ),
        st.builds(
            Accept,
            **head,
            epoch=EPOCH,
            ballot=st.integers(1, 5),
            marker=TS,
            removals=st.dictionaries(NAMES, REMOVAL, max_size=2),
            additions=MEMBERS,
            entries=ENTRIES,
        ),
        st.builds(Accepted, **head, epoch=EPOCH, ballot=st.integers(1, 5), proposer=NAMES),
        st.builds(
            ViewDecision,
            **head,
            epoch=EPOCH,
            marker=TS,
            members=MEMBERS,
            removals=st.dictionaries(NAMES, REMOVAL, max_size=2),
            additions=MEMBERS,
            entries=ENTRIES,
        ),
        st.builds(
            SnapshotRequest,
            **head,
            min_index=st.integers(0, 500),
            anchor_epoch=st.one_of(st.none(), EPOCH),
        ),
        st.builds(
            Snapshot,
            **head,
            index=st.integers(0, 500),
            epoch=EPOCH,
            anchor=st.one_of(st.none(), st.integers(0, 500)),
            state=st.one_of(st.none(), st.integers(-(2**31), 2**31)),
        ),
        st.builds(Expulsion, **head, epoch=EPOCH, target=INCARNATION),
    )


BARRAGE = st.lists(
    st.tuples(st.floats(0.2, 2.0), st.sampled_from(HONEST), _forged()), min_size=1, max_size=12
)


@settings(max_examples=100, deadline=None)
@given(BARRAGE, st.integers(0, 10_000))
def test_forged_frames_from_a_stranger_never_split_or_corrupt_the_table(
    barrage: list[tuple[float, str, Message]], seed: int
) -> None:
    sim = SimNetwork(
        HONEST,
        seed=seed,
        core_config=FAST,
        link=LinkModel(delay_min=0.001, delay_max=0.004),
        app_factory=HashChainApp.factory(rate=10.0, stop_at=2.5, hash_every=4),
    )
    for at, target, message in barrage:
        sim.call_at(at, lambda t=target, m=message: _deliver(sim, t, encode_message(m)))
    sim.run_until(2.5 + 3.0)
    scenario = Scenario(seed, len(HONEST), sim.link, 10.0, 2.5, 3.0)
    assert sorted(node.peer_id for node in sim.members()) == HONEST, barrage
    check_agreement(sim, scenario)


def _deliver(sim: SimNetwork, target: str, frame: bytes) -> None:
    """The frame arrives on the stranger's connection to ``target``."""
    node = sim.nodes[target]
    if node.alive:
        sim.after_core_call(node, node.core.receive(STRANGER, frame, sim.now))
