"""The bots: who plays what, and when."""
