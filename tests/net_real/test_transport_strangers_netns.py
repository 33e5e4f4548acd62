"""Guessers on one laptop, across network namespaces: twenty processes' worth of code guesses
from one host do not hold back an honest joiner from another host, nor a member on a third
whose link blinked (each wrong guess holds back its own address for 30 s, longer than the test:
on a gate shared by the whole table, one wrong guess would lock everyone out)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.net_real.netlab import NetLab
from tests.waiting import until

pytestmark = pytest.mark.netns

CODE = "7 tigers"


class Process:
    """A process on a lab host whose JSON lines are collected as they come."""

    def __init__(self, lab: NetLab, host: int, *arguments: str) -> None:
        self.events: list[dict[str, Any]] = []
        self._process = subprocess.Popen(
            [*lab.prefix(host), sys.executable, "-m", *arguments],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self.events.append(json.loads(line))

    def count(self, key: str, value: object = None) -> int:
        return sum(key in e and (value is None or e[key] == value) for e in list(self.events))

    def last(self, key: str) -> Any:
        return next(e[key] for e in reversed(list(self.events)) if key in e)

    def tell(self, line: str) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()

    def stop(self) -> None:
        self._process.kill()
        self._process.wait()
        self._reader.join(5)
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def lab() -> Iterator[NetLab]:
    lab = NetLab(4)
    yield lab
    lab.close()


def test_guessers_on_one_host_hold_back_no_joiner_nor_member_on_others(lab: NetLab) -> None:
    started: list[Process] = []

    def start(host: int, *arguments: str) -> Process:
        started.append(Process(lab, host, *arguments))
        return started[-1]

    try:
        role = ("tests.net_real.meshrole", "--code", CODE)
        host = start(0, *role, "--penalty", "30", "host", lab.address(0))
        until(lambda: host.count("port") == 1, what="the host listening")
        to = f"--to={lab.address(0)}:{host.last('port')}"
        member = start(2, *role, "peer", "member", lab.address(2), to)
        until(lambda: member.count("frame", "welcome") >= 1, what="the member linked")
        port = str(host.last("port"))
        guessing = ("tests.net_real.strangerkit", "guess", lab.address(0), port, "--count=20")
        guessers = start(1, *guessing)
        until(lambda: guessers.count("guesses") > 0, what="the guessers started")
        until(lambda: guessers.last("guesses") >= 20, timeout=30, what="a guess from each")
        joiner = start(3, *role, "peer", "joiner", lab.address(3), to)
        until(lambda: joiner.count("frame", "welcome") >= 1, timeout=20, what="the joiner")
        before = member.count("frame", "welcome")
        member.tell("blink")
        # The host writes a welcome at every link-up, and after a blink the two ends may dial
        # each other at once: the crossing dials can bring the host's link up twice (the
        # connection the host dialed replaces the member's), so the member may get two welcomes
        # at once. An exact count would miss the moment (CI failed once on "== 2").
        until(lambda: member.count("frame", "welcome") > before, timeout=20, what="the member back")
        assert guessers.last("guesses") > 20  # they kept guessing meanwhile...
        # The host said "up" before it wrote the welcome, but its line may still be on its way.
        until(lambda: host.count("up", "member") >= 2, what="the host's second up line")
        assert host.count("up", "joiner") == 1
        assert all(not peer.count("problem") for peer in (member, joiner))
    finally:
        for process in started:
            process.stop()
