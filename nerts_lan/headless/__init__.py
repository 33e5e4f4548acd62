"""The headless front end: a peer driven by JSON lines on standard input and output."""
