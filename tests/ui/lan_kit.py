"""What the window tests on the LAN share: frames paced by the wall clock until a condition
holds (network time is real), and a screen's button by its caption."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.ui.conftest import Harness
from tests.waiting import until


def run_until(harness: Harness, condition: Callable[[], Any], timeout: float = 15.0) -> Any:
    """Frames at about 100 a second until ``condition()`` is true (its value is returned)."""
    found: list[Any] = []

    def frame_and_check() -> bool:
        harness.frame()
        found[:] = [condition()]
        return bool(found[0])

    until(frame_and_check, timeout, what=f"a condition on {harness.window.current!r}", step=0.01)
    return found[0]


def button_named(screen: Any, caption: str) -> Any:
    found = [b for b in screen.buttons if b.text.text == caption]
    assert found, f"no {caption!r} button in {[b.text.text for b in screen.buttons]}"
    return found[0]
