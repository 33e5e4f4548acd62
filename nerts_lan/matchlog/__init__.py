"""The match log on disk and the rounds read back from it."""
