"""This peer's part in drawing each round's seed (commit, then reveal: see
``nerts_lan.table.machine``), and when its commit to a next deal goes: at once for the first
round, after the intermission for the next ones, or, at a window's seat, once its player says
"next round" (``PeerOptions.pace`` bounds that wait). The deal waits for every member's commit,
so it comes once every such player is ready. Part of ``TablePeer``; no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from nerts_lan.table.commands import Commit, Rematch, Reveal, TableCommand
from nerts_lan.table.effects import CommitTimer
from nerts_lan.table.machine import TableMachine, TablePhase, commit_digest

__all__ = ["SeedDrawing"]


class SeedDrawing:
    """One peer's commits and reveals, round by round."""

    def __init__(
        self,
        machine: Callable[[], TableMachine],
        nonce: Callable[[], bytes],
        submit: Callable[[TableCommand], None],
        start_timer: Callable[[CommitTimer, float], None],
    ) -> None:
        """``machine``: the peer's table machine now (a snapshot installed replaces it);
        ``nonce``: a fresh random nonce; ``submit`` orders a command; ``start_timer`` asks for
        ``on_timer`` after so many seconds."""
        self._machine = machine
        self._nonce = nonce
        self._submit = submit
        self._start_timer = start_timer
        self._nonces: dict[int, bytes] = {}
        self._dealt_on = 0
        """The round this peer's player said "next round" for (its commit went then)."""
        self._rematches_asked = 0

    def commit_due(self, round_number: int, wait: float) -> None:
        """The machine asks for our commit to ``round_number``: now, or after ``wait`` seconds
        (a round after the first; ``deal_on`` may cut the wait short)."""
        if round_number == self._dealt_on:
            self._commit(round_number)  # its player asked for it already (a rematch)
        elif round_number > 1 and wait > 0:
            self._start_timer(CommitTimer(round_number), wait)
        else:
            self._commit(round_number)

    def reveal_due(self, round_number: int) -> None:
        """Every commit to ``round_number`` is stable: reveal ours (if we committed)."""
        kept = self._nonces.get(round_number)
        if kept is not None:
            self._submit(Reveal(round_number, kept.hex()))

    def on_timer(self, timer: CommitTimer) -> None:
        """The wait before our commit to ``timer.round`` ran out."""
        if self._due(timer.round) and timer.round != self._dealt_on:
            self._commit(timer.round)

    def deal_on(self) -> None:
        """This peer's player is ready for the next deal: commit to it now. Once the match is
        over, ask for a rematch (``Rematch``: the same people, every seat moved on one team)
        and commit as soon as it draws its first deal."""
        machine = self._machine()
        round_number = machine.round_number
        if machine.phase is TablePhase.OVER:
            self._submit(Rematch(round_number))
            self._dealt_on = round_number + 1
        elif self._due(round_number) and round_number != self._dealt_on:
            self._dealt_on = round_number
            self._commit(round_number)

    def match_over(self, rematches: int) -> None:
        """The match is over: ask for a rematch if this peer asked fewer than ``rematches``
        (``PeerOptions.rematches``: a headless peer's)."""
        if self._rematches_asked < rematches:
            self._rematches_asked += 1
            self.deal_on()

    def _due(self, round_number: int) -> bool:
        machine = self._machine()
        return machine.phase is TablePhase.SEEDING and machine.round_number == round_number

    def _commit(self, round_number: int) -> None:
        nonce = self._nonce()
        self._nonces[round_number] = nonce
        self._submit(Commit(round_number, commit_digest(nonce)))
