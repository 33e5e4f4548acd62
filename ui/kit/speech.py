"""The move readout's channels besides the message strip: standard output and the system's voice.

- ``print_readout(line)`` writes one line to standard output as UTF-8 (``--readout``: a screen
  reader or a terminal follows it); a piped stdout on Windows would otherwise be cp1252, which
  has no ♥.
- ``speech_command(platform, which)`` is the command that speaks on ``platform`` (pure: ``which``
  finds a program on the PATH): macOS ``say``, Windows' SAPI through PowerShell
  (``System.Speech``), Linux ``spd-say`` or ``espeak-ng`` / ``espeak``; None where there is none.
- ``Speaker`` runs it for each sentence as a subprocess, one at a time, never waiting for it:
  the window goes on drawing while it speaks. The sentence (which holds other players' names,
  untrusted) is never part of a shell string: it is one argument of an argument list, or, for
  PowerShell, an environment variable its fixed script reads. A command that fails is said
  once (``on_problem``), and the speaker stays quiet from then on.

No pyglet here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

__all__ = [
    "SAY_ENV",
    "Speaker",
    "print_readout",
    "speech_command",
    "spoken",
]

SAY_ENV: Final = "NERTS_LAN_SAY"
"""The environment variable the Windows command's script reads the sentence from."""

_WINDOWS_SCRIPT: Final = (
    "Add-Type -AssemblyName System.Speech; "
    "(New-Object System.Speech.Synthesis.SpeechSynthesizer).Speak($env:" + SAY_ENV + ")"
)
_MAX_QUEUED: Final = 4
"""Sentences waiting to be spoken at most: older ones are dropped (the table moved on)."""
_SUITS: Final = {"♠": " of spades", "♥": " of hearts", "♦": " of diamonds", "♣": " of clubs"}
_RANKS: Final = {"A": "ace", "J": "jack", "Q": "queen", "K": "king"}


def print_readout(line: str) -> None:
    """One readout line on standard output, UTF-8 whatever the console's code page."""
    stream = sys.stdout
    if stream is None:
        return
    buffer = getattr(stream, "buffer", None)
    try:
        if buffer is not None:
            stream.flush()
            buffer.write((line + "\n").encode("utf-8"))
            buffer.flush()
        else:
            stream.write(line + "\n")
            stream.flush()
    except (OSError, ValueError):
        pass  # a closed or broken stdout does not stop the game


def speech_command(platform: str, which: Callable[[str], str | None]) -> list[str] | None:
    """The command (without the sentence) that speaks on ``platform`` (``sys.platform``), or
    None when none is installed. On Windows the sentence goes in ``SAY_ENV``; elsewhere it is
    the command's last argument."""
    if platform == "darwin":
        found = which("say")
        return [found] if found else None
    if platform == "win32":
        for name in ("powershell", "pwsh"):
            found = which(name)
            if found:
                return [found, "-NoProfile", "-NonInteractive", "-Command", _WINDOWS_SCRIPT]
        return None
    for name in ("spd-say", "espeak-ng", "espeak"):
        found = which(name)
        if found:
            return [found]
    return None


def spoken(text: str) -> str:
    """``text`` as a voice should say it: "5♥" is "5 of hearts", "K♠" "king of spades"; any
    control character is a space, and it never starts with "-" (no program takes it for an
    option)."""
    for symbol, words in _SUITS.items():
        for rank, name in _RANKS.items():
            text = text.replace(rank + symbol, name + words)
        text = text.replace(symbol, words)
    text = "".join(c if c.isprintable() else " " for c in text).strip()
    return " " + text if text.startswith("-") else text


class Speaker:
    """Speaks sentences with ``command`` (``speech_command``'s), one process at a time."""

    def __init__(
        self,
        command: Sequence[str] | None,
        on_problem: Callable[[str], None],
        *,
        platform: str = sys.platform,
        start: Callable[..., Any] = subprocess.Popen,
    ) -> None:
        """``start`` makes the process (``subprocess.Popen``; a test's fake)."""
        self.command = list(command) if command else None
        self.on_problem = on_problem
        self.platform = platform
        self._start = start
        self.queue: list[str] = []
        self.process: Any = None
        self.failed = False
        """A command failed: said once, and nothing more is spoken."""

    @classmethod
    def for_this_system(cls, on_problem: Callable[[str], None]) -> Speaker:
        return cls(speech_command(sys.platform, shutil.which), on_problem)

    def say(self, sentence: str) -> None:
        """Speak ``sentence`` after what is being spoken (never waiting for it); without a
        command, say so (once)."""
        if self.failed:
            return
        if self.command is None:
            self._fail("no speech command was found (say, PowerShell, spd-say or espeak)")
            return
        self.queue.append(spoken(sentence))
        del self.queue[:-_MAX_QUEUED]
        self.poll()

    def poll(self) -> None:
        """Start the next sentence once the last one is spoken; note a command that failed."""
        if self.failed:
            return
        if self.process is not None:
            code = self.process.poll()
            if code is None:
                return
            self.process = None
            if code != 0:
                self._fail(f"the speech command ended with status {code}")
                return
        if self.queue:
            self._speak(self.queue.pop(0))

    def close(self) -> None:
        """Stop speaking (the table is gone)."""
        self.queue.clear()
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.terminate()
        self.process = None

    def _speak(self, text: str) -> None:
        assert self.command is not None
        environment = None
        arguments = [*self.command]
        if self.platform == "win32":
            environment = {**os.environ, SAY_ENV: text}
        else:
            arguments.append(text)
        try:
            self.process = self._start(
                arguments,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, ValueError) as error:
            self._fail(str(error) or type(error).__name__)

    def _fail(self, why: str) -> None:
        self.failed = True
        self.queue.clear()
        self.on_problem(f"Moves cannot be spoken here ({why}): they are still shown")
