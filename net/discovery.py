"""mDNS discovery: advertise a service instance and browse for others (python-zeroconf).

Generic: an advert is a service type, a unique instance id, a display name, a TCP port and a few
string properties (the TXT record); what they mean is the application's business. Everything
runs in the asyncio loop (the ``async_`` prefix says so) and is bound to one IPv4 address when
``interface`` is given, so tests stay on 127.0.0.1 or inside their own network namespaces.

Instance names are ``"<display name> [<instance id>]"``: two tables with the same display name stay
distinct without relying on the RFC's probing step, which lets ``register`` skip probing (about
10 ms to be seen instead of about 1.2 s) unless ``probe=True`` is asked for.

A send that fails (``Operation not permitted`` under a firewall's drop, ``Network is
unreachable`` when the Wi-Fi goes) is routine on a LAN: zeroconf logs it with a full traceback,
which reads like a crash. Every ``Discovery`` puts a filter on zeroconf's logger that turns such
a record into one line, at debug level unless ``show_send_errors(True)`` (``--verbose``) asks
to see it. Each such error is also kept in ``net.refusals`` (``MULTICAST_SEND``), for the
application to name what refuses the sends (macOS' Local Network privacy setting, say).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from zeroconf import IPVersion, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from net.refusals import MULTICAST_SEND
from net.refusals import record as record_refusal

__all__ = [
    "MAX_PROPERTY_LENGTH",
    "Advert",
    "Discovery",
    "DiscoveryError",
    "show_send_errors",
]

MAX_PROPERTY_LENGTH = 200
"""Longest TXT value accepted from the network; longer ones make the advert be ignored."""

_RESOLVE_TIMEOUT_MS = 3000

_RESOLVE_AGAIN_AFTER = (1.0, 2.0, 4.0, 8.0, 15.0)
"""Seconds before each new look-up of an instance whose last one got no answer (then every 15 s
while it stays listed): the browser reports an instance once, so a look-up lost to a dropped
packet or a host too busy to answer in time would otherwise hide it until its advert changes."""

_MAX_UNANSWERED = 32
"""Instances looked up again at once, at most: a stranger's flood of names that never answer
costs a few queries, not a storm (the rest wait for their advert to change)."""


def show_send_errors(shown: bool) -> None:
    """Show zeroconf's failed sends (one line each, as warnings) or keep them at debug level
    (the default; see the module)."""
    _SEND_ERRORS.shown = shown
    _SEND_ERRORS.install()


class DiscoveryError(ValueError):
    """An advert that cannot be published (a bad name, port or property)."""


@dataclass(frozen=True)
class Advert:
    """One advertised service instance."""

    service_type: str
    instance_id: str
    display_name: str
    port: int
    properties: Mapping[str, str] = field(default_factory=dict)
    addresses: tuple[str, ...] = ()

    @property
    def instance_name(self) -> str:
        return f"{self.display_name} [{self.instance_id}].{self.service_type}"


class Discovery:
    """Advertise adverts and watch a service type on one zeroconf instance."""

    def __init__(self, interface: str | None = None) -> None:
        _SEND_ERRORS.install()
        self.interface = interface
        interfaces = [interface] if interface else None
        kwargs = {"interfaces": interfaces} if interfaces else {}
        self._zeroconf = AsyncZeroconf(ip_version=IPVersion.V4Only, **kwargs)  # type: ignore[arg-type]
        self._published: dict[str, AsyncServiceInfo] = {}
        self._browsers: list[AsyncServiceBrowser] = []
        self._seen: dict[str, Advert] = {}
        self._pending: set[asyncio.Task[None]] = set()
        self._looking_up: dict[str, asyncio.Task[None]] = {}
        """The look-up under way of each instance the browsers list, by instance name."""
        self._unanswered: set[str] = set()
        """The instances waiting to be looked up again (their last look-up got no answer)."""
        self._goodbyes: set[asyncio.Future[object]] = set()
        self._lock = asyncio.Lock()
        self._wanted: dict[str, tuple[Advert, bool]] = {}

    @property
    def seen(self) -> dict[str, Advert]:
        """Adverts seen by the browsers, by instance name."""
        return dict(self._seen)

    async def async_publish(self, advert: Advert, probe: bool = False) -> None:
        """Advertise ``advert``, or update it if already published.

        Each registration or update announces itself a few times over about half a second,
        each time with the records it was given; if an older burst were still going when a newer
        version goes out, browsers would end up with the older one. So publishing is one burst
        at a time, and a version superseded while it waited is skipped.
        """
        self._info(advert)  # check it now, so that a bad advert fails its own caller
        self._wanted[advert.instance_name] = (advert, probe)
        async with self._lock:
            wanted = self._wanted.pop(advert.instance_name, None)
            if wanted is None:
                return  # a later call published a newer version already
            advert, probe = wanted
            info = self._info(advert)
            if advert.instance_name in self._published:
                burst = await self._zeroconf.async_update_service(info)
            else:
                burst = await self._zeroconf.async_register_service(
                    info, cooperating_responders=not probe
                )
            self._published[advert.instance_name] = info
            await burst

    async def async_withdraw(self, advert: Advert) -> None:
        """Stop advertising ``advert`` (others see it go at once)."""
        info = self._published.pop(advert.instance_name, None)
        if info is not None:
            goodbyes = await self._zeroconf.async_unregister_service(info)
            # The goodbyes go out over a few hundred milliseconds; close waits for them.
            task = asyncio.ensure_future(goodbyes)
            self._goodbyes.add(task)
            task.add_done_callback(self._goodbyes.discard)

    def browse(self, service_type: str, on_change: Callable[[str, Advert | None], None]) -> None:
        """Watch ``service_type``; ``on_change(instance_name, advert or None when gone)``.

        Must be called from the event loop's thread.
        """

        def handler(
            zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange
        ) -> None:
            earlier = self._looking_up.pop(name, None)
            if earlier is not None:
                earlier.cancel()  # the newer records are looked up instead
            if state_change is ServiceStateChange.Removed:
                if self._seen.pop(name, None) is not None:
                    on_change(name, None)
                return
            task = asyncio.ensure_future(self._resolve(service_type, name, on_change))
            self._looking_up[name] = task
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
            task.add_done_callback(lambda done: self._forget_look_up(name, done))

        self._browsers.append(
            AsyncServiceBrowser(self._zeroconf.zeroconf, service_type, handlers=[handler])
        )

    async def async_close(self) -> None:
        """Withdraw every advert, stop browsing and close the sockets."""
        for browser in self._browsers:
            await browser.async_cancel()
        for task in list(self._pending):
            task.cancel()
        # Cancelled look-ups and goodbyes already sent end here; without the wait they would
        # be cut off when the sockets close, and other laptops would list a gone table for an hour.
        await asyncio.gather(*self._pending, *self._goodbyes, return_exceptions=True)
        for info in list(self._published.values()):
            goodbyes = await self._zeroconf.async_unregister_service(info)
            await goodbyes  # sent before the sockets close, so browsers see the advert go now
        self._published.clear()
        await self._zeroconf.async_close()

    # --- helpers -------------------------------------------------------------------------------

    def _info(self, advert: Advert) -> AsyncServiceInfo:
        _check_advert(advert)
        addresses = advert.addresses or ((self.interface,) if self.interface else ())
        packed = [socket.inet_aton(a) for a in addresses]
        host = f"nerts-{advert.instance_id}.local."
        return AsyncServiceInfo(
            advert.service_type,
            advert.instance_name,
            port=advert.port,
            properties=dict(advert.properties),
            addresses=packed,
            server=host,
        )

    def _forget_look_up(self, name: str, task: asyncio.Task[None]) -> None:
        if self._looking_up.get(name) is task:
            del self._looking_up[name]

    async def _resolve(
        self, service_type: str, name: str, on_change: Callable[[str, Advert | None], None]
    ) -> None:
        """Look ``name`` up until it answers (see ``_RESOLVE_AGAIN_AFTER``; the browser cancels
        this when the instance goes or changes), then report it."""
        attempt = 0
        try:
            while True:
                info = AsyncServiceInfo(service_type, name)
                if await info.async_request(self._zeroconf.zeroconf, _RESOLVE_TIMEOUT_MS):
                    break
                if name not in self._unanswered:
                    if len(self._unanswered) >= _MAX_UNANSWERED:
                        return
                    self._unanswered.add(name)
                await asyncio.sleep(_RESOLVE_AGAIN_AFTER[attempt])
                attempt = min(attempt + 1, len(_RESOLVE_AGAIN_AFTER) - 1)
        finally:
            self._unanswered.discard(name)
        advert = _advert_from_info(service_type, name, info)
        if advert is None:
            return  # hostile or foreign: ignore it rather than show garbage
        if self._seen.get(name) != advert:
            self._seen[name] = advert
            on_change(name, advert)


class _OneLineSendErrors(logging.Filter):
    """zeroconf's records of a socket error: one line (no traceback), at debug level unless
    ``shown``; other records pass untouched."""

    def __init__(self) -> None:
        super().__init__()
        self.shown = False

    def install(self) -> None:
        logger = logging.getLogger("zeroconf")
        if self not in logger.filters:
            logger.addFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, OSError):
            return True
        record_refusal(MULTICAST_SEND, error)
        record.msg, record.args = record.getMessage().replace("\n", " "), None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        if self.shown:
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger("zeroconf").isEnabledFor(logging.DEBUG)


_SEND_ERRORS = _OneLineSendErrors()


def _check_advert(advert: Advert) -> None:
    if not advert.service_type.endswith("._tcp.local."):
        raise DiscoveryError(f"bad service type {advert.service_type!r}")
    if not advert.instance_id.isalnum() or len(advert.instance_id) > 16:
        raise DiscoveryError(f"bad instance id {advert.instance_id!r}")
    if not advert.display_name or len(advert.display_name.encode()) > 40:
        raise DiscoveryError("a display name must be 1 to 40 bytes long")
    if not 1 <= advert.port <= 65535:
        raise DiscoveryError(f"bad port {advert.port}")
    for key, value in advert.properties.items():
        if len(key) > 9 or len(value.encode()) > MAX_PROPERTY_LENGTH:
            raise DiscoveryError(f"property {key!r} is too long")


def _advert_from_info(service_type: str, name: str, info: AsyncServiceInfo) -> Advert | None:
    """The advert a resolved record describes, or None when it is not of our form."""
    suffix = "." + service_type
    if not name.endswith(suffix) or info.port is None:
        return None
    instance = name[: -len(suffix)]
    if not instance.endswith("]") or " [" not in instance:
        return None
    display_name, _, instance_id = instance[:-1].rpartition(" [")
    properties: dict[str, str] = {}
    for key, value in (info.decoded_properties or {}).items():
        if value is None or len(value) > MAX_PROPERTY_LENGTH:
            return None
        properties[key] = value
    addresses = tuple(a for a in info.parsed_addresses() if a.count(".") == 3)
    if not addresses or not instance_id.isalnum():
        return None
    return Advert(service_type, instance_id, display_name, info.port, properties, addresses)
