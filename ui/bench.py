"""Frame figures of the window, headless: ``bench_ui(quick)`` returns a dict of numbers.

- ``frame_ms_p50`` / ``frame_ms_p95``: the cost of a drawn frame (poll the session, move the
  sprites, draw, and wait for the GL to finish) on a 6-team practice table, 1280 x 800, while bots
  at every seat (the local one included) keep cards moving; ``frame_ms_max`` the longest, and
  ``frame_ms_max_after_1s`` the longest once the first second (the atlas) is over.
- ``idle_cpu_share``: process CPU time over wall time while the same table stands still, with the
  real pyglet event loop running (the window polls 60 times a second, draws nothing).
- ``option_click_ms``: the frame of a click on Options' four-colour button (it shows its new value
  there); ``restyle_frames`` / ``restyle_frame_ms_max``: the frames that then draw the cards in
  the new look, and the longest of them; ``atlas_at_once_ms``: drawing all the cards in one go,
  which is what the click used to wait for.

Run it in a fresh process (``python -c "from ui.bench import bench_ui; print(bench_ui(True))"``):
it switches pyglet to headless before opening its window.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ui.app import NertsWindow

__all__ = ["bench_ui"]


def bench_ui(quick: bool = False) -> dict[str, Any]:
    """Measure the window on this machine (headless EGL); see the module docstring."""
    os.environ.setdefault("NERTS_LAN_CONFIG_DIR", tempfile.mkdtemp(prefix="nerts-bench-"))
    import pyglet

    pyglet.options["headless"] = True  # before the window's module loads pyglet.window
    pyglet.options["debug_gl"] = False
    pyglet.options["audio"] = ("silent",)
    from ui.app import make_window

    clock = [0.0]
    window = make_window(1280, 800, clock=lambda: clock[0])
    try:
        figures = _busy_table(window, clock, 8.0 if quick else 30.0)
        figures.update(_option_change(window, clock))
        figures.update(_idle_table(window, 1.5 if quick else 5.0))
        return figures
    finally:
        window.close()


def _busy_table(window: NertsWindow, clock: list[float], seconds: float) -> dict[str, Any]:
    """Frame costs on a 6-team practice table where bots at every seat keep cards moving."""
    import pyglet
    from pyglet import gl

    from nerts_lan.bots.bot import Bot
    from nerts_lan.practice import PracticeConfig, PracticeSession
    from ui.app import TICK
    from ui.screens.table import TableScreen

    config = PracticeConfig(player="Sam", opponents=5, seed="bench", delay_scale=0.25)
    window.start_practice(config)
    screen = window.current
    assert isinstance(screen, TableScreen) and isinstance(screen.session, PracticeSession)
    session = screen.session
    me = Bot("Sam", "hard", "bench-local", delay_scale=0.25)
    frame_times: list[float] = []
    settled: list[float] = []
    """The frames after the first second (the first ones draw the card atlas)."""
    next_local = 0.3
    while clock[0] < seconds:
        clock[0] += TICK
        if clock[0] >= next_local and session.view.outcome is None:
            action = me.decide(session.view)
            if action is not None:
                session.submit(action)
            next_local = clock[0] + max(me.reaction_delay(action), 0.05)
        if session.waiting_for_next_round:
            session.next_round()
        started = time.perf_counter()
        if window.tick():
            gl.glFinish()
            frame_times.append(time.perf_counter() - started)
            if clock[0] > 1.0:
                settled.append(frame_times[-1])
    frame_ms = sorted(t * 1000 for t in frame_times)
    return {
        "teams": 6,
        "window": "1280x800",
        "renderer": pyglet.gl.gl_info.get_renderer(),
        "frames_drawn": len(frame_ms),
        "frame_ms_p50": round(statistics.median(frame_ms), 2) if frame_ms else None,
        "frame_ms_p95": round(_percentile(frame_ms, 95), 2) if frame_ms else None,
        "frame_ms_max": round(frame_ms[-1], 2) if frame_ms else None,
        "frame_ms_max_after_1s": round(max(settled) * 1000, 2) if settled else None,
    }


def _option_change(window: NertsWindow, clock: list[float]) -> dict[str, Any]:
    """The cost of turning the four-colour deck on, from the click to the cards' new look."""
    from pyglet import gl
    from pyglet.window import key, mouse

    from nerts_lan.practice import PracticeConfig
    from ui.app import TICK
    from ui.kit.atlas import CardAtlas
    from ui.screens.table import TableScreen

    window.start_practice(PracticeConfig(player="Sam", opponents=5, seed="bench", delay_scale=1e9))
    for _ in range(10):
        clock[0] += TICK
        window.tick()
    screen = window.current
    assert isinstance(screen, TableScreen)
    window.dispatch_event("on_key_press", key.O, 0)
    window.dispatch_events()  # a window queues what it is sent until then
    assert screen.overlay is not None
    x, y = screen.overlay.buttons[1].rect.center  # the four-colour row
    started = time.perf_counter()
    window.dispatch_event("on_mouse_press", int(x), int(y), mouse.LEFT, 0)
    window.dispatch_event("on_mouse_release", int(x), int(y), mouse.LEFT, 0)
    window.dispatch_events()
    clock[0] += TICK
    window.tick()
    gl.glFinish()
    click_ms = (time.perf_counter() - started) * 1000
    frames: list[float] = []
    while not screen.view.atlas.four_colour and len(frames) < 1000:  # type: ignore[union-attr]
        started = time.perf_counter()
        clock[0] += TICK
        window.tick()
        gl.glFinish()
        frames.append((time.perf_counter() - started) * 1000)
    atlas = screen.view.atlas
    assert atlas is not None
    started = time.perf_counter()
    CardAtlas(window, atlas.sizes, atlas.back_colours, four_colour=False).delete()
    gl.glFinish()
    return {
        "option_click_ms": round(click_ms, 2),
        "restyle_frames": len(frames),
        "restyle_frame_ms_max": round(max(frames, default=0.0), 2),
        "atlas_at_once_ms": round((time.perf_counter() - started) * 1000, 2),
    }


def _idle_table(window: NertsWindow, seconds: float) -> dict[str, Any]:
    """CPU share of a table where nothing moves, under the real event loop."""
    import pyglet

    from nerts_lan.practice import PracticeConfig
    from ui.app import TICK

    frozen = PracticeConfig(player="Sam", opponents=5, seed="bench", delay_scale=1e9)
    window.clock = time.monotonic
    window.start_practice(frozen)
    for _ in range(40):
        window.tick()
    frames_before = window.frames
    pyglet.clock.schedule_interval(window.tick, TICK)
    pyglet.clock.schedule_once(lambda dt: pyglet.app.exit(), seconds)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        pyglet.app.run(None)
    finally:
        pyglet.clock.unschedule(window.tick)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {
        "idle_cpu_share": round(cpu / wall, 4) if wall > 0 else None,
        "idle_frames_drawn": window.frames - frames_before,
    }


def _percentile(sorted_values: list[float], percent: float) -> float:
    if not sorted_values:
        return 0.0
    rank = (len(sorted_values) - 1) * percent / 100
    low = int(rank)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (rank - low)
