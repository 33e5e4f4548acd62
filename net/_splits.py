"""Split-brain resolution of the core: rival groups that removed each other.

Private to `net.core`. See "Splits" in docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from net._outbox import Outbox
from net.messages import Expulsion

__all__ = ["Rivals", "group_rank"]


@dataclass
class _Rival:
    """A member of a group split from ours: its incarnation, the latest view it told us and the
    view we last told it."""

    incarnation: int
    heard: dict[str, int] = field(default_factory=dict)
    told: dict[str, int] = field(default_factory=dict)


class Rivals:
    """The members of groups split from ours that removed us, and what we told them."""

    def __init__(self, outbox: Outbox) -> None:
        self._out = outbox
        self._rivals: dict[str, _Rival] = {}

    def on_expulsion(self, peer: str, msg: Expulsion, view: Mapping[str, int], epoch: int) -> bool:
        """A former member `peer`, removed by us, expelled us: the group split in two. Returns
        True when our group ranks lower and must dissolve."""
        out = self._out
        theirs = {p: inc for p, (inc, _) in msg.seen.items()}
        theirs[peer] = msg.incarnation
        if theirs.get(out.peer_id) == out.incarnation:
            return False  # not a group that removed us: a member of ours that dissolved
        if view.get(peer, -1) > msg.incarnation:
            return False  # its sender has rejoined us since
        # Their view may be out of date (sent while the link was down), and dissolving cannot
        # be undone: members we hold do not count for them. Our own changes reach them below.
        rival = {p: inc for p, inc in theirs.items() if view.get(p, -1) < inc}
        if group_rank(rival) < group_rank(view):
            return True
        known = self._rivals.get(peer)
        if known is None or known.incarnation != msg.incarnation:
            known = self._rivals[peer] = _Rival(msg.incarnation)
        if theirs != known.heard:
            # Answer a new view with ours, even unchanged: it judges again by our latest.
            known.heard = theirs
            known.told = {}
        self.tell(view, epoch)
        return False

    def tell(self, view: Mapping[str, int], epoch: int) -> None:
        """Send rival members our view when it changed since we last told them: each side
        judges the split by the other's latest view, so one of them dissolves."""
        out = self._out
        for peer, rival in sorted(self._rivals.items()):
            if view.get(peer, -1) >= rival.incarnation:
                del self._rivals[peer]  # it joined us
            elif rival.told != view:
                rival.told = dict(view)
                ts = out.tick_clock()
                target = rival.incarnation
                out.send(peer, Expulsion(ts, out.incarnation, out.seen(), epoch, target))

    def dissolve(self, dests: list[str], view: Mapping[str, int], epoch: int) -> None:
        """Expel every member of our group (then the core expels itself): each rejoins the
        rival group."""
        out = self._out
        for dest in dests:
            ts = out.tick_clock()
            out.send(dest, Expulsion(ts, out.incarnation, out.seen(), epoch, view[dest]))


def group_rank(view: Mapping[str, int]) -> tuple[int, list[tuple[str, int]]]:
    """Orders the groups of a split, lowest first: the bigger group, then the one holding the
    lowest peer id (a newer incarnation of it first: the older one is a dead process)."""
    return (-len(view), sorted((peer, -inc) for peer, inc in view.items()))
