"""Real mDNS on 127.0.0.1: adverts are seen, updated and withdrawn."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest
from zeroconf.asyncio import AsyncServiceInfo

import net.discovery
from net.discovery import Advert, Discovery, DiscoveryError
from tests.waiting import async_until

SERVICE = "_nertstest._tcp.local."


def test_a_published_table_is_seen_updated_and_withdrawn() -> None:
    async def scenario() -> None:
        host = Discovery("127.0.0.1")
        guest = Discovery("127.0.0.1")
        changes: list[tuple[str, Advert | None]] = []
        guest.browse(SERVICE, lambda name, advert: changes.append((name, advert)))
        try:
            same_name = [
                Advert(SERVICE, "a1", "Kitchen", 4000, {"seats": "1/4"}),
                Advert(SERVICE, "b2", "Kitchen", 4001, {"seats": "2/4"}),
            ]
            for advert in same_name:
                await host.async_publish(advert)
            await async_until(lambda: len(guest.seen) == 2)
            seen = sorted(guest.seen.values(), key=lambda a: a.instance_id)
            assert [(a.display_name, a.port, a.addresses) for a in seen] == [
                ("Kitchen", 4000, ("127.0.0.1",)),
                ("Kitchen", 4001, ("127.0.0.1",)),
            ]
            updated = Advert(SERVICE, "a1", "Kitchen", 4000, {"seats": "3/4"})
            await host.async_publish(updated)
            await async_until(
                lambda: any(a.properties.get("seats") == "3/4" for a in guest.seen.values())
            )
            await host.async_withdraw(updated)
            await async_until(lambda: len(guest.seen) == 1)
            assert changes[-1] == (updated.instance_name, None)
        finally:
            await host.async_close()
            await guest.async_close()

    asyncio.run(scenario())


def test_a_table_whose_first_look_up_goes_unanswered_is_listed_all_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The browser reports an instance once; a look-up lost then (a dropped packet on Wi-Fi, a
    host too busy to answer in time) must not hide the table until its advert changes."""
    unanswered: list[str] = []

    class FirstLookUpLost(AsyncServiceInfo):
        async def async_request(self, *args: object, **kwargs: object) -> bool:
            if self.name not in unanswered:
                unanswered.append(self.name)
                return False  # as if the answer never came
            return await super().async_request(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(net.discovery, "AsyncServiceInfo", FirstLookUpLost)

    async def scenario(host: Discovery, guest: Discovery) -> None:
        await host.async_publish(Advert(SERVICE, "d4", "Attic", 4003))
        await async_until(lambda: len(guest.seen) == 1, timeout=20, what="the table listed")
        assert [a.display_name for a in guest.seen.values()] == ["Attic"]
        assert unanswered == ["Attic [d4]." + SERVICE]

    asyncio.run(_host_and_browsing_guest(scenario))


def test_instances_that_never_answer_are_looked_up_again_only_so_many_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stranger's flood of names that never answer must not turn into a storm of queries:
    past the cap, an unanswered instance waits for its advert to change."""
    attempts: dict[str, int] = {}

    class NeverAnswered(AsyncServiceInfo):
        async def async_request(self, *args: object, **kwargs: object) -> bool:
            attempts[self.name] = attempts.get(self.name, 0) + 1
            return False

    monkeypatch.setattr(net.discovery, "AsyncServiceInfo", NeverAnswered)
    monkeypatch.setattr(net.discovery, "_MAX_UNANSWERED", 1)

    async def scenario(host: Discovery, guest: Discovery) -> None:
        await host.async_publish(Advert(SERVICE, "e5", "Cellar", 4004))
        await host.async_publish(Advert(SERVICE, "f6", "Garage", 4005))
        await async_until(lambda: len(attempts) == 2, timeout=20, what="both looked up")
        await async_until(lambda: max(attempts.values()) >= 3, timeout=20, what="retries")
        assert sorted(attempts.values())[0] == 1, attempts  # the other one waits
        assert guest.seen == {}

    asyncio.run(_host_and_browsing_guest(scenario))


def test_discovery_with_the_default_probing_step() -> None:
    async def scenario() -> float:
        host = Discovery("127.0.0.1")
        guest = Discovery("127.0.0.1")
        guest.browse(SERVICE, lambda name, advert: None)
        try:
            start = time.monotonic()
            await host.async_publish(Advert(SERVICE, "c3", "Probed", 4002), probe=True)
            await async_until(lambda: len(guest.seen) == 1)
            return time.monotonic() - start
        finally:
            await host.async_close()
            await guest.async_close()

    elapsed = asyncio.run(scenario())
    assert elapsed < 5.0


@pytest.mark.parametrize(
    "advert, message",
    [
        (Advert("_x._udp.local.", "a", "n", 1), "bad service type"),
        (Advert(SERVICE, "a-b", "n", 1), "bad instance id"),
        (Advert(SERVICE, "a", "", 1), "display name"),
        (Advert(SERVICE, "a", "n", 70000), "bad port"),
        (Advert(SERVICE, "a", "n", 1, {"k": "v" * 500}), "too long"),
    ],
)
def test_bad_adverts_are_refused_with_a_reason(advert: Advert, message: str) -> None:
    async def scenario() -> None:
        discovery = Discovery("127.0.0.1")
        try:
            with pytest.raises(DiscoveryError, match=message):
                await discovery.async_publish(advert)
        finally:
            await discovery.async_close()

    asyncio.run(scenario())


async def _host_and_browsing_guest(
    scenario: Callable[[Discovery, Discovery], Awaitable[None]],
) -> None:
    """Run ``scenario(host, guest)`` with a guest browsing ``SERVICE``; close both after."""
    host = Discovery("127.0.0.1")
    guest = Discovery("127.0.0.1")
    guest.browse(SERVICE, lambda name, advert: None)
    try:
        await scenario(host, guest)
    finally:
        await host.async_close()
        await guest.async_close()
