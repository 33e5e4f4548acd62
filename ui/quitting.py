"""Every way out of the app ends the same way: the window's loop stops, then each open window
closes as its close button would have it closed for good (its LAN table hears a goodbye, once),
and the process waits a little for that goodbye to go out before it ends.

The ways out that are not the window's own close button or Esc all come here as ``request_quit``:
``pyglet.app.exit()`` itself, SIGTERM and SIGHUP (a ``kill``, the terminal closed), SIGBREAK on
Windows (the console window closed), and on macOS Cmd+Q, the Dock's Quit and a logout. Those
last three reach the app as NSApplication's ``terminate:``, which ends the process with C's
``exit()`` after its delegate's ``applicationWillTerminate:``: no Python runs after it, so no
goodbye. The app's delegate therefore answers ``applicationShouldTerminate:`` with "cancel" and
quits the app's own way instead.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pyglet

__all__ = ["QUIT_SIGNALS", "answer_macos_quit", "quit_on_signals", "request_quit"]

QUIT_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGBREAK") if hasattr(signal, name)
)
"""The signals that end the window's process as a quit (SIGINT stays Python's
KeyboardInterrupt, which unwinds through the same ending)."""

NS_TERMINATE_CANCEL = 0
"""NSApplicationTerminateReply's NSTerminateCancel."""


def request_quit() -> None:
    """Stop the window's loop; the loop's ending closes the windows (``ui.app``)."""
    pyglet.app.exit()


def quit_on_signals() -> Callable[[], None]:
    """Make ``QUIT_SIGNALS`` quit the app (on macOS this replaces pyglet's own SIGTERM handler,
    which calls ``terminate:``); returns what puts the previous handlers back."""
    previous: dict[signal.Signals, Any] = {}

    def quit_now(signum: int, frame: FrameType | None) -> None:
        request_quit()

    for each in QUIT_SIGNALS:
        previous[each] = signal.signal(each, quit_now)

    def restore() -> None:
        for each, handler in previous.items():
            signal.signal(each, handler)

    return restore


def answer_macos_quit(
    quit: Callable[[], None] = request_quit, platform: str = sys.platform
) -> bool:
    """On macOS, make ``terminate:`` (Cmd+Q, the Dock's Quit, a logout) call ``quit`` instead of
    ending the process; True when it did (False elsewhere, or when it was done already)."""
    if platform != "darwin":
        return False
    # pyglet's own application delegate (a private name: pyglet 2.1 has no public hook).
    from pyglet.app.cocoa import NSApplication, _AppDelegate_Implementation

    delegate_class = _AppDelegate_Implementation._AppDelegate
    if "applicationShouldTerminate:" in delegate_class._imp_table:
        return False

    @delegate_class.method("Q@")  # type: ignore[untyped-decorator]
    def applicationShouldTerminate_(self: Any, sender: Any) -> int:
        quit()
        return NS_TERMINATE_CANCEL

    app = NSApplication.sharedApplication()
    app.setDelegate_(app.delegate())  # AppKit may cache what the delegate answers
    return True
