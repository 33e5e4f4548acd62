"""The widget kit: widgets, the input handlers on the window's stack, the card atlas, theme,
sounds, wording and the font."""
