"""The game's window on a real X display (Xvfb), where pyglet maps a window and sends it events
while the event loop runs: what headless EGL (tests/ui) never does."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

pytestmark = [
    pytest.mark.window,
    pytest.mark.skipif(sys.platform != "linux", reason="Xvfb: a Linux display server"),
    pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="no xvfb-run (apt install xvfb)"),
]

# The scoreboard's Show opens the coach's replay window from inside the running loop; pyglet's
# X11 window then sends on_resize from its constructor, before NertsWindow's own __init__ ends.
SECOND_WINDOW_WHILE_THE_LOOP_RUNS = """
import pyglet
from ui.app import make_window

first = make_window(800, 500)
opened = []

def open_second(dt):
    opened.append(make_window(640, 400))
    opened[0].dispatch_events()
    pyglet.app.exit()

pyglet.clock.schedule_once(open_second, 0.2)
pyglet.app.run(1 / 30)
second = opened[0]
print("second window", second.width, second.height, second.current, flush=True)
second.close_now()
first.close_now()
"""


def test_a_second_window_opened_while_the_event_loop_runs_opens() -> None:
    run = subprocess.run(
        ["xvfb-run", "-a", sys.executable, "-c", SECOND_WINDOW_WHILE_THE_LOOP_RUNS],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "second window 640 400 None" in run.stdout
