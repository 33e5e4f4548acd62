"""The doctor's network checks on 127.0.0.1: the probe comes back, and a table hosted here has
its own port checked (accepted while it listens, said to be gone once it is)."""

from __future__ import annotations

import asyncio
import secrets

from nerts_lan.doctor.checks import Check
from nerts_lan.doctor.checkup import async_network_checks
from nerts_lan.lan.advert import SERVICE_TYPE
from net.discovery import Advert, Discovery


def _hosted(checks: list[Check], port: int) -> Check:
    return next(c for c in checks if f"TCP port {port} (the table hosted here)" in c.detail)


def test_the_probe_comes_back_and_a_hosted_tables_port_is_checked() -> None:
    async def scenario() -> tuple[Check, list[str], Check, Check, Check]:
        async def ignore(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.close()

        server = await asyncio.start_server(ignore, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        host = Discovery("127.0.0.1")
        table = Advert(
            SERVICE_TYPE, secrets.token_hex(4), "Doctor's test", port, {}, ("127.0.0.1",)
        )
        try:
            await host.async_publish(table)
            mdns, tables, checks = await async_network_checks("127.0.0.1", 0)
            server.close()
            await server.wait_closed()
            _, _, after = await async_network_checks("127.0.0.1", 0)
        finally:
            server.close()
            await host.async_close()
        names = [t.name for t in tables if t.port == port]
        return mdns, names, checks[0], _hosted(checks, port), _hosted(after, port)

    mdns, names, own, listening, gone = asyncio.run(scenario())
    assert mdns.ok and mdns.name == "mdns"
    assert names == ["Doctor's test"]
    assert own.ok and "accepts connections" in own.detail
    assert listening.ok
    assert gone.ok and "closed, gone" in gone.detail  # an advert that outlived its table
