"""``nerts-lan bench --only keys``: what peer keys cost an action (issue 14, claims are checked).

Ed25519 signing and checking on their own, then the same actions through a signed and an unsigned
ordering core (a member submits, another receives its frame): the difference is what signing and
checking add to each action, and the frame sizes what they add on the wire. Times are this
thread's CPU time (other jobs on the machine slow the wall clock, not the work).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from nerts_lan.rules.engine import deal_round, legal_actions
from nerts_lan.rules.state import Options, Table
from nerts_lan.table.commands import Act
from net import Identity, OrderingCore, PeerKey, verify

__all__ = ["bench_keys"]


def bench_keys(quick: bool = False) -> dict[str, Any]:
    """Microseconds per signature and per check, per action in the core, and bytes per frame."""
    count = 300 if quick else 2000
    payloads = _payloads(count)
    key = PeerKey.generate()
    message = b"x" * 100
    signature = key.sign(message)
    sign_us = _per_call_us(lambda: key.sign(message), count)
    verify_us = _per_call_us(lambda: verify(key.public_bytes, message, signature), count)
    unsigned = _through_cores(payloads, signed=False)
    signed = _through_cores(payloads, signed=True)
    return {
        "actions": count,
        "ed25519_sign_us": round(sign_us, 1),
        "ed25519_verify_us": round(verify_us, 1),
        "core_submit_us": {"unsigned": unsigned["submit_us"], "signed": signed["submit_us"]},
        "core_receive_action_us": {
            "unsigned": unsigned["receive_us"],
            "signed": signed["receive_us"],
        },
        "added_per_action_us": {
            "author": round(signed["submit_us"] - unsigned["submit_us"], 1),
            "each_receiver": round(signed["receive_us"] - unsigned["receive_us"], 1),
        },
        "action_frame_bytes": {
            "unsigned": unsigned["frame_bytes"],
            "signed": signed["frame_bytes"],
        },
        "handshake_proof_us": round(2 * (sign_us + verify_us), 1),
    }


def _payloads(count: int) -> list[Any]:
    """The wire form of real actions (what four players may do after a deal), as the table
    orders them."""
    teams = tuple(f"team{i + 1}" for i in range(4))
    table = Table(Options(), teams, tuple((f"p{i + 1}",) for i in range(4)))
    dealt = deal_round(table, "keys-bench")
    actions = [a for team in table.team_players for a in legal_actions(dealt, team[0])]
    return [Act.of(1, actions[i % len(actions)]).to_wire() for i in range(count)]


def _through_cores(payloads: list[Any], signed: bool) -> dict[str, float]:
    """One member submits every payload, another receives each frame (four members, so frames
    carry a realistic ``seen``): the best of three runs, per action."""
    labels = ["ann", "bo", "cy", "dee"]
    keys = {label: PeerKey.generate() for label in labels}
    # Unsigned, the ids of the game before peer keys: a slug and 8 hex digits.
    ids = [keys[n].peer_id(n) if signed else f"{n}-{i:08x}" for i, n in enumerate(labels)]
    best = {"submit_us": float("inf"), "receive_us": float("inf"), "frame_bytes": 0.0}
    for _ in range(3):
        cores = [
            OrderingCore(
                peer, ids, 0.0, identity=Identity(keys[label], "bench") if signed else None
            )
            for label, peer in zip(labels, ids)
        ]
        author, receiver = cores[0], cores[1]
        frames: list[bytes] = []
        start = time.thread_time()
        for payload in payloads:
            author.submit(payload, 0.0)
            frames += [data for dest, data in author.outgoing() if dest == receiver.peer_id]
        submitted = time.thread_time() - start
        start = time.thread_time()
        for data in frames:
            receiver.receive(author.peer_id, data, 0.0)
        received = time.thread_time() - start
        best["submit_us"] = min(best["submit_us"], round(submitted / len(payloads) * 1e6, 1))
        best["receive_us"] = min(best["receive_us"], round(received / len(frames) * 1e6, 1))
        best["frame_bytes"] = round(sum(len(f) for f in frames) / len(frames), 1)
    return best


def _per_call_us(call: Callable[[], object], count: int) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        for _ in range(count):
            call()
        best = min(best, time.thread_time() - start)
    return best / count * 1e6
