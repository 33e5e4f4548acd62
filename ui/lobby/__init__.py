"""What the lobby lists: the practice provider and the LAN's tables."""
