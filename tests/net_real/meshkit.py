"""Helpers for the tests of the mesh and the node on 127.0.0.1."""

from __future__ import annotations

from typing import Any

from net.transport import Hello, Mesh
from tests.waiting import async_until

until = async_until  # the shared waiting helper, under the name these tests use


class RecordingMesh:
    """A mesh whose received frames, ephemeral frames, links and problems are recorded.

    With ``explode``, its ephemeral handler raises on the payload ``b"boom"`` (a handler bug).
    ``options`` go to the ``Mesh`` (a table code, rate limits...).
    """

    def __init__(
        self,
        peer: str,
        incarnation: int = 0,
        protocol: int = 1,
        table: str = "t1",
        explode: bool = False,
        **options: Any,
    ) -> None:
        self.frames: list[tuple[str, bytes]] = []
        self.ephemeral: list[tuple[str, bytes]] = []
        self.connected: list[tuple[str, bool]] = []
        self.problems: list[tuple[str, str]] = []
        self.explode = explode
        self.mesh = Mesh(
            Hello(protocol, table, peer, peer.upper(), incarnation),
            on_frame=lambda p, d: self.frames.append((p, d)),
            on_connected=lambda h, r: self.connected.append((h.peer, r)),
            on_problem=lambda w, r: self.problems.append((w, r)),
            on_ephemeral=self._ephemeral,
            max_frame=4096,
            **options,
        )

    def _ephemeral(self, peer: str, data: bytes) -> None:
        if self.explode and data == b"boom":
            raise ValueError("a handler bug")
        self.ephemeral.append((peer, data))
