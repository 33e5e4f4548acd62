"""One mesh in a process of its own, for tests across network namespaces.

``python3 -m tests.net_real.meshrole host ADDRESS --code C`` listens and writes a welcome frame
to every peer that links (which makes it a member); ``... peer NAME ADDRESS --to HOST:PORT
--code C`` dials the host, and drops its connection at once (a link blip) for every ``blink``
line on its standard input. Each prints one JSON line per event: ``{"port": N}``,
``{"up": PEER}``, ``{"down": PEER}``, ``{"frame": TEXT}``, ``{"problem": REASON}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from net._mesh.handshake import Hello
from net._mesh.mesh import Mesh
from net._mesh.parts import MeshConfig, MeshListener


def say(**event: object) -> None:
    print(json.dumps(event), flush=True)


class Reporter(MeshListener):
    def __init__(self, welcome: bool) -> None:
        self.welcome = welcome
        self.mesh: Mesh | None = None

    def link_up(self, hello: Hello, restarted: bool) -> None:
        say(up=hello.peer)
        if self.welcome and self.mesh is not None:
            self.mesh.send(hello.peer, b"welcome")

    def link_down(self, peer: str) -> None:
        say(down=peer)

    def frame_received(self, peer: str, data: bytes) -> None:
        say(frame=data.decode())

    def problem(self, who: str, reason: str) -> None:
        say(problem=reason)


async def _blinks(mesh: Mesh) -> None:
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        if line.strip() == "blink":
            connection = mesh._links["a"].connection
            if connection is not None:
                connection.abort()


async def _main(arguments: argparse.Namespace) -> None:
    name = "a" if arguments.role == "host" else arguments.name
    reporter = Reporter(welcome=arguments.role == "host")
    config = MeshConfig(table_code=arguments.code, wrong_code_delay=arguments.penalty)
    mesh = Mesh(Hello(1, "t1", name, name.upper(), 0), reporter, config)
    reporter.mesh = mesh
    say(port=await mesh.async_listen(arguments.address))
    if arguments.role == "peer":
        host, port = arguments.to.rsplit(":", 1)
        mesh.connect("a", host, int(port))
        await _blinks(mesh)
    else:
        await asyncio.Event().wait()
    await mesh.async_close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("role", choices=["host", "peer"])
    parser.add_argument("name", nargs="?", default="a")
    parser.add_argument("address")
    parser.add_argument("--to", default="")
    parser.add_argument("--code", default=None)
    parser.add_argument("--penalty", type=float, default=1.0)
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
