"""The rules of Nerts: cards, piles, actions, the state and the engine that folds them (standard
library only)."""
