"""A match log replayed in the real window, driven by real key and mouse events."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from nerts_lan.replay import PACE
from tests.test_replay import ROOT, load, write_match_log
from tests.ui.conftest import Harness


def _open(harness: Harness, log: Path) -> object:
    harness.window.start_replay(load(log))
    harness.frame()
    return harness.window.current


def test_the_replay_plays_steps_and_skips_rounds_and_escape_leaves(
    harness: Harness, tmp_path: Path
) -> None:
    from pyglet.window import key

    from ui.screens.replay import ReplayScreen
    from ui.table.overlays import ScoreOverlay

    screen = _open(harness, write_match_log(tmp_path))
    assert isinstance(screen, ReplayScreen)
    replay = screen.replay
    writer_team = replay.table.team_of("p01")
    assert replay.playing and screen.read_only and screen.team == writer_team  # the writer's seat
    rounds, actions = replay.last_round_number, replay.action_total
    assert rounds >= 3

    harness.key(key.SPACE)
    harness.settle(0.5)
    assert not replay.playing
    shown, before, pixels = replay.action_number, screen.session.view, harness.pixels()[0]

    harness.key(key.RIGHT)
    harness.settle(0.5)
    assert replay.action_number == shown + 1 and screen.session.view != before
    assert harness.pixels()[0] != pixels
    assert screen.hud.round_label.text == (
        f"round 1 of {rounds} · action {shown + 1} of {actions} · paused 1×"
    )

    harness.key(key.UP)
    harness.key(key.SPACE)
    harness.settle(1.0)
    assert replay.playing and replay.speed == 2
    assert replay.action_number >= shown + 1 + int(1.0 / (PACE / 2)) - 1

    harness.key(key.N)
    harness.settle(0.2)
    assert replay.round_number == 2
    assert screen.hud.round_label.text.startswith(f"round 2 of {rounds} · action ")

    for _ in range(rounds - 1):
        harness.key(key.N)  # past the last deal: the last round's end and the final scores
    harness.settle(2.5)
    assert isinstance(screen.overlay, ScoreOverlay) and screen.overlay.match_over
    assert screen.hud.round_label.text.endswith("end of the match")

    harness.key(key.ESCAPE)  # closes the scoreboard
    assert screen.overlay is None and harness.window.current is screen
    harness.key(key.ESCAPE)  # leaves the replay: the window closes
    assert harness.window.has_exit and harness.window.current is None


def test_nobody_can_move_a_card_in_a_replay(harness: Harness, tmp_path: Path) -> None:
    from pyglet.window import key

    screen = _open(harness, write_match_log(tmp_path))
    harness.key(key.SPACE)
    harness.settle(0.5)
    before = screen.session.view
    area = screen.view.layout.own_area

    harness.drag(area.nerts.center, screen.view.layout.center.center)
    harness.click(*area.stock.center)
    harness.key(key.X)
    harness.settle(0.5)

    assert screen.session.view is before


def test_a_damaged_log_replays_up_to_the_damage_and_says_so(
    harness: Harness, tmp_path: Path
) -> None:
    from pyglet.window import key

    screen = _open(harness, write_match_log(tmp_path, cut=400))
    notice = screen.replay.notice
    assert notice is not None and "cut short" in notice
    assert screen._notice_label.text == f"Damaged log: {notice}"

    last = screen.replay.last_round_number  # the round the damage cut short
    for _ in range(last - 1):
        harness.key(key.N)
    harness.settle(0.5)
    assert screen.replay.round_number == last and screen.replay.action_number > 0
    harness.key(key.N)  # the log stops in its last round: its last action, no scoreboard
    harness.settle(2.5)
    assert screen.overlay is None
    assert screen.hud.round_label.text.endswith("end of the log")


_DRIVER = """
import sys
import pyglet
pyglet.options["headless"] = True
pyglet.options["audio"] = ("silent",)
from pyglet.window import key

def leave_once_it_plays(dt):
    # Waits for the replay to move (not for a wall-clock time: a loaded machine starts slowly).
    window = next(iter(pyglet.app.windows), None)
    if window is None or window.current is None or window.current.replay.action_number == 0:
        return
    pyglet.clock.unschedule(leave_once_it_plays)
    print(type(window.current).__name__, window.current.replay.action_number, flush=True)
    window.dispatch_event("on_key_press", key.ESCAPE, 0)

pyglet.clock.schedule_interval(leave_once_it_plays, 0.05)
from nerts_lan.cli.main import main
sys.exit(main(["replay", sys.argv[1]]))
"""


def test_the_command_opens_the_window_on_a_damaged_log_and_escape_ends_it(
    settings_dir: Path, tmp_path: Path
) -> None:
    """``nerts-lan replay FILE`` for real: pyglet's own event loop, a headless EGL window."""
    log = write_match_log(tmp_path, cut=400)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NERTS_LAN_CONFIG_DIR": str(settings_dir)}
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(log)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    screen, actions = done.stdout.split()
    assert screen == "ReplayScreen" and int(actions) > 0
    assert done.stderr.startswith("nerts-lan replay: error: the log is cut short at byte ")
    assert done.stderr.endswith(" records before it were replayed\n")
    assert done.stderr.count("\n") == 1
