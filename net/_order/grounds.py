"""Our own grounds for removing members: whom we heard nothing from for the exclusion timeout.
Private to `net._order.core`; see "Membership (views)" in docs/protocol.md (what the voters' grounds
together remove is `net._order.viewchange.choose_change`).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["observe"]


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
