"""The ordering core: one total order of every peer's entries, sans-IO (no asyncio, no sockets)."""
