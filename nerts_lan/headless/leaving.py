"""How a headless peer is asked to leave its table, on every OS, so that it says goodbye (a
deliberate leave, ``peer_left`` at the others) instead of vanishing (a crash, ``peer_gone``):

- SIGTERM (``kill``, a service manager) and SIGHUP (its terminal was closed), where the OS has
  them; Ctrl+C raises ``KeyboardInterrupt``, which leaves on its way out;
- on Windows, Ctrl+Break (SIGBREAK), and the console window closed, a logoff or a shutdown
  (``CTRL_CLOSE_EVENT`` and the like): Windows ends the process as soon as the console handler
  returns, and at the latest about 5 s after the event, so the handler waits for the goodbye
  (up to ``CONSOLE_GRACE``);
- a line ``leave`` on standard input when it is a pipe: what tests and scripts use on every OS,
  since on Windows ``Popen.terminate`` ends a process at once with nothing to catch. Other lines
  are ignored with a word on standard error; the pipe's end asks nothing (a parent that merely
  closed it, or died, is no request to leave).

The same pipe also carries ``react NAME`` lines (``react gg``): a reaction the peer sends for its
seat at its next turn (``reactions_for``), as a player's Shift+number key does in the window.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import stat
import sys
import threading
from collections.abc import Callable
from typing import Any

from nerts_lan.rules.actions import REACTIONS, React

__all__ = ["CONSOLE_GRACE", "LEAVE_LINE", "REACT_LINE", "LeaveRequest", "closing_console_event"]

LEAVE_LINE = "leave"
"""The line on a headless peer's standard input that asks it to leave."""

REACT_LINE = "react"
"""The word that starts a line asking for a reaction: ``react nice``."""

CONSOLE_GRACE = 4.0
"""Seconds the console handler waits for the goodbye, of the about 5 s Windows allows."""

_SIGNALS = ("SIGTERM", "SIGHUP", "SIGBREAK")
"""The signals that ask for a leave, those of them the OS has (SIGHUP: POSIX; SIGBREAK:
Windows' Ctrl+Break)."""

_CLOSING_CONSOLE_EVENTS = {2: "console closed", 5: "logoff", 6: "shutdown"}
"""Windows' console control events that end the process (CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT,
CTRL_SHUTDOWN_EVENT); Ctrl+C (0) and Ctrl+Break (1) go on to Python's own handlers."""


def closing_console_event(event: int) -> str | None:
    """What a Windows console control event means for a peer: why it must leave, or None for
    an event that does not end the process (Ctrl+C, Ctrl+Break: SIGINT and SIGBREAK)."""
    return _CLOSING_CONSOLE_EVENTS.get(event)


class LeaveRequest:
    """Set when something asked the peer to leave; ``listen`` to hear it, ``left`` once gone."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._requested = threading.Event()
        self._left = threading.Event()
        self._previous: dict[int, Any] = {}
        self._console_handler: object | None = None
        self._reactions: queue.SimpleQueue[str] = queue.SimpleQueue()

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    def request(self, reason: str) -> None:
        """Ask the peer to leave at its next turn (from any thread or a signal handler)."""
        if self.reason is None:
            self.reason = reason
        self._requested.set()

    def listen(self, stdin: int | None = None) -> None:
        """Hear every way of asking (see the module's docstring): the signals and the console
        only from the main thread; the ``leave`` line when ``stdin`` (a descriptor; default:
        standard input's) is a pipe."""
        if threading.current_thread() is threading.main_thread():
            self._catch_signals()
            self._catch_console_close()
        fd = _standard_input() if stdin is None else stdin
        if fd is not None and _is_pipe(fd):
            threading.Thread(target=self._watch, args=(fd,), name="leave-line", daemon=True).start()

    def reactions_for(self, players: tuple[str, ...]) -> list[React]:
        """The reactions asked for on standard input since the last call, for the first of
        ``players`` (this peer's seats; none: they are dropped)."""
        asked = []
        while not self._reactions.empty():
            asked.append(self._reactions.get_nowait())
        return [React(players[0], say) for say in asked] if players else []

    def left(self) -> None:
        """The peer has left (its goodbye sent): a waiting console handler may return, and the
        signals go back to what they did before."""
        self._left.set()
        if self._console_handler is not None:
            _unset_console_handler(self._console_handler)
            self._console_handler = None
        for signum, handler in self._previous.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, handler)
        self._previous.clear()

    def on_console_event(self, event: int) -> bool:
        """A Windows console control event (on the thread Windows starts for it): True when
        handled. A closing console asks for a leave and waits for it, since returning lets
        Windows end the process."""
        reason = closing_console_event(event)
        if reason is None:
            return False
        self.request(reason)
        self._left.wait(CONSOLE_GRACE)
        return True

    # --- helpers --------------------------------------------------------------------------------

    def _catch_signals(self) -> None:
        for name in _SIGNALS:
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            with contextlib.suppress(ValueError, OSError):
                self._previous[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.request(signal.Signals(signum).name)

    def _catch_console_close(self) -> None:
        if sys.platform == "win32":
            self._console_handler = _set_console_handler(self.on_console_event)

    def _watch(self, fd: int) -> None:
        """Read ``fd`` for the ``leave`` and ``react`` lines. Raw reads: a thread blocked in
        ``sys.stdin`` would hold its lock and stop the interpreter's exit."""
        pending = b""
        while not self._requested.is_set():
            try:
                chunk = os.read(fd, 1024)
            except OSError:
                return
            if not chunk:
                return  # the pipe's end: no request
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                text = line.decode("utf-8", "replace").strip()
                if text == LEAVE_LINE:
                    self.request(f"{LEAVE_LINE} on standard input")
                    return
                word, _, say = text.partition(" ")
                if word == REACT_LINE and say.strip() in REACTIONS:
                    self._reactions.put(say.strip())
                    continue
                if text:
                    sys.stderr.write(
                        f"nerts-lan: ignored {text[:40]!r} on standard input: "
                        f"only {LEAVE_LINE!r} and {REACT_LINE!r} NAME are understood\n"
                    )


def _standard_input() -> int | None:
    try:
        return sys.stdin.fileno() if sys.stdin is not None else None
    except (OSError, ValueError, AttributeError):
        return None  # replaced (pytest's capture) or closed


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


if sys.platform == "win32":

    def _set_console_handler(on_event: Callable[[int], bool]) -> object | None:
        """Register ``on_event`` with ``SetConsoleCtrlHandler``; the handle to keep alive (None
        when there is no console to hear, as under a service)."""
        import ctypes
        from ctypes import wintypes

        routine = ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.DWORD)(on_event)
        if not ctypes.windll.kernel32.SetConsoleCtrlHandler(routine, True):
            return None
        return routine

    def _unset_console_handler(routine: object) -> None:
        import ctypes

        ctypes.windll.kernel32.SetConsoleCtrlHandler(routine, False)

else:

    def _set_console_handler(on_event: Callable[[int], bool]) -> object | None:
        return None  # no Windows console here

    def _unset_console_handler(routine: object) -> None:
        pass
