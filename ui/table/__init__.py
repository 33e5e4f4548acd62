"""The table's parts: its view (felt, pointers), layout and cursor frame, intents, hints, the
guide, the table screen's controls, HUD, marking, scoreboard, news, restyling, panels and the
overlays."""
