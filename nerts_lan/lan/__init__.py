"""Playing on the LAN: the agent that drives a table peer on real sockets, adverts, browsing,
comebacks."""
