"""nerts-lan: Nerts for friends on one LAN, with a deterministic engine every peer replays."""

__version__ = "0.1.0"
