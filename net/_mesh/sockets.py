"""UDP sockets that survive Windows' ICMP errors.

On Windows an ICMP "port unreachable" (a datagram sent to a port nobody listens on, as when a
peer just quit) comes back to the sending socket as a connection reset on its next receive, and
asyncio's proactor loop of Python 3.10 and older 3.11/3.12 releases stops reading the socket
after it (cpython #91227, #117210, #127057). ``SIO_UDP_CONNRESET`` turned off makes Winsock drop
those reports. CPython's ``socket.ioctl`` takes only three other control codes, so it is set
through ``WSAIoctl`` itself. Other systems report nothing on an unconnected UDP socket.
"""

from __future__ import annotations

import socket
import sys

__all__ = ["SIO_UDP_CONNRESET", "ignore_port_unreachable", "udp_socket"]

SIO_UDP_CONNRESET = 0x9800000C
"""``_WSAIOW(IOC_VENDOR, 12)`` (mswsock.h)."""
_ON_WINDOWS: bool = sys.platform == "win32"


def udp_socket(host: str, port: int) -> socket.socket:
    """A non-blocking UDP socket bound to ``host:port`` that ignores ICMP "port unreachable"
    on Windows (for ``loop.create_datagram_endpoint(sock=...)``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        sock.bind((host, port))
        ignore_port_unreachable(sock)
    except BaseException:
        sock.close()
        raise
    return sock


def ignore_port_unreachable(sock: socket.socket) -> bool:
    """Turn ``SIO_UDP_CONNRESET`` off on ``sock``; whether it was (never outside Windows)."""
    if not _ON_WINDOWS:
        return False
    import ctypes
    from ctypes import wintypes

    try:
        wsa_ioctl = ctypes.WinDLL("ws2_32").WSAIoctl  # type: ignore[attr-defined,unused-ignore]
    except (OSError, AttributeError):
        return False
    wsa_ioctl.argtypes = [
        ctypes.c_size_t,  # SOCKET
        wintypes.DWORD,
        ctypes.c_void_p,
        wintypes.DWORD,
        ctypes.c_void_p,
        wintypes.DWORD,
        ctypes.POINTER(wintypes.DWORD),
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    wsa_ioctl.restype = ctypes.c_int
    off = wintypes.BOOL(False)
    returned = wintypes.DWORD()
    status = wsa_ioctl(
        sock.fileno(),
        SIO_UDP_CONNRESET,
        ctypes.byref(off),
        ctypes.sizeof(off),
        None,
        0,
        ctypes.byref(returned),
        None,
        None,
    )
    return int(status) == 0
