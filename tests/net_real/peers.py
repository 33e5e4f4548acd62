"""Headless nerts-lan peers in separate processes, with their JSON lines collected."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

FAST = ["--bot", "hard", "--bot-delay", "0.05"]


class PeerProcess:
    """One `nerts-lan host|join --headless` process; ``lines`` fills as it prints."""

    def __init__(
        self,
        args: list[str],
        data_dir: Path,
        prefix: list[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        full_env = {
            **os.environ,
            "NERTS_LAN_DATA": str(data_dir),
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        command = [*(prefix or []), sys.executable, "-m", "nerts_lan", *args]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env
        )
        self.lines: list[dict[str, Any]] = []
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr = ""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = {"event": "unparsed", "line": line}
            self.lines.append(record)
            self._queue.put(record)

    def _read_err(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr += line

    def wait_for(self, event: str, timeout: float = 30.0, **fields: Any) -> dict[str, Any]:
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
                self._queue.get(timeout=0.05)

    def events(self, event: str) -> list[dict[str, Any]]:
        return [r for r in self.lines if r.get("event") == event]

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def finish(self, timeout: float = 60.0) -> int:
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            raise AssertionError(
                f"still running after {timeout}s: {self.lines[-5:]}\n{self.stderr[-6000:]}"
            ) from None
        self._reader.join(5)
        return code

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def headless(command: str, name: str, table: str, *options: str) -> list[str]:
    """The arguments of ``nerts-lan host|join --headless`` on 127.0.0.1."""
    return [
        command,
        "--headless",
        "--name",
        name,
        "--table",
        table,
        "--interface",
        "127.0.0.1",
        *options,
    ]
