"""The window's screens: menu, lobby, table, stats, replay."""
