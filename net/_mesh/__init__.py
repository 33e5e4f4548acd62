"""The mesh: authenticated links between peers over TCP and datagrams (asyncio)."""
