"""Our own grounds for removing members: whom we heard nothing from for the exclusion timeout;
and those a promise passes on (leaves, join requests).
Private to `net._order.core`; see "Membership (views)" in docs/protocol.md (what the voters' grounds
together remove is `net._order.viewchange.choose_change`).
"""

from __future__ import annotations

from collections.abc import Mapping

from net._order.messages import Promise
from net._order.wirefields import REASON_LEFT

__all__ = ["note_grounds", "observe"]


def observe(
    view: Mapping[str, int],
    me: str,
    last_heard: Mapping[str, float],
    now: float,
    exclude_timeout: float,
    violators: set[tuple[str, int]],
) -> dict[str, int]:
    """Members we have heard nothing from for the exclusion timeout since `last_heard` them
    (or that broke the protocol): our own grounds to remove them."""
    return {
        p: inc
        for p, inc in view.items()
        if p != me and (now - last_heard[p] >= exclude_timeout or (p, inc) in violators)
    }


def note_grounds(
    msg: Promise,
    me: str,
    view: Mapping[str, int],
    reasons: dict[str, str],
    leave_proofs: dict[str, bytes],
    joiners: dict[str, int],
) -> None:
    """Take a promise's grounds: the leaves it reports (with their signed notices) and the join
    requests it got (of incarnations newer than the view's and ours)."""
    for target, removal in msg.reasons.items():
        if removal.reason == REASON_LEFT and target != me:
            reasons[target] = REASON_LEFT
            leave_proofs.update({target: removal.proof} if removal.proof else {})
    for target, inc in msg.additions.items():
        if joiners.get(target, -1) < inc and view.get(target, -1) < inc:
            joiners[target] = inc
