"""The move readout (an accessibility option): every move the table takes, as a plain sentence.

"You: 5♥ from work pile 2 to foundation 3", "Bo: 7♣ from the waste to work pile 1" (in
``wording.move_sentence``'s words), shown in the message strip (``show``, the table screen's
``say``), handed to ``sink`` (standard output with ``--readout``, or a test's list) and, with
the Speak moves option, to the system's voice (``ui.kit.speech.Speaker``). What else the strip
says (a refusal's reason, a hint, the round's start, who is stuck) goes to the sink and the
voice too (``news``), so that a player who cannot see the strip misses none of it. The option
says whose moves: everyone's or only this player's ("yours"); other players' flips are left out
(they come every few seconds and change nothing the player shares). Started with
``--readout`` while the option is off, everyone's moves are read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from nerts_lan.rules.actions import Flip
from nerts_lan.rules.state import State
from nerts_lan.table.replica import ActionApplied
from ui.config import Settings
from ui.kit.wording import move_sentence
from ui.table.message_kind import MessageKind

__all__ = ["MoveReadout", "SpeakerLike"]

_REMEMBERED = 256
"""Moves remembered as read: a reorder counts a recent move again, never one long past."""


class SpeakerLike(Protocol):
    def say(self, sentence: str) -> None: ...

    def poll(self) -> None: ...

    def close(self) -> None: ...


class MoveReadout:
    """Sentences for one seat's table: ``applied(event, state)`` reads a move out."""

    def __init__(
        self,
        settings: Settings,
        player: str,
        sink: Callable[[str], None] | None,
        show: Callable[[MessageKind, str], None],
        speaker: Callable[[Callable[[str], None]], SpeakerLike] | None = None,
    ) -> None:
        """``show(kind, text)`` puts a line in the message strip; ``speaker(on_problem)`` makes
        the voice when Speak moves is on (by default ``Speaker.for_this_system``)."""
        self.player = player
        self.sink = sink
        self.show = show
        self._make_speaker = speaker
        self._speaker: SpeakerLike | None = None
        self._read: dict[object, None] = {}
        """The latest moves read (``_REMEMBERED``): one counted again after a reorder is not
        read twice."""
        self.settings = settings
        self.use(settings)

    @property
    def whose(self) -> str:
        """Whose moves are read: "off", "everyone" or "yours"."""
        chosen = self.settings.readout
        return "everyone" if chosen == "off" and self.sink is not None else chosen

    def use(self, settings: Settings) -> None:
        """The options changed: start or stop the voice."""
        self.settings = settings
        if settings.speak_moves and self.whose != "off" and self._speaker is None:
            self._speaker = self._new_speaker()
        elif not settings.speak_moves and self._speaker is not None:
            self._speaker.close()
            self._speaker = None

    def applied(self, event: ActionApplied, state: State) -> str | None:
        """Read out a move the table took (``state``: the table after it): in the strip, to the
        sink and the voice; the sentence, or None when it is not to be read."""
        action = event.action
        mine = action.by == self.player or event.local
        whose = self.whose
        seen = (event.key, action)
        if whose == "off" or (whose == "yours" and not mine) or seen in self._read:
            return None
        self._read[seen] = None
        if len(self._read) > _REMEMBERED:
            del self._read[next(iter(self._read))]
        if isinstance(action, Flip) and not mine:
            return None
        sentence = move_sentence("You" if mine else action.by, action, state)
        self.show(MessageKind.MOVE, sentence)
        self._out(sentence)
        return sentence

    def news(self, kind: MessageKind, text: str) -> None:
        """The strip shows ``text`` (not a move): to the sink and the voice as well."""
        if kind is not MessageKind.MOVE and text and self.whose != "off":
            self._out(text)

    def poll(self) -> None:
        """Let the voice go on to its next sentence."""
        if self._speaker is not None:
            self._speaker.poll()

    def close(self) -> None:
        if self._speaker is not None:
            self._speaker.close()
            self._speaker = None

    def _out(self, text: str) -> None:
        if self.sink is not None:
            self.sink(text)
        if self._speaker is not None:
            self._speaker.say(text)

    def _problem(self, text: str) -> None:
        """The voice failed: said in the strip (and so to the sink), once."""
        self.show(MessageKind.TABLE, text)

    def _new_speaker(self) -> SpeakerLike:
        if self._make_speaker is not None:
            return self._make_speaker(self._problem)
        from ui.kit.speech import Speaker

        return Speaker.for_this_system(self._problem)
