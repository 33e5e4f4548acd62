"""A headless peer in another process (``python -m nerts_lan ARGS``), its JSON lines read live.

The one way the LAN benchmark, the soak script and the process tests run peers: each peer gets
its own data folder (``NERTS_LAN_DATA``, so a restarted peer keeps its peer id and match log),
and every line it prints lands in ``lines`` (and goes to ``on_record``, when given) as it comes.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nerts_lan.headless.leaving import LEAVE_LINE

__all__ = ["PeerProcess"]

Record = dict[str, Any]
"""One JSON line of a headless peer (see ``nerts_lan.headless.play``)."""


class PeerProcess:
    """One ``nerts-lan host|join|tables ...`` process; ``lines`` fills as it prints."""

    def __init__(
        self,
        args: list[str],
        data_dir: Path,
        prefix: list[str] | None = None,
        env: dict[str, str] | None = None,
        *,
        stderr_file: Path | None = None,
        on_record: Callable[[Record], None] | None = None,
    ) -> None:
        """``prefix`` goes before the interpreter (``ip netns exec NAME``); ``env`` adds to the
        environment. Standard error is kept in ``stderr``, or appended to ``stderr_file``."""
        data_dir.mkdir(parents=True, exist_ok=True)
        full_env = {
            **os.environ,
            "NERTS_LAN_DATA": str(data_dir),
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        command = [*(prefix or []), sys.executable, "-m", "nerts_lan", *args]
        with contextlib.ExitStack() as stack:
            err: Any = subprocess.PIPE
            if stderr_file is not None:
                err = stack.enter_context(stderr_file.open("a", encoding="utf-8"))
            # Its standard input is a pipe of its own: ``leave`` writes the line that asks it to
            # leave (nerts_lan.headless.leaving), and it never reads the parent's input.
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=full_env,
            )
        self.lines: list[Record] = []
        self.stderr = ""
        self._on_record = on_record
        self._arrived: queue.Queue[Record] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if self.process.stderr is not None:
            threading.Thread(target=self._read_stderr, daemon=True).start()

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def wait_for(self, event: str, timeout: float = 30.0, **fields: Any) -> Record:
        """The first line (already printed or to come) with this event and these fields."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for record in self.lines[seen:]:
                if record.get("event") == event and all(
                    record.get(k) == v for k, v in fields.items()
                ):
                    return record
            seen = len(self.lines)
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no {event} {fields} within {timeout}s; got {self.lines}"
                    f"\nstderr: {self.stderr[-2000:]}"
                )
            if self.process.poll() is not None and seen == len(self.lines):
                self._reader.join(1)
                if seen == len(self.lines):
                    raise AssertionError(
                        f"exited {self.process.returncode} before {event}; "
                        f"got {self.lines}\nstderr: {self.stderr[-2000:]}"
                    )
            with contextlib.suppress(queue.Empty):
                self._arrived.get(timeout=0.05)

    def events(self, event: str) -> list[Record]:
        return [r for r in self.lines if r.get("event") == event]

    def kill(self) -> None:
        """Kill it, as a crash (no goodbye), and wait for it."""
        self.process.kill()  # SIGKILL on POSIX, TerminateProcess on Windows
        self.process.wait(10)
        self._close_stdin()

    def finish(self, timeout: float = 60.0) -> int:
        """Wait for the process to exit by itself; its exit status."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            raise AssertionError(
                f"still running after {timeout}s: {self.lines[-5:]}\n{self.stderr[-6000:]}"
            ) from None
        self._reader.join(5)
        self._close_stdin()
        return code

    def leave(self) -> None:
        """Ask it to leave the table (a ``leave`` line on its standard input, on every OS),
        without waiting: it says goodbye and exits."""
        self.tell(LEAVE_LINE)

    def tell(self, line: str) -> None:
        """Write ``line`` on its standard input (``leave``, ``react gg``), without waiting."""
        stdin = self.process.stdin
        if self.running and stdin is not None:
            with contextlib.suppress(OSError, ValueError):  # it exited meanwhile
                stdin.write(line + "\n")
                stdin.flush()

    def terminate(self) -> None:
        """SIGTERM, without waiting: the peer leaves the table and exits. On Windows, where
        terminating a process ends it with nothing to catch (a crash), the ``leave`` line."""
        if sys.platform == "win32":
            self.leave()
        elif self.running:
            self.process.terminate()

    def stop(self) -> None:
        """Ask it to leave (``terminate``) and wait for it (killing it after 10 s)."""
        if self.process.poll() is None:
            self.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._close_stdin()

    # --- helpers --------------------------------------------------------------------------------

    def _close_stdin(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = {"event": "unparsed", "line": line}
            if not isinstance(record, dict):
                record = {"event": "unparsed", "line": line}
            self.lines.append(record)
            if self._on_record is not None:
                self._on_record(record)
            self._arrived.put(record)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr += line
