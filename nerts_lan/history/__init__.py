"""This laptop's match history: the store, its facts, the stats and the coach."""
